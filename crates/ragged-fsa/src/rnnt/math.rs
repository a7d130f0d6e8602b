//! A vectorisable `e^x` for `f32` and the row kernels of the joiner losses (log-sum-exp of
//! a row of logits, and the row's gradient).

/// `e^x` within a few ulp of `f32::exp` for `x <= 88.7`, 0 below -87.3 (and for `-inf`);
/// branch-free (selects only) so that loops over slices vectorise.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 * 2^23: adding it rounds to an integer
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let xc = x.clamp(-87.3, 88.7);
    let k = (xc * std::f32::consts::LOG2_E + MAGIC) - MAGIC;
    let r = (xc - k * LN2_HI) - k * LN2_LO;
    // degree-6 Taylor-like minimax polynomial of e^r on [-ln2/2, ln2/2]
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_668 + r * (0.008_333_452 + r * 0.001_388_887_9)))));
    let bits = (k + MAGIC).to_bits().wrapping_sub(MAGIC.to_bits());
    let scale = f32::from_bits(bits.wrapping_add(127) << 23);
    let y = p * scale;
    if x < -87.3 {
        0.0
    } else {
        y
    }
}

/// `ln(1 + x)` for `x` in `[0, 1]` (a vectorisable polynomial, within about 1e-7 of
/// `f32::ln_1p` there).
#[inline(always)]
fn ln_1p_unit(x: f32) -> f32 {
    // 1 + x = 2^k m with m in [sqrt(1/2), sqrt(2)); ln(m) = 2 atanh(f / (2 + f)), f = m - 1
    let y = 1.0 + x;
    let big = y > std::f32::consts::SQRT_2;
    let k = if big { std::f32::consts::LN_2 } else { 0.0 };
    // f = m - 1, computed from x: x itself when m = y, (x - 1) / 2 when m = y / 2
    let f = if big { (x - 1.0) * 0.5 } else { x };
    let s = f / (2.0 + f);
    let s2 = s * s;
    let poly =
        1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0 + s2 / 11.0))));
    k + 2.0 * s * poly
}

/// `ln(e^a + e^b)` in `f32` with [`exp_f32`] and an inline `ln_1p`.
#[inline(always)]
pub(crate) fn log_add_f32(a: f32, b: f32) -> f32 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f32::NEG_INFINITY {
        return hi;
    }
    hi + ln_1p_unit(exp_f32(lo - hi))
}

/// `ln(sum e^x)` of a row with finite values (the caller checked), by its maximum.
#[inline]
pub(crate) fn log_sum_exp(row: &[f32]) -> f32 {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sums = [0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for chunk in &mut chunks {
        for (acc, &x) in sums.iter_mut().zip(chunk) {
            *acc += exp_f32(x - max);
        }
    }
    let mut sum: f32 = chunks.remainder().iter().map(|&x| exp_f32(x - max)).sum();
    sum += sums.iter().sum::<f32>();
    max + sum.ln()
}

/// `out[c] = -coef * e^(row[c] - norm)`: the softmax part of a row's gradient (`coef` is the
/// row's total occupation, times the loss scale).
#[inline]
pub(crate) fn scaled_softmax(row: &[f32], norm: f32, coef: f32, out: &mut [f32]) {
    if coef == 0.0 {
        out.fill(0.0);
        return;
    }
    for (o, &x) in out.iter_mut().zip(row) {
        *o = -coef * exp_f32(x - norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_f32_matches_std() {
        let mut x = -90.0f32;
        while x < 88.0 {
            let (got, want) = (exp_f32(x), x.exp());
            // results below about 1.2e-38 (x < -87.3) are flushed to 0
            let tol = 4.0 * f32::EPSILON * want + 2.0 * f32::MIN_POSITIVE;
            assert!((got - want).abs() <= tol, "exp({x}) = {got}, std {want}");
            x += 0.0137;
        }
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(0.0), 1.0);
    }

    #[test]
    fn log_add_f32_matches_f64() {
        let mut a = -30.0f32;
        while a < 30.0 {
            for b in [-1e30f32, -20.0, -3.5, -0.7, 0.0, 0.3, 2.0, 17.0] {
                let want = {
                    let (x, y) = (f64::from(a), f64::from(b));
                    let m = x.max(y);
                    m + ((x - m).exp() + (y - m).exp()).ln()
                };
                let got = f64::from(log_add_f32(a, b));
                assert!(
                    (got - want).abs() <= 2e-7 * want.abs().max(1.0),
                    "{a} {b}: {got} vs {want}"
                );
            }
            a += 0.173;
        }
        assert_eq!(log_add_f32(f32::NEG_INFINITY, 2.0), 2.0);
        assert_eq!(
            log_add_f32(f32::NEG_INFINITY, f32::NEG_INFINITY),
            f32::NEG_INFINITY
        );
    }

    #[test]
    fn log_sum_exp_matches_f64() {
        let row: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin() * 5.0).collect();
        let want = row.iter().map(|&x| f64::from(x).exp()).sum::<f64>().ln();
        assert!((f64::from(log_sum_exp(&row)) - want).abs() < 1e-5);
    }
}
