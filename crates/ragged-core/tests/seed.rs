//! The seed's worked examples: words and phones (2 axes), provinces, cities and universities
//! (3 axes), with coordinates <-> offsets through row_splits and row_ids.
//!
//! Two slips in the seed are corrected: its words/phones `row_splits` reads `[0, 2, 4, 7, 7]`
//! although its own eight phones and `row_ids` give `[0, 2, 4, 7, 8]`; and its flattened
//! university list repeats 延安大学 (11 entries for a shape with 10 elements).

use ragged_core::{Ragged, RaggedShape};

#[test]
fn seed_words_and_phones_offset_through_row_splits() {
    let aux_labels = ["h", "e", "sh", "an", "t", "on", "g", "yi"];
    let shape: RaggedShape = "[ [ x x ] [ x x ] [ x x x ] [ x ] ]".parse().unwrap();
    assert_eq!(shape.row_splits(1), &[0, 2, 4, 7, 8]);
    // word 2, phone 2: row_splits[2] + 2 = 6 -> "g"
    let offset = shape.offset_of(&[2, 2]).unwrap();
    assert_eq!(offset, 6);
    assert_eq!(aux_labels[offset], "g");
}

#[test]
fn seed_words_and_phones_coords_through_row_ids() {
    let shape: RaggedShape = "[ [ x x ] [ x x ] [ x x x ] [ x ] ]".parse().unwrap();
    assert_eq!(shape.row_ids(1), &[0, 0, 1, 1, 2, 2, 2, 3]);
    // offset 6: word = row_ids[6] = 2, offset inside word = 6 - row_splits[2] = 2
    assert_eq!(shape.coords_of(6), vec![2, 2]);
}

#[test]
fn seed_fsa_state_arcs_with_trailing_empty_state() {
    // 西安 has 4 arcs, 延安 1, 汉中 1, the auxiliary state 1 (the -1 arc), the final state none.
    let shape: RaggedShape = "[ [ x x x x ] [ x ] [ x ] [ x ] [ ] ]".parse().unwrap();
    assert_eq!(shape.row_splits(1), &[0, 4, 5, 6, 7, 7]);
}

fn china() -> RaggedShape {
    "[ [ [ x x x x ] [ x ] [ x ] [ x ] [ ] ] [ [ x ] [ x ] [ x ] [ ] ] ]"
        .parse()
        .unwrap()
}

const CITIES: [&str; 9] = [
    "西安市",
    "延安市",
    "汉中市",
    "辅助state",
    "辅助终止state",
    "台南市",
    "台中市",
    "辅助state",
    "辅助终止state",
];
const UNIVS: [&str; 10] = [
    "西北工业大学",
    "西安交通大学",
    "西安电子科技大学",
    "长安大学",
    "延安大学",
    "陕西理工大学",
    "辅助arc",
    "成功大学",
    "逢甲大学",
    "辅助arc",
];

#[test]
fn seed_provinces_cities_universities_row_ids_and_splits() {
    let shape = china();
    assert_eq!(shape.num_axes(), 3);
    assert_eq!(shape.tot_size(1), CITIES.len());
    assert_eq!(shape.num_elements(), UNIVS.len());
    assert_eq!(shape.row_ids(1), &[0, 0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(shape.row_splits(1), &[0, 5, 9]);
    assert_eq!(shape.row_ids(2), &[0, 0, 0, 0, 1, 2, 3, 5, 6, 7]);
    assert_eq!(shape.row_splits(2), &[0, 4, 5, 6, 7, 7, 8, 9, 10, 10]);
}

#[test]
fn seed_coordinates_to_offset() {
    let shape = china();
    // province 1, city 0: row_splits(1)[1] + 0 = 5 -> 台南市
    let city_offset = shape.offset_of(&[1, 0]).unwrap();
    assert_eq!((city_offset, CITIES[city_offset]), (5, "台南市"));
    // university 0 of that city: row_splits(2)[5] + 0 = 7 -> 成功大学
    let univ_offset = shape.offset_of(&[1, 0, 0]).unwrap();
    assert_eq!((univ_offset, UNIVS[univ_offset]), (7, "成功大学"));
}

#[test]
fn seed_offset_to_coordinates() {
    let shape = china();
    // university offset 8 (逢甲大学): city = row_ids(2)[8] = 6 (台中市),
    // province = row_ids(1)[6] = 1, inside province 6 - 5 = 1, inside city 8 - 8 = 0.
    assert_eq!(UNIVS[8], "逢甲大学");
    assert_eq!(shape.coords_of(8), vec![1, 1, 0]);
    assert_eq!(CITIES[shape.row_ids(2)[8] as usize], "台中市");
    assert_eq!(shape.coords_of_on_axis(1, 6), vec![1, 1]);
}

#[test]
fn seed_universities_as_a_ragged_array_of_names() {
    let text = format!(
        "[ [ [ {} {} {} {} ] [ {} ] [ {} ] [ {} ] [ ] ] [ [ {} ] [ {} ] [ {} ] [ ] ] ]",
        UNIVS[0],
        UNIVS[1],
        UNIVS[2],
        UNIVS[3],
        UNIVS[4],
        UNIVS[5],
        UNIVS[6],
        UNIVS[7],
        UNIVS[8],
        UNIVS[9]
    );
    let univs: Ragged<String> = text.parse().unwrap();
    assert_eq!(univs.shape(), &china());
    assert_eq!(univs.to_string(), text);
    let taiwan = univs.index(0, 1);
    assert_eq!(taiwan.values(), &UNIVS[7..]);
    assert_eq!(taiwan.index(1).values(), &["逢甲大学".to_string()]);
}
