//! TensorFlow's `StructuredTensor` for `arrays.structured`, over structured-tensor: Python
//! values come in walked from Rust (`pyval.rs`, the crate's `Tree`), or as JSON text when
//! they hold anything but plain dicts, lists and scalars; `to_pyval` goes out as JSON text
//! (the Python side's `json` module). Arrow arrays cross through the Arrow C data interface
//! (`arrow_ffi`), Parquet files through the crate's readers and writers.

use std::path::PathBuf;

use arrow_array::{RecordBatch, StructArray};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyValueError};
use pyo3::prelude::*;
use ragged_core::RowPartition;
use structured_tensor::{ArrowOptions, Codec, Error, FieldValue, StructuredTensor, WriteOptions};

use crate::arrow_ffi::{self, ArrowExport};

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

    /// TensorFlow's `from_pyval` of plain Python values (exactly `dict`, `list`, `tuple`,
    /// `str`, `int`, `float`, `bool`, `None`), walked with the GIL held and read without
    /// it; `None` when `pyval` holds anything else (numpy values, subclasses, bytes, NaN,
    /// keys that are not `str`, ...), which the JSON path then judges.
    #[staticmethod]
    fn from_pyval(py: Python<'_>, pyval: &Bound<'_, PyAny>) -> PyResult<Option<Self>> {
        let Ok(tree) = crate::pyval::tree_of(pyval) else {
            return Ok(None);
        };
        py.allow_threads(move || StructuredTensor::from_tree(&tree))
            .map(|st| Some(wrap(st)))
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

    /// The dtype of the leaf at `path` (`int64`, `float64`, `bool`, `string`, ...), `None`
    /// for a struct.
    fn field_dtype(&self, path: Vec<String>) -> PyResult<Option<&'static str>> {
        match self.inner.field_value(path).map_err(st_err)? {
            FieldValue::Struct(_) => Ok(None),
            FieldValue::Array(array) => Ok(Some(array.dtype().name())),
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

    /// A tensor from an object with `__arrow_c_array__` (a struct array or record batch:
    /// rank 1; lists of structs: rank 1 + the list depth) or else `__arrow_c_stream__` (a
    /// table: its batches concatenated). The Arrow buffers are read in place, and the
    /// tensor's leaves keep pointing at them (numbers, string bytes and offsets; booleans,
    /// list offsets and rebased string offsets are copied).
    #[staticmethod]
    #[pyo3(signature = (obj, nulls=false, any_field_names=false))]
    fn from_arrow(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        nulls: bool,
        any_field_names: bool,
    ) -> PyResult<Self> {
        let options = ArrowOptions::default()
            .with_nulls(nulls)
            .with_any_field_names(any_field_names);
        if obj.hasattr("__arrow_c_array__")? {
            let array = arrow_ffi::import_array(obj)?;
            return py
                .allow_threads(|| {
                    StructuredTensor::from_arrow_with_options(array.as_ref(), &options)
                })
                .map(wrap)
                .map_err(st_err);
        }
        if obj.hasattr("__arrow_c_stream__")? {
            let (schema, batches) = arrow_ffi::import_stream(obj)?;
            return py
                .allow_threads(|| -> Result<StructuredTensor, Error> {
                    if batches.len() <= 1 {
                        let batch = batches
                            .into_iter()
                            .next()
                            .unwrap_or_else(|| RecordBatch::new_empty(schema));
                        return StructuredTensor::from_record_batch_with_options(&batch, &options);
                    }
                    let parts = batches
                        .iter()
                        .map(|b| StructuredTensor::from_record_batch_with_options(b, &options))
                        .collect::<Result<Vec<_>, _>>()?;
                    let refs: Vec<&StructuredTensor> = parts.iter().collect();
                    StructuredTensor::concat(&refs, 0)
                })
                .map(wrap)
                .map_err(st_err);
        }
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "from_arrow takes an object with __arrow_c_array__ or __arrow_c_stream__ \
             (a pyarrow RecordBatch, Table or StructArray), not {}",
            obj.get_type().name()?
        )))
    }

    /// This tensor as an Arrow export: a struct array (the layout of a record batch) when
    /// `record_batch` and rank 1, else the crate's `to_arrow` (lists of structs above rank
    /// 1). Numbers, strings and int32 row partitions are shared, not copied.
    #[pyo3(signature = (record_batch=true))]
    fn to_arrow(&self, py: Python<'_>, record_batch: bool) -> PyResult<Py<ArrowExport>> {
        let array = py
            .allow_threads(|| -> Result<arrow_array::ArrayRef, Error> {
                if record_batch {
                    let batch = self.inner.to_record_batch()?;
                    Ok(std::sync::Arc::new(StructArray::from(batch)))
                } else {
                    self.inner.to_arrow()
                }
            })
            .map_err(st_err)?;
        arrow_ffi::export(py, array)
    }

    /// The crate's `read_parquet_with_options`.
    #[staticmethod]
    #[pyo3(signature = (path, nulls=false, any_field_names=false))]
    fn read_parquet(
        py: Python<'_>,
        path: PathBuf,
        nulls: bool,
        any_field_names: bool,
    ) -> PyResult<Self> {
        let options = ArrowOptions::default()
            .with_nulls(nulls)
            .with_any_field_names(any_field_names);
        py.allow_threads(|| structured_tensor::read_parquet_with_options(&path, &options))
            .map(wrap)
            .map_err(st_err)
    }

    /// The crate's `write_parquet_with`: `compression` is pyarrow's name ("snappy",
    /// "gzip", "zstd", "none"), `compression_level` its level (gzip 0-9, zstd 1-22).
    #[pyo3(signature = (path, row_group_size=None, compression="snappy", compression_level=None))]
    fn write_parquet(
        &self,
        py: Python<'_>,
        path: PathBuf,
        row_group_size: Option<usize>,
        compression: &str,
        compression_level: Option<i32>,
    ) -> PyResult<()> {
        let codec = match (compression.to_ascii_lowercase().as_str(), compression_level) {
            ("snappy", None) => Codec::Snappy,
            ("none" | "uncompressed", None) => Codec::Uncompressed,
            ("gzip", level) => {
                let level = level.unwrap_or(6);
                Codec::Gzip(u32::try_from(level).map_err(|_| {
                    PyValueError::new_err(format!("gzip compression_level {level} is not in 0..=9"))
                })?)
            }
            ("zstd", level) => Codec::Zstd(level.unwrap_or(3)),
            (name, Some(level)) if name == "snappy" || name == "none" || name == "uncompressed" => {
                return Err(PyValueError::new_err(format!(
                    "compression {compression:?} takes no compression_level (got {level})"
                )))
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "compression {compression:?} is not one of snappy, gzip, zstd, none"
                )))
            }
        };
        let mut options = WriteOptions::default().with_codec(codec);
        if let Some(rows) = row_group_size {
            if rows == 0 {
                return Err(PyValueError::new_err("row_group_size must be at least 1"));
            }
            options = options.with_row_group_size(rows);
        }
        py.allow_threads(|| structured_tensor::write_parquet_with(&path, &self.inner, &options))
            .map_err(st_err)
    }

    /// The compact binary form (for pickling): an Arrow IPC stream behind a magic header.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let bytes = py
            .allow_threads(|| crate::pickle::encode_structured(&self.inner))
            .map_err(PyValueError::new_err)?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    /// Reads the compact binary form, checking everything.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        py.allow_threads(|| crate::pickle::decode_structured(data))
            .map(wrap)
            .map_err(PyValueError::new_err)
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
