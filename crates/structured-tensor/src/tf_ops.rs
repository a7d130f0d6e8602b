//! The ops TensorFlow dispatches for `StructuredTensor` (`structured_array_ops.py`):
//! `concat`, `stack`, `gather`, `expand_dims`, `size`, `rank`, `boolean_mask`,
//! `random_shuffle`, `zeros_like` and `ones_like`. Every op applies the same row selection
//! to the struct's partitions and to every field, so the results' fields share their
//! struct's partitions.

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexMap;

use crate::array::{positive_axis, select_through, Array};
use crate::error::{Error, FieldPath};
use crate::partition::{self, ranges_of, RowPartition};
use crate::structured::{FieldValue, StructuredTensor};
use crate::values::{DType, Values};

/// Checks `indices` against a dimension of `size` and converts them to `usize`.
fn checked_indices(indices: &[i64], size: usize) -> Result<Vec<usize>, Error> {
    let mut ids = Vec::with_capacity(indices.len());
    push_checked_indices(&mut ids, indices, 0, size, &mut 0)?;
    Ok(ids)
}

/// Checks `indices` against a dimension of `size` (at most `u32::MAX`) and converts them
/// to `u32`: a quarter of the `(start, end)` runs a gather reads otherwise.
fn checked_ids(indices: &[i64], size: usize) -> Result<Vec<u32>, Error> {
    debug_assert!(u32::try_from(size).is_ok());
    let size64 = size as u64;
    // One pass, no early exit (the loop vectorises); a negative index is a huge `u64`.
    let mut bad = false;
    let ids = indices
        .iter()
        .map(|&i| {
            bad |= i as u64 >= size64;
            i as u32
        })
        .collect();
    if bad {
        let position = indices
            .iter()
            .position(|&i| i as u64 >= size64)
            .expect("a bad index was seen");
        return Err(Error::GatherIndexOutOfRange {
            position,
            index: indices[position],
            size,
        });
    }
    Ok(ids)
}

/// Appends `start + i` to `ids` for each index `i` of `indices` into a dimension of `size`
/// that starts at `start`; `position` numbers the indices across calls, for the error.
pub(crate) fn push_checked_indices(
    ids: &mut Vec<usize>,
    indices: &[i64],
    start: usize,
    size: usize,
    position: &mut usize,
) -> Result<(), Error> {
    for &index in indices {
        match usize::try_from(index) {
            Ok(i) if i < size => ids.push(start + i),
            _ => {
                return Err(Error::GatherIndexOutOfRange {
                    position: *position,
                    index,
                    size,
                })
            }
        }
        *position += 1;
    }
    Ok(())
}

/// Concatenates stacks of partitions level by level (each input given as its partitions);
/// a level stays uniform when every input's is uniform with the same length.
fn concat_partitions(inputs: &[&[RowPartition]]) -> Result<Vec<RowPartition>, Error> {
    let levels = inputs.first().map_or(0, |p| p.len());
    (0..levels)
        .map(|level| {
            let parts: Vec<&RowPartition> = inputs.iter().map(|p| &p[level]).collect();
            Ok(RowPartition::concat(&parts)?)
        })
        .collect()
}

/// The fields of a result, `field(name)` for each name, in order on this thread.
///
/// One rayon task per field was tried and measured slower (concat of the benchmark's
/// 100,000 records: 5.5 ms against 0.3 ms): the workers allocate the result's buffers in
/// their own glibc arenas, which hand the memory back to the system when the result is
/// freed, so every call faults its pages in again.
fn map_fields<'a, I, F>(names: I, field: F) -> Result<IndexMap<String, FieldValue>, Error>
where
    I: Iterator<Item = &'a String>,
    F: Fn(&str) -> Result<FieldValue, Error>,
{
    names.map(|name| Ok((name.clone(), field(name)?))).collect()
}

impl FieldValue {
    /// The rows in `ranges` of the outer dimension of the struct above, whose first `drop`
    /// partitions are already selected into `prefix` (see `Array::gather_ranges_below`).
    fn take_rows_below(
        &self,
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
        ranges: &[(usize, usize)],
    ) -> Result<FieldValue, Error> {
        match self {
            FieldValue::Array(a) => Ok(FieldValue::Array(
                a.gather_ranges_below(drop, prefix, nrows, ranges)?,
            )),
            FieldValue::Struct(s) => Ok(FieldValue::Struct(
                s.take_rows_below(drop, prefix, nrows, ranges)?,
            )),
        }
    }

    /// Concatenation along axis 0 of values of equal kind, rank (>= 1) and dtype, under a
    /// struct whose first `drop` partitions are already joined into `prefix`.
    fn concat_below(
        values: &[&FieldValue],
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
        path: &FieldPath,
    ) -> Result<FieldValue, Error> {
        match values[0] {
            FieldValue::Array(first) => {
                let mut arrays = Vec::with_capacity(values.len());
                for (index, v) in values.iter().enumerate() {
                    let a = v
                        .as_array()
                        .ok_or_else(|| Error::NotAnArray { path: path.clone() })?;
                    if a.rank() != first.rank() {
                        return Err(Error::ConcatRankMismatch {
                            path: path.clone(),
                            index,
                            expected: first.rank(),
                            got: a.rank(),
                        });
                    }
                    if a.dtype() != first.dtype() {
                        return Err(Error::DTypeMismatch {
                            expected: first.dtype(),
                            got: a.dtype(),
                        });
                    }
                    arrays.push(a);
                }
                Ok(FieldValue::Array(Array::concat_below(
                    &arrays, drop, prefix, nrows,
                )?))
            }
            FieldValue::Struct(_) => {
                let mut structs = Vec::with_capacity(values.len());
                for v in values {
                    structs.push(
                        v.as_struct()
                            .ok_or_else(|| Error::NotAnArray { path: path.clone() })?,
                    );
                }
                Ok(FieldValue::Struct(StructuredTensor::concat_below(
                    &structs, drop, prefix, nrows, path,
                )?))
            }
        }
    }

    /// Inserts a length-1 outer dimension.
    fn expand_outer(&self) -> Result<FieldValue, Error> {
        match self {
            FieldValue::Array(a) => Ok(FieldValue::Array(Array::stack(
                std::slice::from_ref(a),
                a.rank(),
                a.dtype(),
                true,
            )?)),
            FieldValue::Struct(s) => Ok(FieldValue::Struct(s.expand_outer()?)),
        }
    }
}

/// Every field path of a struct (the root as `()`), with the rank of each nested struct.
fn paths_and_ranks(
    st: &StructuredTensor,
    prefix: &FieldPath,
    paths: &mut BTreeSet<FieldPath>,
    ranks: &mut BTreeMap<FieldPath, usize>,
) {
    paths.insert(prefix.clone());
    ranks.insert(prefix.clone(), st.rank());
    for (name, value) in st.fields() {
        let path = prefix.child(name);
        match value {
            FieldValue::Struct(s) => paths_and_ranks(s, &path, paths, ranks),
            FieldValue::Array(_) => {
                paths.insert(path);
            }
        }
    }
}

/// TensorFlow's static checks for `concat`: the same paths everywhere, and nested structs
/// of the same rank.
fn check_concat_compatible(values: &[&StructuredTensor]) -> Result<(), Error> {
    let mut all = Vec::with_capacity(values.len());
    for v in values {
        let (mut paths, mut ranks) = (BTreeSet::new(), BTreeMap::new());
        paths_and_ranks(v, &FieldPath::root(), &mut paths, &mut ranks);
        all.push((paths, ranks));
    }
    let mut differ = BTreeSet::new();
    for (paths, _) in &all[1..] {
        differ.extend(all[0].0.symmetric_difference(paths).cloned());
    }
    if !differ.is_empty() {
        return Err(Error::ConcatPathsDiffer {
            paths: differ.into_iter().collect(),
        });
    }
    for (_, ranks) in &all[1..] {
        if let Some((path, _)) = ranks.iter().find(|(p, r)| all[0].1.get(*p) != Some(r)) {
            return Err(Error::ConcatSubmessageRanks { path: path.clone() });
        }
    }
    Ok(())
}

/// A zero-filled or one-filled array of `dtype` with the shape of `st`.
fn filled_like(st: &StructuredTensor, dtype: DType, one: bool) -> Result<Array, Error> {
    let n = st.num_structs();
    let values = match dtype {
        DType::I64 => Values::I64(vec![i64::from(one); n].into()),
        DType::F64 => Values::F64(vec![if one { 1.0 } else { 0.0 }; n].into()),
        DType::Bool => Values::Bool(vec![one; n]),
        DType::Str if !one => Values::Str(std::iter::repeat_n("", n).collect()),
        DType::I32 => Values::I32(vec![i32::from(one); n].into()),
        DType::F32 => Values::F32(vec![if one { 1.0 } else { 0.0 }; n].into()),
        DType::U8 => Values::U8(vec![u8::from(one); n].into()),
        DType::Bytes if !one => Values::Bytes(std::iter::repeat_n(b"", n).collect()),
        DType::Str | DType::Bytes => {
            return Err(Error::UnsupportedDType {
                op: "ones_like",
                dtype,
            })
        }
    };
    if st.rank() == 0 {
        return Array::dense(&[], values);
    }
    Array::from_partitions(
        st.nrows().unwrap_or(0),
        st.row_partitions().to_vec(),
        values,
    )
}

/// A small seeded generator (SplitMix64) for `random_shuffle` (and the crate's tests).
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n >= 1`), by rejection so every value is equally likely.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }
}

impl StructuredTensor {
    /// The rows in `ranges` of the outer dimension (rank >= 1, ranges in bounds); the
    /// fields share the result's partitions.
    pub(crate) fn take_rows(&self, ranges: &[(usize, usize)]) -> Result<StructuredTensor, Error> {
        debug_assert!(self.rank() >= 1);
        let nrows = ranges.iter().map(|(a, b)| b - a).sum();
        if crate::take::go_chunked(ranges.len()) {
            if let Some(out) = self.take_rows_chunked(ranges, nrows) {
                return Ok(out);
            }
        }
        self.take_rows_below(0, &[], nrows, ranges)
    }

    /// The rows in `ranges` of the outer dimension of the struct above (or of this one, with
    /// `drop == 0`), whose first `drop` partitions are already selected into `prefix`: this
    /// struct's own partitions are selected once, and every field continues from them.
    fn take_rows_below(
        &self,
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
        ranges: &[(usize, usize)],
    ) -> Result<StructuredTensor, Error> {
        let (own, runs) = select_through(ranges, &self.row_partitions()[drop..])?;
        let mut partitions = Vec::with_capacity(prefix.len() + own.len());
        partitions.extend_from_slice(prefix);
        partitions.extend(own);
        let below = self.rank() - 1;
        let fields = map_fields(self.fields().keys(), |name| {
            self.fields()[name].take_rows_below(below, &partitions, nrows, &runs)
        })?;
        Ok(
            StructuredTensor::from_parts_unchecked(self.rank(), nrows, partitions, fields)
                .tagged(self.shape_dtype()),
        )
    }

    /// Concatenation along axis 0 of structs already checked compatible (rank >= 1).
    fn concat_outer(
        values: &[&StructuredTensor],
        path: &FieldPath,
    ) -> Result<StructuredTensor, Error> {
        let nrows = values.iter().map(|v| v.nrows().unwrap_or(0)).sum();
        StructuredTensor::concat_below(values, 0, &[], nrows, path)
    }

    /// Concatenation along axis 0 under a struct whose first `drop` partitions are already
    /// joined into `prefix`: this struct's own partitions are joined once, and every field
    /// continues from them.
    fn concat_below(
        values: &[&StructuredTensor],
        drop: usize,
        prefix: &[RowPartition],
        nrows: usize,
        path: &FieldPath,
    ) -> Result<StructuredTensor, Error> {
        let rank = values[0].rank();
        let inputs: Vec<&[RowPartition]> =
            values.iter().map(|v| &v.row_partitions()[drop..]).collect();
        let mut partitions = Vec::with_capacity(rank.saturating_sub(1));
        partitions.extend_from_slice(prefix);
        partitions.extend(concat_partitions(&inputs)?);
        let fields = map_fields(values[0].fields().keys(), |name| {
            let field_path = path.child(name);
            let mut parts = Vec::with_capacity(values.len());
            for v in values {
                parts.push(v.field_value(name)?);
            }
            FieldValue::concat_below(&parts, rank - 1, &partitions, nrows, &field_path)
        })?;
        Ok(
            StructuredTensor::from_parts_unchecked(rank, nrows, partitions, fields)
                .tagged(values[0].shape_dtype()),
        )
    }

    /// Re-splits a struct whose outer dimension is the flattening of this struct's
    /// dimensions `0..=level` back into them (the inverse of `merge_dims(0, level)`).
    pub(crate) fn resplit_outer(
        &self,
        mut merged: StructuredTensor,
        level: usize,
    ) -> Result<StructuredTensor, Error> {
        for p in self.row_partitions()[..level].iter().rev() {
            merged = merged.partition_outer_dimension(p)?;
        }
        Ok(merged)
    }

    /// TensorFlow's `tf.concat` for struct arrays: joins `values` along `axis` (negative
    /// counts from the end). All values need the same field paths, nested structs of the
    /// same rank, fields of the same rank and dtype, and (for `axis > 0`) the same outer
    /// dimensions before `axis`.
    pub fn concat(values: &[&StructuredTensor], axis: isize) -> Result<StructuredTensor, Error> {
        let first = values.first().ok_or(Error::ConcatEmpty)?;
        check_concat_compatible(values)?;
        if let Some(other) = values
            .iter()
            .find(|v| v.shape_dtype() != first.shape_dtype())
        {
            return Err(Error::ShapeDType {
                problem: format!(
                    "Input StructuredTensors have mismatched row partition dtypes ({} and {}); \
                     use with_shape_dtype() to convert them to compatible dtypes",
                    first.shape_dtype(),
                    other.shape_dtype()
                ),
            });
        }
        let axis = positive_axis(axis, first.rank(), "axis")?;
        if axis == 0 {
            return StructuredTensor::concat_outer(values, &FieldPath::root());
        }
        for (index, v) in values.iter().enumerate() {
            let same_outer = v.nrows() == first.nrows()
                && v.row_partitions()[..axis - 1]
                    .iter()
                    .zip(&first.row_partitions()[..axis - 1])
                    .all(|(a, b)| partition::same_rows(a, b));
            if !same_outer {
                return Err(Error::ConcatShapeMismatch { index, axis });
            }
        }
        // Flatten the dimensions before `axis` so that `axis` becomes 1.
        let merged: Vec<StructuredTensor> = values
            .iter()
            .map(|v| v.merge_dims_unchecked(0, axis - 1))
            .collect::<Result<_, _>>()?;
        let n_pos = merged[0].nrows().unwrap_or(0);
        let n_values = merged.len();
        let refs: Vec<&StructuredTensor> = merged.iter().collect();
        let joined = StructuredTensor::concat_outer(&refs, &FieldPath::root())?;
        // Row `pos` of every input, in input order, for each position.
        let order =
            ranges_of((0..n_pos).flat_map(|pos| (0..n_values).map(move |v| v * n_pos + pos)));
        let interleaved = joined.take_rows(&order)?;
        let grouped =
            interleaved.partition_outer_dimension(&partition::uniform(n_values, n_pos)?)?;
        let per_pos = grouped.merge_dims_unchecked(1, 2)?;
        first.resplit_outer(per_pos, axis - 1)
    }

    /// TensorFlow's `tf.stack` on struct arrays (not dispatched by TensorFlow; defined as
    /// `expand_dims(axis)` of each value followed by `concat(axis)`).
    pub fn stack(values: &[&StructuredTensor], axis: isize) -> Result<StructuredTensor, Error> {
        if values.is_empty() {
            return Err(Error::ConcatEmpty);
        }
        let expanded: Vec<StructuredTensor> = values
            .iter()
            .map(|v| v.expand_dims(axis))
            .collect::<Result<_, _>>()?;
        let refs: Vec<&StructuredTensor> = expanded.iter().collect();
        let axis = positive_axis(axis, values[0].rank() + 1, "axis")?;
        StructuredTensor::concat(&refs, axis as isize)
    }

    /// TensorFlow's `tf.gather(params, indices, axis)` with a vector of indices: along
    /// `axis`, element `j` of the result is element `indices[j]` of the input (for each
    /// position of the outer dimensions; ragged rows are checked one by one).
    pub fn gather(&self, indices: &[i64], axis: isize) -> Result<StructuredTensor, Error> {
        let axis = positive_axis(axis, self.rank(), "axis")?;
        if axis == 0 {
            let nrows = self.nrows().unwrap_or(0);
            if crate::take::go_chunked(indices.len()) && u32::try_from(nrows).is_ok() {
                let ids = checked_ids(indices, nrows)?;
                if let Some(out) = self.take_rows_chunked(ids.as_slice(), ids.len()) {
                    return Ok(out);
                }
                // Not a struct the chunked path takes: the ids are checked already.
                return self.take_rows(&ranges_of(ids.iter().map(|&i| i as usize)));
            }
            let ids = checked_indices(indices, nrows)?;
            return self.take_rows(&ranges_of(ids));
        }
        let p = &self.row_partitions()[axis - 1];
        let splits = p.row_splits();
        let n_pos = p.nrows();
        let total = n_pos
            .checked_mul(indices.len())
            .ok_or_else(|| Error::InvalidPartition {
                what: format!("{n_pos} rows of {} indices overflow", indices.len()),
            })?;
        let mut ids = Vec::with_capacity(total);
        for pos in 0..n_pos {
            let start = splits[pos] as usize;
            let len = splits[pos + 1] as usize - start;
            for (j, &index) in indices.iter().enumerate() {
                match usize::try_from(index) {
                    Ok(i) if i < len => ids.push(start + i),
                    _ => {
                        return Err(Error::GatherIndexOutOfRange {
                            position: pos * indices.len() + j,
                            index,
                            size: len,
                        })
                    }
                }
            }
        }
        let flat = self.merge_dims_unchecked(0, axis)?;
        let taken = flat.take_rows(&ranges_of(ids))?;
        let grouped =
            taken.partition_outer_dimension(&partition::uniform(indices.len(), n_pos)?)?;
        self.resplit_outer(grouped, axis - 1)
    }

    /// `tf.gather` with a scalar index: the element `index` along `axis`, that dimension
    /// removed (rank - 1).
    pub fn gather_one(&self, index: i64, axis: isize) -> Result<StructuredTensor, Error> {
        let axis_pos = positive_axis(axis, self.rank(), "axis")?;
        let one = self.gather(&[index], axis)?;
        if self.rank() == 1 {
            let i = index as isize; // in range: `gather` checked it
            return match self.get(&[crate::index::Key::Index(i)])? {
                FieldValue::Struct(s) => Ok(s),
                FieldValue::Array(_) => unreachable!("indexing a struct array gives a struct"),
            };
        }
        if axis_pos + 1 < self.rank() {
            one.merge_dims_unchecked(axis_pos, axis_pos + 1)
        } else {
            one.merge_dims_unchecked(axis_pos - 1, axis_pos)
        }
    }

    /// `tf.gather` along axis 0 with ragged (2-D) indices: the result's outer dimension is
    /// `indices`' rows, its second the gathered elements (rank + 1).
    pub fn gather_ragged(&self, indices: &[Vec<i64>]) -> Result<StructuredTensor, Error> {
        positive_axis(0, self.rank(), "axis")?;
        let flat: Vec<i64> = indices.iter().flatten().copied().collect();
        let gathered = self.gather(&flat, 0)?;
        let rows = partition::from_lengths(indices.iter().map(Vec::len))?;
        gathered.partition_outer_dimension(&rows)
    }

    /// For each position of dimensions `0..axis` (flattened), the batch row (outer row)
    /// it lies in.
    fn batch_of_positions(&self, axis: usize) -> Vec<usize> {
        let mut batch_of: Vec<usize> = (0..self.nrows().unwrap_or(0)).collect();
        for p in &self.row_partitions()[..axis - 1] {
            let mut next = Vec::with_capacity(p.nvals());
            for (row, len) in partition::lengths(p).enumerate() {
                next.extend(std::iter::repeat_n(batch_of[row], len));
            }
            batch_of = next;
        }
        batch_of
    }

    /// `tf.gather(params, indices, axis, batch_dims=1)` with one list of indices per outer
    /// (batch) row: along `axis >= 1`, batch row `b` takes the elements `indices[b]`.
    pub fn gather_batched(
        &self,
        indices: &[Vec<i64>],
        axis: isize,
    ) -> Result<StructuredTensor, Error> {
        let (axis, batch_of) = self.check_batched(indices.len(), axis)?;
        let p = &self.row_partitions()[axis - 1];
        let splits = p.row_splits();
        let mut ids = Vec::new();
        let mut lengths = Vec::with_capacity(batch_of.len());
        let mut position = 0usize;
        for (pos, &b) in batch_of.iter().enumerate() {
            let start = splits[pos] as usize;
            let len = splits[pos + 1] as usize - start;
            push_checked_indices(&mut ids, &indices[b], start, len, &mut position)?;
            lengths.push(indices[b].len());
        }
        let flat = self.merge_dims_unchecked(0, axis)?;
        let taken = flat.take_rows(&ranges_of(ids))?;
        let grouped = taken.partition_outer_dimension(&partition::from_lengths(lengths)?)?;
        self.resplit_outer(grouped, axis - 1)
    }

    /// `tf.gather(params, indices, axis, batch_dims=1)` with one index per outer (batch)
    /// row: along `axis >= 1`, batch row `b` takes element `indices[b]` (rank - 1).
    pub fn gather_one_batched(
        &self,
        indices: &[i64],
        axis: isize,
    ) -> Result<StructuredTensor, Error> {
        let (axis, batch_of) = self.check_batched(indices.len(), axis)?;
        let splits = self.row_partitions()[axis - 1].row_splits();
        let mut ids = Vec::with_capacity(batch_of.len());
        for (pos, &b) in batch_of.iter().enumerate() {
            let start = splits[pos] as usize;
            let len = splits[pos + 1] as usize - start;
            match usize::try_from(indices[b]) {
                Ok(i) if i < len => ids.push(start + i),
                _ => {
                    return Err(Error::GatherIndexOutOfRange {
                        position: b,
                        index: indices[b],
                        size: len,
                    })
                }
            }
        }
        let flat = self.merge_dims_unchecked(0, axis)?;
        let taken = flat.take_rows(&ranges_of(ids))?;
        self.resplit_outer(taken, axis - 1)
    }

    /// Checks a batched gather's axis and batch length; the axis and each position's batch.
    fn check_batched(&self, n_batch: usize, axis: isize) -> Result<(usize, Vec<usize>), Error> {
        let axis = positive_axis(axis, self.rank(), "axis")?;
        if axis == 0 {
            return Err(Error::GatherBatchAxis { axis });
        }
        let nrows = self.nrows().unwrap_or(0);
        if n_batch != nrows {
            return Err(Error::GatherBatchLength {
                expected: nrows,
                got: n_batch,
            });
        }
        Ok((axis, self.batch_of_positions(axis)))
    }

    /// TensorFlow's `tf.expand_dims`: inserts a length-1 dimension at `axis`
    /// (`-(rank + 1) <= axis <= rank`); fields gain the same dimension.
    pub fn expand_dims(&self, axis: isize) -> Result<StructuredTensor, Error> {
        let axis = positive_axis(axis, self.rank() + 1, "axis")?;
        if axis == 0 {
            return self.expand_outer();
        }
        let flat = self.merge_dims_unchecked(0, axis - 1)?;
        let n_pos = flat.nrows().unwrap_or(0);
        let expanded = flat.partition_outer_dimension(&partition::uniform(1, n_pos)?)?;
        self.resplit_outer(expanded, axis - 1)
    }

    /// A length-1 outer dimension in front (`expand_dims(0)`).
    fn expand_outer(&self) -> Result<StructuredTensor, Error> {
        if let Some(nrows) = self.nrows() {
            return self.partition_outer_dimension(&partition::uniform(nrows, 1)?);
        }
        let mut fields = IndexMap::new();
        for (name, value) in self.fields() {
            fields.insert(name.clone(), value.expand_outer()?);
        }
        Ok(
            StructuredTensor::from_parts_unchecked(1, 1, Vec::new(), fields)
                .tagged(self.shape_dtype()),
        )
    }

    /// TensorFlow's `tf.size`: the number of structs (1 at rank 0).
    pub fn size(&self) -> usize {
        self.num_structs()
    }

    /// `tf.boolean_mask` along axis 0 (not dispatched by TensorFlow; defined as `gather`
    /// of the rows where `mask` is true). `mask` has one entry per row.
    pub fn boolean_mask(&self, mask: &[bool]) -> Result<StructuredTensor, Error> {
        let nrows = self.nrows().ok_or_else(|| Error::RankTooLow {
            shape: self.shape(),
        })?;
        if mask.len() != nrows {
            return Err(Error::BooleanMaskLength {
                expected: nrows,
                got: mask.len(),
            });
        }
        let ids = mask.iter().enumerate().filter(|(_, &m)| m).map(|(i, _)| i);
        self.take_rows(&ranges_of(ids))
    }

    /// TensorFlow's `tf.random.shuffle`: the rows of the outer dimension in a random order,
    /// a function of `seed` alone (a Fisher-Yates shuffle driven by SplitMix64; the order
    /// differs from TensorFlow's Philox-based one).
    pub fn random_shuffle(&self, seed: u64) -> Result<StructuredTensor, Error> {
        let nrows = self.nrows().ok_or(Error::ShuffleScalar)?;
        let mut order: Vec<usize> = (0..nrows).collect();
        let mut rng = SplitMix64(seed);
        for i in (1..nrows).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        self.take_rows(&ranges_of(order))
    }

    /// TensorFlow's `tf.zeros_like`: an array of zeros of `dtype` with the struct's shape
    /// (strings: empty strings).
    pub fn zeros_like(&self, dtype: DType) -> Result<Array, Error> {
        filled_like(self, dtype, false)
    }

    /// TensorFlow's `tf.ones_like`: an array of ones of `dtype` with the struct's shape
    /// (`true` for bool; strings are an error).
    pub fn ones_like(&self, dtype: DType) -> Result<Array, Error> {
        filled_like(self, dtype, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range() {
        let mut rng = SplitMix64(1);
        for n in 1..50u64 {
            assert!(rng.below(n) < n);
        }
    }
}
