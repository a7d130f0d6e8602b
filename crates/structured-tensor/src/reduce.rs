//! Ragged reductions over the innermost dimension (TensorFlow's `tf.reduce_sum(rt,
//! axis=-1)` and friends), skipping nulls as pandas and Arrow compute do.

use crate::array::Array;
use crate::error::Error;
use crate::validity::Validity;
use crate::values::{DType, Values};

/// A reduction of each innermost row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reduction {
    /// The sum of the valid values (0 for a row without any): `int64` for integer and
    /// bool inputs, `float64` for float ones.
    Sum,
    /// The mean of the valid values, `float64`; null for a row without any.
    Mean,
    /// The least valid value (`float64` or `int64`); null for a row without any.
    Min,
    /// The greatest valid value (`float64` or `int64`); null for a row without any.
    Max,
    /// The number of valid values, `int64`.
    Count,
}

/// A numeric element widened for a reduction.
#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

fn element(values: &Values, i: usize) -> Option<Num> {
    Some(match values {
        Values::I64(v) => Num::I(v[i]),
        Values::I32(v) => Num::I(i64::from(v[i])),
        Values::U8(v) => Num::I(i64::from(v[i])),
        Values::Bool(v) => Num::I(i64::from(v[i])),
        Values::F64(v) => Num::F(v[i]),
        Values::F32(v) => Num::F(f64::from(v[i])),
        Values::Str(_) | Values::Bytes(_) => return None,
    })
}

impl Array {
    /// Reduces the innermost dimension of an array of rank >= 2 (one result per innermost
    /// row, the outer dimensions kept; TensorFlow's `reduce_*(x, axis=-1)`), skipping
    /// nulls: `Sum` and `Count` of a row without valid values are 0, `Mean`, `Min` and
    /// `Max` null (the result is then nullable). Strings and bytes, and rank < 2, are
    /// errors. NaN propagates through `Sum` and `Mean` and is skipped by `Min` and `Max`
    /// only as `f64::min`/`f64::max` skip it.
    pub fn reduce_innermost(&self, op: Reduction) -> Result<Array, Error> {
        if self.rank() < 2 {
            return Err(Error::RankTooLow {
                shape: self.shape(),
            });
        }
        let values = self.values();
        let float = matches!(values.dtype(), DType::F64 | DType::F32);
        if matches!(values.dtype(), DType::Str | DType::Bytes) {
            return Err(Error::UnsupportedDType {
                dtype: values.dtype(),
                op: "reduce_innermost",
            });
        }
        let inner = self.row_partitions().last().expect("rank >= 2");
        let splits = inner.row_splits();
        let n = inner.nrows();
        let float_out = match op {
            Reduction::Count => false,
            Reduction::Mean => true,
            _ => float,
        };
        let mut valid_out = Vec::with_capacity(n);
        let mut ints: Vec<i64> = Vec::new();
        let mut floats: Vec<f64> = Vec::new();
        for row in 0..n {
            let (a, b) = (splits[row] as usize, splits[row + 1] as usize);
            let mut count = 0i64;
            let mut acc: Option<Num> = None;
            for i in a..b {
                if !self.is_valid(i) {
                    continue;
                }
                let x = element(values, i).expect("numeric");
                count += 1;
                acc = Some(match (acc, x) {
                    (None, x) => x,
                    (Some(Num::I(s)), Num::I(x)) => Num::I(match op {
                        Reduction::Min => s.min(x),
                        Reduction::Max => s.max(x),
                        _ => s.wrapping_add(x),
                    }),
                    (Some(Num::F(s)), Num::F(x)) => Num::F(match op {
                        Reduction::Min => s.min(x),
                        Reduction::Max => s.max(x),
                        _ => s + x,
                    }),
                    (Some(s), _) => s,
                });
            }
            let (value, valid) = match (op, acc) {
                (Reduction::Count, _) => (Num::I(count), true),
                (Reduction::Sum, None) => (Num::I(0), true),
                (Reduction::Sum, Some(s)) => (s, true),
                (Reduction::Mean, Some(Num::I(s))) => (Num::F(s as f64 / count as f64), true),
                (Reduction::Mean, Some(Num::F(s))) => (Num::F(s / count as f64), true),
                (_, None) => (Num::I(0), false),
                (_, Some(s)) => (s, true),
            };
            valid_out.push(valid);
            match (float_out, value) {
                (true, Num::F(x)) => floats.push(x),
                (true, Num::I(x)) => floats.push(x as f64),
                (false, Num::I(x)) => ints.push(x),
                (false, Num::F(x)) => ints.push(x as i64),
            }
        }
        let out_values = if float_out {
            Values::F64(floats.into())
        } else {
            Values::I64(ints.into())
        };
        let parts = &self.row_partitions()[..self.rank() - 2];
        let out = if parts.is_empty() {
            Array::from_values(out_values)
        } else {
            Array::from_partitions(self.nrows().unwrap_or(0), parts.to_vec(), out_values)?
        };
        let out = out.with_shape_dtype(self.shape_dtype())?;
        if valid_out.iter().all(|&v| v) && !self.is_nullable() {
            return Ok(out);
        }
        out.with_validity(Some(Validity::from_bools(&valid_out)))
    }
}
