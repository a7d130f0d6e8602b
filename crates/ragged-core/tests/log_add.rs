//! `log_add` against hand-worked values and a wide-precision reference.

use ragged_core::{log_add, Ragged};

#[test]
fn infinities_and_nan() {
    let inf = f64::INFINITY;
    assert_eq!(log_add(f64::NEG_INFINITY, 3.0), 3.0);
    assert_eq!(log_add(3.0, f64::NEG_INFINITY), 3.0);
    assert_eq!(
        log_add(f64::NEG_INFINITY, f64::NEG_INFINITY),
        f64::NEG_INFINITY
    );
    assert_eq!(log_add(inf, inf), inf);
    assert_eq!(log_add(inf, 1.0), inf);
    assert_eq!(log_add(f64::NEG_INFINITY, inf), inf);
    assert_eq!(log_add(f32::INFINITY, f32::INFINITY), f32::INFINITY);
    for (a, b) in [
        (f64::NAN, 1.0),
        (1.0, f64::NAN),
        (f64::NAN, f64::NEG_INFINITY),
    ] {
        assert!(log_add(a, b).is_nan(), "{a} {b}");
        assert!(log_add(b, a).is_nan(), "{b} {a}");
    }
    assert!(log_add(f64::NEG_INFINITY, f64::NAN).is_nan());
}

#[test]
fn hand_worked_values() {
    // ln(e^0 + e^0) = ln 2; ln(e^1 + e^1) = 1 + ln 2.
    assert_eq!(log_add(0.0f64, 0.0), std::f64::consts::LN_2);
    assert!((log_add(1.0f64, 1.0) - (1.0 + std::f64::consts::LN_2)).abs() < 1e-15);
    // ln(e^2 + e^3) = 3 + ln(1 + e^-1) = 3.313261687518223.
    assert!((log_add(2.0f64, 3.0) - 3.313_261_687_518_223).abs() < 1e-14);
    // A term far below the other: ln(1 + e^-30) = e^-30 - e^-60 / 2 + ... ,
    // 9.357622968840175e-14, which `ln(e^d + 1)` rounds to 0 in f32 and gets right to
    // only three digits in f64.
    let tiny = log_add(0.0f64, -30.0);
    assert!(
        (tiny / 9.357_622_968_840_175e-14 - 1.0).abs() < 1e-12,
        "{tiny}"
    );
    let tiny32 = log_add(0.0f32, -30.0);
    assert!((tiny32 / 9.357_623e-14 - 1.0).abs() < 1e-6, "{tiny32}");
}

#[test]
fn f32_agrees_with_an_f64_reference() {
    let mut x = 0x1234_5678u32;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        (x % 4000) as f32 / 100.0 - 20.0
    };
    for _ in 0..2000 {
        let (a, b) = (next(), next());
        // The definition, in f64 (e^20 is far from overflow).
        let reference = ((a as f64).exp() + (b as f64).exp()).ln();
        let got = log_add(a, b) as f64;
        assert!(
            (got - reference).abs() <= 4.0 * f32::EPSILON as f64 * reference.abs().max(1.0),
            "{a} {b}"
        );
        assert_eq!(log_add(a, b), log_add(b, a));
    }
}

#[test]
fn log_sum_per_sublist_uses_it() {
    let r: Ragged<f64> = "[ [ 0 0 ] [ ] [ 5 ] ]".parse().unwrap();
    let sums = r.log_sum_per_sublist(f64::NEG_INFINITY);
    assert_eq!(sums, vec![std::f64::consts::LN_2, f64::NEG_INFINITY, 5.0]);
}
