//! A tour of ragged-fsa: the seed's Shaanxi and Taiwan university FSAs stacked into an
//! FsaVec (its shape, row_splits and row_ids as the seed prints them), a few algorithms,
//! a small L and G composed, determinized and minimized into LG, and pictures: `.dot`
//! files, rendered to SVG when Graphviz's `dot` is installed. Then a tiny CTC model trained
//! and decoded end to end, with its loss curve as a PNG.
//!
//! Run with `cargo run --release -p ragged-fsa --example ragged-fsa-tour`; files go to `$DEMO_OUT_DIR`
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
    let topo = Fsa::ctc_topo(2, false)?;
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
    ctc_training_and_decoding(&dir)?;
    transducer_training(&dir)?;
    Ok(())
}

/// The three "words" of the CTC section, as token sequences (tokens 1..=4, 0 is blank).
const WORDS: [(&str, [i32; 3]); 3] = [("abc", [1, 2, 3]), ("bba", [2, 2, 1]), ("dca", [4, 3, 1])];

/// A tiny decoding graph (an HLG in miniature): from a shared start state, the CTC graph of
/// each word (blanks optional, repeats merged, a blank required between equal tokens), the
/// word chosen with probability 1/3 on its first token arc, whose aux label is the word id
/// (1-based); -1 arcs into the final state after each word's last token or blank.
fn word_graph() -> Result<Fsa, Box<dyn Error>> {
    let choose = -(WORDS.len() as f32).ln();
    let mut arcs: Vec<(ragged_fsa::Arc, i32)> = vec![(ragged_fsa::Arc::new(0, 0, 0, 0.0), 0)];
    let mut next = 1;
    let mut ends = Vec::new();
    for (w, (_, tokens)) in WORDS.iter().enumerate() {
        let (mut blank, mut token_state) = (0, None::<i32>);
        for (k, &tok) in tokens.iter().enumerate() {
            let state = next;
            let bs = next + 1;
            next += 2;
            let (score, aux) = if k == 0 {
                (choose, w as i32 + 1)
            } else {
                (0.0, 0)
            };
            arcs.push((ragged_fsa::Arc::new(blank, state, tok, score), aux));
            if let Some(prev) = token_state {
                if tokens[k - 1] != tok {
                    arcs.push((ragged_fsa::Arc::new(prev, state, tok, 0.0), 0));
                }
            }
            arcs.push((ragged_fsa::Arc::new(state, state, tok, 0.0), 0));
            arcs.push((ragged_fsa::Arc::new(state, bs, 0, 0.0), 0));
            arcs.push((ragged_fsa::Arc::new(bs, bs, 0, 0.0), 0));
            blank = bs;
            token_state = Some(state);
        }
        ends.extend([token_state.expect("words are not empty"), blank]);
    }
    let final_state = next;
    for end in ends {
        arcs.push((ragged_fsa::Arc::new(end, final_state, -1, 0.0), -1));
    }
    arcs.sort_by_key(|(arc, _)| arc.src_state);
    let aux: Vec<i32> = arcs.iter().map(|(_, aux)| *aux).collect();
    let arcs: Vec<ragged_fsa::Arc> = arcs.into_iter().map(|(arc, _)| arc).collect();
    Ok(Fsa::from_arcs(arcs, final_state as usize + 1)?
        .with_attr(ragged_fsa::AUX_LABELS, ragged_fsa::Attr::I32(aux))?)
}

/// Row-wise log-softmax.
fn log_softmax(logits: &ndarray::Array3<f32>) -> ndarray::Array3<f32> {
    let mut out = logits.clone();
    for mut row in out.lanes_mut(ndarray::Axis(2)) {
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let z = m + row.iter().map(|x| (x - m).exp()).sum::<f32>().ln();
        row.mapv_inplace(|x| x - z);
    }
    out
}

/// A tiny CTC model end to end: seeded logits for three utterances, the CTC loss and its
/// gradient, gradient descent on the logits (the loss falls; its curve is drawn as a PNG),
/// then decoding with `intersect_dense_pruned` against a three-word graph.
fn ctc_training_and_decoding(dir: &Path) -> Result<(), Box<dyn Error>> {
    use ndarray::Array3;
    use ragged_fsa::{ctc_loss, intersect_dense_pruned, one_best, DenseFsaVec};

    println!("\n== A tiny CTC model: loss, gradient, gradient descent, decoding ==");
    let (n, t, c) = (3usize, 12usize, 5usize);
    let mut state = 14u64;
    let mut logits = Array3::from_shape_fn((n, t, c), |_| {
        // SplitMix64, uniform in [-1, 1)
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
    });
    // utterance i says word i; segments in no particular order, one shorter than the rest
    let segments = [[2, 0, 12], [0, 1, 10], [1, 0, 12]];
    let targets: Vec<Vec<i32>> = segments
        .iter()
        .map(|s| WORDS[s[0] as usize].1.to_vec())
        .collect();
    let graphs = FsaVec::ctc_graph(&targets, false)?;
    let (steps, rate) = (40usize, 0.5f32);
    let mut curve = Vec::with_capacity(steps);
    for step in 0..steps {
        let log_probs = log_softmax(&logits);
        let dense = DenseFsaVec::try_new(log_probs.view(), &segments)?;
        let out = ctc_loss(&graphs, &dense, f32::INFINITY)?;
        let total: f64 = out.loss.iter().sum();
        curve.push(total);
        if step % 10 == 0 || step + 1 == steps {
            println!(
                "step {step:2}: loss per segment {:.3?}, sum {total:.4}",
                out.loss
            );
        }
        // through the log-softmax: d/dlogits = g - softmax * sum(g), per frame
        for ((mut lg, g), lp) in logits
            .lanes_mut(ndarray::Axis(2))
            .into_iter()
            .zip(out.grad.lanes(ndarray::Axis(2)))
            .zip(log_probs.lanes(ndarray::Axis(2)))
        {
            let sum: f32 = g.sum();
            for ((x, &gi), &lpi) in lg.iter_mut().zip(g.iter()).zip(lp.iter()) {
                *x -= rate * (gi - lpi.exp() * sum);
            }
        }
    }
    assert!(
        curve[steps - 1] < curve[0],
        "gradient descent lowers the loss"
    );

    let svg = dir.join("ctc_loss.svg");
    draw_curves_with_axes(
        &svg,
        "A tiny CTC model: ctc_loss under gradient descent",
        &[("ctc_loss, summed over the 3 segments", &curve)],
    )?;
    println!("artefact: {}", svg.display());

    let log_probs = log_softmax(&logits);
    let dense = DenseFsaVec::try_new(log_probs.view(), &segments)?;
    let graph = create_fsa_vec(&[word_graph()?]);
    let (lattice, _, _) = intersect_dense_pruned(&graph, &dense, 20.0, 8.0, 30, 10_000)?;
    for (i, best) in one_best(&lattice)?.iter().enumerate() {
        let words: Vec<&str> = best
            .aux_labels
            .iter()
            .map(|&w| WORDS[w as usize - 1].0)
            .collect();
        println!(
            "segment {i} {:?}: tokens per frame {:?} -> words {words:?} (score {:.3})",
            segments[i], best.labels, best.score
        );
    }
    draw(
        dir,
        "ctc_lattice",
        &lattice.get(1).to_dot("lattice of segment 1"),
    )?;
    Ok(())
}

/// A tiny transducer trained k2's pruned way: `lm` `[B][S + 1][C]` and `am` `[B][T][C]` are
/// the parameters themselves and the joiner is their sum. Each step: `rnnt_loss_smoothed`
/// (with `return_grad`) => `get_rnnt_prune_ranges` => `do_rnnt_pruning` => joiner =>
/// `rnnt_loss_pruned`, then one gradient step on `lm` and `am` for the sum of both losses.
fn transducer_training(dir: &Path) -> Result<(), Box<dyn Error>> {
    use ndarray::{Array2, Array3, Axis};
    use ragged_fsa::{
        do_rnnt_pruning, get_rnnt_prune_ranges, rnnt_loss_pruned, rnnt_loss_smoothed, Reduction,
        RnntLossConfig,
    };

    println!("\n== A tiny transducer: pruned RNN-T loss, gradient descent ==");
    let (b, s, t, c, s_range) = (2usize, 3usize, 8usize, 5usize, 2usize);
    let mut state = 41u64;
    let mut uniform = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
    };
    let mut lm = Array3::from_shape_fn((b, s + 1, c), |_| uniform());
    let mut am = Array3::from_shape_fn((b, t, c), |_| uniform());
    // the words "abc" and "dca" of the CTC section; symbol 0 is blank (termination)
    let symbols = Array2::from_shape_vec((b, s), vec![1i64, 2, 3, 4, 3, 1])?;
    // the second utterance is two frames shorter
    let boundary = Array2::from_shape_vec((b, 4), vec![0i64, 0, 3, 8, 0, 0, 3, 6])?;
    let smoothed = RnntLossConfig {
        reduction: Reduction::Sum,
        return_grad: true,
        ..RnntLossConfig::default()
    };
    let pruned = RnntLossConfig {
        reduction: Reduction::Sum,
        ..RnntLossConfig::default()
    };
    let (steps, rate) = (30usize, 0.3f32);
    let (mut simple_curve, mut pruned_curve) = (Vec::new(), Vec::new());
    for step in 0..steps {
        let bview = Some(boundary.view());
        let simple = rnnt_loss_smoothed(lm.view(), am.view(), symbols.view(), 0, bview, &smoothed)?;
        let (px_grad, py_grad) = (simple.px_grad.as_ref(), simple.py_grad.as_ref());
        let ranges = get_rnnt_prune_ranges(
            px_grad.ok_or("no px_grad")?.view(),
            py_grad.ok_or("no py_grad")?.view(),
            boundary.view(),
            s_range,
        )?;
        let (am_pruned, lm_pruned) = do_rnnt_pruning(am.view(), lm.view(), ranges.view())?;
        let logits = &am_pruned + &lm_pruned; // the joiner: a sum
        let out = rnnt_loss_pruned(
            logits.view(),
            symbols.view(),
            ranges.view(),
            0,
            bview,
            &pruned,
        )?;
        simple_curve.push(f64::from(simple.loss[0]));
        pruned_curve.push(f64::from(out.loss[0]));
        if step % 10 == 0 || step + 1 == steps {
            println!(
                "step {step:2}: smoothed loss {:.4}, pruned loss {:.4}, ranges of utterance 0 start at {:?}",
                simple.loss[0],
                out.loss[0],
                ranges.index_axis(Axis(0), 0).column(0).to_vec()
            );
        }
        // back through the joiner: am gets the sum over the band, lm each row at its position
        let mut lm_grad = simple.lm_grad.ok_or("no lm_grad")?;
        let mut am_grad = simple.am_grad.ok_or("no am_grad")?;
        let logits_grad = out.logits_grad.ok_or("no logits_grad")?;
        for ((bi, ti, ri, ci), &g) in logits_grad.indexed_iter() {
            am_grad[[bi, ti, ci]] += g;
            lm_grad[[bi, ranges[[bi, ti, ri]] as usize, ci]] += g;
        }
        lm.scaled_add(-rate, &lm_grad);
        am.scaled_add(-rate, &am_grad);
    }
    assert!(
        pruned_curve[steps - 1] < pruned_curve[0] && simple_curve[steps - 1] < simple_curve[0],
        "gradient descent lowers both losses"
    );
    let svg = dir.join("rnnt_loss.svg");
    draw_curves_with_axes(
        &svg,
        "A tiny transducer: pruned RNN-T under gradient descent",
        &[
            ("rnnt_loss_smoothed, utterances summed", &simple_curve),
            ("rnnt_loss_pruned, utterances summed", &pruned_curve),
        ],
    )?;
    println!("artefact: {}", svg.display());
    Ok(())
}

/// Loss curves over the gradient steps as an SVG with a title, axis names, tick values and
/// a legend: plotters' SVG backend writes the text as SVG text, which needs no font file.
fn draw_curves_with_axes(
    path: &Path,
    title: &str,
    curves: &[(&str, &[f64])],
) -> Result<(), Box<dyn Error>> {
    use plotters::prelude::*;

    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let steps = curves
        .iter()
        .map(|(_, c)| c.len())
        .max()
        .unwrap_or(1)
        .max(2);
    let y_max = curves
        .iter()
        .flat_map(|(_, c)| c.iter())
        .copied()
        .fold(0f64, f64::max)
        * 1.05;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..(steps - 1) as f64, 0f64..y_max)?;
    chart
        .configure_mesh()
        .x_desc("gradient step")
        .y_desc("loss (negative log-likelihood)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.1}"))
        .label_style(("sans-serif", 13))
        .draw()?;
    for ((name, curve), color) in curves.iter().zip([BLUE, RED]) {
        chart
            .draw_series(LineSeries::new(
                curve.iter().enumerate().map(|(i, &y)| (i as f64, y)),
                color.stroke_width(2),
            ))?
            .label(*name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
    root.present()?;
    Ok(())
}
