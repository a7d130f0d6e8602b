//! `DenseFsaVec`: per-frame log-probabilities of a batch of supervision segments, laid out as
//! k2 lays them out (one extra final row per segment, one extra column for label `-1`),
//! copied (`DenseFsaVec`) or read in place from the caller's log-probs (`DenseFsaVecOf<'a>`,
//! the extra row and column then virtual).

use std::sync::OnceLock;

use ndarray::{ArrayView3, ShapeBuilder};
use rayon::prelude::*;

use crate::error::Error;

/// Below this many scores a `DenseFsaVec` is copied on the calling thread.
const PARALLEL_MIN_SCORES: usize = 1 << 16;

/// Copies one segment's rows into `part` (`duration + 1` rows of `C + 1` columns, zeroed):
/// `-inf` then the frame's log-probabilities, and the final row `[0, -inf, ...]`; each row is
/// checked for NaN while in cache.
fn copy_segment(
    log_probs: ArrayView3<'_, f32>,
    seq: usize,
    start: usize,
    duration: usize,
    part: &mut [f32],
) -> Result<(), Error> {
    let num_cols = log_probs.dim().2 + 1;
    // one view of the segment's frames (a slice per frame cost a twentieth of a CTC loss)
    let frames = log_probs.slice(ndarray::s![seq, start..start + duration, ..]);
    let nan_at = |frame: usize, symbol: usize| Error::NanLogProb {
        sequence: seq,
        frame,
        symbol,
    };
    for ((frame, row), out) in (start..)
        .zip(frames.outer_iter())
        .zip(part.chunks_exact_mut(num_cols))
    {
        out[0] = f32::NEG_INFINITY;
        if let Some(symbol) = first_nan(row) {
            return Err(nan_at(frame, symbol));
        }
        match row.as_slice() {
            Some(s) => out[1..].copy_from_slice(s),
            None => out[1..]
                .iter_mut()
                .zip(row.iter())
                .for_each(|(o, &x)| *o = x),
        }
    }
    let last = &mut part[duration * num_cols..];
    last[0] = 0.0;
    last[1..].fill(f32::NEG_INFINITY);
    Ok(())
}

/// The first NaN among one segment's frames, as [`copy_segment`] reports it.
fn scan_segment(
    log_probs: ArrayView3<'_, f32>,
    seq: usize,
    start: usize,
    duration: usize,
) -> Result<(), Error> {
    let frames = log_probs.slice(ndarray::s![seq, start..start + duration, ..]);
    for (frame, row) in (start..).zip(frames.outer_iter()) {
        if let Some(symbol) = first_nan(row) {
            return Err(Error::NanLogProb {
                sequence: seq,
                frame,
                symbol,
            });
        }
    }
    Ok(())
}

/// The symbol of the first NaN in one frame's row, if any.
fn first_nan(row: ndarray::ArrayView1<'_, f32>) -> Option<usize> {
    match row.as_slice() {
        // a reduction without early exit, which the compiler vectorizes
        Some(s) if !s.iter().fold(false, |any, x| any | x.is_nan()) => None,
        _ => row.iter().position(|x| x.is_nan()),
    }
}

/// The checked segments, the row splits of k2's layout and its number of scores.
type CheckedSegments = (Vec<[i32; 3]>, Vec<i32>, usize);

/// Checks the segments against `log_probs` of shape `[n, t, c]`: the segments (durations
/// cut at the end of their sequence), the row splits and the number of scores of k2's
/// layout.
fn check_segments(
    [n, t, c]: [usize; 3],
    supervision_segments: &[[i32; 3]],
    allow_truncate: usize,
) -> Result<CheckedSegments, Error> {
    let num_cols = c.checked_add(1).ok_or(Error::TooLarge {
        what: "number of symbols",
    })?;
    let mut segments = Vec::with_capacity(supervision_segments.len());
    let mut row_splits = Vec::with_capacity(supervision_segments.len() + 1);
    row_splits.push(0i32);
    let mut rows = 0i32;
    let limit = (t as u64).saturating_add(allow_truncate as u64);
    for (idx, &[seq, start, duration]) in supervision_segments.iter().enumerate() {
        let bad = seq < 0
            || seq as usize >= n
            || start < 0
            || start as usize >= t
            || duration < 0
            || (start as u64 + duration as u64) > limit;
        if bad {
            return Err(Error::SegmentOutOfRange {
                segment: idx,
                sequence: seq,
                start,
                duration,
                num_sequences: n,
                num_frames: t,
            });
        }
        // cut at the end of the sequence (at most `allow_truncate` frames)
        let duration = duration.min(i32::try_from(t - start as usize).unwrap_or(i32::MAX));
        segments.push([seq, start, duration]);
        rows = rows
            .checked_add(duration)
            .and_then(|r| r.checked_add(1))
            .ok_or(Error::TooLarge {
                what: "total number of frames",
            })?;
        row_splits.push(rows);
    }
    let total = (rows as usize)
        .checked_mul(num_cols)
        .filter(|&s| s <= i32::MAX as usize)
        .ok_or(Error::TooLarge {
            what: "dense scores (frames x (symbols + 1))",
        })?;
    Ok((segments, row_splits, total))
}

/// A layout error of [`DenseFsaVecOf::from_slice`].
fn bad_layout(what: &'static str, value: usize, allowed: &'static str) -> Error {
    Error::InvalidArgument {
        what,
        value: value as f64,
        allowed,
    }
}

/// Network outputs as dense FSAs, one per supervision segment (k2's `DenseFsaVec`), owning
/// their scores ([`DenseFsaVec`]) or reading the caller's log-probs in place for lifetime
/// `'a` ([`DenseFsaVecOf::borrowed`], [`DenseFsaVecOf::from_slice`]).
///
/// Segment `i` with `d` frames owns rows `row_splits[i]..row_splits[i + 1]` (`d + 1` rows) of
/// the `scores` matrix, which has `C + 1` columns: column 0 is label `-1` and column `c + 1`
/// is symbol `c`. Its first `d` rows hold `log_probs[seq, start..start + d, ..]` with `-inf`
/// in column 0; its last row is `[0, -inf, ..., -inf]` (only the final arc is possible).
/// The borrowed form holds no such matrix: the losses read the log-probs in place, the
/// added column and final rows virtual, and [`DenseFsaVecOf::scores`] builds k2's layout on
/// its first call (for the operations that read it: `intersect_dense` and the decoders).
///
/// **Invariants:** no score is NaN; `row_splits` starts at 0 and grows by `duration + 1` per
/// segment; every segment lies inside its sequence; the owned form holds its scores.
#[derive(Debug, Clone)]
pub struct DenseFsaVecOf<'a> {
    /// The caller's log-probs, `[N, T, C]`, when borrowed.
    log_probs: Option<ArrayView3<'a, f32>>,
    /// k2's layout: set when built for the owned form, on first use for the borrowed one.
    scores: OnceLock<Vec<f32>>,
    num_cols: usize,
    row_splits: Vec<i32>,
    segments: Vec<[i32; 3]>,
    log_probs_dim: [usize; 3],
}

/// Dense FSAs that own their scores (a copy of the log-probs in k2's layout).
pub type DenseFsaVec = DenseFsaVecOf<'static>;

/// Equal when the segments, the shape of the log-probs and the scores are (an owned and a
/// borrowed form of the same input are equal).
impl<'b> PartialEq<DenseFsaVecOf<'b>> for DenseFsaVecOf<'_> {
    fn eq(&self, other: &DenseFsaVecOf<'b>) -> bool {
        self.num_cols == other.num_cols
            && self.row_splits == other.row_splits
            && self.segments == other.segments
            && self.log_probs_dim == other.log_probs_dim
            && self.scores() == other.scores()
    }
}

impl<'a> DenseFsaVecOf<'a> {
    /// Reads `log_probs` `[N, T, C]` in place for as long as the result lives, with the
    /// rules of [`DenseFsaVec::with_allow_truncate`] (`allow_truncate = 0` for k2's default):
    /// no copy is made, and the frames the segments cover are checked for NaN
    /// ([`Error::NanLogProb`]). Any strides are read; rows with the symbols side by side
    /// (C-contiguous arrays) are read fastest.
    pub fn borrowed(
        log_probs: ArrayView3<'a, f32>,
        supervision_segments: &[[i32; 3]],
        allow_truncate: usize,
    ) -> Result<Self, Error> {
        let (n, t, c) = log_probs.dim();
        let (segments, row_splits, total) =
            check_segments([n, t, c], supervision_segments, allow_truncate)?;
        let scan = |&[seq, start, duration]: &[i32; 3]| {
            scan_segment(log_probs, seq as usize, start as usize, duration as usize)
        };
        // the first NaN in segment order, as a serial scan would find it
        let scanned: Result<(), Error> = if segments.len() > 1 && total >= PARALLEL_MIN_SCORES {
            segments
                .par_iter()
                .map(scan)
                .collect::<Vec<_>>()
                .into_iter()
                .collect()
        } else {
            segments.iter().try_for_each(scan)
        };
        scanned?;
        Ok(Self {
            log_probs: Some(log_probs),
            scores: OnceLock::new(),
            num_cols: c + 1,
            row_splits,
            segments,
            log_probs_dim: [n, t, c],
        })
    }

    /// [`DenseFsaVecOf::borrowed`] over a flat buffer: element `[i, j, k]` of the
    /// `shape` `[N, T, C]` log-probs is `data[i * strides[0] + j * strides[1] + k *
    /// strides[2]]`. A layout whose last element lies past `data.len()` (sizes computed
    /// with overflow checks) or whose strides make two elements share a place is
    /// [`Error::InvalidArgument`] naming the length or the stride; C-contiguous log-probs
    /// have strides `[T * C, C, 1]`.
    pub fn from_slice(
        data: &'a [f32],
        shape: [usize; 3],
        strides: [usize; 3],
        supervision_segments: &[[i32; 3]],
        allow_truncate: usize,
    ) -> Result<Self, Error> {
        const STRIDE: [&str; 3] = [
            "log_probs stride of axis 0 (sequences)",
            "log_probs stride of axis 1 (frames)",
            "log_probs stride of axis 2 (symbols)",
        ];
        let empty = shape.contains(&0);
        if !empty {
            // the offset of the last element, which must lie inside `data`
            let last = (0..3).try_fold(0usize, |acc, axis| {
                (shape[axis] - 1)
                    .checked_mul(strides[axis])
                    .and_then(|x| acc.checked_add(x))
            });
            match last {
                Some(last) if last < data.len() => {}
                _ => {
                    return Err(bad_layout(
                        "log_probs length",
                        data.len(),
                        "more than the offset of the last element (shape and strides)",
                    ))
                }
            }
            // no two elements in one place: taken by stride, each axis of more than one
            // element steps past everything the smaller axes span
            let mut axes = [0usize, 1, 2];
            axes.sort_by_key(|&a| (strides[a], shape[a]));
            let mut span = 0usize;
            for &axis in axes.iter().filter(|&&a| shape[a] > 1) {
                if strides[axis] <= span {
                    return Err(bad_layout(
                        STRIDE[axis],
                        strides[axis],
                        "more than the span of the axes with smaller strides (no overlap)",
                    ));
                }
                // (below data.len(): the extent was checked above)
                span += (shape[axis] - 1) * strides[axis];
            }
        }
        let view = ArrayView3::from_shape(shape.strides(strides), data).map_err(|_| {
            bad_layout(
                "log_probs length",
                data.len(),
                "a layout ndarray accepts for shape and strides",
            )
        })?;
        Self::borrowed(view, supervision_segments, allow_truncate)
    }
}

impl DenseFsaVec {
    /// Builds the dense FSAs from `log_probs` `[N, T, C]` (symbol 0 is blank) and
    /// `supervision_segments` (sequence index, start frame, number of frames), in any order;
    /// FSA `i` is segment `i`. Every segment must start inside its sequence
    /// (`0 <= start < T`, as k2 asserts, also for a segment of 0 frames) and end by frame `T`;
    /// otherwise [`Error::SegmentOutOfRange`].
    ///
    /// # Panics
    ///
    /// Where [`DenseFsaVec::try_new`] returns an error, with its message: for log-probs and
    /// segments built by the caller to fit.
    #[track_caller]
    pub fn new(log_probs: ArrayView3<'_, f32>, supervision_segments: &[[i32; 3]]) -> Self {
        match Self::try_new(log_probs, supervision_segments) {
            Ok(dense) => dense,
            Err(err) => panic!("DenseFsaVec::new: {err}"),
        }
    }

    /// k2's `DenseFsaVec(log_probs, supervision_segments)`, checked: the rules of
    /// [`DenseFsaVec::new`], each broken one an error.
    pub fn try_new(
        log_probs: ArrayView3<'_, f32>,
        supervision_segments: &[[i32; 3]],
    ) -> Result<Self, Error> {
        Self::with_allow_truncate(log_probs, supervision_segments, 0)
    }

    /// [`DenseFsaVec::try_new`] with k2's `allow_truncate`: a segment may run past the end of its
    /// sequence by at most `allow_truncate` frames (`start + frames <= T + allow_truncate`)
    /// and is then cut at frame `T`, as `k2.DenseFsaVec(log_probs, supervision_segments,
    /// allow_truncate)` does; [`DenseFsaVec::segments`] reports the cut durations. A segment
    /// further past the end, or starting at or after `T`, is [`Error::SegmentOutOfRange`].
    pub fn with_allow_truncate(
        log_probs: ArrayView3<'_, f32>,
        supervision_segments: &[[i32; 3]],
        allow_truncate: usize,
    ) -> Result<Self, Error> {
        let (n, t, c) = log_probs.dim();
        // check the segments and count the rows before touching memory
        let (segments, row_splits, total) =
            check_segments([n, t, c], supervision_segments, allow_truncate)?;
        let scores = padded_scores(log_probs, &segments, &row_splits, total)?;
        Ok(Self {
            log_probs: None,
            scores: OnceLock::from(scores),
            num_cols: c + 1,
            row_splits,
            segments,
            log_probs_dim: [n, t, c],
        })
    }

    /// The frames of each segment, as [`DenseFsaVec::with_allow_truncate`] would cut them,
    /// for log-probs of shape `(N, T, C)`, without reading any log-prob: the segment checks
    /// alone (the same [`Error::SegmentOutOfRange`] and [`Error::TooLarge`]), for a caller
    /// that builds a [`DenseFsaVecOf::borrowed`] later and wants bad segments found now.
    pub fn checked_durations(
        (n, t, c): (usize, usize, usize),
        supervision_segments: &[[i32; 3]],
        allow_truncate: usize,
    ) -> Result<Vec<usize>, Error> {
        let (segments, _, _) = check_segments([n, t, c], supervision_segments, allow_truncate)?;
        Ok(segments.iter().map(|s| s[2] as usize).collect())
    }
}

/// k2's layout of `log_probs` for the checked `segments` (`total` scores): the copy, each
/// segment's rows by one task, and the first NaN in segment order as the error.
fn padded_scores(
    log_probs: ArrayView3<'_, f32>,
    segments: &[[i32; 3]],
    row_splits: &[i32],
    total: usize,
) -> Result<Vec<f32>, Error> {
    let num_cols = log_probs.dim().2 + 1;
    // a request the allocator refuses is an error, not an abort: probe it first, then
    // take zeroed memory, whose pages the copying tasks fault in in parallel
    Vec::<f32>::new()
        .try_reserve_exact(total)
        .map_err(|_| Error::TooLarge {
            what: "dense scores (allocation failed)",
        })?;
    let mut scores = vec![0f32; total];
    // each segment's rows, copied by one task
    let mut parts: Vec<(&[i32; 3], &mut [f32])> = Vec::with_capacity(segments.len());
    let mut rest = scores.as_mut_slice();
    for (segment, w) in segments.iter().zip(row_splits.windows(2)) {
        let (part, tail) = rest.split_at_mut((w[1] - w[0]) as usize * num_cols);
        parts.push((segment, part));
        rest = tail;
    }
    let copy = |(&[seq, start, duration], part): (&[i32; 3], &mut [f32])| {
        copy_segment(
            log_probs,
            seq as usize,
            start as usize,
            duration as usize,
            part,
        )
    };
    // the first NaN in segment order, as a serial copy would find it
    let copied: Result<(), Error> = if parts.len() > 1 && total >= PARALLEL_MIN_SCORES {
        parts
            .into_par_iter()
            .map(copy)
            .collect::<Vec<_>>()
            .into_iter()
            .collect()
    } else {
        parts.into_iter().try_for_each(copy)
    };
    copied?;
    Ok(scores)
}

impl DenseFsaVecOf<'_> {
    /// Whether the log-probs are read in place (the borrowed form) rather than copied.
    pub fn is_borrowed(&self) -> bool {
        self.log_probs.is_some()
    }

    /// The number of dense FSAs (supervision segments).
    pub fn num_fsas(&self) -> usize {
        self.segments.len()
    }

    /// The number of symbols `C` (the scores have `C + 1` columns).
    pub fn num_symbols(&self) -> usize {
        self.num_cols - 1
    }

    /// The number of columns of [`DenseFsaVec::scores`]: `C + 1`.
    pub fn num_cols(&self) -> usize {
        self.num_cols
    }

    /// The number of frames of FSA `i`, not counting the final row (k2's `duration`).
    pub fn duration(&self, i: usize) -> usize {
        (self.row_splits[i + 1] - self.row_splits[i] - 1) as usize
    }

    /// The row splits of the scores: FSA `i` owns rows `row_splits[i]..row_splits[i + 1]`.
    pub fn row_splits(&self) -> &[i32] {
        &self.row_splits
    }

    /// The supervision segments as given (durations cut at the end of the sequence by
    /// [`DenseFsaVec::with_allow_truncate`]).
    pub fn segments(&self) -> &[[i32; 3]] {
        &self.segments
    }

    /// The shape `[N, T, C]` of the `log_probs` this was built from.
    pub fn log_probs_dim(&self) -> [usize; 3] {
        self.log_probs_dim
    }

    /// All scores, row-major, `num_cols()` per row (the `b_arc_map` of
    /// [`intersect_dense`](crate::intersect_dense) indexes into this).
    ///
    /// The borrowed form builds them on the first call (a copy of the segments' frames),
    /// and panics if that allocation fails: [`DenseFsaVecOf::try_scores`] returns the error
    /// instead (the operations that read this layout call it first).
    pub fn scores(&self) -> &[f32] {
        self.try_scores()
            .expect("the scores of a borrowed DenseFsaVec could not be allocated")
    }

    /// [`DenseFsaVecOf::scores`], with a failed allocation of the borrowed form's copy as
    /// [`Error::TooLarge`] instead of a panic.
    pub fn try_scores(&self) -> Result<&[f32], Error> {
        if let Some(scores) = self.scores.get() {
            return Ok(scores);
        }
        let lp = self
            .log_probs
            .expect("a DenseFsaVec without scores borrows");
        let total =
            *self.row_splits.last().expect("row splits start with 0") as usize * self.num_cols;
        // (the frames were checked for NaN when borrowed: only the allocation can fail)
        let built = padded_scores(lp, &self.segments, &self.row_splits, total)?;
        // another thread may have built them meanwhile: either copy is the same
        Ok(self.scores.get_or_init(|| built))
    }

    /// Segment `i`'s scores in the columns `cols` (ascending, of k2's layout: 0 is label
    /// `-1`, `c + 1` symbol `c`): `duration(i) + 1` rows of `cols.len()` values, the last
    /// the final row, written to `out`. Reads the log-probs in place when borrowed.
    pub(crate) fn gather_columns(&self, i: usize, cols: &[u32], out: &mut Vec<f32>) {
        out.clear();
        let duration = self.duration(i);
        let Some(lp) = self.log_probs else {
            for row in self.fsa_scores(i).chunks_exact(self.num_cols) {
                out.extend(cols.iter().map(|&c| row[c as usize]));
            }
            return;
        };
        let [seq, start, _] = self.segments[i];
        let (seq, start) = (seq as usize, start as usize);
        let frames = lp.slice(ndarray::s![seq, start..start + duration, ..]);
        // column 0 (label -1) is -inf on every frame; the symbols are columns 1..
        let blank_col = cols.first() == Some(&0);
        let symbols = &cols[blank_col as usize..];
        for row in frames.outer_iter() {
            if blank_col {
                out.push(f32::NEG_INFINITY);
            }
            match row.as_slice() {
                Some(r) => out.extend(symbols.iter().map(|&c| r[c as usize - 1])),
                None => out.extend(symbols.iter().map(|&c| row[c as usize - 1])),
            }
        }
        // the final row: only label -1
        out.extend(
            cols.iter()
                .map(|&c| if c == 0 { 0.0 } else { f32::NEG_INFINITY }),
        );
    }

    /// The scores rows of FSA `i` (its `duration(i) + 1` rows, row-major).
    pub fn fsa_scores(&self, i: usize) -> &[f32] {
        let (r0, r1) = (self.row_splits[i] as usize, self.row_splits[i + 1] as usize);
        &self.scores()[r0 * self.num_cols..r1 * self.num_cols]
    }

    /// Maps an index into [`DenseFsaVec::scores`] back to the `(sequence, frame, symbol)` of
    /// `log_probs` it was copied from; `None` for the added column and the final rows.
    pub fn scores_index_to_log_probs(&self, index: usize) -> Option<(usize, usize, usize)> {
        let row = index / self.num_cols;
        let col = index % self.num_cols;
        let num_rows = *self.row_splits.last().expect("row splits start with 0") as usize;
        if col == 0 || row >= num_rows {
            return None;
        }
        let fsa = self.row_splits.partition_point(|&s| s as usize <= row) - 1;
        let local = row - self.row_splits[fsa] as usize;
        if local >= self.duration(fsa) {
            return None;
        }
        let [seq, start, _] = self.segments[fsa];
        Some((seq as usize, start as usize + local, col - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    fn lp(n: usize, t: usize, c: usize) -> Array3<f32> {
        Array3::from_shape_fn((n, t, c), |(i, j, k)| (i * 100 + j * 10 + k) as f32)
    }

    #[test]
    fn layout_matches_k2() {
        let x = lp(2, 3, 2);
        let d = DenseFsaVec::new(x.view(), &[[1, 1, 2], [0, 0, 1]]);
        let inf = f32::NEG_INFINITY;
        assert_eq!(d.row_splits(), &[0, 3, 5]);
        assert_eq!(
            d.scores(),
            &[
                inf, 110., 111., inf, 120., 121., 0., inf, inf, // segment 0
                inf, 0., 1., 0., inf, inf // segment 1
            ]
        );
        assert_eq!(d.duration(0), 2);
        assert_eq!(d.duration(1), 1);
        assert_eq!(d.scores_index_to_log_probs(4), Some((1, 2, 0)));
        assert_eq!(d.scores_index_to_log_probs(3), None);
        assert_eq!(d.scores_index_to_log_probs(7), None);
        assert_eq!(d.scores_index_to_log_probs(11), Some((0, 0, 1)));
    }

    #[test]
    fn strided_views_read_the_right_values() {
        let x = lp(2, 3, 4);
        let view = x.slice(ndarray::s![.., .., ..;2]);
        let d = DenseFsaVec::new(view, &[[0, 2, 1]]);
        assert_eq!(d.fsa_scores(0)[..3], [f32::NEG_INFINITY, 20., 22.]);
    }

    #[test]
    fn nan_in_a_strided_view_is_found_at_its_view_position() {
        let mut x = lp(2, 3, 4);
        x[[0, 1, 1]] = f32::NAN; // a column the view skips
        let view = x.slice(ndarray::s![.., .., ..;2]);
        assert!(DenseFsaVec::try_new(view, &[[0, 0, 3]]).is_ok());
        x[[0, 1, 2]] = f32::NAN; // the view's symbol 1
        let view = x.slice(ndarray::s![.., .., ..;2]);
        assert_eq!(
            DenseFsaVec::try_new(view, &[[0, 0, 3]]),
            Err(Error::NanLogProb {
                sequence: 0,
                frame: 1,
                symbol: 1
            })
        );
    }

    #[test]
    fn bad_segments_are_errors() {
        let x = lp(2, 3, 2);
        for seg in [
            [2, 0, 1],
            [-1, 0, 1],
            [0, -1, 1],
            [0, 0, -1],
            [0, 2, 2],
            [0, 3, 1],
        ] {
            assert_eq!(
                DenseFsaVec::try_new(x.view(), &[[0, 0, 1], seg]),
                Err(Error::SegmentOutOfRange {
                    segment: 1,
                    sequence: seg[0],
                    start: seg[1],
                    duration: seg[2],
                    num_sequences: 2,
                    num_frames: 3
                }),
                "{seg:?}"
            );
        }
        let msg = DenseFsaVec::try_new(x.view(), &[[0, 2, 2]])
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            "supervision segment 0 (sequence 0, start frame 2, 2 frames) does not fit log_probs with 2 sequences of 3 frames"
        );
    }

    #[test]
    #[should_panic(expected = "DenseFsaVec::new: ")]
    fn new_panics_where_try_new_refuses() {
        let x = lp(2, 3, 2);
        let _ = DenseFsaVec::new(x.view(), &[[0, 2, 2]]);
    }

    #[test]
    fn nan_is_an_error_where_a_segment_reads_it() {
        let mut x = lp(2, 3, 2);
        x[[1, 2, 1]] = f32::NAN;
        assert!(DenseFsaVec::try_new(x.view(), &[[1, 0, 2]]).is_ok());
        assert_eq!(
            DenseFsaVec::try_new(x.view(), &[[1, 1, 2]]),
            Err(Error::NanLogProb {
                sequence: 1,
                frame: 2,
                symbol: 1
            })
        );
    }

    #[test]
    fn empty_segments_have_only_the_final_row() {
        let x = lp(1, 3, 1);
        let d = DenseFsaVec::new(x.view(), &[[0, 2, 0]]);
        assert_eq!(d.scores(), &[0., f32::NEG_INFINITY]);
        assert_eq!(d.duration(0), 0);
    }

    #[test]
    fn a_segment_starting_at_the_end_is_an_error_even_when_empty() {
        // k2 asserts `0 <= start_frame < T` for every segment
        let x = lp(1, 3, 1);
        for allow_truncate in [0, 5] {
            assert_eq!(
                DenseFsaVec::with_allow_truncate(x.view(), &[[0, 3, 0]], allow_truncate),
                Err(Error::SegmentOutOfRange {
                    segment: 0,
                    sequence: 0,
                    start: 3,
                    duration: 0,
                    num_sequences: 1,
                    num_frames: 3
                })
            );
        }
    }

    #[test]
    fn allow_truncate_cuts_segments_at_the_end_of_the_sequence() {
        let x = lp(2, 3, 2);
        let inf = f32::NEG_INFINITY;
        // sequence 1 from frame 1: 2 frames remain; 3 asked, 1 allowed past the end
        let d = DenseFsaVec::with_allow_truncate(x.view(), &[[1, 1, 3], [0, 0, 2]], 1).unwrap();
        assert_eq!(d.segments(), &[[1, 1, 2], [0, 0, 2]]);
        assert_eq!(d.duration(0), 2);
        assert_eq!(
            d.fsa_scores(0),
            &[inf, 110., 111., inf, 120., 121., 0., inf, inf]
        );
        // the same as the segment that fits
        let exact = DenseFsaVec::new(x.view(), &[[1, 1, 2], [0, 0, 2]]);
        assert_eq!(d.scores(), exact.scores());
        assert_eq!(d.row_splits(), exact.row_splits());
        // the checks alone give the cut durations (1 frame left of sequence 0 from frame 2)
        assert_eq!(
            DenseFsaVec::checked_durations(x.dim(), &[[1, 1, 3], [0, 0, 2], [0, 2, 2]], 1),
            Ok(vec![2, 2, 1])
        );
        // exactly `allow_truncate` past the end is allowed, one more is not
        assert!(DenseFsaVec::with_allow_truncate(x.view(), &[[0, 2, 3]], 2).is_ok());
        let err = DenseFsaVec::with_allow_truncate(x.view(), &[[0, 0, 1], [0, 2, 4]], 2);
        assert_eq!(
            DenseFsaVec::checked_durations(x.dim(), &[[0, 0, 1], [0, 2, 4]], 2),
            err.clone().map(|_| vec![])
        );
        assert_eq!(
            err,
            Err(Error::SegmentOutOfRange {
                segment: 1,
                sequence: 0,
                start: 2,
                duration: 4,
                num_sequences: 2,
                num_frames: 3
            })
        );
        // without it, k2's rule `start + frames <= T`
        assert_eq!(
            DenseFsaVec::try_new(x.view(), &[[1, 1, 3]]),
            Err(Error::SegmentOutOfRange {
                segment: 0,
                sequence: 1,
                start: 1,
                duration: 3,
                num_sequences: 2,
                num_frames: 3
            })
        );
    }

    /// k2's layout built by a plain loop, the model for the copy (serial or in parallel).
    fn naive_scores(x: &Array3<f32>, segments: &[[i32; 3]]) -> Vec<f32> {
        let c = x.dim().2;
        let mut out = Vec::new();
        for &[seq, start, duration] in segments {
            for frame in start..start + duration {
                out.push(f32::NEG_INFINITY);
                (0..c).for_each(|k| out.push(x[[seq as usize, frame as usize, k]]));
            }
            out.push(0.0);
            out.extend(std::iter::repeat_n(f32::NEG_INFINITY, c));
        }
        out
    }

    #[test]
    fn large_batches_copied_in_parallel_match_the_plain_loop() {
        // past PARALLEL_MIN_SCORES: 2 x 300 x 129 frames and columns per segment
        let (n, t, c) = (3, 300, 128);
        let x = Array3::from_shape_fn((n, t, c), |(i, j, k)| (i * 100_000 + j * 200 + k) as f32);
        // unsorted, overlapping, one of 0 frames, one strided view below
        let segments = [
            [2, 5, 295],
            [0, 0, 300],
            [1, 17, 0],
            [2, 0, 150],
            [1, 40, 200],
        ];
        let d = DenseFsaVec::new(x.view(), &segments);
        assert!(d.scores().len() >= PARALLEL_MIN_SCORES);
        assert_eq!(d.scores(), naive_scores(&x, &segments).as_slice());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let in_pool = pool.install(|| DenseFsaVec::new(x.view(), &segments));
        assert_eq!(in_pool, d);
        let strided = x.slice(ndarray::s![.., .., ..;2]).to_owned();
        let d = DenseFsaVec::new(x.slice(ndarray::s![.., .., ..;2]), &segments);
        assert_eq!(d.scores(), naive_scores(&strided, &segments).as_slice());
    }

    #[test]
    fn in_parallel_the_first_nan_in_segment_order_is_reported() {
        let (n, t, c) = (2, 400, 200);
        let mut x = Array3::from_shape_fn((n, t, c), |(i, j, k)| (i + j + k) as f32);
        x[[1, 10, 3]] = f32::NAN; // read by segment 2 only
        x[[0, 300, 7]] = f32::NAN; // read by segments 1 and 3
        x[[0, 350, 1]] = f32::NAN;
        let segments = [[1, 20, 300], [0, 100, 300], [1, 0, 50], [0, 299, 100]];
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for _ in 0..20 {
            assert_eq!(
                pool.install(|| DenseFsaVec::try_new(x.view(), &segments)),
                Err(Error::NanLogProb {
                    sequence: 0,
                    frame: 300,
                    symbol: 7
                })
            );
        }
    }

    /// Random log-probs with `-inf` now and then, CTC targets, and segments (overlapping,
    /// unsorted, one of 0 frames on a sequence of its own).
    fn ctc_case(seed: u64) -> (Array3<f32>, Vec<Vec<i32>>, Vec<[i32; 3]>) {
        let mut state = seed;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let (n, t, c) = (3, 40, 9);
        let mut x = Array3::<f32>::zeros((n, t, c));
        for v in x.iter_mut() {
            *v = if next(30) == 0 {
                f32::NEG_INFINITY
            } else {
                -(next(1 << 20) as f32 / (1 << 20) as f32) * 6.0
            };
        }
        let segments = vec![[2, 3, 37], [0, 0, 40], [1, 5, 30], [0, 10, 25], [1, 39, 0]];
        let targets = segments
            .iter()
            .map(|&[_, _, d]| (0..(d as u64 / 4)).map(|_| 1 + next(8) as i32).collect())
            .collect();
        (x, targets, segments)
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn borrowed_and_owned_give_the_same_losses_and_gradients() {
        for seed in 0..6 {
            let (x, targets, segments) = ctc_case(seed);
            let graphs = crate::FsaVec::ctc_graph(&targets, seed % 2 == 1).unwrap();
            let owned = DenseFsaVec::new(x.view(), &segments);
            assert!(!owned.is_borrowed());
            // a C-contiguous view, the same buffer through from_slice, and a strided view
            // (every other symbol of a wider array)
            let (n, t, c) = x.dim();
            let flat = x.as_slice().unwrap();
            let wide = Array3::from_shape_fn((n, t, 2 * c), |(i, j, k)| {
                if k % 2 == 0 {
                    x[[i, j, k / 2]]
                } else {
                    f32::NAN // never read
                }
            });
            let borrowed = [
                DenseFsaVecOf::borrowed(x.view(), &segments, 0).unwrap(),
                DenseFsaVecOf::from_slice(flat, [n, t, c], [t * c, c, 1], &segments, 0).unwrap(),
                DenseFsaVecOf::borrowed(wide.slice(ndarray::s![.., .., ..;2]), &segments, 0)
                    .unwrap(),
            ];
            for beam in [f32::INFINITY, 10.0, 2.0] {
                let want = crate::ctc_loss(&graphs, &owned, beam).unwrap();
                for (form, dense) in borrowed.iter().enumerate() {
                    assert!(dense.is_borrowed());
                    let got = crate::ctc_loss(&graphs, dense, beam).unwrap();
                    let loss_bits = |l: &[f64]| l.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                    assert_eq!(loss_bits(&got.loss), loss_bits(&want.loss), "form {form}");
                    assert_eq!(
                        bits(got.grad.as_slice().unwrap()),
                        bits(want.grad.as_slice().unwrap()),
                        "seed {seed} form {form} beam {beam}"
                    );
                }
            }
            // k2's layout built on demand is the copy's
            for dense in &borrowed {
                assert_eq!(bits(dense.scores()), bits(owned.scores()));
                assert!(*dense == owned);
                let a = crate::intersect_dense(&graphs, dense, 5.0, None).unwrap();
                let b = crate::intersect_dense(&graphs, &owned, 5.0, None).unwrap();
                assert_eq!(a.1, b.1);
                assert_eq!(a.2, b.2);
            }
        }
    }

    #[test]
    fn borrowed_log_probs_are_checked_as_copied_ones() {
        let mut x = lp(2, 3, 2);
        x[[1, 2, 1]] = f32::NAN;
        assert!(DenseFsaVecOf::borrowed(x.view(), &[[1, 0, 2]], 0).is_ok());
        let nan = Error::NanLogProb {
            sequence: 1,
            frame: 2,
            symbol: 1,
        };
        assert_eq!(
            DenseFsaVecOf::borrowed(x.view(), &[[0, 0, 3], [1, 1, 2]], 0).unwrap_err(),
            nan
        );
        let flat = x.as_slice().unwrap();
        assert_eq!(
            DenseFsaVecOf::from_slice(flat, [2, 3, 2], [6, 2, 1], &[[1, 1, 2]], 0).unwrap_err(),
            nan
        );
        assert!(matches!(
            DenseFsaVecOf::borrowed(x.view(), &[[0, 2, 2]], 0),
            Err(Error::SegmentOutOfRange { segment: 0, .. })
        ));
        assert!(DenseFsaVecOf::borrowed(x.view(), &[[0, 2, 2]], 1).is_ok());
    }

    #[test]
    fn bad_layouts_are_errors() {
        let data = vec![0f32; 24];
        let what = |r: Result<DenseFsaVecOf<'_>, Error>| match r {
            Err(Error::InvalidArgument { what, value, .. }) => (what, value as usize),
            other => panic!("{other:?}"),
        };
        let seg = [[0, 0, 1]];
        // one element short, and strides that run far past the end
        assert_eq!(
            what(DenseFsaVecOf::from_slice(
                &data[..23],
                [2, 3, 4],
                [12, 4, 1],
                &seg,
                0
            )),
            ("log_probs length", 23)
        );
        assert_eq!(
            what(DenseFsaVecOf::from_slice(
                &data,
                [2, 3, 4],
                [12, 4, 2],
                &seg,
                0
            )),
            ("log_probs length", 24)
        );
        // sizes whose product overflows
        assert_eq!(
            what(DenseFsaVecOf::from_slice(
                &data,
                [2, 3, 4],
                [usize::MAX / 2, 4, 1],
                &seg,
                0
            )),
            ("log_probs length", 24)
        );
        assert_eq!(
            what(DenseFsaVecOf::from_slice(
                &data,
                [usize::MAX, 1, 1],
                [2, 1, 1],
                &seg,
                0
            )),
            ("log_probs length", 24)
        );
        // overlapping: frames 2 apart but 4 symbols each; a zero stride; sequences
        // inside frames
        assert_eq!(
            what(DenseFsaVecOf::from_slice(
                &data,
                [2, 3, 4],
                [12, 2, 1],
                &seg,
                0
            )),
            ("log_probs stride of axis 1 (frames)", 2)
        );
        assert_eq!(
            what(DenseFsaVecOf::from_slice(
                &data,
                [2, 3, 4],
                [12, 4, 0],
                &seg,
                0
            )),
            ("log_probs stride of axis 2 (symbols)", 0)
        );
        assert_eq!(
            what(DenseFsaVecOf::from_slice(
                &data,
                [2, 3, 4],
                [3, 8, 1],
                &seg,
                0
            )),
            ("log_probs stride of axis 0 (sequences)", 3)
        );
        // the same buffer read transposed, and an empty shape, are fine
        assert!(DenseFsaVecOf::from_slice(&data, [2, 3, 4], [1, 2, 6], &seg, 0).is_ok());
        assert!(DenseFsaVecOf::from_slice(&data, [2, 3, 4], [4, 8, 1], &seg, 0).is_ok());
        assert!(DenseFsaVecOf::from_slice(&[], [1, 1, 0], [0, 0, 0], &seg, 0).is_ok());
        let msg = DenseFsaVecOf::from_slice(&data, [2, 3, 4], [12, 2, 1], &seg, 0)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("log_probs stride of axis 1 (frames) = 2"),
            "{msg}"
        );
    }
}
