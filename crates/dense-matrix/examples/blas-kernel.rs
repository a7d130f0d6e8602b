//! Prints the OpenBLAS kernel dense-matrix runs on this machine and the CPU's level, one
//! line: what `cargo xtask bench` records in the header of its table. The first word is
//! the kernel's name; the rest says who chose it when that was not OpenBLAS itself.
//!
//! Run with `cargo run --release -p dense-matrix --example blas-kernel`.

fn main() {
    let kernel = dense_matrix::blas_kernel();
    let mut line = format!("{kernel} (CPU level: {}", kernel.cpu_level());
    if let Some(chosen) = kernel.chosen_by_env() {
        line.push_str(&format!(
            "; OPENBLAS_CORETYPE={chosen} set by the environment"
        ));
        if kernel.is_below_cpu() {
            line.push_str(&format!(
                ": an {} kernel on an {} CPU",
                kernel.kernel_level(),
                kernel.cpu_level()
            ));
        }
    }
    if let Some(from) = kernel.reselected_from() {
        line.push_str(&format!("; replaced OpenBLAS's own choice, {from}"));
    }
    line.push(')');
    println!("{line}");
}
