//! The rest of Kaldi's `sparse-matrix.h`: sparse copies, transposes and resizes, appending
//! and filtering the rows of general matrices, and `ExtractRowRangeWithPadding` with the
//! compressed row-range constructor, against dense `Vec<Vec<f64>>` models built by naive
//! loops and hand-worked examples of Kaldi's semantics.
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::{model_of, random_sparse_model, rng, smat_of, Model};
use dense_matrix::{
    append_general_matrix_rows, extract_row_range_with_padding, filter_compressed_matrix_rows,
    filter_general_matrix_rows, filter_matrix_rows, filter_sparse_matrix_rows, CompressedMatrix,
    CompressionMethod, Error, GeneralMatrix, Matrix, ResizeType, SparseMatrix, SparseVector, Trans,
};
use rand::rngs::StdRng;
use rand::Rng;

const SEED: u64 = 0x5a_2e_12;

/// A model with every element uniform in [-4, 4).
fn dense_model(g: &mut StdRng, rows: usize, cols: usize) -> Model {
    (0..rows)
        .map(|_| (0..cols).map(|_| g.random::<f64>() * 8.0 - 4.0).collect())
        .collect()
}

fn matrix(m: &Model) -> Matrix<f64> {
    let (rows, cols) = (m.len(), m.first().map_or(0, Vec::len));
    Matrix::from_vec(rows, cols, m.concat()).unwrap()
}

/// The dense model of a sparse matrix, read pair by pair (no library conversion).
fn dense_of<R: dense_matrix::Real>(s: &SparseMatrix<R>) -> Model {
    let mut out = vec![vec![0.0; s.num_cols()]; s.num_rows()];
    for r in 0..s.num_rows() {
        for &(c, v) in s.row(r).data() {
            out[r][c] = v.to_f64();
        }
    }
    out
}

fn transpose(m: &Model, cols: usize) -> Model {
    (0..cols)
        .map(|c| m.iter().map(|row| row[c]).collect())
        .collect()
}

fn model_of_general(m: &GeneralMatrix<f64>) -> Model {
    match m {
        GeneralMatrix::Sparse(s) => dense_of(s),
        _ if m.num_rows() == 0 => Vec::new(),
        _ => model_of(&m.get_matrix()),
    }
}

// ---- 1. copies, transposes, resizes ----

#[test]
fn transpose_equals_the_dense_transpose() {
    let mut g = rng(SEED);
    eprintln!("transpose: seed {SEED:#x}");
    for _ in 0..60 {
        let (rows, cols) = (g.random_range(0..7), g.random_range(0..7));
        let m = random_sparse_model(&mut g, rows, cols);
        let s = smat_of::<f64>(&m, cols);
        let t = s.transpose();
        assert_eq!((t.num_rows(), t.num_cols()), (cols, rows));
        assert_eq!(dense_of(&t), transpose(&m, cols), "model {m:?}");
        assert_eq!(SparseMatrix::from_transposed(&s), t);
        // every row of the transpose is sorted by index without repeats
        for r in 0..t.num_rows() {
            let idx: Vec<usize> = t.row(r).data().iter().map(|p| p.0).collect();
            assert!(idx.windows(2).all(|w| w[0] < w[1]), "row {r}: {idx:?}");
        }
        assert_eq!(t.transpose(), s, "the transpose of the transpose");
    }
}

#[test]
fn transpose_drops_stored_zeros_as_kaldi_rebuilds_rows() {
    // a stored zero (scale by 0 keeps pairs, as Kaldi's Scale does)
    let mut s = SparseMatrix::<f32>::from_rows(
        3,
        vec![
            SparseVector::from_pairs(3, vec![(0, 1.0), (2, 2.0)]).unwrap(),
            SparseVector::from_pairs(3, vec![(1, 3.0)]).unwrap(),
        ],
    )
    .unwrap();
    s.scale(0.0);
    assert_eq!(s.num_elements(), 3);
    let t = s.transpose();
    assert_eq!((t.num_rows(), t.num_cols(), t.num_elements()), (3, 2, 0));
    // without transposing, the stored zeros are copied as they are
    let mut copy = SparseMatrix::<f64>::new(0, 0);
    copy.copy_from_smat(&s, Trans::NoTrans);
    assert_eq!(copy.num_elements(), 3);
}

#[test]
fn copy_from_smat_converts_precision_both_ways() {
    let mut g = rng(SEED + 1);
    eprintln!("copy_from_smat: seed {:#x}", SEED + 1);
    for _ in 0..40 {
        let (rows, cols) = (g.random_range(0..6), g.random_range(0..6));
        // values that f32 cannot hold exactly, so the rounding shows
        let m: Model = random_sparse_model(&mut g, rows, cols)
            .into_iter()
            .map(|row| row.into_iter().map(|v| v / 3.0).collect())
            .collect();
        let s64 = smat_of::<f64>(&m, cols);
        let rounded: Model = m
            .iter()
            .map(|row| row.iter().map(|&v| f64::from(v as f32)).collect())
            .collect();
        let mut s32 = SparseMatrix::<f32>::new(2, 9);
        s32.copy_from_smat(&s64, Trans::NoTrans);
        assert_eq!((s32.num_rows(), s32.num_cols()), (rows, cols));
        assert_eq!(dense_of(&s32), rounded);
        s32.copy_from_smat(&s64, Trans::Trans);
        assert_eq!(dense_of(&s32), transpose(&rounded, cols));
        // f32 -> f64 is exact
        let mut back = SparseMatrix::<f64>::new(1, 1);
        back.copy_from_smat(&s32, Trans::Trans);
        assert_eq!(dense_of(&back), rounded);
    }
}

#[test]
fn copy_from_svec_takes_dim_and_converted_pairs() {
    let src = SparseVector::<f64>::from_pairs(7, vec![(1, 0.1), (4, -2.5)]).unwrap();
    let mut dst = SparseVector::<f32>::from_pairs(3, vec![(2, 9.0)]).unwrap();
    dst.copy_from_svec(&src);
    assert_eq!(dst.dim(), 7);
    assert_eq!(dst.data(), &[(1, 0.1f64 as f32), (4, -2.5f32)]);
    let mut wide = SparseVector::<f64>::new(0);
    wide.copy_from_svec(&dst);
    assert_eq!(wide.data(), &[(1, f64::from(0.1f64 as f32)), (4, -2.5)]);
    // a value below f32's range rounds to zero and stays stored, as in Kaldi
    let tiny = SparseVector::<f64>::from_pairs(2, vec![(0, 1e-300)]).unwrap();
    dst.copy_from_svec(&tiny);
    assert_eq!(dst.data(), &[(0, 0.0f32)]);
}

#[track_caller]
fn check_svec_resize(pairs: &[(usize, f64)], dim: usize, ty: ResizeType, want: &[(usize, f64)]) {
    let mut v = SparseVector::from_pairs(6, pairs.to_vec()).unwrap();
    v.resize(dim, ty);
    assert_eq!((v.dim(), v.data()), (dim, want));
}

#[test]
fn sparse_vector_resize_follows_kaldi() {
    let p = [(0, 1.0), (3, 2.0), (5, 3.0)];
    check_svec_resize(&p, 4, ResizeType::CopyData, &[(0, 1.0), (3, 2.0)]);
    check_svec_resize(&p, 3, ResizeType::CopyData, &[(0, 1.0)]);
    check_svec_resize(&p, 9, ResizeType::CopyData, &p);
    check_svec_resize(&p, 6, ResizeType::CopyData, &p);
    check_svec_resize(&p, 0, ResizeType::CopyData, &[]);
    check_svec_resize(&p, 6, ResizeType::SetZero, &[]);
    check_svec_resize(&p, 9, ResizeType::Undefined, &[]);
}

#[test]
fn sparse_matrix_resize_matches_a_dense_model() {
    let mut g = rng(SEED + 2);
    eprintln!("SparseMatrix::resize: seed {:#x}", SEED + 2);
    for _ in 0..60 {
        let (rows, cols) = (g.random_range(0..6), g.random_range(0..6));
        let m = random_sparse_model(&mut g, rows, cols);
        let (new_rows, new_cols) = (g.random_range(0..8), g.random_range(0..8));
        let ty = [
            ResizeType::CopyData,
            ResizeType::SetZero,
            ResizeType::Undefined,
        ][g.random_range(0..3)];
        let mut s = smat_of::<f64>(&m, cols);
        s.resize(new_rows, new_cols, ty);
        let mut want = vec![vec![0.0; new_cols]; new_rows];
        if ty == ResizeType::CopyData {
            for r in 0..rows.min(new_rows) {
                for c in 0..cols.min(new_cols) {
                    want[r][c] = m[r][c];
                }
            }
        }
        assert_eq!((s.num_rows(), s.num_cols()), (new_rows, new_cols));
        for r in 0..new_rows {
            assert_eq!(s.row(r).dim(), new_cols, "row {r} after {ty:?}");
        }
        assert_eq!(
            dense_of(&s),
            want,
            "{rows}x{cols} -> {new_rows}x{new_cols} {ty:?}"
        );
    }
}

// ---- 2. appending and filtering rows ----

fn compressed(m: &Model, method: CompressionMethod) -> CompressedMatrix {
    CompressedMatrix::compress(&matrix(m), method).unwrap()
}

#[test]
fn append_of_sparse_or_empty_inputs_is_sparse() {
    let mut g = rng(SEED + 3);
    eprintln!("append_general_matrix_rows (sparse): seed {:#x}", SEED + 3);
    let a = random_sparse_model(&mut g, 3, 4);
    let b = random_sparse_model(&mut g, 2, 4);
    let inputs = [
        GeneralMatrix::Sparse(smat_of::<f64>(&a, 4)),
        GeneralMatrix::Full(Matrix::empty()),
        GeneralMatrix::Compressed(CompressedMatrix::empty()),
        GeneralMatrix::Sparse(SparseMatrix::new(0, 9)),
        GeneralMatrix::Sparse(smat_of::<f64>(&b, 4)),
    ];
    let refs: Vec<&GeneralMatrix<f64>> = inputs.iter().collect();
    let got = append_general_matrix_rows(&refs).unwrap();
    let GeneralMatrix::Sparse(s) = &got else {
        panic!("expected a sparse result, got {got:?}")
    };
    assert_eq!(dense_of(s), [a, b].concat());
}

#[test]
fn append_with_a_full_or_compressed_input_is_full() {
    let mut g = rng(SEED + 4);
    eprintln!("append_general_matrix_rows (full): seed {:#x}", SEED + 4);
    for _ in 0..30 {
        let cols = g.random_range(1..6);
        let mut inputs = Vec::new();
        let mut want: Model = Vec::new();
        for _ in 0..g.random_range(1..5) {
            let rows = g.random_range(0..4);
            let m = random_sparse_model(&mut g, rows, cols);
            let input = match (rows, g.random_range(0..3)) {
                (0, _) => GeneralMatrix::Sparse(SparseMatrix::new(0, 7)),
                (_, 0) => GeneralMatrix::Sparse(smat_of::<f64>(&m, cols)),
                (_, 1) => GeneralMatrix::Full(matrix(&m)),
                _ => GeneralMatrix::Compressed(compressed(&m, CompressionMethod::TwoByteAuto)),
            };
            // the model of a compressed input is its decompression
            want.extend(model_of_general(&input));
            inputs.push(input);
        }
        inputs.push(GeneralMatrix::Full(matrix(&random_sparse_model(
            &mut g, 1, cols,
        ))));
        want.extend(model_of_general(inputs.last().unwrap()));
        let refs: Vec<&GeneralMatrix<f64>> = inputs.iter().collect();
        let got = append_general_matrix_rows(&refs).unwrap();
        assert!(matches!(got, GeneralMatrix::Full(_)), "{got:?}");
        assert_eq!(model_of_general(&got), want);
    }
}

#[test]
fn append_of_nothing_is_the_empty_full_matrix() {
    let got = append_general_matrix_rows::<f32>(&[]).unwrap();
    assert_eq!(got, GeneralMatrix::Full(Matrix::empty()));
}

#[test]
fn append_with_differing_widths_names_the_input() {
    let a = GeneralMatrix::Full(Matrix::<f64>::new(2, 3));
    let empty = GeneralMatrix::Sparse(SparseMatrix::new(0, 5));
    let b = GeneralMatrix::Sparse(SparseMatrix::new(1, 4));
    let err = append_general_matrix_rows(&[&a, &empty, &b]).unwrap_err();
    assert_eq!(
        err,
        Error::AppendDim {
            input: 2,
            cols: 4,
            expected: 3
        }
    );
}

fn random_mask(g: &mut StdRng, n: usize) -> Vec<bool> {
    loop {
        let mask: Vec<bool> = (0..n).map(|_| g.random_range(0..3) == 0).collect();
        if mask.contains(&true) {
            return mask;
        }
    }
}

fn filter_model(m: &Model, mask: &[bool]) -> Model {
    let mut out = Vec::new();
    for r in 0..m.len() {
        if mask[r] {
            out.push(m[r].clone());
        }
    }
    out
}

#[test]
fn filters_keep_the_masked_rows_in_order() {
    let mut g = rng(SEED + 5);
    eprintln!("filter_*_rows: seed {:#x}", SEED + 5);
    for _ in 0..60 {
        let (rows, cols) = (g.random_range(1..12), g.random_range(1..6));
        let m = random_sparse_model(&mut g, rows, cols);
        let mask = random_mask(&mut g, rows);
        let want = filter_model(&m, &mask);

        let s = filter_sparse_matrix_rows(&smat_of::<f64>(&m, cols), &mask).unwrap();
        assert_eq!(s.num_cols(), cols);
        assert_eq!(dense_of(&s), want, "mask {mask:?}");

        let f = filter_matrix_rows(&matrix(&m), &mask).unwrap();
        assert_eq!(model_of(&f), want);

        // a compressed input: the kept rows of its decompression, both of Kaldi's paths
        // (few rows kept: row by row; many: the whole matrix)
        for method in [
            CompressionMethod::SpeechFeature,
            CompressionMethod::OneByteAuto,
        ] {
            let c = compressed(&m, method);
            let whole = model_of(&c.to_matrix::<f32>());
            let got = filter_compressed_matrix_rows::<f32>(&c, &mask).unwrap();
            assert_eq!(model_of(&got), filter_model(&whole, &mask), "{method:?}");
        }

        let general = [
            GeneralMatrix::Full(matrix(&m)),
            GeneralMatrix::Sparse(smat_of::<f64>(&m, cols)),
            GeneralMatrix::Compressed(compressed(&m, CompressionMethod::TwoByteAuto)),
        ];
        for input in &general {
            let got = filter_general_matrix_rows(input, &mask).unwrap();
            let whole = model_of_general(input);
            assert_eq!(model_of_general(&got), filter_model(&whole, &mask));
            let all_kept = mask.iter().all(|&k| k);
            match (input, &got) {
                _ if all_kept => assert_eq!(&got, input, "all rows kept: a copy"),
                (GeneralMatrix::Sparse(_), GeneralMatrix::Sparse(_)) => {}
                (GeneralMatrix::Full(_) | GeneralMatrix::Compressed(_), GeneralMatrix::Full(_)) => {
                }
                _ => panic!("{input:?} filtered to {got:?}"),
            }
        }
    }
}

#[test]
fn filter_of_every_row_keeps_a_compressed_matrix_compressed() {
    let m = vec![vec![1.0, 2.0], vec![3.0, 4.0]];
    let c = GeneralMatrix::<f64>::Compressed(compressed(&m, CompressionMethod::OneByteAuto));
    assert_eq!(filter_general_matrix_rows(&c, &[true, true]).unwrap(), c);
}

#[test]
fn filters_that_keep_no_row_name_the_function() {
    let m = Matrix::<f64>::new(3, 2);
    let none = [false; 3];
    let err = |op, num_rows| Error::NoKeptRows { op, num_rows };
    assert_eq!(
        filter_matrix_rows(&m, &none).unwrap_err(),
        err("filter_matrix_rows", 3)
    );
    assert_eq!(
        filter_sparse_matrix_rows(&SparseMatrix::<f32>::new(3, 2), &none).unwrap_err(),
        err("filter_sparse_matrix_rows", 3)
    );
    let c = CompressedMatrix::compress(&m, CompressionMethod::TwoByteAuto).unwrap();
    assert_eq!(
        filter_compressed_matrix_rows::<f32>(&c, &none).unwrap_err(),
        err("filter_compressed_matrix_rows", 3)
    );
    assert_eq!(
        filter_general_matrix_rows(&GeneralMatrix::Full(m), &none).unwrap_err(),
        err("filter_general_matrix_rows", 3)
    );
    // an input without rows has no row to keep either
    let empty = GeneralMatrix::<f64>::Full(Matrix::empty());
    let e = filter_general_matrix_rows(&empty, &[]).unwrap_err();
    assert_eq!(e, err("filter_general_matrix_rows", 0));
    assert_eq!(
        e.to_string(),
        "filter_general_matrix_rows: keep_rows keeps none of the 0 rows (at least one must be kept)"
    );
}

#[test]
#[should_panic(expected = "filter_matrix_rows: keep_rows length 2 does not match num_rows 3")]
fn filter_with_a_short_mask_panics_naming_both_lengths() {
    let _ = filter_matrix_rows(&Matrix::<f32>::new(3, 2), &[true, false]);
}

#[test]
#[should_panic(
    expected = "filter_sparse_matrix_rows: keep_rows length 4 does not match num_rows 3"
)]
fn sparse_filter_with_a_long_mask_panics() {
    let _ = filter_sparse_matrix_rows(&SparseMatrix::<f32>::new(3, 2), &[true; 4]);
}

#[test]
#[should_panic(
    expected = "filter_general_matrix_rows: keep_rows length 1 does not match num_rows 3"
)]
fn general_filter_with_a_short_mask_panics() {
    let m = GeneralMatrix::<f32>::Sparse(SparseMatrix::new(3, 2));
    let _ = filter_general_matrix_rows(&m, &[true]);
}

#[test]
#[should_panic(
    expected = "filter_compressed_matrix_rows: keep_rows length 0 does not match num_rows 3"
)]
fn compressed_filter_with_an_empty_mask_panics() {
    let c = CompressedMatrix::compress(&Matrix::<f32>::new(3, 2), CompressionMethod::OneByteAuto)
        .unwrap();
    let _ = filter_compressed_matrix_rows::<f32>(&c, &[]);
}

// ---- 3. row ranges with padding ----

/// Rows `offset .. offset + n` of `m`, each index clamped into the matrix.
fn padded_rows(m: &Model, offset: i64, n: usize) -> Model {
    (0..n)
        .map(|r| m[(offset + r as i64).clamp(0, m.len() as i64 - 1) as usize].clone())
        .collect()
}

const METHODS: [CompressionMethod; 7] = [
    CompressionMethod::Auto,
    CompressionMethod::SpeechFeature,
    CompressionMethod::TwoByteAuto,
    CompressionMethod::TwoByteSignedInteger,
    CompressionMethod::OneByteAuto,
    CompressionMethod::OneByteUnsignedInteger,
    CompressionMethod::OneByteZeroOne,
];

/// The bits of a decompressed matrix: equality of these is byte-exact equality.
fn bits(m: &Matrix<f32>) -> Vec<Vec<u32>> {
    m.rows()
        .map(|row| row.iter().map(|x| x.to_bits()).collect())
        .collect()
}

#[test]
fn extract_row_range_with_padding_repeats_the_edge_rows() {
    let mut g = rng(SEED + 6);
    eprintln!("extract_row_range_with_padding: seed {:#x}", SEED + 6);
    for _ in 0..60 {
        let (rows, cols) = (g.random_range(1..8), g.random_range(1..5));
        let m = random_sparse_model(&mut g, rows, cols);
        let offset = g.random_range(-6i32..10);
        let n = g.random_range(1..12);
        let want = padded_rows(&m, i64::from(offset), n);
        let full = extract_row_range_with_padding(&GeneralMatrix::Full(matrix(&m)), offset, n);
        let full = full.unwrap();
        assert!(matches!(full, GeneralMatrix::Full(_)));
        assert_eq!(
            model_of_general(&full),
            want,
            "offset {offset}, {n} rows of {m:?}"
        );
        let sparse = GeneralMatrix::Sparse(smat_of::<f64>(&m, cols));
        let got = extract_row_range_with_padding(&sparse, offset, n).unwrap();
        let GeneralMatrix::Sparse(s) = &got else {
            panic!("expected sparse, got {got:?}")
        };
        assert_eq!(s.num_cols(), cols);
        assert_eq!(dense_of(s), want);
        // compressed: the padded rows of the whole decompression, and still compressed
        let c = compressed(&m, METHODS[g.random_range(0..METHODS.len())]);
        let whole = model_of(&c.to_matrix::<f64>());
        let got = extract_row_range_with_padding(&GeneralMatrix::<f64>::Compressed(c), offset, n);
        let GeneralMatrix::Compressed(cut) = got.unwrap() else {
            panic!("expected compressed")
        };
        assert_eq!(
            model_of(&cut.to_matrix::<f64>()),
            padded_rows(&whole, i64::from(offset), n)
        );
    }
}

#[test]
fn extract_of_no_rows_is_the_empty_full_matrix() {
    let s = GeneralMatrix::Sparse(SparseMatrix::<f64>::new(3, 2));
    let got = extract_row_range_with_padding(&s, -4, 0).unwrap();
    assert_eq!(got, GeneralMatrix::Full(Matrix::empty()));
    // even from a matrix without rows
    let empty = GeneralMatrix::<f64>::Full(Matrix::empty());
    assert_eq!(
        extract_row_range_with_padding(&empty, 0, 0).unwrap(),
        GeneralMatrix::Full(Matrix::empty())
    );
}

#[test]
fn extract_from_a_matrix_without_rows_is_an_error() {
    let inputs = [
        GeneralMatrix::<f32>::Full(Matrix::empty()),
        GeneralMatrix::Sparse(SparseMatrix::new(0, 4)),
        GeneralMatrix::Compressed(CompressedMatrix::empty()),
    ];
    for input in &inputs {
        let err = extract_row_range_with_padding(input, -1, 3).unwrap_err();
        assert_eq!(
            err,
            Error::PadEmptyMatrix {
                num_rows: 3,
                row_offset: -1
            }
        );
        assert_eq!(
            err.to_string(),
            "extract_row_range_with_padding: 3 rows from row -1 asked of a matrix with no rows, \
             which has no row to repeat"
        );
    }
}

#[test]
fn compressed_from_range_decompresses_to_the_window_bit_for_bit() {
    let mut g = rng(SEED + 7);
    eprintln!("CompressedMatrix::from_range: seed {:#x}", SEED + 7);
    for method in METHODS {
        for _ in 0..40 {
            let (rows, cols) = (g.random_range(1..14), g.random_range(1..6));
            let m = match method {
                CompressionMethod::OneByteZeroOne => (0..rows)
                    .map(|_| (0..cols).map(|_| g.random::<f64>()).collect())
                    .collect(),
                _ => dense_model(&mut g, rows, cols),
            };
            let c = compressed(&m, method);
            let whole = bits(&c.to_matrix::<f32>());
            let (col_offset, num_cols) = {
                let start = g.random_range(0..cols);
                (start, g.random_range(1..=cols - start))
            };
            let window = |rows: Vec<Vec<u32>>| -> Vec<Vec<u32>> {
                rows.into_iter()
                    .map(|row| row[col_offset..col_offset + num_cols].to_vec())
                    .collect()
            };
            // inside, without padding
            let start = g.random_range(0..rows);
            let n = g.random_range(1..=rows - start);
            let cut =
                CompressedMatrix::from_range(&c, start as i32, n, col_offset, num_cols, false)
                    .unwrap();
            assert_eq!(cut.token(), c.token(), "{method:?}: the format is kept");
            assert_eq!((cut.num_rows(), cut.num_cols()), (n, num_cols));
            assert_eq!(
                bits(&cut.to_matrix::<f32>()),
                window(whole[start..start + n].to_vec()),
                "{method:?}: rows {start}+{n}, columns {col_offset}+{num_cols} of {rows}x{cols}"
            );
            // anywhere, with padding
            let offset = g.random_range(-5i32..rows as i32 + 5);
            let n = g.random_range(1..rows + 8);
            let cut =
                CompressedMatrix::from_range(&c, offset, n, col_offset, num_cols, true).unwrap();
            let want: Vec<Vec<u32>> = (0..n)
                .map(|r| {
                    let src = (i64::from(offset) + r as i64).clamp(0, rows as i64 - 1);
                    whole[src as usize].clone()
                })
                .collect();
            assert_eq!(
                bits(&cut.to_matrix::<f32>()),
                window(want),
                "{method:?}: {n} padded rows from {offset} of {rows}x{cols}"
            );
        }
    }
}

#[test]
fn compressed_from_range_of_the_whole_matrix_writes_the_same_bytes() {
    let mut g = rng(SEED + 8);
    eprintln!("CompressedMatrix::from_range (whole): seed {:#x}", SEED + 8);
    for method in METHODS {
        let c = compressed(&dense_model(&mut g, 11, 3), method);
        let cut = CompressedMatrix::from_range(&c, 0, 11, 0, 3, false).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        c.write_kaldi(&mut a).unwrap();
        cut.write_kaldi(&mut b).unwrap();
        assert_eq!(a, b, "{method:?}");
    }
}

#[test]
fn compressed_from_range_with_an_empty_window_is_empty() {
    let c = compressed(&vec![vec![1.0, 2.0]; 3], CompressionMethod::TwoByteAuto);
    for (n, cols) in [(0, 2), (2, 0), (0, 0)] {
        let cut = CompressedMatrix::from_range(&c, 1, n, 0, cols, false).unwrap();
        assert_eq!(cut, CompressedMatrix::empty());
    }
}

#[test]
fn compressed_from_range_refuses_a_header_that_cannot_hold_the_rows() {
    let c = compressed(&vec![vec![1.0]; 2], CompressionMethod::OneByteAuto);
    let n = i32::MAX as usize + 1;
    let err = CompressedMatrix::from_range(&c, 0, n, 0, 1, true).unwrap_err();
    assert_eq!(
        err,
        Error::HeaderSizeOverflow {
            what: "a compressed matrix (Kaldi's header holds int32 sizes)",
            factors: vec![n as u64, 1],
        }
    );
}

#[test]
#[should_panic(
    expected = "CompressedMatrix::from_range: 3 rows from row 1 and 2 columns from column 0 do \
                not lie inside a 3 x 2 compressed matrix"
)]
fn compressed_from_range_without_padding_panics_past_the_end() {
    let c = compressed(&vec![vec![1.0, 2.0]; 3], CompressionMethod::TwoByteAuto);
    let _ = CompressedMatrix::from_range(&c, 1, 3, 0, 2, false);
}

#[test]
#[should_panic(
    expected = "CompressedMatrix::from_range: 1 rows from row -1 and 2 columns from column 0 do \
                not lie inside a 3 x 2 compressed matrix"
)]
fn compressed_from_range_without_padding_panics_before_the_start() {
    let c = compressed(&vec![vec![1.0, 2.0]; 3], CompressionMethod::SpeechFeature);
    let _ = CompressedMatrix::from_range(&c, -1, 1, 0, 2, false);
}

#[test]
#[should_panic(
    expected = "CompressedMatrix::from_range: 2 rows from row 0 and 2 columns from column \
                1 do not lie inside a 3 x 2 compressed matrix (rows may be padded, columns \
                may not)"
)]
fn compressed_from_range_panics_on_columns_outside_even_with_padding() {
    let c = compressed(&vec![vec![1.0, 2.0]; 3], CompressionMethod::OneByteAuto);
    let _ = CompressedMatrix::from_range(&c, 0, 2, 1, 2, true);
}

#[test]
#[should_panic(expected = "do not lie inside a 3 x 2 compressed matrix (rows may be padded")]
fn compressed_from_range_panics_on_a_column_offset_that_overflows() {
    let c = compressed(&vec![vec![1.0, 2.0]; 3], CompressionMethod::OneByteAuto);
    let _ = CompressedMatrix::from_range(&c, 0, 2, usize::MAX, 2, true);
}
