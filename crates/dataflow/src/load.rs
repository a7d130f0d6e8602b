//! Loading (Yarr's `Load`): evaluating a source into a target, sequentially or on static row
//! bands in parallel, with the fill strategy and the thread count chosen as values.

use std::cell::Cell;
use std::ops::Range;

use cpu_features::{load_parallel_threshold, with_parallel_threshold};
use rayon::prelude::*;

use crate::delayed::Separate;
use crate::explicit::Array;
use crate::shape::{Block, Dim2, Shape};
use crate::source::{Source, Target, Writer};

/// How many threads a parallel load or walk uses (Yarr's `caps` / `threads n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Threads {
    /// One thread: the sequential path.
    Seq,
    /// As many bands as the current rayon pool has threads.
    #[default]
    All,
    /// Exactly this many static bands (0 counts as 1).
    Fixed(usize),
}

impl Threads {
    /// The number of bands this value asks for.
    pub fn count(self) -> usize {
        match self {
            Threads::Seq => 1,
            Threads::All => rayon::current_num_threads(),
            Threads::Fixed(n) => n.max(1),
        }
    }
}

thread_local! {
    static LAST_BANDS: Cell<usize> = const { Cell::new(0) };
}

/// How many row bands the last load, walk or image kernel scheduled from the calling
/// thread split its rows into (1 for the sequential path, 0 before any); for tests that
/// must know the parallel path ran.
pub fn last_band_count() -> usize {
    LAST_BANDS.with(Cell::get)
}

/// A fill strategy: the loop order in which a rectangle of a flattened array is evaluated
/// and written (Yarr's `Fill`). Strategies are plain values, passed at the call site.
///
/// # Safety
///
/// [`compute_with`] loads into uninitialised memory and then takes it as initialised, and
/// parallel loads hand disjoint rectangles of one writer to several threads at once. So a
/// call `fill(a, w, rows, cols)` that returns (rather than panics) must, with `ncols` the
/// flattened width of `a.extent()` (`a.extent().rows_cols().1`):
///
/// - write every `(row, col)` of `rows x cols`, before it returns, through `w`: either
///   `w.write(row * ncols + col, row, col, _)`, or a span `w.span_ptr(row * ncols + c0,
///   len)` that it then initialises in full (by [`Source::fill_span`] over the same
///   columns, or by writing every element itself);
/// - write no position outside the rectangle, through `w` or otherwise.
///
/// A panic may leave positions unwritten: the loaders then drop their buffer unread.
pub unsafe trait Fill: Copy + Send + Sync {
    /// Evaluates `a` at every `(row, col)` of `rows x cols` and hands it to `w`.
    ///
    /// # Safety
    /// The rectangle must lie inside `a`'s extent and `w`'s target, and no other thread
    /// may write inside it meanwhile.
    unsafe fn fill<A: Source, W: Writer<A::Elem>>(
        &self,
        a: &A,
        w: &W,
        rows: Range<usize>,
        cols: Range<usize>,
    );
}

/// Row after row, column after column (Yarr's `fill`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Plain;

/// Each row in steps of `N` elements, the `N` evaluations laid out one after another
/// (Yarr's `unrolledFill nN`); the tail is filled plainly.
///
/// `N` must be at least 1: a step of no elements would fill nothing, so a load with
/// `Unrolled::<0>` does not compile.
///
/// ```
/// use dataflow::{compute_with, from_fn, Dim1, Threads, Unrolled};
/// let squares = compute_with(&from_fn(Dim1(5), |Dim1(i)| i * i), Unrolled::<2>, Threads::Seq);
/// assert_eq!(squares.as_slice(), &[0, 1, 4, 9, 16]);
/// ```
///
/// ```compile_fail,E0080
/// use dataflow::{compute_with, from_fn, Dim1, Threads, Unrolled};
/// let squares = compute_with(&from_fn(Dim1(5), |Dim1(i)| i * i), Unrolled::<0>, Threads::Seq);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unrolled<const N: usize>;

impl<const N: usize> Unrolled<N> {
    /// The step, `N`; evaluated by every fill, so a fill with `N == 0` fails to compile.
    const STEP: usize = {
        assert!(
            N > 0,
            "Unrolled::<N> needs N >= 1: a step of 0 elements fills nothing"
        );
        N
    };
}

/// Tiles of `by` rows by `bx` columns, so that neighbouring stencil reads of a tile stay in
/// cache (Yarr's `dim2BlockFill`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockFill {
    /// Tile width in columns.
    pub bx: usize,
    /// Tile height in rows.
    pub by: usize,
}

#[inline(always)]
unsafe fn fill_span<A: Source, W: Writer<A::Elem>>(
    a: &A,
    w: &W,
    extent: A::Shape,
    ncols: usize,
    row: usize,
    cols: Range<usize>,
) {
    if cols.is_empty() {
        return;
    }
    // SAFETY: the caller keeps the span inside the extent and owns it.
    if let Some(ptr) = unsafe { w.span_ptr(row * ncols + cols.start, cols.len()) } {
        // SAFETY: as above; `ptr` is writable for the span.
        unsafe { a.fill_span(extent, ncols, row, cols, ptr) };
        return;
    }
    for col in cols {
        // SAFETY: the caller keeps (row, col) inside the extent and owns the band.
        unsafe {
            let v = a.row_col_unchecked(extent, ncols, row, col);
            w.write(row * ncols + col, row, col, v);
        }
    }
}

// SAFETY: every row of `rows`, every column of `cols`, through `fill_span`, which writes
// the span at `row * ncols + col` through `w` (a whole span by `Source::fill_span`, or
// element by element) and nothing else.
unsafe impl Fill for Plain {
    #[inline(always)]
    unsafe fn fill<A: Source, W: Writer<A::Elem>>(
        &self,
        a: &A,
        w: &W,
        rows: Range<usize>,
        cols: Range<usize>,
    ) {
        let extent = a.extent();
        let (_, ncols) = extent.rows_cols();
        for row in rows {
            // SAFETY: forwarded contract.
            unsafe { fill_span(a, w, extent, ncols, row, cols.clone()) }
        }
    }
}

// SAFETY: every row; in each, whole steps of `N` columns (N >= 1, asserted at compile time
// by `STEP`, so each step writes its N columns and advances), then the rest by `fill_span`,
// all at `row * ncols + col` through `w`.
unsafe impl<const N: usize> Fill for Unrolled<N> {
    #[inline(always)]
    unsafe fn fill<A: Source, W: Writer<A::Elem>>(
        &self,
        a: &A,
        w: &W,
        rows: Range<usize>,
        cols: Range<usize>,
    ) {
        let extent = a.extent();
        let (_, ncols) = extent.rows_cols();
        let step = Self::STEP;
        for row in rows {
            let mut col = cols.start;
            while col + step <= cols.end {
                // Evaluate the N elements first, then write them: the evaluations are
                // independent, so they can overlap in the pipeline.
                // SAFETY: forwarded contract; col + k < cols.end.
                let vals: [A::Elem; N] = std::array::from_fn(|k| unsafe {
                    a.row_col_unchecked(extent, ncols, row, col + k)
                });
                for (k, v) in vals.into_iter().enumerate() {
                    // SAFETY: as above.
                    unsafe { w.write(row * ncols + col + k, row, col + k, v) };
                }
                col += step;
            }
            // SAFETY: forwarded contract.
            unsafe { fill_span(a, w, extent, ncols, row, col..cols.end) }
        }
    }
}

// SAFETY: the tiles (steps of at least 1 row and 1 column, clipped to the rectangle)
// cover the rectangle exactly, each row span of a tile written by `fill_span` as in
// `Plain`.
unsafe impl Fill for BlockFill {
    #[inline(always)]
    unsafe fn fill<A: Source, W: Writer<A::Elem>>(
        &self,
        a: &A,
        w: &W,
        rows: Range<usize>,
        cols: Range<usize>,
    ) {
        let extent = a.extent();
        let (_, ncols) = extent.rows_cols();
        let (bx, by) = (self.bx.max(1), self.by.max(1));
        let mut r0 = rows.start;
        while r0 < rows.end {
            let r1 = (r0 + by).min(rows.end);
            let mut c0 = cols.start;
            while c0 < cols.end {
                let c1 = (c0 + bx).min(cols.end);
                for row in r0..r1 {
                    // SAFETY: forwarded contract.
                    unsafe { fill_span(a, w, extent, ncols, row, c0..c1) }
                }
                c0 = c1;
            }
            r0 = r1;
        }
    }
}

/// A delayed target (Yarr's `DT`): every load writes by calling `f(index, value)`, from
/// several threads at once in a parallel load (on distinct indices).
#[derive(Clone, Copy, Debug)]
pub struct DelayedTarget<S, T, F> {
    extent: S,
    f: F,
    _elem: std::marker::PhantomData<fn(T)>,
}

/// A delayed target of `extent` that hands every written element to `f`.
pub fn delayed_target<S: Shape, T, F: Fn(S, T) + Sync>(extent: S, f: F) -> DelayedTarget<S, T, F> {
    DelayedTarget {
        extent,
        f,
        _elem: std::marker::PhantomData,
    }
}

/// The writer of a [`DelayedTarget`].
#[derive(Debug)]
pub struct DelayedWriter<'w, S, F> {
    extent: S,
    f: &'w F,
}

// SAFETY: the write function is `Sync` and is called once per distinct index.
unsafe impl<S: Shape, T, F: Fn(S, T) + Sync> Writer<T> for DelayedWriter<'_, S, F> {
    #[inline(always)]
    unsafe fn write(&self, _i: usize, row: usize, col: usize, v: T) {
        (self.f)(self.extent.index_at_row_col(row, col), v)
    }
}

impl<S: Shape, T: Copy + Send + Sync, F: Fn(S, T) + Sync> Target for DelayedTarget<S, T, F> {
    type Elem = T;
    type Shape = S;
    type Writer<'w>
        = DelayedWriter<'w, S, F>
    where
        Self: 'w;
    fn extent(&self) -> S {
        self.extent
    }
    fn writer(&mut self) -> DelayedWriter<'_, S, F> {
        DelayedWriter {
            extent: self.extent,
            f: &self.f,
        }
    }
}

/// Runs `fill` over one rectangle, compiled for AVX2 when the processor has it.
///
/// The generic fill and the spans it calls are inlined into a copy built with AVX2
/// enabled; the arithmetic is the same IEEE and integer arithmetic (no fused multiply-add),
/// so both copies give identical results and the choice never changes an answer.
///
/// # Safety
/// As [`Fill::fill`].
#[inline(always)]
unsafe fn run_fill<A: Source, W: Writer<A::Elem>, F: Fill>(
    fill: &F,
    a: &A,
    w: &W,
    rows: Range<usize>,
    cols: Range<usize>,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if cpu_features::simd_level() >= cpu_features::SimdLevel::Avx2 {
            // SAFETY: the processor supports AVX2 (`simd_level()` never exceeds the detected
            // level, which grants AVX2 only with it); the rest is the caller's.
            return unsafe { fill_avx2(fill, a, w, rows, cols) };
        }
    }
    // SAFETY: the caller's contract.
    unsafe { fill.fill(a, w, rows, cols) }
}

/// [`Fill::fill`] built with AVX2 enabled.
///
/// # Safety
/// The processor must support AVX2; otherwise as [`Fill::fill`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_avx2<A: Source, W: Writer<A::Elem>, F: Fill>(
    fill: &F,
    a: &A,
    w: &W,
    rows: Range<usize>,
    cols: Range<usize>,
) {
    // SAFETY: the caller's contract.
    unsafe { fill.fill(a, w, rows, cols) }
}

/// Rectangles `(rows, cols)` of the flattened extent that make up `block`.
pub(crate) fn block_rects<S: Shape>(
    extent: S,
    block: Block<S>,
) -> Vec<(Range<usize>, Range<usize>)> {
    let (s, e) = (block.start.dims(), block.end.dims());
    let d = extent.dims();
    let (s, e) = (
        [0, 1, 2].map(|k| s[k].min(d[k])),
        [0, 1, 2].map(|k| e[k].min(d[k])),
    );
    if S::RANK == 1 {
        return if s[2] < e[2] {
            vec![(0..1, s[2]..e[2])]
        } else {
            vec![]
        };
    }
    let mut out = Vec::new();
    if s[1] >= e[1] || s[2] >= e[2] {
        return out;
    }
    let (z0, z1) = if S::RANK == 3 { (s[0], e[0]) } else { (0, 1) };
    for z in z0..z1 {
        out.push((z * d[1] + s[1]..z * d[1] + e[1], s[2]..e[2]));
    }
    out
}

/// Splits `rows` into `n` contiguous bands of near-equal length, in order.
pub(crate) fn bands(rows: Range<usize>, n: usize) -> Vec<Range<usize>> {
    let len = rows.len();
    let n = n.clamp(1, len.max(1));
    (0..n)
        .map(|k| rows.start + len * k / n..rows.start + len * (k + 1) / n)
        .filter(|r| !r.is_empty())
        .collect()
}

/// The bands a schedule uses for `rects`: one per rectangle when sequential or small.
pub(crate) fn schedule_bands(
    rects: &[(Range<usize>, Range<usize>)],
    threads: Threads,
) -> Vec<(Range<usize>, Range<usize>)> {
    let total = rects.iter().fold(0usize, |n, (r, c)| {
        n.saturating_add(r.len().saturating_mul(c.len()))
    });
    let n = if total < load_parallel_threshold() {
        1
    } else {
        threads.count()
    };
    let mut out = Vec::new();
    let mut most = 0;
    for (rows, cols) in rects {
        let split = bands(rows.clone(), n);
        most = most.max(split.len());
        for band in split {
            out.push((band, cols.clone()));
        }
    }
    LAST_BANDS.with(|b| b.set(most));
    out
}

/// Loads the part of `a` inside `block` into `t` (Yarr's `rangeLoadP`/`rangeLoadS`):
/// static row bands, one per thread; the result does not depend on `threads`.
///
/// # Panics
/// If the extents of `a` and `t` differ, or the extent's size overflows `usize`.
#[track_caller]
pub fn range_load<A, T, F>(a: &A, t: &mut T, block: Block<A::Shape>, fill: F, threads: Threads)
where
    A: Source,
    T: Target<Elem = A::Elem, Shape = A::Shape>,
    F: Fill,
{
    let extent = a.extent();
    assert_eq!(extent, t.extent(), "load: source and target extents differ");
    // Panics, naming the extent, when its size overflows: no such array can be filled.
    let _ = extent.size();
    let rects = block_rects(extent, block);
    let work = schedule_bands(&rects, threads);
    let w = t.writer();
    if work.len() <= 1 {
        for (rows, cols) in work {
            // SAFETY: the rectangle is clipped to the extent and we hold the target.
            unsafe { run_fill(&fill, a, &w, rows, cols) }
        }
    } else {
        work.into_par_iter().for_each(|(rows, cols)| {
            // SAFETY: bands are disjoint and clipped to the extent.
            unsafe { run_fill(&fill, a, &w, rows, cols) }
        });
    }
}

/// Loads all of `a` into `t` (Yarr's `loadP` / `loadS`).
#[track_caller]
pub fn load<A, T, F>(a: &A, t: &mut T, fill: F, threads: Threads)
where
    A: Source,
    T: Target<Elem = A::Elem, Shape = A::Shape>,
    F: Fill,
{
    range_load(a, t, Block::whole(a.extent()), fill, threads)
}

/// Evaluates `a` into a new explicit array (Yarr's `compute`).
///
/// # Panics
/// If the extent's size overflows `usize` (no such array fits in memory; a delayed source
/// can claim one).
pub fn compute_with<A: Source, F: Fill>(
    a: &A,
    fill: F,
    threads: Threads,
) -> Array<A::Elem, A::Shape> {
    let extent = a.extent();
    let mut data: Vec<A::Elem> = Vec::with_capacity(extent.size());
    {
        let rects = block_rects(extent, Block::whole(extent));
        let work = schedule_bands(&rects, threads);
        // SAFETY: the capacity holds `extent.size()` elements, written (never read) by the
        // load below before `set_len`; T is Copy, so nothing needs dropping.
        let w = unsafe { crate::source::SliceWriter::from_raw(data.as_mut_ptr(), extent.size()) };
        if work.len() <= 1 {
            for (rows, cols) in work {
                // SAFETY: the one rectangle covers the whole extent.
                unsafe { run_fill(&fill, a, &w, rows, cols) }
            }
        } else {
            work.into_par_iter()
                .with_max_len(1)
                .for_each(|(rows, cols)| {
                    // SAFETY: bands are disjoint and cover the whole extent.
                    unsafe { run_fill(&fill, a, &w, rows, cols) }
                });
        }
    }
    // SAFETY: `block_rects` of the whole extent covers every flattened row and column,
    // `schedule_bands` splits those rows into bands that cover them, and each `fill`
    // returned (a panic would have dropped `data` unread), so by the contract of `Fill`
    // every position below `extent.size()` was written.
    unsafe { data.set_len(extent.size()) };
    Array::from_vec(extent, data).expect("length equals extent size")
}

/// Evaluates `a` into a new explicit array with the plain fill on all threads.
pub fn compute<A: Source>(a: &A) -> Array<A::Elem, A::Shape> {
    compute_with(a, Plain, Threads::All)
}

/// Loads an array of `[T; N]` vectors component by component into separate arrays (Yarr's
/// `loadSlicesP`): each component is an independent job, and components are split into
/// row bands when there are more threads than components.
///
/// # Panics
/// If the extent's size overflows `usize` (no such array fits in memory; a delayed source
/// can claim one).
pub fn compute_slices<A, T, const N: usize, F>(
    a: &A,
    fill: F,
    threads: Threads,
) -> Separate<Array<T, A::Shape>, N>
where
    A: Source<Elem = [T; N]>,
    T: Copy + Send + Sync + Default,
    F: Fill,
{
    let extent = a.extent();
    let mut parts: [Array<T, A::Shape>; N] =
        std::array::from_fn(|_| Array::filled(extent, T::default()));
    let per_component = Threads::Fixed(threads.count().div_ceil(N.max(1)));
    let slices: Vec<(usize, &mut Array<T, A::Shape>)> = parts.iter_mut().enumerate().collect();
    let threshold = load_parallel_threshold();
    let run = |(k, part): (usize, &mut Array<T, A::Shape>)| {
        let component = crate::delayed::SourceExt::map(a, move |v: [T; N]| v[k]);
        with_parallel_threshold(threshold, || load(&component, part, fill, per_component));
    };
    if threads.count() > 1 && extent.size() >= threshold {
        slices.into_par_iter().for_each(run);
    } else {
        slices.into_iter().for_each(run);
    }
    Separate::new(parts)
}

/// The rectangle of a 2-D block, for callers working in rows and columns.
pub fn dim2_rect(block: Block<Dim2>) -> (Range<usize>, Range<usize>) {
    (block.start.0..block.end.0, block.start.1..block.end.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delayed::{from_fn, SourceExt};
    use crate::shape::{Dim1, Dim3};
    use crate::DEFAULT_LOAD_PARALLEL_THRESHOLD;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn naive<S: Shape, T, F: Fn(S) -> T>(extent: S, f: F) -> Vec<T> {
        (0..extent.size()).map(|i| f(extent.index_at(i))).collect()
    }

    #[test]
    fn fills_agree_with_a_naive_loop() {
        let extent = Dim2(37, 53);
        let f = |Dim2(y, x): Dim2| (y * 1000 + x) as u32 ^ 0x5a5a;
        let expect = naive(extent, f);
        let d = from_fn(extent, f);
        // 37 x 53 is under the default threshold: lower it so the bands really run.
        with_parallel_threshold(0, || {
            for threads in [Threads::Seq, Threads::Fixed(2), Threads::Fixed(5)] {
                assert_eq!(compute_with(&d, Plain, threads).as_slice(), &expect[..]);
                assert_eq!(last_band_count(), threads.count(), "{threads:?}");
                assert_eq!(
                    compute_with(&d, Unrolled::<4>, threads).as_slice(),
                    &expect[..]
                );
                assert_eq!(
                    compute_with(&d, Unrolled::<7>, threads).as_slice(),
                    &expect[..]
                );
                assert_eq!(
                    compute_with(&d, BlockFill { bx: 8, by: 3 }, threads).as_slice(),
                    &expect[..]
                );
            }
        });
    }

    /// Every fill gives the naive loop's bits at every vector level (the AVX2 copy of the
    /// fill loop and the portable one), sequential and in bands.
    #[test]
    fn every_simd_level_fills_the_same_bits() {
        let extent = Dim2(29, 67);
        let f = |Dim2(y, x): Dim2| ((y * 67 + x) as f32 * 0.37 + 1.0) / (1.0 + x as f32) - 0.1;
        let want: Vec<u32> = naive(extent, f).iter().map(|v| v.to_bits()).collect();
        let d = from_fn(extent, f);
        let bits = |a: Array<f32, Dim2>| a.as_slice().iter().map(|v| v.to_bits()).collect();
        for threshold in [usize::MAX, 0] {
            let runs: Vec<[Vec<u32>; 3]> = cpu_features::at_every_level(|_| {
                with_parallel_threshold(threshold, || {
                    [
                        bits(compute_with(&d, Plain, Threads::Fixed(3))),
                        bits(compute_with(&d, Unrolled::<4>, Threads::Fixed(2))),
                        bits(compute_with(&d, BlockFill { bx: 8, by: 3 }, Threads::Seq)),
                    ]
                })
            });
            for run in runs {
                for got in run {
                    assert_eq!(got, want, "threshold {threshold}");
                }
            }
        }
    }

    /// `compute_with(from_fn(f), Unrolled::<N>)` over every width from 0 to 19, against the
    /// naive loop: every position written, including the tails shorter than a step.
    #[track_caller]
    fn check_unrolled<const N: usize>() {
        let f = |Dim2(y, x): Dim2| (y * 100 + x) as u32 + 1;
        for cols in 0..20 {
            let extent = Dim2(3, cols);
            let got = compute_with(&from_fn(extent, f), Unrolled::<N>, Threads::Seq);
            assert_eq!(got.as_slice(), &naive(extent, f)[..], "N = {N}, {extent:?}");
        }
    }

    #[test]
    fn unrolled_fills_every_position_for_each_step() {
        // Hardening round 3, item 1: `Unrolled::<0>` wrote nothing and `compute_with` took
        // the whole buffer as written; N = 0 no longer compiles (the type's doc test), and
        // every step from 1 up covers each row, the tail included.
        check_unrolled::<1>();
        check_unrolled::<2>();
        check_unrolled::<3>();
        check_unrolled::<4>();
        check_unrolled::<7>();
        check_unrolled::<8>();
        check_unrolled::<19>();
        check_unrolled::<20>();
        check_unrolled::<64>();
    }

    #[test]
    fn range_load_touches_only_the_block() {
        let extent = Dim3(3, 4, 5);
        let d = from_fn(extent, |Dim3(z, y, x)| (z * 100 + y * 10 + x) as i32);
        let mut t = Array::filled(extent, -1);
        let block = Block::new(Dim3(1, 1, 2), Dim3(3, 3, 4));
        range_load(&d, &mut t, block, Plain, Threads::Fixed(2));
        for i in 0..extent.size() {
            let idx = extent.index_at(i);
            let want = if block.contains(idx) {
                d.index(idx)
            } else {
                -1
            };
            assert_eq!(t[idx], want, "{idx:?}");
        }
        let line = from_fn(Dim1(10), |Dim1(i)| i * i);
        let mut t1 = Array::filled(Dim1(10), 0);
        range_load(
            &line,
            &mut t1,
            Block::new(Dim1(3), Dim1(6)),
            Unrolled::<2>,
            Threads::Seq,
        );
        assert_eq!(t1.as_slice(), &[0, 0, 0, 9, 16, 25, 0, 0, 0, 0]);
    }

    #[test]
    fn delayed_target_sees_every_index_once() {
        let extent = Dim2(200, 150);
        let sum = AtomicU64::new(0);
        let mut t = delayed_target(extent, |Dim2(y, x), v: u64| {
            assert_eq!(v, (y * 150 + x) as u64);
            sum.fetch_add(v, Ordering::Relaxed);
        });
        let src = from_fn(extent, |Dim2(y, x)| (y * 150 + x) as u64);
        load(&src, &mut t, Plain, Threads::Fixed(3));
        let n = extent.size() as u64;
        assert_eq!(sum.into_inner(), n * (n - 1) / 2);
    }

    #[test]
    fn component_loads_split_channels() {
        let extent = Dim2(130, 140);
        let px = from_fn(extent, |Dim2(y, x)| [y as u8, x as u8, (y + x) as u8]);
        let sep = compute_slices(&px, Plain, Threads::Fixed(2));
        let [r, g, b] = sep.parts();
        assert_eq!(r[Dim2(129, 3)], 129);
        assert_eq!(g[Dim2(5, 139)], 139);
        assert_eq!(b[Dim2(100, 100)], 200);
        assert_eq!(
            compute(&sep).as_slice(),
            compute_with(&px, Plain, Threads::Seq).as_slice()
        );
    }

    /// A safe target whose extent claims 100 elements while its writer holds 5.
    struct LyingTarget {
        buf: Vec<u32>,
    }

    impl Target for LyingTarget {
        type Elem = u32;
        type Shape = Dim2;
        type Writer<'w> = crate::source::SliceWriter<'w, u32>;
        fn extent(&self) -> Dim2 {
            Dim2(10, 10)
        }
        fn writer(&mut self) -> Self::Writer<'_> {
            crate::source::SliceWriter::new(&mut self.buf)
        }
    }

    #[test]
    #[should_panic(
        expected = "load writes positions 0..10 of a target buffer of 5 elements (the target's extent and its writer disagree)"
    )]
    fn lying_target_span_writes_are_refused() {
        let mut t = LyingTarget { buf: vec![0; 5] };
        load(
            &from_fn(Dim2(10, 10), |_| 1u32),
            &mut t,
            Plain,
            Threads::Seq,
        );
    }

    #[test]
    #[should_panic(expected = "load writes positions 5..6 of a target buffer of 5 elements")]
    fn lying_target_element_writes_are_refused() {
        let mut t = LyingTarget { buf: vec![0; 5] };
        load(
            &from_fn(Dim2(10, 10), |_| 1u32),
            &mut t,
            Unrolled::<4>,
            Threads::Seq,
        );
    }

    #[test]
    #[should_panic(expected = "load writes positions 99..100 of a target buffer of 5 elements")]
    fn lying_target_single_writes_are_refused() {
        let mut t = LyingTarget { buf: vec![0; 5] };
        t.write(Dim2(9, 9), 1);
    }

    #[test]
    fn lying_target_in_parallel_is_refused() {
        let mut t = LyingTarget { buf: vec![0; 5] };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_parallel_threshold(0, || {
                load(
                    &from_fn(Dim2(10, 10), |_| 1u32),
                    &mut t,
                    Plain,
                    Threads::Fixed(3),
                )
            })
        }));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<String>().expect("a formatted message");
        assert!(msg.contains("of a target buffer of 5 elements"), "{msg}");
    }

    /// A source that breaks its contract on purpose: the first `extent()` answers 2 x 3,
    /// every later one 4 x 6. `compute_with` sizes its output from the first answer, so
    /// the release checks of the writer must stop the load.
    struct GrowingSource {
        calls: std::sync::atomic::AtomicUsize,
    }

    // SAFETY: deliberately broken (`extent` changes) to test that the writer's checks stop
    // the load before it leaves the buffer; every read goes through the safe `index`.
    unsafe impl Source for GrowingSource {
        type Elem = u8;
        type Shape = Dim2;
        const LINEAR: bool = false;
        fn extent(&self) -> Dim2 {
            if self.calls.fetch_add(1, Ordering::Relaxed) == 0 {
                Dim2(2, 3)
            } else {
                Dim2(4, 6)
            }
        }
        fn index(&self, _: Dim2) -> u8 {
            7
        }
    }

    #[test]
    #[should_panic(expected = "of a target buffer of 6 elements")]
    fn a_source_whose_extent_grows_cannot_overrun_compute() {
        let src = GrowingSource {
            calls: std::sync::atomic::AtomicUsize::new(0),
        };
        let _ = compute_with(&src, Plain, Threads::Seq);
    }

    #[test]
    fn threshold_override_splits_small_loads_and_restores() {
        let extent = Dim2(37, 53);
        let f = |Dim2(y, x): Dim2| (y * 1000 + x) as u32;
        let d = from_fn(extent, f);
        let _ = compute_with(&d, Plain, Threads::Fixed(4));
        assert_eq!(
            last_band_count(),
            1,
            "37 x 53 is under the default threshold"
        );
        let par = with_parallel_threshold(0, || {
            assert_eq!(load_parallel_threshold(), 0);
            compute_with(&d, Plain, Threads::Fixed(4))
        });
        assert_eq!(last_band_count(), 4);
        assert_eq!(par.as_slice(), &naive(extent, f)[..]);
        assert_eq!(load_parallel_threshold(), DEFAULT_LOAD_PARALLEL_THRESHOLD);
        let r = std::panic::catch_unwind(|| with_parallel_threshold(5, || panic!("inside")));
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"inside"));
        assert_eq!(
            load_parallel_threshold(),
            DEFAULT_LOAD_PARALLEL_THRESHOLD,
            "restored after a panic"
        );
        with_parallel_threshold(usize::MAX, || {
            let _ = compute_with(&from_fn(Dim2(1000, 1000), f), Plain, Threads::Fixed(4));
        });
        assert_eq!(last_band_count(), 1);
    }

    proptest! {
        #![proptest_config(crate::testing::proptest_config(48, 0x5eed_0001))]
        #[test]
        fn parallel_equals_sequential(rows in 1usize..300, cols in 1usize..300, threads in 2usize..6, seed in any::<u64>()) {
            let extent = Dim2(rows, cols);
            let data: Vec<f32> = (0..extent.size()).map(|i| ((i as u64).wrapping_mul(seed | 1) % 1000) as f32 / 7.0).collect();
            let a = crate::explicit::View::new(extent, &data);
            let chain = a
                .map(|v| v.sin() * 3.0)
                .zip_with(a, |s, v| s + v * v)
                .unwrap()
                .imap(|Dim2(y, x), v| v - (y as f32) * 0.5 + x as f32);
            let seq = compute_with(&chain, Plain, Threads::Seq);
            let par = with_parallel_threshold(0, || {
                compute_with(&chain, BlockFill { bx: 16, by: 4 }, Threads::Fixed(threads))
            });
            prop_assert_eq!(last_band_count(), threads.min(rows));
            let seq_bits: Vec<u32> = seq.as_slice().iter().map(|v| v.to_bits()).collect();
            let par_bits: Vec<u32> = par.as_slice().iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(seq_bits, par_bits);
        }
    }
}
