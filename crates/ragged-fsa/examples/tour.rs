//! A tour of ragged-fsa: the seed's Shaanxi and Taiwan university FSAs stacked into an
//! FsaVec (its shape, row_splits and row_ids as the seed prints them), a few algorithms,
//! a small L and G composed, determinized and minimized into LG, and pictures: `.dot`
//! files, rendered to SVG when Graphviz's `dot` is installed.
//!
//! Run with `cargo run --release -p ragged-fsa --example tour`; files go to `$DEMO_OUT_DIR`
//! (default `target/demo/ragged-fsa`).

use std::collections::HashMap;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;

use ragged_fsa::{create_fsa_vec, Fsa, FsaVec, Semiring, TextFormat, WeightPushing};

/// Xi'an's four universities, then Yan'an's and Hanzhong's, then the -1 arc into the final state.
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

/// A tiny lexicon in OpenFst text: phones a=1, b=2, c=3, `#0`=4, `#1`=5; words 1 = "a b",
/// 2 = "a c", 3 = "b", and word 4 = `#0`, passed through by the loop on the start state.
const LEXICON: &str = "\
0 1 1 1 0
0 3 1 2 0
0 5 2 3 0
0 0 4 4 0
1 2 2 0 0
2 0 5 0 0
3 4 3 0 0
4 0 5 0 0
5 0 5 0 0
0
";

/// A tiny bigram grammar: state 0 is the back-off state, state `w` follows word `w`;
/// back-off arcs carry `#0` (word 4).
const GRAMMAR: &str = "\
0 1 1 1.0
0 2 2 1.5
0 3 3 2.0
1 3 3 0.5
1 0 4 0.7
2 0 4 0.9
3 0 4 0.3
0 0.5
1 1.0
2 0.2
3 0.1
";

/// Tainan's and Taichung's universities, then the -1 arc.
const TAIWAN: &str = "\
0 1 7 0
1 2 8 0
2 3 -1 0
3
";

fn symbols() -> HashMap<i32, String> {
    [
        (1, "西北工业大学"),
        (2, "西安交通大学"),
        (3, "西安电子科技大学"),
        (4, "长安大学"),
        (5, "延安大学"),
        (6, "陕西理工大学"),
        (7, "成功大学"),
        (8, "逢甲大学"),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_string()))
    .collect()
}

fn out_dir() -> PathBuf {
    std::env::var_os("DEMO_OUT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/demo/ragged-fsa"))
}

/// Writes `name.dot`, and `name.svg` when `dot` runs; prints one `artefact:` line per file.
fn draw(dir: &Path, name: &str, dot: &str) -> Result<(), Box<dyn Error>> {
    let dot_path = dir.join(format!("{name}.dot"));
    std::fs::write(&dot_path, dot)?;
    println!("artefact: {}", dot_path.display());
    let svg_path = dir.join(format!("{name}.svg"));
    match Command::new("dot")
        .arg("-Tsvg")
        .arg(&dot_path)
        .arg("-o")
        .arg(&svg_path)
        .status()
    {
        Ok(status) if status.success() => println!("artefact: {}", svg_path.display()),
        Ok(status) => println!("(dot failed on {name}: {status})"),
        Err(_) => {} // Graphviz not installed: the .dot file is the picture's source
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = out_dir();
    std::fs::create_dir_all(&dir)?;
    let names = symbols();

    println!("== The seed's two FSAs (k2 text) ==");
    let shaanxi: Fsa = SHAANXI.parse()?;
    let taiwan: Fsa = TAIWAN.parse()?;
    println!("Shaanxi:\n{shaanxi}");
    println!("Taiwan:\n{taiwan}");
    println!("Shaanxi properties: {}", shaanxi.properties());

    println!("\n== china_univ_fsav = create_fsa_vec([shaanxi, taiwan]) ==");
    let china = create_fsa_vec(&[shaanxi.clone(), taiwan.clone()]);
    let shape = china.arcs().shape();
    println!("shape: {shape}");
    println!("shape.row_ids(1): {:?}", shape.row_ids(1));
    println!("shape.row_splits(1): {:?}", shape.row_splits(1));
    println!("shape.row_ids(2): {:?}", shape.row_ids(2));
    println!("shape.row_splits(2): {:?}", shape.row_splits(2));
    let (province, city, univ) = (1usize, 0usize, 0usize);
    let city_offset = shape.row_splits(1)[province] as usize + city;
    let univ_offset = shape.row_splits(2)[city_offset] as usize + univ;
    let label = china.arcs().values()[univ_offset].label;
    println!(
        "province {province}, city {city}, university {univ}: city offset {city_offset}, \
         university offset {univ_offset} -> {}",
        names[&label]
    );
    let univ_offset = 8;
    let city_offset = shape.row_ids(2)[univ_offset];
    let province = shape.row_ids(1)[city_offset as usize];
    println!(
        "university offset {univ_offset} -> city offset {city_offset}, province {province} ({})",
        names[&china.arcs().values()[univ_offset].label]
    );

    println!("\n== Algorithms on the FsaVec (run in parallel across FSAs when large) ==");
    let tot_log: Vec<f64> = china.get_tot_scores(Semiring::Log)?;
    let tot_max: Vec<f64> = china.get_tot_scores(Semiring::Tropical)?;
    println!(
        "tot scores, log semiring: {tot_log:?} (log 4 = {:.6})",
        4f64.ln()
    );
    println!("tot scores, tropical:     {tot_max:?}");
    let (best, arc_map) = china.shortest_path()?;
    println!(
        "shortest_path labels: {:?} / {:?}, arc_map {arc_map:?}",
        best.get(0).labels(),
        best.get(1).labels()
    );
    let (union, union_map) = china.union();
    println!(
        "union: {} states, {} arcs, arc_map {union_map:?}",
        union.num_states(),
        union.num_arcs()
    );
    println!("union properties: {}", union.properties());

    println!("\n== Transducers: CTC topology, a lexicon arc with ragged aux labels ==");
    let topo = Fsa::ctc_topo(2, false);
    println!("ctc_topo(2):\n{topo}");
    let lexicon = Fsa::from_text(
        "0 1 5 [7 8] -0.5\n1 2 -1 [-1] 0\n2\n",
        &TextFormat::acceptor().ragged(&["aux_labels"]),
    )?;
    let (inverted, inv_map) = lexicon.invert()?;
    println!(
        "invert of a ragged-aux arc, expanded into a chain (arc_map {inv_map:?}):\n{inverted}"
    );
    let graphs = FsaVec::ctc_graph(&[vec![1, 1]], false)?;
    println!(
        "ctc_graph([1 1]): {} states, properties {}",
        graphs.get(0).num_states(),
        graphs.properties()
    );
    println!("OpenFst text of the Taiwan FSA:\n{}", taiwan.to_openfst()?);

    println!("\n== Pictures ==");
    draw(
        &dir,
        "shaanxi",
        &shaanxi.to_dot_with_symbols("Shaanxi", &names),
    )?;
    draw(
        &dir,
        "taiwan",
        &taiwan.to_dot_with_symbols("Taiwan", &names),
    )?;
    draw(
        &dir,
        "union",
        &union.to_dot_with_symbols("union(china_univ_fsav)", &names),
    )?;
    draw(&dir, "ctc_topo", &topo.to_dot("ctc_topo(max_token=2)"))?;
    draw(&dir, "ctc_graph", &graphs.get(0).to_dot("ctc_graph([1 1])"))?;

    println!("\n== Building LG: compose, determinize, minimize ==");
    let lexicon = Fsa::from_openfst(LEXICON, false)?;
    let grammar = Fsa::from_openfst(GRAMMAR, true)?;
    let (lg, _, _) = lexicon.compose(&grammar, true)?;
    let (det, _) = lg.determinize(WeightPushing::Log)?;
    let (min, _) = det.minimize()?;
    for (name, fsa) in [
        ("L", &lexicon),
        ("G", &grammar),
        ("LG", &lg),
        ("det(LG)", &det),
        ("min(det(LG))", &min),
    ] {
        println!(
            "{name:>13}: {} states, {} arcs",
            fsa.num_states(),
            fsa.num_arcs()
        );
    }
    draw(&dir, "lexicon", &lexicon.to_dot("L"))?;
    draw(&dir, "grammar", &grammar.to_dot("G"))?;
    draw(&dir, "lg", &lg.to_dot("compose(L, G)"))?;
    draw(&dir, "lg_det", &det.to_dot("determinize(LG, log pushing)"))?;
    draw(&dir, "lg_min", &min.to_dot("minimize(det(LG))"))?;
    Ok(())
}
