//! The Sobel 3x3 gradient (`cv2.Sobel(img, CV_16S, 1, 0)` and `(0, 1)`), its magnitude in
//! the L1 and L2 norms, and its direction.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::convolve::{border_interpolate, convolve2, Border, Convolved2, Stencil2};
use crate::delayed::{SourceExt, ZipWith};
use crate::error::Error;
use crate::explicit::Array;
use crate::load::{schedule_bands, Threads};
use crate::shape::{Dim2, Shape};
use crate::source::Source;

/// The Sobel stencil for d/dx (applied as correlation, like OpenCV).
pub const SOBEL_DX: Stencil2<i16, 3, 3> = Stencil2::new([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]);
/// The Sobel stencil for d/dy.
pub const SOBEL_DY: Stencil2<i16, 3, 3> = Stencil2::new([[-1, -2, -1], [0, 0, 0], [1, 2, 1]]);

/// The horizontal derivative, delayed, computed in `i16` (at most 1020 in magnitude).
#[allow(clippy::type_complexity)]
pub fn sobel_dx<A: Source<Shape = Dim2, Elem = u8>>(
    a: A,
    border: Border<u8>,
) -> Convolved2<A, i16, 3, 3> {
    convolve2(a, SOBEL_DX, border)
}

/// The vertical derivative, delayed, computed in `i16`.
#[allow(clippy::type_complexity)]
pub fn sobel_dy<A: Source<Shape = Dim2, Elem = u8>>(
    a: A,
    border: Border<u8>,
) -> Convolved2<A, i16, 3, 3> {
    convolve2(a, SOBEL_DY, border)
}

/// `|dx| + |dy|`, delayed.
#[allow(clippy::type_complexity)]
pub fn magnitude_l1<X, Y>(
    dx: X,
    dy: Y,
) -> Result<ZipWith<X, Y, impl Fn(i16, i16) -> i32 + Copy + Sync>, Error>
where
    X: Source<Elem = i16>,
    Y: Source<Elem = i16, Shape = X::Shape>,
{
    dx.zip_with(
        dy,
        (|x: i16, y: i16| (x as i32).abs() + (y as i32).abs()) as fn(i16, i16) -> i32,
    )
}

/// `sqrt(dx^2 + dy^2)` in `f32`, delayed (`cv2.magnitude`).
#[allow(clippy::type_complexity)]
pub fn magnitude_l2<X, Y>(
    dx: X,
    dy: Y,
) -> Result<ZipWith<X, Y, impl Fn(i16, i16) -> f32 + Copy + Sync>, Error>
where
    X: Source<Elem = i16>,
    Y: Source<Elem = i16, Shape = X::Shape>,
{
    dx.zip_with(
        dy,
        (|x: i16, y: i16| (x as f32).hypot(y as f32)) as fn(i16, i16) -> f32,
    )
}

/// The gradient direction `atan2(dy, dx)` in radians, in `(-pi, pi]`, delayed.
#[allow(clippy::type_complexity)]
pub fn direction<X, Y>(
    dx: X,
    dy: Y,
) -> Result<ZipWith<X, Y, impl Fn(i16, i16) -> f32 + Copy + Sync>, Error>
where
    X: Source<Elem = i16>,
    Y: Source<Elem = i16, Shape = X::Shape>,
{
    dx.zip_with(
        dy,
        (|x: i16, y: i16| (y as f32).atan2(x as f32)) as fn(i16, i16) -> f32,
    )
}

/// A row of the source widened by one column each side through `border` (`cols + 2`
/// bytes), or the constant row when `q` is `None`.
#[inline(always)]
fn padded_row<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    q: Option<usize>,
    border: &Border<u8>,
    out: &mut [u8],
) {
    let Dim2(_, cols) = a.extent();
    let constant = match border {
        Border::Constant(v) => *v,
        _ => 0,
    };
    let Some(q) = q else {
        out.fill(constant);
        return;
    };
    // SAFETY: row q and columns 0..cols lie inside the extent; `out` holds cols + 2.
    unsafe {
        match a.span_slice(cols, q, 0..cols) {
            Some(s) => out[1..cols + 1].copy_from_slice(s),
            None => a.fill_span(a.extent(), cols, q, 0..cols, out.as_mut_ptr().add(1)),
        }
    }
    for (p, at) in [(-1isize, 0usize), (cols as isize, cols + 1)] {
        out[at] = match border_interpolate(p, cols, border) {
            Some(s) => out[s + 1],
            None => constant,
        };
    }
}

/// `s` as memory to write. Sound because every function handed the result writes only
/// initialised `i16` values through it, so `s` stays initialised.
fn as_uninit(s: &mut [i16]) -> &mut [MaybeUninit<i16>] {
    // SAFETY: `MaybeUninit<i16>` has the layout of `i16`; the only callers pass the result
    // to `SobelRows::gradient`, which writes `i16` values and never uninitialised ones.
    unsafe { &mut *(s as *mut [i16] as *mut [MaybeUninit<i16>]) }
}

/// Buffers to compute the Sobel gradient of one row at a time: three padded source rows
/// (a ring: going down a band, each source row is padded once) are summed down the
/// columns (`p0 + 2 p1 + p2` and `p2 - p0`), then across.
pub(crate) struct SobelRows {
    p: [Vec<u8>; 3],
    /// The source row each of `p` holds (`Some(None)`: the constant border row; `None`:
    /// nothing yet).
    keys: [Option<Option<usize>>; 3],
    smooth: Vec<i16>,
    diff: Vec<i16>,
    /// The last row's `dx` (of [`SobelRows::row`]).
    pub(crate) dx: Vec<i16>,
    /// The last row's `dy`.
    pub(crate) dy: Vec<i16>,
}

impl SobelRows {
    /// Buffers for rows of `cols` pixels.
    pub(crate) fn new(cols: usize) -> Self {
        let w = cols + 2;
        SobelRows {
            p: [vec![0u8; w], vec![0u8; w], vec![0u8; w]],
            keys: [None; 3],
            smooth: vec![0i16; w],
            diff: vec![0i16; w],
            dx: vec![0i16; cols],
            dy: vec![0i16; cols],
        }
    }

    /// The gradient of image row `y` into `self.dx` and `self.dy`.
    #[inline(always)]
    pub(crate) fn row<A: Source<Shape = Dim2, Elem = u8>>(
        &mut self,
        a: &A,
        border: &Border<u8>,
        y: usize,
    ) {
        let (mut dx, mut dy) = (std::mem::take(&mut self.dx), std::mem::take(&mut self.dy));
        self.gradient(a, border, y, as_uninit(&mut dx), as_uninit(&mut dy));
        (self.dx, self.dy) = (dx, dy);
    }

    /// The three padded source rows of image row `y` (rows `y - 1`, `y`, `y + 1` through
    /// `border`, each `cols + 2` bytes: `p[x + 1]` is column `x`), loaded into the ring
    /// when not there yet.
    #[inline(always)]
    pub(crate) fn padded<A: Source<Shape = Dim2, Elem = u8>>(
        &mut self,
        a: &A,
        border: &Border<u8>,
        y: usize,
    ) -> [&[u8]; 3] {
        let slots = self.padded_slots(a, border, y);
        slots.map(|k| &self.p[k][..])
    }

    /// The ring slots of [`SobelRows::padded`].
    #[inline(always)]
    fn padded_slots<A: Source<Shape = Dim2, Elem = u8>>(
        &mut self,
        a: &A,
        border: &Border<u8>,
        y: usize,
    ) -> [usize; 3] {
        let Dim2(rows, _) = a.extent();
        let need: [Option<usize>; 3] =
            std::array::from_fn(|k| border_interpolate(y as isize + k as isize - 1, rows, border));
        for key in need {
            if self.keys.contains(&Some(key)) {
                continue;
            }
            let slot = self
                .keys
                .iter()
                .position(|k| k.is_none_or(|k| !need.contains(&k)))
                .expect("3 slots hold the at most 3 rows needed");
            padded_row(a, key, border, &mut self.p[slot]);
            self.keys[slot] = Some(key);
        }
        let slot_of = |key| {
            self.keys
                .iter()
                .position(|k| *k == Some(key))
                .expect("loaded above")
        };
        need.map(slot_of)
    }

    /// The gradient of image row `y`, written to every element of `dx` and `dy` (`cols`
    /// each).
    #[inline(always)]
    fn gradient<A: Source<Shape = Dim2, Elem = u8>>(
        &mut self,
        a: &A,
        border: &Border<u8>,
        y: usize,
        dx: &mut [MaybeUninit<i16>],
        dy: &mut [MaybeUninit<i16>],
    ) {
        let Dim2(_, cols) = a.extent();
        assert!(
            dx.len() == cols && dy.len() == cols,
            "sobel: gradient rows of {} and {} for {cols} columns",
            dx.len(),
            dy.len()
        );
        let [s0, s1, s2] = self.padded_slots(a, border, y);
        let (p0, p1, p2) = (&self.p[s0], &self.p[s1], &self.p[s2]);
        for (((s, d), (&u, &m)), &l) in self
            .smooth
            .iter_mut()
            .zip(self.diff.iter_mut())
            .zip(p0.iter().zip(p1))
            .zip(p2)
        {
            *s = i16::from(u) + 2 * i16::from(m) + i16::from(l);
            *d = i16::from(l) - i16::from(u);
        }
        let (smooth, diff) = (&self.smooth, &self.diff);
        for ((o, &l), &r) in dx.iter_mut().zip(&smooth[..cols]).zip(&smooth[2..]) {
            o.write(r - l);
        }
        for (((o, &l), &m), &r) in dy
            .iter_mut()
            .zip(&diff[..cols])
            .zip(&diff[1..cols + 1])
            .zip(&diff[2..])
        {
            o.write(l + 2 * m + r);
        }
    }
}

/// Rows `band` of the Sobel gradient, written to every element of `dx` and `dy` (the
/// band's rows).
#[inline(always)]
fn sobel_band<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    border: Border<u8>,
    band: std::ops::Range<usize>,
    dx: &mut [MaybeUninit<i16>],
    dy: &mut [MaybeUninit<i16>],
) {
    let Dim2(_, cols) = a.extent();
    assert!(
        dx.len() == band.len() * cols && dy.len() == dx.len(),
        "sobel: a band of {} rows with outputs of {} and {} elements",
        band.len(),
        dx.len(),
        dy.len()
    );
    let mut rows = SobelRows::new(cols);
    for ((y, ox), oy) in band
        .zip(dx.chunks_exact_mut(cols))
        .zip(dy.chunks_exact_mut(cols))
    {
        rows.gradient(a, &border, y, ox, oy);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sobel_band_avx2<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    border: Border<u8>,
    band: std::ops::Range<usize>,
    dx: &mut [MaybeUninit<i16>],
    dy: &mut [MaybeUninit<i16>],
) {
    sobel_band(a, border, band, dx, dy)
}

/// [`sobel_band`] with the AVX2 copy when `level` allows it.
fn sobel_band_best<A: Source<Shape = Dim2, Elem = u8>>(
    level: cpu_features::SimdLevel,
    a: &A,
    border: Border<u8>,
    band: std::ops::Range<usize>,
    dx: &mut [MaybeUninit<i16>],
    dy: &mut [MaybeUninit<i16>],
) {
    #[cfg(target_arch = "x86_64")]
    {
        use cpu_features::SimdLevel;
        // No AVX-512 copy: compiled with AVX-512 enabled, the band measured no faster
        // than the AVX2 copy on Zen 4 (see the crate guide).
        if level >= SimdLevel::Avx2 {
            // SAFETY: the processor supports AVX2 (`level` comes from `simd_level()`, capped by
            // the detected level).
            return unsafe { sobel_band_avx2(a, border, band, dx, dy) };
        }
    }
    let _ = level;
    sobel_band(a, border, band, dx, dy)
}

/// Splits `out` (rows of `w` elements) into the pieces of `bands`, which must cover it
/// (checked: the caller treats `out` as written once every piece is).
fn split_bands<'a, T>(
    out: &'a mut [T],
    w: usize,
    bands: &[std::ops::Range<usize>],
) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(bands.len());
    let mut rest = out;
    for r in bands {
        let (head, tail) = rest.split_at_mut(r.len() * w);
        pieces.push(head);
        rest = tail;
    }
    assert!(
        rest.is_empty(),
        "sobel: the row bands leave {} elements of the output unwritten",
        rest.len()
    );
    pieces
}

/// Runs `job` on every band, in parallel when there are several.
fn run_bands<J: Send>(jobs: Vec<J>, job: impl Fn(J) + Sync + Send) {
    if jobs.len() > 1 {
        jobs.into_par_iter().for_each(job);
    } else {
        jobs.into_iter().for_each(job);
    }
}

/// Both Sobel derivatives of a grey image loaded in one pass over it: `(dx, dy)` equal to
/// loading [`sobel_dx`] and [`sobel_dy`] with the same border, bit for bit, in static row
/// bands (the result does not depend on `threads`).
///
/// # Panics
/// If the extent's size overflows `usize` (no such image fits in memory; a delayed source
/// can claim one).
pub fn sobel_xy<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    border: Border<u8>,
    threads: Threads,
) -> (Array<i16, Dim2>, Array<i16, Dim2>) {
    let extent = a.extent();
    let Dim2(rows, cols) = extent;
    // panics, naming the extent, when its size overflows
    let n = extent.size();
    // Not cleared first: every element is written below (clearing 2 x 2 bytes a pixel
    // on one thread cost a sixth of a two-thread run).
    let (mut dx, mut dy) = (Vec::<i16>::with_capacity(n), Vec::<i16>::with_capacity(n));
    if rows > 0 && cols > 0 {
        let bands: Vec<_> = schedule_bands(&[(0..rows, 0..cols)], threads)
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        let px = split_bands(&mut dx.spare_capacity_mut()[..n], cols, &bands);
        let py = split_bands(&mut dy.spare_capacity_mut()[..n], cols, &bands);
        let jobs: Vec<_> = bands.into_iter().zip(px.into_iter().zip(py)).collect();
        let level = cpu_features::simd_level();
        run_bands(jobs, |(r, (ox, oy))| {
            sobel_band_best(level, a, border, r, ox, oy)
        });
    }
    // SAFETY: the bands cover all `n` elements of both (checked by `split_bands`), and
    // `sobel_band` writes every element of its pieces (it checks their lengths); `i16`
    // needs no drop.
    unsafe {
        dx.set_len(n);
        dy.set_len(n);
    }
    (
        Array::from_vec(extent, dx).expect("the length is the extent's size"),
        Array::from_vec(extent, dy).expect("the length is the extent's size"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explicit::View;
    use crate::load::{compute_with, Plain};

    #[test]
    fn one_pass_equals_the_stencils() {
        for (rows, cols) in [(1, 1), (1, 5), (4, 1), (2, 2), (67, 301)] {
            let data: Vec<u8> = (0..(rows * cols) as u64)
                .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
                .collect();
            let a = View::new(Dim2(rows, cols), &data);
            for border in [
                Border::Constant(200),
                Border::Replicate,
                Border::Reflect,
                Border::Reflect101,
                Border::Wrap,
            ] {
                let want_x = compute_with(&sobel_dx(a, border), Plain, Threads::Seq);
                let want_y = compute_with(&sobel_dy(a, border), Plain, Threads::Seq);
                for threads in [Threads::Seq, Threads::Fixed(3)] {
                    let (dx, dy) =
                        crate::with_parallel_threshold(0, || sobel_xy(&a, border, threads));
                    assert_eq!(crate::load::last_band_count(), threads.count().min(rows));
                    assert_eq!((&dx, &dy), (&want_x, &want_y), "{rows}x{cols} {border:?}");
                    // A delayed source goes through the row-filling path.
                    let (dx, dy) = sobel_xy(&a.map(|v| v), border, threads);
                    assert_eq!((&dx, &dy), (&want_x, &want_y), "{rows}x{cols} {border:?}");
                }
            }
        }
    }

    #[test]
    fn sobel_hand_worked() {
        // A vertical step from 0 to 10 between columns 1 and 2.
        let data = [0u8, 0, 10, 10, 0, 0, 10, 10, 0, 0, 10, 10];
        let a = View::new(Dim2(3, 4), &data);
        let dx = compute_with(&sobel_dx(a, Border::Reflect101), Plain, Threads::Seq);
        assert_eq!(dx.as_slice(), &[0, 40, 40, 0, 0, 40, 40, 0, 0, 40, 40, 0]);
        let dy = compute_with(&sobel_dy(a, Border::Reflect101), Plain, Threads::Seq);
        assert!(dy.as_slice().iter().all(|&v| v == 0));
        let l1 = compute_with(
            &magnitude_l1(dx.view(), dx.view()).unwrap(),
            Plain,
            Threads::Seq,
        );
        assert_eq!(l1[Dim2(1, 1)], 80);
        let l2 = magnitude_l2(dx.view(), dx.view()).unwrap();
        assert!((l2.index(Dim2(0, 2)) - 40.0 * 2f32.sqrt()).abs() < 1e-4);
        let dir = direction(dx.view(), dy.view()).unwrap();
        assert_eq!(dir.index(Dim2(1, 1)), 0.0);
    }

    use crate::image::simd_test_support::{random_bytes, WIDTHS};

    #[test]
    fn every_simd_level_equals_the_stencils() {
        for (k, &cols) in WIDTHS.iter().enumerate() {
            let rows = 6;
            let data = random_bytes(rows * cols, 200 + k as u64);
            let a = View::new(Dim2(rows, cols), &data);
            for border in [Border::Reflect101, Border::Replicate, Border::Constant(9)] {
                let want_x = compute_with(&sobel_dx(a, border), Plain, Threads::Seq);
                let want_y = compute_with(&sobel_dy(a, border), Plain, Threads::Seq);
                for (dx, dy) in cpu_features::at_every_level(|_| {
                    crate::with_parallel_threshold(0, || sobel_xy(&a, border, Threads::Fixed(2)))
                }) {
                    assert_eq!((&dx, &dy), (&want_x, &want_y), "{cols} columns {border:?}");
                }
            }
        }
    }
}
