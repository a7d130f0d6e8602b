//! Links the system OpenBLAS (Debian's `libopenblas-dev`), which provides both the CBLAS
//! and the LAPACK symbols that `cblas-sys` and `lapack-sys` declare.
//!
//! With the `openblas-src` feature the `openblas-src` crate (in its `system` mode) emits
//! the link line instead, so this script stays silent and OpenBLAS is linked once.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=OPENBLAS_LIB_DIR");
    if std::env::var_os("CARGO_FEATURE_OPENBLAS_SRC").is_some() {
        return;
    }
    if let Ok(dir) = std::env::var("OPENBLAS_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=openblas");
}
