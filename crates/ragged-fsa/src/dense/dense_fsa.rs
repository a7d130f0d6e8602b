//! `DenseFsaVec`: per-frame log-probabilities of a batch of supervision segments, laid out as
//! k2 lays them out (one extra final row per segment, one extra column for label `-1`).

use ndarray::ArrayView3;
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
        match row.as_slice() {
            Some(s) => {
                // a reduction without early exit, which the compiler vectorizes
                if s.iter().fold(false, |any, x| any | x.is_nan()) {
                    let symbol = s.iter().position(|x| x.is_nan()).unwrap_or(0);
                    return Err(nan_at(frame, symbol));
                }
                out[1..].copy_from_slice(s);
            }
            None => {
                if let Some(symbol) = row.iter().position(|x| x.is_nan()) {
                    return Err(nan_at(frame, symbol));
                }
                out[1..]
                    .iter_mut()
                    .zip(row.iter())
                    .for_each(|(o, &x)| *o = x);
            }
        }
    }
    let last = &mut part[duration * num_cols..];
    last[0] = 0.0;
    last[1..].fill(f32::NEG_INFINITY);
    Ok(())
}

/// Network outputs as dense FSAs, one per supervision segment (k2's `DenseFsaVec`).
///
/// Segment `i` with `d` frames owns rows `row_splits[i]..row_splits[i + 1]` (`d + 1` rows) of
/// the `scores` matrix, which has `C + 1` columns: column 0 is label `-1` and column `c + 1`
/// is symbol `c`. Its first `d` rows hold `log_probs[seq, start..start + d, ..]` with `-inf`
/// in column 0; its last row is `[0, -inf, ..., -inf]` (only the final arc is possible).
///
/// **Invariants:** no score is NaN; `row_splits` starts at 0 and grows by `duration + 1` per
/// segment; every segment lies inside its sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseFsaVec {
    scores: Vec<f32>,
    num_cols: usize,
    row_splits: Vec<i32>,
    segments: Vec<[i32; 3]>,
    log_probs_dim: [usize; 3],
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
        let num_cols = c.checked_add(1).ok_or(Error::TooLarge {
            what: "number of symbols",
        })?;
        // check the segments and count the rows before touching memory
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
        Ok(Self {
            scores,
            num_cols,
            row_splits,
            segments,
            log_probs_dim: [n, t, c],
        })
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
    pub fn scores(&self) -> &[f32] {
        &self.scores
    }

    /// The scores rows of FSA `i` (its `duration(i) + 1` rows, row-major).
    pub fn fsa_scores(&self, i: usize) -> &[f32] {
        let (r0, r1) = (self.row_splits[i] as usize, self.row_splits[i + 1] as usize);
        &self.scores[r0 * self.num_cols..r1 * self.num_cols]
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
        // exactly `allow_truncate` past the end is allowed, one more is not
        assert!(DenseFsaVec::with_allow_truncate(x.view(), &[[0, 2, 3]], 2).is_ok());
        let err = DenseFsaVec::with_allow_truncate(x.view(), &[[0, 0, 1], [0, 2, 4]], 2);
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
}
