//! The BLAS kernel guard: the kernel on this machine matches its instruction set; a
//! kernel below the CPU chosen at load time (an SSE `Prescott` kernel on an AVX2 CPU,
//! `Haswell` on an AVX-512 one) is replaced before the first BLAS call unless the user
//! chose it; and BLAS results equal reference loops whichever kernel runs.
//!
//! Kernel switches are process-global, so this file holds one test that switches, run
//! alone in its binary, and tests that re-run this binary as a child process with an
//! `OPENBLAS_CORETYPE` in its environment at load time.

use dense_matrix::{blas_kernel, select_blas_kernel, vec_vec, IsaLevel, Matrix, Trans, Vector};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn random(rng: &mut StdRng, rows: usize, cols: usize) -> Matrix<f64> {
    let mut m = Matrix::new(rows, cols);
    for r in 0..rows {
        for c in 0..cols {
            m[(r, c)] = rng.random::<f64>() * 2.0 - 1.0;
        }
    }
    m
}

/// gemm, gemv and dot on odd sizes (so every kernel's edge loops run) against naive loops.
fn blas_matches_reference_loops(label: &str) {
    let mut rng = StdRng::seed_from_u64(7);
    let (m, k, n) = (37, 29, 41);
    let a = random(&mut rng, m, k);
    let b = random(&mut rng, k, n);
    let mut c = Matrix::<f64>::new(m, n);
    c.add_mat_mat(1.0, &a, Trans::NoTrans, &b, Trans::NoTrans, 0.0);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k).map(|l| a[(i, l)] * b[(l, j)]).sum();
            assert!(
                (c[(i, j)] - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "{label}: gemm ({i}, {j}) {} vs {want}",
                c[(i, j)]
            );
        }
    }
    let x = Vector::from_vec((0..k).map(|_| rng.random::<f64>() - 0.5).collect());
    let mut y = Vector::new(m);
    y.add_mat_vec(1.0, &a, Trans::NoTrans, &x, 0.0);
    for i in 0..m {
        let want: f64 = (0..k).map(|l| a[(i, l)] * x[l]).sum();
        assert!(
            (y[i] - want).abs() <= 1e-12 * (1.0 + want.abs()),
            "{label}: gemv"
        );
    }
    let dot = vec_vec(&x, &x);
    let want: f64 = x.data().iter().map(|v| v * v).sum();
    assert!((dot - want).abs() <= 1e-12 * want, "{label}: dot");
}

/// Switches to `Prescott`, to the CPU's matching kernel and back to the original one,
/// checking the reported name and the results each time.
#[test]
fn results_equal_reference_loops_under_every_kernel() {
    let original = blas_kernel();
    assert!(
        !original.is_degraded(),
        "{original} on a {} CPU",
        original.cpu_level()
    );
    blas_matches_reference_loops(original.name());
    let matching = match original.cpu_level() {
        IsaLevel::Avx512 => "SkylakeX",
        IsaLevel::Avx2 => "Haswell",
        _ => return, // nothing to compare with on an older CPU
    };
    for coretype in ["Prescott", matching, original.name()] {
        // SAFETY: this is the only test of this binary that calls BLAS while it runs; no
        // other thread touches the environment.
        let now = unsafe { select_blas_kernel(coretype) }.unwrap();
        assert_eq!(
            now.name().to_ascii_lowercase(),
            coretype.to_ascii_lowercase()
        );
        assert_eq!(now.is_degraded(), coretype == "Prescott", "{now}");
        if coretype == "Prescott" || coretype == matching {
            assert_eq!(now.is_below_cpu(), coretype == "Prescott", "{now}");
        }
        blas_matches_reference_loops(coretype);
    }
}

/// The child half of the guard tests: does nothing unless a parent started it.
#[test]
fn guard_child_process() {
    let Some(mode) = std::env::var_os("DENSE_MATRIX_KERNEL_CHILD") else {
        return;
    };
    // OpenBLAS read OPENBLAS_CORETYPE when it loaded; with `unset` the user "unsets" it,
    // so the guard is free to replace the kernel at the first BLAS call; with `keep` it
    // stays, the user's choice.
    if mode == "unset" {
        std::env::remove_var("OPENBLAS_CORETYPE");
    }
    let kernel = blas_kernel();
    println!(
        "KERNEL={} LEVEL={} FROM={} CHOSEN={}",
        kernel.name(),
        kernel.kernel_level(),
        kernel.reselected_from().unwrap_or("-"),
        kernel.chosen_by_env().unwrap_or("-")
    );
    blas_matches_reference_loops(kernel.name());
}

/// Runs [`guard_child_process`] with `OPENBLAS_CORETYPE=coretype` at load time, and
/// returns its kernel line and its stderr.
fn child_with(coretype: &str, mode: &str) -> (String, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "guard_child_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DENSE_MATRIX_KERNEL_CHILD", mode)
        .env("OPENBLAS_CORETYPE", coretype)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    // The harness prints "test guard_child_process ... " before the child's line.
    let line = stdout
        .lines()
        .find_map(|l| l.find("KERNEL=").map(|at| l[at..].to_string()))
        .unwrap_or_else(|| panic!("no kernel line in:\n{stdout}"));
    (line, stderr)
}

#[test]
fn guard_replaces_a_prescott_kernel_chosen_at_load() {
    if std::env::var_os("DENSE_MATRIX_KERNEL_CHILD").is_some() {
        return;
    }
    let (line, stderr) = child_with("Prescott", "unset");
    let want = match IsaLevel::of_cpu() {
        IsaLevel::Avx512 => "KERNEL=SkylakeX LEVEL=AVX-512 FROM=Prescott CHOSEN=-",
        IsaLevel::Avx2 => "KERNEL=Haswell LEVEL=AVX2 FROM=Prescott CHOSEN=-",
        // Nothing better exists for the CPU: the fallback stays, without a warning.
        _ => "KERNEL=Prescott LEVEL=SSE FROM=- CHOSEN=-",
    };
    assert_eq!(line, want);
    assert!(
        !stderr.contains("OPENBLAS_CORETYPE="),
        "the guard warned although it fixed the kernel:\n{stderr}"
    );
}

#[test]
fn guard_replaces_an_avx2_kernel_on_an_avx512_cpu_unless_the_user_chose_it() {
    if std::env::var_os("DENSE_MATRIX_KERNEL_CHILD").is_some() {
        return;
    }
    let cpu = IsaLevel::of_cpu();
    if cpu < IsaLevel::Avx2 {
        return; // OpenBLAS refuses a Haswell kernel on such a CPU
    }
    let (line, stderr) = child_with("Haswell", "unset");
    let want = match cpu {
        IsaLevel::Avx512 => "KERNEL=SkylakeX LEVEL=AVX-512 FROM=Haswell CHOSEN=-",
        _ => "KERNEL=Haswell LEVEL=AVX2 FROM=- CHOSEN=-",
    };
    assert_eq!(line, want);
    assert!(!stderr.contains("OPENBLAS_CORETYPE="), "{stderr}");
    // chosen by the user: kept, and reported, without a warning
    let (line, stderr) = child_with("Haswell", "keep");
    assert_eq!(line, "KERNEL=Haswell LEVEL=AVX2 FROM=- CHOSEN=Haswell");
    assert!(!stderr.contains("OPENBLAS_CORETYPE="), "{stderr}");
}
