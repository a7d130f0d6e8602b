//! The hand-written x86-64 kernels of Canny's rows, at AVX2 and AVX-512: the Sobel row
//! with its magnitude (`i16` for L1, `i32` squared for L2), the decision of 32-column
//! chunks (for each magnitude type) and the seed scan, with their signatures and the
//! bounds checks each of them makes before its first load.

use super::{EDGE, TG22, WEAK};

/// One row of the L1 classification in vector registers: decides columns `0..n` of the
/// middle row (`n` the multiple of 32 it returns, at most `line.len()`) and writes their
/// classes to `line` (the seeds of the flood come later, from [`SeedKernel`]). `rows` are
/// the zero-padded magnitudes of the three rows (`rows[k][x + 1]` is column `x`), `dx`
/// and `dy` the middle row's gradient; the thresholds `[low, high]` are clamped to
/// `-1..=M::MAX`. `M` is the magnitude's lane type: `i16` for L1, `i32` for L2. Unsafe to
/// call only for the target features its level needs.
pub(super) type RowKernel<M = i16> = unsafe fn(
    rows: [&[M]; 3],
    dx: &[i16],
    dy: &[i16],
    thresholds: [M; 2],
    line: &mut [u8],
) -> usize;

/// `2 tan(22.5 deg)` in 16 fraction bits: `mulhi(ax, TG22_X2)` is `(ax * TG22) >> 15`.
pub(super) const TG22_X2: i16 = (2 * TG22) as i16;

/// Panics unless `rows`, `dx` and `dy` cover the `cols` columns of `line` (the bounds
/// every vector row kernel relies on).
#[inline(always)]
pub(super) fn check_row_bounds<M>(rows: [&[M]; 3], dx: &[i16], dy: &[i16], cols: usize) {
    assert!(
        dx.len() >= cols && dy.len() >= cols && rows.iter().all(|r| r.len() >= cols + 2),
        "canny: row buffers of {}, {} and {:?} for {cols} columns",
        dx.len(),
        dy.len(),
        rows.map(<[M]>::len)
    );
}

/// [`RowKernel`] with AVX-512 F/BW: 32 columns a step, in `i16` lanes and mask registers.
///
/// The sector tests in 16 bits: with `t = (ax * TG22) >> 15`, `ay << 15 < ax * TG22` is
/// `ay <= t && ax != 0` (`ax * TG22` is never a multiple of `2^15` for `0 < ax < 2^15`,
/// TG22 being odd), and `ay << 15 > ax * (TG22 + 2^16)` is `ay > 2 ax + t`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub(super) unsafe fn decide_row_avx512(
    rows: [&[i16]; 3],
    dx: &[i16],
    dy: &[i16],
    [low, high]: [i16; 2],
    line: &mut [u8],
) -> usize {
    use std::arch::x86_64::*;
    let cols = line.len();
    check_row_bounds(rows, dx, dy, cols);
    let n = cols / 32 * 32;
    let [r0, r1, r2] = rows.map(<[i16]>::as_ptr);
    let (px, py, out) = (dx.as_ptr(), dy.as_ptr(), line.as_mut_ptr());
    let (lowv, highv) = (_mm512_set1_epi16(low), _mm512_set1_epi16(high));
    let tg = _mm512_set1_epi16(TG22_X2);
    let (one, two) = (_mm512_set1_epi8(WEAK as i8), _mm512_set1_epi8(EDGE as i8));
    let mut c = 0;
    while c < n {
        // SAFETY: AVX-512 F/BW are present (the caller's contract, from `simd_level()`); c + 32
        // <= cols, so the loads read `dx`, `dy` at c..c + 32 and the padded rows at
        // c..c + 34 <= cols + 2, and the store writes `line` at c..c + 32, all inside the
        // lengths `check_row_bounds` asserted above.
        unsafe {
            let ld = |p: *const i16| _mm512_loadu_si512(p.cast());
            let m = ld(r1.add(c + 1));
            let above = _mm512_cmpgt_epi16_mask(m, lowv);
            if above == 0 {
                _mm256_storeu_si256(out.add(c).cast(), _mm256_setzero_si256());
                c += 32;
                continue;
            }
            let (gx, gy) = (ld(px.add(c)), ld(py.add(c)));
            let (ax, ay) = (_mm512_abs_epi16(gx), _mm512_abs_epi16(gy));
            let t = _mm512_mulhi_epu16(ax, tg);
            let horizontal = _mm512_cmple_epi16_mask(ay, t) & _mm512_test_epi16_mask(ax, ax);
            let t67 = _mm512_add_epi16(_mm512_add_epi16(ax, ax), t);
            let vertical = !horizontal & _mm512_cmpgt_epi16_mask(ay, t67);
            // the diagonal neighbours: (-1, -s) and (1, s), s the sign of gx * gy
            let falling = _mm512_movepi16_mask(_mm512_xor_si512(gx, gy));
            let diag_a = _mm512_mask_blend_epi16(falling, ld(r0.add(c)), ld(r0.add(c + 2)));
            let diag_b = _mm512_mask_blend_epi16(falling, ld(r2.add(c + 2)), ld(r2.add(c)));
            let a = _mm512_mask_blend_epi16(vertical, diag_a, ld(r0.add(c + 1)));
            let a = _mm512_mask_blend_epi16(horizontal, a, ld(r1.add(c)));
            let b = _mm512_mask_blend_epi16(vertical, diag_b, ld(r2.add(c + 1)));
            let b = _mm512_mask_blend_epi16(horizontal, b, ld(r1.add(c + 2)));
            // horizontal and vertical keep `m >= after`, diagonals need `m > both`
            let axis = horizontal | vertical;
            let after =
                (_mm512_cmpgt_epi16_mask(m, b) & !axis) | (_mm512_cmpge_epi16_mask(m, b) & axis);
            let kept = above & _mm512_cmpgt_epi16_mask(m, a) & after;
            let strong = kept & _mm512_cmpgt_epi16_mask(m, highv);
            // (512-bit byte operations, whose low 32 bytes are the chunk: the 256-bit
            // masked forms would need AVX-512 VL as well)
            let class = _mm512_mask_blend_epi8(
                u64::from(strong),
                _mm512_maskz_mov_epi8(u64::from(kept), one),
                two,
            );
            _mm256_storeu_si256(out.add(c).cast(), _mm512_castsi512_si256(class));
        }
        c += 32;
    }
    n
}

/// [`RowKernel`] with AVX2: 32 columns a step as two halves of 16 `i16` lanes, the same
/// tests as [`decide_row_avx512`] with compares producing lane masks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn decide_row_avx2(
    rows: [&[i16]; 3],
    dx: &[i16],
    dy: &[i16],
    [low, high]: [i16; 2],
    line: &mut [u8],
) -> usize {
    use std::arch::x86_64::*;
    let cols = line.len();
    check_row_bounds(rows, dx, dy, cols);
    let n = cols / 32 * 32;
    let [r0, r1, r2] = rows.map(<[i16]>::as_ptr);
    let (px, py, out) = (dx.as_ptr(), dy.as_ptr(), line.as_mut_ptr());
    let (lowv, highv) = (_mm256_set1_epi16(low), _mm256_set1_epi16(high));
    let tg = _mm256_set1_epi16(TG22_X2);
    let zero = _mm256_setzero_si256();
    let one = _mm256_set1_epi8(1);
    // (kept, strong) lane masks of the 16 columns at c
    // SAFETY: (the closure's body) AVX2 is present (the caller's contract); it is only
    // called with c + 16 <= cols, so the loads read `dx`, `dy` at c..c + 16 and the padded
    // rows at c..c + 18 <= cols + 2, inside the lengths asserted above.
    let half = |c: usize, m: __m256i, above: __m256i| unsafe {
        let ld = |p: *const i16| _mm256_loadu_si256(p.cast());
        let (gx, gy) = (ld(px.add(c)), ld(py.add(c)));
        let (ax, ay) = (_mm256_abs_epi16(gx), _mm256_abs_epi16(gy));
        let t = _mm256_mulhi_epu16(ax, tg);
        let not_horizontal =
            _mm256_or_si256(_mm256_cmpgt_epi16(ay, t), _mm256_cmpeq_epi16(ax, zero));
        let t67 = _mm256_add_epi16(_mm256_add_epi16(ax, ax), t);
        let vertical = _mm256_and_si256(not_horizontal, _mm256_cmpgt_epi16(ay, t67));
        let falling = _mm256_srai_epi16::<15>(_mm256_xor_si256(gx, gy));
        let diag_a = _mm256_blendv_epi8(ld(r0.add(c)), ld(r0.add(c + 2)), falling);
        let diag_b = _mm256_blendv_epi8(ld(r2.add(c + 2)), ld(r2.add(c)), falling);
        let a = _mm256_blendv_epi8(diag_a, ld(r0.add(c + 1)), vertical);
        let a = _mm256_blendv_epi8(ld(r1.add(c)), a, not_horizontal);
        let b = _mm256_blendv_epi8(diag_b, ld(r2.add(c + 1)), vertical);
        let b = _mm256_blendv_epi8(ld(r1.add(c + 2)), b, not_horizontal);
        // axis: horizontal or vertical, which keep `m >= after` (`!(b > m)`)
        let axis = _mm256_or_si256(
            _mm256_andnot_si256(not_horizontal, _mm256_cmpeq_epi16(zero, zero)),
            vertical,
        );
        let after = _mm256_or_si256(
            _mm256_cmpgt_epi16(m, b),
            _mm256_andnot_si256(_mm256_cmpgt_epi16(b, m), axis),
        );
        let kept = _mm256_and_si256(_mm256_and_si256(above, _mm256_cmpgt_epi16(m, a)), after);
        let strong = _mm256_and_si256(kept, _mm256_cmpgt_epi16(m, highv));
        (kept, strong)
    };
    let mut c = 0;
    while c < n {
        // SAFETY: AVX2 is present (the caller's contract); c + 32 <= cols, so the loads
        // read the padded middle row at c + 1..c + 33 <= cols + 2 and the halves stay in
        // bounds (see `half`), and the store writes `line` at c..c + 32, inside the
        // lengths `check_row_bounds` asserted above.
        unsafe {
            let m_lo = _mm256_loadu_si256(r1.add(c + 1).cast());
            let m_hi = _mm256_loadu_si256(r1.add(c + 17).cast());
            let (above_lo, above_hi) = (
                _mm256_cmpgt_epi16(m_lo, lowv),
                _mm256_cmpgt_epi16(m_hi, lowv),
            );
            if _mm256_testz_si256(
                _mm256_or_si256(above_lo, above_hi),
                _mm256_or_si256(above_lo, above_hi),
            ) != 0
            {
                _mm256_storeu_si256(out.add(c).cast(), zero);
                c += 32;
                continue;
            }
            let (kept_lo, strong_lo) = half(c, m_lo, above_lo);
            let (kept_hi, strong_hi) = half(c + 16, m_hi, above_hi);
            // packs interleaves the 128-bit lanes; the permute puts columns in order
            let bytes =
                |lo, hi| _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(lo, hi));
            let (kept, strong) = (bytes(kept_lo, kept_hi), bytes(strong_lo, strong_hi));
            // WEAK + 1 = EDGE for the strong ones (a subset of the kept)
            let class = _mm256_add_epi8(_mm256_and_si256(kept, one), _mm256_and_si256(strong, one));
            _mm256_storeu_si256(out.add(c).cast(), class);
        }
        c += 32;
    }
    n
}

/// The Sobel gradient and L1 magnitude of one row from its three padded source rows
/// (`p[k][x + 1]` is column `x` of row `y - 1 + k`): columns `0..n` of `dx`, `dy` and of
/// `mag[1..]`, `n` the multiple of 32 it returns (at most `dx.len()`). Unsafe to call only
/// for the target features its level needs. `M` is the magnitude's type: `i16` for L1,
/// `i32` for L2 (`dx^2 + dy^2`).
pub(super) type SobelKernel<M = i16> =
    unsafe fn(p: [&[u8]; 3], dx: &mut [i16], dy: &mut [i16], mag: &mut [M]) -> usize;

/// Panics unless the buffers of a [`SobelKernel`] cover `dx.len()` columns.
#[inline(always)]
pub(super) fn check_sobel_bounds<M>(p: [&[u8]; 3], dy: &[i16], mag: &[M], cols: usize) {
    assert!(
        dy.len() >= cols && mag.len() >= cols + 2 && p.iter().all(|r| r.len() >= cols + 2),
        "canny: Sobel buffers of {:?}, {} and {} for {cols} columns",
        p.map(<[u8]>::len),
        dy.len(),
        mag.len()
    );
}

/// [`SobelKernel`] with AVX-512 BW: 32 columns a step in `i16` lanes, one pass (the
/// column sums `p0 + 2 p1 + p2` and `p2 - p0` at the three offsets, then across).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub(super) unsafe fn sobel_l1_row_avx512(
    p: [&[u8]; 3],
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [i16],
) -> usize {
    use std::arch::x86_64::*;
    let cols = dx.len();
    check_sobel_bounds(p, dy, mag, cols);
    let n = cols / 32 * 32;
    let [q0, q1, q2] = p.map(<[u8]>::as_ptr);
    let (ox, oy, om) = (dx.as_mut_ptr(), dy.as_mut_ptr(), mag.as_mut_ptr());
    let mut c = 0;
    while c < n {
        // SAFETY: AVX-512 F/BW are present (the caller's contract, from `simd_level()`); c + 32
        // <= cols, so the loads read the padded rows at c..c + 34 <= cols + 2 and the
        // stores write `dx`, `dy` at c..c + 32 and `mag` at c + 1..c + 33, all inside the
        // lengths `check_sobel_bounds` asserted above.
        unsafe {
            let ld = |q: *const u8, o: usize| {
                _mm512_cvtepu8_epi16(_mm256_loadu_si256(q.add(c + o).cast()))
            };
            let smooth = |o: usize| {
                let m = ld(q1, o);
                _mm512_add_epi16(
                    _mm512_add_epi16(ld(q0, o), ld(q2, o)),
                    _mm512_add_epi16(m, m),
                )
            };
            let diff = |o: usize| _mm512_sub_epi16(ld(q2, o), ld(q0, o));
            let gx = _mm512_sub_epi16(smooth(2), smooth(0));
            let d1 = diff(1);
            let gy = _mm512_add_epi16(_mm512_add_epi16(diff(0), diff(2)), _mm512_add_epi16(d1, d1));
            let m = _mm512_add_epi16(_mm512_abs_epi16(gx), _mm512_abs_epi16(gy));
            _mm512_storeu_si512(ox.add(c).cast(), gx);
            _mm512_storeu_si512(oy.add(c).cast(), gy);
            _mm512_storeu_si512(om.add(c + 1).cast(), m);
        }
        c += 32;
    }
    n
}

/// [`SobelKernel`] with AVX2: [`sobel_l1_row_avx512`] in two halves of 16 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn sobel_l1_row_avx2(
    p: [&[u8]; 3],
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [i16],
) -> usize {
    use std::arch::x86_64::*;
    let cols = dx.len();
    check_sobel_bounds(p, dy, mag, cols);
    let n = cols / 32 * 32;
    let [q0, q1, q2] = p.map(<[u8]>::as_ptr);
    let (ox, oy, om) = (dx.as_mut_ptr(), dy.as_mut_ptr(), mag.as_mut_ptr());
    let mut c = 0;
    while c < n {
        for h in [c, c + 16] {
            // SAFETY: AVX2 is present (the caller's contract); h + 16 <= c + 32 <= cols,
            // so the loads read the padded rows at h..h + 18 <= cols + 2 and the stores
            // write `dx`, `dy` at h..h + 16 and `mag` at h + 1..h + 17, all inside the
            // lengths `check_sobel_bounds` asserted above.
            unsafe {
                let ld = |q: *const u8, o: usize| {
                    _mm256_cvtepu8_epi16(_mm_loadu_si128(q.add(h + o).cast()))
                };
                let smooth = |o: usize| {
                    let m = ld(q1, o);
                    _mm256_add_epi16(
                        _mm256_add_epi16(ld(q0, o), ld(q2, o)),
                        _mm256_add_epi16(m, m),
                    )
                };
                let diff = |o: usize| _mm256_sub_epi16(ld(q2, o), ld(q0, o));
                let gx = _mm256_sub_epi16(smooth(2), smooth(0));
                let d1 = diff(1);
                let gy =
                    _mm256_add_epi16(_mm256_add_epi16(diff(0), diff(2)), _mm256_add_epi16(d1, d1));
                let m = _mm256_add_epi16(_mm256_abs_epi16(gx), _mm256_abs_epi16(gy));
                _mm256_storeu_si256(ox.add(h).cast(), gx);
                _mm256_storeu_si256(oy.add(h).cast(), gy);
                _mm256_storeu_si256(om.add(h + 1).cast(), m);
            }
        }
        c += 32;
    }
    n
}

/// The seeds of [`row_seeds`](super::classify::row_seeds) in columns `1..1 + n` of the
/// middle row of `rows` (`[up, mid, down]`, `up` and `down` either as long as `mid` or
/// empty: no row there), `n` the multiple of the vector width it returns (with `n + 2 <=
/// mid.len()`), pushed as `(y, x)`. Unsafe to call only for the target features its level
/// needs.
pub(super) type SeedKernel =
    unsafe fn(rows: [&[u8]; 3], y: u32, seeds: &mut Vec<(u32, u32)>) -> usize;

/// Panics unless the rows above and below the seed scan's row are as long as it, or empty
/// (no row there): the seed kernels' loads rely on it.
pub(super) fn assert_neighbour_rows([up, mid, down]: [&[u8]; 3]) {
    let cols = mid.len();
    assert!(
        [up, down].iter().all(|r| r.is_empty() || r.len() == cols),
        "canny: neighbour rows of {} and {} for {cols} columns",
        up.len(),
        down.len()
    );
}

/// [`SeedKernel`] with AVX-512 BW: 64 columns a step; the eight neighbours' bytes OR-ed
/// together carry bit 0 (`WEAK`'s only bit) when one of them is `WEAK`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub(super) unsafe fn seeds_avx512(rows: [&[u8]; 3], y: u32, seeds: &mut Vec<(u32, u32)>) -> usize {
    use std::arch::x86_64::*;
    let [up, mid, down] = rows;
    let cols = mid.len();
    assert_neighbour_rows(rows);
    let n = cols.saturating_sub(2) / 64 * 64;
    let (edge, weak) = (_mm512_set1_epi8(EDGE as i8), _mm512_set1_epi8(WEAK as i8));
    let mut x = 1;
    while x < 1 + n {
        // SAFETY: AVX-512 F/BW are present (the caller's contract, from `simd_level()`); x >= 1
        // and x + 64 <= n + 1 <= cols - 1, so the loads at x - 1..x + 65 stay inside
        // `mid`, and inside `up` and `down`, which are read only when as long as `mid`
        // (asserted above).
        unsafe {
            let ld = |r: &[u8], at: usize| _mm512_loadu_si512(r.as_ptr().add(at).cast());
            let strong = _mm512_cmpeq_epi8_mask(ld(mid, x), edge);
            if strong != 0 {
                let mut any = _mm512_or_si512(ld(mid, x - 1), ld(mid, x + 1));
                for r in [up, down] {
                    if !r.is_empty() {
                        let three = _mm512_or_si512(ld(r, x - 1), ld(r, x + 1));
                        any = _mm512_or_si512(any, _mm512_or_si512(three, ld(r, x)));
                    }
                }
                let mut s = strong & _mm512_test_epi8_mask(any, weak);
                while s != 0 {
                    seeds.push((y, (x + s.trailing_zeros() as usize) as u32));
                    s &= s - 1;
                }
            }
        }
        x += 64;
    }
    n
}

/// [`SeedKernel`] with AVX2: [`seeds_avx512`] 32 columns a step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn seeds_avx2(rows: [&[u8]; 3], y: u32, seeds: &mut Vec<(u32, u32)>) -> usize {
    use std::arch::x86_64::*;
    let [up, mid, down] = rows;
    let cols = mid.len();
    assert_neighbour_rows(rows);
    let n = cols.saturating_sub(2) / 32 * 32;
    let (edge, weak) = (_mm256_set1_epi8(EDGE as i8), _mm256_set1_epi8(WEAK as i8));
    let mut x = 1;
    while x < 1 + n {
        // SAFETY: AVX2 is present (the caller's contract); x >= 1 and x + 32 <= n + 1 <=
        // cols - 1, so the loads at x - 1..x + 33 stay inside `mid`, and inside `up` and
        // `down`, which are read only when as long as `mid` (asserted above).
        unsafe {
            let ld = |r: &[u8], at: usize| _mm256_loadu_si256(r.as_ptr().add(at).cast());
            let strong = _mm256_movemask_epi8(_mm256_cmpeq_epi8(ld(mid, x), edge)) as u32;
            if strong != 0 {
                let mut any = _mm256_or_si256(ld(mid, x - 1), ld(mid, x + 1));
                for r in [up, down] {
                    if !r.is_empty() {
                        let three = _mm256_or_si256(ld(r, x - 1), ld(r, x + 1));
                        any = _mm256_or_si256(any, _mm256_or_si256(three, ld(r, x)));
                    }
                }
                let near = _mm256_cmpeq_epi8(_mm256_and_si256(any, weak), weak);
                let mut s = strong & _mm256_movemask_epi8(near) as u32;
                while s != 0 {
                    seeds.push((y, (x + s.trailing_zeros() as usize) as u32));
                    s &= s - 1;
                }
            }
        }
        x += 32;
    }
    n
}

/// [`SobelKernel`] for L2 with AVX2: the Sobel sums of [`sobel_l1_row_avx2`], 16 columns a
/// step, and `dx^2 + dy^2` in `i32` by one multiply-add of the interleaved `(dx, dy)`
/// pairs with themselves (at most `2 * 1020^2`: no overflow).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn sobel_l2_row_avx2(
    p: [&[u8]; 3],
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [i32],
) -> usize {
    use std::arch::x86_64::*;
    let cols = dx.len();
    check_sobel_bounds(p, dy, mag, cols);
    let n = cols / 32 * 32;
    let [q0, q1, q2] = p.map(<[u8]>::as_ptr);
    let (ox, oy, om) = (dx.as_mut_ptr(), dy.as_mut_ptr(), mag.as_mut_ptr());
    let mut h = 0;
    while h < n {
        // SAFETY: AVX2 is present (the caller's contract); h + 16 <= n <= cols, so the
        // loads read the padded rows at h..h + 18 <= cols + 2 and the stores write `dx`,
        // `dy` at h..h + 16 and `mag` at h + 1..h + 17, all inside the lengths
        // `check_sobel_bounds` asserted above.
        unsafe {
            let ld =
                |q: *const u8, o: usize| _mm256_cvtepu8_epi16(_mm_loadu_si128(q.add(h + o).cast()));
            let smooth = |o: usize| {
                let m = ld(q1, o);
                _mm256_add_epi16(
                    _mm256_add_epi16(ld(q0, o), ld(q2, o)),
                    _mm256_add_epi16(m, m),
                )
            };
            let diff = |o: usize| _mm256_sub_epi16(ld(q2, o), ld(q0, o));
            let gx = _mm256_sub_epi16(smooth(2), smooth(0));
            let d1 = diff(1);
            let gy = _mm256_add_epi16(_mm256_add_epi16(diff(0), diff(2)), _mm256_add_epi16(d1, d1));
            // pairs of columns 0-3 | 8-11 and 4-7 | 12-15 (per 128-bit lane)
            let lo = _mm256_unpacklo_epi16(gx, gy);
            let hi = _mm256_unpackhi_epi16(gx, gy);
            let (mlo, mhi) = (_mm256_madd_epi16(lo, lo), _mm256_madd_epi16(hi, hi));
            _mm256_storeu_si256(ox.add(h).cast(), gx);
            _mm256_storeu_si256(oy.add(h).cast(), gy);
            _mm256_storeu_si256(
                om.add(h + 1).cast(),
                _mm256_permute2x128_si256::<0x20>(mlo, mhi),
            );
            _mm256_storeu_si256(
                om.add(h + 9).cast(),
                _mm256_permute2x128_si256::<0x31>(mlo, mhi),
            );
        }
        h += 16;
    }
    n
}

/// [`RowKernel`] for L2 with AVX2: 32 columns a step as four groups of 8 `i32` lanes, with
/// the integer tests of [`decide`](super::classify::decide) as they are written (`|dy| <<
/// 15` against `|dx| * TG22` and `|dx| * TG22 + (|dx| << 16)`, which fit `i32`), compares
/// producing lane masks, and the four groups' classes packed to bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn decide_row_l2_avx2(
    rows: [&[i32]; 3],
    dx: &[i16],
    dy: &[i16],
    [low, high]: [i32; 2],
    line: &mut [u8],
) -> usize {
    use std::arch::x86_64::*;
    let cols = line.len();
    check_row_bounds(rows, dx, dy, cols);
    let n = cols / 32 * 32;
    let [r0, r1, r2] = rows.map(<[i32]>::as_ptr);
    let (px, py, out) = (dx.as_ptr(), dy.as_ptr(), line.as_mut_ptr());
    let (lowv, highv) = (_mm256_set1_epi32(low), _mm256_set1_epi32(high));
    let tg = _mm256_set1_epi32(TG22);
    let one = _mm256_set1_epi32(1);
    let zero = _mm256_setzero_si256();
    // packs interleave the 128-bit lanes: dwords (4 columns each) come out as groups
    // 0, 1, 2, 3 low halves then high halves; this puts them back in column order
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    let mut c = 0;
    while c < n {
        // SAFETY: AVX2 is present (the caller's contract); c + 32 <= cols, so the loads
        // read the padded rows at c..c + 34 <= cols + 2 and `dx`, `dy` at c..c + 32, and
        // the store writes `line` at c..c + 32, inside the lengths `check_row_bounds`
        // asserted above. (The body is written out rather than in a closure, which the
        // compiler left out of line, passing vectors through memory.)
        unsafe {
            let ld = |p: *const i32| _mm256_loadu_si256(p.cast());
            let m = [
                ld(r1.add(c + 1)),
                ld(r1.add(c + 9)),
                ld(r1.add(c + 17)),
                ld(r1.add(c + 25)),
            ];
            let any = _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_cmpgt_epi32(m[0], lowv),
                    _mm256_cmpgt_epi32(m[1], lowv),
                ),
                _mm256_or_si256(
                    _mm256_cmpgt_epi32(m[2], lowv),
                    _mm256_cmpgt_epi32(m[3], lowv),
                ),
            );
            if _mm256_testz_si256(any, any) != 0 {
                _mm256_storeu_si256(out.add(c).cast(), zero);
                c += 32;
                continue;
            }
            // the class (0, WEAK or EDGE) of each group of 8 columns, as `i32` lanes
            let mut class = [zero; 4];
            for (k, (class, &m)) in class.iter_mut().zip(&m).enumerate() {
                let g = c + 8 * k;
                let gx = _mm256_cvtepi16_epi32(_mm_loadu_si128(px.add(g).cast()));
                let gy = _mm256_cvtepi16_epi32(_mm_loadu_si128(py.add(g).cast()));
                let ax = _mm256_abs_epi32(gx);
                let ay = _mm256_slli_epi32::<{ super::SHIFT as i32 }>(_mm256_abs_epi32(gy));
                let tg22x = _mm256_mullo_epi32(ax, tg);
                let horizontal = _mm256_cmpgt_epi32(tg22x, ay);
                let tg67x =
                    _mm256_add_epi32(tg22x, _mm256_slli_epi32::<{ super::SHIFT as i32 + 1 }>(ax));
                let vertical = _mm256_andnot_si256(horizontal, _mm256_cmpgt_epi32(ay, tg67x));
                // the diagonal neighbours: (-1, -s) and (1, s), s the sign of gx * gy
                let falling = _mm256_srai_epi32::<31>(_mm256_xor_si256(gx, gy));
                let diag_a = _mm256_blendv_epi8(ld(r0.add(g)), ld(r0.add(g + 2)), falling);
                let diag_b = _mm256_blendv_epi8(ld(r2.add(g + 2)), ld(r2.add(g)), falling);
                let a = _mm256_blendv_epi8(diag_a, ld(r0.add(g + 1)), vertical);
                let a = _mm256_blendv_epi8(a, ld(r1.add(g)), horizontal);
                let b = _mm256_blendv_epi8(diag_b, ld(r2.add(g + 1)), vertical);
                let b = _mm256_blendv_epi8(b, ld(r1.add(g + 2)), horizontal);
                // horizontal and vertical keep `m >= after` (`!(b > m)`), diagonals need
                // `m > b`
                let axis = _mm256_or_si256(horizontal, vertical);
                let after = _mm256_or_si256(
                    _mm256_cmpgt_epi32(m, b),
                    _mm256_andnot_si256(_mm256_cmpgt_epi32(b, m), axis),
                );
                let kept = _mm256_and_si256(
                    _mm256_and_si256(_mm256_cmpgt_epi32(m, lowv), _mm256_cmpgt_epi32(m, a)),
                    after,
                );
                let strong = _mm256_and_si256(kept, _mm256_cmpgt_epi32(m, highv));
                // WEAK + 1 = EDGE for the strong ones (a subset of the kept)
                *class =
                    _mm256_add_epi32(_mm256_and_si256(kept, one), _mm256_and_si256(strong, one));
            }
            let bytes = _mm256_packs_epi16(
                _mm256_packs_epi32(class[0], class[1]),
                _mm256_packs_epi32(class[2], class[3]),
            );
            _mm256_storeu_si256(out.add(c).cast(), _mm256_permutevar8x32_epi32(bytes, order));
        }
        c += 32;
    }
    n
}

/// [`SobelKernel`] for L2 with AVX-512 BW: [`sobel_l2_row_avx2`] 32 columns a step, the
/// multiply-add's `i32` lanes put back in column order by two two-source permutes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub(super) unsafe fn sobel_l2_row_avx512(
    p: [&[u8]; 3],
    dx: &mut [i16],
    dy: &mut [i16],
    mag: &mut [i32],
) -> usize {
    use std::arch::x86_64::*;
    let cols = dx.len();
    check_sobel_bounds(p, dy, mag, cols);
    let n = cols / 32 * 32;
    let [q0, q1, q2] = p.map(<[u8]>::as_ptr);
    let (ox, oy, om) = (dx.as_mut_ptr(), dy.as_mut_ptr(), mag.as_mut_ptr());
    // `lo` holds columns 0-3, 8-11, 16-19, 24-27 (one group per 128-bit lane), `hi` the
    // groups 4 columns further: indices 16 and up pick from `hi`
    let first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    let second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    let mut c = 0;
    while c < n {
        // SAFETY: AVX-512 F/BW are present (the caller's contract, from `simd_level()`); c + 32
        // <= cols, so the loads read the padded rows at c..c + 34 <= cols + 2 and the
        // stores write `dx`, `dy` at c..c + 32 and `mag` at c + 1..c + 33, all inside the
        // lengths `check_sobel_bounds` asserted above.
        unsafe {
            let ld = |q: *const u8, o: usize| {
                _mm512_cvtepu8_epi16(_mm256_loadu_si256(q.add(c + o).cast()))
            };
            let smooth = |o: usize| {
                let m = ld(q1, o);
                _mm512_add_epi16(
                    _mm512_add_epi16(ld(q0, o), ld(q2, o)),
                    _mm512_add_epi16(m, m),
                )
            };
            let diff = |o: usize| _mm512_sub_epi16(ld(q2, o), ld(q0, o));
            let gx = _mm512_sub_epi16(smooth(2), smooth(0));
            let d1 = diff(1);
            let gy = _mm512_add_epi16(_mm512_add_epi16(diff(0), diff(2)), _mm512_add_epi16(d1, d1));
            let lo = _mm512_unpacklo_epi16(gx, gy);
            let hi = _mm512_unpackhi_epi16(gx, gy);
            let (mlo, mhi) = (_mm512_madd_epi16(lo, lo), _mm512_madd_epi16(hi, hi));
            _mm512_storeu_si512(ox.add(c).cast(), gx);
            _mm512_storeu_si512(oy.add(c).cast(), gy);
            _mm512_storeu_si512(
                om.add(c + 1).cast(),
                _mm512_permutex2var_epi32(mlo, first, mhi),
            );
            _mm512_storeu_si512(
                om.add(c + 17).cast(),
                _mm512_permutex2var_epi32(mlo, second, mhi),
            );
        }
        c += 32;
    }
    n
}

/// [`RowKernel`] for L2 with AVX-512 F/BW: [`decide_row_l2_avx2`] as two groups of 16
/// `i32` lanes a step, with mask registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub(super) unsafe fn decide_row_l2_avx512(
    rows: [&[i32]; 3],
    dx: &[i16],
    dy: &[i16],
    [low, high]: [i32; 2],
    line: &mut [u8],
) -> usize {
    use std::arch::x86_64::*;
    let cols = line.len();
    check_row_bounds(rows, dx, dy, cols);
    let n = cols / 32 * 32;
    let [r0, r1, r2] = rows.map(<[i32]>::as_ptr);
    let (px, py, out) = (dx.as_ptr(), dy.as_ptr(), line.as_mut_ptr());
    let (lowv, highv) = (_mm512_set1_epi32(low), _mm512_set1_epi32(high));
    let tg = _mm512_set1_epi32(TG22);
    let zero = _mm512_setzero_si512();
    let (one, two) = (_mm512_set1_epi8(WEAK as i8), _mm512_set1_epi8(EDGE as i8));
    // (kept, strong) masks of the 16 columns at c
    // SAFETY: (the closure's body) AVX-512 F/BW are present (the caller's contract); it is
    // only called with c + 16 <= cols, so the loads read `dx`, `dy` at c..c + 16 and the
    // padded rows at c..c + 18 <= cols + 2, inside the lengths asserted above.
    let sixteen = |c: usize, m: __m512i, above: __mmask16| unsafe {
        let ld = |p: *const i32| _mm512_loadu_si512(p.cast());
        let gx = _mm512_cvtepi16_epi32(_mm256_loadu_si256(px.add(c).cast()));
        let gy = _mm512_cvtepi16_epi32(_mm256_loadu_si256(py.add(c).cast()));
        let ax = _mm512_abs_epi32(gx);
        let ay = _mm512_slli_epi32::<{ super::SHIFT }>(_mm512_abs_epi32(gy));
        let tg22x = _mm512_mullo_epi32(ax, tg);
        let horizontal = _mm512_cmpgt_epi32_mask(tg22x, ay);
        let tg67x = _mm512_add_epi32(tg22x, _mm512_slli_epi32::<{ super::SHIFT + 1 }>(ax));
        let vertical = !horizontal & _mm512_cmpgt_epi32_mask(ay, tg67x);
        // the diagonal neighbours: (-1, -s) and (1, s), s the sign of gx * gy
        let falling = _mm512_cmplt_epi32_mask(_mm512_xor_si512(gx, gy), zero);
        let diag_a = _mm512_mask_blend_epi32(falling, ld(r0.add(c)), ld(r0.add(c + 2)));
        let diag_b = _mm512_mask_blend_epi32(falling, ld(r2.add(c + 2)), ld(r2.add(c)));
        let a = _mm512_mask_blend_epi32(vertical, diag_a, ld(r0.add(c + 1)));
        let a = _mm512_mask_blend_epi32(horizontal, a, ld(r1.add(c)));
        let b = _mm512_mask_blend_epi32(vertical, diag_b, ld(r2.add(c + 1)));
        let b = _mm512_mask_blend_epi32(horizontal, b, ld(r1.add(c + 2)));
        // horizontal and vertical keep `m >= after`, diagonals need `m > both`
        let axis = horizontal | vertical;
        let after =
            (_mm512_cmpgt_epi32_mask(m, b) & !axis) | (_mm512_cmpge_epi32_mask(m, b) & axis);
        let kept = above & _mm512_cmpgt_epi32_mask(m, a) & after;
        (kept, kept & _mm512_cmpgt_epi32_mask(m, highv))
    };
    let mut c = 0;
    while c < n {
        // SAFETY: AVX-512 F/BW are present (the caller's contract); c + 32 <= cols, so the
        // loads read the padded middle row at c + 1..c + 33 <= cols + 2, the groups stay
        // in bounds (see `sixteen`), and the store writes `line` at c..c + 32, inside the
        // lengths `check_row_bounds` asserted above.
        unsafe {
            let m_lo = _mm512_loadu_si512(r1.add(c + 1).cast());
            let m_hi = _mm512_loadu_si512(r1.add(c + 17).cast());
            let above_lo = _mm512_cmpgt_epi32_mask(m_lo, lowv);
            let above_hi = _mm512_cmpgt_epi32_mask(m_hi, lowv);
            if above_lo | above_hi == 0 {
                _mm256_storeu_si256(out.add(c).cast(), _mm256_setzero_si256());
                c += 32;
                continue;
            }
            let (kept_lo, strong_lo) = sixteen(c, m_lo, above_lo);
            let (kept_hi, strong_hi) = sixteen(c + 16, m_hi, above_hi);
            let kept = u64::from(kept_lo) | (u64::from(kept_hi) << 16);
            let strong = u64::from(strong_lo) | (u64::from(strong_hi) << 16);
            // (512-bit byte operations, whose low 32 bytes are the chunk: the 256-bit
            // masked forms would need AVX-512 VL as well)
            let class = _mm512_mask_blend_epi8(strong, _mm512_maskz_mov_epi8(kept, one), two);
            _mm256_storeu_si256(out.add(c).cast(), _mm512_castsi512_si256(class));
        }
        c += 32;
    }
    n
}
