//! Links the system OpenBLAS (Debian's `libopenblas-dev`), which provides both the CBLAS
//! and the LAPACK symbols that `cblas-sys` and `lapack-sys` declare.
//!
//! `openblas-src` would do the same in its `system` mode, but its 0.10 build helper
//! insists on a TLS backend even though system mode never downloads anything; one line
//! here does the job without that dependency tree.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=OPENBLAS_LIB_DIR");
    if let Ok(dir) = std::env::var("OPENBLAS_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=openblas");
}
