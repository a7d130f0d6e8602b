//! Benchmarks of structured-tensor (filled in below).
fn main() {}
