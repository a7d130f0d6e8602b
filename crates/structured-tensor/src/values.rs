//! Element types and flat value buffers: `DType`, `Scalar` and `Values`.

use std::fmt;

use crate::buffer::ValueBuffer;
use crate::runs::append_runs;
use crate::strings::{BytesColumn, StringColumn};

/// The element type of a leaf field (TensorFlow's `dtype`): what JSON carries (`int64`,
/// `float64`, `bool`, `string`) and `int32`, `float32`, `uint8`, `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// 64-bit signed integers (JSON integers).
    I64,
    /// 64-bit floats (JSON numbers with a fraction or exponent; mixed int/float lists).
    F64,
    /// Booleans.
    Bool,
    /// UTF-8 strings.
    Str,
    /// 32-bit signed integers.
    I32,
    /// 32-bit floats.
    F32,
    /// Unsigned bytes (`uint8`).
    U8,
    /// Byte strings that need not be UTF-8 (TensorFlow's `tf.string` holds bytes).
    Bytes,
}

impl DType {
    /// TensorFlow's name for the dtype (`int64`, `float64`, `bool`, `string`).
    pub fn name(self) -> &'static str {
        match self {
            DType::I64 => "int64",
            DType::F64 => "float64",
            DType::Bool => "bool",
            DType::Str => "string",
            DType::I32 => "int32",
            DType::F32 => "float32",
            DType::U8 => "uint8",
            DType::Bytes => "bytes",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One element of a leaf field.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// An `int64` element.
    I64(i64),
    /// A `float64` element.
    F64(f64),
    /// A `bool` element.
    Bool(bool),
    /// A `string` element.
    Str(String),
    /// An `int32` element.
    I32(i32),
    /// A `float32` element.
    F32(f32),
    /// A `uint8` element.
    U8(u8),
    /// A `bytes` element.
    Bytes(Vec<u8>),
}

impl Scalar {
    /// The element's dtype.
    pub fn dtype(&self) -> DType {
        match self {
            Scalar::I64(_) => DType::I64,
            Scalar::F64(_) => DType::F64,
            Scalar::Bool(_) => DType::Bool,
            Scalar::Str(_) => DType::Str,
            Scalar::I32(_) => DType::I32,
            Scalar::F32(_) => DType::F32,
            Scalar::U8(_) => DType::U8,
            Scalar::Bytes(_) => DType::Bytes,
        }
    }

    /// The element as a JSON value.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Scalar::I64(v) => serde_json::Value::from(*v),
            Scalar::F64(v) => f64_to_json(*v),
            Scalar::Bool(v) => serde_json::Value::Bool(*v),
            Scalar::Str(v) => serde_json::Value::String(v.clone()),
            Scalar::I32(v) => serde_json::Value::from(*v),
            Scalar::F32(v) => f64_to_json(f64::from(*v)),
            Scalar::U8(v) => serde_json::Value::from(*v),
            Scalar::Bytes(v) => bytes_to_json(v),
        }
    }
}

/// A float as JSON; non-finite floats (which JSON cannot hold) become `null`.
pub(crate) fn f64_to_json(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null)
}

/// The elements of `v` in `ranges`, in order, the dtype dispatched once (see
/// [`append_runs`]).
fn gather_slice<T: Copy>(v: &[T], ranges: &[(usize, usize)]) -> Vec<T> {
    let total = ranges.iter().map(|(a, b)| b - a).sum();
    let mut out = Vec::new();
    append_runs(&mut out, v, ranges, total);
    out
}

/// A byte string as JSON: a string when it is valid UTF-8, else the list of its byte
/// values (JSON has no bytes; this loses nothing).
pub(crate) fn bytes_to_json(v: &[u8]) -> serde_json::Value {
    match std::str::from_utf8(v) {
        Ok(s) => serde_json::Value::String(s.to_string()),
        Err(_) => serde_json::Value::Array(v.iter().map(|&b| serde_json::Value::from(b)).collect()),
    }
}

/// A flat buffer of elements of one dtype: the `flat_values` of a leaf field. Numbers sit
/// in a [`ValueBuffer`], owned or shared with an Arrow buffer (`from_arrow`) and copied on
/// write; booleans are bytes of our own (Arrow packs them in bits, so they are copied).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// `int64` elements.
    I64(ValueBuffer<i64>),
    /// `float64` elements.
    F64(ValueBuffer<f64>),
    /// `bool` elements.
    Bool(Vec<bool>),
    /// `string` elements, Arrow-style: one byte buffer plus offsets.
    Str(StringColumn),
    /// `int32` elements.
    I32(ValueBuffer<i32>),
    /// `float32` elements.
    F32(ValueBuffer<f32>),
    /// `uint8` elements.
    U8(ValueBuffer<u8>),
    /// `bytes` elements, in the layout of `Str`.
    Bytes(BytesColumn),
}

impl Values {
    /// An empty buffer of the given dtype.
    pub fn empty(dtype: DType) -> Values {
        Values::with_capacity(dtype, 0)
    }

    /// An empty buffer of the given dtype with room for `n` elements.
    pub fn with_capacity(dtype: DType, n: usize) -> Values {
        match dtype {
            DType::I64 => Values::I64(ValueBuffer::with_capacity(n)),
            DType::F64 => Values::F64(ValueBuffer::with_capacity(n)),
            DType::Bool => Values::Bool(Vec::with_capacity(n)),
            DType::Str => Values::Str(StringColumn::with_capacity(n, 0)),
            DType::I32 => Values::I32(ValueBuffer::with_capacity(n)),
            DType::F32 => Values::F32(ValueBuffer::with_capacity(n)),
            DType::U8 => Values::U8(ValueBuffer::with_capacity(n)),
            DType::Bytes => Values::Bytes(BytesColumn::with_capacity(n, 0)),
        }
    }

    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        match self {
            Values::I64(_) => DType::I64,
            Values::F64(_) => DType::F64,
            Values::Bool(_) => DType::Bool,
            Values::Str(_) => DType::Str,
            Values::I32(_) => DType::I32,
            Values::F32(_) => DType::F32,
            Values::U8(_) => DType::U8,
            Values::Bytes(_) => DType::Bytes,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Values::I64(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::U8(v) => v.len(),
            Values::Bytes(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` (panics when out of range, like slice indexing).
    pub fn get(&self, i: usize) -> Scalar {
        let n = self.len();
        if i >= n {
            crate::error::index_panic("value", i, n);
        }
        match self {
            Values::I64(v) => Scalar::I64(v[i]),
            Values::F64(v) => Scalar::F64(v[i]),
            Values::Bool(v) => Scalar::Bool(v[i]),
            Values::Str(v) => Scalar::Str(v.get(i).to_string()),
            Values::I32(v) => Scalar::I32(v[i]),
            Values::F32(v) => Scalar::F32(v[i]),
            Values::U8(v) => Scalar::U8(v[i]),
            Values::Bytes(v) => Scalar::Bytes(v.get(i).to_vec()),
        }
    }

    /// Element `i` as JSON.
    pub(crate) fn json_at(&self, i: usize) -> serde_json::Value {
        match self {
            Values::I64(v) => serde_json::Value::from(v[i]),
            Values::F64(v) => f64_to_json(v[i]),
            Values::Bool(v) => serde_json::Value::Bool(v[i]),
            Values::Str(v) => serde_json::Value::String(v.get(i).to_string()),
            Values::I32(v) => serde_json::Value::from(v[i]),
            Values::F32(v) => f64_to_json(f64::from(v[i])),
            Values::U8(v) => serde_json::Value::from(v[i]),
            Values::Bytes(v) => bytes_to_json(v.get(i)),
        }
    }

    /// Appends the elements `start..end` of `other` (same dtype) to `self`.
    pub(crate) fn extend_from(&mut self, other: &Values, start: usize, end: usize) {
        match (self, other) {
            (Values::I64(a), Values::I64(b)) => a.to_mut().extend_from_slice(&b[start..end]),
            (Values::F64(a), Values::F64(b)) => a.to_mut().extend_from_slice(&b[start..end]),
            (Values::Bool(a), Values::Bool(b)) => a.extend_from_slice(&b[start..end]),
            (Values::Str(a), Values::Str(b)) => a.extend_from(b, start, end),
            (Values::I32(a), Values::I32(b)) => a.to_mut().extend_from_slice(&b[start..end]),
            (Values::F32(a), Values::F32(b)) => a.to_mut().extend_from_slice(&b[start..end]),
            (Values::U8(a), Values::U8(b)) => a.to_mut().extend_from_slice(&b[start..end]),
            (Values::Bytes(a), Values::Bytes(b)) => a.extend_from(b, start, end),
            (a, b) => unreachable!("extend_from between {} and {}", a.dtype(), b.dtype()),
        }
    }

    /// The elements in the given ranges, in order, with every buffer sized once up front.
    pub(crate) fn gather_ranges(&self, ranges: &[(usize, usize)]) -> Values {
        match self {
            Values::Str(v) => Values::Str(v.gather_ranges(ranges)),
            Values::Bytes(v) => Values::Bytes(v.gather_ranges(ranges)),
            Values::I64(v) => Values::I64(gather_slice(v, ranges).into()),
            Values::F64(v) => Values::F64(gather_slice(v, ranges).into()),
            Values::Bool(v) => Values::Bool(gather_slice(v, ranges)),
            Values::I32(v) => Values::I32(gather_slice(v, ranges).into()),
            Values::F32(v) => Values::F32(gather_slice(v, ranges).into()),
            Values::U8(v) => Values::U8(gather_slice(v, ranges).into()),
        }
    }

    /// The buffers one after another (all of one dtype, or `int64` among `float64` when
    /// `dtype` is `float64`), every buffer sized once up front; buffers of one dtype are
    /// appended by ragged-core's [`ragged_core::append`] (in parallel tasks when large).
    pub(crate) fn concat(parts: &[&Values], dtype: DType) -> Values {
        if dtype == DType::Str {
            let columns: Vec<&StringColumn> = parts
                .iter()
                .map(|p| match p {
                    Values::Str(c) => c,
                    other => unreachable!("concat of {} into string", other.dtype()),
                })
                .collect();
            return Values::Str(StringColumn::concat(&columns));
        }
        if dtype == DType::Bytes {
            let columns: Vec<&BytesColumn> = parts
                .iter()
                .map(|p| match p {
                    Values::Bytes(c) => c,
                    other => unreachable!("concat of {} into bytes", other.dtype()),
                })
                .collect();
            return Values::Bytes(BytesColumn::concat(&columns));
        }
        if parts.iter().all(|p| p.dtype() == dtype) {
            /// The buffers of `parts`, all of the variant `$variant`, appended.
            macro_rules! append_all {
                ($variant:ident) => {{
                    let buffers: Vec<&[_]> = parts
                        .iter()
                        .map(|p| match p {
                            Values::$variant(v) => v.as_slice(),
                            other => unreachable!("concat of {} into {dtype}", other.dtype()),
                        })
                        .collect();
                    Values::$variant(ragged_core::append(&buffers).into())
                }};
            }
            return match dtype {
                DType::I64 => append_all!(I64),
                DType::F64 => append_all!(F64),
                DType::Bool => append_all!(Bool),
                DType::I32 => append_all!(I32),
                DType::F32 => append_all!(F32),
                DType::U8 => append_all!(U8),
                DType::Str | DType::Bytes => unreachable!("handled above"),
            };
        }
        let total = parts.iter().map(|p| p.len()).sum();
        let mut out = Values::with_capacity(dtype, total);
        for p in parts {
            out.extend_promoting(p, 0, p.len());
        }
        out
    }

    /// Appends the elements `start..end` of `other`, converting `int64` to `float64` when
    /// `self` is `float64` (the dtype promotion of mixed lists).
    pub(crate) fn extend_promoting(&mut self, other: &Values, start: usize, end: usize) {
        match (&mut *self, other) {
            (Values::F64(a), Values::I64(b)) => {
                a.to_mut().extend(b[start..end].iter().map(|&x| x as f64))
            }
            (a, b) => a.extend_from(b, start, end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn check(values: Values, name: &str, json: serde_json::Value) {
        assert_eq!(values.dtype().name(), name);
        let got: Vec<serde_json::Value> = (0..values.len()).map(|i| values.json_at(i)).collect();
        assert_eq!(serde_json::Value::Array(got), json);
    }

    #[test]
    fn every_dtype_has_tensorflows_name_and_json() {
        check(Values::I64(vec![-3].into()), "int64", json!([-3]));
        check(Values::F64(vec![0.25].into()), "float64", json!([0.25]));
        check(Values::Bool(vec![true]), "bool", json!([true]));
        check(Values::Str(vec!["é"].into()), "string", json!(["é"]));
        check(
            Values::I32(vec![i32::MIN].into()),
            "int32",
            json!([-2147483648]),
        );
        // a float32 widens exactly: 0.1f32 is 0.100000001490116..., as Python prints it
        check(
            Values::F32(vec![0.1, 2.5].into()),
            "float32",
            json!([0.10000000149011612, 2.5]),
        );
        check(Values::U8(vec![0, 255].into()), "uint8", json!([0, 255]));
        let bytes: BytesColumn = [b"ab".as_slice(), &[0xC3], b""].into_iter().collect();
        check(Values::Bytes(bytes), "bytes", json!(["ab", [195], ""]));
    }

    #[test]
    fn gather_and_concat_keep_the_dtype() {
        let v = Values::U8(vec![1, 2, 3].into());
        assert_eq!(
            v.gather_ranges(&[(2, 3), (0, 2)]),
            Values::U8(vec![3, 1, 2].into())
        );
        let b = Values::Bytes(vec![b"x".to_vec(), b"yz".to_vec()].into());
        assert_eq!(
            Values::concat(&[&b, &b], DType::Bytes),
            Values::Bytes(
                vec![b"x".to_vec(), b"yz".to_vec(), b"x".to_vec(), b"yz".to_vec()].into()
            )
        );
        let f = Values::F32(vec![1.5].into());
        assert_eq!(
            Values::concat(&[&f, &f], DType::F32),
            Values::F32(vec![1.5, 1.5].into())
        );
    }
}
