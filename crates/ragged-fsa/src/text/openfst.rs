//! OpenFst's text format: arc lines `src dest ilabel [olabel ..] [cost]` and final lines
//! `state [cost]` in any order, turned into k2's single final state and back.

use std::fmt::Write as _;

use super::{
    empty_parsed, parse_arc_line, parse_err, parse_state, parse_weight, push_ragged, state_budget,
    tokenize_into, write_labels, ArcLine, Columns, ParsedText, TextFormat, Token,
};
use crate::arc::Arc;
use crate::error::{Error, ParseProblem};
use crate::view::FsaView;

/// Negates a weight, turning `-0.0` into `0.0` so that costs and scores of zero print as `0`.
#[inline]
fn negate(x: f32) -> f32 {
    -x + 0.0
}

/// Reads OpenFst text (see [`TextFormat`]); several final states become `-1` arcs into one
/// new final state numbered after all others; the start state (the first line's source) is
/// swapped with state 0 when it is not 0.
pub(crate) fn parse_openfst(s: &str, format: &TextFormat) -> Result<ParsedText, Error> {
    let num_aux = format.aux_label_names.len();
    let num_ragged = format.ragged_label_names.len();
    // the arc lines in file order, flat: (src, dest, label, cost) each, `num_aux` aux labels
    // each, and per ragged column its lists end to end (row splits, values)
    let mut arcs: Vec<(i32, i32, i32, f32)> = Vec::new();
    let mut aux: Vec<i32> = Vec::new();
    let mut ragged: Vec<(Vec<i32>, Vec<i32>)> = vec![(vec![0], Vec::new()); num_ragged];
    let mut finals: Vec<(i32, f32, usize)> = Vec::new();
    let mut start: Option<i32> = None;
    let mut max_state: i32 = -1;
    let mut max_state_line = 1;
    let mut tokens = Vec::new();
    let mut arc = ArcLine::new(format);
    for (idx, raw) in s.lines().enumerate() {
        let line = idx + 1;
        tokenize_into(raw, &mut tokens);
        if tokens.is_empty() {
            continue;
        }
        let all_words = tokens.iter().all(|t| matches!(t, Token::Word(_)));
        if all_words && tokens.len() <= 2 {
            let Token::Word(w) = tokens[0] else {
                unreachable!("checked above")
            };
            let state = parse_state(w, line)?;
            let cost = match tokens.get(1) {
                Some(Token::Word(c)) => parse_weight(c, "cost", line)?,
                _ => 0.0,
            };
            start.get_or_insert(state);
            if state > max_state {
                max_state = state;
                max_state_line = line;
            }
            // OpenFst's zero weight (cost infinity) means "not final"; the state still exists
            if cost != f32::INFINITY {
                finals.push((state, cost, line));
            }
            continue;
        }
        parse_arc_line(&tokens, format, line, &mut arc)?;
        if arc.label == -1 || arc.aux.contains(&-1) {
            return Err(parse_err(line, ParseProblem::MinusOneLabel));
        }
        start.get_or_insert(arc.src);
        if arc.src.max(arc.dest) > max_state {
            max_state = arc.src.max(arc.dest);
            max_state_line = line;
        }
        arcs.push((arc.src, arc.dest, arc.label, arc.weight));
        aux.extend_from_slice(&arc.aux);
        push_ragged(&mut ragged, &arc.ragged);
    }
    let Some(start) = start else {
        return Ok(empty_parsed(format));
    };
    let super_final = max_state + 1;
    if super_final == i32::MAX || super_final as usize >= state_budget(s.len()) {
        return Err(parse_err(
            max_state_line,
            ParseProblem::TooManyStates {
                state: max_state as i64,
            },
        ));
    }
    let num_states = super_final as usize + 1;
    let renumber = |s: i32| {
        if s == start {
            0
        } else if s == 0 {
            start
        } else {
            s
        }
    };
    let mut final_of = vec![None; num_states];
    for &(state, cost, line) in &finals {
        let state = renumber(state) as usize;
        if final_of[state].is_some() {
            return Err(parse_err(
                line,
                ParseProblem::FinalTwice {
                    state: state as i32,
                },
            ));
        }
        final_of[state] = Some(cost);
    }
    // bucket the arcs by (renumbered) source state, keeping their order
    let mut counts = vec![0usize; num_states + 1];
    for &(src, ..) in &arcs {
        counts[renumber(src) as usize + 1] += 1;
    }
    for i in 0..num_states {
        counts[i + 1] += counts[i];
    }
    let mut order = vec![0usize; arcs.len()];
    let mut fill = counts.clone();
    for (i, &(src, ..)) in arcs.iter().enumerate() {
        let s = renumber(src) as usize;
        order[fill[s]] = i;
        fill[s] += 1;
    }
    let mut out = empty_parsed(format);
    out.num_states = num_states;
    let total = arcs.len() + finals.len();
    out.arcs.reserve_exact(total);
    for column in out.aux.iter_mut() {
        column.reserve_exact(total);
    }
    for state in 0..num_states {
        for &i in &order[counts[state]..counts[state + 1]] {
            let (_, dest, label, cost) = arcs[i];
            out.arcs
                .push(Arc::new(state as i32, renumber(dest), label, negate(cost)));
            for (c, column) in out.aux.iter_mut().enumerate() {
                column.push(aux[i * num_aux + c]);
            }
            push_ragged(
                &mut out.ragged,
                ragged
                    .iter()
                    .map(|(splits, values)| &values[splits[i] as usize..splits[i + 1] as usize]),
            );
        }
        if let Some(cost) = final_of[state] {
            out.arcs
                .push(Arc::new(state as i32, super_final, -1, negate(cost)));
            for column in out.aux.iter_mut() {
                column.push(-1);
            }
            push_ragged(&mut out.ragged, std::iter::repeat::<&[i32]>(&[]));
        }
    }
    debug_assert_eq!(out.aux.len(), num_aux);
    Ok(out)
}

/// Writes OpenFst text: per state its arcs, then its final line if it has a `-1` arc; a
/// state with neither is written `s Infinity` (not final) when no arc line names it, and
/// always for state 0, since the first line's state is OpenFst's start state.
pub(crate) fn write_openfst(view: FsaView<'_>, cols: &Columns<'_>) -> Result<String, Error> {
    let mut out = String::new();
    let Some(final_state) = view.final_state() else {
        return Ok(out);
    };
    let final_state = final_state as i32;
    if !view.state_arcs(final_state as usize).is_empty() {
        return Err(Error::NotOpenFstExpressible {
            state: final_state,
            reason: "the final state has leaving arcs",
        });
    }
    // states no arc line mentions are written as non-final (cost Infinity) so they survive
    let mut mentioned = vec![false; final_state as usize + 1];
    for arc in view.arcs {
        if arc.label != -1 {
            mentioned[arc.src_state as usize] = true;
            mentioned[arc.dest_state as usize] = true;
        }
    }
    for (state, &is_mentioned) in mentioned.iter().enumerate().take(final_state as usize) {
        let mut final_line = None;
        for arc_idx in view.arc_range(state) {
            let arc = view.arcs[arc_idx];
            let into_final = arc.dest_state == final_state;
            if into_final != (arc.label == -1) {
                return Err(Error::NotOpenFstExpressible {
                    state: state as i32,
                    reason: "label -1 must be exactly on the arcs entering the final state",
                });
            }
            if into_final {
                if final_line.is_some() {
                    return Err(Error::NotOpenFstExpressible {
                        state: state as i32,
                        reason: "more than one arc enters the final state from this state",
                    });
                }
                if cols.aux.iter().any(|c| c[arc_idx] != -1) {
                    return Err(Error::NotOpenFstExpressible {
                        state: state as i32,
                        reason: "an arc entering the final state has an aux label other than -1",
                    });
                }
                // a final line has no labels: a ragged list on this arc would be lost
                let has_list = cols.ragged.iter().any(|(splits, values)| {
                    let base = splits[0];
                    values[(splits[arc_idx] - base) as usize..(splits[arc_idx + 1] - base) as usize]
                        .iter()
                        .any(|&v| v != -1)
                });
                if has_list {
                    return Err(Error::NotOpenFstExpressible {
                        state: state as i32,
                        reason: "an arc entering the final state has ragged labels other than -1",
                    });
                }
                final_line = Some(negate(arc.score));
                continue;
            }
            let _ = write!(out, "{} {} {}", arc.src_state, arc.dest_state, arc.label);
            write_labels(&mut out, cols, arc_idx);
            let cost = negate(arc.score);
            if cost != 0.0 {
                let _ = write!(out, " {}", super::ShortScore(cost));
            }
            out.push('\n');
        }
        match final_line {
            Some(cost) if cost != 0.0 => {
                let _ = writeln!(out, "{state} {}", super::ShortScore(cost));
            }
            Some(_) => {
                let _ = writeln!(out, "{state}");
            }
            // the first line names the start state: state 0 needs one even when an arc
            // mentions it, if it has no line of its own
            None if !is_mentioned || (state == 0 && out.is_empty()) => {
                let _ = writeln!(out, "{state} Infinity");
            }
            None => {}
        }
    }
    Ok(out)
}
