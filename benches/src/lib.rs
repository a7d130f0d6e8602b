//! Shared pieces of every crate's benchmarks: the seeded input generator that the Rust side
//! and the Python peers (`benches/peers/common.py`) implement identically, and the switch
//! between full-size and quick (smoke-test) runs.
//!
//! ```
//! let mut rng = benches::SplitMix64::new(42);
//! let a = rng.next_u64();
//! let b = benches::SplitMix64::new(42).next_u64();
//! assert_eq!(a, b);
//! ```

mod clock;
pub mod ctc;
pub mod graphs;
pub mod records;

pub use clock::{process_cpu_seconds, thread_cpu_seconds};

/// The environment variable `cargo xtask bench --quick` sets; benches shrink their inputs.
pub const QUICK_ENV: &str = "ARRAYS_BENCH_QUICK";

/// Frees one 16 MiB buffer, which raises glibc's dynamic thresholds (`mmap` to 16 MiB,
/// trim to 32 MiB) to where a long-running data process has them after its first large
/// free. Without it a small bench process keeps the start-up thresholds (128 KiB, then
/// the largest buffer freed so far), and whether a workload hands its memory back to the
/// system on every call, and faults it in again on the next (a few milliseconds for a few
/// MiB in a virtual machine), depends on which workloads ran before it.
pub fn settle_allocator() {
    let buffer: Vec<u8> = Vec::with_capacity(16 << 20);
    drop(std::hint::black_box(buffer));
}

/// True when the benchmarks run as a quick smoke test (`cargo xtask bench --quick`).
pub fn quick() -> bool {
    std::env::var_os(QUICK_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// `full` in a real run, `full / divisor` (at least 1) in a quick run.
pub fn size(full: usize, divisor: usize) -> usize {
    if quick() {
        (full / divisor.max(1)).max(1)
    } else {
        full
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny generator whose every output is the
/// same in Rust and in the Python peers, so both sides time the same input.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (`n > 0`), as `next_u64() % n`.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "SplitMix64::below needs n > 0");
        self.next_u64() % n
    }

    /// A uniform float in `[0, 1)` from the top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The image benches' input (dataflow's criterion benches, its A/B example and
/// `benches/peers/dataflow.py`): `w x h` RGB pixels, row-major, a checkerboard of 64-pixel
/// squares with a diagonal ramp and 4 bits of noise per channel from `SplitMix64::new(6)`.
pub fn image_rgb(w: usize, h: usize) -> Vec<[u8; 3]> {
    let mut rng = SplitMix64::new(6);
    let mut px = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let r = rng.next_u64();
            let base = 40 + 120 * ((x / 64 + y / 64) % 2) + ((x + 2 * y) % 256) / 4;
            px.push([0, 1, 2].map(|c| (base + ((r >> (8 * c)) & 15) as usize) as u8));
        }
    }
    px
}

/// The keys `utt0000`, `utt0001`, ... of kaldi-io's benches in their random-access order
/// (and its peer script's): Fisher-Yates driven by `SplitMix64::new(7).below`.
pub fn shuffled_keys(n: usize) -> Vec<String> {
    let mut keys: Vec<String> = (0..n).map(|i| format!("utt{i:04}")).collect();
    let mut rng = SplitMix64::new(7);
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        keys.swap(i, j);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // First outputs for seed 1234567, from the reference C implementation.
        let mut rng = SplitMix64::new(1234567);
        assert_eq!(rng.next_u64(), 6457827717110365317);
        assert_eq!(rng.next_u64(), 3203168211198807973);
        assert_eq!(rng.next_u64(), 9817491932198370423);
    }

    #[test]
    fn floats_lie_in_the_unit_interval() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..1000 {
            let x = rng.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
    }

    #[test]
    fn shuffled_keys_are_a_permutation_in_fisher_yates_order() {
        let keys = shuffled_keys(1000);
        let mut sorted = keys.clone();
        sorted.sort();
        let want: Vec<String> = (0..1000).map(|i| format!("utt{i:04}")).collect();
        assert_eq!(sorted, want);
        // the first swap, by hand: position 999 takes key below(1000) of seed 7
        let j = SplitMix64::new(7).next_u64() % 1000;
        assert_eq!(keys[999], format!("utt{j:04}"));
        assert_eq!(shuffled_keys(3).len(), 3);
        assert!(shuffled_keys(0).is_empty());
    }

    #[test]
    fn image_pixels_follow_the_documented_pattern() {
        let (w, h) = (130, 70);
        let px = image_rgb(w, h);
        assert_eq!(px.len(), w * h);
        let mut rng = SplitMix64::new(6);
        for (i, p) in px.iter().enumerate() {
            let (x, y) = (i % w, i / w);
            let r = rng.next_u64();
            let base = 40 + 120 * ((x / 64 + y / 64) % 2) + ((x + 2 * y) % 256) / 4;
            for (c, &value) in p.iter().enumerate() {
                let noise = ((r >> (8 * c)) & 15) as usize;
                assert_eq!(value as usize, base + noise, "pixel ({x}, {y}) channel {c}");
            }
        }
    }
}
