//! Ragged arrays of numbers for `arrays.structured.RaggedArray`: ragged-core's `Ragged<T>`
//! (int32, int64, float32, float64) from and to Arrow `ListArray`s and from row splits and
//! values, with ragged-core's per-sublist reductions.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::DataType;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use ragged_core::{Ragged, RaggedShape};

use crate::arrow_ffi::{self, ArrowExport};

/// A ragged array of one of the four element types.
#[derive(Clone)]
enum Inner {
    I32(Ragged<i32>),
    I64(Ragged<i64>),
    F32(Ragged<f32>),
    F64(Ragged<f64>),
}

/// Runs `$body` with `$r` bound to the `Ragged<T>` inside `$inner`, whatever `T` is.
macro_rules! each {
    ($inner:expr, $r:ident => $body:expr) => {
        match $inner {
            Inner::I32($r) => $body,
            Inner::I64($r) => $body,
            Inner::F32($r) => $body,
            Inner::F64($r) => $body,
        }
    };
}

fn ragged_err(err: ragged_core::Error) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// A ragged array of numbers (immutable).
#[pyclass(module = "arrays._native", name = "RawRagged", frozen)]
pub struct RawRagged {
    inner: Inner,
}

/// The element type below the lists of `data_type`.
fn leaf_type(mut data_type: &DataType) -> &DataType {
    while let DataType::List(f) | DataType::LargeList(f) = data_type {
        data_type = f.data_type();
    }
    data_type
}

fn from_array(array: ArrayRef) -> PyResult<Inner> {
    Ok(match leaf_type(array.data_type()) {
        DataType::Int32 => Inner::I32(Ragged::from_arrow(array).map_err(ragged_err)?),
        DataType::Int64 => Inner::I64(Ragged::from_arrow(array).map_err(ragged_err)?),
        DataType::Float32 => Inner::F32(Ragged::from_arrow(array).map_err(ragged_err)?),
        DataType::Float64 => Inner::F64(Ragged::from_arrow(array).map_err(ragged_err)?),
        other => {
            return Err(PyValueError::new_err(format!(
                "a ragged array holds int32, int64, float32 or float64 values below its \
                 lists, not {other} (in {})",
                array.data_type()
            )))
        }
    })
}

fn from_parts<T: numpy::Element + Copy>(
    shape: RaggedShape,
    values: PyReadonlyArray1<'_, T>,
) -> PyResult<Ragged<T>> {
    Ragged::try_new(shape, values.as_array().to_vec()).map_err(ragged_err)
}

#[pymethods]
impl RawRagged {
    /// From a `ListArray` (nested as deep as it goes) through the Arrow C data interface.
    #[staticmethod]
    fn from_arrow(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let array = arrow_ffi::import_array(obj)?;
        let inner = py.allow_threads(|| from_array(array))?;
        Ok(RawRagged { inner })
    }

    /// From row splits per axis (int32) and values (int32, int64, float32 or float64).
    #[staticmethod]
    fn from_parts(splits: Vec<Vec<i32>>, values: &Bound<'_, PyAny>) -> PyResult<Self> {
        if splits.is_empty() {
            return Err(PyValueError::new_err(
                "a ragged array needs at least 2 axes (one row splits)",
            ));
        }
        let shape = RaggedShape::from_row_splits(splits).map_err(ragged_err)?;
        let inner = if let Ok(v) = values.extract::<PyReadonlyArray1<'_, i32>>() {
            Inner::I32(from_parts(shape, v)?)
        } else if let Ok(v) = values.extract::<PyReadonlyArray1<'_, i64>>() {
            Inner::I64(from_parts(shape, v)?)
        } else if let Ok(v) = values.extract::<PyReadonlyArray1<'_, f32>>() {
            Inner::F32(from_parts(shape, v)?)
        } else if let Ok(v) = values.extract::<PyReadonlyArray1<'_, f64>>() {
            Inner::F64(from_parts(shape, v)?)
        } else {
            return Err(PyTypeError::new_err(
                "values must be a 1-D numpy array of int32, int64, float32 or float64",
            ));
        };
        Ok(RawRagged { inner })
    }

    /// As an Arrow `ListArray` nested `num_axes - 1` deep: the row splits shared, the values
    /// copied once.
    fn to_arrow(&self, py: Python<'_>) -> PyResult<Py<ArrowExport>> {
        let array: ArrayRef = py.allow_threads(|| each!(&self.inner, r => Arc::new(r.to_arrow())));
        arrow_ffi::export(py, array)
    }

    #[getter]
    fn num_axes(&self) -> usize {
        each!(&self.inner, r => r.num_axes())
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        match self.inner {
            Inner::I32(_) => "int32",
            Inner::I64(_) => "int64",
            Inner::F32(_) => "float32",
            Inner::F64(_) => "float64",
        }
    }

    /// The row splits of `axis` (1 <= axis < num_axes), a new numpy array.
    fn row_splits<'py>(&self, py: Python<'py>, axis: usize) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let shape = each!(&self.inner, r => r.shape());
        if axis == 0 || axis >= shape.num_axes() {
            return Err(PyIndexError::new_err(format!(
                "axis {axis} has no row splits (1..{})",
                shape.num_axes() - 1
            )));
        }
        Ok(shape.row_splits(axis).to_vec().into_pyarray(py))
    }

    /// The values, a new numpy array.
    fn values<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        each!(&self.inner, r => r.values().to_vec().into_pyarray(py).into_any())
    }

    /// k2's `SumPerSublist`, `MaxPerSublist`, `MinPerSublist` over the last axis: `op` is
    /// "sum", "max" or "min", `initial` converted to the element type.
    fn reduce<'py>(
        &self,
        py: Python<'py>,
        op: &str,
        initial: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        macro_rules! run {
            ($r:expr, $t:ty) => {{
                let init: $t = initial.extract()?;
                let out = py.allow_threads(|| match op {
                    "sum" => Ok($r.sum_per_sublist(init)),
                    "max" => Ok($r.max_per_sublist(init)),
                    "min" => Ok($r.min_per_sublist(init)),
                    _ => Err(PyValueError::new_err(format!(
                        "reduction {op:?} is not one of sum, max, min"
                    ))),
                })?;
                Ok(out.into_pyarray(py).into_any())
            }};
        }
        match &self.inner {
            Inner::I32(r) => run!(r, i32),
            Inner::I64(r) => run!(r, i64),
            Inner::F32(r) => run!(r, f32),
            Inner::F64(r) => run!(r, f64),
        }
    }
}

/// Registers the ragged class.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawRagged>()?;
    Ok(())
}
