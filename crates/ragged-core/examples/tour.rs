//! A tour of ragged-core on the seed's example: China's provinces, their cities and their
//! universities as a 3-axis ragged array, with the auxiliary states and arcs k2 adds to
//! each FSA. Prints row_splits and row_ids per axis and converts coordinates <-> offsets
//! both ways, as the seed does by hand; writes the results to `$DEMO_OUT_DIR`.

use std::fmt::Write as _;
use std::path::PathBuf;

use ragged_core::{Ragged, RaggedShape};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut report = String::new();
    macro_rules! say {
        ($($arg:tt)*) => {{
            let line = format!($($arg)*);
            println!("{line}");
            writeln!(report, "{line}").unwrap();
        }};
    }

    // Words and phones: the seed's first example (2 axes).
    let phones: Ragged<String> = "[ [ h e ] [ sh an ] [ t on g ] [ yi ] ]".parse()?;
    say!("phones per word: {phones}");
    say!("  row_splits(1) = {:?}", phones.row_splits(1));
    say!("  row_ids(1)    = {:?}", phones.row_ids(1));
    let offset = phones
        .shape()
        .offset_of(&[2, 2])
        .expect("word 2 has a third phone");
    say!(
        "  [2][2] -> offset row_splits(1)[2] + 2 = {offset} -> {}",
        phones.values()[offset]
    );
    let coords = phones.shape().coords_of(6);
    say!(
        "  offset 6 -> word row_ids(1)[6] = {}, phone 6 - row_splits(1)[{}] = {}",
        coords[0],
        coords[0],
        coords[1]
    );

    // Provinces, cities, universities (3 axes), as k2 prints the FsaVec's arcs.
    let cities = [
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
    let univs: Ragged<String> = "[ [ [ 西北工业大学 西安交通大学 西安电子科技大学 长安大学 ] [ 延安大学 ] [ 陕西理工大学 ] [ 辅助arc ] [ ] ] \
                                   [ [ 成功大学 ] [ 逢甲大学 ] [ 辅助arc ] [ ] ] ]"
        .parse()?;
    let shape: &RaggedShape = univs.shape();
    say!("");
    say!("shape: {shape}");
    say!(
        "num_axes = {}, dim0 = {}, tot_size(1) = {}, num_elements = {}",
        shape.num_axes(),
        shape.dim0(),
        shape.tot_size(1),
        shape.num_elements()
    );
    for axis in 1..shape.num_axes() {
        say!("  row_splits({axis}) = {:?}", shape.row_splits(axis));
        say!("  row_ids({axis})    = {:?}", shape.row_ids(axis));
    }

    // Coordinates -> offsets through row_splits (seed 3.2.1).
    let city_offset = shape.offset_of(&[1, 0]).expect("province 1 has a city 0");
    say!("");
    say!(
        "[province 1, city 0] -> city offset row_splits(1)[1] + 0 = {city_offset} -> {}",
        cities[city_offset]
    );
    let univ_offset = shape
        .offset_of(&[1, 0, 0])
        .expect("that city has a university");
    say!(
        "[province 1, city 0, univ 0] -> univ offset row_splits(2)[{city_offset}] + 0 = {univ_offset} -> {}",
        univs.values()[univ_offset]
    );

    // Offsets -> coordinates through row_ids (seed 3.2.2).
    let univ_offset = 8;
    let coords = shape.coords_of(univ_offset);
    let city = shape.row_ids(2)[univ_offset] as usize;
    say!(
        "univ offset {univ_offset} ({}) -> city offset row_ids(2)[{univ_offset}] = {city} ({})",
        univs.values()[univ_offset],
        cities[city]
    );
    say!("  -> province row_ids(1)[{city}] = {}, city inside province {city} - row_splits(1)[{}] = {}", coords[0], coords[0], coords[1]);
    say!(
        "  -> univ inside city {univ_offset} - row_splits(2)[{city}] = {}; coordinates {:?}",
        coords[2],
        coords
    );

    // Every element, both ways, as a check of the function pair.
    for offset in 0..shape.num_elements() {
        let c = shape.coords_of(offset);
        assert_eq!(shape.offset_of(&c), Some(offset));
    }
    say!(
        "all {} offsets round-trip through coords_of / offset_of",
        shape.num_elements()
    );

    // A zero-copy look at Taiwan.
    let taiwan = univs.index(0, 1);
    say!(
        "univs.index(0, 1) = {taiwan} (values borrowed at offset {})",
        taiwan.value_offset()
    );

    // A few operations.
    let per_city = univs.map(|_| 1i32).sum_per_sublist(0);
    say!("universities per city: {per_city:?}");
    let (no_empty, _) = univs.clone().remove_empty_lists(1)?;
    say!("without empty cities: {no_empty}");
    say!("cities flattened: {}", univs.clone().remove_axis(0)?);

    let dir = std::env::var_os("DEMO_OUT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/demo/ragged-core"));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("tour.txt");
    std::fs::write(&path, &report)?;
    println!("artefact: {}", path.display());
    Ok(())
}
