//! `set_blas_num_threads` / `blas_num_threads`: set, read back, restore. Alone in its test
//! binary, because OpenBLAS's thread count is process-global and must not change under a
//! BLAS call running on another test thread.

use dense_matrix::{blas_num_threads, set_blas_num_threads, Matrix, Trans};

/// 0 is raised to 1 (OpenBLAS's own minimum); products stay right at each count.
#[test]
fn set_blas_num_threads_is_read_back() {
    let before = blas_num_threads();
    let a = Matrix::from_rows(&[[1.0f64, 2.0], [3.0, 4.0]]);
    let want = Matrix::from_rows(&[[7.0, 10.0], [15.0, 22.0]]);
    for (set, read) in [(1, 1), (2, 2), (0, 1), (before, before)] {
        set_blas_num_threads(set);
        assert_eq!(
            blas_num_threads(),
            read,
            "after set_blas_num_threads({set})"
        );
        let mut c = Matrix::<f64>::new(2, 2);
        c.add_mat_mat(1.0, &a, Trans::NoTrans, &a, Trans::NoTrans, 0.0);
        assert!(c == want, "{c:?} with {read} threads");
    }
}
