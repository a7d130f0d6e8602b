//! Hardening round 3: Kaldi's "no pruning" values of `LogSumExp`, the zero of a negative
//! `ApplyPowAbs`, `TopEigs`'s default Krylov dimension 0, compressed-matrix headers whose
//! codes decode to inf, and text matrices of many rows read in linear time.

use dense_matrix::{
    CompressedMatrix, CompressionMethod, Error, Matrix, SpMatrix, Vector, MAX_COMPRESSED_RANGE,
};

// ---------------------------------------------------------------- item 17: sentinels

/// `ln sum e^x` over the terms at least `max - prune`, or all of them, summed in `f64`.
fn naive_log_sum_exp(xs: &[f64], prune: Option<f64>) -> f64 {
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = xs
        .iter()
        .filter(|&&x| prune.is_none_or(|p| x >= max - p))
        .map(|&x| (x - max).exp())
        .sum();
    max + sum.ln()
}

#[track_caller]
fn check_log_sum_exp(prune: Option<f64>, expected: f64) {
    let xs = [0.0, -0.5, -2.0, -30.0];
    let v = Vector::from_vec(xs.to_vec());
    let m = Matrix::from_rows(&[[xs[0], xs[1]], [xs[2], xs[3]]]);
    let got = v.log_sum_exp(prune);
    assert!((got - expected).abs() < 1e-12, "vector {prune:?}: {got}");
    let got = m.log_sum_exp(prune);
    assert!((got - expected).abs() < 1e-12, "matrix {prune:?}: {got}");
}

#[test]
fn log_sum_exp_prunes_only_for_a_positive_beam() {
    // hardening round 3, item 17: `Some(-1.0)` gave -inf and `Some(0.0)` the maximum
    // alone; Kaldi prunes only when `prune > 0` ("use -1 if you don't want it to prune")
    let xs = [0.0, -0.5, -2.0, -30.0];
    let all = naive_log_sum_exp(&xs, None);
    check_log_sum_exp(None, all);
    check_log_sum_exp(Some(-1.0), all);
    check_log_sum_exp(Some(0.0), all);
    check_log_sum_exp(Some(-0.0), all);
    // a positive beam keeps the terms within it: e^0 + e^-0.5 for a beam of 1
    check_log_sum_exp(Some(1.0), (1.0 + (-0.5f64).exp()).ln());
    check_log_sum_exp(Some(2.0), naive_log_sum_exp(&xs, Some(2.0)));
    // in f32 too
    let v = Vector::from_vec(vec![0.0f32, -0.5, -2.0]);
    let all = (1.0 + (-0.5f64).exp() + (-2.0f64).exp()).ln() as f32;
    assert!((v.log_sum_exp(Some(-1.0)) - all).abs() < 1e-6);
}

#[test]
fn apply_pow_abs_keeps_zeros_for_a_negative_power() {
    // Kaldi's `VectorBase::ApplyPowAbs`: "if power is negative and the input value is
    // zero, the output is set zero" (`0^-1` was inf)
    let mut v = Vector::from_vec(vec![0.0f64, 2.0, -4.0, -0.0]);
    v.apply_pow_abs(-1.0, false);
    assert_eq!(v.data(), &[0.0, 0.5, 0.25, 0.0]);
    let mut v = Vector::from_vec(vec![0.0f64, 2.0, -4.0]);
    v.apply_pow_abs(-0.5, true);
    assert_eq!(v.data(), &[0.0, 2f64.powf(-0.5), -0.5]);
    // a non-negative power is unchanged: 0^0 = 1, 0^2 = 0
    let mut v = Vector::from_vec(vec![0.0f64, -3.0]);
    v.apply_pow_abs(0.0, true);
    assert_eq!(v.data(), &[1.0, -1.0]);
    let mut v = Vector::from_vec(vec![0.0f64, -3.0]);
    v.apply_pow_abs(2.0, true);
    assert_eq!(v.data(), &[0.0, -9.0]);
}

#[test]
fn top_eigs_takes_zero_lanczos_dims_as_the_default() {
    // Kaldi's `TopEigs(s, P, lanczos_dim = 0)`: `lanczos_dim <= 0` is its default, the
    // larger of k + 50 and 1.5 k; `Some(0)` was `InvalidArgument`. n = 80, k = 3: the
    // default 53 is below n, so the Lanczos path runs, and gives what `Some(53)` gives
    let n = 80;
    let mut a = SpMatrix::<f64>::new(n);
    for (i, x) in a.data_mut().iter_mut().enumerate() {
        *x = ((i * 7919) % 97) as f64 / 97.0 - 0.5;
    }
    let run = |lanczos_dim: Option<usize>| {
        let mut s = Vector::<f64>::new(3);
        let mut p = Matrix::<f64>::new(n, 3);
        a.top_eigs(&mut s, &mut p, lanczos_dim).unwrap();
        (s, p)
    };
    let explicit = run(Some(53));
    assert!(run(Some(0)) == explicit);
    assert!(run(None) == explicit);
    // a non-zero dimension below k is still refused
    let mut s = Vector::<f64>::new(3);
    let mut p = Matrix::<f64>::new(n, 3);
    assert!(matches!(
        a.top_eigs(&mut s, &mut p, Some(2)),
        Err(Error::InvalidArgument { .. })
    ));
}

// ---------------------------------------------------------------- item 14: decoded inf

/// `token`, the global header, and `data` after it.
fn compressed_bytes(
    token: &[u8],
    min: f32,
    range: f32,
    rows: i32,
    cols: i32,
    data: &[u8],
) -> Vec<u8> {
    let mut b = token.to_vec();
    b.extend(min.to_le_bytes());
    b.extend(range.to_le_bytes());
    b.extend(rows.to_le_bytes());
    b.extend(cols.to_le_bytes());
    b.extend(data);
    b
}

#[track_caller]
fn check_refused(bytes: &[u8], found: &str) {
    match CompressedMatrix::read_kaldi(&mut &bytes[..]) {
        Err(Error::Format {
            expected,
            found: got,
        }) => {
            assert_eq!(
                expected,
                "a compressed-matrix header whose values all decode to finite floats"
            );
            assert_eq!(got, found);
        }
        other => panic!("expected a refused header, got {other:?}"),
    }
    // the matrix reader (which decompresses) refuses it the same way
    assert!(matches!(
        Matrix::<f32>::read_kaldi(&mut &bytes[..], true),
        Err(Error::Format { .. })
    ));
}

#[test]
fn finite_headers_that_decode_to_inf_are_refused() {
    // hardening round 3, item 14: min + range is finite (4e37), but Kaldi's
    // `min + 65535 * (range / 65535)` in f32 overflows to inf for the top code
    let bytes = compressed_bytes(b"CM2 ", -3e38, f32::MAX, 1, 1, &[0xff, 0xff]);
    check_refused(
        &bytes,
        "minimum -300000000000000000000000000000000000000, range \
         340282350000000000000000000000000000000 (code 65535 decodes to inf)",
    );
    // `CM`: the percentiles are finite (-1.7e38 and 1.7e38), but byte 64 decodes as
    // p0 + (p25 - p0) * 64 / 64, and (p25 - p0) * 64 overflows in f32
    let mut column = Vec::new();
    for code in [0u16, 65535, 65535, 65535] {
        column.extend(code.to_le_bytes());
    }
    column.push(64);
    let bytes = compressed_bytes(b"CM ", -1.7e38, 3.4e38, 1, 1, &column);
    let p25 = -1.7e38f32 + 3.4e38f32 * 1.525_902_2e-5 * 65535.0;
    assert!(p25.is_finite());
    check_refused(
        &bytes,
        &format!(
            "minimum -170000000000000000000000000000000000000, range \
             340000000000000000000000000000000000000, column 0: percentile codes \
             [0, 65535, 65535, 65535], values [-1.7e38, {p25:?}, {p25:?}, {p25:?}] \
             (byte 64 decodes to inf)"
        ),
    );
}

#[test]
fn the_widest_compressed_matrices_still_read_back() {
    // every header compression writes decodes to finite values, and reads back
    let half = MAX_COMPRESSED_RANGE / 2.0;
    let rows: Vec<[f32; 3]> = (0..12)
        .map(|r| {
            let t = r as f32 / 11.0;
            [-half + t * MAX_COMPRESSED_RANGE, half * (1.0 - t), t - 0.5]
        })
        .collect();
    let m = Matrix::from_rows(&rows);
    for method in [
        CompressionMethod::SpeechFeature,
        CompressionMethod::TwoByteAuto,
        CompressionMethod::OneByteAuto,
    ] {
        let c = CompressedMatrix::compress(&m, method).unwrap();
        let mut bytes = Vec::new();
        c.write_kaldi(&mut bytes).unwrap();
        let back = CompressedMatrix::read_kaldi(&mut &bytes[..]).unwrap();
        let decoded = back.to_matrix::<f32>();
        assert_eq!(decoded, c.to_matrix::<f32>(), "{method:?}");
        assert!(
            decoded.rows().all(|r| r.iter().all(|x| x.is_finite())),
            "{method:?}"
        );
    }
}

// ---------------------------------------------------------------- item 7: long text

#[test]
fn a_text_matrix_of_40000_rows_reads_back() {
    // hardening round 3, item 7: the reader searched all the text read so far for `]`
    // after every line (15.5 s for 40,000 rows); the values, written naively, read back
    let (n_rows, n_cols) = (40_000, 12);
    let value = |r: usize, c: usize| ((r * n_cols + c) % 8191) as f32 * 0.25 - 1000.0;
    let mut text = String::from(" [\n");
    for r in 0..n_rows {
        text.push_str("  ");
        for c in 0..n_cols {
            text.push_str(&format!("{} ", value(r, c)));
        }
        text.push_str(if r + 1 == n_rows { "]\n" } else { "\n" });
    }
    text.push_str("next");
    let mut input = text.as_bytes();
    let m = Matrix::<f32>::read_kaldi(&mut input, false).unwrap();
    assert_eq!(m.shape(), (n_rows, n_cols));
    for r in 0..n_rows {
        for c in 0..n_cols {
            assert_eq!(m[(r, c)], value(r, c), "({r}, {c})");
        }
    }
    // the reader stops after the line of `]`
    assert_eq!(input, b"next");
}

// ---------------------------------------------------------------- bounded text lines

/// An input of `len` bytes of `byte` and nothing else: no newline, no `]`.
fn endless(byte: u8, len: usize) -> std::io::BufReader<std::io::Take<std::io::Repeat>> {
    use std::io::Read;
    std::io::BufReader::new(std::io::repeat(byte).take(len as u64))
}

#[test]
fn a_text_line_past_the_limit_is_an_error_not_unbounded_memory() {
    // the text readers read a line at a time; a line with no newline (`/dev/zero`) grew
    // until memory ran out. Past MAX_TEXT_LINE_LEN bytes it is an error naming the limit.
    let over = dense_matrix::MAX_TEXT_LINE_LEN + 100;
    let err = Matrix::<f32>::read_kaldi(&mut endless(b'1', over), false).unwrap_err();
    assert!(
        matches!(err, Error::Format { ref found, .. } if found.contains("without a newline")
            && found.contains("at line 1")),
        "{err}"
    );
    let err = Vector::<f64>::read_kaldi(&mut endless(b'1', over), false).unwrap_err();
    assert!(matches!(err, Error::Format { .. }), "{err}");
    // packed and sparse matrices are read a token at a time (whitespace to whitespace);
    // a token is bounded the same way
    for err in [
        SpMatrix::<f32>::read_kaldi(&mut endless(b'1', over), false).unwrap_err(),
        dense_matrix::TpMatrix::<f32>::read_kaldi(&mut endless(0, over), false).unwrap_err(),
        dense_matrix::SparseMatrix::<f32>::read_kaldi(&mut endless(0, over), false).unwrap_err(),
    ] {
        assert!(
            matches!(err, Error::Parse { reason, line: 1, .. } if reason.contains("MAX_TEXT_LINE_LEN")),
            "{err}"
        );
    }
}

#[test]
fn a_text_vector_line_within_the_limit_still_reads() {
    // one long line that fits: 200,000 values on the line of the brackets
    let n = 200_000;
    let mut text = String::from(" [ ");
    for i in 0..n {
        text.push_str(&format!("{} ", i as f64 * 0.5));
    }
    text.push_str("]\n");
    let v = Vector::<f64>::read_kaldi(&mut text.as_bytes(), false).unwrap();
    assert_eq!(v.dim(), n);
    assert!(v
        .data()
        .iter()
        .enumerate()
        .all(|(i, &x)| x == i as f64 * 0.5));
}
