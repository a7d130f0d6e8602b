//! Shapes (`Dim1`, `Dim2`, `Dim3`), blocks of indices and the clipping of a block into its
//! centre and border "shavings" (Yarr's `Data.Yarr.Shape`).

use std::fmt;

/// A rectangular index space of one to three dimensions, outermost axis first.
///
/// Every shape is also flattened to a 2-D view of `rows x cols`, where `cols` is the length of
/// the innermost axis and `rows` the product of the others: loads and walks run over rows, and
/// parallel schedules hand out static bands of rows.
///
/// The trait is sealed: `Dim1`, `Dim2` and `Dim3` are its only implementations, because
/// the crate's unchecked reads trust `to_linear` and `size` of the shape to stay inside a
/// buffer of `size()` elements.
pub trait Shape: Copy + Eq + fmt::Debug + Send + Sync + 'static + sealed::Sealed {
    /// Number of axes.
    const RANK: usize;
    /// The shape with every extent zero (also the first index).
    fn zero() -> Self;
    /// Number of indices in the shape (the product of the extents), or `None` when a
    /// product of extents (including the flattened row count) overflows `usize`.
    fn checked_size(&self) -> Option<usize>;
    /// Number of indices in the shape (the product of the extents).
    ///
    /// # Panics
    /// When the product overflows `usize` (see [`Shape::checked_size`]): no array of such
    /// an extent can exist, and every constructor of explicit arrays refuses it.
    #[track_caller]
    fn size(&self) -> usize {
        match self.checked_size() {
            Some(n) => n,
            None => size_overflow(*self),
        }
    }
    /// Row-major linear position of `idx` inside a shape of this extent.
    fn to_linear(&self, idx: Self) -> usize;
    /// The index at row-major linear position `i` inside a shape of this extent.
    fn index_at(&self, i: usize) -> Self;
    /// True when `idx` lies inside a shape of this extent.
    fn contains(&self, idx: Self) -> bool;
    /// The `(rows, cols)` flattening of this extent.
    fn rows_cols(&self) -> (usize, usize);
    /// The index at flattened position `(row, col)`.
    fn index_at_row_col(&self, row: usize, col: usize) -> Self;
    /// The extents as a small array, outermost first (unused entries are 1).
    fn dims(&self) -> [usize; 3];
}

mod sealed {
    /// Keeps `Shape` implemented by this crate's shapes only.
    pub trait Sealed {}
    impl Sealed for super::Dim1 {}
    impl Sealed for super::Dim2 {}
    impl Sealed for super::Dim3 {}
}

/// Panics for an extent whose number of elements overflows `usize`.
#[cold]
#[track_caller]
fn size_overflow(extent: impl fmt::Debug) -> ! {
    panic!("extent {extent:?} has more elements than usize can count")
}

/// A one-dimensional extent or index.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Dim1(pub usize);

/// A two-dimensional extent or index: `Dim2(y, x)`, rows then columns.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Dim2(pub usize, pub usize);

/// A three-dimensional extent or index: `Dim3(z, y, x)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Dim3(pub usize, pub usize, pub usize);

impl Shape for Dim1 {
    const RANK: usize = 1;
    fn zero() -> Self {
        Dim1(0)
    }
    fn checked_size(&self) -> Option<usize> {
        Some(self.0)
    }
    #[inline(always)]
    fn to_linear(&self, idx: Self) -> usize {
        idx.0
    }
    #[inline(always)]
    fn index_at(&self, i: usize) -> Self {
        Dim1(i)
    }
    fn contains(&self, idx: Self) -> bool {
        idx.0 < self.0
    }
    fn rows_cols(&self) -> (usize, usize) {
        (usize::from(self.0 > 0), self.0)
    }
    #[inline(always)]
    fn index_at_row_col(&self, _row: usize, col: usize) -> Self {
        Dim1(col)
    }
    fn dims(&self) -> [usize; 3] {
        [1, 1, self.0]
    }
}

impl Shape for Dim2 {
    const RANK: usize = 2;
    fn zero() -> Self {
        Dim2(0, 0)
    }
    fn checked_size(&self) -> Option<usize> {
        self.0.checked_mul(self.1)
    }
    #[inline(always)]
    fn to_linear(&self, idx: Self) -> usize {
        idx.0 * self.1 + idx.1
    }
    #[inline(always)]
    fn index_at(&self, i: usize) -> Self {
        Dim2(i / self.1, i % self.1)
    }
    fn contains(&self, idx: Self) -> bool {
        idx.0 < self.0 && idx.1 < self.1
    }
    fn rows_cols(&self) -> (usize, usize) {
        (self.0, self.1)
    }
    #[inline(always)]
    fn index_at_row_col(&self, row: usize, col: usize) -> Self {
        Dim2(row, col)
    }
    fn dims(&self) -> [usize; 3] {
        [1, self.0, self.1]
    }
}

impl Shape for Dim3 {
    const RANK: usize = 3;
    fn zero() -> Self {
        Dim3(0, 0, 0)
    }
    fn checked_size(&self) -> Option<usize> {
        self.0.checked_mul(self.1)?.checked_mul(self.2)
    }
    #[inline(always)]
    fn to_linear(&self, idx: Self) -> usize {
        (idx.0 * self.1 + idx.1) * self.2 + idx.2
    }
    #[inline(always)]
    fn index_at(&self, i: usize) -> Self {
        let plane = self.1 * self.2;
        Dim3(i / plane, (i % plane) / self.2, i % self.2)
    }
    fn contains(&self, idx: Self) -> bool {
        idx.0 < self.0 && idx.1 < self.1 && idx.2 < self.2
    }
    fn rows_cols(&self) -> (usize, usize) {
        (self.0 * self.1, self.2)
    }
    #[inline(always)]
    fn index_at_row_col(&self, row: usize, col: usize) -> Self {
        Dim3(row / self.1.max(1), row % self.1.max(1), col)
    }
    fn dims(&self) -> [usize; 3] {
        [self.0, self.1, self.2]
    }
}

/// A half-open block of indices `start..end` (every axis), Yarr's `Block`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Block<S: Shape> {
    /// First index of the block (inclusive on every axis).
    pub start: S,
    /// End of the block (exclusive on every axis).
    pub end: S,
}

impl<S: Shape> Block<S> {
    /// The block `start..end`.
    pub fn new(start: S, end: S) -> Self {
        Block { start, end }
    }

    /// The block covering a whole extent.
    pub fn whole(extent: S) -> Self {
        Block {
            start: S::zero(),
            end: extent,
        }
    }

    /// Number of indices inside the block (0 when empty on some axis).
    ///
    /// # Panics
    /// When the number overflows `usize` (a block far larger than any array).
    #[track_caller]
    pub fn size(&self) -> usize {
        if self.is_empty() {
            return 0;
        }
        let (s, e) = (self.start.dims(), self.end.dims());
        (3 - S::RANK..3)
            .try_fold(1usize, |n, k| n.checked_mul(e[k] - s[k]))
            .unwrap_or_else(|| size_overflow(self))
    }

    /// True when the block holds no index (it is empty on some axis).
    pub fn is_empty(&self) -> bool {
        let (s, e) = (self.start.dims(), self.end.dims());
        (3 - S::RANK..3).any(|k| e[k] <= s[k])
    }

    /// True when `idx` lies inside the block.
    pub fn contains(&self, idx: S) -> bool {
        let (s, e, i) = (self.start.dims(), self.end.dims(), idx.dims());
        (3 - S::RANK..3).all(|k| s[k] <= i[k] && i[k] < e[k])
    }
}

impl Block<Dim2> {
    /// Clips the block into its centre, the part at least `margin` (top, bottom, left,
    /// right) away from the block's edges, and up to four border shavings (top, bottom,
    /// left, right strips) that together with the centre cover the block exactly once.
    ///
    /// A stencil of radius `r` reads only inside the array for indices in the centre of
    /// the whole array clipped by `(r, r, r, r)`, so the centre needs no bounds checks.
    pub fn clip(&self, margin: Margin) -> Clipped {
        let Dim2(y0, x0) = self.start;
        let Dim2(y1, x1) = self.end;
        let cy0 = (y0 + margin.top).min(y1);
        let cy1 = y1.saturating_sub(margin.bottom).max(cy0);
        let cx0 = (x0 + margin.left).min(x1);
        let cx1 = x1.saturating_sub(margin.right).max(cx0);
        let centre = Block::new(Dim2(cy0, cx0), Dim2(cy1, cx1));
        let candidates = [
            Block::new(Dim2(y0, x0), Dim2(cy0, x1)),
            Block::new(Dim2(cy1, x0), Dim2(y1, x1)),
            Block::new(Dim2(cy0, x0), Dim2(cy1, cx0)),
            Block::new(Dim2(cy0, cx1), Dim2(cy1, x1)),
        ];
        let borders = candidates.into_iter().filter(|b| !b.is_empty()).collect();
        Clipped { centre, borders }
    }
}

/// Distances from each edge of a block that a stencil needs (see [`Block::clip`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Margin {
    /// Rows shaved off the top.
    pub top: usize,
    /// Rows shaved off the bottom.
    pub bottom: usize,
    /// Columns shaved off the left.
    pub left: usize,
    /// Columns shaved off the right.
    pub right: usize,
}

impl Margin {
    /// The same margin on all four sides.
    pub fn uniform(r: usize) -> Self {
        Margin {
            top: r,
            bottom: r,
            left: r,
            right: r,
        }
    }
}

/// A block split into its centre and its border shavings.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Clipped {
    /// The part of the block where a stencil reads only inside.
    pub centre: Block<Dim2>,
    /// The non-empty border strips, in the order top, bottom, left, right.
    pub borders: Vec<Block<Dim2>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_round_trips() {
        let e = Dim3(2, 3, 4);
        for i in 0..e.size() {
            assert_eq!(e.to_linear(e.index_at(i)), i);
            let (_, cols) = e.rows_cols();
            assert_eq!(e.index_at_row_col(i / cols, i % cols), e.index_at(i));
        }
        let e2 = Dim2(3, 5);
        assert_eq!(e2.index_at(7), Dim2(1, 2));
        assert_eq!(e2.to_linear(Dim2(2, 4)), 14);
        assert_eq!(Dim1(9).rows_cols(), (1, 9));
    }

    #[track_caller]
    fn check_clip(extent: Dim2, r: usize) {
        let block = Block::whole(extent);
        let clipped = block.clip(Margin::uniform(r));
        let mut count = vec![0u32; extent.size()];
        let mut blocks = clipped.borders.clone();
        blocks.push(clipped.centre);
        for b in &blocks {
            for y in b.start.0..b.end.0 {
                for x in b.start.1..b.end.1 {
                    count[extent.to_linear(Dim2(y, x))] += 1;
                }
            }
        }
        assert!(count.iter().all(|&c| c == 1), "{extent:?} r={r}: {count:?}");
        for y in clipped.centre.start.0..clipped.centre.end.0 {
            assert!(y >= r && y + r < extent.0);
        }
        for x in clipped.centre.start.1..clipped.centre.end.1 {
            assert!(x >= r && x + r < extent.1);
        }
    }

    #[test]
    fn clipping_covers_every_index_once() {
        check_clip(Dim2(6, 7), 1);
        check_clip(Dim2(6, 7), 2);
        check_clip(Dim2(3, 3), 2);
        check_clip(Dim2(1, 9), 1);
        check_clip(Dim2(0, 4), 1);
        check_clip(Dim2(10, 10), 0);
    }

    #[test]
    fn block_size_and_contains() {
        let b = Block::new(Dim2(1, 2), Dim2(3, 5));
        assert_eq!(b.size(), 6);
        assert!(b.contains(Dim2(2, 4)));
        assert!(!b.contains(Dim2(3, 4)));
        assert!(Block::new(Dim1(4), Dim1(2)).is_empty());
        // 2^32 * 2^32 would wrap to 0 and read as empty.
        let huge = Block::whole(Dim2(1 << 32, 1 << 32));
        assert!(!huge.is_empty());
        assert_eq!(Block::new(Dim3(0, 5, 5), Dim3(7, 5, 9)).size(), 0);
    }

    #[test]
    #[should_panic(expected = "has more elements than usize can count")]
    fn block_size_panics_instead_of_wrapping() {
        let _ = Block::whole(Dim2(1 << 32, 1 << 32)).size();
    }
}
