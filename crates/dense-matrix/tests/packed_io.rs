//! Kaldi's `PackedMatrix::Write` / `Read` (`FP` / `DP`), byte for byte. The expected bytes
//! are built by hand from Kaldi's format (`packed-matrix.cc`): the token and a space, the
//! order as `WriteBasicType<int32>` (size byte 4, little-endian value), then the lower
//! triangle row by row in the element type. kaldi-native-io has no packed-matrix holder,
//! so there is no archive of Kaldi's to compare with.

use dense_matrix::{Error, SpMatrix, TpMatrix};

/// Kaldi's bytes for the order-2 packed matrix with rows `[1]`, `[2 3]`.
fn kaldi_bytes(double: bool) -> Vec<u8> {
    let mut b = if double {
        b"DP ".to_vec()
    } else {
        b"FP ".to_vec()
    };
    b.extend([4, 2, 0, 0, 0]);
    for x in [1.0f64, 2.0, 3.0] {
        if double {
            b.extend(x.to_le_bytes());
        } else {
            b.extend((x as f32).to_le_bytes());
        }
    }
    b
}

#[test]
fn binary_bytes_match_kaldis_layout() {
    let sp = SpMatrix::<f32>::from_packed(2, vec![1.0, 2.0, 3.0]).unwrap();
    let mut out = Vec::new();
    sp.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out, kaldi_bytes(false));
    let tp = TpMatrix::<f64>::from_packed(2, vec![1.0, 2.0, 3.0]).unwrap();
    let mut out = Vec::new();
    tp.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out, kaldi_bytes(true));
    // read back, and across precisions as Kaldi's Read does
    for double in [false, true] {
        let bytes = kaldi_bytes(double);
        let a = SpMatrix::<f32>::read_kaldi(&mut &bytes[..], true).unwrap();
        let b = SpMatrix::<f64>::read_kaldi(&mut &bytes[..], true).unwrap();
        let c = TpMatrix::<f32>::read_kaldi(&mut &bytes[..], true).unwrap();
        assert_eq!(a.data(), &[1.0, 2.0, 3.0]);
        assert_eq!(b.data(), &[1.0, 2.0, 3.0]);
        assert_eq!((c.num_rows(), c.data()), (2, &[1.0f32, 2.0, 3.0][..]));
    }
    // 0.1 written as f64 and read into f32 rounds as a cast does
    let sp = SpMatrix::<f64>::from_packed(1, vec![0.1]).unwrap();
    let mut out = Vec::new();
    sp.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out.len(), 3 + 5 + 8);
    let narrow = SpMatrix::<f32>::read_kaldi(&mut &out[..], true).unwrap();
    assert_eq!(narrow.data(), &[0.1f32]);
}

#[test]
fn the_empty_packed_matrix() {
    let sp = SpMatrix::<f64>::new(0);
    let mut out = Vec::new();
    sp.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out, b"DP \x04\x00\x00\x00\x00");
    assert_eq!(
        SpMatrix::<f64>::read_kaldi(&mut &out[..], true)
            .unwrap()
            .num_rows(),
        0
    );
    let mut text = Vec::new();
    sp.write_kaldi(&mut text, false).unwrap();
    assert_eq!(text, b"[ ]\n");
    assert_eq!(
        SpMatrix::<f32>::read_kaldi(&mut &text[..], false)
            .unwrap()
            .num_rows(),
        0
    );
}

#[test]
fn text_form_is_kaldis_rows_of_the_triangle() {
    let sp = SpMatrix::<f64>::from_packed(3, vec![1.0, 2.5, -3.0, 4.0, 5.0, 1e-7]).unwrap();
    let mut out = Vec::new();
    sp.write_kaldi(&mut out, false).unwrap();
    assert_eq!(
        String::from_utf8(out.clone()).unwrap(),
        "[\n1 \n2.5 -3 \n4 5 0.0000001 ]\n"
    );
    assert!(SpMatrix::<f64>::read_kaldi(&mut &out[..], false).unwrap() == sp);
    let tp = TpMatrix::<f32>::read_kaldi(&mut &out[..], false).unwrap();
    assert_eq!(tp.data(), &[1.0f32, 2.5, -3.0, 4.0, 5.0, 1e-7]);
}

#[track_caller]
fn check_text(text: &str, want: &[f64]) {
    let mut input = text.as_bytes();
    let sp = SpMatrix::<f64>::read_kaldi(&mut input, false).unwrap();
    assert_eq!(sp.data(), want, "{text:?}");
}

#[test]
fn text_forms_kaldi_reads() {
    check_text("[ 1 \n 2 3 ]\n", &[1.0, 2.0, 3.0]);
    check_text("  [\n1\n2 3]", &[1.0, 2.0, 3.0]);
    // the older form with the token and the order, and the double token read as float
    check_text("FP 2 1 2 3", &[1.0, 2.0, 3.0]);
    check_text("DP 2\n1\n2 3\n", &[1.0, 2.0, 3.0]);
    check_text("FP 0", &[]);
    // the reader stops after the object and its newline: the next line is the caller's
    let mut input = &b"[ 5 ]\nnext"[..];
    let sp = SpMatrix::<f32>::read_kaldi(&mut input, false).unwrap();
    assert_eq!(sp.data(), &[5.0]);
    assert_eq!(input, b"next");
}

#[test]
fn non_finite_text_values() {
    let mut input = &b"[ inf \n -1 NaN ]"[..];
    let sp = SpMatrix::<f64>::read_kaldi(&mut input, false).unwrap();
    assert_eq!(sp.data()[..2], [f64::INFINITY, -1.0]);
    assert!(sp.data()[2].is_nan());
}

#[track_caller]
fn check_text_err(text: &str, want: &str) {
    let mut input = text.as_bytes();
    let err = SpMatrix::<f64>::read_kaldi(&mut input, false).unwrap_err();
    assert_eq!(err.to_string(), want, "{text:?}");
}

#[test]
fn text_errors_name_line_and_token() {
    check_text_err(
        "[ 1 2 ]",
        "line 1: `2 numbers`: a packed matrix holds a triangular number of elements",
    );
    check_text_err("[ 1\n 2 x ]", "line 2: `x`: not a number");
    check_text_err("[1 2 3 ]", "line 1: `[1`: expected `[`, `FP` or `DP`");
    check_text_err("[ 1\n 2 3", "line 2: ``: expected `]` at the end");
    check_text_err("", "line 1: ``: expected `[`, `FP` or `DP`");
    check_text_err("FP x", "line 1: `x`: not an int32 order");
    check_text_err(
        "FP -3 1",
        "the order of a Kaldi packed matrix is negative: -3",
    );
    // a huge order in text costs only the numbers present
    check_text_err(
        "FP 2147483647 1 2",
        "line 1: ``: expected another element of the packed matrix",
    );
}

#[test]
fn hostile_binary_headers_are_errors_not_allocations() {
    // order 2^31 - 1: 2^61 - 2^30 elements; the bytes still fit in u64
    let count: u64 = 2147483647 * 2147483648 / 2;
    let err = SpMatrix::<f32>::read_kaldi(&mut &b"FP \x04\xff\xff\xff\x7f\x01\x02"[..], true);
    assert_eq!(
        err.unwrap_err(),
        Error::UnexpectedEnd {
            reading: "the elements of an order-2147483647 `FP` packed matrix".into(),
            needed: count * 4,
            got: 2,
        }
    );
    let err = TpMatrix::<f64>::read_kaldi(&mut &b"DP \x04\xff\xff\xff\x7f"[..], true);
    assert_eq!(
        err.unwrap_err(),
        Error::UnexpectedEnd {
            reading: "the elements of an order-2147483647 `DP` packed matrix".into(),
            needed: count * 8,
            got: 0,
        }
    );
    assert_eq!(
        SpMatrix::<f64>::read_kaldi(&mut &b"FP \x04\xfe\xff\xff\xff"[..], true).unwrap_err(),
        Error::NegativeSize {
            what: "the order of a Kaldi packed matrix",
            value: -2,
        }
    );
    assert_eq!(
        SpMatrix::<f64>::read_kaldi(&mut &b"FM \x04\x01\0\0\0"[..], true)
            .unwrap_err()
            .to_string(),
        "expected the packed matrix token `FP ` or `DP `, found `FM `"
    );
    assert_eq!(
        SpMatrix::<f64>::read_kaldi(&mut &b"FP \x08\x01\0\0\0"[..], true).unwrap_err(),
        Error::Format {
            expected: "the int32 size byte 4",
            found: "8".into(),
        }
    );
}

/// More than one read piece (256 KiB) of elements comes back whole, in both the native
/// and the converting path, and a cut inside the last element is reported.
#[test]
fn large_packed_matrix_round_trips_in_pieces() {
    let n = 300; // 45150 elements: 361200 bytes as f64
    let data: Vec<f64> = (0..n * (n + 1) / 2).map(|i| i as f64 * 0.5 - 7.0).collect();
    let sp = SpMatrix::from_packed(n, data.clone()).unwrap();
    let mut out = Vec::new();
    sp.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out.len(), 8 + data.len() * 8);
    assert!(SpMatrix::<f64>::read_kaldi(&mut &out[..], true).unwrap() == sp);
    let narrow = SpMatrix::<f32>::read_kaldi(&mut &out[..], true).unwrap();
    assert!(narrow
        .data()
        .iter()
        .zip(&data)
        .all(|(&a, &b)| a == b as f32));
    let cut = &out[..out.len() - 3];
    assert_eq!(
        SpMatrix::<f64>::read_kaldi(&mut &cut[..], true).unwrap_err(),
        Error::UnexpectedEnd {
            reading: "the elements of an order-300 `DP` packed matrix".into(),
            needed: (data.len() * 8) as u64,
            got: (data.len() * 8 - 3) as u64,
        }
    );
}
