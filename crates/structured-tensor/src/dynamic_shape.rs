//! `DynamicRaggedShape`: TensorFlow's `tf.experimental.DynamicRaggedShape`, the shape of a
//! dense or ragged array (and of a struct array): row partitions for the outer dimensions,
//! then a dense `inner_shape`; `from_lengths`, dimension queries, slicing, changing the
//! number of row partitions, and broadcasting (`broadcast_dynamic_shape`, `broadcast_to`).

use std::fmt;

use crate::array::Array;
use crate::error::Error;
use crate::partition::{self, ranges_of, RowPartition};
use crate::structured::StructuredTensor;
use crate::values::DType;

/// The length of one dimension, as `from_lengths` takes it and `static_lengths` reports
/// it: TensorFlow's `int` (every row has that length) or tuple of ints (one length per row
/// of the dimension before).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Length {
    /// Every row has this length (a dense dimension; for dimension 0, the row count).
    Uniform(usize),
    /// The length of each row.
    Ragged(Vec<usize>),
}

impl From<usize> for Length {
    fn from(n: usize) -> Length {
        Length::Uniform(n)
    }
}

impl From<Vec<usize>> for Length {
    fn from(lengths: Vec<usize>) -> Length {
        Length::Ragged(lengths)
    }
}

impl From<&[usize]> for Length {
    fn from(lengths: &[usize]) -> Length {
        Length::Ragged(lengths.to_vec())
    }
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Length::Uniform(n) => write!(f, "{n}"),
            Length::Ragged(lengths) => {
                f.write_str("(")?;
                for (i, l) in lengths.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{l}")?;
                }
                if lengths.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
        }
    }
}

fn argument(problem: impl Into<String>) -> Error {
    Error::ShapeArgument {
        problem: problem.into(),
    }
}

/// Checks that `dtype` is one a shape can have.
pub(crate) fn check_shape_dtype(dtype: DType) -> Result<(), Error> {
    match dtype {
        DType::I32 | DType::I64 => Ok(()),
        other => Err(Error::ShapeDType {
            problem: format!("dtype must be int32 or int64, got {other}"),
        }),
    }
}

/// The shape of a dense or ragged array (TensorFlow's `DynamicRaggedShape`): `row_partitions`
/// for the outer ragged (or uniform) dimensions, then `inner_shape`, the dense shape of the
/// flat values (`inner_shape[0]` is the last partition's element count). With no partition
/// the shape is dense and `inner_shape` is all of it.
///
/// A dimension is uniform when every row of it has one length (as everywhere in this crate;
/// TensorFlow also counts a partition built from equal row lengths as ragged). `dtype` is
/// the row partitions' integer type, `int32` or `int64` (see `with_dtype`).
///
/// **Invariant:** consecutive partitions chain (`nvals` of one is `nrows` of the next), the
/// last one's `nvals` is `inner_shape[0]`, and the element count fits in `usize`.
#[derive(Clone)]
pub struct DynamicRaggedShape {
    row_partitions: Vec<RowPartition>,
    inner_shape: Vec<usize>,
    dtype: DType,
}

impl DynamicRaggedShape {
    /// TensorFlow's constructor: `row_partitions` (possibly none) over a dense
    /// `inner_shape`, checked (`RowPartitions in DynamicRaggedShape do not align between 0
    /// and 1`, `Last row partition does not match inner_shape.`). The dtype is `int32`.
    ///
    /// # Panics
    ///
    /// Where [`DynamicRaggedShape::try_new`] returns an error, with its message.
    #[track_caller]
    pub fn new(row_partitions: Vec<RowPartition>, inner_shape: Vec<usize>) -> Self {
        match Self::try_new(row_partitions, inner_shape) {
            Ok(shape) => shape,
            Err(err) => panic!("DynamicRaggedShape::new: {err}"),
        }
    }

    /// TensorFlow's constructor, checked: the rules of [`DynamicRaggedShape::new`], each
    /// broken one an error.
    pub fn try_new(
        row_partitions: Vec<RowPartition>,
        inner_shape: Vec<usize>,
    ) -> Result<DynamicRaggedShape, Error> {
        for axis in 1..row_partitions.len() {
            let expected = row_partitions[axis - 1].nvals();
            let got = row_partitions[axis].nrows();
            if expected != got {
                return Err(Error::ShapeMisaligned {
                    axis,
                    expected,
                    got,
                });
            }
        }
        if let Some(last) = row_partitions.last() {
            if inner_shape.first() != Some(&last.nvals()) {
                return Err(Error::ShapeInnerMismatch {
                    nvals: last.nvals(),
                    inner_shape,
                });
            }
        }
        inner_shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| {
                argument(format!("inner_shape {inner_shape:?} has too many elements"))
            })?;
        Ok(DynamicRaggedShape {
            row_partitions,
            inner_shape,
            dtype: DType::I32,
        })
    }

    /// TensorFlow's `from_lengths`: one [`Length`] per dimension (`[2, (3, 2), 7]` is
    /// `[Uniform(2), Ragged(vec![3, 2]), Uniform(7)]`), with `num_row_partitions` row
    /// partitions (`None`: the fewest that cover every ragged dimension).
    ///
    /// Errors (TensorFlow's): row lengths whose count is not the size of the dimension
    /// before (`Shape not consistent.`), `num_row_partitions` not below the rank, or
    /// positive for a scalar, or below a ragged dimension.
    pub fn from_lengths(
        lengths: &[Length],
        num_row_partitions: Option<usize>,
    ) -> Result<DynamicRaggedShape, Error> {
        let last_ragged = lengths.iter().rposition(|l| matches!(l, Length::Ragged(_)));
        let num_row_partitions = num_row_partitions.unwrap_or(last_ragged.unwrap_or(0));
        if lengths.is_empty() {
            if num_row_partitions > 0 {
                return Err(argument("num_row_partitions==0 for a scalar shape"));
            }
            return DynamicRaggedShape::try_new(Vec::new(), Vec::new());
        }
        if num_row_partitions >= lengths.len() {
            return Err(argument(format!(
                "num_row_partitions should be less than `len(lengths)` if shape is not scalar \
                 (num_row_partitions={num_row_partitions}, {} lengths)",
                lengths.len()
            )));
        }
        let Length::Uniform(nrows) = lengths[0] else {
            return Err(argument(format!(
                "the first length is the number of rows and must be an int, got {}",
                lengths[0]
            )));
        };
        if let Some(k) = last_ragged.filter(|&k| k > num_row_partitions) {
            return Err(argument(format!(
                "dimension {k} is ragged, so num_row_partitions must be at least {k}, got \
                 {num_row_partitions}"
            )));
        }
        let mut size = nrows;
        let mut row_partitions = Vec::with_capacity(num_row_partitions);
        for length in &lengths[1..=num_row_partitions] {
            let p = match length {
                Length::Uniform(len) => partition::uniform(*len, size)?,
                Length::Ragged(row_lengths) => {
                    if row_lengths.len() != size {
                        return Err(argument(format!(
                            "Shape not consistent. ({} row lengths for a dimension of size \
                             {size})",
                            row_lengths.len()
                        )));
                    }
                    partition::from_lengths(row_lengths.iter().copied())?
                }
            };
            size = p.nvals();
            row_partitions.push(p);
        }
        let mut inner_shape = vec![size];
        inner_shape.extend(lengths[num_row_partitions + 1..].iter().map(|l| match l {
            Length::Uniform(n) => *n,
            Length::Ragged(_) => unreachable!("ragged dimensions are inside the partitions"),
        }));
        DynamicRaggedShape::try_new(row_partitions, inner_shape)
    }

    /// TensorFlow's `from_row_partitions`: a non-empty list of partitions, `inner_shape`
    /// the last one's element count.
    pub fn from_row_partitions(
        row_partitions: Vec<RowPartition>,
    ) -> Result<DynamicRaggedShape, Error> {
        let Some(last) = row_partitions.last() else {
            return Err(argument("row_partitions cannot be empty"));
        };
        let inner = vec![last.nvals()];
        DynamicRaggedShape::try_new(row_partitions, inner)
    }

    /// The shape of a rank-`rank` value with `nrows` rows and the partitions of its
    /// dimensions (rank - 1 of them, uniform ones included): partitions down to the last
    /// ragged one, the rest dense.
    pub(crate) fn from_dims(
        rank: usize,
        nrows: usize,
        partitions: &[RowPartition],
        dtype: DType,
    ) -> DynamicRaggedShape {
        let (row_partitions, inner_shape) = if rank == 0 {
            (Vec::new(), Vec::new())
        } else {
            let ragged = partitions
                .iter()
                .rposition(|p| p.uniform_row_length().is_none())
                .map_or(0, |k| k + 1);
            let first = match ragged {
                0 => nrows,
                k => partitions[k - 1].nvals(),
            };
            let mut inner = vec![first];
            inner.extend(partitions[ragged..].iter().map(|p| {
                p.uniform_row_length()
                    .expect("partitions past the last ragged one are uniform")
            }));
            (partitions[..ragged].to_vec(), inner)
        };
        DynamicRaggedShape {
            row_partitions,
            inner_shape,
            dtype,
        }
    }

    /// The row partitions (TensorFlow's `row_partitions`).
    pub fn row_partitions(&self) -> &[RowPartition] {
        &self.row_partitions
    }

    /// The number of row partitions.
    pub fn num_row_partitions(&self) -> usize {
        self.row_partitions.len()
    }

    /// The dense shape of the flat values (the whole shape when there is no partition).
    pub fn inner_shape(&self) -> &[usize] {
        &self.inner_shape
    }

    /// The rank of `inner_shape`.
    pub fn inner_rank(&self) -> usize {
        self.inner_shape.len()
    }

    /// The number of dimensions: `num_row_partitions() + inner_rank()`.
    pub fn rank(&self) -> usize {
        self.row_partitions.len() + self.inner_shape.len()
    }

    /// The row partitions' integer type (`int32` or `int64`).
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The same shape with another row partition dtype (TensorFlow's `with_dtype`; only
    /// `int32` and `int64`).
    pub fn with_dtype(&self, dtype: DType) -> Result<DynamicRaggedShape, Error> {
        check_shape_dtype(dtype)?;
        let mut out = self.clone();
        out.dtype = dtype;
        Ok(out)
    }

    /// The size of dimension 0 (`None` at rank 0).
    pub fn nrows(&self) -> Option<usize> {
        match self.row_partitions.first() {
            Some(p) => Some(p.nrows()),
            None => self.inner_shape.first().copied(),
        }
    }

    /// The length of every dimension (TensorFlow's `static_lengths()`): uniform ones as
    /// their size, ragged ones as their row lengths.
    pub fn static_lengths(&self) -> Vec<Length> {
        if self.row_partitions.is_empty() {
            return self
                .inner_shape
                .iter()
                .map(|&n| Length::Uniform(n))
                .collect();
        }
        let mut out = Vec::with_capacity(self.rank());
        out.push(Length::Uniform(self.row_partitions[0].nrows()));
        for p in &self.row_partitions {
            out.push(match p.uniform_row_length() {
                Some(len) => Length::Uniform(len),
                None => Length::Ragged(partition::lengths(p).collect()),
            });
        }
        out.extend(self.inner_shape[1..].iter().map(|&n| Length::Uniform(n)));
        out
    }

    /// The static shape (TensorFlow's `TensorShape` of it): `None` for ragged dimensions.
    pub fn shape(&self) -> Vec<Option<usize>> {
        self.static_lengths()
            .into_iter()
            .map(|l| match l {
                Length::Uniform(n) => Some(n),
                Length::Ragged(_) => None,
            })
            .collect()
    }

    /// True when dimension `axis` is uniform (TensorFlow's `is_uniform`; errors:
    /// `Negative axis values are not supported`, `Expected axis=4 < rank=4`).
    pub fn is_uniform(&self, axis: isize) -> Result<bool, Error> {
        if axis < 0 {
            return Err(argument(format!(
                "Negative axis values are not supported (axis={axis})"
            )));
        }
        let axis = axis as usize;
        if axis >= self.rank() {
            return Err(argument(format!(
                "Expected axis={axis} < rank={}",
                self.rank()
            )));
        }
        Ok(axis == 0
            || axis > self.row_partitions.len()
            || self.row_partitions[axis - 1].uniform_row_length().is_some())
    }

    /// The size of a uniform dimension (TensorFlow's `shape[index]`; a negative index
    /// counts from the rank). Errors: `Index is too big: 9>=4`, `Index must be
    /// non-negative: -20`, `Index 1 is not uniform`.
    pub fn dimension(&self, index: isize) -> Result<usize, Error> {
        let rank = self.rank();
        let index = if index < 0 {
            index + rank as isize
        } else {
            index
        };
        if index < 0 || index as usize >= rank {
            return Err(Error::ShapeIndex { index, rank });
        }
        let index = index as usize;
        let nrp = self.row_partitions.len();
        if index == 0 {
            return Ok(self.nrows().expect("rank >= 1"));
        }
        if index > nrp {
            return Ok(self.inner_shape[index - nrp]);
        }
        self.row_partitions[index - 1]
            .uniform_row_length()
            .ok_or(Error::ShapeNotUniform { index })
    }

    /// The number of elements (the product of `inner_shape`).
    pub fn num_elements(&self) -> usize {
        self.inner_shape.iter().product()
    }

    /// The number of positions of dimensions `0..=axis` together (TensorFlow's
    /// `_num_slices_in_dimension`; a negative axis counts from the rank).
    pub fn num_slices_in_dimension(&self, axis: isize) -> Result<usize, Error> {
        let rank = self.rank();
        let index = if axis < 0 { axis + rank as isize } else { axis };
        if index < 0 || index as usize >= rank {
            return Err(Error::ShapeIndex { index, rank });
        }
        let axis = index as usize;
        let nrp = self.row_partitions.len();
        if axis == 0 {
            return Ok(self.nrows().expect("rank >= 1"));
        }
        if axis <= nrp {
            return Ok(self.row_partitions[axis - 1].nvals());
        }
        Ok(self.inner_shape[..axis - nrp + 1].iter().product())
    }

    /// The same shape with `num_row_partitions` partitions (TensorFlow's
    /// `_with_num_row_partitions`): more turn dense dimensions into uniform partitions,
    /// fewer fold uniform partitions into the inner shape. Errors: `num_row_partitions
    /// must be less than rank`, `Cannot get an inner shape over a ragged dimension`.
    pub fn with_num_row_partitions(
        &self,
        num_row_partitions: usize,
    ) -> Result<DynamicRaggedShape, Error> {
        let nrp = self.row_partitions.len();
        if num_row_partitions == nrp {
            return Ok(self.clone());
        }
        let rank = self.rank();
        if num_row_partitions >= rank {
            return Err(argument(format!(
                "num_row_partitions must be less than rank (num_row_partitions=\
                 {num_row_partitions}, rank={rank})"
            )));
        }
        let mut out = if num_row_partitions > nrp {
            let more = num_row_partitions - nrp;
            let mut partitions = self.row_partitions.clone();
            let mut nvals = self.inner_shape[0];
            for &len in &self.inner_shape[1..=more] {
                partitions.push(partition::uniform(len, nvals)?);
                nvals *= len;
            }
            let mut inner = vec![nvals];
            inner.extend_from_slice(&self.inner_shape[more + 1..]);
            DynamicRaggedShape::try_new(partitions, inner)?
        } else {
            let folded = &self.row_partitions[num_row_partitions..];
            if folded.iter().any(|p| p.uniform_row_length().is_none()) {
                return Err(argument(
                    "Cannot get an inner shape over a ragged dimension",
                ));
            }
            let first = match num_row_partitions {
                0 => self.nrows().expect("rank >= 1"),
                k => self.row_partitions[k - 1].nvals(),
            };
            let mut inner = vec![first];
            inner.extend(folded.iter().map(|p| p.uniform_row_length().unwrap_or(0)));
            inner.extend_from_slice(&self.inner_shape[1..]);
            DynamicRaggedShape::try_new(self.row_partitions[..num_row_partitions].to_vec(), inner)?
        };
        out.dtype = self.dtype;
        Ok(out)
    }

    /// The same shape with an inner shape of rank `inner_rank` (TensorFlow's
    /// `_with_inner_rank`; `Cannot change inner_rank if rank < 2`).
    pub fn with_inner_rank(&self, inner_rank: usize) -> Result<DynamicRaggedShape, Error> {
        let rank = self.rank();
        if rank < 2 {
            if inner_rank == rank {
                return Ok(self.clone());
            }
            return Err(argument(format!(
                "Cannot change inner_rank if rank < 2 (rank={rank}, inner_rank={inner_rank})"
            )));
        }
        if inner_rank == 0 || inner_rank > rank {
            return Err(argument(format!(
                "inner_rank must be in 1..={rank}, got {inner_rank}"
            )));
        }
        self.with_num_row_partitions(rank - inner_rank)
    }

    /// Every dimension after the first as a partition (rank - 1 of them; TensorFlow's
    /// `_as_row_partitions`).
    pub fn as_row_partitions(&self) -> Result<Vec<RowPartition>, Error> {
        match self.rank() {
            0 => Err(argument("rank must be >= 1 for _as_row_partitions")),
            rank => Ok(self.with_num_row_partitions(rank - 1)?.row_partitions),
        }
    }

    /// Dimensions `start..stop` (TensorFlow's `shape[start:stop]`, indices clipped to the
    /// rank as Python slices are, negative ones counted from the rank). A slice from 0
    /// keeps the partitions it covers; one from a later dimension is dense and needs every
    /// partition uniform (`All relevant dimensions must be uniform`).
    pub fn slice(
        &self,
        start: Option<isize>,
        stop: Option<isize>,
    ) -> Result<DynamicRaggedShape, Error> {
        let rank = self.rank();
        let nrp = self.row_partitions.len();
        let fix = |index: isize| -> usize {
            let index = if index < 0 {
                (index + rank as isize).max(0) as usize
            } else {
                index as usize
            };
            if nrp > 0 && index <= nrp + 1 {
                index
            } else {
                index.min(rank)
            }
        };
        let start = fix(start.unwrap_or(0));
        let stop = fix(stop.unwrap_or(rank as isize));
        let mut out = self.slice_dims(start, stop)?;
        out.dtype = self.dtype;
        Ok(out)
    }

    fn slice_dims(&self, start: usize, stop: usize) -> Result<DynamicRaggedShape, Error> {
        let nrp = self.row_partitions.len();
        if stop <= start {
            return DynamicRaggedShape::try_new(Vec::new(), Vec::new());
        }
        if start == 0 {
            if stop <= nrp {
                if stop == 1 {
                    return DynamicRaggedShape::try_new(
                        Vec::new(),
                        vec![self.row_partitions[0].nrows()],
                    );
                }
                return DynamicRaggedShape::from_row_partitions(
                    self.row_partitions[..stop - 1].to_vec(),
                );
            }
            if self.rank() <= stop {
                return Ok(self.clone());
            }
            return DynamicRaggedShape::try_new(
                self.row_partitions.clone(),
                self.inner_shape[..stop - nrp].to_vec(),
            );
        }
        let partial = if stop < self.rank() {
            self.slice_dims(0, stop)?
        } else {
            self.clone()
        };
        if self
            .row_partitions
            .iter()
            .any(|p| p.uniform_row_length().is_none())
        {
            return Err(argument("All relevant dimensions must be uniform"));
        }
        let dense = partial.with_num_row_partitions(0)?;
        DynamicRaggedShape::try_new(Vec::new(), dense.inner_shape[start..].to_vec())
    }

    /// The number of row partitions of `broadcast_dynamic_shape(a, b)` (TensorFlow's
    /// `_get_broadcast_num_row_partitions`).
    fn broadcast_num_row_partitions(a: &DynamicRaggedShape, b: &DynamicRaggedShape) -> usize {
        let (na, nb) = (a.num_row_partitions(), b.num_row_partitions());
        if na == 0 && nb == 0 {
            return 0;
        }
        let expanded_a = na + b.rank().saturating_sub(a.rank());
        let expanded_b = nb + a.rank().saturating_sub(b.rank());
        match (na, nb) {
            (0, _) => expanded_b,
            (_, 0) => expanded_a,
            _ => expanded_a.max(expanded_b),
        }
    }

    /// TensorFlow's `broadcast_dynamic_shape`: the smallest shape both broadcast to. Shapes
    /// are aligned on their last dimension; in each dimension a side whose dimension is
    /// uniformly 1 is repeated, and otherwise the sizes must agree row by row (`Cannot
    /// broadcast`). The dtype: both partitioned with different dtypes is an error (`Dtypes
    /// don't match`); otherwise a partitioned side's dtype, else `int64`.
    pub fn broadcast_dynamic_shape(
        a: &DynamicRaggedShape,
        b: &DynamicRaggedShape,
    ) -> Result<DynamicRaggedShape, Error> {
        let dtype = match (a.num_row_partitions() > 0, b.num_row_partitions() > 0) {
            (true, true) if a.dtype != b.dtype => {
                return Err(Error::ShapeDType {
                    problem: format!("Dtypes don't match ({} and {})", a.dtype, b.dtype),
                })
            }
            (true, _) => a.dtype,
            (false, true) => b.dtype,
            (false, false) if a.dtype == b.dtype => a.dtype,
            (false, false) => DType::I64,
        };
        if a.rank() == 0 {
            return b.with_dtype(dtype);
        }
        if b.rank() == 0 {
            return a.with_dtype(dtype);
        }
        let rank = a.rank().max(b.rank());
        let (sa, sb) = (Side::of(a, rank)?, Side::of(b, rank)?);
        let walk = walk(&sa, &sb, rank, false)?;
        let shape = if rank == 1 {
            DynamicRaggedShape::try_new(Vec::new(), vec![walk.nrows])?
        } else {
            DynamicRaggedShape::from_row_partitions(walk.partitions)?
        };
        shape
            .with_num_row_partitions(Self::broadcast_num_row_partitions(a, b))?
            .with_dtype(dtype)
    }
}

/// One side of a broadcast: its dimensions, every one after the first a partition, behind
/// `pad` leading dimensions of size 1.
struct Side {
    pad: usize,
    nrows: usize,
    partitions: Vec<RowPartition>,
}

impl Side {
    fn of(shape: &DynamicRaggedShape, rank: usize) -> Result<Side, Error> {
        Ok(Side {
            pad: rank - shape.rank(),
            nrows: shape.nrows().expect("rank >= 1"),
            partitions: shape.as_row_partitions()?,
        })
    }

    /// The uniform length of dimension `d`, if it has one.
    fn uniform(&self, d: usize) -> Option<usize> {
        match d.checked_sub(self.pad) {
            None => Some(1),
            Some(0) => Some(self.nrows),
            Some(k) => self.partitions[k - 1].uniform_row_length(),
        }
    }

    /// Where the row of source position `g` in dimension `d` starts, and its length.
    fn row(&self, d: usize, g: usize) -> (usize, usize) {
        match d.checked_sub(self.pad) {
            None => (g, 1),
            Some(0) => (0, self.nrows),
            Some(k) => {
                let s = self.partitions[k - 1].row_splits();
                (s[g] as usize, (s[g + 1] - s[g]) as usize)
            }
        }
    }
}

/// The result of [`walk`]: the broadcast dimensions and, for each final element, the
/// element of each side it comes from.
struct Walk {
    nrows: usize,
    partitions: Vec<RowPartition>,
    from_a: Vec<usize>,
}

/// Broadcasts two sides dimension by dimension, keeping for every position of the result
/// the position of each side it comes from. With `to_b`, `b` is the target: its dimensions
/// are taken as they are and `a` must broadcast to them (`a` repeats a dimension that is
/// uniformly 1; any other must match `b` row by row).
fn walk(a: &Side, b: &Side, rank: usize, to_b: bool) -> Result<Walk, Error> {
    let mut ga = vec![0usize];
    let mut gb = vec![0usize];
    let mut nrows = 0;
    let mut partitions = Vec::with_capacity(rank.saturating_sub(1));
    for d in 0..rank {
        let (ua, ub) = (a.uniform(d), b.uniform(d));
        let one_a = ua == Some(1);
        let one_b = !to_b && ub == Some(1);
        let mut lengths = Vec::with_capacity(ga.len());
        let mut next_a = Vec::new();
        let mut next_b = Vec::new();
        for (position, (&pa, &pb)) in ga.iter().zip(&gb).enumerate() {
            let (start_a, len_a) = a.row(d, pa);
            let (start_b, len_b) = b.row(d, pb);
            let len = if one_a {
                len_b
            } else if one_b || len_a == len_b {
                len_a
            } else {
                return Err(Error::CannotBroadcast {
                    axis: d,
                    position,
                    left: len_a,
                    right: len_b,
                });
            };
            lengths.push(len);
            for k in 0..len {
                next_a.push(start_a + if one_a { 0 } else { k });
                next_b.push(start_b + if one_b { 0 } else { k });
            }
        }
        if d == 0 {
            nrows = lengths[0];
        } else {
            // A dimension uniform on both sides stays declared uniform (even with no rows).
            let uniform = match (ua, ub) {
                (Some(x), Some(y)) => Some(if one_a { y } else { x }),
                _ => None,
            };
            let n_rows = lengths.len();
            partitions.push(match uniform {
                Some(len) if lengths.iter().all(|&l| l == len) => partition::uniform(len, n_rows)?,
                _ => partition::from_lengths(lengths)?,
            });
        }
        ga = next_a;
        gb = next_b;
    }
    Ok(Walk {
        nrows,
        partitions,
        from_a: ga,
    })
}

impl PartialEq for DynamicRaggedShape {
    /// Equal when the partitions have the same rows, the inner shapes agree and the dtype
    /// is the same (TensorFlow's tests compare the first two).
    fn eq(&self, other: &DynamicRaggedShape) -> bool {
        self.dtype == other.dtype
            && self.inner_shape == other.inner_shape
            && self.row_partitions.len() == other.row_partitions.len()
            && self
                .row_partitions
                .iter()
                .zip(&other.row_partitions)
                .all(|(a, b)| partition::same_rows(a, b))
    }
}

impl fmt::Display for DynamicRaggedShape {
    /// `<DynamicRaggedShape lengths=[2, (3, 2)] num_row_partitions=1>`, as TensorFlow's
    /// `repr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<DynamicRaggedShape lengths=[")?;
        for (i, l) in self.static_lengths().iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{l}")?;
        }
        write!(f, "] num_row_partitions={}>", self.num_row_partitions())
    }
}

impl fmt::Debug for DynamicRaggedShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl Array {
    /// The array's shape as a `DynamicRaggedShape` (TensorFlow's
    /// `DynamicRaggedShape.from_tensor`): partitions down to the last ragged dimension,
    /// the rest dense; sharing the array's partitions.
    pub fn dynamic_shape(&self) -> DynamicRaggedShape {
        DynamicRaggedShape::from_dims(
            self.rank(),
            self.nrows().unwrap_or(1),
            self.row_partitions(),
            self.shape_dtype(),
        )
    }

    /// TensorFlow's `broadcast_to(rt_input, shape)`: the array repeated to `shape` (each
    /// dimension that is uniformly 1, or missing in front, repeated; every other one must
    /// match the target's row by row, `Cannot broadcast`). The result has the target's
    /// partitions. Errors also for a target of lower rank (`Cannot broadcast to a shape
    /// with smaller rank`) and for a ragged array whose partition dtype differs from a
    /// partitioned target's (`Cannot coerce row_splits.dtype`).
    pub fn broadcast_to(&self, shape: &DynamicRaggedShape) -> Result<Array, Error> {
        let source = self.dynamic_shape();
        if source.num_row_partitions() > 0
            && shape.num_row_partitions() > 0
            && source.dtype() != shape.dtype()
        {
            return Err(Error::ShapeDType {
                problem: format!(
                    "Cannot coerce row_splits.dtype ({} to {})",
                    source.dtype(),
                    shape.dtype()
                ),
            });
        }
        if source.rank() > shape.rank() {
            return Err(argument(format!(
                "Cannot broadcast to a shape with smaller rank ({} to {})",
                source.rank(),
                shape.rank()
            )));
        }
        let dtype = if shape.num_row_partitions() > 0 {
            shape.dtype()
        } else {
            self.shape_dtype()
        };
        if shape.rank() == 0 {
            return Ok(self.clone());
        }
        let rank = shape.rank();
        let target = Side::of(shape, rank)?;
        let values = if source.rank() == 0 {
            // a scalar: one value repeated
            let n = shape.num_elements();
            self.values().gather_ranges(&vec![(0, 1); n])
        } else {
            let walk = walk(&Side::of(&source, rank)?, &target, rank, true)?;
            self.values().gather_ranges(&ranges_of(walk.from_a))
        };
        let out = if rank == 1 {
            Array::from_values(values)
        } else {
            Array::from_partitions(target.nrows, target.partitions, values)?
        };
        out.with_shape_dtype(dtype)
    }
}

impl StructuredTensor {
    /// The struct array's shape as a `DynamicRaggedShape` (TensorFlow keeps it as the
    /// struct's `_ragged_shape`): the struct's partitions down to the last ragged one, the
    /// rest dense, in the struct's shape dtype.
    pub fn dynamic_shape(&self) -> DynamicRaggedShape {
        DynamicRaggedShape::from_dims(
            self.rank(),
            self.nrows().unwrap_or(1),
            self.row_partitions(),
            self.shape_dtype(),
        )
    }

    /// TensorFlow's `StructuredTensor.from_shape(shape)`: a struct array with no fields
    /// and the given shape (its dtype too).
    pub fn from_dynamic_shape(shape: &DynamicRaggedShape) -> Result<StructuredTensor, Error> {
        let st = match shape.rank() {
            0 => StructuredTensor::from_shape(0, 0, Vec::new())?,
            1 => StructuredTensor::from_shape(1, shape.nrows().unwrap_or(0), Vec::new())?,
            rank => StructuredTensor::from_shape(
                rank,
                shape.nrows().unwrap_or(0),
                shape.as_row_partitions()?,
            )?,
        };
        st.with_shape_dtype(shape.dtype())
    }
}
