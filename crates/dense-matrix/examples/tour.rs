//! A tour of dense-matrix: views, a gemv, a softmax with its log normaliser, an SVD with
//! its reconstruction error, and an ndarray round trip. Writes `tour.txt` (the printed
//! matrices, in Kaldi's text form) under `DEMO_OUT_DIR` (default `target/demo/dense-matrix`).

use std::fmt::Write as _;
use std::path::PathBuf;

use dense_matrix::{blas_num_threads, Matrix, MatrixView, Trans, Vector};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut log = String::new();
    let mut say = |line: String| {
        println!("{line}");
        writeln!(log, "{line}").unwrap();
    };
    say(format!("OpenBLAS threads: {}", blas_num_threads()));

    // 1. A 4 x 5 f32 matrix: Kaldi's default stride pads each row to 16 bytes (8 floats).
    let mut m = Matrix::<f32>::new(4, 5);
    for r in 0..4 {
        for c in 0..5 {
            m[(r, c)] = (10 * r + c) as f32;
        }
    }
    say(format!("M (4 x 5, stride {}) = {m}", m.stride()));

    // Views: a window, a row, and two disjoint mutable halves at once.
    let window = m.range(1, 2, 1, 3);
    say(format!(
        "M.range(1, 2, 1, 3) (stride {}) = {window}",
        window.stride()
    ));
    say(format!("M.row(2) = {}", m.row(2)));
    {
        let (mut top, mut bottom) = m.split_rows_at_mut(2);
        top.scale(-1.0);
        bottom.add(0.5);
    }
    say(format!("after top.scale(-1), bottom.add(0.5): M = {m}"));

    // 2. gemv: y = M x (Kaldi's AddMatVec), and y' = M^T z.
    let x = Vector::from_vec(vec![1.0f32, 0.0, 0.0, 0.0, 1.0]);
    let mut y = Vector::new(4);
    y.add_mat_vec(1.0, &m, Trans::NoTrans, &x, 0.0);
    say(format!("y = M x with x = {x}: {y}"));
    let z = Vector::from_vec(vec![1.0f32; 4]);
    let mut yt = Vector::new(5);
    yt.add_mat_vec(1.0, &m, Trans::Trans, &z, 0.0);
    say(format!("M^T 1 (column sums) = {yt}"));

    // 3. Softmax with the log normaliser (the seed's ApplySoftMax).
    let mut logits = Vector::from_vec(vec![1.0f64, 2.0, 3.0]);
    let log_norm = logits.apply_softmax();
    say(format!(
        "softmax([1 2 3]) = {logits}, log normaliser = {log_norm:.10} (= 3 + ln(1 + e^-1 + e^-2))"
    ));

    // 4. SVD of a random 6 x 4 matrix and its reconstruction error.
    let mut rng = StdRng::seed_from_u64(7);
    let mut a = Matrix::<f64>::new(6, 4);
    a.set_randn(&mut rng);
    let svd = a.svd()?;
    let mut us = svd.u.clone();
    us.mul_cols_vec(&svd.s);
    let mut rec = Matrix::new(6, 4);
    rec.add_mat_mat(1.0, &us, Trans::NoTrans, &svd.vt, Trans::NoTrans, 0.0);
    rec.add_mat(-1.0, &a, Trans::NoTrans);
    say(format!(
        "singular values of a 6 x 4 Gaussian matrix: {}",
        svd.s
    ));
    say(format!(
        "||U diag(s) Vt - A||_F / ||A||_F = {:.3e}",
        rec.frobenius_norm() / a.frobenius_norm()
    ));

    // 5. ndarray round trip: zero-copy view out, zero-copy view back, owned copy.
    let nd = m.as_array();
    say(format!("as ndarray (strides {:?}):\n{nd}", nd.strides()));
    let arr = ndarray::Array2::from_shape_fn((2, 3), |(r, c)| (r * 3 + c) as f32);
    let back = MatrixView::from_array(arr.view())?;
    say(format!(
        "MatrixView of an ndarray (stride {}) = {back}",
        back.stride()
    ));
    let owned = Matrix::from_array(&arr)?;
    say(format!(
        "round trip equal: {}",
        owned.as_array() == arr && owned.approx_equal(&back, 0.0)
    ));

    let dir = std::env::var_os("DEMO_OUT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/demo/dense-matrix"));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("tour.txt");
    std::fs::write(&path, log)?;
    println!("artefact: {}", path.display());
    Ok(())
}
