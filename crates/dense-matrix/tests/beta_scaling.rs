//! The `beta` rule of Kaldi's `AddDiagMat2`, `AddSpVec` and `AddMatMat` (BLAS's rule):
//! `beta == 0` means the old contents are not read, so NaN or inf already in `self` never
//! leaks into the result; any other `beta` scales them. Checked against naive loops.

use dense_matrix::{Matrix, SpMatrix, Trans, Vector};

fn m3x2() -> Matrix<f64> {
    Matrix::from_vec(3, 2, vec![1.0, -2.0, 0.5, 4.0, -3.0, 0.25]).unwrap()
}

#[test]
fn add_diag_mat2_beta_zero_ignores_nan_and_other_betas_scale() {
    let m = m3x2();
    // diag(M M^T): row sums of squares; diag(M^T M): column sums of squares.
    let rows = [1.0 + 4.0, 0.25 + 16.0, 9.0 + 0.0625];
    let cols = [1.0 + 0.25 + 9.0, 4.0 + 16.0 + 0.0625];
    for beta in [0.0, 0.5, -2.0] {
        let mut d = Vector::from_vec(vec![f64::NAN, f64::INFINITY, 7.0]);
        if beta != 0.0 {
            d = Vector::from_vec(vec![1.0, 2.0, 7.0]);
        }
        let old: Vec<f64> = d.data().to_vec();
        d.add_diag_mat2(3.0, &m, Trans::NoTrans, beta);
        for i in 0..3 {
            let want = if beta == 0.0 {
                3.0 * rows[i]
            } else {
                beta * old[i] + 3.0 * rows[i]
            };
            assert_eq!(d.data()[i], want, "row {i}, beta {beta}");
        }
        let mut e = Vector::from_vec(if beta == 0.0 {
            vec![f64::NAN, f64::NAN]
        } else {
            vec![1.0, -1.0]
        });
        let old: Vec<f64> = e.data().to_vec();
        e.add_diag_mat2(-1.0, &m, Trans::Trans, beta);
        for j in 0..2 {
            let want = if beta == 0.0 {
                -cols[j]
            } else {
                beta * old[j] - cols[j]
            };
            assert_eq!(e.data()[j], want, "col {j}, beta {beta}");
        }
    }
}

#[test]
fn add_sp_vec_beta_zero_ignores_nan_and_other_betas_scale() {
    // S = [[2, 1, 0], [1, 3, -1], [0, -1, 4]], packed lower triangle row by row.
    let s = SpMatrix::from_packed(3, vec![2.0, 1.0, 3.0, 0.0, -1.0, 4.0]).unwrap();
    let dense = [[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 4.0]];
    let v = Vector::from_vec(vec![1.0, -2.0, 0.5]);
    for beta in [0.0, 0.25, -1.0] {
        let start = if beta == 0.0 {
            vec![f64::NAN, f64::NEG_INFINITY, f64::NAN]
        } else {
            vec![1.0, 2.0, 3.0]
        };
        let mut y = Vector::from_vec(start.clone());
        y.add_sp_vec(2.0, &s, &v, beta);
        for i in 0..3 {
            let sv: f64 = (0..3).map(|j| dense[i][j] * v.data()[j]).sum();
            let want = if beta == 0.0 {
                2.0 * sv
            } else {
                beta * start[i] + 2.0 * sv
            };
            assert_eq!(y.data()[i], want, "element {i}, beta {beta}");
        }
    }
}

/// `add_mat_mat` with `beta == 0` leaves no trace of NaN or inf already in the output
/// (gemm overwrites it; the crate clears it only when the inner dimension is 0), at sizes
/// from OpenBLAS's small-matrix path to its blocked one, every transpose, `alpha` 0 or
/// not, against a naive loop.
#[test]
fn add_mat_mat_beta_zero_ignores_nan() {
    fn case<R: dense_matrix::Real>() {
        let sizes = [(1, 1, 1), (3, 2, 5), (17, 33, 9), (70, 65, 66), (4, 1, 2)];
        for &(m, n, k) in &sizes {
            for ta in [Trans::NoTrans, Trans::Trans] {
                for tb in [Trans::NoTrans, Trans::Trans] {
                    for alpha in [1.5, 0.0] {
                        let val = |i: usize, j: usize, s: f64| {
                            R::from_f64(((i * 7 + j * 3) % 11) as f64 * s - 2.0)
                        };
                        let a_shape = if ta == Trans::NoTrans { (m, k) } else { (k, m) };
                        let b_shape = if tb == Trans::NoTrans { (k, n) } else { (n, k) };
                        let mut a = Matrix::<R>::new(a_shape.0, a_shape.1);
                        let mut b = Matrix::<R>::new(b_shape.0, b_shape.1);
                        for i in 0..a_shape.0 {
                            for j in 0..a_shape.1 {
                                a[(i, j)] = val(i, j, 0.5);
                            }
                        }
                        for i in 0..b_shape.0 {
                            for j in 0..b_shape.1 {
                                b[(i, j)] = val(j, i, 0.25);
                            }
                        }
                        let mut c = Matrix::<R>::new(m, n);
                        for i in 0..m {
                            for j in 0..n {
                                c[(i, j)] = if (i + j) % 2 == 0 {
                                    R::NAN
                                } else {
                                    R::INFINITY
                                };
                            }
                        }
                        c.add_mat_mat(R::from_f64(alpha), &a, ta, &b, tb, R::ZERO);
                        for i in 0..m {
                            for j in 0..n {
                                let mut want = 0.0;
                                for p in 0..k {
                                    let x = if ta == Trans::NoTrans {
                                        a[(i, p)]
                                    } else {
                                        a[(p, i)]
                                    };
                                    let y = if tb == Trans::NoTrans {
                                        b[(p, j)]
                                    } else {
                                        b[(j, p)]
                                    };
                                    want += x.to_f64() * y.to_f64();
                                }
                                let got = c[(i, j)].to_f64();
                                let want = alpha * want;
                                assert!(
                                    (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                                    "{} {m}x{n}x{k} {ta:?} {tb:?} alpha {alpha}: [{i}][{j}] {got} vs {want}",
                                    R::NAME
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    case::<f32>();
    case::<f64>();
}
