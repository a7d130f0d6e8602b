//! One cap, asked through this crate or re-exported by any dependant, holds the kernels of
//! ragged-core, dense-matrix and dataflow alike, and every level each processor has gives
//! the bits of the portable code.

use cpu_features::{
    at_every_level, detected_simd, with_parallel_threshold, with_simd_cap, SimdLevel,
};
use dataflow::image::{canny, Canny};
use dataflow::{Array, Dim2};
use dense_matrix::Vector;
use ragged_core::{Ragged, RaggedShape, RowPartition};

/// `n` seeded pseudo-random numbers in [0, 1) (SplitMix64).
fn uniform(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

#[test]
fn every_crate_reports_the_one_cap() {
    // the dependants' level type is this crate's
    let _: SimdLevel = ragged_core::SimdLevel::Avx2;
    let _: SimdLevel = dense_matrix::SimdLevel::Avx2;
    let _: SimdLevel = dataflow::image::SimdLevel::Avx2;
    for level in SimdLevel::ALL {
        with_simd_cap(level, || {
            let want = level.min(detected_simd());
            assert_eq!(ragged_core::simd_level(), want, "ragged-core at {level:?}");
            assert_eq!(
                dense_matrix::simd_level(),
                want,
                "dense-matrix at {level:?}"
            );
            assert_eq!(dataflow::image::simd_level(), want, "dataflow at {level:?}");
        });
    }
}

#[test]
fn a_cap_set_through_one_crate_holds_the_others() {
    with_simd_cap(SimdLevel::Avx512, || {
        ragged_core::set_simd_cap(SimdLevel::Scalar);
        assert_eq!(dense_matrix::simd_level(), SimdLevel::Scalar);
        assert_eq!(dataflow::image::simd_level(), SimdLevel::Scalar);
        let previous = dataflow::image::set_simd_cap(SimdLevel::Avx2);
        assert_eq!(previous, SimdLevel::Scalar);
        let want = detected_simd().min(SimdLevel::Avx2);
        assert_eq!(ragged_core::simd_level(), want);
        assert_eq!(dense_matrix::simd_level(), want);
        assert_eq!(cpu_features::simd_level(), want);
    });
}

#[test]
fn one_threshold_override_holds_every_crate() {
    with_parallel_threshold(0, || {
        assert_eq!(ragged_core::parallel_threshold(), 0);
        assert_eq!(dense_matrix::parallel_threshold(), 0);
        assert_eq!(dataflow::load_parallel_threshold(), 0);
    });
    assert_eq!(ragged_core::parallel_threshold(), 1 << 16);
    assert_eq!(dense_matrix::parallel_threshold(), 1 << 16);
    assert_eq!(dataflow::load_parallel_threshold(), 1 << 14);
}

#[test]
fn each_crates_kernels_give_the_same_bits_at_every_level() {
    // ragged-core: per-sublist sums (the summing kernels) against a naive loop
    let lengths: Vec<i32> = uniform(3_000, 1)
        .iter()
        .map(|u| (u * 40.0) as i32)
        .collect();
    let partition = RowPartition::from_row_lengths(&lengths).unwrap();
    let values: Vec<f64> = uniform(partition.nvals(), 2);
    let splits = partition.row_splits().to_vec();
    let shape = RaggedShape::from_layers(vec![partition]).unwrap();
    let ragged = Ragged::new(shape, values.clone());
    let naive: Vec<f64> = splits
        .windows(2)
        .map(|w| values[w[0] as usize..w[1] as usize].iter().sum())
        .collect();
    // dense-matrix: e^x in place (the exp kernels), against std's
    let xs: Vec<f64> = uniform(5_000, 3)
        .iter()
        .map(|u| u * 200.0 - 100.0)
        .collect();
    // dataflow: Canny edges (the image kernels) of a noisy picture
    let (rows, cols) = (61, 97);
    let pixels: Vec<u8> = uniform(rows * cols, 4)
        .iter()
        .enumerate()
        .map(|(k, u)| ((k % cols) as f64 * 2.0 + u * 60.0) as u8)
        .collect();
    let image = Array::from_vec(Dim2(rows, cols), pixels).unwrap();

    let runs = at_every_level(|_| {
        let sums = ragged.sum_per_sublist(0.0);
        let mut v = Vector::from_slice(&xs);
        v.apply_exp();
        let edges = canny(&image, &Canny::default()).unwrap();
        let bits = |x: &[f64]| x.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        (bits(&sums), bits(v.data()), edges.as_slice().to_vec())
    });
    let levels = SimdLevel::ALL
        .iter()
        .filter(|&&l| l <= detected_simd())
        .count();
    assert_eq!(runs.len(), levels);
    for run in &runs[1..] {
        assert_eq!(run, &runs[0]);
    }
    let (sums, exps, edges) = &runs[0];
    for (k, (&got, want)) in sums.iter().zip(&naive).enumerate() {
        let got = f64::from_bits(got);
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "row {k}: {got} vs {want}"
        );
    }
    for (&got, x) in exps.iter().zip(&xs) {
        let (got, want) = (f64::from_bits(got), x.exp());
        assert!(
            (got - want).abs() <= 4e-15 * want,
            "exp({x}) = {got} vs {want}"
        );
    }
    assert!(edges.iter().all(|&e| e == 0 || e == 255));
    assert!(edges.contains(&255), "the picture has edges");
}
