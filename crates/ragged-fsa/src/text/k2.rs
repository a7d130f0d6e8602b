//! k2's text format: `src dest label [aux ..] [[ragged ..] ..] [score]` per arc, grouped by
//! source state, and the final state alone on the last line.

use std::fmt::Write as _;

use super::{
    empty_parsed, parse_arc_line, parse_err, parse_state, push_ragged, state_budget, tokenize_into,
    write_labels, ArcLine, Columns, ParsedText, TextFormat, Token,
};
use crate::arc::Arc;
use crate::error::{Error, ParseProblem};
use crate::view::FsaView;

/// Reads k2 text (see [`TextFormat`]).
pub(crate) fn parse_k2(s: &str, format: &TextFormat) -> Result<ParsedText, Error> {
    let mut out = empty_parsed(format);
    let mut arc_lines = Vec::new();
    let mut final_state: Option<(i32, usize)> = None;
    let mut last_line = 0;
    let mut previous_src: Option<i32> = None;
    let mut tokens = Vec::new();
    let mut arc = ArcLine::new(format);
    for (idx, raw) in s.lines().enumerate() {
        let line = idx + 1;
        tokenize_into(raw, &mut tokens);
        if tokens.is_empty() {
            continue;
        }
        last_line = line;
        if final_state.is_some() {
            return Err(parse_err(line, ParseProblem::AfterFinalLine));
        }
        if tokens.len() == 1 {
            if let Token::Word(w) = tokens[0] {
                final_state = Some((parse_state(w, line)?, line));
                continue;
            }
        }
        parse_arc_line(&tokens, format, line, &mut arc)?;
        if let Some(previous) = previous_src {
            if arc.src < previous {
                return Err(parse_err(
                    line,
                    ParseProblem::UnsortedSource {
                        src: arc.src,
                        previous,
                    },
                ));
            }
        }
        previous_src = Some(arc.src);
        out.arcs
            .push(Arc::new(arc.src, arc.dest, arc.label, arc.weight));
        for (column, value) in out.aux.iter_mut().zip(&arc.aux) {
            column.push(*value);
        }
        push_ragged(&mut out.ragged, &arc.ragged);
        arc_lines.push(line);
    }
    if last_line == 0 {
        return Ok(out);
    }
    let Some((final_state, final_line)) = final_state else {
        return Err(parse_err(last_line, ParseProblem::MissingFinalLine));
    };
    for (arc, &line) in out.arcs.iter().zip(&arc_lines) {
        if arc.src_state >= final_state {
            return Err(parse_err(
                line,
                ParseProblem::SrcNotBeforeFinal {
                    src: arc.src_state,
                    final_state,
                },
            ));
        }
        if arc.dest_state > final_state {
            return Err(parse_err(
                line,
                ParseProblem::DestBeyondFinal {
                    dest: arc.dest_state,
                    final_state,
                },
            ));
        }
        if arc.label == -1 && arc.dest_state != final_state {
            return Err(parse_err(
                line,
                ParseProblem::MinusOneNotFinal {
                    dest: arc.dest_state,
                    final_state,
                },
            ));
        }
    }
    if final_state as usize >= state_budget(s.len()) {
        return Err(parse_err(
            final_line,
            ParseProblem::TooManyStates {
                state: final_state as i64,
            },
        ));
    }
    out.num_states = final_state as usize + 1;
    Ok(out)
}

/// Writes k2 text: one line per arc, then the final state; `""` for an empty FSA.
pub(crate) fn write_k2(view: FsaView<'_>, cols: &Columns<'_>) -> String {
    let mut out = String::new();
    let Some(final_state) = view.final_state() else {
        return out;
    };
    for (arc_idx, arc) in view.arcs.iter().enumerate() {
        let _ = write!(out, "{} {} {}", arc.src_state, arc.dest_state, arc.label);
        write_labels(&mut out, cols, arc_idx);
        let _ = writeln!(out, " {}", super::ShortScore(arc.score));
    }
    let _ = writeln!(out, "{final_state}");
    out
}
