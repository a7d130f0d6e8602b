//! The `beta` rule of Kaldi's `AddDiagMat2` and `AddSpVec` (BLAS's rule): `beta == 0` means
//! the old contents are not read, so NaN or inf already in `self` never leaks into the
//! result; any other `beta` scales them. Checked against naive loops.

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
