//! Element types and flat value buffers: `DType`, `Scalar` and `Values`.

use std::fmt;
use std::mem::MaybeUninit;

use crate::buffer::ValueBuffer;
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

/// Bytes copied as one block per short run (see [`append_runs`]; string gathers too).
pub(crate) const BLOCK_BYTES: usize = 32;

/// Appends `src[a..b]` for every run `(a, b)` of `runs` (`total` elements in all, else a
/// panic) to `out`. A run of at most a 32-byte block is copied as the whole block: the
/// elements past the run land in the room reserved for the next runs, which overwrite
/// them, or past the end, where they stay unused capacity. So the loop does not branch on
/// each run's length: a gather copies runs of a few random lengths, and that branch was
/// mispredicted on most runs (and a `memcpy` call per run cost more than the copy).
pub(crate) fn append_runs<T: Copy>(
    out: &mut Vec<T>,
    src: &[T],
    runs: &[(usize, usize)],
    total: usize,
) {
    match std::mem::size_of::<T>() {
        1 => append_runs_blocked::<T, BLOCK_BYTES>(out, src, runs, total),
        2 => append_runs_blocked::<T, { BLOCK_BYTES / 2 }>(out, src, runs, total),
        4 => append_runs_blocked::<T, { BLOCK_BYTES / 4 }>(out, src, runs, total),
        8 => append_runs_blocked::<T, { BLOCK_BYTES / 8 }>(out, src, runs, total),
        _ => append_runs_blocked::<T, 1>(out, src, runs, total),
    }
}

/// [`append_runs`] with blocks of `W` elements.
fn append_runs_blocked<T: Copy, const W: usize>(
    out: &mut Vec<T>,
    src: &[T],
    runs: &[(usize, usize)],
    total: usize,
) {
    let room = total.checked_add(W).expect("run total overflows usize");
    out.reserve_exact(room);
    let old_len = out.len();
    let spare = &mut out.spare_capacity_mut()[..room];
    let mut at = 0usize;
    for &(a, b) in runs {
        copy_run::<T, W>(spare, at, src, a, b);
        at += b - a;
    }
    assert_eq!(
        at, total,
        "the runs hold {at} elements, not the {total} announced"
    );
    // SAFETY: the runs wrote `spare[..at]` one after another (`copy_run` writes at least
    // `b - a` elements at `at` before `at` moves past them), and the assert above checked
    // that they cover exactly `total` elements; `spare` is `out`'s spare capacity, so
    // `out.len()` grows over initialised elements only.
    unsafe { out.set_len(old_len + total) };
}

/// Writes `f` of each element of `src[a..b]` to `spare[at..]`. A run of at most `W`
/// elements with `W` elements left in `src` from `a` and in `spare` from `at` writes the
/// whole block of `W`: one fixed-size copy instead of a loop whose trip count is a fresh
/// guess on every run. Callers reserve a block of room past their last run so that only
/// the end of a buffer (or of a chunk of one) falls back to the exact loop. Panics when
/// the run is out of range of `src` or `spare`.
#[inline(always)]
pub(crate) fn put_run<T: Copy, U, const W: usize>(
    spare: &mut [MaybeUninit<U>],
    at: usize,
    src: &[T],
    a: usize,
    b: usize,
    f: impl Fn(T) -> U,
) {
    let run = &src[a..b];
    match blocks::<T, U, W>(src, a, run.len(), spare, at) {
        Some((block, dst)) => {
            for (d, &x) in dst.iter_mut().zip(block) {
                d.write(f(x));
            }
        }
        None => {
            for (d, &x) in spare[at..at + run.len()].iter_mut().zip(run) {
                d.write(f(x));
            }
        }
    }
}

/// [`put_run`] without a map: the block is one `W`-element copy (a vector load and
/// store where a loop of element writes stayed a loop of byte moves).
#[inline(always)]
pub(crate) fn copy_run<T: Copy, const W: usize>(
    spare: &mut [MaybeUninit<T>],
    at: usize,
    src: &[T],
    a: usize,
    b: usize,
) {
    let run = &src[a..b];
    match blocks::<T, T, W>(src, a, run.len(), spare, at) {
        Some((block, dst)) => {
            // SAFETY: `block` and `dst` are both arrays of `W` elements (their types say
            // so; `blocks` took them with checked `get`s), `MaybeUninit<T>` has `T`'s
            // layout, and a shared and a unique borrow cannot overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(block.as_ptr(), dst.as_mut_ptr().cast::<T>(), W)
            };
        }
        None => {
            for (d, &x) in spare[at..at + run.len()].iter_mut().zip(run) {
                d.write(x);
            }
        }
    }
}

/// The `W` elements of `src` from `a` and the `W` slots of `spare` from `at`, when a run of
/// `len` elements from `a` fits in a block and both have a whole block there.
#[inline(always)]
fn blocks<'s, 'd, T, U, const W: usize>(
    src: &'s [T],
    a: usize,
    len: usize,
    spare: &'d mut [MaybeUninit<U>],
    at: usize,
) -> Option<(&'s [T; W], &'d mut [MaybeUninit<U>; W])> {
    if len > W {
        return None;
    }
    let block = src.get(a..)?.first_chunk::<W>()?;
    let dst = spare.get_mut(at..)?.first_chunk_mut::<W>()?;
    Some((block, dst))
}

/// `out.extend_from_slice(src)`, element by element when `src` is short: a `memcpy` call
/// per short run cost more than the copy.
#[inline]
pub(crate) fn extend_short<T: Copy>(out: &mut Vec<T>, src: &[T]) {
    if src.len() <= 16 {
        for &x in src {
            out.push(x);
        }
    } else {
        out.extend_from_slice(src);
    }
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

    /// `append_runs` against copying each run element by element, for every element size
    /// it blocks (1, 2, 4, 8 bytes) and one it does not (16), with runs of every length
    /// up to past a block, at every distance from the end of the source (where a block
    /// would read past it), appended after elements already in `out`.
    fn check_runs_against_model<T: Copy + PartialEq + fmt::Debug>(make: impl Fn(usize) -> T) {
        let src: Vec<T> = (0..70).map(&make).collect();
        let mut rng = crate::tf_ops::SplitMix64(11);
        let mut below = |n: usize| rng.below(n as u64) as usize;
        for _ in 0..300 {
            let runs: Vec<(usize, usize)> = (0..below(12))
                .map(|_| {
                    let a = below(src.len() + 1);
                    (a, a + below(src.len() - a + 1).min(below(40)))
                })
                .collect();
            let mut expected = vec![make(999)];
            for &(a, b) in &runs {
                expected.extend(src[a..b].iter().copied());
            }
            let mut out = vec![make(999)];
            let total = expected.len() - 1;
            append_runs(&mut out, &src, &runs, total);
            assert_eq!(out, expected, "runs {runs:?}");
        }
    }

    #[test]
    fn append_runs_matches_copying_each_run() {
        check_runs_against_model(|i| i as u8);
        check_runs_against_model(|i| i as u16);
        check_runs_against_model(|i| i as f32);
        check_runs_against_model(|i| i as i64);
        check_runs_against_model(|i| (i as u64, !(i as u64)));
    }

    /// The hostile value for `append_runs`' `set_len`: a total that is not the runs' sum
    /// must panic before the length is set, whether it is too large or too small.
    #[test]
    #[should_panic(expected = "the runs hold 3 elements, not the 4 announced")]
    fn append_runs_refuses_a_total_above_the_runs() {
        append_runs(&mut Vec::new(), &[1i64, 2, 3], &[(0, 3)], 4);
    }

    #[test]
    #[should_panic(expected = "out of range for slice")]
    fn append_runs_refuses_a_total_below_the_runs() {
        append_runs(&mut Vec::new(), &[1u8; 100], &[(0, 40), (0, 40)], 10);
    }
}
