//! ragged-fsa's dense intersections and the CTC loss on graphs and log-probabilities decoded
//! from the bytes: graphs with up to a few thousand parallel arcs, log-probabilities NaN,
//! `±inf`, `±f32::MAX`, segments that may not fit, small lattice bounds. `intersect_dense`
//! (exact and pruned to a beam), `intersect_dense_pruned` and `ctc_loss_with` (exact and at
//! a finite beam): every lattice must be a valid FsaVec with arc maps into the graph and
//! the scores, every error one documented for the input; the exact and the pruned loss
//! must refuse the same hostile values with the same error (hardening round 3, item 16),
//! give no NaN or `-inf` loss and finite gradients, and the pruned loss must be at least
//! the exact one.

use ragged_core::{PadMode, PadSide, Ragged};
use ragged_fsa::{
    create_fsa_vec, ctc_loss_with, intersect_dense, intersect_dense_pruned, Arc, CtcLossConfig,
    DenseFsaVec, Error, Fsa, FsaVec,
};

use crate::Bytes;

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 2048;

/// At most this many states, arcs read one by one, and copies of the first arc (parallel
/// arcs: the arcs x frames the lattices bound).
const MAX_STATES: usize = 6;
const MAX_ARCS: usize = 32;
const MAX_COPIES: usize = 2048;

/// The first bytes: options, sizes (sequences, frames, symbols), the number of copies of
/// the first arc; then the segments (3 bytes each, one per sequence), the log-probs (a byte
/// each), and the graph (a state count, then 4 bytes per arc).
pub fn dense_intersect(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let mut bytes = Bytes::new(data);
    let options = bytes.byte();
    let n = 1 + usize::from(bytes.byte() % 2);
    let t = 1 + usize::from(bytes.byte() % 16);
    let c = 1 + usize::from(bytes.byte() % 4);
    let copies = usize::from(bytes.u16()) % (MAX_COPIES + 1);
    let segments: Vec<[i32; 3]> = (0..n)
        .map(|_| {
            let seq = i32::from(bytes.byte() % 3);
            let start = i32::from(bytes.byte() % 20);
            let frames = i32::from(bytes.byte() % 20);
            [seq, start, frames]
        })
        .collect();
    let values: Vec<f32> = (0..n * t * c).map(|_| log_prob(bytes.byte())).collect();
    let graph = decode_graph(&mut bytes, c, copies);
    // the log-probs as an `[n, t, c]` ndarray array: this crate does not depend on ndarray
    // itself, so ragged-core's `pad` makes a one-row array of the values, reshaped here
    let log_probs = Ragged::from_nested(vec![values])
        .and_then(|r| r.pad(PadMode::Constant, PadSide::Right, 0.0))
        .expect("one row pads")
        .into_shape_with_order((n, t, c))
        .expect("n * t * c values");
    let Ok(dense) = DenseFsaVec::try_new(log_probs.view(), &segments) else {
        // a segment outside its sequence, or NaN in log_probs: documented errors
        return;
    };
    let graphs = create_fsa_vec(&[graph]);
    let labels_fit = graphs
        .arcs()
        .values()
        .iter()
        .all(|a| a.label >= -1 && (a.label as i64) < c as i64);
    let beam = [f32::INFINITY, 8.0, 0.5][usize::from(options % 3)];
    for output_beam in [f32::INFINITY, beam] {
        check_lattice(
            "intersect_dense",
            intersect_dense(&graphs, &dense, output_beam, None),
            &graphs,
            &dense,
            labels_fit,
        );
    }
    let (min_active, max_active) = [(1, 2), (30, 10_000), (0, 1)][usize::from(options >> 2) % 3];
    check_lattice(
        "intersect_dense_pruned",
        intersect_dense_pruned(&graphs, &dense, 20.0, beam, min_active, max_active),
        &graphs,
        &dense,
        labels_fit,
    );
    check_losses(&graphs, &dense, options, labels_fit);
}

fn log_prob(b: u8) -> f32 {
    match b {
        0xff => f32::NAN,
        0xfe => f32::INFINITY,
        0xfd => f32::NEG_INFINITY,
        0xfc => f32::MAX,
        0xfb => -f32::MAX,
        _ => -f32::from(b) / 32.0,
    }
}

fn score(b: u8) -> f32 {
    match b {
        0xff => f32::NAN,
        0xfe => f32::INFINITY,
        0xfd => f32::NEG_INFINITY,
        0xfc => 1e30,
        _ => f32::from(b as i8) / 16.0,
    }
}

/// A graph of 2 to `MAX_STATES` states for `c` symbols (labels sometimes out of range),
/// the last state final and entered by `-1` arcs only, with `copies` extra copies of its
/// first arc.
fn decode_graph(bytes: &mut Bytes<'_>, c: usize, copies: usize) -> Fsa {
    let num_states = 2 + usize::from(bytes.byte()) % (MAX_STATES - 1);
    let final_state = num_states as i32 - 1;
    let mut arcs = Vec::new();
    while !bytes.is_empty() && arcs.len() < MAX_ARCS {
        let src = i32::from(bytes.byte()) % final_state;
        let dest = i32::from(bytes.byte()) % num_states as i32;
        let label_byte = bytes.byte();
        let label = if dest == final_state {
            -1
        } else if label_byte == 0xff {
            c as i32 // one past the symbols: LabelOutOfRange
        } else {
            i32::from(label_byte) % c as i32
        };
        arcs.push(Arc::new(src, dest, label, score(bytes.byte())));
    }
    if let Some(&first) = arcs.first() {
        arcs.extend(std::iter::repeat_n(first, copies));
    }
    // grouped by source state, as `from_arcs` wants them
    arcs.sort_by_key(|a| a.src_state);
    Fsa::from_arcs(arcs, num_states).expect("the decoder keeps k2's conventions")
}

fn check_lattice(
    name: &str,
    result: Result<(FsaVec, Vec<i32>, Vec<i32>), Error>,
    graphs: &FsaVec,
    dense: &DenseFsaVec,
    labels_fit: bool,
) {
    match result {
        Ok((lattice, a_map, b_map)) => {
            assert!(labels_fit, "{name} accepted a label outside the symbols");
            assert_eq!(
                lattice.num_fsas(),
                dense.num_fsas(),
                "{name}: one per segment"
            );
            assert!(lattice.num_arcs() <= ragged_fsa::MAX_OUTPUT_ARCS);
            if let Err(e) = FsaVec::from_ragged(lattice.arcs().clone()) {
                panic!("{name}: the lattice breaks the FsaVec invariants: {e}");
            }
            assert_eq!(a_map.len(), lattice.num_arcs(), "{name}: a_arc_map");
            assert_eq!(b_map.len(), lattice.num_arcs(), "{name}: b_arc_map");
            assert!(a_map
                .iter()
                .all(|&m| (0..graphs.num_arcs() as i64).contains(&i64::from(m))));
            assert!(b_map
                .iter()
                .all(|&m| (0..dense.scores().len() as i64).contains(&i64::from(m))));
            // each lattice arc's score is its graph score plus its dense score
            for ((arc, &a), &b) in lattice.arcs().values().iter().zip(&a_map).zip(&b_map) {
                let want = graphs.arcs().values()[a as usize].score + dense.scores()[b as usize];
                assert!(
                    crate::same_f32(arc.score, want),
                    "{name}: arc score {} for {want}",
                    arc.score
                );
            }
        }
        Err(Error::LabelOutOfRange { .. }) => assert!(!labels_fit, "{name}: a label fits"),
        // hardening round 3, item 5: the bound on arcs (never reached at these sizes)
        Err(Error::OutputLimit { .. }) => {
            panic!("{name}: at most 32 + 2048 arcs x 20 frames passed the bound")
        }
        Err(e) => panic!("{name}: {e}"),
    }
}

fn check_losses(graphs: &FsaVec, dense: &DenseFsaVec, options: u8, labels_fit: bool) {
    // a small lattice bound now and then, so that the bound's error path runs
    let max_lattice_arcs = if options & 0x80 != 0 {
        usize::from(options & 0x3f)
    } else {
        ragged_fsa::MAX_OUTPUT_ARCS
    };
    let config = |output_beam| CtcLossConfig {
        output_beam,
        max_lattice_arcs,
        ..CtcLossConfig::default()
    };
    let exact = ctc_loss_with(graphs, dense, &config(f32::INFINITY));
    let pruned = ctc_loss_with(graphs, dense, &config(1000.0));
    for (name, result) in [("exact", &exact), ("pruned", &pruned)] {
        if let Ok(out) = result {
            assert!(
                labels_fit,
                "ctc_loss ({name}) accepted a label outside the symbols"
            );
            assert_eq!(out.loss.len(), dense.num_fsas());
            assert!(
                out.loss
                    .iter()
                    .all(|l| !l.is_nan() && *l != f64::NEG_INFINITY),
                "ctc_loss ({name}): loss {:?}",
                out.loss
            );
            assert!(
                out.grad.iter().all(|g| g.is_finite()),
                "ctc_loss ({name}): a gradient value not finite"
            );
        }
    }
    match (&exact, &pruned) {
        (Ok(e), Ok(p)) => {
            // the pruned lattice keeps a subset of the paths: its loss is not below the
            // exact one (up to the f32 sums of the lattice), when the values are moderate
            let moderate = dense
                .scores()
                .iter()
                .all(|&x| x == f32::NEG_INFINITY || x.abs() < 1e6)
                && graphs
                    .arcs()
                    .values()
                    .iter()
                    .all(|a| a.score == f32::NEG_INFINITY || a.score.abs() < 1e6);
            if moderate {
                for (x, y) in e.loss.iter().zip(&p.loss) {
                    assert!(
                        *y >= *x - 1e-3 * (1.0 + x.abs()) || (x.is_infinite() && y.is_infinite()),
                        "pruned loss {y} below the exact {x}"
                    );
                }
            }
        }
        // the pruned path alone stores a lattice, so it alone can pass the bound
        (
            Ok(_),
            Err(Error::OutputLimit {
                op: "ctc_loss",
                limit,
                ..
            }),
        ) => {
            assert_eq!(*limit, max_lattice_arcs);
        }
        // one rule on both paths: the same hostile value refused with the same error
        // (compared as printed: a NaN score in the error is not equal to itself)
        (Err(e), Err(p)) => assert_eq!(
            format!("{e:?}"),
            format!("{p:?}"),
            "the exact and the pruned loss disagree"
        ),
        (e, p) => panic!("the exact loss gives {e:?}, the pruned {p:?}"),
    }
}
