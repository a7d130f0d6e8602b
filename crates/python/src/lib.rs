//! The native module of the `arrays` Python package (`arrays._native`).
//!
//! A thin layer: each function converts its arguments at the edge, releases the GIL, calls
//! ragged-fsa or ragged-core, and hands the results back as numpy arrays that own the Rust
//! buffers (`PyArray::from_vec`, no copy). The k2-shaped API (argument names, defaults,
//! torch tensors, autograd) is the Python package's `arrays.k2`, written over this module.
//!
//! Objects of this module are immutable from Rust's side: an operation returns a new
//! object, so a numpy view of an object's arrays (whose base keeps the object alive) never
//! outlives the buffer it points into.

use numpy::ndarray::{ArrayView1, ArrayView2, ShapeBuilder};
use numpy::{
    IntoPyArray, PyArray, PyArray1, PyArray2, PyArray3, PyReadonlyArray1, PyReadonlyArray2,
    PyReadonlyArray3,
};
use pyo3::exceptions::{PyIndexError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use ragged_core::{Ragged, RaggedShape};
use ragged_fsa::{
    Arc, Attr, DenseFsaVec, Error, Fsa, FsaVec, RandEquivalentConfig, RandomFsaConfig, Semiring,
    SymbolTable, TextFormat, WeightPushing,
};

mod arrow_ffi;
mod image;
mod kaldi;
mod pickle;
mod pyval;
mod ragged_arrow;
mod rnnt;
mod structured;

/// A Rust error as the Python exception of its kind, with the Rust message.
fn py_err(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::FsaIndexOutOfRange { .. } | Error::MapOutOfRange { .. } => {
            PyIndexError::new_err(message)
        }
        _ => PyValueError::new_err(message),
    }
}

/// A ragged-core error as a `ValueError`.
fn ragged_err(err: ragged_core::Error) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// A one-FSA or many-FSA object, as k2's `Fsa` with 2 or 3 axes.
#[derive(Clone)]
pub enum Inner {
    /// 2 axes: `[state][arc]`.
    One(Fsa),
    /// 3 axes: `[fsa][state][arc]`.
    Vec(FsaVec),
}

macro_rules! each {
    ($inner:expr, $f:ident => $body:expr) => {
        match $inner {
            Inner::One($f) => $body,
            Inner::Vec($f) => $body,
        }
    };
}

/// Applies an algorithm returning `(result, arc_map)` to either kind.
macro_rules! unary {
    ($inner:expr, $f:ident => $call:expr) => {
        match $inner {
            Inner::One($f) => $call.map(|(r, m)| (Inner::One(r), m)),
            Inner::Vec($f) => $call.map(|(r, m)| (Inner::Vec(r), m)),
        }
    };
}

impl Inner {
    fn arcs(&self) -> &Ragged<Arc> {
        each!(self, f => f.arcs())
    }

    fn attr(&self, name: &str) -> Option<&Attr> {
        each!(self, f => f.attr(name))
    }

    fn attrs(&self) -> &ragged_fsa::Attrs {
        each!(self, f => f.attrs())
    }

    fn set_attr(&mut self, name: &str, attr: Attr) -> Result<(), Error> {
        each!(self, f => f.set_attr(name, attr))
    }

    fn remove_attr(&mut self, name: &str) {
        match self {
            Inner::One(f) => {
                f.remove_attr(name);
            }
            Inner::Vec(f) => {
                let mut attrs = f.attrs().clone();
                attrs.remove(name);
                let mut rebuilt =
                    FsaVec::from_ragged(f.arcs().clone()).expect("the arcs of a valid FsaVec");
                for (k, v) in attrs {
                    rebuilt
                        .set_attr(&k, v)
                        .expect("attributes of a valid FsaVec");
                }
                *f = rebuilt;
            }
        }
    }

    /// The same FSA(s) with other arcs (same shape), keeping the attributes.
    fn with_arcs(&self, arcs: Vec<Arc>) -> Result<Inner, Error> {
        let ragged = self.arcs().with_values(arcs).map_err(Error::Ragged)?;
        let mut out = match self {
            Inner::One(_) => Inner::One(Fsa::from_ragged(ragged)?),
            Inner::Vec(_) => Inner::Vec(FsaVec::from_ragged(ragged)?),
        };
        for (name, attr) in self.attrs() {
            out.set_attr(name, attr.clone())?;
        }
        Ok(out)
    }

    /// As the graphs of a dense operation: a single FSA borrowed as a vector of one (no
    /// copy, as k2 wraps it).
    fn graphs(&self) -> ragged_fsa::FsaVecRef<'_> {
        each!(self, f => f.into())
    }

    /// As an FsaVec (a copy for a single FSA).
    fn to_vec(&self) -> std::borrow::Cow<'_, FsaVec> {
        match self {
            Inner::One(f) => {
                std::borrow::Cow::Owned(ragged_fsa::create_fsa_vec(std::slice::from_ref(f)))
            }
            Inner::Vec(v) => std::borrow::Cow::Borrowed(v),
        }
    }
}

/// One FSA or a vector of FSAs (k2's `Fsa` object without its Python attributes).
#[pyclass(module = "arrays._native", name = "RawFsa")]
pub struct RawFsa {
    inner: Inner,
}

fn raw(inner: Inner) -> RawFsa {
    RawFsa { inner }
}

/// Rust vectors handed to numpy without a copy.
fn np1<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyArray1<T>> {
    v.into_pyarray(py)
}

/// A ragged array handed out as `(row_splits per axis, values)`, each owned by numpy.
fn ragged_out<'py, T: numpy::Element + Clone>(
    py: Python<'py>,
    r: Ragged<T>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (shape, values) = r.into_parts();
    let splits: Vec<Bound<'py, PyArray1<i32>>> = (1..shape.num_axes())
        .map(|axis| np1(py, shape.row_splits(axis).to_vec()))
        .collect();
    PyTuple::new(
        py,
        [
            PyList::new(py, splits)?.into_any(),
            np1(py, values).into_any(),
        ],
    )
}

/// A ragged array read from `(row_splits per axis, values)` (copied: Rust owns its values).
fn ragged_in<T: numpy::Element + Clone>(
    splits: Vec<PyReadonlyArray1<'_, i32>>,
    values: PyReadonlyArray1<'_, T>,
) -> PyResult<Ragged<T>> {
    let splits: Vec<Vec<i32>> = splits.iter().map(|s| s.as_array().to_vec()).collect();
    let shape = RaggedShape::from_row_splits(splits).map_err(ragged_err)?;
    Ragged::try_new(shape, values.as_array().to_vec()).map_err(ragged_err)
}

/// A view of `len` values of type `T` starting `offset` elements of `T` into `base_ptr`,
/// `stride` elements apart, whose numpy base is `owner`.
///
/// # Safety
/// When `len > 0`, `base_ptr .. + offset + stride * (len - 1)` must lie in one live
/// allocation that `owner` keeps alive and never frees or moves while it lives; when
/// `len == 0`, `base_ptr` must be non-null and aligned (an empty `Vec`'s pointer is).
unsafe fn view1<'py, T: numpy::Element>(
    owner: &Bound<'py, PyAny>,
    base_ptr: *const T,
    offset: usize,
    len: usize,
    stride: usize,
) -> Bound<'py, PyArray1<T>> {
    // an empty view points at the (possibly dangling) base: no arithmetic past an allocation
    let start = if len == 0 {
        base_ptr
    } else {
        // SAFETY: `len > 0`, so by the contract `offset` is inside the allocation
        unsafe { base_ptr.add(offset) }
    };
    // SAFETY: the caller's contract: the strided range is inside one live allocation (or
    // the view is empty, over an aligned non-null pointer)
    let view: ArrayView1<'_, T> =
        unsafe { ArrayView1::from_shape_ptr((len,).strides((stride,)), start) };
    // SAFETY: `owner` becomes the array's base, keeping the allocation alive (contract)
    unsafe { PyArray::borrow_from_array(&view, owner.clone()) }
}

#[pymethods]
impl RawFsa {
    /// Parses k2 text (or OpenFst text when `openfst`).
    #[staticmethod]
    #[pyo3(signature = (s, acceptor=true, num_aux_labels=0, ragged_label_names=Vec::new(), openfst=false))]
    fn from_str(
        py: Python<'_>,
        s: &str,
        acceptor: bool,
        num_aux_labels: usize,
        ragged_label_names: Vec<String>,
        openfst: bool,
    ) -> PyResult<RawFsa> {
        let aux = if acceptor { 0 } else { num_aux_labels.max(1) };
        let names: Vec<&str> = ragged_label_names.iter().map(String::as_str).collect();
        let mut format = TextFormat::with_num_aux_labels(aux).ragged(&names);
        format.openfst = openfst;
        py.allow_threads(|| Fsa::from_text(s, &format))
            .map(|f| raw(Inner::One(f)))
            .map_err(py_err)
    }

    /// One FSA from k2's `(N, 4)` int32 arcs (column 3 holds the score's bits); the final
    /// state is the highest state any arc names.
    #[staticmethod]
    fn from_arcs(py: Python<'_>, arcs: PyReadonlyArray2<'_, i32>) -> PyResult<RawFsa> {
        let a = arcs.as_array();
        if a.ncols() != 4 {
            return Err(PyValueError::new_err(format!(
                "arcs: expected shape (num_arcs, 4), got {:?}",
                a.shape()
            )));
        }
        let arcs: Vec<Arc> = a
            .rows()
            .into_iter()
            .map(|r| Arc {
                src_state: r[0],
                dest_state: r[1],
                label: r[2],
                score: f32::from_bits(r[3] as u32),
            })
            .collect();
        let highest = arcs
            .iter()
            .map(|a| a.src_state.max(a.dest_state))
            .max()
            .unwrap_or(-1);
        let num_states = usize::try_from(i64::from(highest) + 1)
            .map_err(|_| PyValueError::new_err("arcs: negative state numbers"))?;
        py.allow_threads(|| Fsa::from_arcs(arcs, num_states))
            .map(|f| raw(Inner::One(f)))
            .map_err(py_err)
    }

    /// k2 text (OpenFst text when `openfst`), with the plain `aux_labels` column when the
    /// FSA has one (and `acceptor` is false) and ragged columns for `ragged_label_names`.
    #[pyo3(signature = (openfst=false, acceptor=None, ragged_label_names=Vec::new()))]
    fn to_str(
        &self,
        openfst: bool,
        acceptor: Option<bool>,
        ragged_label_names: Vec<String>,
    ) -> PyResult<String> {
        let Inner::One(fsa) = &self.inner else {
            return Err(PyValueError::new_err(
                "to_str needs a single FSA, not an FsaVec (index it first)",
            ));
        };
        let has_aux = matches!(fsa.aux_labels(), Some(Attr::I32(_)));
        let aux = usize::from(has_aux && !acceptor.unwrap_or(false));
        let names: Vec<&str> = ragged_label_names.iter().map(String::as_str).collect();
        let mut format = TextFormat::with_num_aux_labels(aux).ragged(&names);
        format.openfst = openfst;
        fsa.to_text(&format).map_err(py_err)
    }

    /// The number of axes: 2 for one FSA, 3 for an FsaVec.
    #[getter]
    fn num_axes(&self) -> usize {
        self.inner.arcs().num_axes()
    }

    /// The number of arcs.
    #[getter]
    fn num_arcs(&self) -> usize {
        self.inner.arcs().num_elements()
    }

    /// The number of FSAs (1 for a single FSA).
    #[getter]
    fn num_fsas(&self) -> usize {
        match &self.inner {
            Inner::One(_) => 1,
            Inner::Vec(v) => v.num_fsas(),
        }
    }

    /// `dim0` and the total sizes of the axes (k2's `shape`).
    fn tot_sizes(&self) -> Vec<usize> {
        let arcs = self.inner.arcs();
        (0..arcs.num_axes()).map(|a| arcs.tot_size(a)).collect()
    }

    /// The row splits of `axis` (1 or 2), a copy.
    fn row_splits<'py>(&self, py: Python<'py>, axis: usize) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let arcs = self.inner.arcs();
        if axis == 0 || axis >= arcs.num_axes() {
            return Err(PyIndexError::new_err(format!(
                "axis {axis} has no row splits (axes 1..{})",
                arcs.num_axes()
            )));
        }
        Ok(np1(py, arcs.row_splits(axis).to_vec()))
    }

    /// The row ids of `axis` (1 or 2), a copy.
    fn row_ids<'py>(&self, py: Python<'py>, axis: usize) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let arcs = self.inner.arcs();
        if axis == 0 || axis >= arcs.num_axes() {
            return Err(PyIndexError::new_err(format!(
                "axis {axis} has no row ids (axes 1..{})",
                arcs.num_axes()
            )));
        }
        Ok(np1(py, arcs.row_ids(axis).to_vec()))
    }

    /// The arcs as an `(N, 4)` int32 view (src, dest, label, score bits); writable.
    fn arcs<'py>(slf: &Bound<'py, Self>) -> Bound<'py, PyArray2<i32>> {
        let this = slf.borrow();
        let values = this.inner.arcs().values();
        let ptr = values.as_ptr().cast::<i32>();
        const _: () = assert!(std::mem::size_of::<Arc>() == 16);
        // SAFETY: `Arc` is `#[repr(C)]` of four 4-byte fields (src, dest, label: i32, score:
        // f32; size asserted above), so `n` arcs are `n x 4` i32 in one allocation; the
        // object is never changed in place, so the allocation lives as long as `slf`
        let view: ArrayView2<'_, i32> =
            unsafe { ArrayView2::from_shape_ptr((values.len(), 4), ptr) };
        // SAFETY: `slf` becomes the base and keeps the arcs alive
        unsafe { PyArray2::borrow_from_array(&view, slf.clone().into_any()) }
    }

    /// The labels: column 2 of the arcs, an int32 view (writable).
    fn labels<'py>(slf: &Bound<'py, Self>) -> Bound<'py, PyArray1<i32>> {
        let this = slf.borrow();
        let values = this.inner.arcs().values();
        // SAFETY: column 2 of `n x 4` i32 (see `arcs`), stride 4, kept alive by `slf`
        unsafe {
            view1(
                slf.as_any(),
                values.as_ptr().cast::<i32>(),
                2,
                values.len(),
                4,
            )
        }
    }

    /// The scores: column 3 of the arcs, a float32 view (writable).
    fn scores<'py>(slf: &Bound<'py, Self>) -> Bound<'py, PyArray1<f32>> {
        let this = slf.borrow();
        let values = this.inner.arcs().values();
        // SAFETY: column 3 of `n x 4` 4-byte fields, the f32 score (see `arcs`), stride 4
        unsafe {
            view1(
                slf.as_any(),
                values.as_ptr().cast::<f32>(),
                3,
                values.len(),
                4,
            )
        }
    }

    /// A new object with these scores (one float32 per arc).
    fn with_scores(&self, py: Python<'_>, scores: PyReadonlyArray1<'_, f32>) -> PyResult<RawFsa> {
        let scores = scores.as_array();
        self.check_len(scores.len(), "scores")?;
        let mut arcs = self.inner.arcs().values().to_vec();
        for (arc, &s) in arcs.iter_mut().zip(scores.iter()) {
            arc.score = s;
        }
        py.allow_threads(|| self.inner.with_arcs(arcs))
            .map(raw)
            .map_err(py_err)
    }

    /// A new object with these labels (one int32 per arc).
    fn with_labels(&self, py: Python<'_>, labels: PyReadonlyArray1<'_, i32>) -> PyResult<RawFsa> {
        let labels = labels.as_array();
        self.check_len(labels.len(), "labels")?;
        let mut arcs = self.inner.arcs().values().to_vec();
        for (arc, &l) in arcs.iter_mut().zip(labels.iter()) {
            arc.label = l;
        }
        py.allow_threads(|| self.inner.with_arcs(arcs))
            .map(raw)
            .map_err(py_err)
    }

    /// The names of the per-arc attributes.
    fn attr_names(&self) -> Vec<String> {
        self.inner.attrs().keys().cloned().collect()
    }

    /// An attribute: an int32 or float32 view (writable), or `(row_splits, values)` views
    /// of a ragged one; `None` when there is no such attribute.
    fn get_attr<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = slf.py();
        let this = slf.borrow();
        let owner = slf.as_any();
        Ok(match this.inner.attr(name) {
            None => None,
            Some(Attr::I32(v)) => {
                // SAFETY: a contiguous vector of the attribute map of an object that is never
                // changed in place; `slf` is the base and keeps it alive
                Some(unsafe { view1(owner, v.as_ptr(), 0, v.len(), 1) }.into_any())
            }
            Some(Attr::F32(v)) => {
                // SAFETY: as for the int32 attribute above
                Some(unsafe { view1(owner, v.as_ptr(), 0, v.len(), 1) }.into_any())
            }
            Some(Attr::Ragged(r)) => {
                let splits = r.row_splits(1);
                let values = r.values();
                // SAFETY: the row splits of the attribute's shape, owned like the above
                let splits = unsafe { view1(owner, splits.as_ptr(), 0, splits.len(), 1) };
                // SAFETY: the attribute's values, owned like the above
                let values = unsafe { view1(owner, values.as_ptr(), 0, values.len(), 1) };
                Some(
                    PyTuple::new(
                        py,
                        [PyList::new(py, [splits])?.into_any(), values.into_any()],
                    )?
                    .into_any(),
                )
            }
        })
    }

    /// A new object with attribute `name` set: an int32 or float32 array with one value per
    /// arc, or `(row_splits, values)` of a 2-axis ragged int32 array with one list per arc.
    fn with_attr(&self, py: Python<'_>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<RawFsa> {
        let attr = if let Ok(v) = value.extract::<PyReadonlyArray1<'_, i32>>() {
            Attr::I32(v.as_array().to_vec())
        } else if let Ok(v) = value.extract::<PyReadonlyArray1<'_, f32>>() {
            Attr::F32(v.as_array().to_vec())
        } else if let Ok((splits, values)) =
            value.extract::<(Vec<PyReadonlyArray1<'_, i32>>, PyReadonlyArray1<'_, i32>)>()
        {
            let r = ragged_in(splits, values)?;
            if r.num_axes() != 2 {
                return Err(PyValueError::new_err(format!(
                    "a ragged attribute has 2 axes ([arc][value]), not {}",
                    r.num_axes()
                )));
            }
            Attr::Ragged(r)
        } else {
            return Err(PyValueError::new_err(format!(
                "attribute {name}: expected a 1-D int32 or float32 array or a ragged int32 array"
            )));
        };
        let mut inner = self.inner.clone();
        py.allow_threads(|| inner.set_attr(name, attr))
            .map_err(py_err)?;
        Ok(raw(inner))
    }

    /// A new object without attribute `name`.
    fn without_attr(&self, name: &str) -> RawFsa {
        let mut inner = self.inner.clone();
        inner.remove_attr(name);
        raw(inner)
    }

    /// k2's property bits.
    fn properties(&self, py: Python<'_>) -> u32 {
        py.allow_threads(|| each!(&self.inner, f => f.properties()).bits())
    }

    /// k2's property names, `"Valid|Nonempty|..."`.
    fn properties_str(&self, py: Python<'_>) -> String {
        py.allow_threads(|| each!(&self.inner, f => f.properties()).to_string())
    }

    /// FSA `i` of an FsaVec (a copy, with its attributes).
    fn get(&self, i: isize) -> PyResult<RawFsa> {
        let Inner::Vec(v) = &self.inner else {
            return Err(PyValueError::new_err(
                "indexing needs an FsaVec (3 axes); this is a single FSA",
            ));
        };
        let n = v.num_fsas() as isize;
        let k = if i < 0 { i + n } else { i };
        if k < 0 || k >= n {
            return Err(PyIndexError::new_err(format!(
                "FSA index {i} out of range for an FsaVec of {n}"
            )));
        }
        Ok(raw(Inner::One(v.get(k as usize))))
    }

    /// Graphviz text.
    #[pyo3(signature = (title=""))]
    fn to_dot(&self, title: &str) -> PyResult<String> {
        match &self.inner {
            Inner::One(f) => Ok(f.to_dot(title)),
            Inner::Vec(_) => Err(PyValueError::new_err("to_dot needs a single FSA")),
        }
    }

    /// The compact binary form (for pickling).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.allow_threads(|| pickle::encode(&self.inner));
        PyBytes::new(py, &bytes)
    }

    /// Reads the compact binary form, checking everything.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<RawFsa> {
        py.allow_threads(|| pickle::decode(data))
            .map(raw)
            .map_err(PyValueError::new_err)
    }

    fn arc_sort<'py>(&self, py: Python<'py>) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(|| unary!(&self.inner, f => Ok::<_, Error>(f.arc_sort())))
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    fn top_sort<'py>(&self, py: Python<'py>) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(|| unary!(&self.inner, f => f.top_sort()))
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    fn connect<'py>(&self, py: Python<'py>) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(|| unary!(&self.inner, f => Ok::<_, Error>(f.connect())))
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    fn invert<'py>(&self, py: Python<'py>) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(|| unary!(&self.inner, f => f.invert()))
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    fn reverse<'py>(&self, py: Python<'py>) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(|| unary!(&self.inner, f => Ok::<_, Error>(f.reverse())))
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    fn closure<'py>(&self, py: Python<'py>) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(|| unary!(&self.inner, f => Ok::<_, Error>(f.closure())))
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    fn add_epsilon_self_loops<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(|| unary!(&self.inner, f => Ok::<_, Error>(f.add_epsilon_self_loops())))
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    fn remove_epsilon_self_loops<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(
                || unary!(&self.inner, f => Ok::<_, Error>(f.remove_epsilon_self_loops())),
            )
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    fn shortest_path<'py>(&self, py: Python<'py>) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        // k2 always returns an FsaVec
        let v = self.inner.to_vec();
        let (r, m) = py.allow_threads(|| v.shortest_path()).map_err(py_err)?;
        Ok((raw(Inner::Vec(r)), np1(py, m)))
    }

    fn prune_on_arc_post<'py>(
        &self,
        py: Python<'py>,
        threshold_prob: f64,
    ) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
        let (r, m) = py
            .allow_threads(|| unary!(&self.inner, f => f.prune_on_arc_post(threshold_prob)))
            .map_err(py_err)?;
        Ok((raw(r), np1(py, m)))
    }

    /// `remove_epsilon`: the result and its arc derivations `(row_splits, values)`.
    fn remove_epsilon<'py>(&self, py: Python<'py>) -> PyResult<(RawFsa, Bound<'py, PyTuple>)> {
        let (r, d) = py
            .allow_threads(|| unary!(&self.inner, f => f.remove_epsilon()))
            .map_err(py_err)?;
        Ok((raw(r), ragged_out(py, d)?))
    }

    fn remove_epsilon_and_add_self_loops<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(RawFsa, Bound<'py, PyTuple>)> {
        let (r, d) = py
            .allow_threads(|| unary!(&self.inner, f => f.remove_epsilon_and_add_self_loops()))
            .map_err(py_err)?;
        Ok((raw(r), ragged_out(py, d)?))
    }

    /// `determinize` with k2's `DeterminizeWeightPushingType` value (0 tropical, 1 log, 2
    /// none); log is pushed with log-sum towards the start: k2's path totals, not its arcs.
    fn determinize<'py>(
        &self,
        py: Python<'py>,
        weight_pushing_type: i32,
    ) -> PyResult<(RawFsa, Bound<'py, PyTuple>)> {
        let pushing = match weight_pushing_type {
            0 => WeightPushing::Eager,
            2 => WeightPushing::None,
            1 => WeightPushing::Log,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown weight_pushing_type {other}"
                )))
            }
        };
        let (r, d) = py
            .allow_threads(|| unary!(&self.inner, f => f.determinize(pushing)))
            .map_err(py_err)?;
        Ok((raw(r), ragged_out(py, d)?))
    }

    /// Forward scores per state (idx01 order for an FsaVec).
    fn get_forward_scores<'py>(
        &self,
        py: Python<'py>,
        use_double_scores: bool,
        log_semiring: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = semiring(log_semiring);
        if use_double_scores {
            let v = py.allow_threads(|| each!(&self.inner, f => f.get_forward_scores::<f64>(s)));
            Ok(np1(py, v.map_err(py_err)?).into_any())
        } else {
            let v = py.allow_threads(|| each!(&self.inner, f => f.get_forward_scores::<f32>(s)));
            Ok(np1(py, v.map_err(py_err)?).into_any())
        }
    }

    /// Backward scores per state.
    fn get_backward_scores<'py>(
        &self,
        py: Python<'py>,
        use_double_scores: bool,
        log_semiring: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = semiring(log_semiring);
        if use_double_scores {
            let v = py.allow_threads(|| each!(&self.inner, f => f.get_backward_scores::<f64>(s)));
            Ok(np1(py, v.map_err(py_err)?).into_any())
        } else {
            let v = py.allow_threads(|| each!(&self.inner, f => f.get_backward_scores::<f32>(s)));
            Ok(np1(py, v.map_err(py_err)?).into_any())
        }
    }

    /// Total scores, one per FSA.
    fn get_tot_scores<'py>(
        &self,
        py: Python<'py>,
        use_double_scores: bool,
        log_semiring: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = semiring(log_semiring);
        let v = self.inner.to_vec();
        if use_double_scores {
            let t = py
                .allow_threads(|| v.get_tot_scores::<f64>(s))
                .map_err(py_err)?;
            Ok(np1(py, t).into_any())
        } else {
            let t = py
                .allow_threads(|| v.get_tot_scores::<f32>(s))
                .map_err(py_err)?;
            Ok(np1(py, t).into_any())
        }
    }

    /// Arc posteriors (log), one per arc.
    fn get_arc_post<'py>(
        &self,
        py: Python<'py>,
        use_double_scores: bool,
        log_semiring: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = semiring(log_semiring);
        if use_double_scores {
            let v = py.allow_threads(|| each!(&self.inner, f => f.get_arc_post::<f64>(s)));
            Ok(np1(py, v.map_err(py_err)?).into_any())
        } else {
            let v = py.allow_threads(|| each!(&self.inner, f => f.get_arc_post::<f32>(s)));
            Ok(np1(py, v.map_err(py_err)?).into_any())
        }
    }

    /// `d(sum of tot scores)/d(arc scores)` (float64, one per arc) and the FSA of each arc.
    fn tot_scores_grad<'py>(&self, py: Python<'py>, log_semiring: bool) -> PyResult<GradOut<'py>> {
        let v = self.inner.to_vec();
        let (grad, fsa_of_arc) = py
            .allow_threads(|| {
                let grad = v.get_tot_scores_grad(semiring(log_semiring))?;
                let shape = v.arcs().shape();
                let states = shape.row_ids(2);
                let fsas = shape.row_ids(1);
                let of_arc: Vec<i32> = states.iter().map(|&s| fsas[s as usize]).collect();
                Ok::<_, Error>((grad, of_arc))
            })
            .map_err(py_err)?;
        Ok((np1(py, grad), np1(py, fsa_of_arc)))
    }

    /// `random_paths(use_double_scores, num_paths)` as `(row_splits, arc indexes)`.
    fn random_paths<'py>(
        &self,
        py: Python<'py>,
        num_paths: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let v = self.inner.to_vec();
        let r = py
            .allow_threads(|| v.random_paths(num_paths, seed))
            .map_err(py_err)?;
        ragged_out(py, r)
    }

    fn __len__(&self) -> usize {
        self.num_arcs()
    }
}

impl RawFsa {
    fn check_len(&self, len: usize, what: &str) -> PyResult<()> {
        let n = self.inner.arcs().num_elements();
        if len == n {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "{what}: {len} values for {n} arcs"
            )))
        }
    }
}

fn semiring(log_semiring: bool) -> Semiring {
    if log_semiring {
        Semiring::Log
    } else {
        Semiring::Tropical
    }
}

/// Stacks FSAs (and the FSAs of FsaVecs) into one FsaVec.
#[pyfunction]
fn create_fsa_vec(py: Python<'_>, fsas: Vec<PyRef<'_, RawFsa>>) -> PyResult<RawFsa> {
    let mut all: Vec<Fsa> = Vec::new();
    for f in &fsas {
        match &f.inner {
            Inner::One(f) => all.push(f.clone()),
            Inner::Vec(v) => all.extend(v.to_fsas()),
        }
    }
    py.allow_threads(|| FsaVec::from_fsas(&all))
        .map(|v| raw(Inner::Vec(v)))
        .map_err(py_err)
}

/// k2's `union`: an FsaVec into one FSA.
#[pyfunction]
fn union<'py>(
    py: Python<'py>,
    fsas: PyRef<'py, RawFsa>,
) -> PyResult<(RawFsa, Bound<'py, PyArray1<i32>>)> {
    let Inner::Vec(v) = &fsas.inner else {
        return Err(PyValueError::new_err("union needs an FsaVec (3 axes)"));
    };
    let (r, m) = py.allow_threads(|| v.union());
    Ok((raw(Inner::One(r)), np1(py, m)))
}

/// Pairs a binary operation's operands: one-and-one, or as FsaVecs.
fn binary<'a>(a: &'a Inner, b: &'a Inner) -> Option<(&'a Fsa, &'a Fsa)> {
    match (a, b) {
        (Inner::One(a), Inner::One(b)) => Some((a, b)),
        _ => None,
    }
}

/// A loss per segment and its gradient.
type LossOut<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray3<f32>>);

/// A best path: labels, aux labels, score.
type PathOut = (Vec<i32>, Vec<i32>, f64);

/// A gradient per arc and the FSA of each arc.
type GradOut<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i32>>);

/// A result and two arc maps.
type BinaryOut<'py> = (RawFsa, Bound<'py, PyArray1<i32>>, Bound<'py, PyArray1<i32>>);

/// k2's `intersect(a_fsa, b_fsa, treat_epsilons_specially)` with both arc maps.
#[pyfunction]
fn intersect<'py>(
    py: Python<'py>,
    a: PyRef<'py, RawFsa>,
    b: PyRef<'py, RawFsa>,
    treat_epsilons_specially: bool,
) -> PyResult<BinaryOut<'py>> {
    let (ai, bi) = (&a.inner, &b.inner);
    let (r, am, bm) = py
        .allow_threads(|| match binary(ai, bi) {
            Some((a, b)) => a
                .intersect(b, treat_epsilons_specially)
                .map(|(r, x, y)| (Inner::One(r), x, y)),
            None => ai
                .to_vec()
                .intersect(&bi.to_vec(), treat_epsilons_specially)
                .map(|(r, x, y)| (Inner::Vec(r), x, y)),
        })
        .map_err(py_err)?;
    Ok((raw(r), np1(py, am), np1(py, bm)))
}

/// k2's `compose(a_fsa, b_fsa, treat_epsilons_specially, inner_labels)` with both arc maps.
#[pyfunction]
#[pyo3(signature = (a, b, treat_epsilons_specially=true, inner_labels=None))]
fn compose<'py>(
    py: Python<'py>,
    a: PyRef<'py, RawFsa>,
    b: PyRef<'py, RawFsa>,
    treat_epsilons_specially: bool,
    inner_labels: Option<String>,
) -> PyResult<BinaryOut<'py>> {
    let (ai, bi) = (&a.inner, &b.inner);
    let (r, am, bm) = py
        .allow_threads(|| match binary(ai, bi) {
            Some((a, b)) => match &inner_labels {
                Some(name) => a.compose_with_inner_labels(b, treat_epsilons_specially, name),
                None => a.compose(b, treat_epsilons_specially),
            }
            .map(|(r, x, y)| (Inner::One(r), x, y)),
            None => {
                if inner_labels.is_some() {
                    return Err(Error::InvalidArgument {
                        what: "inner_labels (given with an FsaVec operand)",
                        value: 1.0,
                        allowed: "None unless both operands are single FSAs",
                    });
                }
                ai.to_vec()
                    .compose(&bi.to_vec(), treat_epsilons_specially)
                    .map(|(r, x, y)| (Inner::Vec(r), x, y))
            }
        })
        .map_err(py_err)?;
    Ok((raw(r), np1(py, am), np1(py, bm)))
}

/// A sequence of int lists, or one list.
fn sequences(labels: &Bound<'_, PyAny>) -> PyResult<(Vec<Vec<i32>>, bool)> {
    if let Ok(one) = labels.extract::<Vec<i32>>() {
        return Ok((vec![one], false));
    }
    labels
        .extract::<Vec<Vec<i32>>>()
        .map(|many| (many, true))
        .map_err(|_| PyValueError::new_err("expected a list of ints or a list of lists of ints"))
}

/// k2's `linear_fsa(labels)`: one FSA for a list, an FsaVec for a list of lists.
#[pyfunction]
fn linear_fsa(py: Python<'_>, labels: &Bound<'_, PyAny>) -> PyResult<RawFsa> {
    let (seqs, many) = sequences(labels)?;
    py.allow_threads(|| {
        if many {
            FsaVec::linear(&seqs).map(Inner::Vec)
        } else {
            Fsa::linear(&seqs[0]).map(Inner::One)
        }
    })
    .map(raw)
    .map_err(py_err)
}

/// k2's `linear_fst(labels, aux_labels)`.
#[pyfunction]
fn linear_fst(
    py: Python<'_>,
    labels: &Bound<'_, PyAny>,
    aux_labels: &Bound<'_, PyAny>,
) -> PyResult<RawFsa> {
    let (seqs, many) = sequences(labels)?;
    let (aux, _) = sequences(aux_labels)?;
    py.allow_threads(|| {
        if many {
            FsaVec::linear_fst(&seqs, &aux).map(Inner::Vec)
        } else {
            Fsa::linear_fst(&seqs[0], &aux[0]).map(Inner::One)
        }
    })
    .map(raw)
    .map_err(py_err)
}

/// k2's `ctc_topo(max_token, modified)`.
#[pyfunction]
fn ctc_topo(py: Python<'_>, max_token: i32, modified: bool) -> PyResult<RawFsa> {
    py.allow_threads(|| Fsa::ctc_topo(max_token, modified))
        .map(|f| raw(Inner::One(f)))
        .map_err(py_err)
}

/// k2's `ctc_graph(symbols, modified)`: always an FsaVec.
#[pyfunction]
fn ctc_graph(py: Python<'_>, symbols: &Bound<'_, PyAny>, modified: bool) -> PyResult<RawFsa> {
    let (seqs, _) = sequences(symbols)?;
    py.allow_threads(|| FsaVec::ctc_graph(&seqs, modified))
        .map(|f| raw(Inner::Vec(f)))
        .map_err(py_err)
}

/// k2's `levenshtein_graph(symbols, ins_del_score)`: always an FsaVec.
#[pyfunction]
fn levenshtein_graph(
    py: Python<'_>,
    symbols: &Bound<'_, PyAny>,
    ins_del_score: f32,
) -> PyResult<RawFsa> {
    let (seqs, _) = sequences(symbols)?;
    py.allow_threads(|| FsaVec::levenshtein_graph(&seqs, ins_del_score))
        .map(|f| raw(Inner::Vec(f)))
        .map_err(py_err)
}

/// k2's `levenshtein_alignment(refs, hyps, hyp_to_ref_map)`.
#[pyfunction]
fn levenshtein_alignment(
    py: Python<'_>,
    refs: PyRef<'_, RawFsa>,
    hyps: PyRef<'_, RawFsa>,
    hyp_to_ref_map: PyReadonlyArray1<'_, i32>,
) -> PyResult<RawFsa> {
    let map = hyp_to_ref_map.as_array().to_vec();
    let refs = refs.inner.to_vec();
    let hyps = hyps.inner.to_vec();
    py.allow_threads(|| refs.levenshtein_alignment(&hyps, &map))
        .map(|f| raw(Inner::Vec(f)))
        .map_err(py_err)
}

/// Network outputs as dense FSAs (k2's `DenseFsaVec`).
#[pyclass(module = "arrays._native", name = "RawDenseFsaVec")]
pub struct RawDenseFsaVec {
    source: DenseSource,
    /// Frames of each segment (cut at the end of its sequence).
    durations: Vec<usize>,
}

/// Where a [`RawDenseFsaVec`]'s scores live.
enum DenseSource {
    /// A copy in k2's layout, made by the constructor.
    Owned(DenseFsaVec),
    /// The caller's array, read in place by every call (checked again each time: the
    /// segments against its shape and its frames for NaN).
    Borrowed {
        log_probs: Py<PyArray3<f32>>,
        segments: Vec<[i32; 3]>,
        allow_truncate: usize,
    },
}

impl RawDenseFsaVec {
    /// Runs `f` on the dense FSAs with the GIL released: the owned copy, or a borrowed
    /// form over the array as it is now.
    fn with<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&ragged_fsa::DenseFsaVecOf<'_>) -> Result<R, Error> + Send,
    ) -> PyResult<R> {
        match &self.source {
            DenseSource::Owned(dense) => py.allow_threads(|| f(dense)).map_err(py_err),
            DenseSource::Borrowed {
                log_probs,
                segments,
                allow_truncate,
            } => {
                let array = numpy::PyArrayMethods::try_readonly(log_probs.bind(py))
                    .map_err(|e| PyValueError::new_err(format!("log_probs cannot be read: {e}")))?;
                let view = array.as_array();
                py.allow_threads(|| {
                    let dense =
                        ragged_fsa::DenseFsaVecOf::borrowed(view, segments, *allow_truncate)?;
                    f(&dense)
                })
                .map_err(py_err)
            }
        }
    }
}

#[pymethods]
impl RawDenseFsaVec {
    /// From `log_probs` `(N, T, C)` float32 (any strides) and `supervision_segments`
    /// `(S, 3)` int32: a copy in k2's layout, or with `borrow` the array itself, read in
    /// place by each call (the caller keeps it unchanged while this object is used).
    #[new]
    #[pyo3(signature = (log_probs, supervision_segments, allow_truncate=0, borrow=false))]
    fn new(
        py: Python<'_>,
        log_probs: PyReadonlyArray3<'_, f32>,
        supervision_segments: PyReadonlyArray2<'_, i32>,
        allow_truncate: usize,
        borrow: bool,
    ) -> PyResult<Self> {
        let segs = supervision_segments.as_array();
        if segs.ncols() != 3 {
            return Err(PyValueError::new_err(format!(
                "supervision_segments must be (num_segments, 3), got {:?}",
                segs.shape()
            )));
        }
        let segments: Vec<[i32; 3]> = segs
            .rows()
            .into_iter()
            .map(|r| [r[0], r[1], r[2]])
            .collect();
        let view = log_probs.as_array();
        if borrow {
            // the segments checked now, so that a bad one is an error of the constructor
            // as in k2; NaN frames are found by the call that reads them
            let durations = py
                .allow_threads(|| {
                    DenseFsaVec::checked_durations(view.dim(), &segments, allow_truncate)
                })
                .map_err(py_err)?;
            let array: &Bound<'_, PyArray3<f32>> = &log_probs;
            return Ok(RawDenseFsaVec {
                source: DenseSource::Borrowed {
                    log_probs: array.clone().unbind(),
                    segments,
                    allow_truncate,
                },
                durations,
            });
        }
        let dense = py
            .allow_threads(|| DenseFsaVec::with_allow_truncate(view, &segments, allow_truncate))
            .map_err(py_err)?;
        let durations = (0..dense.num_fsas()).map(|i| dense.duration(i)).collect();
        Ok(RawDenseFsaVec {
            source: DenseSource::Owned(dense),
            durations,
        })
    }

    /// The number of segments.
    #[getter]
    fn num_fsas(&self) -> usize {
        self.durations.len()
    }

    /// Whether the log-probs are read in place (made with `borrow=True`).
    #[getter]
    fn borrowed(&self) -> bool {
        matches!(self.source, DenseSource::Borrowed { .. })
    }

    /// Frames of each segment.
    fn durations(&self) -> Vec<usize> {
        self.durations.clone()
    }

    /// k2's layout of the scores, `(rows, C + 1)` (a copy).
    fn scores<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let (rows, cols, values) = self.with(py, |dense| {
            let cols = dense.num_cols();
            let values = dense.try_scores()?.to_vec();
            Ok((values.len() / cols.max(1), cols, values))
        })?;
        numpy::ndarray::Array2::from_shape_vec((rows, cols), values)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// `intersect_dense(a_fsas, b_fsas, output_beam, a_to_b_map)` with both arc maps.
#[pyfunction]
#[pyo3(signature = (a_fsas, b_fsas, output_beam, a_to_b_map=None))]
fn intersect_dense<'py>(
    py: Python<'py>,
    a_fsas: PyRef<'py, RawFsa>,
    b_fsas: PyRef<'py, RawDenseFsaVec>,
    output_beam: f32,
    a_to_b_map: Option<PyReadonlyArray1<'py, i32>>,
) -> PyResult<BinaryOut<'py>> {
    let map = a_to_b_map.map(|m| m.as_array().to_vec());
    let a = a_fsas.inner.graphs();
    let (r, am, bm) = b_fsas.with(py, |dense| {
        ragged_fsa::intersect_dense(a, dense, output_beam, map.as_deref())
    })?;
    Ok((raw(Inner::Vec(r)), np1(py, am), np1(py, bm)))
}

/// `intersect_dense_pruned(a_fsas, b_fsas, search_beam, output_beam, min_active_states,
/// max_active_states)` with both arc maps.
#[pyfunction]
fn intersect_dense_pruned<'py>(
    py: Python<'py>,
    a_fsas: PyRef<'py, RawFsa>,
    b_fsas: PyRef<'py, RawDenseFsaVec>,
    search_beam: f32,
    output_beam: f32,
    min_active_states: usize,
    max_active_states: usize,
) -> PyResult<BinaryOut<'py>> {
    let a = a_fsas.inner.graphs();
    let (r, am, bm) = b_fsas.with(py, |dense| {
        ragged_fsa::intersect_dense_pruned(
            a,
            dense,
            search_beam,
            output_beam,
            min_active_states,
            max_active_states,
        )
    })?;
    Ok((raw(Inner::Vec(r)), np1(py, am), np1(py, bm)))
}

/// The CTC loss per segment (float64) and `d(sum of losses)/d(log_probs)` (float32, the
/// shape of `log_probs`).
#[pyfunction]
fn ctc_loss<'py>(
    py: Python<'py>,
    decoding_graph: PyRef<'py, RawFsa>,
    dense_fsa_vec: PyRef<'py, RawDenseFsaVec>,
    output_beam: f32,
) -> PyResult<LossOut<'py>> {
    let graphs = decoding_graph.inner.graphs();
    let out = dense_fsa_vec.with(py, |dense| ragged_fsa::ctc_loss(graphs, dense, output_beam))?;
    Ok((np1(py, out.loss), out.grad.into_pyarray(py)))
}

/// The best path of each lattice: `(labels, aux_labels, score)` per lattice.
#[pyfunction]
fn one_best(py: Python<'_>, lattice: PyRef<'_, RawFsa>) -> PyResult<Vec<PathOut>> {
    let v = lattice.inner.to_vec();
    let best = py
        .allow_threads(|| ragged_fsa::one_best(&v))
        .map_err(py_err)?;
    Ok(best
        .into_iter()
        .map(|b| (b.labels, b.aux_labels, b.score))
        .collect())
}

/// k2's `is_rand_equivalent(a, b, log_semiring, beam, treat_epsilons_specially, delta,
/// npath)`, the draws seeded by `seed`; `a` and `b` both FSAs or both FsaVecs.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn is_rand_equivalent(
    py: Python<'_>,
    a: PyRef<'_, RawFsa>,
    b: PyRef<'_, RawFsa>,
    log_semiring: bool,
    beam: f64,
    treat_epsilons_specially: bool,
    delta: f64,
    npath: usize,
    seed: u64,
) -> PyResult<bool> {
    let config = RandEquivalentConfig {
        semiring: if log_semiring {
            Semiring::Log
        } else {
            Semiring::Tropical
        },
        beam,
        treat_epsilons_specially,
        delta,
        num_paths: npath,
        seed,
    };
    match (&a.inner, &b.inner) {
        (Inner::One(x), Inner::One(y)) => py.allow_threads(|| x.is_rand_equivalent(y, &config)),
        (Inner::Vec(x), Inner::Vec(y)) => py.allow_threads(|| x.is_rand_equivalent(y, &config)),
        _ => {
            return Err(PyValueError::new_err(
                "is_rand_equivalent: a and b must both be single FSAs or both FsaVecs",
            ))
        }
    }
    .map_err(py_err)
}

/// k2's `fsa_properties_as_str(p)`: the names of the set bits joined by `|`.
#[pyfunction]
fn fsa_properties_as_str(p: u32) -> String {
    ragged_fsa::Properties::from_bits(p).to_string()
}

/// k2's `random_fsa(acyclic, max_symbol, min_num_arcs, max_num_arcs)`, drawn from `seed`.
#[pyfunction]
fn random_fsa(
    acyclic: bool,
    max_symbol: i32,
    min_num_arcs: usize,
    max_num_arcs: usize,
    seed: u64,
) -> PyResult<RawFsa> {
    let config = RandomFsaConfig {
        acyclic,
        max_symbol,
        min_num_arcs,
        max_num_arcs,
    };
    Fsa::random(&config, seed)
        .map(|f| raw(Inner::One(f)))
        .map_err(py_err)
}

/// `nbest(lattice, num_paths, nbest_scale, seed)`: per lattice, `(labels, aux_labels, score)`
/// of each distinct word sequence, best first.
#[pyfunction]
fn nbest(
    py: Python<'_>,
    lattice: PyRef<'_, RawFsa>,
    num_paths: usize,
    nbest_scale: f32,
    seed: u64,
) -> PyResult<Vec<Vec<PathOut>>> {
    let v = lattice.inner.to_vec();
    let lists = py
        .allow_threads(|| ragged_fsa::nbest(&v, num_paths, nbest_scale, seed))
        .map_err(py_err)?;
    Ok(lists
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|b| (b.labels, b.aux_labels, b.score))
                .collect()
        })
        .collect())
}

/// A symbol table's text (`symbol id` lines) as `(symbol, id)` pairs, checked.
#[pyfunction]
fn parse_symbol_table(py: Python<'_>, text: &str) -> PyResult<Vec<(String, i32)>> {
    let table: SymbolTable = py.allow_threads(|| text.parse()).map_err(py_err)?;
    let map = table.to_map();
    let mut pairs: Vec<(String, i32)> = map.into_iter().map(|(id, s)| (s, id)).collect();
    pairs.sort_by_key(|&(_, id)| id);
    Ok(pairs)
}

/// Reads a whole text file (an `OSError` naming the file when it cannot be read).
#[pyfunction]
fn read_text(py: Python<'_>, path: std::path::PathBuf) -> PyResult<String> {
    py.allow_threads(|| std::fs::read_to_string(&path))
        .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))
}

/// Parses k2's ragged text, `[ [ 1 2 ] [ 3 ] ]`, as `(row_splits, values)`.
#[pyfunction]
fn ragged_from_str<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyTuple>> {
    let r: Ragged<i32> = s.parse().map_err(ragged_err)?;
    ragged_out(py, r)
}

/// k2's ragged text of `(row_splits, values)`.
#[pyfunction]
fn ragged_to_str(
    splits: Vec<PyReadonlyArray1<'_, i32>>,
    values: PyReadonlyArray1<'_, i32>,
) -> PyResult<String> {
    Ok(ragged_in(splits, values)?.to_string())
}

/// Sum (or max, with `op = "max"`) of each last-axis sublist, starting from `initial`.
#[pyfunction]
fn ragged_reduce<'py>(
    py: Python<'py>,
    splits: Vec<PyReadonlyArray1<'_, i32>>,
    values: PyReadonlyArray1<'_, i32>,
    op: &str,
    initial: i32,
) -> PyResult<Bound<'py, PyArray1<i32>>> {
    let r = ragged_in(splits, values)?;
    let out = match op {
        "sum" => r.sum_per_sublist(initial),
        "max" => r.max_per_sublist(initial),
        "min" => r.min_per_sublist(initial),
        other => return Err(PyValueError::new_err(format!("unknown reduction {other}"))),
    };
    Ok(np1(py, out))
}

/// `remove_axis(axis)`.
#[pyfunction]
fn ragged_remove_axis<'py>(
    py: Python<'py>,
    splits: Vec<PyReadonlyArray1<'_, i32>>,
    values: PyReadonlyArray1<'_, i32>,
    axis: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    let r = ragged_in(splits, values)?;
    if axis >= r.num_axes() || r.num_axes() <= 2 {
        return Err(PyValueError::new_err(format!(
            "remove_axis({axis}) on a ragged tensor of {} axes (needs 3 or more, axis < num_axes)",
            r.num_axes()
        )));
    }
    ragged_out(py, r.remove_axis(axis).map_err(ragged_err)?)
}

/// `remove_values_eq(target)` / `remove_values_leq(cutoff)`.
#[pyfunction]
fn ragged_remove_values<'py>(
    py: Python<'py>,
    splits: Vec<PyReadonlyArray1<'_, i32>>,
    values: PyReadonlyArray1<'_, i32>,
    target: i32,
    leq: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let r = ragged_in(splits, values)?;
    let out = if leq {
        r.remove_values_leq(target)
    } else {
        r.remove_values_eq(target)
    };
    ragged_out(py, out)
}

/// `index(indexes, axis=0)`: the sublists of axis 0 in `indexes`' order.
#[pyfunction]
fn ragged_index<'py>(
    py: Python<'py>,
    splits: Vec<PyReadonlyArray1<'_, i32>>,
    values: PyReadonlyArray1<'_, i32>,
    axis: usize,
    indexes: PyReadonlyArray1<'_, i32>,
) -> PyResult<Bound<'py, PyTuple>> {
    let r = ragged_in(splits, values)?;
    let idx = indexes.as_array().to_vec();
    let n = r.tot_size(axis) as i64;
    if let Some(&bad) = idx.iter().find(|&&i| i < 0 || i as i64 >= n) {
        return Err(PyIndexError::new_err(format!(
            "index {bad} out of range for axis {axis} of size {n}"
        )));
    }
    ragged_out(py, r.index_axis(axis, &idx).map_err(ragged_err)?)
}

/// Which memory the arrays of an object use (for the zero-copy tests): the address of the
/// first arc.
#[pyfunction]
fn arcs_address(fsa: PyRef<'_, RawFsa>) -> usize {
    fsa.inner.arcs().values().as_ptr() as usize
}

/// Panics on purpose, so the tests can check that a panic becomes an exception.
#[pyfunction]
fn _panic_for_test() {
    panic!("a deliberate panic");
}

/// The module's contents.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<RawFsa>()?;
    m.add_class::<RawDenseFsaVec>()?;
    m.add_function(wrap_pyfunction!(create_fsa_vec, m)?)?;
    m.add_function(wrap_pyfunction!(union, m)?)?;
    m.add_function(wrap_pyfunction!(is_rand_equivalent, m)?)?;
    m.add_function(wrap_pyfunction!(random_fsa, m)?)?;
    m.add_function(wrap_pyfunction!(fsa_properties_as_str, m)?)?;
    m.add_function(wrap_pyfunction!(intersect, m)?)?;
    m.add_function(wrap_pyfunction!(compose, m)?)?;
    m.add_function(wrap_pyfunction!(linear_fsa, m)?)?;
    m.add_function(wrap_pyfunction!(linear_fst, m)?)?;
    m.add_function(wrap_pyfunction!(ctc_topo, m)?)?;
    m.add_function(wrap_pyfunction!(ctc_graph, m)?)?;
    m.add_function(wrap_pyfunction!(levenshtein_graph, m)?)?;
    m.add_function(wrap_pyfunction!(levenshtein_alignment, m)?)?;
    m.add_function(wrap_pyfunction!(intersect_dense, m)?)?;
    m.add_function(wrap_pyfunction!(intersect_dense_pruned, m)?)?;
    m.add_function(wrap_pyfunction!(ctc_loss, m)?)?;
    m.add_function(wrap_pyfunction!(rnnt::rnnt_loss_lm_am, m)?)?;
    m.add_function(wrap_pyfunction!(rnnt::rnnt_loss_logits, m)?)?;
    m.add_function(wrap_pyfunction!(rnnt::get_rnnt_prune_ranges, m)?)?;
    m.add_function(wrap_pyfunction!(rnnt::do_rnnt_pruning, m)?)?;
    m.add_function(wrap_pyfunction!(rnnt::get_rnnt_logprobs, m)?)?;
    m.add_function(wrap_pyfunction!(rnnt::mutual_information_recursion_f32, m)?)?;
    m.add_function(wrap_pyfunction!(rnnt::mutual_information_recursion_f64, m)?)?;
    m.add_function(wrap_pyfunction!(one_best, m)?)?;
    m.add_function(wrap_pyfunction!(nbest, m)?)?;
    m.add_function(wrap_pyfunction!(parse_symbol_table, m)?)?;
    m.add_function(wrap_pyfunction!(read_text, m)?)?;
    m.add_function(wrap_pyfunction!(ragged_from_str, m)?)?;
    m.add_function(wrap_pyfunction!(ragged_to_str, m)?)?;
    m.add_function(wrap_pyfunction!(ragged_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(ragged_remove_axis, m)?)?;
    m.add_function(wrap_pyfunction!(ragged_remove_values, m)?)?;
    m.add_function(wrap_pyfunction!(ragged_index, m)?)?;
    m.add_function(wrap_pyfunction!(arcs_address, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    kaldi::register(m)?;
    image::register(m)?;
    structured::register(m)?;
    arrow_ffi::register(m)?;
    ragged_arrow::register(m)?;
    Ok(())
}
