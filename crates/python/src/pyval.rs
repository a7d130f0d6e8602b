//! `from_pyval`'s walk: a Python value of plain objects (exactly `dict`, `list`, `tuple`,
//! `str`, `int`, `float`, `bool`, `None`) into structured-tensor's `Tree`, with the GIL
//! held; the tensor is then read from the tree without it. Anything else stops the walk,
//! and the Python side's JSON path (`json.dumps`, then the crate's text reader) decides,
//! so every input gets that path's result and error, only sooner.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use structured_tensor::Tree;

/// The deepest value the walk takes, counting the root as 0: the crate's JSON text
/// reader's limit (deeper text goes to `serde_json`, whose messages the JSON path keeps).
const MAX_DEPTH: usize = 128;

/// Slots of the key cache (a power of two).
const KEY_SLOTS: usize = 256;

/// The walk met a value the JSON path must judge: a type other than the exact plain ones
/// (numpy scalars, subclasses, bytes), a key that is not exactly a `str`, NaN or an
/// infinity, a string that is not valid Unicode (a lone surrogate), nesting deeper than
/// `MAX_DEPTH` (a cycle, too).
pub struct Declined;

/// The walk's state: the names of the dict keys met so far, by key object. Records
/// written by one program share their key objects (string literals are interned), so each
/// name is decoded and allocated once. A slot holds its key object (a reference), so the
/// address it is found by stays that object's while the slot keeps it.
struct Walk<'py> {
    keys: Vec<Option<(Bound<'py, PyString>, Arc<str>)>>,
}

/// The tree of `pyval`, or `Declined` for a value the JSON path must judge.
pub fn tree_of(pyval: &Bound<'_, PyAny>) -> Result<Tree, Declined> {
    let mut walk = Walk {
        keys: vec![None; KEY_SLOTS],
    };
    walk.value(pyval, 0)
}

impl<'py> Walk<'py> {
    fn value(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> Result<Tree, Declined> {
        if depth > MAX_DEPTH {
            return Err(Declined);
        }
        if let Ok(dict) = obj.downcast_exact::<PyDict>() {
            let mut entries = Vec::with_capacity(dict.len());
            for (key, value) in dict.iter() {
                let name = self.key(&key)?;
                entries.push((name, self.value(&value, depth + 1)?));
            }
            return Ok(Tree::Dict(entries));
        }
        if let Ok(list) = obj.downcast_exact::<PyList>() {
            let mut items = Vec::with_capacity(list.len());
            for item in list.iter() {
                items.push(self.value(&item, depth + 1)?);
            }
            return Ok(Tree::List(items));
        }
        if let Ok(s) = obj.downcast_exact::<PyString>() {
            return Ok(Tree::Str(s.to_cow().map_err(|_| Declined)?.into_owned()));
        }
        // before int: a bool is an int too, though not exactly
        if let Ok(b) = obj.downcast_exact::<PyBool>() {
            return Ok(Tree::Bool(b.is_true()));
        }
        if let Ok(int) = obj.downcast_exact::<PyInt>() {
            return Ok(match int.extract::<i64>() {
                Ok(i) => Tree::Int(i),
                // beyond int64: kept as written, for the crate's error naming it
                Err(_) => Tree::BigInt(
                    int.str()
                        .and_then(|s| s.to_cow().map(|c| c.into_owned()))
                        .map_err(|_| Declined)?,
                ),
            });
        }
        if let Ok(float) = obj.downcast_exact::<PyFloat>() {
            let f = float.value();
            return if f.is_finite() {
                Ok(Tree::Float(f))
            } else {
                Err(Declined)
            };
        }
        if obj.is_none() {
            return Ok(Tree::Null);
        }
        if let Ok(tuple) = obj.downcast_exact::<PyTuple>() {
            let mut items = Vec::with_capacity(tuple.len());
            for item in tuple.iter() {
                items.push(self.value(&item, depth + 1)?);
            }
            return Ok(Tree::List(items));
        }
        Err(Declined)
    }

    /// The name of a dict key that is exactly a `str`, from the cache when met before.
    fn key(&mut self, key: &Bound<'py, PyAny>) -> Result<Arc<str>, Declined> {
        let key = key.downcast_exact::<PyString>().map_err(|_| Declined)?;
        // objects are at least 16-byte aligned: the bits above those pick the slot
        let slot = (key.as_ptr() as usize >> 4) % KEY_SLOTS;
        if let Some((cached, name)) = &self.keys[slot] {
            if cached.is(key) {
                return Ok(Arc::clone(name));
            }
        }
        let name: Arc<str> = Arc::from(key.to_cow().map_err(|_| Declined)?.as_ref());
        self.keys[slot] = Some((key.clone(), Arc::clone(&name)));
        Ok(name)
    }
}
