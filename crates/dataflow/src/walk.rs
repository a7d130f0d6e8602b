//! Walks (Yarr's `Walk`): folds over a source with state, sequential, unrolled, over a
//! range, with mutable state (`mutate`), and parallel over static bands with a join.

use cpu_features::{load_parallel_threshold, with_parallel_threshold};
use rayon::prelude::*;

use crate::load::{block_rects, schedule_bands, Threads};
use crate::shape::{Block, Shape};
use crate::source::Source;

/// Left fold over every element in row-major order (Yarr's `walk` with `foldl`).
pub fn walk<A: Source, St, F: FnMut(St, A::Elem) -> St>(a: &A, init: St, mut f: F) -> St {
    let n = a.extent().size();
    let mut acc = init;
    for i in 0..n {
        // SAFETY: i < size.
        acc = f(acc, unsafe { elem_at(a, i) });
    }
    acc
}

#[inline(always)]
unsafe fn elem_at<A: Source>(a: &A, i: usize) -> A::Elem {
    if A::LINEAR {
        // SAFETY: the caller keeps i below the size.
        unsafe { a.linear_index_unchecked(i) }
    } else {
        // SAFETY: as above.
        unsafe { a.index_unchecked(a.extent().index_at(i)) }
    }
}

/// Left fold that also sees each index (Yarr's `iwalk` with `foldl`).
pub fn iwalk<A: Source, St, F: FnMut(St, A::Shape, A::Elem) -> St>(
    a: &A,
    init: St,
    mut f: F,
) -> St {
    let extent = a.extent();
    let mut acc = init;
    for i in 0..extent.size() {
        let idx = extent.index_at(i);
        // SAFETY: idx inside the extent.
        acc = f(acc, idx, unsafe { a.index_unchecked(idx) });
    }
    acc
}

/// Right fold: elements from last to first (Yarr's `foldr`).
pub fn fold_right<A: Source, St, F: FnMut(A::Elem, St) -> St>(a: &A, init: St, mut f: F) -> St {
    let n = a.extent().size();
    let mut acc = init;
    for i in (0..n).rev() {
        // SAFETY: i < size.
        acc = f(unsafe { elem_at(a, i) }, acc);
    }
    acc
}

/// Left fold over the indices inside `block`, in row-major order (Yarr's `rangeWalk`).
pub fn range_walk<A: Source, St, F: FnMut(St, A::Shape, A::Elem) -> St>(
    a: &A,
    block: Block<A::Shape>,
    init: St,
    mut f: F,
) -> St {
    let extent = a.extent();
    let (_, ncols) = extent.rows_cols();
    let mut acc = init;
    for (rows, cols) in block_rects(extent, block) {
        for row in rows {
            for col in cols.clone() {
                let idx = extent.index_at_row_col(row, col);
                // SAFETY: rectangles are clipped to the extent.
                acc = f(acc, idx, unsafe {
                    a.row_col_unchecked(extent, ncols, row, col)
                });
            }
        }
    }
    acc
}

/// Left fold whose loop reads `N` elements per step (Yarr's `unrolledFoldl nN`): the
/// reads of a step are independent and overlap; the fold order is unchanged.
///
/// `N` must be at least 1 (a step of no elements would fold nothing), so
/// `walk_unrolled::<0, ..>` does not compile.
///
/// ```
/// use dataflow::{from_fn, walk_unrolled, Dim1};
/// assert_eq!(walk_unrolled::<3, _, _, _>(&from_fn(Dim1(5), |Dim1(i)| i), 0, |s, v| s + v), 10);
/// ```
///
/// ```compile_fail,E0080
/// use dataflow::{from_fn, walk_unrolled, Dim1};
/// assert_eq!(walk_unrolled::<0, _, _, _>(&from_fn(Dim1(5), |Dim1(i)| i), 0, |s, v| s + v), 10);
/// ```
pub fn walk_unrolled<const N: usize, A: Source, St, F: FnMut(St, A::Elem) -> St>(
    a: &A,
    init: St,
    mut f: F,
) -> St {
    let n = a.extent().size();
    let step = const {
        assert!(
            N > 0,
            "walk_unrolled::<N> needs N >= 1: a step of 0 elements folds nothing"
        );
        N
    };
    let mut acc = init;
    let mut i = 0;
    while i + step <= n {
        // SAFETY: i + k < n.
        let vals: [A::Elem; N] = std::array::from_fn(|k| unsafe { elem_at(a, i + k) });
        for v in vals {
            acc = f(acc, v);
        }
        i += step;
    }
    while i < n {
        // SAFETY: i < n.
        acc = f(acc, unsafe { elem_at(a, i) });
        i += 1;
    }
    acc
}

/// A fold with mutable state (Yarr's `mutate`): `f(&mut state, element)` for every element
/// in order, e.g. incrementing a histogram bin.
pub fn mutate<A: Source, St, F: FnMut(&mut St, A::Elem)>(a: &A, state: &mut St, mut f: F) {
    let n = a.extent().size();
    for i in 0..n {
        // SAFETY: i < size.
        f(state, unsafe { elem_at(a, i) });
    }
}

fn band_state<A: Source, St, F: Fn(&mut St, A::Elem)>(
    a: &A,
    mut st: St,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    f: &F,
) -> St {
    let extent = a.extent();
    let (_, ncols) = extent.rows_cols();
    for row in rows {
        // SAFETY: bands are clipped to the extent.
        if let Some(span) = unsafe { a.span_slice(ncols, row, cols.clone()) } {
            span.iter().for_each(|&v| f(&mut st, v));
            continue;
        }
        for col in cols.clone() {
            // SAFETY: bands are clipped to the extent.
            f(&mut st, unsafe {
                a.row_col_unchecked(extent, ncols, row, col)
            });
        }
    }
    st
}

/// Parallel walk with an associative join (Yarr's `walkP caps (mutate ..) newEmpty join`):
/// each static row band folds into its own state from `init()`, and the band states are
/// joined left to right in band order. With an associative `join` the result equals the
/// sequential walk.
pub fn walk_p<A, St, I, F, J>(a: &A, threads: Threads, init: I, f: F, join: J) -> St
where
    A: Source,
    St: Send,
    I: Fn() -> St + Sync,
    F: Fn(&mut St, A::Elem) + Sync,
    J: Fn(St, St) -> St + Sync,
{
    let extent = a.extent();
    let rects = block_rects(extent, Block::whole(extent));
    let work = schedule_bands(&rects, threads);
    if work.len() <= 1 {
        return work
            .into_iter()
            .fold(init(), |st, (rows, cols)| band_state(a, st, rows, cols, &f));
    }
    let states: Vec<St> = work
        .into_par_iter()
        .with_max_len(1)
        .map(|(rows, cols)| band_state(a, init(), rows, cols, &f))
        .collect();
    states.into_iter().reduce(&join).unwrap_or_else(init)
}

/// Component-wise walk of an array of `[T; N]` vectors (Yarr's `walkSlicesSeparate`):
/// each component is walked independently (in parallel over components and bands), giving
/// one state per component.
pub fn walk_slices_separate<A, T, const N: usize, St, I, F, J>(
    a: &A,
    threads: Threads,
    init: I,
    f: F,
    join: J,
) -> [St; N]
where
    A: Source<Elem = [T; N]>,
    T: Copy + Send + Sync,
    St: Send,
    I: Fn() -> St + Sync,
    F: Fn(&mut St, T) + Sync,
    J: Fn(St, St) -> St + Sync,
{
    let per = Threads::Fixed(threads.count().div_ceil(N.max(1)));
    let threshold = load_parallel_threshold();
    let run = |k: usize| {
        let comp = crate::delayed::SourceExt::map(a, move |v: [T; N]| v[k]);
        with_parallel_threshold(threshold, || walk_p(&comp, per, &init, &f, &join))
    };
    let mut out: Vec<St> = if threads.count() > 1 && a.extent().size() >= threshold {
        (0..N).into_par_iter().map(run).collect()
    } else {
        (0..N).map(run).collect()
    };
    std::array::from_fn(|_| out.remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delayed::{from_fn, SourceExt};
    use crate::explicit::View;
    use crate::shape::{Dim1, Dim2};
    use proptest::prelude::*;

    /// `walk_unrolled::<N>` over lengths 0 to 19 against the iterator's fold: every element
    /// folded once, in order, the tail shorter than a step included.
    #[track_caller]
    fn check_walk_unrolled<const N: usize>() {
        for len in 0..20 {
            let xs: Vec<i64> = (1..=len).collect();
            let a = View::new(Dim1(xs.len()), &xs);
            let want = xs.iter().fold(0, |s, v| s * 3 + v);
            assert_eq!(
                walk_unrolled::<N, _, _, _>(&a, 0, |s, v| s * 3 + v),
                want,
                "N = {N}, {len} elements"
            );
        }
    }

    #[test]
    fn walk_unrolled_folds_every_element_for_each_step() {
        // Hardening round 3, item 1 (the same step as `Unrolled`): with N = 0 the fold read
        // nothing; N = 0 no longer compiles (the doc test), every step from 1 up folds all.
        check_walk_unrolled::<1>();
        check_walk_unrolled::<2>();
        check_walk_unrolled::<3>();
        check_walk_unrolled::<8>();
        check_walk_unrolled::<19>();
        check_walk_unrolled::<20>();
        check_walk_unrolled::<64>();
    }

    #[test]
    fn folds_match_iterator_folds() {
        let xs: Vec<i64> = (1..=20).collect();
        let a = View::new(Dim2(4, 5), &xs);
        assert_eq!(
            walk(&a, 0, |s, v| s * 3 + v),
            xs.iter().fold(0, |s, v| s * 3 + v)
        );
        assert_eq!(
            fold_right(&a, 0, |v, s| s * 3 + v),
            xs.iter().rev().fold(0, |s, v| s * 3 + v)
        );
        assert_eq!(
            walk_unrolled::<8, _, _, _>(&a, 0, |s, v| s * 3 + v),
            walk(&a, 0, |s, v| s * 3 + v)
        );
        let weighted = iwalk(&a, 0, |s, Dim2(y, x), v| s + (y * 10 + x) as i64 * v);
        let want: i64 = xs
            .iter()
            .enumerate()
            .map(|(i, v)| ((i / 5) * 10 + i % 5) as i64 * v)
            .sum();
        assert_eq!(weighted, want);
        let in_block = range_walk(
            &a,
            Block::new(Dim2(1, 1), Dim2(3, 3)),
            Vec::new(),
            |mut s, _, v| {
                s.push(v);
                s
            },
        );
        assert_eq!(in_block, vec![7, 8, 12, 13]);
        let mut hist = [0usize; 4];
        mutate(&a, &mut hist, |h, v| h[(v % 4) as usize] += 1);
        assert_eq!(hist, [5, 5, 5, 5]);
    }

    #[test]
    fn histogram_per_component() {
        let extent = Dim2(300, 200);
        let px = from_fn(extent, |Dim2(y, x)| [(y % 4) as u8, (x % 2) as u8]);
        let [h0, h1] = walk_slices_separate(
            &px,
            Threads::Fixed(2),
            || [0u32; 4],
            |h, v| h[v as usize] += 1,
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
        assert_eq!(h0, [15000; 4]);
        assert_eq!(h1, [30000, 30000, 0, 0]);
    }

    proptest! {
        #![proptest_config(crate::testing::proptest_config(48, 0x5eed_0002))]
        #[test]
        fn parallel_walk_equals_sequential(n in 0usize..100_000, seed in any::<u64>(), threads in 1usize..6) {
            let data: Vec<u8> = (0..n as u64).map(|i| (i.wrapping_mul(seed | 1) >> 7) as u8).collect();
            let a = View::new(Dim1(n), &data).map(|v| v / 3);
            let mut seq = vec![0u64; 256];
            mutate(&a, &mut seq, |h, v| h[v as usize] += 1);
            let par = with_parallel_threshold(0, || walk_p(&a, Threads::Fixed(threads), || vec![0u64; 256], |h, v| h[v as usize] += 1, |mut x, y| {
                x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
                x
            }));
            // A 1-D array is one row: it splits into one band, however many threads.
            prop_assert_eq!(crate::load::last_band_count(), usize::from(n > 0));
            let rows = n / 97;
            if rows > 0 {
                let grid = View::new(Dim2(rows, 97), &data[..rows * 97]);
                let mut seq2 = vec![0u64; 256];
                mutate(&grid, &mut seq2, |h, v| h[v as usize] += 1);
                let par2 = with_parallel_threshold(0, || walk_p(&grid, Threads::Fixed(threads), || vec![0u64; 256], |h, v| h[v as usize] += 1, |mut x, y| {
                    x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
                    x
                }));
                prop_assert_eq!(crate::load::last_band_count(), threads.min(rows));
                prop_assert_eq!(seq2, par2);
            }
            prop_assert_eq!(seq, par);
        }
    }
}
