//! The Canny edge detector as `cv2.Canny` computes it: Sobel 3x3 with replicated borders,
//! magnitude (L1 or squared L2 in integers), non-maximum suppression with OpenCV's sector
//! tests and tie rules, double threshold, and 8-connected hysteresis that is deterministic
//! in parallel (a local pass per band, then a serial fix-up across band borders).

use rayon::prelude::*;

use crate::convolve::Border;
use crate::error::Error;
use crate::explicit::Array;
use crate::load::{bands, compute_with, schedule_bands, Plain, Threads};
use crate::shape::{Dim2, Shape};
use crate::source::Source;

use super::sobel::sobel_pairs;

/// The gradient norm used for the thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Norm {
    /// `|dx| + |dy|` (OpenCV's default).
    #[default]
    L1,
    /// `sqrt(dx^2 + dy^2)`, compared as `dx^2 + dy^2` against squared thresholds.
    L2,
}

/// Parameters of [`canny`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Canny {
    /// The low (weak-edge) threshold.
    pub low: f64,
    /// The high (strong-edge) threshold; swapped with `low` when smaller, as OpenCV does.
    pub high: f64,
    /// The gradient norm.
    pub norm: Norm,
    /// Threads of every stage.
    pub threads: Threads,
}

impl Default for Canny {
    fn default() -> Self {
        Canny {
            low: 50.0,
            high: 150.0,
            norm: Norm::L1,
            threads: Threads::All,
        }
    }
}

/// `tan(22.5 deg)` with 15 fraction bits, rounded.
const TG22: i32 = 13573;
const SHIFT: u32 = 15;

/// Map classes during suppression and hysteresis.
const NONE: u8 = 0;
const WEAK: u8 = 1;
const EDGE: u8 = 2;

/// The integer thresholds OpenCV compares magnitudes against.
fn thresholds(p: &Canny) -> Result<(i64, i64), Error> {
    for (name, v) in [("low", p.low), ("high", p.high)] {
        if v.is_nan() {
            return Err(Error::BadParameter {
                name,
                value: v.to_string(),
                rule: "a Canny threshold must be a number",
            });
        }
    }
    let (mut low, mut high) = if p.low > p.high {
        (p.high, p.low)
    } else {
        (p.low, p.high)
    };
    if p.norm == Norm::L2 {
        low = low.min(32767.0);
        high = high.min(32767.0);
        if low > 0.0 {
            low *= low;
        }
        if high > 0.0 {
            high *= high;
        }
    }
    Ok((
        low.floor().max(i64::MIN as f64) as i64,
        high.floor().max(i64::MIN as f64) as i64,
    ))
}

#[inline(always)]
fn magnitude(g: [i16; 2], norm: Norm) -> i32 {
    let (x, y) = (g[0] as i32, g[1] as i32);
    match norm {
        Norm::L1 => x.abs() + y.abs(),
        Norm::L2 => x * x + y * y,
    }
}

/// Suppression and double threshold at one pixel of gradient `g` and magnitude `m`:
/// `NONE`, `WEAK` or `EDGE`. `mag_at(dy, dx)` is the magnitude of a neighbour (0 outside).
#[inline(always)]
fn decide(g: [i16; 2], m: i32, low: i64, high: i64, mag_at: impl Fn(isize, isize) -> i32) -> u8 {
    if (m as i64) <= low {
        return NONE;
    }
    let (xs, ys) = (g[0] as i32, g[1] as i32);
    let ax = xs.abs();
    let ay = ys.abs() << SHIFT;
    let tg22x = ax * TG22;
    let is_max = if ay < tg22x {
        m > mag_at(0, -1) && m >= mag_at(0, 1)
    } else {
        let tg67x = tg22x + (ax << (SHIFT + 1));
        if ay > tg67x {
            m > mag_at(-1, 0) && m >= mag_at(1, 0)
        } else {
            let s: isize = if (xs ^ ys) < 0 { -1 } else { 1 };
            m > mag_at(-1, -s) && m > mag_at(1, s)
        }
    };
    match (is_max, m as i64 > high) {
        (false, _) => NONE,
        (true, true) => EDGE,
        (true, false) => WEAK,
    }
}

/// Non-maximum suppression and double threshold over a gradient plane, delayed: a source
/// of map classes. Whole row spans over explicit gradient memory are computed from three
/// rows of magnitudes at a time; anything else element by element, with the same rules.
#[derive(Clone, Copy, Debug)]
struct Suppress<G> {
    grad: G,
    norm: Norm,
    low: i64,
    high: i64,
}

impl<G: Source<Shape = Dim2, Elem = [i16; 2]>> Source for Suppress<G> {
    type Elem = u8;
    type Shape = Dim2;
    const LINEAR: bool = false;
    fn extent(&self) -> Dim2 {
        self.grad.extent()
    }
    fn index(&self, idx: Dim2) -> u8 {
        let extent = self.grad.extent();
        if !extent.contains(idx) {
            crate::error::index_out_of_bounds(idx, extent);
        }
        // SAFETY: checked just above.
        unsafe { self.index_unchecked(idx) }
    }
    #[inline(always)]
    unsafe fn index_unchecked(&self, idx: Dim2) -> u8 {
        let Dim2(rows, cols) = self.grad.extent();
        let Dim2(y, x) = idx;
        let norm = self.norm;
        let mag_at = |dy: isize, dx: isize| -> i32 {
            let (yy, xx) = (y as isize + dy, x as isize + dx);
            if yy < 0 || xx < 0 || yy as usize >= rows || xx as usize >= cols {
                0
            } else {
                // SAFETY: checked inside the extent just above.
                magnitude(
                    unsafe { self.grad.index_unchecked(Dim2(yy as usize, xx as usize)) },
                    norm,
                )
            }
        };
        // SAFETY: the caller keeps idx inside the extent.
        let g = unsafe { self.grad.index_unchecked(idx) };
        decide(g, magnitude(g, norm), self.low, self.high, mag_at)
    }
    #[inline(always)]
    unsafe fn fill_span(
        &self,
        extent: Dim2,
        ncols: usize,
        row: usize,
        cols: std::ops::Range<usize>,
        out: *mut u8,
    ) {
        const CH: usize = 256;
        let Dim2(rows, _) = extent;
        // SAFETY (whole body): the caller keeps the span inside the extent and `out`
        // writable for it; every slice asked of the gradient lies inside the extent.
        unsafe {
            if cols.is_empty()
                || self
                    .grad
                    .span_slice(ncols, row, cols.start..cols.start + 1)
                    .is_none()
            {
                return crate::source::fill_span_by_elements(self, extent, ncols, row, cols, out);
            }
            let mut mags = [[0i32; CH + 2]; 3];
            let mut c = cols.start;
            while c < cols.end {
                let n = CH.min(cols.end - c);
                // mags[slot][k] is the magnitude at column c - 1 + k of row row - 1 + slot.
                // The middle row first: a chunk with nothing above `low` is all NONE.
                let here = self
                    .grad
                    .span_slice(ncols, row, c..c + n)
                    .expect("explicit gradient");
                let any_above = here.iter().fold(false, |any, &g| {
                    any | (magnitude(g, self.norm) as i64 > self.low)
                });
                if !any_above {
                    std::ptr::write_bytes(out.add(c - cols.start), NONE, n);
                    c += n;
                    continue;
                }
                for (slot, buf) in mags.iter_mut().enumerate() {
                    buf[..n + 2].fill(0);
                    let r = row as isize + slot as isize - 1;
                    if r < 0 || r as usize >= rows {
                        continue;
                    }
                    let lo = c.saturating_sub(1);
                    let hi = (c + n + 1).min(ncols);
                    let slice = self
                        .grad
                        .span_slice(ncols, r as usize, lo..hi)
                        .expect("explicit gradient");
                    let off = lo + 1 - c;
                    for (k, &g) in slice.iter().enumerate() {
                        buf[off + k] = magnitude(g, self.norm);
                    }
                }
                for (k, &g) in here.iter().enumerate() {
                    let j = k + 1;
                    let mag_at =
                        |dy: isize, dx: isize| mags[(1 + dy) as usize][(j as isize + dx) as usize];
                    out.add(c - cols.start + k)
                        .write(decide(g, mags[1][j], self.low, self.high, mag_at));
                }
                c += n;
            }
        }
    }
}

/// Grows edges from the `EDGE` positions on `stack` into 8-connected `WEAK` pixels of
/// `map` (rows `0..rows` of width `cols`).
fn flood(map: &mut [u8], rows: usize, cols: usize, mut stack: Vec<usize>) {
    while let Some(p) = stack.pop() {
        let (y, x) = (p / cols, p % cols);
        let y0 = y.saturating_sub(1);
        let y1 = (y + 1).min(rows - 1);
        let x0 = x.saturating_sub(1);
        let x1 = (x + 1).min(cols - 1);
        for yy in y0..=y1 {
            for xx in x0..=x1 {
                let q = yy * cols + xx;
                if map[q] == WEAK {
                    map[q] = EDGE;
                    stack.push(q);
                }
            }
        }
    }
}

/// Positions inside `range` of `map` holding `EDGE`, eight bytes at a time: `EDGE` is the
/// only class with bit 1 set, so a word's bits `0x02` mark its edge bytes.
fn edge_positions(map: &[u8], range: std::ops::Range<usize>) -> Vec<usize> {
    const MARK: u64 = 0x0202_0202_0202_0202;
    let mut out = Vec::new();
    let slice = &map[range.clone()];
    let words = slice.chunks_exact(8);
    let tail_start = range.start + slice.len() / 8 * 8;
    let tail = words.remainder();
    for (w, word) in words.enumerate() {
        let mut bits = u64::from_le_bytes(word.try_into().expect("8 bytes")) & MARK;
        while bits != 0 {
            out.push(range.start + w * 8 + (bits.trailing_zeros() / 8) as usize);
            bits &= bits - 1;
        }
    }
    out.extend(
        tail.iter()
            .enumerate()
            .filter(|(_, &v)| v == EDGE)
            .map(|(k, _)| tail_start + k),
    );
    out
}

/// Hysteresis over the whole map: a local flood in each band in parallel, then a serial
/// flood from the edge pixels of every band's first and last row, which crosses bands.
/// The result is the set of weak pixels 8-connected to a strong one, whatever the bands.
fn hysteresis(map: &mut Array<u8, Dim2>, threads: Threads) {
    let Dim2(rows, cols) = map.extent();
    if rows == 0 || cols == 0 {
        return;
    }
    let work = schedule_bands(&[(0..rows, 0..cols)], threads);
    let band_rows: Vec<std::ops::Range<usize>> = if work.is_empty() {
        bands(0..rows, 1)
    } else {
        work.into_iter().map(|(r, _)| r).collect()
    };
    let data = map.as_mut_slice();
    {
        let mut pieces: Vec<(&mut [u8], usize)> = Vec::with_capacity(band_rows.len());
        let mut rest = &mut *data;
        for r in &band_rows {
            let (head, tail) = rest.split_at_mut(r.len() * cols);
            pieces.push((head, r.len()));
            rest = tail;
        }
        let local = |(band, n_rows): (&mut [u8], usize)| {
            let seeds = edge_positions(band, 0..band.len());
            flood(band, n_rows, cols, seeds);
        };
        if pieces.len() > 1 {
            pieces.into_par_iter().for_each(local);
        } else {
            pieces.into_iter().for_each(local);
        }
    }
    if band_rows.len() > 1 {
        let mut seeds = Vec::new();
        for r in &band_rows {
            for row in [r.start, r.end - 1] {
                seeds.extend(edge_positions(data, row * cols..(row + 1) * cols));
            }
        }
        flood(data, rows, cols, seeds);
    }
}

/// Canny edges of a grey image: 255 on edges, 0 elsewhere (`cv2.Canny(img, low, high,
/// L2gradient = norm == L2)` with aperture 3). Like OpenCV, the input is not blurred.
///
/// Working memory: one plane of `[dx, dy]` (`i16` each) and the edge map (`u8`), which
/// becomes the output; magnitudes are recomputed from the gradient where they are read.
pub fn canny<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    params: &Canny,
) -> Result<Array<u8, Dim2>, Error> {
    let (low, high) = thresholds(params)?;
    let norm = params.norm;
    let threads = params.threads;
    let grad = sobel_pairs(a, Border::Replicate, threads);
    let extent = grad.extent();
    let classes = Suppress {
        grad: grad.view(),
        norm,
        low,
        high,
    };
    let mut map = compute_with(&classes, Plain, threads);
    drop(grad);
    hysteresis(&mut map, threads);
    let finish = |chunk: &mut [u8]| {
        chunk
            .iter_mut()
            .for_each(|c| *c = if *c == EDGE { 255 } else { 0 })
    };
    let n = extent.size();
    if n >= crate::load::PAR_THRESHOLD && threads.count() > 1 {
        let chunk = n.div_ceil(threads.count()).max(1);
        map.as_mut_slice().par_chunks_mut(chunk).for_each(finish);
    } else {
        finish(map.as_mut_slice());
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::super::sobel::{sobel_dx, sobel_dy};
    use super::*;
    use crate::delayed::SourceExt;
    use crate::explicit::View;

    /// A direct transcription of the algorithm's definition: Sobel with replicated
    /// borders, the same sector tests, then hysteresis by repeated sweeps until nothing
    /// changes.
    fn model(data: &[u8], rows: usize, cols: usize, low: i64, high: i64, l2: bool) -> Vec<u8> {
        let px = |y: isize, x: isize| -> i32 {
            let y = y.clamp(0, rows as isize - 1) as usize;
            let x = x.clamp(0, cols as isize - 1) as usize;
            data[y * cols + x] as i32
        };
        let mut dx = vec![0i32; rows * cols];
        let mut dy = vec![0i32; rows * cols];
        for y in 0..rows as isize {
            for x in 0..cols as isize {
                let i = y as usize * cols + x as usize;
                dx[i] = px(y - 1, x + 1) + 2 * px(y, x + 1) + px(y + 1, x + 1)
                    - px(y - 1, x - 1)
                    - 2 * px(y, x - 1)
                    - px(y + 1, x - 1);
                dy[i] = px(y + 1, x - 1) + 2 * px(y + 1, x) + px(y + 1, x + 1)
                    - px(y - 1, x - 1)
                    - 2 * px(y - 1, x)
                    - px(y - 1, x + 1);
            }
        }
        let mag = |y: isize, x: isize| -> i64 {
            if y < 0 || x < 0 || y >= rows as isize || x >= cols as isize {
                return 0;
            }
            let i = y as usize * cols + x as usize;
            let (a, b) = (dx[i] as i64, dy[i] as i64);
            if l2 {
                a * a + b * b
            } else {
                a.abs() + b.abs()
            }
        };
        let mut class = vec![0u8; rows * cols];
        for y in 0..rows as isize {
            for x in 0..cols as isize {
                let i = y as usize * cols + x as usize;
                let m = mag(y, x);
                if m <= low {
                    continue;
                }
                // The angle in floating point: sector boundaries at 22.5 and 67.5 degrees.
                let (gx, gy) = (dx[i] as f64, dy[i] as f64);
                let t = gy.abs() / gx.abs().max(1e-300);
                let ok = if gy.abs() < gx.abs() * 0.41421356 || (gx == 0.0 && gy == 0.0) {
                    m > mag(y, x - 1) && m >= mag(y, x + 1)
                } else if t > 2.41421356 || gx == 0.0 {
                    m > mag(y - 1, x) && m >= mag(y + 1, x)
                } else {
                    let s = if (gx < 0.0) != (gy < 0.0) { -1 } else { 1 };
                    m > mag(y - 1, x - s) && m > mag(y + 1, x + s)
                };
                if ok {
                    class[i] = if m > high { 2 } else { 1 };
                }
            }
        }
        loop {
            let mut changed = false;
            for y in 0..rows {
                for x in 0..cols {
                    if class[y * cols + x] != 1 {
                        continue;
                    }
                    let near = (y.saturating_sub(1)..=(y + 1).min(rows - 1)).any(|yy| {
                        (x.saturating_sub(1)..=(x + 1).min(cols - 1))
                            .any(|xx| class[yy * cols + xx] == 2)
                    });
                    if near {
                        class[y * cols + x] = 2;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        class
            .into_iter()
            .map(|c| if c == 2 { 255 } else { 0 })
            .collect()
    }

    fn scene(rows: usize, cols: usize, seed: u64) -> Vec<u8> {
        (0..rows * cols)
            .map(|i| {
                let (y, x) = ((i / cols) as f64, (i % cols) as f64);
                let disc = ((y - rows as f64 / 2.0).powi(2) + (x - cols as f64 / 3.0).powi(2))
                    .sqrt()
                    < rows as f64 / 3.0;
                let noise = ((i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as f64;
                (if disc { 180.0 } else { 40.0 + x * 0.5 } + noise * 3.0).min(255.0) as u8
            })
            .collect()
    }

    #[test]
    fn matches_the_model_and_is_deterministic_in_parallel() {
        for (rows, cols, seed) in [(64, 80, 1), (150, 130, 7), (33, 200, 3)] {
            let data = scene(rows, cols, seed);
            let a = View::new(Dim2(rows, cols), &data).unwrap();
            for (norm, low, high) in [
                (Norm::L1, 20.0, 60.0),
                (Norm::L2, 15.0, 50.0),
                (Norm::L1, 90.0, 30.0),
            ] {
                let p = Canny {
                    low,
                    high,
                    norm,
                    threads: Threads::Seq,
                };
                let seq = canny(&a, &p).unwrap();
                let (l, h) = thresholds(&p).unwrap();
                assert_eq!(
                    seq.as_slice(),
                    &model(&data, rows, cols, l, h, norm == Norm::L2)[..],
                    "{rows}x{cols} {norm:?}"
                );
                for t in [2, 3, 7] {
                    let par = canny(
                        &a,
                        &Canny {
                            threads: Threads::Fixed(t),
                            ..p
                        },
                    )
                    .unwrap();
                    assert_eq!(par, seq, "threads {t}");
                }
            }
        }
    }

    #[test]
    fn suppression_spans_equal_elements() {
        let (rows, cols) = (70, 600);
        let data = scene(rows, cols, 9);
        let a = View::new(Dim2(rows, cols), &data).unwrap();
        let grad = compute_with(
            &sobel_dx(a, Border::Replicate)
                .zip_with(sobel_dy(a, Border::Replicate), |x, y| [x, y])
                .unwrap(),
            Plain,
            Threads::Seq,
        );
        for norm in [Norm::L1, Norm::L2] {
            let s = Suppress {
                grad: grad.view(),
                norm,
                low: 10,
                high: 40,
            };
            let spans = compute_with(&s, Plain, Threads::Fixed(2));
            let elements: Vec<u8> = (0..rows * cols)
                .map(|i| s.index(Dim2(i / cols, i % cols)))
                .collect();
            assert_eq!(spans.as_slice(), &elements[..]);
        }
    }

    #[test]
    fn edge_positions_like_a_filter() {
        let map: Vec<u8> = (0..203u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 29) as u8 % 3)
            .collect();
        for range in [0..203, 5..200, 17..18, 9..9] {
            let want: Vec<usize> = range.clone().filter(|&p| map[p] == EDGE).collect();
            assert_eq!(edge_positions(&map, range), want);
        }
    }

    #[test]
    fn thresholds_follow_opencv() {
        let p = Canny {
            low: 10.5,
            high: 3.2,
            norm: Norm::L2,
            threads: Threads::Seq,
        };
        assert_eq!(thresholds(&p).unwrap(), (10, 110));
        assert!(thresholds(&Canny { low: f64::NAN, ..p }).is_err());
    }
}
