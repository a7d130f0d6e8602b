//! `intersect_dense_pruned`: k2's frame-synchronous beam search of graphs against dense FSAs
//! (dynamic beam between `min_active_states` and `max_active_states`), then output-beam
//! pruning of what the search kept.

use crate::arc::Arc;
use crate::dense::dense_fsa::DenseFsaVec;
use crate::dense::intersect_dense::{assemble, check_beam, map_pairs, prepare};
use crate::error::Error;
use crate::fsa::FsaVec;
use crate::view::{Built, FsaView};

/// One arc the search kept on one frame.
#[derive(Clone, Copy)]
struct Kept {
    /// Index of the source state among the frame's active states.
    src: u32,
    /// Index of the destination among the next frame's active states.
    dest: u32,
    /// Local arc index in the graph.
    arc: u32,
    /// Graph score plus dense score.
    score: f32,
}

/// k2's dynamic beam update for one frame (`GetPruningCutoffs`). As in k2, the state
/// limits are compared as floats (so `max_active / 2` may be fractional) and the products are
/// taken in `f64`.
fn next_beam(
    beam: f32,
    search_beam: f32,
    active: usize,
    min_active: usize,
    max_active: usize,
    t: usize,
    final_t: usize,
) -> f32 {
    let (active, min_active, max_active) = (active as f32, min_active as f32, max_active as f32);
    let mut beam = beam;
    let current_min = if t + 5 >= final_t {
        min_active.max(max_active / 2.0)
    } else {
        min_active
    };
    if active <= max_active {
        if active >= current_min || active == 0.0 {
            beam = (0.8 * beam as f64 + 0.2 * search_beam as f64) as f32;
        } else {
            if beam < search_beam {
                beam = search_beam;
            }
            beam = (beam as f64 * 1.25) as f32;
        }
    } else if t + 5 < final_t {
        if beam > search_beam {
            beam = search_beam;
        }
        beam = (beam as f64 * 0.8) as f32;
    }
    if t + 1 == final_t {
        beam = 1.0e10;
    }
    beam
}

fn search_one(
    graph: FsaView<'_>,
    dense: &[f32],
    num_cols: usize,
    search_beam: f32,
    output_beam: f32,
    min_active: usize,
    max_active: usize,
) -> (Built, Vec<(u32, u32)>) {
    let num_states = graph.num_states();
    let rows = dense.len() / num_cols;
    if num_states == 0 {
        return (Built::empty(), Vec::new());
    }
    // active states per frame (graph state ids, ascending) with forward scores
    let mut frames: Vec<Vec<(u32, f32)>> = vec![vec![(0, 0.0)]];
    let mut kept: Vec<Vec<Kept>> = Vec::with_capacity(rows);
    let mut slot = vec![u32::MAX; num_states];
    let mut beam = search_beam;
    let base = graph.splits[0];
    for t in 0..rows {
        let row = &dense[t * num_cols..(t + 1) * num_cols];
        let cur = &frames[t];
        let mut best = f32::NEG_INFINITY;
        for &(state, f) in cur {
            for arc in graph.state_arcs(state as usize) {
                // k2's order of the sums (arc score plus dense score, then forward),
                // so that scores at the cutoff round the same way as k2's
                best = best.max(f + (row[(arc.label + 1) as usize] + arc.score));
            }
        }
        beam = next_beam(
            beam,
            search_beam,
            cur.len(),
            min_active,
            max_active,
            t,
            rows,
        );
        let cutoff = best - beam;
        // the next frame's states: destinations of arcs above the cutoff; then, as in k2,
        // every arc into a surviving state is kept, whatever its own score
        let mut next: Vec<(u32, f32)> = Vec::new();
        for &(state, f) in cur {
            for arc in graph.state_arcs(state as usize) {
                let end = f + (row[(arc.label + 1) as usize] + arc.score);
                if end <= cutoff {
                    continue;
                }
                let d = arc.dest_state as usize;
                if slot[d] == u32::MAX {
                    slot[d] = next.len() as u32;
                    next.push((d as u32, end));
                } else if end > next[slot[d] as usize].1 {
                    next[slot[d] as usize].1 = end;
                }
            }
        }
        let mut arcs = Vec::new();
        for (src_idx, &(state, _)) in cur.iter().enumerate() {
            let first = (graph.splits[state as usize] - base) as u32;
            for (k, arc) in graph.state_arcs(state as usize).iter().enumerate() {
                let d = arc.dest_state as usize;
                if slot[d] == u32::MAX {
                    continue;
                }
                arcs.push(Kept {
                    src: src_idx as u32,
                    dest: d as u32, // graph state for now, renumbered below
                    arc: first + k as u32,
                    score: arc.score + row[(arc.label + 1) as usize],
                });
            }
        }
        // order the next frame's states by graph state id, then renumber the arcs
        next.sort_unstable_by_key(|&(s, _)| s);
        for (i, &(s, _)) in next.iter().enumerate() {
            slot[s as usize] = i as u32;
        }
        for a in &mut arcs {
            a.dest = slot[a.dest as usize];
        }
        for &(s, _) in &next {
            slot[s as usize] = u32::MAX;
        }
        kept.push(arcs);
        frames.push(next);
    }
    // backward over the kept arcs; the final state must be active after the last row
    let final_state = (num_states - 1) as u32;
    let mut bwd: Vec<Vec<f32>> = frames
        .iter()
        .map(|f| vec![f32::NEG_INFINITY; f.len()])
        .collect();
    for (i, &(s, _)) in frames[rows].iter().enumerate() {
        if s == final_state {
            bwd[rows][i] = 0.0;
        }
    }
    for t in (0..rows).rev() {
        let (head, tail) = bwd.split_at_mut(t + 1);
        let (cur, next) = (&mut head[t], &tail[0]);
        for a in &kept[t] {
            let v = a.score + next[a.dest as usize];
            if v > cur[a.src as usize] {
                cur[a.src as usize] = v;
            }
        }
    }
    let tot = bwd[0][0];
    if tot == f32::NEG_INFINITY {
        return (Built::empty(), Vec::new());
    }
    // keep arcs within output_beam (k2: `>=`), then the states they touch
    let mut keep_arc: Vec<Vec<bool>> = Vec::with_capacity(rows);
    let mut keep_state: Vec<Vec<bool>> = frames.iter().map(|f| vec![false; f.len()]).collect();
    for t in 0..rows {
        let keep: Vec<bool> = kept[t]
            .iter()
            .map(|a| {
                frames[t][a.src as usize].1 + a.score + bwd[t + 1][a.dest as usize]
                    >= tot - output_beam
            })
            .collect();
        for (a, &k) in kept[t].iter().zip(&keep) {
            if k {
                keep_state[t][a.src as usize] = true;
                keep_state[t + 1][a.dest as usize] = true;
            }
        }
        keep_arc.push(keep);
    }
    let mut ids: Vec<Vec<i32>> = Vec::with_capacity(rows + 1);
    let mut next_id = 0i32;
    for ks in &keep_state {
        ids.push(
            ks.iter()
                .map(|&k| {
                    if k {
                        next_id += 1;
                        next_id - 1
                    } else {
                        -1
                    }
                })
                .collect(),
        );
    }
    let mut splits = vec![0i32];
    let mut arcs = Vec::new();
    let mut arc_map = Vec::new();
    let mut b_map = Vec::new();
    let graph_arcs = graph.arcs;
    for t in 0..=rows {
        // arcs of frame t grouped by source (they were generated in source order)
        let mut k = 0;
        let list: &[Kept] = if t < rows { &kept[t] } else { &[] };
        for (src_idx, &id) in ids[t].iter().enumerate() {
            while k < list.len() && (list[k].src as usize) < src_idx {
                k += 1;
            }
            while k < list.len() && list[k].src as usize == src_idx {
                if id >= 0 && keep_arc[t][k] {
                    let a = list[k];
                    let label = graph_arcs[a.arc as usize].label;
                    arcs.push(Arc::new(id, ids[t + 1][a.dest as usize], label, a.score));
                    arc_map.push(a.arc as i32);
                    b_map.push((t as u32, (label + 1) as u32));
                }
                k += 1;
            }
            if id >= 0 {
                splits.push(arcs.len() as i32);
            }
        }
    }
    (
        Built {
            splits,
            arcs,
            arc_map,
        },
        b_map,
    )
}

/// Decodes each dense FSA against its graph (one per dense FSA, or one shared) with k2's
/// pruned search (`intersect_dense_pruned`): frame by frame, a state survives when some arc
/// enters it with a forward score within a dynamic beam of the frame's best, and every arc
/// into a surviving state is kept; the beam starts at
/// `search_beam` and shrinks (x0.8) while more than `max_active_states` states are active,
/// grows (x1.25) while fewer than `min_active_states` are, and drifts back to `search_beam`
/// otherwise; the last frame is not pruned. What the search kept is then pruned to
/// `output_beam` of its best path. Returns the lattice and the arc maps as
/// [`intersect_dense`](crate::intersect_dense) does; states within a frame are numbered by
/// graph state (k2 numbers them in hash order).
pub fn intersect_dense_pruned(
    a_fsas: &FsaVec,
    b: &DenseFsaVec,
    search_beam: f32,
    output_beam: f32,
    min_active_states: usize,
    max_active_states: usize,
) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
    check_beam("search_beam", search_beam)?;
    check_beam("output_beam", output_beam)?;
    if max_active_states <= min_active_states {
        return Err(Error::BadActiveStates {
            min_active_states,
            max_active_states,
        });
    }
    let pairs = prepare(a_fsas, b, None)?;
    let num_cols = b.num_cols();
    let parts = map_pairs(
        &pairs,
        |a, bi| a_fsas.arc_range(a).len().min(max_active_states * 4) * (b.duration(bi) + 1),
        |a, bi| {
            search_one(
                a_fsas.view(a),
                b.fsa_scores(bi),
                num_cols,
                search_beam,
                output_beam,
                min_active_states,
                max_active_states,
            )
        },
    );
    assemble(a_fsas, b, &pairs, parts)
}
