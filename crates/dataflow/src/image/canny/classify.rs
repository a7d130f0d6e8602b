//! Suppression and double threshold of Canny's bands: the decision of one pixel with
//! OpenCV's sector tests and tie rules, the same decision for a 32-column chunk written
//! without branches (so the compiler vectorises it), the band loops over a ring of three
//! rows (the generic one, and one around the vector row kernels of `x86.rs`, magnitudes
//! in `i16` for L1 and `i32` for L2), the gradient rows of grey and RGB images, and the
//! seeds of the band's flood.

use crate::convolve::Border;
use crate::shape::Dim2;
use crate::source::Source;

use super::x86::{RowKernel, SeedKernel, SobelKernel};
use super::{Norm, EDGE, NONE, SHIFT, TG22, WEAK};
use crate::image::sobel::SobelRows;

#[inline(always)]
pub(super) fn magnitude(g: [i16; 2], norm: Norm) -> i32 {
    let (x, y) = (g[0] as i32, g[1] as i32);
    match norm {
        Norm::L1 => x.abs() + y.abs(),
        Norm::L2 => x * x + y * y,
    }
}

/// Suppression and double threshold at one pixel of gradient `g` and magnitude `m`:
/// `NONE`, `WEAK` or `EDGE`. `mag_at(dy, dx)` is the magnitude of a neighbour (0 outside).
#[inline(always)]
pub(super) fn decide(
    g: [i16; 2],
    m: i32,
    low: i64,
    high: i64,
    mag_at: impl Fn(isize, isize) -> i32,
) -> u8 {
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

/// Chunks with at least this many of their 32 pixels above `low` are decided whole by
/// [`decide_chunk`]; sparser ones pixel by pixel by [`decide`], whose branches cost less
/// there (2560 x 1600, one thread: 6, 16 and all-chunks thresholds gave 3.05, 2.86 and
/// 6.1 ms, against 3.18 ms pixel by pixel).
pub(super) const DENSE: u32 = 16;

/// [`decide`] for the 32 columns `c..c + 32` of the middle row, without branches, so the
/// compiler keeps the lanes in vector registers: `g` holds their gradients, `rows` the
/// zero-padded magnitudes of the three rows (`rows[k][x + 1]` is column `x`). The same
/// integer tests as [`decide`] (sectors by `tan 22.5`, strict and non-strict neighbours),
/// written as selects; `low` and `high` are the thresholds clamped to `i32`.
#[inline(always)]
pub(super) fn decide_chunk(
    g: &[[i16; 2]],
    rows: [&[i32]; 3],
    c: usize,
    low: i32,
    high: i32,
    class: &mut [u8; 32],
) {
    let [m0, m1, m2] = rows;
    // columns c - 1 ..= c + 32 of each row, at padded positions c ..= c + 33
    let (m0, m1, m2) = (&m0[c..c + 34], &m1[c..c + 34], &m2[c..c + 34]);
    let g = &g[..32];
    // `&` and `|` rather than `&&` and `||`, and values rather than places chosen: every
    // lane computes everything, which is what lets the compiler vectorise the loop
    for (k, (out, &[gx, gy])) in class.iter_mut().zip(g).enumerate() {
        let (gx, gy) = (i32::from(gx), i32::from(gy));
        let m = m1[k + 1];
        let ax = gx.abs();
        let ay = gy.abs() << SHIFT;
        let tg22x = ax * TG22;
        let tg67x = tg22x + (ax << (SHIFT + 1));
        let horizontal = ay < tg22x;
        let vertical = !horizontal & (ay > tg67x);
        // the diagonal neighbours: (-1, -s) and (1, s), s the sign of gx * gy
        let falling = (gx ^ gy) < 0;
        let (ul, ur, dl, dr) = (m0[k], m0[k + 2], m2[k], m2[k + 2]);
        let diag_a = if falling { ur } else { ul };
        let diag_b = if falling { dl } else { dr };
        let (left, right, up, down) = (m1[k], m1[k + 2], m0[k + 1], m2[k + 1]);
        let a = if horizontal {
            left
        } else if vertical {
            up
        } else {
            diag_a
        };
        let b = if horizontal {
            right
        } else if vertical {
            down
        } else {
            diag_b
        };
        // horizontal and vertical keep `m >= after`, diagonals need `m > both`
        let is_max = (m > a) & ((m > b) | ((m == b) & (horizontal | vertical)));
        let kept = (m > low) & is_max;
        let strong = u8::from(m > high);
        *out = u8::from(kept) * (WEAK + strong);
    }
}

/// The gradient and magnitudes (zero-padded: `mag[x + 1]` is column `x`) of image row
/// `r`, or zero magnitudes outside the image.
#[inline(always)]
pub(super) fn load_row<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    norm: Norm,
    sobel: &mut SobelRows,
    r: isize,
    grad: &mut [[i16; 2]],
    mag: &mut [i32],
) {
    let Dim2(rows, cols) = a.extent();
    if r < 0 || r as usize >= rows {
        mag.fill(0);
        return;
    }
    sobel.row(a, &Border::Replicate, r as usize);
    for ((g, &x), &y) in grad.iter_mut().zip(&sobel.dx).zip(&sobel.dy) {
        *g = [x, y];
    }
    for ((o, &x), &y) in mag[1..cols + 1].iter_mut().zip(&sobel.dx).zip(&sobel.dy) {
        *o = magnitude([x, y], norm);
    }
}

/// Suppression and double threshold of rows `band`, written to `out` (the band's rows),
/// in one pass over the image: each row's Sobel gradient is computed once, its magnitudes
/// kept in a ring of three zero-padded rows, and the middle row decided from them.
/// Returns the band's `EDGE` positions, relative to the band.
#[inline(always)]
pub(super) fn classify_band<A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    norm: Norm,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
) -> Vec<(u32, u32)> {
    const CH: usize = 32;
    let Dim2(_, cols) = a.extent();
    // Magnitudes are non-negative `i32`, so comparing with `low` (or `high`) clamped to
    // `i32` is exact.
    let low32 = low.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    let high32 = high.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    let mut sobel = SobelRows::new(cols);
    // Slot k: the gradient and magnitudes (zero-padded, `cols + 2`) of one image row.
    let mut grads: [Vec<[i16; 2]>; 3] = std::array::from_fn(|_| vec![[0i16; 2]; cols]);
    let mut mags: [Vec<i32>; 3] = std::array::from_fn(|_| vec![0i32; cols + 2]);
    let mut seeds = Vec::new();
    // order[k] is the slot of image row y - 1 + k.
    let mut order = [0usize, 1, 2];
    let start = band.start as isize;
    load_row(a, norm, &mut sobel, start - 1, &mut grads[0], &mut mags[0]);
    load_row(a, norm, &mut sobel, start, &mut grads[1], &mut mags[1]);
    for y in band.clone() {
        load_row(
            a,
            norm,
            &mut sobel,
            y as isize + 1,
            &mut grads[order[2]],
            &mut mags[order[2]],
        );
        let [m0, m1, m2] = order.map(|k| &mags[k][..]);
        let g = &grads[order[1]];
        // (`out` starts as `NONE` everywhere: only the pixels above `low` are written)
        let line = &mut out[(y - band.start) * cols..(y - band.start + 1) * cols];
        let mut c = 0;
        while c < cols {
            let n = CH.min(cols - c);
            // Bit k: column c + k is above `low`; only those are decided.
            let mut above = m1[c + 1..c + 1 + n]
                .iter()
                .enumerate()
                .fold(0u32, |bits, (k, &m)| bits | (u32::from(m > low32) << k));
            if above.count_ones() >= DENSE && n == CH {
                // many candidates: decide the whole chunk without branches, in vector
                // lanes, then collect its edges
                let mut class = [NONE; CH];
                decide_chunk(&g[c..c + CH], [m0, m1, m2], c, low32, high32, &mut class);
                line[c..c + CH].copy_from_slice(&class);
                let mut edges = class
                    .iter()
                    .enumerate()
                    .fold(0u32, |bits, (k, &v)| bits | (u32::from(v == EDGE) << k));
                while edges != 0 {
                    let x = c + edges.trailing_zeros() as usize;
                    edges &= edges - 1;
                    seeds.push(((y - band.start) as u32, x as u32));
                }
                c += n;
                continue;
            }
            while above != 0 {
                let x = c + above.trailing_zeros() as usize;
                above &= above - 1;
                let j = x + 1;
                let rows3 = [m0, m1, m2];
                // SAFETY: 1 <= j <= cols, so j + dx lies in 0..cols + 2, the rows' length.
                let mag_at = |dy: isize, dx: isize| unsafe {
                    *rows3[(1 + dy) as usize].get_unchecked((j as isize + dx) as usize)
                };
                let class = decide(g[x], m1[j], low, high, mag_at);
                if class == EDGE {
                    seeds.push(((y - band.start) as u32, x as u32));
                }
                line[x] = class;
            }
            c += n;
        }
        order = [order[1], order[2], order[0]];
    }
    seeds
}

/// The lane type of the vector rows' magnitudes: `i16` holds L1 magnitudes (`|dx| + |dy|`,
/// at most 2040), `i32` squared L2 ones (`dx^2 + dy^2`, at most `2 * 1020^2`).
pub(super) trait Mag: Copy + Default + Into<i32> + PartialOrd {
    /// The magnitude of gradient `(gx, gy)` in this type's norm.
    fn of(gx: i16, gy: i16) -> Self;
    /// Threshold `t` clamped to `-1..=MAX`: magnitudes compare with it as with `t`.
    fn threshold(t: i64) -> Self;
}

impl Mag for i16 {
    #[inline(always)]
    fn of(gx: i16, gy: i16) -> i16 {
        gx.abs() + gy.abs()
    }
    fn threshold(t: i64) -> i16 {
        t.clamp(-1, i64::from(i16::MAX)) as i16
    }
}

impl Mag for i32 {
    #[inline(always)]
    fn of(gx: i16, gy: i16) -> i32 {
        let (x, y) = (i32::from(gx), i32::from(gy));
        x * x + y * y
    }
    fn threshold(t: i64) -> i32 {
        t.clamp(-1, i64::from(i32::MAX)) as i32
    }
}

/// The rows a band's classification reads: the gradient and magnitudes of one image row
/// at a time.
pub(super) trait GradientRows<M> {
    /// The image's width.
    fn cols(&self) -> usize;
    /// The gradient (`dx`, `dy`, `cols` each) and zero-padded magnitudes (`mag[x + 1]` is
    /// column `x`, `cols + 2`) of image row `r`, or zero magnitudes outside the image.
    fn load(&mut self, r: isize, dx: &mut [i16], dy: &mut [i16], mag: &mut [M]);
}

/// The gradient rows of a grey image, through a vector Sobel row kernel.
pub(super) struct GreyRows<'a, A, M> {
    a: &'a A,
    sobel: SobelRows,
    kernel: SobelKernel<M>,
}

impl<'a, A: Source<Shape = Dim2, Elem = u8>, M: Mag> GreyRows<'a, A, M> {
    /// Rows of `a` by `kernel`. Unsafe: loading runs `kernel`, so the processor must have
    /// its target features.
    pub(super) unsafe fn new(a: &'a A, kernel: SobelKernel<M>) -> Self {
        let Dim2(_, cols) = a.extent();
        GreyRows {
            a,
            sobel: SobelRows::new(cols),
            kernel,
        }
    }
}

impl<A: Source<Shape = Dim2, Elem = u8>, M: Mag> GradientRows<M> for GreyRows<'_, A, M> {
    fn cols(&self) -> usize {
        self.a.extent().1
    }
    #[inline(always)]
    fn load(&mut self, r: isize, dx: &mut [i16], dy: &mut [i16], mag: &mut [M]) {
        // SAFETY: the kernel's target features are present (the contract of `new`).
        unsafe { load_row_kernel(self.a, &mut self.sobel, self.kernel, r, dx, dy, mag) };
    }
}

/// The gradient rows of an RGB image as OpenCV takes them: each channel's gradient
/// (through a vector Sobel row kernel), and at each pixel the gradient of the channel
/// with the largest magnitude, the first in channel order on ties.
///
/// Each source row is split once into three padded channel rows (replicated borders),
/// kept in a ring of three slots as [`SobelRows`] keeps grey rows.
pub(super) struct RgbRows<'a, A, M> {
    a: &'a A,
    kernel: SobelKernel<M>,
    /// A source row, when the source is not memory.
    rgb: Vec<[u8; 3]>,
    /// `planes[slot][k]`: channel `k` of source row `keys[slot]`, padded (`cols + 2`).
    planes: [[Vec<u8>; 3]; 3],
    keys: [Option<usize>; 3],
    dx: [Vec<i16>; 3],
    dy: [Vec<i16>; 3],
    mag: [Vec<M>; 3],
}

impl<'a, A: Source<Shape = Dim2, Elem = [u8; 3]>, M: Mag> RgbRows<'a, A, M> {
    /// Rows of `a` by `kernel`. Unsafe: loading runs `kernel`, so the processor must have
    /// its target features.
    pub(super) unsafe fn new(a: &'a A, kernel: SobelKernel<M>) -> Self {
        let Dim2(_, cols) = a.extent();
        RgbRows {
            a,
            kernel,
            rgb: vec![[0; 3]; cols],
            planes: std::array::from_fn(|_| std::array::from_fn(|_| vec![0; cols + 2])),
            keys: [None; 3],
            dx: std::array::from_fn(|_| vec![0; cols]),
            dy: std::array::from_fn(|_| vec![0; cols]),
            mag: std::array::from_fn(|_| vec![M::default(); cols + 2]),
        }
    }

    /// The ring slots of source rows `need`, each split into its channels when not there
    /// yet.
    #[inline(always)]
    fn slots(&mut self, need: [usize; 3]) -> [usize; 3] {
        let Dim2(_, cols) = self.a.extent();
        for q in need {
            if self.keys.contains(&Some(q)) {
                continue;
            }
            let slot = self
                .keys
                .iter()
                .position(|k| k.is_none_or(|k| !need.contains(&k)))
                .expect("3 slots hold the at most 3 rows needed");
            // SAFETY: row q < rows (clamped by the caller) and columns 0..cols lie inside
            // the extent; `self.rgb` holds `cols` pixels.
            let row = unsafe {
                match self.a.span_slice(cols, q, 0..cols) {
                    Some(s) => s,
                    None => {
                        self.a
                            .fill_span(self.a.extent(), cols, q, 0..cols, self.rgb.as_mut_ptr());
                        &self.rgb[..]
                    }
                }
            };
            let [p0, p1, p2] = &mut self.planes[slot];
            let (o0, o1, o2) = (
                &mut p0[1..cols + 1],
                &mut p1[1..cols + 1],
                &mut p2[1..cols + 1],
            );
            for (x, &[r, g, b]) in row.iter().enumerate() {
                (o0[x], o1[x], o2[x]) = (r, g, b);
            }
            for p in &mut self.planes[slot] {
                // replicated borders
                (p[0], p[cols + 1]) = (p[1], p[cols]);
            }
            self.keys[slot] = Some(q);
        }
        need.map(|q| {
            self.keys
                .iter()
                .position(|k| *k == Some(q))
                .expect("loaded above")
        })
    }
}

impl<A: Source<Shape = Dim2, Elem = [u8; 3]>, M: Mag> GradientRows<M> for RgbRows<'_, A, M> {
    fn cols(&self) -> usize {
        self.a.extent().1
    }
    #[inline(always)]
    fn load(&mut self, r: isize, dx: &mut [i16], dy: &mut [i16], mag: &mut [M]) {
        let Dim2(rows, cols) = self.a.extent();
        if r < 0 || r as usize >= rows {
            mag.fill(M::default());
            return;
        }
        let r = r as usize;
        let [s0, s1, s2] = self.slots([r.saturating_sub(1), r, (r + 1).min(rows - 1)]);
        for k in 0..3 {
            let p = [
                &self.planes[s0][k][..],
                &self.planes[s1][k][..],
                &self.planes[s2][k][..],
            ];
            // SAFETY: the kernel's target features are present (the contract of `new`).
            unsafe {
                gradient_row(
                    p,
                    self.kernel,
                    &mut self.dx[k],
                    &mut self.dy[k],
                    &mut self.mag[k],
                )
            };
        }
        let [m0, m1, m2] = [
            &self.mag[0][1..cols + 1],
            &self.mag[1][1..cols + 1],
            &self.mag[2][1..cols + 1],
        ];
        let [x0, x1, x2] = [
            &self.dx[0][..cols],
            &self.dx[1][..cols],
            &self.dx[2][..cols],
        ];
        let [y0, y1, y2] = [
            &self.dy[0][..cols],
            &self.dy[1][..cols],
            &self.dy[2][..cols],
        ];
        let (dx, dy, mag) = (&mut dx[..cols], &mut dy[..cols], &mut mag[1..cols + 1]);
        // selects rather than branches, so the compiler vectorises the loop
        for x in 0..cols {
            let second = m1[x] > m0[x];
            let m01 = if second { m1[x] } else { m0[x] };
            let third = m2[x] > m01;
            mag[x] = if third { m2[x] } else { m01 };
            let gx01 = if second { x1[x] } else { x0[x] };
            let gy01 = if second { y1[x] } else { y0[x] };
            dx[x] = if third { x2[x] } else { gx01 };
            dy[x] = if third { y2[x] } else { gy01 };
        }
    }
}

/// The gradient and magnitudes (`mag[x + 1]` is column `x`) of a row from its three
/// padded source rows `p` (`p[k][x + 1]` is column `x` of row `y - 1 + k`): columns
/// `0..n` by `kernel`, the rest here. Unsafe to call only for the target features
/// `kernel` needs.
#[inline(always)]
pub(super) unsafe fn gradient_row<M: Mag>(
    p: [&[u8]; 3],
    kernel: SobelKernel<M>,
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [M],
) {
    let cols = dx.len();
    // SAFETY: the caller guarantees the kernel's target features; the kernel checks the
    // buffer lengths itself.
    let done = unsafe { kernel(p, dx, dy, mag) };
    let [p0, p1, p2] = p;
    // (the Sobel gradient of bytes is at most 1020 in magnitude: the sum fits `i16`)
    for x in done..cols {
        let at = |q: &[u8], o: usize| i16::from(q[x + o]);
        let gx = at(p0, 2) - at(p0, 0) + 2 * (at(p1, 2) - at(p1, 0)) + at(p2, 2) - at(p2, 0);
        let gy = at(p2, 0) - at(p0, 0) + 2 * (at(p2, 1) - at(p0, 1)) + at(p2, 2) - at(p0, 2);
        (dx[x], dy[x]) = (gx, gy);
        mag[x + 1] = M::of(gx, gy);
    }
}

/// The gradient and magnitudes (zero-padded: `mag[x + 1]` is column `x`) of image row
/// `r`, or zero magnitudes outside the image: columns `0..n` by `kernel`, the rest here.
/// Unsafe to call only for the target features `kernel` needs.
#[inline(always)]
pub(super) unsafe fn load_row_kernel<A: Source<Shape = Dim2, Elem = u8>, M: Mag>(
    a: &A,
    sobel: &mut SobelRows,
    kernel: SobelKernel<M>,
    r: isize,
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [M],
) {
    let Dim2(rows, cols) = a.extent();
    if r < 0 || r as usize >= rows {
        mag.fill(M::default());
        return;
    }
    let p = sobel.padded(a, &Border::Replicate, r as usize);
    // SAFETY: the caller guarantees the kernel's target features.
    unsafe { gradient_row(p, kernel, &mut dx[..cols], &mut dy[..cols], mag) };
}

/// [`SobelKernel`] of the plain loop (every column in [`load_row_kernel`]): the rows of
/// processors without AVX2, and the tests' reference.
pub(super) unsafe fn sobel_row_none<M>(
    _: [&[u8]; 3],
    _: &mut [i16],
    _: &mut [i16],
    _: &mut [M],
) -> usize {
    0
}

/// [`RowKernel`] of the plain loop (every column decided by [`decide`] in
/// [`classify_band_rows`]).
pub(super) unsafe fn decide_row_none<M>(
    _: [&[M]; 3],
    _: &[i16],
    _: &[i16],
    _: [M; 2],
    _: &mut [u8],
) -> usize {
    0
}

/// [`SeedKernel`] of the plain loop (every column in [`row_seeds`]).
pub(super) unsafe fn seeds_none(_: [&[u8]; 3], _: u32, _: &mut Vec<(u32, u32)>) -> usize {
    0
}

/// [`classify_band`] with row kernels: the gradient rows from `grads` (which may hold a
/// vector Sobel kernel), magnitudes of type `M`, whole rows of 32-column chunks decided by
/// `kernel`, the last `cols % 32` columns by [`decide`], and the flood's seeds found one
/// row behind by `seed_kernel`. Unsafe to call only for the target features the kernels
/// need.
#[inline(always)]
pub(super) unsafe fn classify_band_rows<M: Mag>(
    grads: &mut impl GradientRows<M>,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
    (kernel, seed_kernel): (RowKernel<M>, SeedKernel),
) -> Vec<(u32, u32)> {
    let cols = grads.cols();
    let thresholds = [M::threshold(low), M::threshold(high)];
    let mut dxs: [Vec<i16>; 3] = std::array::from_fn(|_| vec![0i16; cols]);
    let mut dys: [Vec<i16>; 3] = std::array::from_fn(|_| vec![0i16; cols]);
    let mut mags: [Vec<M>; 3] = std::array::from_fn(|_| vec![M::default(); cols + 2]);
    let mut seeds = Vec::new();
    // order[k] is the slot of image row y - 1 + k.
    let mut order = [0usize, 1, 2];
    let start = band.start as isize;
    for (k, r) in [(0, start - 1), (1, start)] {
        grads.load(r, &mut dxs[k], &mut dys[k], &mut mags[k]);
    }
    for y in band.clone() {
        let s = order[2];
        grads.load(y as isize + 1, &mut dxs[s], &mut dys[s], &mut mags[s]);
        let rows = order.map(|k| &mags[k][..]);
        let (dx, dy) = (&dxs[order[1]][..], &dys[order[1]][..]);
        let yb = y - band.start;
        let line = &mut out[yb * cols..(yb + 1) * cols];
        // SAFETY: the caller's contract (the processor has the kernel's features); the
        // kernel checks the row lengths itself.
        let done = unsafe { kernel(rows, dx, dy, thresholds, line) };
        for x in done..cols {
            let j = x + 1;
            let mag_at =
                |dy: isize, dx: isize| rows[(1 + dy) as usize][(j as isize + dx) as usize].into();
            line[x] = decide([dx[x], dy[x]], rows[1][j].into(), low, high, mag_at);
        }
        // the row above is decided and so are its neighbour rows: its seeds
        if yb >= 1 {
            row_seeds(out, cols, yb - 1, yb + 1, seed_kernel, &mut seeds);
        }
        order = [order[1], order[2], order[0]];
    }
    row_seeds(
        out,
        cols,
        band.len() - 1,
        band.len(),
        seed_kernel,
        &mut seeds,
    );
    seeds
}

/// The seeds of the flood in row `y` of a classified band `map` (rows `0..rows`, `cols`
/// wide): its `EDGE` pixels with a `WEAK` neighbour inside the band. The others can be
/// left out: a flood from them would find nothing to grow into, since pixels only ever
/// change from `WEAK` to `EDGE`. Columns `1..1 + n` by `kernel`, the rest here.
#[inline(always)]
pub(super) fn row_seeds(
    map: &[u8],
    cols: usize,
    y: usize,
    rows: usize,
    kernel: SeedKernel,
    seeds: &mut Vec<(u32, u32)>,
) {
    let no_row: &[u8] = &[];
    let row = |r: usize| &map[r * cols..(r + 1) * cols];
    let up = if y > 0 { row(y - 1) } else { no_row };
    let down = if y + 1 < rows { row(y + 1) } else { no_row };
    let mid = row(y);
    // SAFETY: the caller of `classify_band_rows` guarantees the kernel's target features;
    // the kernel checks the row lengths itself (and takes the missing rows as empty).
    let n = unsafe { kernel([up, mid, down], y as u32, seeds) };
    let near_weak = |x: usize| {
        let (x0, x1) = (x.saturating_sub(1), (x + 1).min(cols - 1));
        [up, mid, down]
            .iter()
            .any(|r| !r.is_empty() && r[x0..=x1].contains(&WEAK))
    };
    for x in std::iter::once(0).chain(1 + n..cols) {
        if mid[x] == EDGE && near_weak(x) {
            seeds.push((y as u32, x as u32));
        }
    }
}

/// [`classify_band_rows`] compiled with AVX2 (the gradient rows' own loops, such as the
/// colour select, vectorise with it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn classify_band_rows_avx2<M: Mag>(
    grads: &mut impl GradientRows<M>,
    low: i64,
    high: i64,
    band: std::ops::Range<usize>,
    out: &mut [u8],
    kernels: (RowKernel<M>, SeedKernel),
) -> Vec<(u32, u32)> {
    // SAFETY: forwarded contract.
    unsafe { classify_band_rows(grads, low, high, band, out, kernels) }
}
