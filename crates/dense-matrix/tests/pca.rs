//! `compute_pca` (Kaldi's `ComputePca`) against numpy's SVD route
//! (`golden/pca_goldens.txt`, written by `golden/gen_pca_goldens.py`), and Kaldi's
//! `UnitTestPca` identities: orthonormal directions, exact reconstruction of data of low
//! rank, and projections whose variances come largest first.
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::{matmul, model_of, rng, Model};
use dense_matrix::{compute_pca, Error, Matrix, Position, Real, Trans};

struct Case {
    n: usize,
    d: usize,
    g: usize,
    x: Vec<f64>,
    eigs: Vec<f64>,
    u: Vec<f64>,
    a: Vec<f64>,
}

fn cases() -> Vec<Case> {
    include_str!("golden/pca_goldens.txt")
        .lines()
        .map(|line| {
            let parts: Vec<&str> = line.split(" : ").collect();
            assert_eq!(parts.len(), 5, "golden line: {line:.60}");
            let head: Vec<usize> = parts[0]
                .split_whitespace()
                .skip(1)
                .map(|t| t.parse().unwrap())
                .collect();
            let nums = |s: &str| -> Vec<f64> {
                s.split_whitespace().map(|x| x.parse().unwrap()).collect()
            };
            Case {
                n: head[0],
                d: head[1],
                g: head[2],
                x: nums(parts[1]),
                eigs: nums(parts[2]),
                u: nums(parts[3]),
                a: nums(parts[4]),
            }
        })
        .collect()
}

fn rows_of(data: &[f64], cols: usize) -> Model {
    data.chunks(cols).map(<[f64]>::to_vec).collect()
}

/// The sign making row `r`'s largest-magnitude element positive.
fn sign_of(row: &[f64]) -> f64 {
    let big = row
        .iter()
        .copied()
        .fold(0.0f64, |m, v| if v.abs() > m.abs() { v } else { m });
    if big < 0.0 {
        -1.0
    } else {
        1.0
    }
}

#[track_caller]
fn assert_near(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1.0),
        "{what}: {got} vs {want}"
    );
}

fn goldens<R: Real>() {
    let tol = if R::NAME == "f32" { 2e-4 } else { 1e-9 };
    for c in cases() {
        let what = format!("pca {} x {} G {} ({})", c.n, c.d, c.g, R::NAME);
        let x =
            Matrix::<R>::from_vec(c.n, c.d, c.x.iter().map(|&v| R::from_f64(v)).collect()).unwrap();
        let mut u = Matrix::<R>::new(c.g, c.d);
        let mut a = Matrix::<R>::new(c.n, c.g);
        let eigs = compute_pca(&x, &mut u, Some(&mut a), false, true).unwrap();
        assert_eq!(eigs.dim(), c.eigs.len(), "{what}: eigenvalue count");
        for (k, (&got, &want)) in eigs.data().iter().zip(&c.eigs).enumerate() {
            // the scatter's eigenvalues: relative to the largest
            assert_near(
                got.to_f64(),
                want,
                tol * c.eigs[0],
                &format!("{what} eig {k}"),
            );
        }
        let got_u = model_of(&u);
        let want_u = rows_of(&c.u, c.d);
        let got_a = model_of(&a);
        let want_a = rows_of(&c.a, c.g);
        for g in 0..c.g {
            let (sg, sw) = (sign_of(&got_u[g]), sign_of(&want_u[g]));
            for j in 0..c.d {
                assert_near(
                    sg * got_u[g][j],
                    sw * want_u[g][j],
                    tol,
                    &format!("{what} U"),
                );
            }
            for p in 0..c.n {
                let scale = c.eigs[0].sqrt();
                assert_near(
                    sg * got_a[p][g],
                    sw * want_a[p][g],
                    tol * scale,
                    &format!("{what} A"),
                );
            }
        }
    }
}

#[test]
fn matches_numpys_svd_route_f64() {
    goldens::<f64>();
}

#[test]
fn matches_numpys_svd_route_f32() {
    goldens::<f32>();
}

/// `max |U U^T - I|`.
fn non_orthonormality(u: &Model) -> f64 {
    let uut = matmul(u, &common::transpose(u));
    let mut worst = 0.0f64;
    for i in 0..u.len() {
        for j in 0..u.len() {
            let want = if i == j { 1.0 } else { 0.0 };
            worst = worst.max((uut[i][j] - want).abs());
        }
    }
    worst
}

/// Kaldi's `UnitTestPca`: points in a subspace of dimension `true_dim` are reproduced by
/// `A U` once `G >= true_dim`, in both branches, with `U` orthonormal and the variances
/// of the projections largest first.
#[test]
fn low_rank_data_is_reconstructed_and_directions_are_orthonormal() {
    let seed = 0x9ca_7e57;
    eprintln!("compute_pca: seed {seed:#x}");
    let mut g = rng(seed);
    use rand::Rng;
    for i in 0..16 {
        let true_dim = 4 + g.random_range(0..5);
        let feat_dim = true_dim + g.random_range(0..5);
        let num_points = true_dim + g.random_range(0..5);
        let pca_dim = feat_dim
            .min(num_points)
            .min(true_dim + g.random_range(0..5));
        let mut proj = Matrix::<f64>::new(feat_dim, true_dim);
        proj.set_randn(&mut g);
        let mut true_x = Matrix::<f64>::new(num_points, true_dim);
        true_x.set_randn(&mut g);
        let mut x = Matrix::<f64>::new(num_points, feat_dim);
        x.add_mat_mat(1.0, &true_x, Trans::NoTrans, &proj, Trans::Trans, 0.0);
        let mut u = Matrix::<f64>::new(pca_dim, feat_dim);
        let mut a = Matrix::<f64>::new(num_points, pca_dim);
        let eigs = compute_pca(&x, &mut u, Some(&mut a), false, i % 2 == 0).unwrap();
        let what = format!("{num_points} x {feat_dim}, G {pca_dim}, rank {true_dim}");
        assert!(
            non_orthonormality(&model_of(&u)) < 1e-9,
            "{what}: U U^T != I"
        );
        assert!(
            eigs.data().windows(2).all(|w| w[0] >= w[1]),
            "{what}: {eigs}"
        );
        // variance along direction g = squared norm of A's column g = eigenvalue g
        let am = model_of(&a);
        let var: Vec<f64> = (0..pca_dim)
            .map(|c| am.iter().map(|r| r[c] * r[c]).sum())
            .collect();
        for c in 0..pca_dim {
            let scale = eigs[0].max(1.0);
            assert!((var[c] - eigs[c]).abs() < 1e-8 * scale, "{what}: var {c}");
            if c > 0 {
                assert!(var[c] <= var[c - 1] + 1e-8 * scale, "{what}: order");
            }
        }
        if pca_dim >= true_dim {
            let x2 = matmul(&am, &model_of(&u));
            let e = common::rel_err(&x2, &model_of(&x));
            // a near-zero eigenvalue of the inner-product route divides roundoff by its root
            assert!(e < 1e-6, "{what}: reconstruction error {e:e}");
        }
    }
}

#[test]
fn zero_eigenvalues_of_the_inner_product_route_still_give_an_orthonormal_basis() {
    // 4 points in 6 dimensions, of rank 2: G = 4 needs two directions beyond the data
    let x = Matrix::from_rows(&[
        [1.0f64, 2.0, 0.0, 0.0, 1.0, 0.0],
        [2.0, 4.0, 0.0, 0.0, 2.0, 0.0],
        [0.0, 1.0, 1.0, 0.0, 0.0, 0.0],
        [1.0, 3.0, 1.0, 0.0, 1.0, 0.0],
    ]);
    let mut u = Matrix::new(4, 6);
    let mut a = Matrix::new(4, 4);
    let eigs = compute_pca(&x, &mut u, Some(&mut a), true, true).unwrap();
    assert!(eigs[2].abs() < 1e-12 && eigs[3].abs() < 1e-12, "{eigs}");
    assert!(non_orthonormality(&model_of(&u)) < 1e-12);
    let x2 = matmul(&model_of(&a), &model_of(&u));
    assert!(common::rel_err(&x2, &model_of(&x)) < 1e-12);
}

#[test]
fn a_nan_in_the_data_is_an_error() {
    let mut x = Matrix::<f32>::new(10, 3);
    x.set(1.0);
    x[(4, 1)] = f32::NAN;
    let mut u = Matrix::new(2, 3);
    let e = compute_pca(&x, &mut u, None, false, true).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotFinite {
                op: "sym_eig",
                position: Position::Matrix(_, _),
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
#[should_panic(expected = "compute_pca: U's columns 4 does not match X's columns 3")]
fn u_must_have_xs_width() {
    let x = Matrix::<f64>::new(10, 3);
    compute_pca(&x, &mut Matrix::new(2, 4), None, false, true).unwrap();
}

#[test]
#[should_panic(
    expected = "compute_pca (U vs X: G <= min(N, D)): shape 4 x 3 does not match shape 10 x 3"
)]
fn at_most_min_n_d_directions() {
    let x = Matrix::<f64>::new(10, 3);
    compute_pca(&x, &mut Matrix::new(4, 3), None, false, true).unwrap();
}

#[test]
#[should_panic(expected = "compute_pca (A vs N x G): shape 10 x 3 does not match shape 10 x 2")]
fn a_must_be_n_by_g() {
    let x = Matrix::<f64>::new(10, 3);
    compute_pca(
        &x,
        &mut Matrix::new(2, 3),
        Some(&mut Matrix::new(10, 3)),
        false,
        true,
    )
    .unwrap();
}

/// The scatter `X^T X` of `compute_pca`'s `D < N` route, which at the AVX-512 level comes
/// from the crate's own tiled kernel (blocks of 4,096 rows summed in order, passes of 256
/// rows, tiles of 8 x 16 with the leftover rows and columns apart), checked at every
/// level against a naive f64 scatter: each returned pair is an eigenpair of it (Rayleigh
/// quotient and residual), the eigenvalues sum to its trace, and `A` is the naive
/// `X U^T`. `D = 37` leaves 5 rows and 5 columns past the whole tiles, `N = 5,003` a
/// partial block and a partial pass.
fn scatter_kernel_case<R: Real>() {
    use rand::Rng;
    let (n, d, g) = (5003, 37, 11);
    let mut r = rng(0x5ca7);
    // column scales spread the eigenvalues apart, so the eigenvectors are well defined
    let x: Vec<f64> = (0..n * d)
        .map(|i| (r.random::<f64>() * 2.0 - 1.0) * (1.0 + (i % d) as f64 * 0.25))
        .collect();
    let xr: Vec<R> = x.iter().map(|&v| R::from_f64(v)).collect();
    let xm = Matrix::<R>::from_vec(n, d, xr.clone()).unwrap();
    let xs: Vec<f64> = xr.iter().map(|v| v.to_f64()).collect();
    let mut s = vec![vec![0.0f64; d]; d];
    for row in xs.chunks(d) {
        for a in 0..d {
            for b in 0..d {
                s[a][b] += row[a] * row[b];
            }
        }
    }
    let trace: f64 = (0..d).map(|a| s[a][a]).sum();
    let tol = if R::NAME == "f32" { 2e-5 } else { 1e-11 };
    cpu_features::at_every_level(|level| {
        let what = format!("pca scatter {n} x {d} ({}, {level:?})", R::NAME);
        let mut u = Matrix::<R>::new(g, d);
        let mut a = Matrix::<R>::new(n, g);
        let eigs = compute_pca(&xm, &mut u, Some(&mut a), false, true).unwrap();
        let sum: f64 = eigs.data().iter().map(|v| v.to_f64()).sum();
        assert_near(sum, trace, tol, &format!("{what}: trace"));
        for k in 0..g {
            let uk: Vec<f64> = u.row_data(k).iter().map(|v| v.to_f64()).collect();
            let su: Vec<f64> = s
                .iter()
                .map(|row| row.iter().zip(&uk).map(|(p, q)| p * q).sum())
                .collect();
            let rayleigh: f64 = su.iter().zip(&uk).map(|(p, q)| p * q).sum();
            let l = eigs[k].to_f64();
            assert_near(rayleigh, l, tol, &format!("{what}: eigenvalue {k}"));
            let resid: f64 = su
                .iter()
                .zip(&uk)
                .map(|(p, q)| (p - l * q).powi(2))
                .sum::<f64>()
                .sqrt();
            let top = eigs[0].to_f64();
            assert!(resid <= 1e2 * tol * top, "{what}: residual {k} {resid:e}");
            for i in (0..n).step_by(97) {
                let want: f64 = xs[i * d..(i + 1) * d]
                    .iter()
                    .zip(&uk)
                    .map(|(p, q)| p * q)
                    .sum();
                assert_near(
                    a[(i, k)].to_f64(),
                    want,
                    tol,
                    &format!("{what}: A[{i}][{k}]"),
                );
            }
        }
    });
}

#[test]
fn the_scatter_kernel_matches_a_naive_scatter_at_every_level() {
    scatter_kernel_case::<f32>();
    scatter_kernel_case::<f64>();
}

/// The projections `A = X U^T` of the `D < N` route, which with the scatter's own kernel
/// and more than one rayon thread come from the crate's own tiles (4 rows at a time, 1 to
/// 4 tiles of 16 columns, blocks of 2,048 rows over rayon), against a naive f64 product
/// of the returned `U`, on every row, at every level, for `G` of 1, 16, 17, 33 and 64
/// directions (one to four tiles, a full and a partial last tile) and `N = 4,099` rows (3
/// past the last whole tile of 4, a partial block); `G = 65` (past the tiles) takes the
/// BLAS path, checked the same way.
#[test]
fn the_projection_kernel_matches_a_naive_product_at_every_level() {
    // the kernel runs with more than one rayon thread (one thread takes gemm): both
    for threads in [2, 1] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            projection_case::<f32>();
            projection_case::<f64>();
        });
    }
}

fn projection_case<R: Real>() {
    use rand::Rng;
    let (n, d) = (4099, 70);
    let mut r = rng(0x9e07);
    let x: Vec<R> = (0..n * d)
        .map(|i| R::from_f64((r.random::<f64>() * 2.0 - 1.0) * (1.0 + (i % d) as f64 * 0.125)))
        .collect();
    let xm = Matrix::<R>::from_vec(n, d, x.clone()).unwrap();
    let tol = if R::NAME == "f32" { 1e-5 } else { 1e-12 };
    for g in [1, 16, 17, 33, 64, 65] {
        cpu_features::at_every_level(|level| {
            let what = format!("pca projection {n} x {d} -> {g} ({}, {level:?})", R::NAME);
            let mut u = Matrix::<R>::new(g, d);
            // a stale value in A must not survive
            let mut a = Matrix::<R>::new(n, g);
            a.row_data_mut(0)[0] = R::from_f64(f64::NAN);
            compute_pca(&xm, &mut u, Some(&mut a), false, true).unwrap();
            for i in 0..n {
                let row = &x[i * d..(i + 1) * d];
                for k in 0..g {
                    let want: f64 = row
                        .iter()
                        .zip(u.row_data(k))
                        .map(|(p, q)| p.to_f64() * q.to_f64())
                        .sum();
                    // the sum of |x u| bounds the rounding of any order of the sum
                    let scale: f64 = row
                        .iter()
                        .zip(u.row_data(k))
                        .map(|(p, q)| (p.to_f64() * q.to_f64()).abs())
                        .sum();
                    let got = a[(i, k)].to_f64();
                    assert!(
                        (got - want).abs() <= tol * scale.max(1.0),
                        "{what}: A[{i}][{k}] = {got}, want {want}"
                    );
                }
            }
        });
    }
}
