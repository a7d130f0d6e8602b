//! ragged-fsa's readers and constructor: k2 text, OpenFst text (acceptor and transducer) and
//! `Fsa::from_arcs`, then every algorithm on the result, each output checked for the FSA
//! invariants and a well-formed arc map, and the text round trip.

use ragged_fsa::{create_fsa_vec, Arc, Attr, Fsa, Properties, Semiring, TextFormat};

use crate::{same_f32, Bytes};

/// Inputs longer than this are ignored (a few hundred arcs at most).
pub const MAX_LEN: usize = 4096;

/// The algorithms run only on FSAs of at most this many states. The text readers accept
/// state numbers up to a budget (64 per byte of text, at least a million), so a 7-byte
/// text such as `999999` is a legitimate FSA of a million states; running every algorithm
/// on it is slow work, not a bug.
const MAX_ALGORITHM_STATES: usize = 4096;

/// Text round trips run only on FSAs of at most this many states (see `text_target`).
const MAX_ROUND_TRIP_STATES: usize = 1 << 16;

/// `Fsa::from_arcs` reads at most this many states and arcs from the bytes.
const MAX_STATES: usize = 16;
const MAX_ARCS: usize = 64;

/// k2 text: the first byte picks the format (acceptor, transducer, two aux columns, a ragged
/// column), the rest is the text.
pub fn fsa_k2_text(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let format = match selector % 4 {
        0 => TextFormat::acceptor(),
        1 => TextFormat::transducer(),
        2 => TextFormat::with_num_aux_labels(2),
        _ => TextFormat::transducer().ragged(&["words"]),
    };
    text_target(rest, &format);
}

/// OpenFst text: the first byte picks acceptor or transducer, the rest is the text.
pub fn fsa_openfst_text(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let format = if selector % 2 == 0 {
        TextFormat::acceptor().openfst()
    } else {
        TextFormat::transducer().openfst()
    };
    text_target(rest, &format);
}

fn text_target(data: &[u8], format: &TextFormat) {
    if data.len() > MAX_LEN {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(fsa) = Fsa::from_text(text, format) else {
        return;
    };
    // OpenFst text gives every state without arcs a line of its own (`3 Infinity`), so that
    // the state count survives; a few bytes naming state 1,000,000 print as 16 MB. Linear,
    // legitimate, and too slow for the engine: round trips stop at this many states.
    if fsa.num_states() > MAX_ROUND_TRIP_STATES {
        return;
    }
    let printed = fsa
        .to_text(format)
        .unwrap_or_else(|e| panic!("an FSA read as {format:?} does not print: {e}"));
    let back = Fsa::from_text(&printed, format)
        .unwrap_or_else(|e| panic!("printed FSA {printed:?} does not parse: {e}"));
    // (this target found the OpenFst writer giving no line to a start state without arcs,
    // so the reader renumbered the states; fixed, see docs/RELIABILITY.md)
    assert_same_fsa(&fsa, &back, &printed);
    check_algorithms(&fsa);
}

/// `Fsa::from_arcs` from the bytes: a state count, then 4 bytes per arc (source,
/// destination, label, score), each decoded through a table that favours the edge cases.
pub fn fsa_from_arcs(data: &[u8]) {
    let mut bytes = Bytes::new(data);
    let num_states = usize::from(bytes.byte()) % (MAX_STATES + 1);
    let mut arcs = Vec::new();
    while !bytes.is_empty() && arcs.len() < MAX_ARCS {
        arcs.push(Arc::new(
            state(bytes.byte(), num_states),
            state(bytes.byte(), num_states),
            label(bytes.byte()),
            score(bytes.byte()),
        ));
    }
    // 0 states with an arc is an error (issue 17, item 7: it used to panic on an index)
    let Ok(fsa) = Fsa::from_arcs(arcs.clone(), num_states) else {
        return;
    };
    // The model: the arcs are kept in order, grouped by source state.
    assert_eq!(fsa.num_states(), num_states);
    assert_eq!(fsa.num_arcs(), arcs.len());
    let mut next = 0;
    for s in 0..num_states {
        for stored in fsa.state_arcs(s) {
            assert_eq!(stored.src_state as usize, s);
            assert!(same_arc(stored, &arcs[next]), "arc {next} changed");
            next += 1;
        }
    }
    assert_eq!(next, arcs.len(), "every arc under its source state");
    // Text round trip when the FSA follows k2's conventions (only then can k2 text say it).
    let printed = fsa.to_string();
    if fsa.properties().contains(Properties::VALID) {
        let back: Fsa = printed
            .parse()
            .unwrap_or_else(|e| panic!("printed valid FSA {printed:?} does not parse: {e}"));
        assert_same_fsa(&fsa, &back, &printed);
    }
    let _ = fsa.to_openfst();
    check_algorithms(&fsa);
}

fn state(b: u8, num_states: usize) -> i32 {
    match b {
        0xff => i32::MAX,
        0xfe => i32::MIN,
        0xfd => -1,
        _ => i32::from(b) % (num_states as i32 + 1),
    }
}

fn label(b: u8) -> i32 {
    match b {
        0xff => i32::MAX,
        0xfe => i32::MIN,
        _ => i32::from(b as i8),
    }
}

fn score(b: u8) -> f32 {
    match b {
        0xff => f32::NAN,
        0xfe => f32::INFINITY,
        0xfd => f32::NEG_INFINITY,
        0xfc => f32::MAX,
        0xfb => -0.0,
        _ => f32::from(b as i8) / 4.0,
    }
}

fn same_arc(a: &Arc, b: &Arc) -> bool {
    a.src_state == b.src_state
        && a.dest_state == b.dest_state
        && a.label == b.label
        && same_f32(a.score, b.score)
}

fn assert_same_fsa(a: &Fsa, b: &Fsa, printed: &str) {
    assert_eq!(
        a.num_states(),
        b.num_states(),
        "states changed through {printed:?}"
    );
    assert_eq!(
        a.arcs().row_splits(1),
        b.arcs().row_splits(1),
        "arcs per state changed through {printed:?}"
    );
    for (k, (x, y)) in a.arcs().values().iter().zip(b.arcs().values()).enumerate() {
        assert!(
            same_arc(x, y),
            "arc {k} changed through {printed:?}: {x:?} -> {y:?}"
        );
    }
    let names = |f: &Fsa| f.attrs().keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(a), names(b), "attributes changed through {printed:?}");
    for (name, attr) in a.attrs() {
        if !matches!(attr, Attr::F32(_)) {
            assert_eq!(
                Some(attr),
                b.attr(name),
                "{name} changed through {printed:?}"
            );
        }
    }
}

/// Every algorithm on `fsa`; each result must be a valid `Fsa` with a well-formed arc map.
pub fn check_algorithms(fsa: &Fsa) {
    if fsa.num_states() > MAX_ALGORITHM_STATES {
        return;
    }
    let n = fsa.num_arcs();
    let properties = fsa.properties();
    let _ = properties.to_string();
    let _ = fsa.to_dot("fuzz");
    check_result("arc_sort", fsa.arc_sort(), n);
    // `top_sort` errors (issue 17, item 7: it used to panic when the final state had a
    // leaving arc, which the constructors now refuse)
    if let Ok(result) = fsa.top_sort() {
        check_result("top_sort", result, n);
    }
    check_result("connect", fsa.connect(), n);
    check_result("reverse", fsa.reverse(), n);
    check_result("closure", fsa.closure(), n);
    check_result("add_epsilon_self_loops", fsa.add_epsilon_self_loops(), n);
    check_result(
        "remove_epsilon_self_loops",
        fsa.remove_epsilon_self_loops(),
        n,
    );
    if let Ok(result) = fsa.invert() {
        let _ = result.0.to_string();
        check_result("invert", result, n);
    }
    for semiring in [Semiring::Tropical, Semiring::Log] {
        let _ = fsa.get_forward_scores::<f32>(semiring);
        let _ = fsa.get_backward_scores::<f32>(semiring);
        let _ = fsa.get_arc_post::<f32>(semiring);
        let _ = fsa.get_forward_scores::<f64>(semiring);
        let _ = fsa.get_backward_scores::<f64>(semiring);
        let _ = fsa.get_arc_post::<f64>(semiring);
    }
    let tropical = fsa.get_tot_score::<f64>(Semiring::Tropical);
    let log = fsa.get_tot_score::<f64>(Semiring::Log);
    let _ = fsa.get_tot_score::<f32>(Semiring::Tropical);
    let _ = fsa.get_tot_score::<f32>(Semiring::Log);
    if let Ok((best, arc_map)) = fsa.shortest_path() {
        check_result("shortest_path", (best.clone(), arc_map.clone()), n);
        // The best path's score is the tropical total score (finite scores only: with
        // infinities and NaN the sums are not comparable).
        let finite = fsa.arcs().values().iter().all(|a| a.score.is_finite());
        if let (true, Ok(tot), Ok(log_tot)) = (finite, &tropical, &log) {
            if !arc_map.is_empty() {
                let path: f64 = best.arcs().values().iter().map(|a| a.score as f64).sum();
                let scale: f64 = best
                    .arcs()
                    .values()
                    .iter()
                    .map(|a| a.score.abs() as f64)
                    .sum();
                assert!(
                    (path - tot).abs() <= 1e-9 * (1.0 + scale),
                    "best path scores {path}, tropical total {tot}"
                );
                assert!(
                    *log_tot >= tot - 1e-9 * (1.0 + scale),
                    "log total {log_tot} below the tropical total {tot}"
                );
            }
        }
    }
    // The same FSA twice in an FsaVec: per-FSA answers equal the single FSA's.
    let vec = create_fsa_vec(&[fsa.clone(), fsa.clone()]);
    assert_eq!(vec.num_fsas(), 2);
    match (vec.get_tot_scores::<f64>(Semiring::Tropical), &tropical) {
        (Ok(both), Ok(one)) => {
            assert_eq!(both.len(), 2);
            assert!(
                both.iter().all(|t| crate::same_f64(*t, *one)),
                "{both:?} vs {one}"
            );
        }
        (Err(_), Err(_)) => {}
        (both, one) => panic!("FsaVec tot scores {both:?}, single FSA {one:?}"),
    }
    let _ = vec.arc_sort();
    let _ = vec.connect();
    let _ = vec.shortest_path();
}

fn check_result(name: &str, (out, arc_map): (Fsa, Vec<i32>), num_input_arcs: usize) {
    assert_eq!(
        arc_map.len(),
        out.num_arcs(),
        "{name}: arc map length vs arcs"
    );
    assert!(
        arc_map
            .iter()
            .all(|&m| m == -1 || (0..num_input_arcs as i64).contains(&i64::from(m))),
        "{name}: arc map {arc_map:?} out of range for {num_input_arcs} arcs"
    );
    if let Err(e) = Fsa::from_ragged(out.arcs().clone()) {
        panic!("{name}: the result breaks the Fsa invariants: {e}");
    }
    for (attr_name, attr) in out.attrs() {
        assert_eq!(
            attr.len(),
            out.num_arcs(),
            "{name}: attribute {attr_name} length"
        );
    }
}
