//! `Ragged<T>`: a shape plus its values, and `RaggedView`, the zero-copy sub-array that
//! `index(0, i)` returns.

use std::fmt;
use std::str::FromStr;

use crate::error::{index_out_of_bounds, precondition, to_offset, Error};
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;
use crate::text::parse_nested;

/// A ragged array (k2's `Ragged<T>`): a [`RaggedShape`] and one value per element.
///
/// **Invariant:** `values().len() == shape().num_elements()`.
///
/// ```
/// use ragged_core::Ragged;
/// let r: Ragged<i32> = "[ [ 1 2 ] [ ] [ 3 ] ]".parse().unwrap();
/// assert_eq!(r.sum_per_sublist(0), vec![3, 0, 3]);
/// assert_eq!(r.to_vec_vec(), vec![vec![1, 2], vec![], vec![3]]);
/// assert_eq!(r.index(0, 2).values(), &[3]);
/// ```
#[derive(Clone, PartialEq)]
pub struct Ragged<T> {
    shape: RaggedShape,
    values: Vec<T>,
}

impl<T> Ragged<T> {
    /// A ragged array from a shape and its values, for values built to match the shape.
    ///
    /// # Panics
    ///
    /// When `values.len()` is not `shape.num_elements()`, with both numbers in the message.
    /// [`Ragged::try_new`] returns the same check as an error.
    #[track_caller]
    pub fn new(shape: RaggedShape, values: Vec<T>) -> Self {
        match Self::try_new(shape, values) {
            Ok(ragged) => ragged,
            Err(err) => panic!("Ragged::new: {err}"),
        }
    }

    /// A ragged array from a shape and its values; `values.len()` must be
    /// `shape.num_elements()`, else [`Error::SizeMismatch`].
    pub fn try_new(shape: RaggedShape, values: Vec<T>) -> Result<Self, Error> {
        if values.len() != shape.num_elements() {
            return Err(Error::SizeMismatch {
                what: "number of values vs shape.num_elements()",
                expected: shape.num_elements(),
                got: values.len(),
            });
        }
        Ok(Self { shape, values })
    }

    /// A ragged array whose sizes the caller has built to match, checked in O(1) all the
    /// same; panics, as for a broken invariant, when they differ.
    #[track_caller]
    pub(crate) fn from_matching_parts(shape: RaggedShape, values: Vec<T>) -> Self {
        if values.len() != shape.num_elements() {
            mismatched_parts(values.len(), shape.num_elements());
        }
        Self { shape, values }
    }

    /// The shape.
    #[inline]
    pub fn shape(&self) -> &RaggedShape {
        &self.shape
    }

    /// The values, in order of their last-axis offsets (idx01.., the elements' offsets).
    #[inline]
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The values, mutably (the shape cannot change through this).
    #[inline]
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// Splits into the shape and the values.
    pub fn into_parts(self) -> (RaggedShape, Vec<T>) {
        (self.shape, self.values)
    }

    /// The number of axes (at least 2).
    #[inline]
    pub fn num_axes(&self) -> usize {
        self.shape.num_axes()
    }

    /// The size of axis 0.
    #[inline]
    pub fn dim0(&self) -> usize {
        self.shape.dim0()
    }

    /// The total size of axis `axis`.
    #[track_caller]
    pub fn tot_size(&self, axis: usize) -> usize {
        self.shape.tot_size(axis)
    }

    /// The number of elements (values).
    #[inline]
    pub fn num_elements(&self) -> usize {
        self.values.len()
    }

    /// The row splits of axis `axis`, `1 <= axis < num_axes()`.
    #[track_caller]
    pub fn row_splits(&self, axis: usize) -> &[i32] {
        self.shape.row_splits(axis)
    }

    /// The row ids of axis `axis`, `1 <= axis < num_axes()`.
    #[track_caller]
    pub fn row_ids(&self, axis: usize) -> &[i32] {
        self.shape.row_ids(axis)
    }

    /// The sub-array at index `i` of axis 0, with one fewer axis, borrowed without copying or
    /// allocating (k2's `Index(0, i)` shares memory the same way).
    ///
    /// Only `axis == 0` is supported, as in k2. Panics when `axis != 0` or `i >= dim0()`;
    /// [`Ragged::get`] returns `None` instead.
    #[track_caller]
    pub fn index(&self, axis: usize, i: usize) -> RaggedView<'_, T> {
        if axis != 0 {
            precondition(format!(
                "Ragged::index supports axis 0 only (as k2), got axis {axis}; use index_axis for other axes"
            ));
        }
        if i >= self.dim0() {
            index_out_of_bounds("index", i, self.dim0());
        }
        self.view().sublist(i)
    }

    /// The sub-array at index `i` of axis 0, or `None` when `i >= dim0()`.
    pub fn get(&self, i: usize) -> Option<RaggedView<'_, T>> {
        (i < self.dim0()).then(|| self.view().sublist(i))
    }

    /// The sub-arrays of axis 0 in order, each a zero-copy [`RaggedView`] (what k2's
    /// `RaggedAxis0Splitter` gives, without copying the sub-shapes).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RaggedView<'_, T>> + '_ {
        let view = self.view();
        (0..self.dim0()).map(move |i| view.sublist(i))
    }

    /// The whole array as a borrowed view.
    pub fn view(&self) -> RaggedView<'_, T> {
        RaggedView {
            layers: self.shape.layers(),
            begin: 0,
            end: self.dim0(),
            values: &self.values,
        }
    }

    /// Applies `f` to every value, keeping the shape (shared, not copied).
    pub fn map<U>(&self, f: impl Fn(&T) -> U + Sync + Send) -> Ragged<U>
    where
        T: Sync,
        U: Send,
    {
        let values = if crate::par::go_parallel(self.values.len()) {
            use rayon::prelude::*;
            self.values.par_iter().map(f).collect()
        } else {
            self.values.iter().map(f).collect()
        };
        Ragged::from_matching_parts(self.shape.clone(), values)
    }

    /// A ragged array with the same shape (shared) and new values.
    pub fn with_values<U>(&self, values: Vec<U>) -> Result<Ragged<U>, Error> {
        Ragged::try_new(self.shape.clone(), values)
    }
}

/// Panics for a ragged array built inside the crate with a wrong number of values.
#[cold]
#[track_caller]
fn mismatched_parts(values: usize, elements: usize) -> ! {
    precondition(format!(
        "a ragged array built inside the crate has {values} values for a shape of {elements} elements"
    ))
}

impl<T: Clone> Ragged<T> {
    /// A 2-axis ragged array from nested vectors (`Vec<Vec<T>>`).
    pub fn from_nested(rows: Vec<Vec<T>>) -> Result<Self, Error> {
        let mut splits = Vec::with_capacity(rows.len() + 1);
        splits.push(0i32);
        let mut total = 0usize;
        for row in &rows {
            total += row.len();
            splits.push(to_offset(total, "the number of values")?);
        }
        to_offset(rows.len(), "the number of rows")?;
        let values: Vec<T> = rows.into_iter().flatten().collect();
        // The splits are a running total from 0, so valid; the check costs one pass over
        // the rows, less than the copy of the values.
        let shape = RaggedShape::from_matching_layers(vec![RowPartition::from_row_splits(splits)?]);
        Ok(Self::from_matching_parts(shape, values))
    }

    /// A 3-axis ragged array from three levels of nested vectors.
    pub fn from_nested3(rows: Vec<Vec<Vec<T>>>) -> Result<Self, Error> {
        let mut splits1 = vec![0i32];
        let mut splits2 = vec![0i32];
        let (mut n1, mut n2) = (0usize, 0usize);
        for row in &rows {
            for sub in row {
                n2 += sub.len();
                splits2.push(to_offset(n2, "the number of values")?);
            }
            n1 += row.len();
            splits1.push(to_offset(n1, "the number of sublists")?);
        }
        let values: Vec<T> = rows.into_iter().flatten().flatten().collect();
        let shape = RaggedShape::from_matching_layers(vec![
            RowPartition::from_row_splits(splits1)?,
            RowPartition::from_row_splits(splits2)?,
        ]);
        Ok(Self::from_matching_parts(shape, values))
    }

    /// The rows of a 2-axis array as nested vectors (k2's `ToVecVector`); panics for other axis counts.
    #[track_caller]
    pub fn to_vec_vec(&self) -> Vec<Vec<T>> {
        if self.num_axes() != 2 {
            precondition(format!(
                "to_vec_vec needs 2 axes, this array has {}",
                self.num_axes()
            ));
        }
        self.row_splits(1)
            .windows(2)
            .map(|w| self.values[w[0] as usize..w[1] as usize].to_vec())
            .collect()
    }

    /// A 3-axis array as three levels of nested vectors; panics for other axis counts.
    #[track_caller]
    pub fn to_vec_vec_vec(&self) -> Vec<Vec<Vec<T>>> {
        if self.num_axes() != 3 {
            precondition(format!(
                "to_vec_vec_vec needs 3 axes, this array has {}",
                self.num_axes()
            ));
        }
        let (s1, s2) = (self.row_splits(1), self.row_splits(2));
        s1.windows(2)
            .map(|w| {
                (w[0] as usize..w[1] as usize)
                    .map(|j| self.values[s2[j] as usize..s2[j + 1] as usize].to_vec())
                    .collect()
            })
            .collect()
    }
}

impl<T: fmt::Display> fmt::Display for Ragged<T> {
    /// k2's text form, e.g. `[ [ 1 2 ] [ 3 ] ]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shape
            .fmt_with(f, &mut |f, k| write!(f, "{}", self.values[k]))
    }
}

impl<T: fmt::Debug> fmt::Debug for Ragged<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ragged(")?;
        self.shape
            .fmt_with(f, &mut |f, k| write!(f, "{:?}", self.values[k]))?;
        f.write_str(")")
    }
}

impl<T: FromStr> FromStr for Ragged<T> {
    type Err = Error;

    /// Parses k2's text form at any depth, e.g. `[ [ 1 2 ] [ 3 ] ]`.
    fn from_str(text: &str) -> Result<Self, Error> {
        let parsed = parse_nested(text)?;
        let values = parsed
            .leaves
            .iter()
            .map(|&(position, word)| {
                word.parse::<T>().map_err(|_| Error::Parse {
                    position,
                    expected: "a value of the element type",
                    found: format!("'{word}'"),
                })
            })
            .collect::<Result<Vec<T>, Error>>()?;
        // Text is untrusted input: the parsed splits go through the checked constructors
        // (a pass over them, far less than the parse), so a parser bug is an error too.
        let layers = parsed
            .row_splits
            .into_iter()
            .map(RowPartition::from_row_splits)
            .collect::<Result<Vec<_>, Error>>()?;
        Self::try_new(RaggedShape::from_layers(layers)?, values)
    }
}

/// A borrowed, zero-copy part of a [`Ragged`]: items `begin..end` of one of its axes and
/// everything below them. A view with one axis is a plain run of values.
///
/// Offsets inside a view are those of the parent array; [`RaggedView::to_ragged`] copies it
/// into a standalone array with offsets starting at 0.
#[derive(Clone, Copy)]
pub struct RaggedView<'a, T> {
    layers: &'a [RowPartition],
    begin: usize,
    end: usize,
    values: &'a [T],
}

impl<'a, T> RaggedView<'a, T> {
    /// The number of axes (1 for a run of values).
    pub fn num_axes(&self) -> usize {
        self.layers.len() + 1
    }

    /// The number of items on the view's axis 0.
    pub fn dim0(&self) -> usize {
        self.end - self.begin
    }

    /// The offsets, in the parent, of the view's elements.
    pub fn element_range(&self) -> std::ops::Range<usize> {
        let (mut b, mut e) = (self.begin, self.end);
        for layer in self.layers {
            let s = layer.row_splits();
            b = s[b] as usize;
            e = s[e] as usize;
        }
        b..e
    }

    /// The offset in the parent of the view's first element (k2's `value_offset`).
    pub fn value_offset(&self) -> usize {
        self.element_range().start
    }

    /// The values under this view, borrowed from the parent.
    pub fn values(&self) -> &'a [T] {
        &self.values[self.element_range()]
    }

    /// The sub-view at index `i` of the view's axis 0; panics when out of range or when the
    /// view has a single axis (index its `values()` instead).
    #[track_caller]
    pub fn index(&self, i: usize) -> RaggedView<'a, T> {
        if self.layers.is_empty() {
            precondition("a one-axis view has no sublists; index its values()".to_string());
        }
        if i >= self.dim0() {
            index_out_of_bounds("index", i, self.dim0());
        }
        self.sublist(i)
    }

    /// The sub-views of the view's axis 0 in order; a one-axis view has none.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RaggedView<'a, T>> + '_ {
        let n = if self.layers.is_empty() {
            0
        } else {
            self.dim0()
        };
        (0..n).map(move |i| self.sublist(i))
    }

    fn sublist(&self, i: usize) -> RaggedView<'a, T> {
        let s = self.layers[0].row_splits();
        RaggedView {
            layers: &self.layers[1..],
            begin: s[self.begin + i] as usize,
            end: s[self.begin + i + 1] as usize,
            values: self.values,
        }
    }

    /// The view's own `row_splits` of axis `axis` (`1 <= axis < num_axes()`), rebased to start at 0.
    #[track_caller]
    pub fn row_splits(&self, axis: usize) -> Vec<i32> {
        if axis == 0 || axis >= self.num_axes() {
            index_out_of_bounds("axis", axis, self.num_axes());
        }
        let (mut b, mut e) = (self.begin, self.end);
        for layer in &self.layers[..axis - 1] {
            let s = layer.row_splits();
            b = s[b] as usize;
            e = s[e] as usize;
        }
        let s = &self.layers[axis - 1].row_splits()[b..=e];
        s.iter().map(|&x| x - s[0]).collect()
    }

    /// The view's shape, copied with rebased offsets; panics for a one-axis view.
    #[track_caller]
    pub fn shape(&self) -> RaggedShape {
        if self.layers.is_empty() {
            precondition("a one-axis view has no RaggedShape".to_string());
        }
        let layers = (1..self.num_axes())
            .map(|axis| {
                // SAFETY: `row_splits(axis)` is a run of a valid partition's splits minus
                // its first, so it starts at 0 and never decreases.
                unsafe { RowPartition::from_row_splits_unchecked(self.row_splits(axis)) }
            })
            .collect();
        RaggedShape::from_matching_layers(layers)
    }

    /// Copies the view into a standalone [`Ragged`]; panics for a one-axis view.
    #[track_caller]
    pub fn to_ragged(&self) -> Ragged<T>
    where
        T: Clone,
    {
        Ragged::from_matching_parts(self.shape(), self.values().to_vec())
    }
}

impl<T: fmt::Display> fmt::Display for RaggedView<'_, T> {
    /// k2's text form; a one-axis view prints as `[ 1 2 3 ]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.layers.is_empty() {
            f.write_str("[ ")?;
            for v in self.values() {
                write!(f, "{v} ")?;
            }
            return f.write_str("]");
        }
        let values = self.values();
        let shape = self.shape();
        shape.fmt_with(f, &mut |f, k| write!(f, "{}", values[k]))
    }
}

impl<T: fmt::Display> fmt::Debug for RaggedView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RaggedView({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_roundtrip_any_depth() {
        for text in [
            "[ [ 1 2 ] [ 3 ] ]",
            "[ [ ] ]",
            "[ [ [ 1 ] [ ] ] [ ] [ [ 2 3 ] ] ]",
            "[ [ [ [ 7 ] ] ] [ [ ] ] ]",
        ] {
            let r: Ragged<i32> = text.parse().unwrap();
            assert_eq!(r.to_string(), text);
            r.shape().validate().unwrap();
        }
        let f: Ragged<f32> = "[[1.5, 2], [-3]]".parse().unwrap();
        assert_eq!(f.values(), &[1.5, 2.0, -3.0]);
    }

    #[test]
    fn bad_values_name_their_position() {
        assert_eq!(
            "[ [ 1 2x ] ]".parse::<Ragged<i32>>().err(),
            Some(Error::Parse {
                position: 6,
                expected: "a value of the element type",
                found: "'2x'".into()
            })
        );
    }

    #[test]
    #[should_panic(expected = "Ragged::new: ")]
    fn new_panics_on_a_value_count_that_does_not_match() {
        let shape: RaggedShape = "[ [ x x ] ]".parse().unwrap();
        let _ = Ragged::new(shape, vec![1, 2, 3]);
    }

    #[test]
    fn new_checks_the_value_count() {
        let shape: RaggedShape = "[ [ x x ] ]".parse().unwrap();
        assert_eq!(
            Ragged::try_new(shape, vec![1]).err(),
            Some(Error::SizeMismatch {
                what: "number of values vs shape.num_elements()",
                expected: 2,
                got: 1
            })
        );
    }

    #[test]
    fn nested_roundtrip() {
        let rows = vec![vec![1, 2], vec![], vec![3]];
        let r = Ragged::from_nested(rows.clone()).unwrap();
        assert_eq!(r.to_vec_vec(), rows);
        assert_eq!(r.row_splits(1), &[0, 2, 2, 3]);
        let deep = vec![vec![vec![1], vec![]], vec![], vec![vec![2, 3]]];
        let r3 = Ragged::from_nested3(deep.clone()).unwrap();
        assert_eq!(r3.to_vec_vec_vec(), deep);
        assert_eq!(r3.to_string(), "[ [ [ 1 ] [ ] ] [ ] [ [ 2 3 ] ] ]");
    }

    #[test]
    fn index_views_share_values() {
        let r: Ragged<i32> = "[ [ [ 1 ] [ ] ] [ ] [ [ 2 3 ] [ 4 ] ] ]".parse().unwrap();
        let v = r.index(0, 2);
        assert_eq!(v.num_axes(), 2);
        assert_eq!(v.dim0(), 2);
        assert_eq!(v.values(), &[2, 3, 4]);
        assert_eq!(v.value_offset(), 1);
        assert_eq!(v.to_ragged().to_string(), "[ [ 2 3 ] [ 4 ] ]");
        assert_eq!(v.index(1).values(), &[4]);
        assert_eq!(v.to_string(), "[ [ 2 3 ] [ 4 ] ]");
        assert_eq!(r.index(0, 1).to_ragged().to_string(), "[ ]");
        assert!(r.get(3).is_none());
        assert!(std::ptr::eq(v.values().as_ptr(), r.values()[1..].as_ptr()));
    }

    #[test]
    fn iterating_axis0_gives_each_sublist() {
        let r: Ragged<i32> = "[ [ [ 1 ] [ ] ] [ ] [ [ 2 3 ] [ 4 ] ] ]".parse().unwrap();
        let texts: Vec<String> = r.iter().map(|v| v.to_string()).collect();
        assert_eq!(texts, vec!["[ [ 1 ] [ ] ]", "[ ]", "[ [ 2 3 ] [ 4 ] ]"]);
        let inner: Vec<Vec<i32>> = r.index(0, 2).iter().map(|v| v.values().to_vec()).collect();
        assert_eq!(inner, vec![vec![2, 3], vec![4]]);
        assert_eq!(r.index(0, 2).index(0).iter().count(), 0);
    }

    #[test]
    #[should_panic(expected = "index 3 out of bounds for size 3")]
    fn index_out_of_range_panics() {
        let r: Ragged<i32> = "[ [ 1 ] [ ] [ 2 ] ]".parse().unwrap();
        r.index(0, 3);
    }
}
