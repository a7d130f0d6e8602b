//! Kaldi's FFTs and DCT matrix against numpy/scipy values in Kaldi's layouts
//! (`golden/fft_goldens.txt`, written by `golden/gen_fft_goldens.py`), and the inverse
//! round trips.

use crate::common;

use dense_matrix::{
    complex_fft, compute_dct_matrix, real_fft, real_fft_inefficient, Error, Matrix, Real,
    SplitRadixComplexFft, SplitRadixRealFft, Vector,
};

struct Case {
    kind: String,
    n: usize,
    input: Vec<f64>,
    output: Vec<f64>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("golden/fft_goldens.txt");
    text.lines()
        .map(|line| {
            let parts: Vec<&str> = line.split(" : ").collect();
            assert_eq!(parts.len(), 3, "golden line: {line:.60}");
            let mut head = parts[0].split_whitespace();
            let kind = head.next().unwrap().to_string();
            let n = head.next().unwrap().parse().unwrap();
            let nums = |s: &str| -> Vec<f64> {
                s.split_whitespace().map(|x| x.parse().unwrap()).collect()
            };
            Case {
                kind,
                n,
                input: nums(parts[1]),
                output: nums(parts[2]),
            }
        })
        .collect()
}

/// `max |got - want| <= tol * max(1, max |want|)`.
#[track_caller]
fn assert_near<R: Real>(got: &[R], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let tol = if R::NAME == "f32" { 2e-6 } else { 1e-13 } * (want.len() as f64).log2().max(1.0);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let e = (g.to_f64() - w).abs();
        assert!(
            e <= tol * scale,
            "{what} ({}): element {i}: {} vs {w} (error {e:e})",
            R::NAME,
            g.to_f64()
        );
    }
}

fn to<R: Real>(xs: &[f64]) -> Vec<R> {
    xs.iter().map(|&x| R::from_f64(x)).collect()
}

fn goldens<R: Real>() {
    let cases = cases();
    assert!(cases.len() > 30);
    for c in &cases {
        let what = format!("{} {}", c.kind, c.n);
        match c.kind.as_str() {
            "complex" | "complex_inv" => {
                let forward = c.kind == "complex";
                let mut v = Vector::from_vec(to::<R>(&c.input));
                complex_fft(&mut v, forward);
                assert_near(v.data(), &c.output, &format!("complex_fft {what}"));
                if c.n.is_power_of_two() {
                    let plan = SplitRadixComplexFft::<R>::new(c.n);
                    assert_eq!(plan.n(), c.n);
                    let mut x = to::<R>(&c.input);
                    plan.compute(&mut x, forward);
                    assert_near(&x, &c.output, &format!("SplitRadixComplexFft {what}"));
                    let input = to::<R>(&c.input);
                    let mut xr: Vec<R> = input.iter().step_by(2).copied().collect();
                    let mut xi: Vec<R> = input.iter().skip(1).step_by(2).copied().collect();
                    plan.compute_split(&mut xr, &mut xi, forward);
                    let split: Vec<R> = xr.iter().zip(&xi).flat_map(|(&a, &b)| [a, b]).collect();
                    assert_near(&split, &c.output, &format!("compute_split {what}"));
                }
            }
            "real" => {
                let mut v = Vector::from_vec(to::<R>(&c.input));
                real_fft(&mut v, true);
                assert_near(v.data(), &c.output, &format!("real_fft {what}"));
                let mut v = Vector::from_vec(to::<R>(&c.input));
                real_fft_inefficient(&mut v, true);
                assert_near(v.data(), &c.output, &format!("real_fft_inefficient {what}"));
                // backward from the packed spectrum gives N times the signal
                let scaled: Vec<f64> = c.input.iter().map(|x| x * c.n as f64).collect();
                let mut v = Vector::from_vec(to::<R>(&c.output));
                real_fft(&mut v, false);
                assert_near(v.data(), &scaled, &format!("real_fft backward {what}"));
                let mut v = Vector::from_vec(to::<R>(&c.output));
                real_fft_inefficient(&mut v, false);
                assert_near(
                    v.data(),
                    &scaled,
                    &format!("real_fft_inefficient backward {what}"),
                );
                if c.n.is_power_of_two() {
                    let plan = SplitRadixRealFft::<R>::new(c.n);
                    assert_eq!(plan.n(), c.n);
                    let mut x = to::<R>(&c.input);
                    plan.compute(&mut x, true);
                    assert_near(&x, &c.output, &format!("SplitRadixRealFft {what}"));
                    plan.compute(&mut x, false);
                    assert_near(&x, &scaled, &format!("SplitRadixRealFft round trip {what}"));
                }
            }
            "dct" => {
                let k = c.input[0] as usize;
                let mut m = Matrix::<R>::new(k, c.n);
                compute_dct_matrix(&mut m);
                let got: Vec<R> = m.rows().flatten().copied().collect();
                assert_near(&got, &c.output, &format!("compute_dct_matrix {k} x {what}"));
            }
            other => panic!("unknown golden kind {other}"),
        }
    }
}

#[test]
fn transforms_match_numpy_in_kaldis_packing_f32() {
    goldens::<f32>();
}

#[test]
fn transforms_match_numpy_in_kaldis_packing_f64() {
    goldens::<f64>();
}

#[test]
fn round_trips_of_random_signals_return_n_times_the_input() {
    let mut g = common::rng(0xff7);
    eprintln!("fft round trips: seed 0xff7");
    for bits in 2..=12 {
        let n = 1usize << bits;
        let x = common::random_vector::<f64>(&mut g, n);
        let plan = SplitRadixRealFft::<f64>::new(n);
        let mut y = x.data().to_vec();
        plan.compute(&mut y, true);
        plan.compute(&mut y, false);
        let want: Vec<f64> = x.data().iter().map(|v| v * n as f64).collect();
        assert_near(&y, &want, &format!("real round trip {n}"));

        let z = common::random_vector::<f64>(&mut g, 2 * n);
        let plan = SplitRadixComplexFft::<f64>::new(n);
        let mut y = z.data().to_vec();
        plan.compute(&mut y, true);
        plan.compute(&mut y, false);
        let want: Vec<f64> = z.data().iter().map(|v| v * n as f64).collect();
        assert_near(&y, &want, &format!("complex round trip {n}"));
    }
}

#[test]
fn plans_reject_unsupported_lengths() {
    for n in [0, 2, 6, 12] {
        let e = SplitRadixRealFft::<f32>::try_new(n).unwrap_err();
        assert_eq!(
            e,
            Error::FftSize {
                n,
                what: "a power of two, at least 4"
            }
        );
    }
    assert_eq!(
        SplitRadixComplexFft::<f64>::try_new(24)
            .unwrap_err()
            .to_string(),
        "cannot plan an FFT of 24 points: the length must be a power of two"
    );
    assert!(matches!(
        SplitRadixComplexFft::<f64>::try_new(0),
        Err(Error::FftSize { n: 0, .. })
    ));
}

#[test]
#[should_panic(expected = "SplitRadixComplexFft::new: cannot plan an FFT of 24 points")]
fn complex_new_panics_on_a_size_try_new_refuses() {
    let _ = SplitRadixComplexFft::<f64>::new(24);
}

#[test]
#[should_panic(expected = "SplitRadixRealFft::new: ")]
fn real_new_panics_on_a_size_try_new_refuses() {
    let _ = SplitRadixRealFft::<f32>::new(2);
}

#[test]
#[should_panic(expected = "SplitRadixRealFft::compute: data length 6 does not match N 8")]
fn compute_names_a_wrong_length() {
    SplitRadixRealFft::<f32>::new(8).compute(&mut [0.0; 6], true);
}

#[test]
#[should_panic(expected = "real_fft: dimension 5 does not match an even number, at least 2")]
fn real_fft_rejects_odd_lengths() {
    real_fft(&mut Vector::<f64>::new(5), true);
}

/// The DFT by its definition, `X_k = sum_j x_j e^{-+2 pi i j k / n}`, in `f64`, with the
/// root's angle reduced mod `n` (the independent model of Bluestein's route).
fn naive_dft(x: &[f64], forward: bool) -> Vec<f64> {
    let n = x.len() / 2;
    let sign = if forward { -1.0 } else { 1.0 };
    let mut out = vec![0.0; 2 * n];
    for k in 0..n {
        let (mut sr, mut si) = (0.0, 0.0);
        for j in 0..n {
            let a = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
            let (c, s) = (a.cos(), a.sin());
            sr += x[2 * j] * c - x[2 * j + 1] * s;
            si += x[2 * j] * s + x[2 * j + 1] * c;
        }
        out[2 * k] = sr;
        out[2 * k + 1] = si;
    }
    out
}

#[test]
fn any_length_matches_the_naive_dft() {
    let seed = 0xb1_0e57;
    eprintln!("complex_fft any length: seed {seed:#x}");
    let mut g = common::rng(seed);
    let mut lengths = vec![3, 5, 7, 9, 12, 100, 1000, 997, 1009];
    lengths.extend((0..20).map(|_| rand::Rng::random_range(&mut g, 2..300)));
    for n in lengths {
        let x = common::random_vector::<f64>(&mut g, 2 * n);
        for forward in [true, false] {
            let want = naive_dft(x.data(), forward);
            let mut v = x.clone();
            complex_fft(&mut v, forward);
            assert_near(
                v.data(),
                &want,
                &format!("complex_fft {n} forward={forward}"),
            );
        }
        // f32 data goes through the same f64 route
        let x32: Vec<f32> = x.data().iter().map(|&v| v as f32).collect();
        let want = naive_dft(&x32.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), true);
        let mut v = Vector::from_vec(x32);
        complex_fft(&mut v, true);
        assert_near(v.data(), &want, &format!("complex_fft f32 {n}"));
    }
}

#[test]
fn prime_lengths_round_trip_to_n_times_the_input() {
    let mut g = common::rng(0x997);
    for n in [2_u32, 3, 11, 97, 997, 4095, 7919] {
        let n = n as usize;
        let x = common::random_vector::<f64>(&mut g, 2 * n);
        let mut v = x.clone();
        complex_fft(&mut v, true);
        complex_fft(&mut v, false);
        let want: Vec<f64> = x.data().iter().map(|a| a * n as f64).collect();
        assert_near(v.data(), &want, &format!("round trip {n}"));
    }
    // a real transform of an even length whose half is prime
    let x = common::random_vector::<f64>(&mut g, 2 * 499);
    let mut v = x.clone();
    real_fft(&mut v, true);
    real_fft(&mut v, false);
    let want: Vec<f64> = x.data().iter().map(|a| a * 998.0).collect();
    assert_near(v.data(), &want, "real round trip 998");
}
