//! Every instruction-set level the processor has (`set_simd_cap`) against the scalar path
//! and against naive models: per-sublist sums, extrema, and/or, log-sums, gathers by index
//! and row ids, sequential and parallel, with row lengths on both sides of the kernels'
//! windows and rows that end at the very end of the values.

use ragged_core::{log_add, with_parallel_threshold, Error, Ragged, RowPartition, SimdLevel};

/// `f(level)` at every level this processor has, lowest first, at both parallel thresholds
/// (cpu-features' helper holds the process-wide cap meanwhile).
fn at_every_level<R>(mut f: impl FnMut(SimdLevel) -> R) -> Vec<R> {
    cpu_features::at_every_level(|level| {
        [usize::MAX, 0].map(|threshold| with_parallel_threshold(threshold, || f(level)))
    })
    .into_iter()
    .flatten()
    .collect()
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Rows of lengths 0..=60 (every length around the 8-lane blocks and the 24-element
/// window), then rows of 1, 2, ..., 30 at the very end, so some windows would run past the
/// end of the values.
fn rows_of<T>(seed: u64, mut value: impl FnMut(&mut Rng) -> T) -> Vec<Vec<T>> {
    let mut rng = Rng(seed);
    let mut lengths: Vec<u64> = (0..600).map(|r| r % 61).collect();
    lengths.extend((0..400).map(|_| rng.below(40)));
    lengths.extend(1..=30);
    lengths
        .into_iter()
        .map(|len| (0..len).map(|_| value(&mut rng)).collect())
        .collect()
}

fn all_equal<T: PartialEq + std::fmt::Debug>(results: &[T]) {
    for (k, r) in results.iter().enumerate() {
        assert_eq!(r, &results[0], "result {k} differs from the scalar one");
    }
}

#[test]
fn float_sums_are_bit_identical_at_every_level_and_near_an_f64_sum() {
    // Magnitudes 1e-3 .. 1e4, both signs: the rounding depends on the order of additions.
    let rows = rows_of(1, |rng| {
        let m = rng.below(1000) as f32 * 1.37e-3 + (rng.below(3) as f32) * 1e4;
        if rng.below(2) == 0 {
            m
        } else {
            -m
        }
    });
    let r = Ragged::from_nested(rows.clone()).unwrap();
    let bits = at_every_level(|_| {
        r.sum_per_sublist(0.25f32)
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    });
    all_equal(&bits);
    // Against an f64 sum: the blocked order of n additions is within n ulp-sized steps
    // of the magnitudes added, so |error| <= n * eps * sum |x|.
    for (row, got) in rows.iter().zip(&bits[0]) {
        let got = f32::from_bits(*got) as f64;
        let exact: f64 = 0.25 + row.iter().map(|&x| x as f64).sum::<f64>();
        let scale: f64 = 0.25 + row.iter().map(|&x| (x as f64).abs()).sum::<f64>();
        let bound = (row.len() + 1) as f64 * f32::EPSILON as f64 * scale;
        assert!((got - exact).abs() <= bound, "{got} vs {exact}");
    }
    let rows64 = rows_of(2, |rng| rng.below(1 << 20) as f64 * 1.1e-7 - 0.05);
    let r64 = Ragged::from_nested(rows64).unwrap();
    all_equal(&at_every_level(|_| {
        r64.sum_per_sublist(-0.0f64)
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    }));
}

#[test]
fn integer_sums_equal_a_naive_sum_at_every_level() {
    let rows = rows_of(3, |rng| rng.below(2_000_001) as i64 - 1_000_000);
    let want: Vec<i64> = rows.iter().map(|x| x.iter().sum::<i64>() + 7).collect();
    let r = Ragged::from_nested(rows.clone()).unwrap();
    for got in at_every_level(|_| r.sum_per_sublist(7)) {
        assert_eq!(got, want);
    }
    let rows32: Vec<Vec<i32>> = rows
        .iter()
        .map(|x| x.iter().map(|&v| v as i32).collect())
        .collect();
    let want32: Vec<i32> = rows32.iter().map(|x| x.iter().sum::<i32>()).collect();
    let r32 = Ragged::from_nested(rows32).unwrap();
    for got in at_every_level(|_| r32.sum_per_sublist(0)) {
        assert_eq!(got, want32);
    }
}

#[test]
fn extrema_equal_a_front_to_back_fold_at_every_level() {
    // NaNs are passed over as by the fold; no signed zeros (which of two equal extrema is
    // returned is not the fold's).
    let rows = rows_of(4, |rng| match rng.below(9) {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        _ => rng.below(1000) as f32 - 500.5,
    });
    let r = Ragged::from_nested(rows.clone()).unwrap();
    let max = |x: &Vec<f32>| x.iter().fold(-1e3f32, |a, &b| if b > a { b } else { a });
    let min = |x: &Vec<f32>| x.iter().fold(1e3f32, |a, &b| if b < a { b } else { a });
    let want_max: Vec<f32> = rows.iter().map(max).collect();
    let want_min: Vec<f32> = rows.iter().map(min).collect();
    for (got_max, got_min) in at_every_level(|_| (r.max_per_sublist(-1e3), r.min_per_sublist(1e3)))
    {
        assert_eq!(got_max, want_max);
        assert_eq!(got_min, want_min);
    }
    let ints = rows_of(5, |rng| rng.next() as i32);
    let ri = Ragged::from_nested(ints.clone()).unwrap();
    let want: Vec<(i32, i32)> = ints
        .iter()
        .map(|x| {
            (
                x.iter().copied().fold(i32::MIN, i32::max),
                x.iter().copied().fold(i32::MAX, i32::min),
            )
        })
        .collect();
    for (mx, mn) in at_every_level(|_| (ri.max_per_sublist(i32::MIN), ri.min_per_sublist(i32::MAX)))
    {
        let got: Vec<(i32, i32)> = mx.into_iter().zip(mn).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn and_or_and_log_sums_equal_a_naive_fold_at_every_level() {
    let rows = rows_of(6, |rng| rng.next() | rng.next());
    let r = Ragged::from_nested(rows.clone()).unwrap();
    let want_and: Vec<u64> = rows
        .iter()
        .map(|x| x.iter().fold(!0u64 >> 3, |a, &b| a & b))
        .collect();
    let want_or: Vec<u64> = rows
        .iter()
        .map(|x| x.iter().fold(5, |a, &b| a | b))
        .collect();
    for (and, or) in at_every_level(|_| (r.and_per_sublist(!0u64 >> 3), r.or_per_sublist(5))) {
        assert_eq!(and, want_and);
        assert_eq!(or, want_or);
    }
    // The log-sum is a front-to-back fold of `log_add` at every level: bit for bit.
    let logs = rows_of(7, |rng| rng.below(4000) as f64 * -0.01);
    let rl = Ragged::from_nested(logs.clone()).unwrap();
    let want: Vec<u64> = logs
        .iter()
        .map(|x| x.iter().fold(-1.5, |a, &b| log_add(a, b)).to_bits())
        .collect();
    for got in at_every_level(|_| rl.log_sum_per_sublist(-1.5)) {
        let got: Vec<u64> = got.iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn gathers_by_index_equal_a_naive_gather_at_every_level() {
    let rows = rows_of(8, |rng| rng.next() as f32);
    let nested: Vec<Vec<Vec<f32>>> = rows.chunks(7).map(|c| c.to_vec()).collect();
    let r = Ragged::from_nested3(nested.clone()).unwrap();
    let mut rng = Rng(9);
    let picks: Vec<i32> = (0..5000)
        .map(|_| rng.below(nested.len() as u64) as i32)
        .collect();
    let want: Vec<u32> = picks
        .iter()
        .flat_map(|&p| nested[p as usize].iter().flatten().map(|x| x.to_bits()))
        .collect();
    for (got, map) in at_every_level(|_| r.index_axis_with_map(0, &picks).unwrap()) {
        let bits: Vec<u32> = got.values().iter().map(|x| x.to_bits()).collect();
        assert_eq!(bits, want);
        let via_map: Vec<u32> = map
            .iter()
            .map(|&k| r.values()[k as usize].to_bits())
            .collect();
        assert_eq!(via_map, want);
    }
    // `from_index`: a flat source by a ragged index, and hostile indexes rejected the same
    // way at every level (before any gather).
    let src: Vec<i64> = (0..3000).map(|k| k * k - 7).collect();
    let idx = Ragged::from_nested(rows_of(10, |rng| rng.below(3000) as i32)).unwrap();
    let want: Vec<i64> = idx.values().iter().map(|&i| src[i as usize]).collect();
    for got in at_every_level(|_| Ragged::from_index(&src, &idx).unwrap()) {
        assert_eq!(got.values(), &want[..]);
    }
    for (bad, position) in [
        (-1i32, 3usize),
        (-2, 0),
        (3000, 11),
        (i32::MAX, 5),
        (i32::MIN, 1),
    ] {
        let mut values = idx.values().to_vec();
        values[position] = bad;
        let hostile = Ragged::new(idx.shape().clone(), values);
        for err in at_every_level(|_| Ragged::from_index(&src, &hostile).unwrap_err()) {
            assert_eq!(
                err,
                Error::IndexOutOfRange {
                    what: "from_index",
                    position,
                    index: bad as i64,
                    size: 3000,
                }
            );
        }
    }
    // An index of -1 gives the default value with `from_index_or`; -2 is an error.
    let one = Ragged::from_nested(vec![vec![2, -1, 0], vec![-2]]).unwrap();
    for err in at_every_level(|_| Ragged::from_index_or(&src, &one, 9).unwrap_err()) {
        assert_eq!(
            err,
            Error::IndexOutOfRange {
                what: "from_index_or",
                position: 3,
                index: -2,
                size: 3000,
            }
        );
    }
}

#[test]
fn row_ids_equal_a_naive_expansion_at_every_level() {
    let mut rng = Rng(11);
    let mut lengths: Vec<i32> = (0..70_000).map(|_| rng.below(41) as i32).collect();
    lengths[5] = 20_000;
    let p = RowPartition::from_row_lengths(&lengths).unwrap();
    let want: Vec<i32> = lengths
        .iter()
        .enumerate()
        .flat_map(|(r, &l)| std::iter::repeat_n(r as i32, l as usize))
        .collect();
    for got in at_every_level(|_| {
        let mut ids = vec![-7; p.nvals()];
        p.write_row_ids(&mut ids);
        ids
    }) {
        assert_eq!(got, want);
    }
}
