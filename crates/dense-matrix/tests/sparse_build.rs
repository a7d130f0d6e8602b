//! Kaldi's sparse builders (`SelectRows`, `AppendSparseMatrixRows`, the one-hot
//! constructors, `SetRandn`) and `GeneralMatrix`'s compressed form, against dense
//! `Vec<Vec<f64>>` models built by naive loops.
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::{model_of, random_sparse_model, rng, smat_of, Model};
use dense_matrix::{
    CompressedMatrix, CompressionMethod, Error, GeneralMatrix, Matrix, Position, SparseMatrix,
    SparseVector, Trans, Vector,
};
use rand::Rng;

const SEED: u64 = 0x5e_1ec7;

fn dense(s: &SparseMatrix<f64>) -> Model {
    if s.num_rows() == 0 || s.num_cols() == 0 {
        return vec![vec![0.0; s.num_cols()]; s.num_rows()];
    }
    model_of(&s.to_matrix())
}

#[test]
fn select_rows_picks_rows_like_a_dense_gather() {
    let mut g = rng(SEED);
    eprintln!("select_rows: seed {SEED:#x}");
    for _ in 0..50 {
        let (rows, cols) = (g.random_range(1..8), g.random_range(1..8));
        let m = random_sparse_model(&mut g, rows, cols);
        let s = smat_of::<f64>(&m, cols);
        let idx: Vec<i32> = (0..g.random_range(0..10))
            .map(|_| g.random_range(0..rows as i32))
            .collect();
        let got = s.select_rows(&idx);
        let want: Model = idx.iter().map(|&i| m[i as usize].clone()).collect();
        assert_eq!(got.num_rows(), idx.len());
        assert_eq!(got.num_cols(), cols);
        assert_eq!(dense(&got), want, "indexes {idx:?}");
    }
}

#[test]
#[should_panic(expected = "row 3 out of bounds for sparse matrix with 3 rows")]
fn select_rows_panics_past_the_end() {
    SparseMatrix::<f32>::new(3, 2).select_rows(&[0, 3]);
}

#[test]
#[should_panic(expected = "select_rows: row index -1 is negative; a sparse matrix has rows 0..3")]
fn select_rows_panics_on_a_negative_index() {
    SparseMatrix::<f32>::new(3, 2).select_rows(&[-1]);
}

#[test]
fn append_rows_concatenates_in_order() {
    let mut g = rng(SEED + 1);
    eprintln!("append_sparse_matrix_rows: seed {:#x}", SEED + 1);
    for _ in 0..30 {
        let cols = g.random_range(1..6);
        let parts: Vec<Model> = (0..g.random_range(1..5))
            .map(|_| {
                let r = g.random_range(0..4);
                random_sparse_model(&mut g, r, cols)
            })
            .collect();
        let inputs = parts.iter().map(|p| smat_of::<f64>(p, cols)).collect();
        let got = SparseMatrix::append_sparse_matrix_rows(inputs).unwrap();
        let want: Model = parts.concat();
        assert_eq!(got.num_cols(), cols);
        assert_eq!(dense(&got), want);
    }
}

#[test]
fn append_rows_allows_empty_inputs_of_any_width() {
    let a = smat_of::<f64>(&vec![vec![1.0, 0.0, 2.0]], 3);
    let empty = SparseMatrix::<f64>::new(0, 7);
    let got =
        SparseMatrix::append_sparse_matrix_rows(vec![empty.clone(), a.clone(), empty, a]).unwrap();
    assert_eq!(got.num_cols(), 3);
    assert_eq!(dense(&got), vec![vec![1.0, 0.0, 2.0]; 2]);
    // no rows at all: the first input's width; no inputs: 0 x 0
    let got = SparseMatrix::<f64>::append_sparse_matrix_rows(vec![
        SparseMatrix::new(0, 4),
        SparseMatrix::new(0, 2),
    ])
    .unwrap();
    assert_eq!((got.num_rows(), got.num_cols()), (0, 4));
    let got = SparseMatrix::<f64>::append_sparse_matrix_rows(Vec::new()).unwrap();
    assert_eq!((got.num_rows(), got.num_cols()), (0, 0));
}

#[test]
fn append_rows_rejects_differing_widths() {
    let e = SparseMatrix::<f32>::append_sparse_matrix_rows(vec![
        SparseMatrix::new(0, 9),
        SparseMatrix::new(2, 3),
        SparseMatrix::new(1, 3),
        SparseMatrix::new(1, 4),
    ])
    .unwrap_err();
    assert_eq!(
        e,
        Error::AppendDim {
            input: 3,
            cols: 4,
            expected: 3
        }
    );
    assert_eq!(
        e.to_string(),
        "append_sparse_matrix_rows: input 3 has 4 columns, the inputs before it have 3"
    );
}

/// The one-hot matrix by a naive loop: `out[i][idx[i]] = w[i]`, transposed if asked.
fn one_hot_model(idx: &[i32], w: &[f64], dim: usize, trans: Trans) -> Model {
    let mut m = vec![vec![0.0; dim]; idx.len()];
    for i in 0..idx.len() {
        if idx[i] >= 0 {
            m[i][idx[i] as usize] = w[i];
        }
    }
    match trans {
        Trans::NoTrans => m,
        Trans::Trans => (0..dim)
            .map(|c| (0..idx.len()).map(|r| m[r][c]).collect())
            .collect(),
    }
}

#[test]
fn one_hot_constructors_match_a_dense_loop_in_both_orientations() {
    let mut g = rng(SEED + 2);
    eprintln!("from_one_hot: seed {:#x}", SEED + 2);
    for _ in 0..60 {
        let dim = g.random_range(1..7);
        let n = g.random_range(1..9);
        let idx: Vec<i32> = (0..n).map(|_| g.random_range(-1..dim as i32)).collect();
        let w: Vec<f64> = (0..n)
            .map(|_| f64::from(g.random_range(-2i32..3)) / 2.0)
            .collect();
        for trans in [Trans::NoTrans, Trans::Trans] {
            let got = SparseMatrix::<f64>::from_one_hot(&idx, dim, trans).unwrap();
            let want = one_hot_model(&idx, &vec![1.0; n], dim, trans);
            assert_eq!(dense(&got), want, "{idx:?} {trans:?}");
            let ones = idx.iter().filter(|&&i| i >= 0).count();
            assert_eq!(got.num_elements(), ones);

            let weights = Vector::from_vec(w.clone());
            let got = SparseMatrix::from_one_hot_weighted(&idx, &weights, dim, trans).unwrap();
            let want = one_hot_model(&idx, &w, dim, trans);
            assert_eq!(dense(&got), want, "{idx:?} {w:?} {trans:?}");
            // zeros are not stored, as Kaldi's SparseVector constructor drops them
            let stored = (0..n).filter(|&i| idx[i] >= 0 && w[i] != 0.0).count();
            assert_eq!(got.num_elements(), stored);
        }
    }
}

#[test]
fn one_hot_from_kaldis_documentation() {
    // indexes [2, -1, 0] with dim 3: rows e2, empty, e0; the transpose is 3 x 3
    let s = SparseMatrix::<f32>::from_one_hot(&[2, -1, 0], 3, Trans::NoTrans).unwrap();
    assert_eq!(s.row(0).data(), &[(2, 1.0)]);
    assert!(s.row(1).data().is_empty());
    assert_eq!(s.row(2).data(), &[(0, 1.0)]);
    let t = SparseMatrix::<f32>::from_one_hot(&[2, -1, 0, 2], 3, Trans::Trans).unwrap();
    assert_eq!((t.num_rows(), t.num_cols()), (3, 4));
    assert_eq!(t.row(0).data(), &[(2, 1.0)]);
    assert!(t.row(1).data().is_empty());
    assert_eq!(t.row(2).data(), &[(0, 1.0), (3, 1.0)]);
}

#[test]
fn one_hot_rejects_an_index_past_dim() {
    let e = SparseMatrix::<f64>::from_one_hot(&[0, 4, 1], 4, Trans::Trans).unwrap_err();
    assert_eq!(
        e,
        Error::SparseIndex {
            element: 1,
            index: 4,
            dim: 4,
            previous: None
        }
    );
    assert_eq!(
        e.to_string(),
        "sparse vector pair 1 has index 4, out of range for dimension 4"
    );
}

#[test]
#[should_panic(
    expected = "from_one_hot_weighted: weights dim 2 does not match number of indexes 3"
)]
fn one_hot_weighted_needs_one_weight_per_index() {
    let _ = SparseMatrix::from_one_hot_weighted(
        &[0, 1, 2],
        &Vector::from_vec(vec![1.0f32, 2.0]),
        3,
        Trans::NoTrans,
    );
}

#[test]
fn set_randn_keeps_about_one_minus_zero_prob_of_the_elements() {
    let mut g = rng(SEED + 3);
    eprintln!("set_randn: seed {:#x}", SEED + 3);
    let mut s = SparseMatrix::<f64>::new(40, 50);
    s.set_randn(0.75, &mut g);
    assert_eq!((s.num_rows(), s.num_cols()), (40, 50));
    // 2000 Bernoulli(0.25) draws: mean 500, sd ~19; 6 sd either side
    let n = s.num_elements();
    assert!((385..=615).contains(&n), "{n} stored of 2000");
    let mut sum = 0.0;
    let mut sum_sq = 0.0;
    for r in 0..s.num_rows() {
        let d = s.row(r).data();
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0), "sorted, no repeats");
        for &(_, v) in d {
            assert!(v != 0.0);
            sum += v;
            sum_sq += v * v;
        }
    }
    // standard normal values: mean ~0, variance ~1
    let (mean, var) = (sum / n as f64, sum_sq / n as f64);
    assert!(
        mean.abs() < 0.3 && (0.7..1.3).contains(&var),
        "{mean} {var}"
    );

    let mut v = SparseVector::<f32>::new(30);
    v.set_randn(0.0, &mut g);
    assert_eq!(v.num_elements(), 30);
    v.set_randn(1.0, &mut g);
    assert_eq!((v.num_elements(), v.dim()), (0, 30));
}

#[test]
#[should_panic(expected = "set_randn: zero_prob 1.5 is not a probability in [0, 1]")]
fn set_randn_rejects_a_probability_above_one() {
    SparseMatrix::<f32>::new(2, 2).set_randn(1.5, &mut rng(1));
}

fn feature_matrix() -> Matrix<f32> {
    let mut g = rng(SEED + 4);
    let mut m = Matrix::<f32>::new(12, 5);
    m.set_randn(&mut g);
    m
}

#[test]
fn compressed_general_matrix_acts_as_its_decompressed_copy() {
    let m = feature_matrix();
    let mut gm = GeneralMatrix::Full(m.clone());
    gm.compress(CompressionMethod::Auto).unwrap();
    let cm = CompressedMatrix::compress(&m, CompressionMethod::Auto).unwrap();
    assert_eq!(gm, GeneralMatrix::Compressed(cm.clone()));
    let dec: Model = model_of(&cm.to_matrix::<f32>());
    assert_eq!((gm.num_rows(), gm.num_cols()), (12, 5));
    assert_eq!(model_of(&gm.get_matrix()), dec);

    // AddToMat and CopyToMat, both orientations, against loops over the decompressed copy
    let mut g = rng(SEED + 5);
    let base = common::random_matrix::<f32>(&mut g, 5, 12);
    let mut out = base.clone();
    gm.add_to_mat(0.5, &mut out, Trans::Trans);
    let b = model_of(&base);
    for r in 0..5 {
        for c in 0..12 {
            let want = b[r][c] + 0.5 * dec[c][r];
            assert!((f64::from(out[(r, c)]) - want).abs() < 1e-5, "({r}, {c})");
        }
    }
    let mut out = Matrix::<f32>::new(5, 12);
    gm.copy_to_mat(&mut out, Trans::Trans);
    assert_eq!(model_of(&out), common::transpose(&dec));

    // Scale changes the header only; the values scale with it
    let mut scaled = gm.clone();
    scaled.scale(-2.0);
    let got = model_of(&scaled.get_matrix());
    for r in 0..12 {
        for c in 0..5 {
            let want = -2.0 * dec[r][c];
            assert!((got[r][c] - want).abs() <= 1e-5 * want.abs().max(1.0));
        }
    }

    // Uncompress gives the decompressed full matrix; a second Compress of sparse is a no-op
    let mut full = gm.clone();
    full.uncompress();
    assert_eq!(full, GeneralMatrix::Full(cm.to_matrix()));
    let mut sparse = GeneralMatrix::Sparse(SparseMatrix::<f32>::new(2, 2));
    sparse.compress(CompressionMethod::Auto).unwrap();
    sparse.uncompress();
    assert!(matches!(sparse, GeneralMatrix::Sparse(_)));
    // Kaldi compresses only a full matrix with rows
    let mut empty = GeneralMatrix::Full(Matrix::<f32>::new(0, 0));
    empty.compress(CompressionMethod::Auto).unwrap();
    assert!(matches!(empty, GeneralMatrix::Full(_)));
}

#[test]
fn compress_refuses_a_nan_and_keeps_the_full_matrix() {
    let mut m = feature_matrix();
    m[(3, 2)] = f32::NAN;
    let mut gm = GeneralMatrix::Full(m);
    let e = gm.compress(CompressionMethod::TwoByteAuto).unwrap_err();
    assert!(
        matches!(
            e,
            Error::CannotCompress {
                position: Position::Matrix(3, 2),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(matches!(gm, GeneralMatrix::Full(_)));
}

#[test]
fn compressed_general_matrix_writes_the_compressed_form_and_reads_it_back() {
    let m = feature_matrix();
    let cm = CompressedMatrix::compress(&m, CompressionMethod::TwoByteAuto).unwrap();
    let gm = GeneralMatrix::<f32>::Compressed(cm.clone());
    // binary: exactly CompressedMatrix::Write's bytes (the `CM2 ` token first)
    let mut bytes = Vec::new();
    gm.write_kaldi(&mut bytes, true).unwrap();
    let mut want = Vec::new();
    cm.write_kaldi(&mut want).unwrap();
    assert_eq!(bytes, want);
    assert_eq!(&bytes[..4], b"CM2 ");
    let back = GeneralMatrix::<f64>::read_kaldi(&mut &bytes[..], true).unwrap();
    assert_eq!(back, GeneralMatrix::Compressed(cm.clone()));
    // text: Kaldi writes the decompressed matrix, which reads back as a full one
    let mut text = Vec::new();
    gm.write_kaldi(&mut text, false).unwrap();
    let mut want = Vec::new();
    cm.to_matrix::<f32>().write_kaldi(&mut want, false).unwrap();
    assert_eq!(text, want);
    let back = GeneralMatrix::<f32>::read_kaldi(&mut &text[..], false).unwrap();
    assert_eq!(back, GeneralMatrix::Full(cm.to_matrix()));
}
