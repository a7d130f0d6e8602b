//! Element types and flat value buffers: `DType`, `Scalar` and `Values`.

use std::fmt;

use crate::strings::StringColumn;

/// The element type of a leaf field (TensorFlow's `dtype`, narrowed to what JSON carries).
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
}

impl DType {
    /// TensorFlow's name for the dtype (`int64`, `float64`, `bool`, `string`).
    pub fn name(self) -> &'static str {
        match self {
            DType::I64 => "int64",
            DType::F64 => "float64",
            DType::Bool => "bool",
            DType::Str => "string",
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
}

impl Scalar {
    /// The element's dtype.
    pub fn dtype(&self) -> DType {
        match self {
            Scalar::I64(_) => DType::I64,
            Scalar::F64(_) => DType::F64,
            Scalar::Bool(_) => DType::Bool,
            Scalar::Str(_) => DType::Str,
        }
    }

    /// The element as a JSON value.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Scalar::I64(v) => serde_json::Value::from(*v),
            Scalar::F64(v) => f64_to_json(*v),
            Scalar::Bool(v) => serde_json::Value::Bool(*v),
            Scalar::Str(v) => serde_json::Value::String(v.clone()),
        }
    }
}

/// A float as JSON; non-finite floats (which JSON cannot hold) become `null`.
pub(crate) fn f64_to_json(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null)
}

/// A flat buffer of elements of one dtype: the `flat_values` of a leaf field.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// `int64` elements.
    I64(Vec<i64>),
    /// `float64` elements.
    F64(Vec<f64>),
    /// `bool` elements.
    Bool(Vec<bool>),
    /// `string` elements, Arrow-style: one byte buffer plus offsets.
    Str(StringColumn),
}

impl Values {
    /// An empty buffer of the given dtype.
    pub fn empty(dtype: DType) -> Values {
        Values::with_capacity(dtype, 0)
    }

    /// An empty buffer of the given dtype with room for `n` elements.
    pub fn with_capacity(dtype: DType, n: usize) -> Values {
        match dtype {
            DType::I64 => Values::I64(Vec::with_capacity(n)),
            DType::F64 => Values::F64(Vec::with_capacity(n)),
            DType::Bool => Values::Bool(Vec::with_capacity(n)),
            DType::Str => Values::Str(StringColumn::with_capacity(n, 0)),
        }
    }

    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        match self {
            Values::I64(_) => DType::I64,
            Values::F64(_) => DType::F64,
            Values::Bool(_) => DType::Bool,
            Values::Str(_) => DType::Str,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Values::I64(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str(v) => v.len(),
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
        }
    }

    /// Element `i` as JSON.
    pub(crate) fn json_at(&self, i: usize) -> serde_json::Value {
        match self {
            Values::I64(v) => serde_json::Value::from(v[i]),
            Values::F64(v) => f64_to_json(v[i]),
            Values::Bool(v) => serde_json::Value::Bool(v[i]),
            Values::Str(v) => serde_json::Value::String(v.get(i).to_string()),
        }
    }

    /// Appends the elements `start..end` of `other` (same dtype) to `self`.
    pub(crate) fn extend_from(&mut self, other: &Values, start: usize, end: usize) {
        match (self, other) {
            (Values::I64(a), Values::I64(b)) => a.extend_from_slice(&b[start..end]),
            (Values::F64(a), Values::F64(b)) => a.extend_from_slice(&b[start..end]),
            (Values::Bool(a), Values::Bool(b)) => a.extend_from_slice(&b[start..end]),
            (Values::Str(a), Values::Str(b)) => a.extend_from(b, start, end),
            (a, b) => unreachable!("extend_from between {} and {}", a.dtype(), b.dtype()),
        }
    }

    /// The elements in the given ranges, in order, with every buffer sized once up front.
    pub(crate) fn gather_ranges(&self, ranges: &[(usize, usize)]) -> Values {
        match self {
            Values::Str(v) => Values::Str(v.gather_ranges(ranges)),
            _ => {
                let total = ranges.iter().map(|(a, b)| b - a).sum();
                let mut out = Values::with_capacity(self.dtype(), total);
                for &(a, b) in ranges {
                    out.extend_from(self, a, b);
                }
                out
            }
        }
    }

    /// The buffers one after another (all of one dtype, or `int64` among `float64` when
    /// `dtype` is `float64`), every buffer sized once up front.
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
            (Values::F64(a), Values::I64(b)) => a.extend(b[start..end].iter().map(|&x| x as f64)),
            (a, b) => a.extend_from(b, start, end),
        }
    }
}
