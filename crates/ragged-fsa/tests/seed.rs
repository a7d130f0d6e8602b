//! The seed's example: the Shaanxi and Taiwan university FSAs stacked into one FsaVec.

use ragged_fsa::{create_fsa_vec, Arc, Fsa, FsaVec};

/// Xi'an (4 universities), Yan'an (1), Hanzhong (1), the auxiliary state with its -1 arc,
/// and the final state with none.
const SHAANXI: &str = "\
0 1 1 0
0 1 2 0
0 1 3 0
0 1 4 0
1 2 5 0
2 3 6 0
3 4 -1 0
4
";

/// Tainan (1), Taichung (1), the auxiliary state and the final state.
const TAIWAN: &str = "\
0 1 7 0
1 2 8 0
2 3 -1 0
3
";

fn china() -> FsaVec {
    let shaanxi: Fsa = SHAANXI.parse().unwrap();
    let taiwan: Fsa = TAIWAN.parse().unwrap();
    create_fsa_vec(&[shaanxi, taiwan])
}

#[test]
fn shaanxi_fsa_has_the_seeds_row_splits() {
    let shaanxi: Fsa = SHAANXI.parse().unwrap();
    assert_eq!(shaanxi.arcs().shape().row_splits(1), &[0, 4, 5, 6, 7, 7]);
    assert_eq!(shaanxi.num_states(), 5);
    assert_eq!(shaanxi.state_arcs(4), &[] as &[Arc]);
}

#[test]
fn create_fsa_vec_gives_the_seeds_shape() {
    let china = china();
    let shape = china.arcs().shape();
    assert_eq!(china.num_fsas(), 2);
    assert_eq!(shape.num_axes(), 3);
    assert_eq!(shape.row_splits(1), &[0, 5, 9]);
    assert_eq!(shape.row_ids(1), &[0, 0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(shape.row_splits(2), &[0, 4, 5, 6, 7, 7, 8, 9, 10, 10]);
    assert_eq!(shape.row_ids(2), &[0, 0, 0, 0, 1, 2, 3, 5, 6, 7]);
    assert_eq!(
        shape.to_string(),
        "[ [ [ x x x x ] [ x ] [ x ] [ x ] [ ] ] [ [ x ] [ x ] [ x ] [ ] ] ]"
    );
}

#[test]
fn seed_coordinate_arithmetic_finds_the_universities() {
    let china = china();
    let shape = china.arcs().shape();
    // province 1, city 0 -> city offset 5 -> first university at offset 7
    let city_offset = shape.row_splits(1)[1] as usize;
    assert_eq!(city_offset, 5);
    let univ_offset = shape.row_splits(2)[city_offset] as usize;
    assert_eq!(univ_offset, 7);
    assert_eq!(china.arcs().values()[univ_offset].label, 7);
    // and back: offset 8 is in city 6, province 1, position 0 in its city
    assert_eq!(shape.row_ids(2)[8], 6);
    assert_eq!(shape.row_ids(1)[6], 1);
    assert_eq!(8 - shape.row_splits(2)[6], 0);
}

#[test]
fn states_are_numbered_within_each_fsa() {
    let china = china();
    let taiwan_arcs = &china.arcs().values()[7..];
    assert_eq!(
        taiwan_arcs,
        &[
            Arc::new(0, 1, 7, 0.0),
            Arc::new(1, 2, 8, 0.0),
            Arc::new(2, 3, -1, 0.0)
        ]
    );
}

#[test]
fn get_returns_the_original_fsas() {
    let china = china();
    assert_eq!(china.get(0), SHAANXI.parse::<Fsa>().unwrap());
    assert_eq!(china.get(1), TAIWAN.parse::<Fsa>().unwrap());
    assert_eq!(china.get(1).to_string(), TAIWAN);
    assert!(china.try_get(2).is_none());
}

#[test]
#[should_panic(expected = "fsa 2 out of bounds")]
fn get_out_of_range_panics_with_the_index() {
    let _ = china().get(2);
}
