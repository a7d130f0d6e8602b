//! Flat arrays one after another (k2's `Append` of `Array1`s), into one buffer allocated
//! on the calling thread and filled in parallel tasks when the result is large.
//!
//! ```text
//! parts => total length => one allocation (calling thread) => tasks of TASK_BYTES (rayon) => set_len
//! ```
//!
//! Appending is bound by memory bandwidth, and on a virtual machine by the page faults of
//! a fresh buffer, which two cores take in parallel: 80 MB of output from 40 MB of input
//! took 8-13 ms on one core of a Zen 5 and 7-10 ms on two in fresh memory, 3.8-5.2 ms and
//! 3.1-3.8 ms in memory already touched. The buffer is allocated before the tasks start,
//! so it comes from the calling thread's allocator arena, never a worker's.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::error::Error;
use crate::par::{go_parallel, parallel_threshold};

/// Bytes of output each parallel task writes: large enough that a task's cost is the
/// copy, small enough for both cores to share the work of a few megabytes.
const TASK_BYTES: usize = 1 << 18;

/// Bytes of output per unit of the parallel threshold below which an append stays on one
/// thread: 4 MiB at the default threshold of 65,536. Below it the tasks cost more than
/// they save: the concat of the structured-tensor benchmark's 100,000 records (buffers of
/// 0.4 to 2.4 MB) took 0.35-0.40 ms with every buffer in parallel against 0.15 ms on one
/// thread.
const PARALLEL_BYTES_PER_ITEM: usize = 64;

/// The arrays of `parts` one after another (k2's `Append` of arrays). Large results (at
/// least the parallel threshold of elements, and 64 bytes for each: 4 MiB at the default
/// threshold) are filled in parallel; the result is the same either way.
///
/// ```
/// assert_eq!(ragged_core::append(&[&[1, 2][..], &[], &[3]]), vec![1, 2, 3]);
/// ```
pub fn append<T: Copy + Send + Sync>(parts: &[&[T]]) -> Vec<T> {
    append_map(parts, &vec![(); parts.len()], |(), &x| x)
}

/// The arrays of `parts` one after another, each element `x` of part `k` written as
/// `f(per_part[k], &x)`: [`append`] with a map, as a shift of each part's offsets when row
/// splits or string offsets are spliced. `f` may run on several threads at once, in any
/// order. (`per_part[k]` is passed by value so that a task's loop holds it in a register
/// and vectorises; a closure that looked it up by `k` on every element ran one element at
/// a time.)
///
/// # Panics
///
/// When `per_part` and `parts` differ in length.
///
/// ```
/// // Two row_splits spliced: the second shifted by the first one's 3 elements.
/// let (a, b) = ([0, 2, 3], [0, 1, 4]);
/// let spliced = ragged_core::append_map(&[&a[..], &b[1..]], &[0, 3], |shift, &x| x + shift);
/// assert_eq!(spliced, vec![0, 2, 3, 4, 7]);
/// ```
pub fn append_map<T, C, U, F>(parts: &[&[T]], per_part: &[C], f: F) -> Vec<U>
where
    T: Sync,
    C: Copy + Send + Sync,
    U: Send,
    F: Fn(C, &T) -> U + Sync,
{
    assert_eq!(
        per_part.len(),
        parts.len(),
        "append_map has {} values for {} parts",
        per_part.len(),
        parts.len()
    );
    let total = parts
        .iter()
        .try_fold(0usize, |sum, part| sum.checked_add(part.len()))
        .expect("the parts of an append hold more than usize::MAX elements");
    let mut out: Vec<U> = Vec::with_capacity(total);
    let bytes = total.saturating_mul(std::mem::size_of::<U>());
    let parallel =
        go_parallel(total) && bytes >= parallel_threshold().saturating_mul(PARALLEL_BYTES_PER_ITEM);
    let task_len = (TASK_BYTES / std::mem::size_of::<U>().max(1)).max(1);
    let mut tasks: Vec<Task<'_, T, C, U>> = Vec::new();
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for (part, &arg) in parts.iter().zip(per_part) {
        let (slots, tail) = std::mem::take(&mut rest).split_at_mut(part.len());
        rest = tail;
        if parallel {
            for (chunk_slots, chunk) in slots.chunks_mut(task_len).zip(part.chunks(task_len)) {
                tasks.push(Task {
                    arg,
                    slots: chunk_slots,
                    input: chunk,
                });
            }
        } else {
            tasks.push(Task {
                arg,
                slots,
                input: part,
            });
        }
    }
    if parallel {
        tasks
            .into_par_iter()
            .for_each(|task| write_mapped(task.slots, task.input, |x| f(task.arg, x)));
    } else {
        for task in tasks {
            write_mapped(task.slots, task.input, |x| f(task.arg, x));
        }
    }
    // SAFETY: the parts' slots were cut one after another from `spare[..total]`, each as
    // long as its part (`split_at_mut(part.len())`, and `total` is the sum of those
    // lengths), and `write_mapped` wrote every slot it was given, having checked that its
    // slots and its input have the same length; so `out[..total]` is initialised.
    unsafe { out.set_len(total) };
    out
}

/// Offsets arrays (row splits, or Arrow's string offsets) spliced into one (k2's
/// `SpliceRowSplits`): the result starts at 0 and each part, after its first offset,
/// continues where the part before it ended, shifted by the difference. Appended with
/// [`append_map`], so in parallel tasks when large.
///
/// Each part must be offsets: non-empty (an error names the part otherwise) and
/// non-decreasing, which is not checked again here (a [`crate::RowPartition`]'s splits
/// are); a decreasing part gives unspecified offsets, never undefined behaviour. Fails
/// when the spliced offsets would pass `i32::MAX`.
///
/// ```
/// let spliced = ragged_core::splice_row_splits(&[&[0, 2, 3][..], &[5, 6, 9]]).unwrap();
/// assert_eq!(spliced, vec![0, 2, 3, 4, 7]);
/// ```
pub fn splice_row_splits(parts: &[&[i32]]) -> Result<Vec<i32>, Error> {
    let mut pieces: Vec<&[i32]> = Vec::with_capacity(parts.len() + 1);
    let mut shifts: Vec<i32> = Vec::with_capacity(parts.len() + 1);
    pieces.push(&[0]);
    shifts.push(0);
    let mut end = 0i64;
    for (index, part) in parts.iter().enumerate() {
        let (Some(&first), Some(&last)) = (part.first(), part.last()) else {
            return Err(Error::InvalidArgument {
                what: "part of splice_row_splits with no offsets (its index)",
                value: index as i64,
            });
        };
        pieces.push(&part[1..]);
        // For offsets, `end` (checked below) and `first` both lie in `0..=i32::MAX`, so
        // their difference fits `i32`.
        shifts.push((end - i64::from(first)) as i32);
        end += i64::from(last) - i64::from(first);
        if end > i64::from(i32::MAX) {
            return Err(Error::Overflow {
                what: "the last offset of the spliced row splits",
                value: end as u64,
            });
        }
    }
    // For non-decreasing parts every shifted offset lies in `0..=end`, so the add is
    // exact; `wrapping_add` keeps a decreasing part's garbage from panicking.
    Ok(append_map(&pieces, &shifts, |shift, &o| {
        o.wrapping_add(shift)
    }))
}

/// One piece of an append: the slots of the output that elements `input` of one part
/// fill, and that part's value for the map.
struct Task<'a, T, C, U> {
    arg: C,
    slots: &'a mut [MaybeUninit<U>],
    input: &'a [T],
}

/// Writes `f(x)` for each `x` of `part` into `slots`, which must be exactly as long.
#[inline]
fn write_mapped<T, U>(slots: &mut [MaybeUninit<U>], part: &[T], f: impl Fn(&T) -> U) {
    assert_eq!(
        slots.len(),
        part.len(),
        "an append task has {} slots for {} elements",
        slots.len(),
        part.len()
    );
    for (slot, x) in slots.iter_mut().zip(part) {
        slot.write(f(x));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::with_parallel_threshold;

    /// The obvious model: every part's elements pushed one by one.
    fn model(parts: &[Vec<u32>], shift: impl Fn(usize) -> u32) -> Vec<u32> {
        let mut out = Vec::new();
        for (k, part) in parts.iter().enumerate() {
            for &x in part {
                out.push(x + shift(k));
            }
        }
        out
    }

    #[track_caller]
    fn check(lengths: &[usize]) {
        let parts: Vec<Vec<u32>> = lengths
            .iter()
            .enumerate()
            .map(|(k, &n)| (0..n as u32).map(|i| i * 7 + k as u32).collect())
            .collect();
        let refs: Vec<&[u32]> = parts.iter().map(Vec::as_slice).collect();
        for threshold in [0, usize::MAX] {
            with_parallel_threshold(threshold, || {
                assert_eq!(append(&refs), model(&parts, |_| 0), "{lengths:?}");
                let shifts: Vec<u32> = (0..refs.len() as u32).map(|k| 1000 * k).collect();
                let shifted = append_map(&refs, &shifts, |shift, &x| x + shift);
                assert_eq!(shifted, model(&parts, |k| 1000 * k as u32), "{lengths:?}");
            });
        }
    }

    #[test]
    fn appends_match_pushing_one_by_one() {
        check(&[]);
        check(&[0]);
        check(&[0, 0, 0]);
        check(&[3, 0, 2]);
        check(&[1]);
        // Parts longer than a task (65,536 `u32`s), shorter, and ending mid-task.
        check(&[200_000, 5, 0, 131_072, 65_537]);
        check(&[65_536, 65_536]);
    }

    #[test]
    fn strings_and_wide_elements_append() {
        let a = [String::from("a"), String::from("bc")];
        let b = [String::from("d")];
        let joined = append_map(&[&a[..], &b[..]], &[(), ()], |(), s: &String| s.clone());
        assert_eq!(joined, ["a", "bc", "d"]);
        let wide = [[1u64; 4]; 3];
        assert_eq!(append(&[&wide[..], &wide[..1]]).len(), 4);
    }

    /// The model of a splice: every part's offsets after its first, each rebased by
    /// subtracting its first offset and adding where the result ended, pushed one by one.
    fn splice_model(parts: &[Vec<i32>]) -> Vec<i32> {
        let mut out = vec![0];
        for part in parts {
            let end = *out.last().unwrap();
            out.extend(part[1..].iter().map(|&o| o - part[0] + end));
        }
        out
    }

    #[test]
    fn splices_match_rebasing_one_by_one() {
        let big: Vec<i32> = (0..150_000).map(|i| 3 * i + i % 7).collect();
        let cases: Vec<Vec<Vec<i32>>> = vec![
            vec![],
            vec![vec![0]],
            vec![vec![0, 2, 3], vec![0, 1, 4]],
            vec![vec![5, 5, 9], vec![0], vec![2, 3]],
            vec![big.clone(), vec![0, 1], big],
        ];
        for parts in &cases {
            let refs: Vec<&[i32]> = parts.iter().map(Vec::as_slice).collect();
            for threshold in [0, usize::MAX] {
                let spliced = with_parallel_threshold(threshold, || splice_row_splits(&refs));
                assert_eq!(
                    spliced.unwrap(),
                    splice_model(parts),
                    "threshold {threshold}"
                );
            }
        }
    }

    #[test]
    fn splice_errors_name_the_part_and_the_total() {
        let empty = splice_row_splits(&[&[0, 1][..], &[]]).unwrap_err();
        assert_eq!(
            empty.to_string(),
            "invalid part of splice_row_splits with no offsets (its index): 1"
        );
        let max = i32::MAX;
        assert_eq!(
            splice_row_splits(&[&[0, max][..], &[0]]).unwrap(),
            vec![0, max]
        );
        let over = splice_row_splits(&[&[0, max][..], &[7, 8]]).unwrap_err();
        assert!(
            matches!(over, Error::Overflow { value, .. } if value == max as u64 + 1),
            "{over}"
        );
    }

    #[test]
    #[should_panic(expected = "append_map has 1 values for 2 parts")]
    fn a_value_missing_for_a_part_panics() {
        append_map(&[&[1u8][..], &[2]], &[0u8], |shift, &x| x + shift);
    }

    #[test]
    #[should_panic(expected = "an append task has 3 slots for 2 elements")]
    fn a_task_given_more_slots_than_elements_panics() {
        // The check `set_len` relies on: a task must fill every slot it is given.
        let mut slots = [MaybeUninit::<u8>::uninit(); 3];
        write_mapped(&mut slots, &[1u8, 2], |&x| x);
    }

    #[test]
    #[should_panic(expected = "an append task has 1 slots for 2 elements")]
    fn a_task_given_fewer_slots_than_elements_panics() {
        let mut slots = [MaybeUninit::<u8>::uninit(); 1];
        write_mapped(&mut slots, &[1u8, 2], |&x| x);
    }
}
