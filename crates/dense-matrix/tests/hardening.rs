//! Hostile inputs: shapes whose size products wrap, packed orders whose length wraps,
//! ndarray views with gaps owned by a sibling, and NaN / infinity fed to every LAPACK
//! decomposition. Each case names the check that keeps an `unsafe` block sound.

use dense_matrix::{
    default_stride, Error, Matrix, MatrixView, MatrixViewMut, Position, SpMatrix, StrideType,
    TpMatrix,
};
use ndarray::{s, Array2, Axis};

#[test]
fn matrix_shapes_whose_size_wraps_are_errors() {
    assert_eq!(
        Matrix::<f64>::try_new(1 << 62, 4, StrideType::Default).err(),
        Some(Error::SizeOverflow {
            what: "Matrix::try_new",
            rows: 1 << 62,
            cols: 4
        })
    );
    // 2^61 x 4 f32 fits usize as an element count but not as bytes (2^65).
    assert_eq!(
        Matrix::<f32>::try_new(1 << 61, 4, StrideType::EqualNumCols).err(),
        Some(Error::SizeOverflow {
            what: "Matrix::try_new",
            rows: 1 << 61,
            cols: 4
        })
    );
    // The default stride of usize::MAX columns itself overflows.
    assert_eq!(
        Matrix::<f32>::try_new(1, usize::MAX, StrideType::Default).err(),
        Some(Error::SizeOverflow {
            what: "Matrix::try_new",
            rows: 1,
            cols: usize::MAX
        })
    );
    assert_eq!(
        Matrix::<f32>::from_vec(1 << 63, 2, vec![]).err(),
        Some(Error::SizeOverflow {
            what: "Matrix::from_vec",
            rows: 1 << 63,
            cols: 2
        })
    );
}

#[test]
#[should_panic(expected = "Matrix::try_new: a 4611686018427387904 x 4 shape overflows")]
fn matrix_new_panics_with_the_overflow() {
    let _ = Matrix::<f64>::new(1 << 62, 4);
}

#[test]
#[should_panic(expected = "Matrix::try_new: a 3 x 4611686018427387904 shape overflows")]
fn resize_panics_with_the_overflow() {
    let mut m = Matrix::<f64>::new(2, 2);
    m.resize(3, 1 << 62, Default::default());
}

#[test]
#[should_panic(expected = "default_stride: 18446744073709551615 columns rounded up")]
fn default_stride_panics_instead_of_wrapping() {
    let _ = default_stride::<f32>(usize::MAX);
}

#[test]
fn views_whose_extent_wraps_are_errors() {
    let data = [0f32; 4];
    // (2^62 + 1 - 1) * 4 + 1 wraps to 1 in unchecked arithmetic, which fits 4 elements.
    assert_eq!(
        MatrixView::from_slice(&data, (1 << 62) + 1, 1, 4).err(),
        Some(Error::SizeOverflow {
            what: "MatrixView::from_slice (rows - 1) * stride + cols",
            rows: (1 << 62) + 1,
            cols: 4
        })
    );
    let mut data = [0f64; 4];
    assert_eq!(
        MatrixViewMut::from_slice(&mut data, 3, usize::MAX, usize::MAX)
            .err()
            .map(|e| e.to_string()),
        Some(
            "MatrixView::from_slice (rows - 1) * stride + cols: a 3 x 18446744073709551615 \
             shape overflows the address space"
                .to_string()
        )
    );
    // Large but not wrapping: a plain "too short".
    assert_eq!(
        MatrixView::from_slice(&[0f32; 4], 1 << 20, 1, 4).err(),
        Some(Error::BufferTooShort {
            needed: ((1 << 20) - 1) * 4 + 1,
            len: 4
        })
    );
}

#[test]
fn packed_orders_whose_length_wraps_are_errors() {
    for n in [usize::MAX, usize::MAX - 1, 1 << 33, 1 << 32] {
        assert_eq!(
            SpMatrix::<f64>::from_packed(n, vec![]),
            Err(Error::SizeOverflow {
                what: "SpMatrix::from_packed",
                rows: n,
                cols: n
            }),
            "n = {n}"
        );
        assert_eq!(
            TpMatrix::<f32>::from_packed(n, vec![]),
            Err(Error::SizeOverflow {
                what: "TpMatrix::from_packed",
                rows: n,
                cols: n
            }),
            "n = {n}"
        );
    }
    // Exact lengths at small n still work, and a wrong one is a length mismatch.
    assert!(SpMatrix::<f64>::from_packed(3, vec![0.0; 6]).is_ok());
    assert_eq!(
        TpMatrix::<f64>::from_packed(4, vec![0.0; 6]),
        Err(Error::LengthMismatch {
            expected: 10,
            got: 6
        })
    );
}

#[test]
#[should_panic(expected = "SpMatrix::new: a 18446744073709551615 x 18446744073709551615 shape")]
fn packed_new_panics_with_the_overflow() {
    let _ = SpMatrix::<f64>::new(usize::MAX);
}

#[test]
#[should_panic(expected = "TpMatrix::new: a 8589934592 x 8589934592 shape")]
fn tp_new_panics_with_the_overflow() {
    let _ = TpMatrix::<f64>::new(1 << 33);
}

/// Two sibling column halves of one ndarray array become two mutable matrix views;
/// each writes its own elements only (the gaps between one view's rows are the other
/// view's elements), also from two threads at once.
#[test]
fn sibling_column_halves_from_ndarray_are_disjoint() {
    let (rows, cols) = (5, 6);
    let mut a = Array2::<f64>::zeros((rows, cols));
    {
        let (left, right) = a.view_mut().split_at(Axis(1), 2);
        let mut l = MatrixViewMut::from_array(left).unwrap();
        let mut r = MatrixViewMut::from_array(right).unwrap();
        assert_eq!((l.shape(), l.stride()), ((5, 2), 6));
        assert_eq!((r.shape(), r.stride()), ((5, 4), 6));
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for i in 0..rows {
                    for j in 0..2 {
                        l[(i, j)] = (10 * i + j) as f64;
                    }
                }
            });
            scope.spawn(move || r.set(-1.0));
        });
    }
    for i in 0..rows {
        for j in 0..cols {
            let want = if j < 2 { (10 * i + j) as f64 } else { -1.0 };
            assert_eq!(a[[i, j]], want, "({i}, {j})");
        }
    }
    // Shared views of the halves read the right elements too.
    let (left, right) = a.view().split_at(Axis(1), 2);
    let l = MatrixView::from_array(left).unwrap();
    let r = MatrixView::from_array(right).unwrap();
    assert_eq!(l.sum(), (0..rows).map(|i| (20 * i + 1) as f64).sum::<f64>());
    assert_eq!(r.sum(), -((rows * 4) as f64));
    assert_eq!(l.to_matrix().row_data(4), &[40.0, 41.0]);
    // A window in the middle: rows 1..3, columns 2..4 of the 5 x 6 array.
    let mid = MatrixView::from_array(a.slice(s![1..3, 2..4])).unwrap();
    assert_eq!((mid.shape(), mid.stride(), mid.sum()), ((2, 2), 6, -4.0));
}

#[test]
fn ndarray_layouts_that_are_not_row_major_are_errors() {
    let a = Array2::<f32>::zeros((3, 4));
    assert_eq!(
        MatrixView::from_array(a.t()).err(),
        Some(Error::NotRowMajor {
            row_stride: 1,
            col_stride: 4
        })
    );
    assert_eq!(
        MatrixView::from_array(a.slice(s![.., ..;2])).err(),
        Some(Error::NotRowMajor {
            row_stride: 4,
            col_stride: 2
        })
    );
    assert_eq!(
        MatrixView::from_array(a.slice(s![..;-1, ..])).err(),
        Some(Error::NotRowMajor {
            row_stride: -4,
            col_stride: 1
        })
    );
    assert_eq!(
        MatrixView::from_array(a.slice(s![0..0, ..])).err(),
        Some(Error::EmptyDimension { rows: 0, cols: 4 })
    );
}

/// Bit-for-bit equality (NaN equals itself here).
fn same_bits(a: &Matrix<f64>, b: &Matrix<f64>) -> bool {
    a.shape() == b.shape()
        && a.rows()
            .zip(b.rows())
            .all(|(x, y)| x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()))
}

fn non_finite(value: f64, at: (usize, usize)) -> Matrix<f64> {
    let mut m = Matrix::from_rows(&[[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]]);
    m[at] = value;
    m
}

#[track_caller]
fn check_not_finite<T: std::fmt::Debug>(got: Result<T, Error>, op: &str, at: (usize, usize)) {
    match got {
        Err(Error::NotFinite {
            op: got_op,
            position,
            value,
        }) => {
            assert_eq!(got_op, op);
            assert_eq!(position, Position::Matrix(at.0, at.1));
            assert!(!value.is_finite());
        }
        other => panic!("{op}: expected NotFinite at {at:?}, got {other:?}"),
    }
}

/// Every LAPACK-backed decomposition on a 3 x 3 matrix holding NaN, +inf or -inf
/// returns `Error::NotFinite` naming the element (LAPACK itself would panic on the NaN
/// argument or loop forever on the infinity).
#[test]
fn decompositions_reject_nan_and_infinity() {
    for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for at in [(0, 0), (1, 2), (2, 1)] {
            let m = non_finite(value, at);
            check_not_finite(m.svd(), "svd", at);
            check_not_finite(m.cond(), "cond", at);
            check_not_finite(m.eig(), "eig", at);
            if at.0 >= at.1 {
                check_not_finite(m.sym_eig(), "sym_eig", at);
                check_not_finite(m.cholesky(), "cholesky", at);
            } else {
                // They read only the lower triangle, so the upper one may hold anything.
                assert!(m.sym_eig().is_ok() && m.cholesky().is_ok());
            }
            check_not_finite(m.sym_pos_semi_def_eig(1e-3), "sym_pos_semi_def_eig", at);
            let mut inv = m.clone();
            check_not_finite(inv.invert(), "invert", at);
            assert!(same_bits(&inv, &m), "invert changed a matrix it rejected");
            let mut pow = m.clone();
            check_not_finite(pow.power(2.0), "power", at);
            assert!(same_bits(&pow, &m), "power changed a matrix it rejected");
            let (log_det, sign) = m.log_det();
            assert!(log_det.is_nan() && sign.is_nan());
        }
    }
    // f32 too, with the message.
    let mut m = Matrix::<f32>::eye(3);
    m[(2, 0)] = f32::INFINITY;
    assert_eq!(
        m.svd().err().map(|e| e.to_string()),
        Some("svd: element (2, 0) is inf; the input must be finite".to_string())
    );
}

#[test]
fn packed_decompositions_reject_nan_and_infinity() {
    let mut sp = SpMatrix::<f64>::new(3);
    sp.add_to_diag(2.0);
    sp[(2, 1)] = f64::NAN;
    let want = Err(Error::NotFinite {
        op: "TpMatrix::cholesky",
        position: Position::Matrix(2, 1),
        value: f64::NAN,
    });
    // NaN != NaN, so compare the message.
    let msg = |r: Result<(), Error>| r.err().map(|e| e.to_string());
    assert_eq!(
        msg(TpMatrix::cholesky(&sp).map(|_| ())),
        msg(want.map(|_: ()| ()))
    );
    assert_eq!(
        msg(sp.log_pos_def_det().map(|_| ())),
        Some("TpMatrix::cholesky: element (2, 1) is NaN; the input must be finite".into())
    );
    let mut inv = sp.clone();
    assert_eq!(
        msg(inv.invert()),
        Some("SpMatrix::invert: element (2, 1) is NaN; the input must be finite".into())
    );
    assert_eq!(
        msg(sp.eig().map(|_| ())),
        Some("sym_eig: element (2, 1) is NaN; the input must be finite".into())
    );
    let mut tp = TpMatrix::<f64>::new(4);
    tp.add_to_diag(1.0);
    tp[(3, 0)] = f64::INFINITY;
    assert_eq!(
        tp.invert(),
        Err(Error::NotFinite {
            op: "TpMatrix::invert",
            position: Position::Matrix(3, 0),
            value: f64::INFINITY,
        })
    );
    // The packed check finds the row and column of the first element of a row too.
    let mut tp = TpMatrix::<f64>::new(4);
    tp.add_to_diag(1.0);
    tp[(2, 2)] = f64::NEG_INFINITY;
    assert_eq!(
        tp.invert(),
        Err(Error::NotFinite {
            op: "TpMatrix::invert",
            position: Position::Matrix(2, 2),
            value: f64::NEG_INFINITY,
        })
    );
}

#[test]
#[should_panic(expected = "Vector::new: 4611686018427387904 elements overflow the address space")]
fn vector_new_names_the_overflow() {
    let _ = dense_matrix::Vector::<f32>::new(1 << 62);
}

#[test]
#[should_panic(
    expected = "Vector::resize: 18446744073709551615 elements overflow the address space"
)]
fn vector_resize_names_the_overflow() {
    let mut v = dense_matrix::Vector::<f64>::new(2);
    v.resize(usize::MAX, dense_matrix::ResizeType::CopyData);
}
