//! The Arrow C data interface through the Arrow PyCapsule protocol: arrays and streams come
//! in from any object with `__arrow_c_array__` / `__arrow_c_stream__` (pyarrow's, polars',
//! ...) without copying their buffers, and go out as an [`ArrowExport`] object whose
//! `__arrow_c_array__` hands our buffers over, also without a copy.

use std::ffi::CString;

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{make_array, Array, ArrayRef, RecordBatch};
use arrow_schema::{Field, SchemaRef};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

/// An Arrow error as a `ValueError`.
fn arrow_err(err: arrow_schema::ArrowError) -> PyErr {
    PyValueError::new_err(format!("Arrow C data interface: {err}"))
}

/// The capsule `obj` if it is named `name`, else a `TypeError`.
fn capsule<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyCapsule>> {
    let capsule = obj
        .downcast::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err(format!("expected a PyCapsule named {name:?}")))?;
    let found = capsule.name()?.map(|n| n.to_string_lossy().into_owned());
    if found.as_deref() != Some(name) {
        return Err(PyTypeError::new_err(format!(
            "expected a PyCapsule named {name:?}, found {found:?}"
        )));
    }
    Ok(capsule.clone())
}

/// The array behind `obj.__arrow_c_array__()`, its buffers shared with the producer (the
/// producer's release callback runs when the last Rust handle to them is dropped).
pub fn import_array(obj: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    let pair = obj.call_method0("__arrow_c_array__")?;
    let pair = pair
        .downcast::<PyTuple>()
        .map_err(|_| PyTypeError::new_err("__arrow_c_array__ must return a tuple"))?;
    if pair.len() != 2 {
        return Err(PyTypeError::new_err(format!(
            "__arrow_c_array__ must return (schema, array) capsules, got {} items",
            pair.len()
        )));
    }
    let schema_capsule = capsule(&pair.get_item(0)?, "arrow_schema")?;
    let array_capsule = capsule(&pair.get_item(1)?, "arrow_array")?;
    let schema_ptr = schema_capsule.pointer().cast::<FFI_ArrowSchema>();
    let array_ptr = array_capsule.pointer().cast::<FFI_ArrowArray>();
    if schema_ptr.is_null() || array_ptr.is_null() {
        return Err(PyValueError::new_err(
            "an Arrow PyCapsule holds a null pointer",
        ));
    }
    // SAFETY: both capsules carry the protocol's names (checked above), so by the Arrow
    // PyCapsule protocol they point at a live ArrowSchema and ArrowArray; `from_raw` moves
    // the array out and leaves a released one behind, so the capsule's destructor does not
    // release it a second time. The schema stays owned by its capsule, borrowed here only
    // while `schema_capsule` is alive.
    let array = unsafe { FFI_ArrowArray::from_raw(array_ptr) };
    // SAFETY: as above; the pointer is valid for the lifetime of `schema_capsule`.
    let schema = unsafe { &*schema_ptr };
    // SAFETY: `array` and `schema` describe the same array (they come from one
    // `__arrow_c_array__` call); `from_ffi` validates the layout against the data type.
    let data = unsafe { from_ffi(array, schema) }.map_err(arrow_err)?;
    Ok(make_array(data))
}

/// The schema and record batches of `obj.__arrow_c_stream__()`, each batch's buffers shared
/// with the producer.
pub fn import_stream(obj: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let stream_capsule = obj.call_method0("__arrow_c_stream__")?;
    let stream_capsule = capsule(&stream_capsule, "arrow_array_stream")?;
    let ptr = stream_capsule.pointer().cast::<FFI_ArrowArrayStream>();
    if ptr.is_null() {
        return Err(PyValueError::new_err(
            "an Arrow PyCapsule holds a null pointer",
        ));
    }
    // SAFETY: the capsule is named "arrow_array_stream" (checked above), so it points at a
    // live ArrowArrayStream; `from_raw` moves it out and leaves a released one behind.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr) };
    let reader = RecordBatchStreamReader::try_new(stream).map_err(arrow_err)?;
    let schema = arrow_array::RecordBatchReader::schema(&reader);
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(arrow_err)?;
    Ok((schema, batches))
}

/// An Arrow array on its way out: `__arrow_c_array__` exports it (and `__arrow_c_schema__`
/// its field) through the Arrow C data interface, sharing its buffers with the consumer.
#[pyclass(module = "arrays._native", name = "ArrowExport", frozen)]
pub struct ArrowExport {
    array: ArrayRef,
    field: Field,
}

impl ArrowExport {
    /// `array` under the field `name` (not nullable at the top).
    pub fn new(array: ArrayRef, name: &str) -> ArrowExport {
        let field = Field::new(name, array.data_type().clone(), array.null_count() > 0);
        ArrowExport { array, field }
    }
}

fn schema_capsule<'py>(py: Python<'py>, field: &Field) -> PyResult<Bound<'py, PyCapsule>> {
    let schema = FFI_ArrowSchema::try_from(field).map_err(arrow_err)?;
    PyCapsule::new(
        py,
        schema,
        Some(CString::new("arrow_schema").expect("no NUL")),
    )
}

#[pymethods]
impl ArrowExport {
    /// The Arrow PyCapsule protocol's schema export.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.field)
    }

    /// The Arrow PyCapsule protocol's array export: `(schema, array)` capsules. A requested
    /// schema is not honoured (the consumer casts if it wants another type).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let schema = schema_capsule(py, &self.field)?;
        let array = FFI_ArrowArray::new(&self.array.to_data());
        let array = PyCapsule::new(
            py,
            array,
            Some(CString::new("arrow_array").expect("no NUL")),
        )?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }

    /// The Arrow type, as Arrow prints it.
    #[getter]
    fn data_type(&self) -> String {
        self.array.data_type().to_string()
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<ArrowExport {} of length {}>",
            self.array.data_type(),
            self.array.len()
        )
    }
}

/// The export of `array` (kept alive by the returned object).
pub fn export(py: Python<'_>, array: ArrayRef) -> PyResult<Py<ArrowExport>> {
    Py::new(py, ArrowExport::new(array, ""))
}

/// Registers the export class.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowExport>()?;
    Ok(())
}
