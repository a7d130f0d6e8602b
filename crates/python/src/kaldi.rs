//! Kaldi's tables for `arrays.kaldi`: kaldi-io's readers and writers over a value of any
//! of the types kaldiio reads (float matrices and vectors, compressed matrices, int32
//! vectors), chosen per record by its header, plus posteriors on request.
//!
//! Values come out as numpy arrays that own the Rust buffer (no copy); values going in are
//! copied once into kaldi-io's types (a writer owns what it writes).

use std::io::{BufRead, Cursor, Write};

use dense_matrix::{CompressedMatrix, CompressionMethod, Error as ObjError, Matrix, Vector};
use kaldi_io::{
    read_kaldi_object, AnyObject, Error, Holder, Posterior, RandomAccessTableReader,
    SequentialTableReader, TableWriter,
};
use numpy::ndarray::{Array1, Array2};
use numpy::{IntoPyArray, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{
    PyFileNotFoundError, PyNotImplementedError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

/// A kaldi-io error as the Python exception of its kind, with the Rust message (which
/// names the file, key and byte offset).
pub fn kaldi_err(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::Io {
            kind: std::io::ErrorKind::NotFound,
            ..
        } => PyFileNotFoundError::new_err(message),
        Error::Io { .. } | Error::PipeFailed { .. } => PyOSError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

fn obj_err(err: ObjError) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// One table value of the types kaldiio reads and writes, told apart by its header.
#[derive(Clone)]
pub enum Value {
    /// `FM`, or a compressed `CM`/`CM2`/`CM3` (decompressed on reading).
    MatF32(Matrix<f32>),
    /// `DM`.
    MatF64(Matrix<f64>),
    /// `FV`.
    VecF32(Vector<f32>),
    /// `DV`.
    VecF64(Vector<f64>),
    /// Kaldi's `BasicVectorHolder<int32>` (alignments).
    I32(Vec<i32>),
    /// A compressed matrix (only written: reading decompresses).
    Compressed(CompressedMatrix),
    /// Kaldi's `Posterior` (only written through this type; read with the posterior holder).
    Posterior(Posterior),
}

impl From<AnyObject> for Value {
    fn from(object: AnyObject) -> Self {
        match object {
            AnyObject::MatrixF32(m) => Value::MatF32(m),
            AnyObject::MatrixF64(m) => Value::MatF64(m),
            AnyObject::VectorF32(v) => Value::VecF32(v),
            AnyObject::VectorF64(v) => Value::VecF64(v),
            AnyObject::Int32Vector(v) => Value::I32(v),
        }
    }
}

/// The writers' holder; reading goes through kaldi-io's [`AnyObject`] (whose table path
/// reads float matrices and vectors into new memory without zeroing it).
impl Holder for Value {
    fn read<R: BufRead>(r: &mut R, binary: bool) -> Result<Self, ObjError> {
        AnyObject::read(r, binary).map(Value::from)
    }

    fn write<W: Write>(&self, w: &mut W, binary: bool) -> Result<(), ObjError> {
        match self {
            Value::MatF32(m) => Holder::write(m, w, binary),
            Value::MatF64(m) => Holder::write(m, w, binary),
            Value::VecF32(v) => Holder::write(v, w, binary),
            Value::VecF64(v) => Holder::write(v, w, binary),
            Value::I32(v) => Holder::write(v, w, binary),
            Value::Compressed(c) => Holder::write(c, w, binary),
            Value::Posterior(p) => Holder::write(p, w, binary),
        }
    }

    fn extract_range(&self, range: &str) -> Result<Self, String> {
        match self {
            Value::MatF32(m) => Holder::extract_range(m, range).map(Value::MatF32),
            Value::MatF64(m) => Holder::extract_range(m, range).map(Value::MatF64),
            Value::VecF32(v) => Holder::extract_range(v, range).map(Value::VecF32),
            Value::VecF64(v) => Holder::extract_range(v, range).map(Value::VecF64),
            _ => Err("ranges are defined only for matrices and vectors".to_string()),
        }
    }
}

/// A matrix handed to numpy as a C-contiguous array that owns its buffer (rows padded to a
/// stride are moved together in place first).
fn matrix_out<'py, R: dense_matrix::Real + numpy::Element>(
    py: Python<'py>,
    m: Matrix<R>,
) -> Bound<'py, PyAny> {
    let (mut data, rows, cols, stride) = m.into_raw_parts();
    if stride != cols {
        for r in 1..rows {
            data.copy_within(r * stride..r * stride + cols, r * cols);
        }
    }
    data.truncate(rows * cols);
    Array2::from_shape_vec((rows, cols), data)
        .expect("rows * cols elements after compaction")
        .into_pyarray(py)
        .into_any()
}

fn posterior_out<'py>(py: Python<'py>, p: Posterior) -> PyResult<Bound<'py, PyAny>> {
    let frames = p
        .into_iter()
        .map(|frame| PyList::new(py, frame))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, frames)?.into_any())
}

/// A value as numpy (a list of lists of `(int, float)` for a posterior).
pub fn value_out<'py>(py: Python<'py>, value: Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::MatF32(m) => matrix_out(py, m),
        Value::MatF64(m) => matrix_out(py, m),
        Value::VecF32(v) => Array1::from_vec(v.into_vec()).into_pyarray(py).into_any(),
        Value::VecF64(v) => Array1::from_vec(v.into_vec()).into_pyarray(py).into_any(),
        Value::I32(v) => Array1::from_vec(v).into_pyarray(py).into_any(),
        Value::Compressed(c) => matrix_out(py, c.to_matrix::<f32>()),
        Value::Posterior(p) => posterior_out(py, p)?,
    })
}

/// A numpy array's values as a (C-order) vector, with its shape.
fn array_values<T: numpy::Element + Copy>(
    array: &Bound<'_, PyAny>,
) -> PyResult<Option<(Vec<T>, Vec<usize>)>> {
    let Ok(array) = array.downcast::<PyArrayDyn<T>>() else {
        return Ok(None);
    };
    let view = array.try_readonly()?;
    let view = view.as_array();
    let shape = view.shape().to_vec();
    Ok(Some((view.iter().copied().collect(), shape)))
}

fn matrix_in<R: dense_matrix::Real>(data: Vec<R>, shape: &[usize]) -> PyResult<Matrix<R>> {
    if shape[0] == 0 || shape[1] == 0 {
        return Ok(Matrix::empty());
    }
    Matrix::from_vec(shape[0], shape[1], data).map_err(obj_err)
}

fn shape_err(dtype: &str, shape: &[usize]) -> PyErr {
    PyValueError::new_err(format!(
        "a {dtype} array of shape {shape:?}: Kaldi holds float32/float64 matrices (2-D) and \
         vectors (1-D) and int32 vectors (1-D)"
    ))
}

/// The Kaldi method of kaldiio's `compression_method` number (Kaldi's numbers, 1..=7).
pub fn method_of(code: i32) -> PyResult<CompressionMethod> {
    CompressionMethod::from_kaldi_code(code).ok_or_else(|| {
        PyValueError::new_err(format!(
            "compression_method {code}: Kaldi's methods are 1 (kAutomaticMethod) to 7 \
             (kOneByteZeroOne)"
        ))
    })
}

/// A Python value as a table value: a numpy float32/float64 matrix or vector, an int32
/// vector, a `CompressedMatrix`, or a posterior (a list of lists of `(int, float)`);
/// `compression` compresses a float matrix.
pub fn value_in(value: &Bound<'_, PyAny>, compression: Option<i32>) -> PyResult<Value> {
    if let Ok(c) = value.downcast::<PyCompressedMatrix>() {
        return Ok(Value::Compressed(c.borrow().inner.clone()));
    }
    if value.is_instance_of::<PyList>() {
        let post: Posterior = value.extract().map_err(|_| {
            PyValueError::new_err(
                "a list is written as Kaldi's posterior: a list (per frame) of lists of \
                 (int, float) pairs",
            )
        })?;
        return Ok(Value::Posterior(post));
    }
    if value.is_instance_of::<PyTuple>() {
        return Err(PyNotImplementedError::new_err(
            "(rate, array) tuples are kaldiio's wav values: wav archives are not supported",
        ));
    }
    let parsed = if let Some((data, shape)) = array_values::<f32>(value)? {
        match shape.len() {
            2 => Value::MatF32(matrix_in(data, &shape)?),
            1 => Value::VecF32(Vector::from_vec(data)),
            _ => return Err(shape_err("float32", &shape)),
        }
    } else if let Some((data, shape)) = array_values::<f64>(value)? {
        match shape.len() {
            2 => Value::MatF64(matrix_in(data, &shape)?),
            1 => Value::VecF64(Vector::from_vec(data)),
            _ => return Err(shape_err("float64", &shape)),
        }
    } else if let Some((data, shape)) = array_values::<i32>(value)? {
        match shape.len() {
            1 => Value::I32(data),
            _ => return Err(shape_err("int32", &shape)),
        }
    } else {
        let what = match value.downcast::<numpy::PyUntypedArray>() {
            Ok(a) => format!("an array of dtype {}", a.dtype()),
            Err(_) => format!("a {}", value.get_type().name()?),
        };
        return Err(PyValueError::new_err(format!(
            "unsupported value: {what} (write float32/float64 matrices or vectors, int32 \
             vectors, CompressedMatrix or posteriors)"
        )));
    };
    match (compression, parsed) {
        (None, parsed) => Ok(parsed),
        (Some(code), Value::MatF32(m)) => Ok(Value::Compressed(
            CompressedMatrix::compress(&m, method_of(code)?).map_err(obj_err)?,
        )),
        (Some(code), Value::MatF64(m)) => Ok(Value::Compressed(
            CompressedMatrix::compress(&m, method_of(code)?).map_err(obj_err)?,
        )),
        (Some(_), _) => Err(PyValueError::new_err(
            "compression_method is given, but the value is not a float matrix (2-D)",
        )),
    }
}

/// What a reader reads: kaldiio's values, or Kaldi's posteriors.
enum Seq {
    Any(SequentialTableReader<AnyObject>),
    Posterior(SequentialTableReader<Posterior>),
}

fn holder_is_posterior(holder: Option<&str>) -> PyResult<bool> {
    match holder {
        None => Ok(false),
        Some("posterior") => Ok(true),
        Some(other) => Err(PyValueError::new_err(format!(
            "holder `{other}`: None (kaldiio's values, by their headers) or \"posterior\""
        ))),
    }
}

/// A sequential table reader (Kaldi's `SequentialTableReader`) over an rspecifier.
#[pyclass(module = "arrays._native", name = "KaldiSequentialReader")]
pub struct KaldiSequentialReader {
    // a `Mutex` only for `Sync` (a `bg` reader holds a channel's receiver); `&mut self`
    // reaches it without locking
    reader: std::sync::Mutex<Option<Seq>>,
}

#[pymethods]
impl KaldiSequentialReader {
    #[new]
    #[pyo3(signature = (rspecifier, holder=None))]
    fn new(py: Python<'_>, rspecifier: &str, holder: Option<&str>) -> PyResult<Self> {
        let posterior = holder_is_posterior(holder)?;
        let reader = py
            .allow_threads(|| {
                if posterior {
                    SequentialTableReader::open(rspecifier).map(Seq::Posterior)
                } else {
                    SequentialTableReader::open(rspecifier).map(Seq::Any)
                }
            })
            .map_err(kaldi_err)?;
        Ok(KaldiSequentialReader {
            reader: std::sync::Mutex::new(Some(reader)),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let slot = self
            .reader
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(reader) = slot.as_mut() else {
            return Ok(None);
        };
        let item = py.allow_threads(|| match reader {
            Seq::Any(r) => r.next().map(|item| item.map(|(k, v)| (k, Value::from(v)))),
            Seq::Posterior(r) => r
                .next()
                .map(|item| item.map(|(k, v)| (k, Value::Posterior(v)))),
        });
        match item {
            None => {
                *slot = None;
                Ok(None)
            }
            Some(Err(e)) => {
                *slot = None;
                Err(kaldi_err(e))
            }
            Some(Ok((key, value))) => Ok(Some(PyTuple::new(
                py,
                [key.into_pyobject(py)?.into_any(), value_out(py, value)?],
            )?)),
        }
    }

    /// Closes the reader (and waits for its pipe's command, if any).
    fn close(&mut self) {
        *self
            .reader
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

/// A random-access table reader (Kaldi's `RandomAccessTableReader`), kaldiio's `load_scp`.
#[pyclass(module = "arrays._native", name = "KaldiRandomAccessReader")]
pub struct KaldiRandomAccessReader {
    reader: RandomAccessTableReader<AnyObject>,
}

#[pymethods]
impl KaldiRandomAccessReader {
    #[new]
    fn new(py: Python<'_>, rspecifier: &str) -> PyResult<Self> {
        let reader = py
            .allow_threads(|| RandomAccessTableReader::open(rspecifier))
            .map_err(kaldi_err)?;
        Ok(KaldiRandomAccessReader { reader })
    }

    /// The value of `key`, or `None`.
    fn get<'py>(&mut self, py: Python<'py>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let reader = &mut self.reader;
        match py.allow_threads(|| reader.get(key)).map_err(kaldi_err)? {
            Some(value) => Ok(Some(value_out(py, value.into())?)),
            None => Ok(None),
        }
    }

    fn has_key(&mut self, py: Python<'_>, key: &str) -> PyResult<bool> {
        let reader = &mut self.reader;
        py.allow_threads(|| reader.has_key(key)).map_err(kaldi_err)
    }
}

/// A table writer (Kaldi's `TableWriter`) over a wspecifier.
#[pyclass(module = "arrays._native", name = "KaldiWriter")]
pub struct KaldiWriter {
    writer: Option<TableWriter<Value>>,
    compression: Option<i32>,
}

#[pymethods]
impl KaldiWriter {
    #[new]
    #[pyo3(signature = (wspecifier, compression_method=None))]
    fn new(py: Python<'_>, wspecifier: &str, compression_method: Option<i32>) -> PyResult<Self> {
        if let Some(code) = compression_method {
            method_of(code)?;
        }
        let writer = py
            .allow_threads(|| TableWriter::create(wspecifier))
            .map_err(kaldi_err)?;
        Ok(KaldiWriter {
            writer: Some(writer),
            compression: compression_method,
        })
    }

    fn write(&mut self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = value_in(value, self.compression)?;
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("WriteHelper has been already closed"))?;
        py.allow_threads(|| writer.write(key, &value))
            .map_err(kaldi_err)
    }

    /// Flushes and closes; for a pipe, waits for the command and reports its failure.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        match self.writer.take() {
            Some(writer) => py.allow_threads(|| writer.finish()).map_err(kaldi_err),
            None => Ok(()),
        }
    }
}

/// kaldiio's `load_mat`: one object from an rxfilename (`file`, `file:offset`, a pipe, a
/// trailing `[rows]` or `[rows,cols]` range).
#[pyfunction]
pub fn kaldi_load_mat<'py>(py: Python<'py>, rxfilename: &str) -> PyResult<Bound<'py, PyAny>> {
    let value = py
        .allow_threads(|| read_kaldi_object::<AnyObject>(rxfilename))
        .map_err(kaldi_err)?;
    value_out(py, value.into())
}

/// The bytes of one value as an archive holds them after its key: the `\0B` marker and the
/// binary form, or the text form (kaldiio's `write_array`, Kaldi's holders' bytes).
#[pyfunction]
#[pyo3(signature = (value, text=false, compression_method=None))]
pub fn kaldi_value_bytes<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    text: bool,
    compression_method: Option<i32>,
) -> PyResult<Bound<'py, PyBytes>> {
    let value = value_in(value, compression_method)?;
    let mut out = Vec::new();
    if !text {
        out.extend_from_slice(b"\0B");
    }
    Holder::write(&value, &mut out, !text).map_err(obj_err)?;
    Ok(PyBytes::new(py, &out))
}

/// Kaldi's `CompressedMatrix`.
#[pyclass(module = "arrays._native", name = "CompressedMatrix")]
pub struct PyCompressedMatrix {
    inner: CompressedMatrix,
}

#[pymethods]
impl PyCompressedMatrix {
    /// Compresses a float32 or float64 matrix with Kaldi's method number (1 = automatic).
    #[new]
    #[pyo3(signature = (array, method=1))]
    fn new(py: Python<'_>, array: &Bound<'_, PyAny>, method: i32) -> PyResult<Self> {
        let method = method_of(method)?;
        let inner = match value_in(array, None)? {
            Value::MatF32(m) => py.allow_threads(|| CompressedMatrix::compress(&m, method)),
            Value::MatF64(m) => py.allow_threads(|| CompressedMatrix::compress(&m, method)),
            _ => {
                return Err(PyValueError::new_err(
                    "CompressedMatrix takes a float32 or float64 matrix (2-D)",
                ))
            }
        }
        .map_err(obj_err)?;
        Ok(PyCompressedMatrix { inner })
    }

    /// Reads Kaldi's binary form (`CM`, `CM2`, `CM3`, after the `\0B` marker).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        let mut cursor = Cursor::new(data);
        let inner = CompressedMatrix::read_kaldi(&mut cursor).map_err(obj_err)?;
        if (cursor.position() as usize) != data.len() {
            return Err(PyValueError::new_err(format!(
                "{} bytes after the compressed matrix's {}",
                data.len() - cursor.position() as usize,
                cursor.position()
            )));
        }
        Ok(PyCompressedMatrix { inner })
    }

    /// Kaldi's binary form (without the `\0B` marker).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        self.inner.write_kaldi(&mut out).map_err(obj_err)?;
        Ok(PyBytes::new(py, &out))
    }

    /// The decompressed matrix (float32, or float64 with `dtype=numpy.float64`).
    #[pyo3(signature = (double=false))]
    fn decompress<'py>(&self, py: Python<'py>, double: bool) -> Bound<'py, PyAny> {
        if double {
            matrix_out(py, py.allow_threads(|| self.inner.to_matrix::<f64>()))
        } else {
            matrix_out(py, py.allow_threads(|| self.inner.to_matrix::<f32>()))
        }
    }

    #[getter]
    fn num_rows(&self) -> usize {
        self.inner.num_rows()
    }

    #[getter]
    fn num_cols(&self) -> usize {
        self.inner.num_cols()
    }

    /// Kaldi's token of the format: `CM`, `CM2` or `CM3`.
    #[getter]
    fn token(&self) -> &'static str {
        self.inner.token()
    }
}

/// Registers the Kaldi classes and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<KaldiSequentialReader>()?;
    m.add_class::<KaldiRandomAccessReader>()?;
    m.add_class::<KaldiWriter>()?;
    m.add_class::<PyCompressedMatrix>()?;
    m.add_function(wrap_pyfunction!(kaldi_load_mat, m)?)?;
    m.add_function(wrap_pyfunction!(kaldi_value_bytes, m)?)?;
    Ok(())
}
