//! Kaldi's sparse types against a dense `Vec<Vec<f64>>` model with naive loops, and their
//! binary `SV` / `SM` forms against bytes built by hand from Kaldi's writer
//! (`WriteToken`, `WriteBasicType`).
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::{assert_close, matmul, model_of, rng, smat_of, transpose, Model, Padded};
use dense_matrix::{
    trace_mat_smat, vec_svec, Error, GeneralMatrix, Matrix, Real, SparseMatrix, SparseVector,
    Trans, Vector,
};
use rand::rngs::StdRng;
use rand::Rng;

const SEED: u64 = 0x5a_a55e;

/// A random `rows x cols` model, about half of it exactly zero.
fn sparse_model(rng: &mut StdRng, rows: usize, cols: usize) -> Model {
    (0..rows)
        .map(|_| {
            (0..cols)
                .map(|_| {
                    if rng.random_range(0..2) == 0 {
                        0.0
                    } else {
                        // values exact in f32, so both precisions see the same numbers
                        f64::from(rng.random_range(-64i32..64)) / 16.0
                    }
                })
                .collect()
        })
        .collect()
}

fn dims(rng: &mut StdRng) -> usize {
    rng.random_range(1..=9)
}

fn op(m: &Model, t: Trans) -> Model {
    match t {
        Trans::NoTrans => m.clone(),
        Trans::Trans => transpose(m),
    }
}

fn axpby(alpha: f64, prod: &Model, beta: f64, c: &Model) -> Model {
    prod.iter()
        .zip(c)
        .map(|(p, c)| p.iter().zip(c).map(|(p, c)| alpha * p + beta * c).collect())
        .collect()
}

fn products<R: Real>() {
    eprintln!("sparse products: seed {SEED:#x}");
    let mut g = rng(SEED);
    for _ in 0..60 {
        let (m, k, n) = (dims(&mut g), dims(&mut g), dims(&mut g));
        let (alpha, beta) = (g.random_range(-2.0..2.0), g.random_range(-2.0..2.0));
        for t in [Trans::NoTrans, Trans::Trans] {
            // add_mat_smat: C (m x n) = alpha A (m x k) op(B) + beta C
            let a = Padded::<R>::random(&mut g, m, k);
            let b_dense = match t {
                Trans::NoTrans => sparse_model(&mut g, k, n),
                Trans::Trans => sparse_model(&mut g, n, k),
            };
            let b = smat_of::<R>(&b_dense, b_dense[0].len());
            let mut c = Padded::<R>::random(&mut g, m, n);
            let c0 = model_of(&c.view());
            let want = axpby(
                alpha,
                &matmul(&model_of(&a.view()), &op(&b_dense, t)),
                beta,
                &c0,
            );
            c.view_mut()
                .add_mat_smat(R::from_f64(alpha), &a.view(), &b, t, R::from_f64(beta));
            assert_close::<R>(&model_of(&c.view()), &want, "add_mat_smat");
            assert!(c.padding_untouched(), "add_mat_smat wrote into the padding");

            // add_smat_mat: C (m x n) = alpha op(A) (m x k) B (k x n) + beta C
            let a_dense = match t {
                Trans::NoTrans => sparse_model(&mut g, m, k),
                Trans::Trans => sparse_model(&mut g, k, m),
            };
            let a = smat_of::<R>(&a_dense, a_dense[0].len());
            let b = Padded::<R>::random(&mut g, k, n);
            let mut c = Padded::<R>::random(&mut g, m, n);
            let c0 = model_of(&c.view());
            let want = axpby(
                alpha,
                &matmul(&op(&a_dense, t), &model_of(&b.view())),
                beta,
                &c0,
            );
            c.view_mut()
                .add_smat_mat(R::from_f64(alpha), &a, t, &b.view(), R::from_f64(beta));
            assert_close::<R>(&model_of(&c.view()), &want, "add_smat_mat");
            assert!(c.padding_untouched(), "add_smat_mat wrote into the padding");

            // trace_mat_smat: tr(A op(B)), A is m x k, op(B) is k x m
            let a = Padded::<R>::random(&mut g, m, k);
            let b_dense = match t {
                Trans::NoTrans => sparse_model(&mut g, k, m),
                Trans::Trans => sparse_model(&mut g, m, k),
            };
            let b = smat_of::<R>(&b_dense, b_dense[0].len());
            let p = matmul(&model_of(&a.view()), &op(&b_dense, t));
            let want: f64 = (0..m).map(|i| p[i][i]).sum();
            let got = trace_mat_smat(&a.view(), &b, t).to_f64();
            assert!(
                (got - want).abs() <= common::tol::<R>() * want.abs().max(1.0) * 10.0,
                "trace_mat_smat {t:?}: {got} vs {want}"
            );

            // add_smat / copy_to_mat / add_to_mat: C += alpha op(B)
            let bd = sparse_model(&mut g, m, n);
            let b = smat_of::<R>(&bd, n);
            let (r, cc) = match t {
                Trans::NoTrans => (m, n),
                Trans::Trans => (n, m),
            };
            let mut c = Padded::<R>::random(&mut g, r, cc);
            let c0 = model_of(&c.view());
            c.view_mut().add_smat(R::from_f64(alpha), &b, t);
            assert_close::<R>(
                &model_of(&c.view()),
                &axpby(alpha, &op(&bd, t), 1.0, &c0),
                "add_smat",
            );
            let mut d = Padded::<R>::random(&mut g, r, cc);
            b.copy_to_mat(&mut d.view_mut(), t);
            assert_eq!(model_of(&d.view()), op(&bd, t), "copy_to_mat {t:?}");
            assert!(d.padding_untouched());
            let gm = GeneralMatrix::Sparse(b.clone());
            let mut e = Padded::<R>::random(&mut g, r, cc);
            gm.copy_to_mat(&mut e.view_mut(), t);
            assert_eq!(
                model_of(&e.view()),
                op(&bd, t),
                "general sparse copy_to_mat"
            );
            let gf = GeneralMatrix::Full(b.to_matrix());
            let mut e = Padded::<R>::random(&mut g, r, cc);
            gf.copy_to_mat(&mut e.view_mut(), t);
            assert_eq!(model_of(&e.view()), op(&bd, t), "general full copy_to_mat");
            let mut f = Padded::<R>::random(&mut g, r, cc);
            let f0 = model_of(&f.view());
            gf.add_to_mat(R::from_f64(alpha), &mut f.view_mut(), t);
            assert_close::<R>(
                &model_of(&f.view()),
                &axpby(alpha, &op(&bd, t), 1.0, &f0),
                "general add_to_mat",
            );
        }
    }
}

#[test]
fn products_match_naive_loops_f32() {
    products::<f32>();
}

#[test]
fn products_match_naive_loops_f64() {
    products::<f64>();
}

#[test]
fn reductions_and_conversions_match_naive_loops() {
    eprintln!("sparse reductions: seed {SEED:#x}");
    let mut g = rng(SEED ^ 1);
    for _ in 0..40 {
        let (m, n) = (dims(&mut g), dims(&mut g));
        let d = sparse_model(&mut g, m, n);
        let s = SparseMatrix::<f64>::from_matrix(&Matrix::from_rows(&d));
        assert_eq!((s.num_rows(), s.num_cols()), (m, n));
        assert_eq!(s, smat_of::<f64>(&d, n));
        assert_eq!(model_of(&s.to_matrix()), d);
        let nnz = d.iter().flatten().filter(|&&v| v != 0.0).count();
        assert_eq!(s.num_elements(), nnz);
        let sum: f64 = d.iter().flatten().sum();
        assert!((s.sum() - sum).abs() < 1e-12);
        let fro = d.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
        assert!((s.frobenius_norm() - fro).abs() < 1e-12);

        let v = common::random_vector::<f64>(&mut g, n);
        let want: f64 = (0..n).map(|j| v.data()[j] * d[0][j]).sum();
        assert!((vec_svec(&v, s.row(0)) - want).abs() < 1e-12);

        let mut dense = Vector::<f64>::new(n);
        s.row(0).copy_elements_to_vec(&mut dense);
        assert_eq!(dense.data(), &d[0][..]);
        s.row(0).add_to_vec(2.0, &mut dense);
        let tripled: Vec<f64> = d[0].iter().map(|x| 3.0 * x).collect();
        assert_eq!(dense.data(), &tripled[..]);
        assert_eq!(
            SparseVector::from_vector(&dense).data().len(),
            d[0].iter().filter(|&&x| x != 0.0).count()
        );

        let mut scaled = s.clone();
        scaled.scale(-0.5);
        let want: Model = d
            .iter()
            .map(|r| r.iter().map(|x| -0.5 * x).collect())
            .collect();
        assert_eq!(model_of(&scaled.to_matrix()), want);
        let mut gm = GeneralMatrix::Sparse(s.clone());
        gm.scale(-0.5);
        assert_eq!(model_of(&gm.get_matrix()), want);
        assert_eq!((gm.num_rows(), gm.num_cols()), (m, n));
    }
}

#[test]
fn from_pairs_sorts_merges_and_drops_zeros_like_kaldi() {
    let v = SparseVector::from_pairs(
        6,
        vec![
            (4, 1.0f32),
            (1, 2.0),
            (4, 0.5),
            (2, 3.0),
            (2, -3.0),
            (0, 0.0),
        ],
    )
    .unwrap();
    assert_eq!(v.data(), &[(1, 2.0), (4, 1.5)]);
    assert_eq!(v.dim(), 6);
    assert_eq!(v.num_elements(), 2);
    assert_eq!(v.get_element(1), (4, 1.5));
    assert_eq!(v.sum(), 3.5);
    assert_eq!(
        SparseVector::from_pairs(3, vec![(0, 1.0f64), (3, 2.0)]),
        Err(Error::SparseIndex {
            element: 1,
            index: 3,
            dim: 3,
            previous: None
        })
    );
    assert_eq!(
        SparseMatrix::from_rows(3, vec![SparseVector::<f32>::new(3), SparseVector::new(4)]),
        Err(Error::SparseRowDim {
            row: 1,
            dim: 4,
            expected: 3
        })
    );
}

#[test]
fn max_follows_kaldi_including_implicit_zeros() {
    let v = |dim, p: Vec<(usize, f64)>| SparseVector::from_pairs(dim, p).unwrap();
    assert_eq!(v(4, vec![(1, -1.0), (2, 3.0)]).max(), Some((3.0, 2)));
    // all stored negative: the first unlisted index holds the zero
    assert_eq!(
        v(4, vec![(0, -1.0), (1, -2.0), (3, -0.5)]).max(),
        Some((0.0, 2))
    );
    assert_eq!(v(4, vec![(1, -1.0)]).max(), Some((0.0, 0)));
    // full: a negative maximum is the answer
    assert_eq!(v(2, vec![(0, -1.0), (1, -2.0)]).max(), Some((-1.0, 0)));
    assert_eq!(SparseVector::<f64>::new(0).max(), None);
}

#[test]
#[should_panic(expected = "add_mat_smat: shape 2 x 3 does not match shape 4 x 2")]
fn add_mat_smat_names_the_shapes() {
    let a = Matrix::<f64>::new(2, 3);
    let b = SparseMatrix::<f64>::new(4, 2);
    let mut c = Matrix::<f64>::new(2, 2);
    c.add_mat_smat(1.0, &a, &b, Trans::NoTrans, 0.0);
}

#[test]
#[should_panic(expected = "vec_svec: vector dim 3 does not match sparse dim 4")]
fn vec_svec_names_the_dims() {
    vec_svec(&Vector::<f32>::new(3), &SparseVector::new(4));
}

// ---- binary forms ----

fn int32(b: &mut Vec<u8>, v: i32) {
    b.push(4);
    b.extend_from_slice(&v.to_le_bytes());
}

fn float(b: &mut Vec<u8>, v: f32) {
    b.push(4);
    b.extend_from_slice(&v.to_le_bytes());
}

fn double(b: &mut Vec<u8>, v: f64) {
    b.push(8);
    b.extend_from_slice(&v.to_le_bytes());
}

/// Kaldi's `SparseVector<float>::Write(os, true)` of dim 5 {0: 0.5, 3: -2}: `WriteToken`
/// writes "SV ", then `WriteBasicType` writes dim, count, and each index and value.
fn sv_f32_bytes() -> Vec<u8> {
    let mut b = b"SV ".to_vec();
    int32(&mut b, 5);
    int32(&mut b, 2);
    int32(&mut b, 0);
    float(&mut b, 0.5);
    int32(&mut b, 3);
    float(&mut b, -2.0);
    b
}

fn sv() -> SparseVector<f32> {
    SparseVector::from_pairs(5, vec![(3, -2.0), (0, 0.5)]).unwrap()
}

#[test]
fn sparse_vector_binary_is_kaldis_bytes() {
    let mut out = Vec::new();
    sv().write_kaldi(&mut out, true).unwrap();
    assert_eq!(out, sv_f32_bytes());
    assert_eq!(
        SparseVector::<f32>::read_kaldi(&mut &out[..], true).unwrap(),
        sv()
    );

    // double: the same layout with 8-byte values
    let mut want = b"SV ".to_vec();
    int32(&mut want, 5);
    int32(&mut want, 2);
    int32(&mut want, 0);
    double(&mut want, 0.5);
    int32(&mut want, 3);
    double(&mut want, -2.0);
    let d = SparseVector::<f64>::from_pairs(5, vec![(0, 0.5), (3, -2.0)]).unwrap();
    let mut out = Vec::new();
    d.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out, want);
    // either precision reads either width, as Kaldi's ReadBasicType converts
    assert_eq!(
        SparseVector::<f32>::read_kaldi(&mut &want[..], true).unwrap(),
        sv()
    );
    assert_eq!(
        SparseVector::<f64>::read_kaldi(&mut &sv_f32_bytes()[..], true).unwrap(),
        d
    );
}

#[test]
fn sparse_matrix_binary_is_kaldis_bytes() {
    let m = SparseMatrix::from_rows(5, vec![sv(), SparseVector::new(5)]).unwrap();
    let mut want = b"SM ".to_vec();
    int32(&mut want, 2);
    want.extend(sv_f32_bytes());
    want.extend(b"SV ");
    int32(&mut want, 5);
    int32(&mut want, 0);
    let mut out = Vec::new();
    m.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out, want);
    assert_eq!(
        SparseMatrix::<f32>::read_kaldi(&mut &want[..], true).unwrap(),
        m
    );

    // GeneralMatrix: an `S` is sparse, anything else full
    let g = GeneralMatrix::<f32>::read_kaldi(&mut &want[..], true).unwrap();
    assert_eq!(g, GeneralMatrix::Sparse(m.clone()));
    let mut out = Vec::new();
    g.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out, want);

    let mut fm = b"FM ".to_vec();
    int32(&mut fm, 1);
    int32(&mut fm, 2);
    fm.extend(1.5f32.to_le_bytes());
    fm.extend((-1.0f32).to_le_bytes());
    let g = GeneralMatrix::<f32>::read_kaldi(&mut &fm[..], true).unwrap();
    assert_eq!(g, GeneralMatrix::Full(Matrix::from_rows(&[[1.5f32, -1.0]])));
    let mut out = Vec::new();
    g.write_kaldi(&mut out, true).unwrap();
    assert_eq!(out, fm);
}

fn read_sv(bytes: &[u8]) -> Result<SparseVector<f32>, Error> {
    SparseVector::read_kaldi(&mut &bytes[..], true)
}

#[test]
fn bad_sparse_vector_bytes_are_named_errors() {
    let mut b = b"SX ".to_vec();
    b.extend(&sv_f32_bytes()[3..]);
    assert_eq!(
        read_sv(&b),
        Err(Error::Format {
            expected: "the sparse vector token `SV `",
            found: "SX ".into()
        })
    );

    // more pairs than the dimension
    let mut b = b"SV ".to_vec();
    int32(&mut b, 2);
    int32(&mut b, 3);
    assert_eq!(read_sv(&b), Err(Error::SparseCount { count: 3, dim: 2 }));

    // a header claiming 2^31 - 1 pairs over a few bytes: an end-of-data error, and the
    // memory follows the data
    let mut b = b"SV ".to_vec();
    int32(&mut b, i32::MAX);
    int32(&mut b, i32::MAX);
    int32(&mut b, 0);
    float(&mut b, 1.0);
    assert_eq!(
        read_sv(&b),
        Err(Error::UnexpectedEnd {
            reading: format!("the index of pair 1 of {} of a sparse vector", i32::MAX),
            needed: 5,
            got: 0
        })
    );

    // unsorted, duplicate, out of range, negative
    let pairs = |p: &[(i32, f32)]| {
        let mut b = b"SV ".to_vec();
        int32(&mut b, 5);
        int32(&mut b, p.len() as i32);
        for &(i, v) in p {
            int32(&mut b, i);
            float(&mut b, v);
        }
        b
    };
    let e = read_sv(&pairs(&[(3, 1.0), (1, 2.0)])).unwrap_err();
    assert_eq!(
        e,
        Error::SparseIndex {
            element: 1,
            index: 1,
            dim: 5,
            previous: Some(3)
        }
    );
    assert_eq!(
        e.to_string(),
        "sparse vector pair 1 has index 1, not above the index 3 before it"
    );
    assert!(matches!(
        read_sv(&pairs(&[(2, 1.0), (2, 2.0)])),
        Err(Error::SparseIndex {
            element: 1,
            index: 2,
            previous: Some(2),
            ..
        })
    ));
    let e = read_sv(&pairs(&[(5, 1.0)])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sparse vector pair 0 has index 5, out of range for dimension 5"
    );
    assert_eq!(
        read_sv(&pairs(&[(-1, 1.0)])),
        Err(Error::NegativeSize {
            what: "an index of a sparse vector",
            value: -1
        })
    );

    // a value with a size byte other than 4 or 8
    let mut b = pairs(&[(1, 1.0)]);
    let at = b.len() - 5;
    b[at] = 2;
    assert_eq!(
        read_sv(&b),
        Err(Error::Format {
            expected: "the size byte 4 or 8 of a sparse vector value",
            found: "2".into()
        })
    );
    // a truncated value
    let b = pairs(&[(1, 1.0)]);
    assert_eq!(
        read_sv(&b[..b.len() - 2]),
        Err(Error::UnexpectedEnd {
            reading: "the value of pair 0 of 1 of a sparse vector".into(),
            needed: 4,
            got: 2
        })
    );
}

#[test]
fn bad_sparse_matrix_bytes_are_named_errors() {
    // 2^31 - 1 rows announced, one present
    let mut b = b"SM ".to_vec();
    int32(&mut b, i32::MAX);
    b.extend(sv_f32_bytes());
    assert_eq!(
        SparseMatrix::<f32>::read_kaldi(&mut &b[..], true),
        Err(Error::UnexpectedEnd {
            reading: "the sparse vector token `SV `".into(),
            needed: 3,
            got: 0
        })
    );
    // rows of differing dimension
    let mut b = b"SM ".to_vec();
    int32(&mut b, 2);
    b.extend(sv_f32_bytes());
    b.extend(b"SV ");
    int32(&mut b, 4);
    int32(&mut b, 0);
    assert_eq!(
        SparseMatrix::<f32>::read_kaldi(&mut &b[..], true),
        Err(Error::SparseRowDim {
            row: 1,
            dim: 4,
            expected: 5
        })
    );
    let mut b = b"SM ".to_vec();
    int32(&mut b, -3);
    assert_eq!(
        SparseMatrix::<f32>::read_kaldi(&mut &b[..], true),
        Err(Error::NegativeSize {
            what: "the row count of a sparse matrix",
            value: -3
        })
    );
}

// ---- text forms (Kaldi writes `dim=5 [ 0 0.5 3 -2 ] ` and `rows=2 ` + rows + "\n") ----

#[test]
fn text_forms_are_kaldis() {
    let mut out = Vec::new();
    sv().write_kaldi(&mut out, false).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "dim=5 [ 0 0.5 3 -2 ] ");
    let m = SparseMatrix::from_rows(5, vec![sv(), SparseVector::new(5)]).unwrap();
    let mut out = Vec::new();
    m.write_kaldi(&mut out, false).unwrap();
    let text = "rows=2 dim=5 [ 0 0.5 3 -2 ] dim=5 [ ] \n";
    assert_eq!(String::from_utf8(out).unwrap(), text);
    assert_eq!(
        SparseMatrix::<f32>::read_kaldi(&mut text.as_bytes(), false).unwrap(),
        m
    );
    // Kaldi's reader takes any white space, and a GeneralMatrix in text starts with `r`
    let spaced = "\n  rows=2\ndim=5 [ 0 0.5\n 3 -2 ]\n dim=5 [ ]";
    let g = GeneralMatrix::<f32>::read_kaldi(&mut spaced.as_bytes(), false).unwrap();
    assert_eq!(g, GeneralMatrix::Sparse(m.clone()));
    let mut out = Vec::new();
    g.write_kaldi(&mut out, false).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), text);
    let g = GeneralMatrix::<f64>::read_kaldi(&mut " [ 1 2 ]\n".as_bytes(), false).unwrap();
    assert_eq!(g, GeneralMatrix::Full(Matrix::from_rows(&[[1.0, 2.0]])));
    // the reader stops after the object
    let mut r = "dim=3 [ 2 7 ] rest".as_bytes();
    let v = SparseVector::<f64>::read_kaldi(&mut r, false).unwrap();
    assert_eq!(v.data(), &[(2, 7.0)]);
    assert_eq!(r, b" rest");
}

#[test]
fn bad_text_is_a_parse_error_naming_line_and_token() {
    let read = |s: &str| SparseVector::<f32>::read_kaldi(&mut s.as_bytes(), false);
    let parse = |line, token: &str, reason| Error::Parse {
        line,
        token: token.into(),
        reason,
    };
    assert_eq!(
        read("dim=x [ ]"),
        Err(parse(1, "dim=x", "expected `dim=<int>`"))
    );
    assert_eq!(
        read("size=3 [ ]"),
        Err(parse(1, "size=3", "expected `dim=<int>`"))
    );
    assert_eq!(read("dim=3 ( ]"), Err(parse(1, "(", "expected `[`")));
    assert_eq!(read("dim=3 [\n 1 x ]"), Err(parse(2, "x", "not a number")));
    assert_eq!(
        read("dim=3 [\n\n -1 2 ]"),
        Err(parse(3, "-1", "not an index"))
    );
    assert_eq!(
        read("dim=3 [ 1 2"),
        Err(parse(1, "", "expected an index or `]`"))
    );
    assert_eq!(
        read("dim=3 [ 2 1 1 1 ]"),
        Err(Error::SparseIndex {
            element: 1,
            index: 1,
            dim: 3,
            previous: Some(2)
        })
    );
    assert_eq!(
        SparseMatrix::<f32>::read_kaldi(&mut "rows=2 dim=3 [ ] dim=4 [ ]".as_bytes(), false),
        Err(Error::SparseRowDim {
            row: 1,
            dim: 4,
            expected: 3
        })
    );
    assert_eq!(
        SparseMatrix::<f32>::read_kaldi(&mut "rows=-1".as_bytes(), false),
        Err(parse(1, "rows=-1", "expected `rows=<int>`"))
    );
    // a huge row count over a short text ends at the data, not in an allocation
    assert_eq!(
        SparseMatrix::<f32>::read_kaldi(&mut "rows=2000000000 dim=1 [ ]".as_bytes(), false),
        Err(parse(1, "", "expected `dim=<int>`"))
    );
}
