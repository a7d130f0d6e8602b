//! TensorFlow's `StructuredTensor` for `arrays.structured`, over structured-tensor: Python
//! values cross as JSON text (the Python side's `json` module), the crate's own fast path
//! for `from_pyval` / `to_pyval`.

use pyo3::exceptions::{PyIndexError, PyKeyError, PyValueError};
use pyo3::prelude::*;
use ragged_core::RowPartition;
use structured_tensor::{Error, FieldValue, StructuredTensor};

/// A structured-tensor error as the Python exception of its kind, with the Rust message.
fn st_err(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::FieldNotFound { .. } => PyKeyError::new_err(message),
        Error::IndexOutOfRange { .. } | Error::AxisOutOfRange { .. } => {
            PyIndexError::new_err(message)
        }
        _ => PyValueError::new_err(message),
    }
}

/// A `StructuredTensor` (immutable: every operation returns a new one).
#[pyclass(module = "arrays._native", name = "RawStructuredTensor", frozen)]
pub struct RawStructuredTensor {
    inner: StructuredTensor,
}

fn wrap(inner: StructuredTensor) -> RawStructuredTensor {
    RawStructuredTensor { inner }
}

#[pymethods]
impl RawStructuredTensor {
    /// TensorFlow's `from_pyval` of a value given as JSON text.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<Self> {
        py.allow_threads(|| StructuredTensor::from_json_str(text))
            .map(wrap)
            .map_err(st_err)
    }

    /// TensorFlow's `to_pyval`, as JSON text.
    fn to_json(&self, py: Python<'_>) -> String {
        py.allow_threads(|| self.inner.to_json_string())
    }

    #[getter]
    fn rank(&self) -> usize {
        self.inner.rank()
    }

    #[getter]
    fn shape(&self) -> Vec<Option<usize>> {
        self.inner.shape()
    }

    fn nrows(&self) -> Option<usize> {
        self.inner.nrows()
    }

    fn field_names(&self) -> Vec<String> {
        self.inner
            .field_names()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// The field at `path`: `(None, json)` for an array, `(tensor, None)` for a struct.
    fn field_value(&self, path: Vec<String>) -> PyResult<(Option<Self>, Option<String>)> {
        match self.inner.field_value(path).map_err(st_err)? {
            FieldValue::Struct(st) => Ok((Some(wrap(st.clone())), None)),
            FieldValue::Array(array) => Ok((None, Some(array.to_json().to_string()))),
        }
    }

    fn gather(&self, py: Python<'_>, indices: Vec<i64>, axis: isize) -> PyResult<Self> {
        py.allow_threads(|| self.inner.gather(&indices, axis))
            .map(wrap)
            .map_err(st_err)
    }

    fn boolean_mask(&self, py: Python<'_>, mask: Vec<bool>) -> PyResult<Self> {
        py.allow_threads(|| self.inner.boolean_mask(&mask))
            .map(wrap)
            .map_err(st_err)
    }

    fn merge_dims(&self, py: Python<'_>, outer_axis: isize, inner_axis: isize) -> PyResult<Self> {
        py.allow_threads(|| self.inner.merge_dims(outer_axis, inner_axis))
            .map(wrap)
            .map_err(st_err)
    }

    /// `partition_outer_dimension(RowPartition.from_row_splits(row_splits))`.
    fn partition_outer_dimension(&self, row_splits: Vec<i32>) -> PyResult<Self> {
        let partition = RowPartition::from_row_splits(row_splits)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.inner
            .partition_outer_dimension(&partition)
            .map(wrap)
            .map_err(st_err)
    }

    /// `tf.concat` of structured tensors along `axis`.
    #[staticmethod]
    fn concat(values: Vec<PyRef<'_, RawStructuredTensor>>, axis: isize) -> PyResult<Self> {
        let parts: Vec<&StructuredTensor> = values.iter().map(|v| &v.inner).collect();
        StructuredTensor::concat(&parts, axis)
            .map(wrap)
            .map_err(st_err)
    }
}

/// Registers the structured classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawStructuredTensor>()?;
    Ok(())
}
