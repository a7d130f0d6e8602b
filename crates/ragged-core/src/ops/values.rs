//! Value operations over the last axis (log-sum, bitwise and/or, normalisation, segmented
//! sums, sorting, unique sequences, hashing), reductions over any axis, and padding to dense.

use std::cmp::Ordering;
use std::ops::{Add, BitAnd, BitOr, Mul};

use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

use super::indexing::shape_from_lengths;
use super::reduce::map_sublists;
use crate::error::Error;
use crate::par::go_parallel;
use crate::ragged::Ragged;
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;

/// The floating-point element types (`f32`, `f64`) of the log-domain operations; the one
/// `Real` of the k2 crates (ragged-fsa re-exports it for its scores).
pub trait Real:
    Copy
    + PartialOrd
    + Send
    + Sync
    + std::fmt::Debug
    + Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Div<Output = Self>
    + 'static
{
    /// Negative infinity (the log of zero).
    const NEG_INFINITY: Self;
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// `ln 2`.
    const LN_2: Self;
    /// `e^self`.
    fn exp(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    /// `ln(1 + self)`, accurate when `self` is near zero.
    fn ln_1p(self) -> Self;
    /// Converts an `f32` (an arc score, say).
    fn from_f32(x: f32) -> Self;
    /// Converts to `f64`.
    fn to_f64(self) -> f64;
    /// Product.
    fn mul(self, other: Self) -> Self;
    /// `log(e^a + e^b)`, as [`log_add`].
    fn log_add(a: Self, b: Self) -> Self {
        log_add(a, b)
    }
    /// The larger of two values (`a` when they compare equal or `b` is NaN).
    fn max_of(a: Self, b: Self) -> Self {
        if b > a {
            b
        } else {
            a
        }
    }
}

macro_rules! impl_real {
    ($t:ident) => {
        impl Real for $t {
            const NEG_INFINITY: Self = $t::NEG_INFINITY;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LN_2: Self = std::$t::consts::LN_2;
            #[inline]
            fn exp(self) -> Self {
                $t::exp(self)
            }
            #[inline]
            fn ln(self) -> Self {
                $t::ln(self)
            }
            #[inline]
            fn ln_1p(self) -> Self {
                $t::ln_1p(self)
            }
            #[inline]
            fn from_f32(x: f32) -> Self {
                x as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn mul(self, other: Self) -> Self {
                self * other
            }
        }
    };
}
impl_real!(f32);
impl_real!(f64);

/// `log(e^a + e^b)` (k2's `LogAdd`): exact when either is `-inf` or both are `+inf`,
/// `ln_1p` for the small term so a tiny `e^(lo - hi)` is not lost, and a NaN in either
/// argument gives NaN.
#[inline]
pub fn log_add<T: Real>(a: T, b: T) -> T {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == T::NEG_INFINITY {
        return hi;
    }
    if lo == hi {
        // Equal values; `+inf - +inf` would be NaN below.
        return hi + T::LN_2;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// Where padding goes in [`Ragged::pad`] and comes from in [`Ragged::from_dense`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PadSide {
    /// After the values (k2's only mode).
    #[default]
    Right,
    /// Before the values.
    Left,
}

/// What fills the padding in [`Ragged::pad`] (k2's `mode` string).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PadMode {
    /// The padding value (k2's `"constant"`).
    #[default]
    Constant,
    /// The nearest value of the row, or the padding value for an empty row (k2's `"replicate"`).
    Replicate,
}

/// The unique last-axis sublists of a ragged array, as [`Ragged::unique_sequences`] returns them.
#[derive(Debug, Clone, PartialEq)]
pub struct UniqueSequences<T> {
    /// The unique sublists, same number of axes as the source.
    pub unique: Ragged<T>,
    /// How many times each unique sublist occurred.
    pub num_repeats: Vec<i32>,
    /// For each unique sublist, the index (last-but-one axis) of its first occurrence.
    pub new2old: Vec<i32>,
}

/// The result of [`Ragged::reduce_axis`]: one axis fewer than the source.
#[derive(Debug, Clone, PartialEq)]
pub enum Reduced<T> {
    /// A 2-axis source reduced to a plain vector.
    Flat(Vec<T>),
    /// A ragged result with `num_axes() - 1 >= 2` axes.
    Ragged(Ragged<T>),
}

impl<T: Copy + Send + Sync> Ragged<T> {
    /// Log of the sum of exponentials of each last-axis sublist and `initial` (k2's `LogSumPerSublist`).
    pub fn log_sum_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: Real,
    {
        self.reduce_per_sublist(initial, |acc, &x| log_add(acc, x))
    }

    /// Bitwise and of each last-axis sublist and `initial` (k2's `AndPerSublist`).
    pub fn and_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: BitAnd<Output = T>,
    {
        self.reduce_per_sublist(initial, |acc, &x| acc & x)
    }

    /// Bitwise or of each last-axis sublist and `initial` (k2's `OrPerSublist`).
    pub fn or_per_sublist(&self, initial: T) -> Vec<T>
    where
        T: BitOr<Output = T>,
    {
        self.reduce_per_sublist(initial, |acc, &x| acc | x)
    }

    /// Normalises each last-axis sublist (k2's `NormalizePerSublist`): with `use_log`, subtracts
    /// its log-sum (log-softmax); otherwise divides by its sum.
    pub fn normalize_per_sublist(&self, use_log: bool) -> Ragged<T>
    where
        T: Real,
    {
        let totals = if use_log {
            self.log_sum_per_sublist(T::NEG_INFINITY)
        } else {
            self.sum_per_sublist(T::ZERO)
        };
        let row_ids = self.row_ids(self.num_axes() - 1);
        let f = |(&v, &r): (&T, &i32)| {
            if use_log {
                v - totals[r as usize]
            } else {
                v / totals[r as usize]
            }
        };
        let values = if go_parallel(self.num_elements()) {
            self.values()
                .par_iter()
                .zip(row_ids.par_iter())
                .map(f)
                .collect()
        } else {
            self.values().iter().zip(row_ids).map(f).collect()
        };
        Ragged::from_matching_parts(self.shape().clone(), values)
    }

    /// Adds `alpha * value[i]` to every element of last-axis sublist `i` (k2's `AddPerSublist`).
    pub fn add_per_sublist(&self, value: &[T], alpha: T) -> Result<Ragged<T>, Error>
    where
        T: Add<Output = T> + Mul<Output = T>,
    {
        let n = self.tot_size(self.num_axes() - 2);
        if value.len() != n {
            return Err(Error::SizeMismatch {
                what: "one value per last-axis sublist",
                expected: n,
                got: value.len(),
            });
        }
        let row_ids = self.row_ids(self.num_axes() - 1);
        let f = |(&v, &r): (&T, &i32)| v + alpha * value[r as usize];
        let values = if go_parallel(self.num_elements()) {
            self.values()
                .par_iter()
                .zip(row_ids.par_iter())
                .map(f)
                .collect()
        } else {
            self.values().iter().zip(row_ids).map(f).collect()
        };
        Ok(Ragged::from_matching_parts(self.shape().clone(), values))
    }

    /// Exclusive prefix sums within each last-axis sublist (k2's `SegmentedExclusiveSum`):
    /// each sublist starts at `zero`, and its last value does not contribute.
    pub fn segmented_exclusive_sum(&self, zero: T) -> Vec<T>
    where
        T: Add<Output = T>,
    {
        self.segmented_scan(zero, false)
    }

    /// Inclusive prefix sums within each last-axis sublist.
    pub fn segmented_inclusive_sum(&self, zero: T) -> Vec<T>
    where
        T: Add<Output = T>,
    {
        self.segmented_scan(zero, true)
    }

    fn segmented_scan(&self, zero: T, inclusive: bool) -> Vec<T>
    where
        T: Add<Output = T>,
    {
        let pieces = map_sublists(
            self.row_splits(self.num_axes() - 1),
            self.values(),
            |xs, _| {
                let mut acc = zero;
                xs.iter()
                    .map(|&x| {
                        let before = acc;
                        acc = acc + x;
                        if inclusive {
                            acc
                        } else {
                            before
                        }
                    })
                    .collect::<Vec<T>>()
            },
        );
        pieces.concat()
    }

    /// Reduces over axis `axis` (the `axis` argument of Awkward's `ak.sum` and TF's
    /// `reduce_sum`): items that share every coordinate except the one on `axis` are combined,
    /// in increasing order of that coordinate, starting from `initial`. Lists of different
    /// lengths are aligned at the left, so the result's lists have the longest length among
    /// the lists they combine. `axis == num_axes() - 1` is the per-sublist reduction.
    pub fn reduce_axis(
        &self,
        axis: usize,
        initial: T,
        op: impl Fn(T, T) -> T + Sync + Send,
    ) -> Result<Reduced<T>, Error> {
        let n_axes = self.num_axes();
        if axis >= n_axes {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: n_axes,
            });
        }
        // Nodes of the result on the current level, each a run in `sources` of source items.
        let (mut node_splits, mut sources): (Vec<i32>, Vec<i32>) = if axis == 0 {
            (
                vec![0, self.dim0() as i32],
                (0..self.dim0() as i32).collect(),
            )
        } else {
            let s = self.row_splits(axis);
            (s.to_vec(), (0..s[s.len() - 1]).collect())
        };
        let mut layers: Vec<RowPartition> = if axis == 0 {
            Vec::new()
        } else {
            self.shape().layers()[..axis - 1].to_vec()
        };
        let mut first_level = axis == 0;
        for level in axis..n_axes - 1 {
            let splits = self.row_splits(level + 1);
            let n_nodes = node_splits.len() - 1;
            let mut child_lengths = Vec::with_capacity(n_nodes);
            let mut new_node_splits = vec![0i32];
            let mut new_sources = Vec::new();
            for node in 0..n_nodes {
                let srcs = &sources[node_splits[node] as usize..node_splits[node + 1] as usize];
                let width = srcs
                    .iter()
                    .map(|&s| splits[s as usize + 1] - splits[s as usize])
                    .max()
                    .unwrap_or(0);
                child_lengths.push(width);
                for c in 0..width {
                    for &s in srcs {
                        let (b, e) = (splits[s as usize], splits[s as usize + 1]);
                        if b + c < e {
                            new_sources.push(b + c);
                        }
                    }
                    new_node_splits.push(new_sources.len() as i32);
                }
            }
            if !first_level {
                layers.push(RowPartition::from_row_lengths(&child_lengths)?);
            }
            first_level = false;
            node_splits = new_node_splits;
            sources = new_sources;
        }
        let values = self.values();
        let out: Vec<T> = node_splits
            .windows(2)
            .map(|w| {
                sources[w[0] as usize..w[1] as usize]
                    .iter()
                    .fold(initial, |acc, &e| op(acc, values[e as usize]))
            })
            .collect();
        if layers.is_empty() {
            return Ok(Reduced::Flat(out));
        }
        Ok(Reduced::Ragged(Ragged::from_matching_parts(
            RaggedShape::from_matching_layers(layers),
            out,
        )))
    }

    /// Sum over axis `axis`; see [`Ragged::reduce_axis`].
    pub fn sum_axis(&self, axis: usize, zero: T) -> Result<Reduced<T>, Error>
    where
        T: Add<Output = T>,
    {
        self.reduce_axis(axis, zero, |a, b| a + b)
    }

    /// Maximum over axis `axis` (and `initial`); see [`Ragged::reduce_axis`].
    pub fn max_axis(&self, axis: usize, initial: T) -> Result<Reduced<T>, Error>
    where
        T: PartialOrd,
    {
        self.reduce_axis(axis, initial, |a, b| if b > a { b } else { a })
    }

    /// Minimum over axis `axis` (and `initial`); see [`Ragged::reduce_axis`].
    pub fn min_axis(&self, axis: usize, initial: T) -> Result<Reduced<T>, Error>
    where
        T: PartialOrd,
    {
        self.reduce_axis(axis, initial, |a, b| if b < a { b } else { a })
    }

    /// A dense `dim0 x max_row_length` array of a 2-axis array (k2's `PadRagged`, with a
    /// side added): rows are padded on `side` with `padding_value` (`Constant`) or with
    /// the row's nearest value (`Replicate`; empty rows take `padding_value`).
    pub fn pad(&self, mode: PadMode, side: PadSide, padding_value: T) -> Result<Array2<T>, Error> {
        if self.num_axes() != 2 {
            return Err(Error::SizeMismatch {
                what: "num_axes for pad",
                expected: 2,
                got: self.num_axes(),
            });
        }
        let width = self.shape().max_size(1);
        let mut out = Array2::from_elem((self.dim0(), width), padding_value);
        for (i, w) in self.row_splits(1).windows(2).enumerate() {
            let row = &self.values()[w[0] as usize..w[1] as usize];
            let pad = width - row.len();
            let fill = match (mode, side) {
                (PadMode::Constant, _) => padding_value,
                (PadMode::Replicate, PadSide::Right) => {
                    row.last().copied().unwrap_or(padding_value)
                }
                (PadMode::Replicate, PadSide::Left) => {
                    row.first().copied().unwrap_or(padding_value)
                }
            };
            let start = if side == PadSide::Left { pad } else { 0 };
            for (k, &v) in row.iter().enumerate() {
                out[[i, start + k]] = v;
            }
            let pad_range = if side == PadSide::Left {
                0..pad
            } else {
                row.len()..width
            };
            for k in pad_range {
                out[[i, k]] = fill;
            }
        }
        Ok(out)
    }

    /// The inverse of [`Ragged::pad`]: row `i` keeps `lengths[i]` values of dense row `i`,
    /// taken from the left (`PadSide::Right` padding) or from the right (`PadSide::Left`).
    pub fn from_dense(
        dense: ArrayView2<'_, T>,
        lengths: &[i32],
        side: PadSide,
    ) -> Result<Ragged<T>, Error> {
        let (rows, cols) = dense.dim();
        if lengths.len() != rows {
            return Err(Error::SizeMismatch {
                what: "one length per dense row",
                expected: rows,
                got: lengths.len(),
            });
        }
        if let Some(row) = lengths.iter().position(|&l| l < 0 || l as usize > cols) {
            return Err(Error::IndexOutOfRange {
                what: "row length vs dense width",
                position: row,
                index: lengths[row] as i64,
                size: cols,
            });
        }
        let shape = shape_from_lengths(lengths)?;
        let mut values = Vec::with_capacity(shape.num_elements());
        for (i, &l) in lengths.iter().enumerate() {
            let start = if side == PadSide::Left {
                cols - l as usize
            } else {
                0
            };
            values.extend((start..start + l as usize).map(|k| dense[[i, k]]));
        }
        Ok(Ragged::from_matching_parts(shape, values))
    }
}

impl<T: Clone + Send + Sync> Ragged<T> {
    /// Sorts every last-axis sublist in place with `compare` (stable), returning the new2old
    /// order of the values (k2's `SortSublists` with a comparison).
    pub fn sort_sublists_by(
        &mut self,
        compare: impl Fn(&T, &T) -> Ordering + Sync + Send,
    ) -> Vec<i32> {
        let values = self.values();
        let order: Vec<Vec<i32>> =
            map_sublists(self.row_splits(self.num_axes() - 1), values, |xs, start| {
                let mut idx: Vec<i32> = (start as i32..(start + xs.len()) as i32).collect();
                idx.sort_by(|&a, &b| compare(&values[a as usize], &values[b as usize]));
                idx
            });
        let order = order.concat();
        let sorted = super::indexing::gather_values(self.values(), &order);
        self.values_mut().clone_from_slice(&sorted);
        order
    }

    /// Sorts every last-axis sublist ascending in place (k2's `SortSublists` with `LessThan`).
    /// Values not comparable with themselves (NaN) sort last, equal to each other, as in
    /// numpy: a total order, which the standard sort needs (it may panic on one that is not).
    pub fn sort_sublists(&mut self) -> Vec<i32>
    where
        T: PartialOrd,
    {
        self.sort_sublists_by(|a, b| {
            a.partial_cmp(b).unwrap_or_else(|| {
                let unordered = |x: &T| x.partial_cmp(x).is_none();
                unordered(a).cmp(&unordered(b))
            })
        })
    }

    /// The distinct last-axis sublists (k2's `UniqueSequences`), compared exactly (k2 compares
    /// hashes and may merge colliding lists; we never do). With 2 axes the whole array is one
    /// group; with more, each item of axis `num_axes() - 3` is a group of its own. Within a
    /// group the unique sublists come in increasing lexicographic order.
    #[allow(
        clippy::missing_panics_doc,
        reason = "`new2old` is read only after an index was pushed to it"
    )]
    pub fn unique_sequences(&self) -> Result<UniqueSequences<T>, Error>
    where
        T: Ord,
    {
        let n_axes = self.num_axes();
        let last = self.row_splits(n_axes - 1);
        let values = self.values();
        let n_lists = last.len() - 1;
        // Groups of lists: ranges on axis n_axes - 2.
        let group_splits: Vec<i32> = if n_axes == 2 {
            vec![0, n_lists as i32]
        } else {
            self.row_splits(n_axes - 2).to_vec()
        };
        let list = |i: i32| &values[last[i as usize] as usize..last[i as usize + 1] as usize];
        let mut new2old = Vec::new();
        let mut num_repeats = Vec::new();
        let mut group_lengths = Vec::with_capacity(group_splits.len() - 1);
        for g in group_splits.windows(2) {
            let mut ids: Vec<i32> = (g[0]..g[1]).collect();
            ids.sort_by(|&a, &b| list(a).cmp(list(b)).then(a.cmp(&b)));
            let before = new2old.len();
            for &i in &ids {
                if new2old.len() > before && list(*new2old.last().unwrap()) == list(i) {
                    *num_repeats.last_mut().unwrap() += 1;
                } else {
                    new2old.push(i);
                    num_repeats.push(1);
                }
            }
            group_lengths.push((new2old.len() - before) as i32);
        }
        let mut layers: Vec<RowPartition> =
            self.shape().layers()[..n_axes.saturating_sub(3)].to_vec();
        let lengths: Vec<i32> = new2old
            .iter()
            .map(|&i| last[i as usize + 1] - last[i as usize])
            .collect();
        if n_axes > 2 {
            layers.push(RowPartition::from_row_lengths(&group_lengths)?);
        }
        layers.push(RowPartition::from_row_lengths(&lengths)?);
        let mut out = Vec::new();
        for &i in &new2old {
            out.extend_from_slice(list(i));
        }
        Ok(UniqueSequences {
            unique: Ragged::from_matching_parts(RaggedShape::from_matching_layers(layers), out),
            num_repeats,
            new2old,
        })
    }
}

impl<T: std::hash::Hash + Sync> Ragged<T> {
    /// A 64-bit hash of each last-axis sublist (k2's `ComputeHash`); equal lists hash equal.
    /// The hash is deterministic (FNV-1a over the values' `Hash` output and the length).
    pub fn compute_hash(&self) -> Vec<u64> {
        struct Fnv(u64);
        impl std::hash::Hasher for Fnv {
            fn finish(&self) -> u64 {
                self.0
            }
            fn write(&mut self, bytes: &[u8]) {
                for &b in bytes {
                    self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
        map_sublists(
            self.row_splits(self.num_axes() - 1),
            self.values(),
            |xs, _| {
                use std::hash::{Hash, Hasher};
                let mut h = Fnv(0xcbf2_9ce4_8422_2325);
                xs.len().hash(&mut h);
                for x in xs {
                    x.hash(&mut h);
                }
                h.finish()
            },
        )
    }
}
