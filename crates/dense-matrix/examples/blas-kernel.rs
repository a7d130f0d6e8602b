//! Prints the OpenBLAS kernel dense-matrix runs on this machine and the CPU's level, one
//! line: what `cargo xtask bench` records in the header of its table.
//!
//! Run with `cargo run --release -p dense-matrix --example blas-kernel`.

fn main() {
    let kernel = dense_matrix::blas_kernel();
    println!("{kernel} (CPU level: {})", kernel.cpu_level());
}
