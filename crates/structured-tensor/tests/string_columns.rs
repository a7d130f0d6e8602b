//! `StringColumn` / `BytesColumn` against a naive model: `Vec<String>` / `Vec<Vec<u8>>`
//! gathers, concatenations and slices, on seeded random columns (fixed proptest seed).

use proptest::prelude::*;
use structured_tensor::{BytesColumn, StringColumn};

const SEED: u64 = 0x5EED_2026_0111;

fn config() -> ProptestConfig {
    eprintln!("proptest seed {SEED}");
    ProptestConfig {
        cases: 128,
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        rng_seed: proptest::test_runner::RngSeed::Fixed(SEED),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn strings() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-zé😀]{0,6}", 0..20)
}

fn column(v: &[String]) -> StringColumn {
    v.iter().collect()
}

fn model(c: &StringColumn) -> Vec<String> {
    c.iter().map(str::to_string).collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn string_ops_match_vec_of_strings(
        a in strings(),
        b in strings(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..30),
        cut in any::<(prop::sample::Index, prop::sample::Index)>(),
    ) {
        let (ca, cb) = (column(&a), column(&b));
        prop_assert_eq!(model(&ca), a.clone());
        for (i, s) in a.iter().enumerate() {
            prop_assert_eq!(ca.get(i), s.as_str());
        }
        // gather
        if !a.is_empty() {
            let idx: Vec<usize> = picks.iter().map(|p| p.index(a.len())).collect();
            let want: Vec<String> = idx.iter().map(|&i| a[i].clone()).collect();
            prop_assert_eq!(model(&ca.gather(&idx)), want);
            // the same picks as ranges of length 1 or 2
            let ranges: Vec<(usize, usize)> =
                idx.iter().map(|&i| (i, (i + 2).min(a.len()))).collect();
            let want: Vec<String> =
                ranges.iter().flat_map(|&(s, e)| a[s..e].iter().cloned()).collect();
            prop_assert_eq!(model(&ca.gather_ranges(&ranges)), want);
        }
        // concat
        let mut joined = a.clone();
        joined.extend(b.iter().cloned());
        let both = StringColumn::concat(&[&ca, &cb]);
        prop_assert_eq!(model(&both), joined.clone());
        prop_assert_eq!(both, column(&joined));
        // slice
        let (x, y) = (cut.0.index(a.len() + 1), cut.1.index(a.len() + 1));
        let (s, e) = (x.min(y), x.max(y));
        prop_assert_eq!(model(&ca.slice(s, e)), a[s..e].to_vec());
        // the bytes view: same elements as byte strings
        let bytes: Vec<Vec<u8>> = a.iter().map(|s| s.as_bytes().to_vec()).collect();
        prop_assert_eq!(ca.as_bytes(), &BytesColumn::from(bytes));
    }

    #[test]
    fn bytes_ops_match_vec_of_byte_strings(
        a in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..5), 0..15),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
    ) {
        let ca = BytesColumn::from(a.clone());
        let got: Vec<Vec<u8>> = ca.iter().map(<[u8]>::to_vec).collect();
        prop_assert_eq!(&got, &a);
        if !a.is_empty() {
            let idx: Vec<usize> = picks.iter().map(|p| p.index(a.len())).collect();
            let want: Vec<Vec<u8>> = idx.iter().map(|&i| a[i].clone()).collect();
            let got: Vec<Vec<u8>> = ca.gather(&idx).iter().map(<[u8]>::to_vec).collect();
            prop_assert_eq!(got, want);
        }
        let doubled = BytesColumn::concat(&[&ca, &ca]);
        prop_assert_eq!(doubled.len(), 2 * a.len());
        prop_assert_eq!(doubled.slice(a.len(), 2 * a.len()), ca);
    }
}
