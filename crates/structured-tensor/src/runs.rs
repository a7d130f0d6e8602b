//! Run copies: the elements of `(start, end)` runs of a buffer appended or written in
//! order, a run that fits a 32-byte block copied as the whole block (gathers and concats of
//! values, string offsets and bytes).

use std::mem::MaybeUninit;

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

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

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
