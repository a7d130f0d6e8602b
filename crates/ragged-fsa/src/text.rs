//! Reading and writing FSAs as text: k2's format (`src dest label [aux..] [ragged..] score`,
//! last line the final state) and OpenFst's (`src dest ilabel [olabel..] [cost]`, final lines
//! `state [cost]`, any order).

use std::fmt::Write as _;

use crate::arc::Arc;
use crate::error::{Error, ParseProblem};
use crate::view::FsaView;

/// Which text format, and which per-arc label columns follow the label.
///
/// A line holds `src dest label`, then one integer per name in `aux_label_names`, then one
/// bracketed list (`[1 2 3]`, `[]`) per name in `ragged_label_names`, then the score (k2) or
/// cost (OpenFst), which may be left out (0).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextFormat {
    /// Names of the plain integer label columns (k2: `aux_labels`, `aux_labels2`, ...).
    pub aux_label_names: Vec<String>,
    /// Names of the ragged label columns.
    pub ragged_label_names: Vec<String>,
    /// OpenFst text (costs, final lines with weights) instead of k2 text.
    pub openfst: bool,
}

impl TextFormat {
    /// k2 acceptor text: `src dest label score`.
    pub fn acceptor() -> Self {
        Self::default()
    }

    /// k2 transducer text: `src dest label aux_label score` (column named `aux_labels`).
    pub fn transducer() -> Self {
        Self {
            aux_label_names: vec!["aux_labels".to_string()],
            ..Self::default()
        }
    }

    /// `n` plain aux-label columns named as k2 names them: `aux_labels`, `aux_labels2`, ...
    pub fn with_num_aux_labels(n: usize) -> Self {
        let names = (0..n)
            .map(|i| {
                if i == 0 {
                    "aux_labels".to_string()
                } else {
                    format!("aux_labels{}", i + 1)
                }
            })
            .collect();
        Self {
            aux_label_names: names,
            ..Self::default()
        }
    }

    /// Adds ragged label columns with these names.
    pub fn ragged(mut self, names: &[&str]) -> Self {
        self.ragged_label_names = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Switches to OpenFst text.
    pub fn openfst(mut self) -> Self {
        self.openfst = true;
        self
    }
}

/// Parsed text as plain vectors.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ParsedText {
    pub(crate) num_states: usize,
    pub(crate) arcs: Vec<Arc>,
    pub(crate) aux: Vec<Vec<i32>>,
    /// (row_splits, values) per ragged column.
    pub(crate) ragged: Vec<(Vec<i32>, Vec<i32>)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Open,
    Close,
}

fn tokenize(line: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    for word in line.split_whitespace() {
        let mut rest = word;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('[') {
                tokens.push(Token::Open);
                rest = r;
            } else if let Some(r) = rest.strip_prefix(']') {
                tokens.push(Token::Close);
                rest = r;
            } else {
                let end = rest.find(['[', ']']).unwrap_or(rest.len());
                tokens.push(Token::Word(&rest[..end]));
                rest = &rest[end..];
            }
        }
    }
    tokens
}

struct ArcLine {
    src: i32,
    dest: i32,
    label: i32,
    aux: Vec<i32>,
    ragged: Vec<Vec<i32>>,
    weight: f32,
}

fn parse_err(line: usize, problem: ParseProblem) -> Error {
    Error::Parse { line, problem }
}

fn parse_int(token: &str, field: &'static str, line: usize) -> Result<i32, Error> {
    token.parse::<i32>().map_err(|_| {
        parse_err(
            line,
            ParseProblem::BadNumber {
                token: token.to_string(),
                field,
            },
        )
    })
}

fn parse_state(token: &str, line: usize) -> Result<i32, Error> {
    match token.parse::<i64>() {
        Ok(v) if v < 0 => Err(parse_err(line, ParseProblem::NegativeState { state: v })),
        Ok(v) if v >= i32::MAX as i64 => {
            Err(parse_err(line, ParseProblem::TooManyStates { state: v }))
        }
        Ok(v) => Ok(v as i32),
        Err(_) => Err(parse_err(
            line,
            ParseProblem::BadNumber {
                token: token.to_string(),
                field: "state",
            },
        )),
    }
}

fn parse_weight(token: &str, field: &'static str, line: usize) -> Result<f32, Error> {
    token.parse::<f32>().map_err(|_| {
        parse_err(
            line,
            ParseProblem::BadNumber {
                token: token.to_string(),
                field,
            },
        )
    })
}

fn expected_fields(format: &TextFormat) -> String {
    let mut s = String::from("src dest label");
    for name in &format.aux_label_names {
        let _ = write!(s, " {name}");
    }
    for name in &format.ragged_label_names {
        let _ = write!(s, " [{name}]");
    }
    s.push_str(if format.openfst {
        " [cost]"
    } else {
        " [score]"
    });
    s
}

fn count_words(tokens: &[Token<'_>]) -> usize {
    tokens
        .iter()
        .filter(|t| matches!(t, Token::Word(_)))
        .count()
}

fn parse_arc_line(
    tokens: &[Token<'_>],
    format: &TextFormat,
    line: usize,
) -> Result<ArcLine, Error> {
    let wrong_count = || {
        parse_err(
            line,
            ParseProblem::WrongFieldCount {
                found: count_words(tokens),
                expected: expected_fields(format),
            },
        )
    };
    let mut pos = 0;
    let next_word = |pos: &mut usize| -> Result<&str, Error> {
        match tokens.get(*pos) {
            Some(Token::Word(w)) => {
                *pos += 1;
                Ok(w)
            }
            Some(_) => Err(parse_err(
                line,
                ParseProblem::Brackets {
                    detail: "a ragged list where a plain field belongs",
                },
            )),
            None => Err(wrong_count()),
        }
    };
    let src = parse_state(next_word(&mut pos)?, line)?;
    let dest = parse_state(next_word(&mut pos)?, line)?;
    let label = parse_int(next_word(&mut pos)?, "label", line)?;
    let mut aux = Vec::with_capacity(format.aux_label_names.len());
    for _ in &format.aux_label_names {
        aux.push(parse_int(next_word(&mut pos)?, "aux label", line)?);
    }
    let mut ragged = Vec::with_capacity(format.ragged_label_names.len());
    for _ in &format.ragged_label_names {
        match tokens.get(pos) {
            Some(Token::Open) => pos += 1,
            Some(_) => {
                return Err(parse_err(
                    line,
                    ParseProblem::Brackets {
                        detail: "expected a ragged list like [1 2]",
                    },
                ))
            }
            None => return Err(wrong_count()),
        }
        let mut list = Vec::new();
        loop {
            match tokens.get(pos) {
                Some(Token::Word(w)) => {
                    list.push(parse_int(w, "ragged label", line)?);
                    pos += 1;
                }
                Some(Token::Close) => {
                    pos += 1;
                    break;
                }
                Some(Token::Open) => {
                    return Err(parse_err(
                        line,
                        ParseProblem::Brackets { detail: "nested [" },
                    ))
                }
                None => {
                    return Err(parse_err(
                        line,
                        ParseProblem::Brackets {
                            detail: "[ without ]",
                        },
                    ))
                }
            }
        }
        ragged.push(list);
    }
    let field = if format.openfst { "cost" } else { "score" };
    let weight = match tokens.get(pos) {
        None => 0.0,
        Some(Token::Word(w)) => {
            pos += 1;
            parse_weight(w, field, line)?
        }
        Some(_) => {
            return Err(parse_err(
                line,
                ParseProblem::Brackets {
                    detail: "an unexpected bracket",
                },
            ))
        }
    };
    if pos != tokens.len() {
        if tokens[pos..].iter().any(|t| !matches!(t, Token::Word(_))) {
            return Err(parse_err(
                line,
                ParseProblem::Brackets {
                    detail: "an unexpected bracket",
                },
            ));
        }
        return Err(wrong_count());
    }
    Ok(ArcLine {
        src,
        dest,
        label,
        aux,
        ragged,
        weight,
    })
}

fn push_ragged(ragged: &mut [(Vec<i32>, Vec<i32>)], lists: Vec<Vec<i32>>) {
    for ((splits, values), list) in ragged.iter_mut().zip(lists) {
        values.extend(list);
        splits.push(values.len() as i32);
    }
}

fn empty_parsed(format: &TextFormat) -> ParsedText {
    ParsedText {
        num_states: 0,
        arcs: Vec::new(),
        aux: vec![Vec::new(); format.aux_label_names.len()],
        ragged: vec![(vec![0], Vec::new()); format.ragged_label_names.len()],
    }
}

/// The largest number of states a text of `len` bytes may ask for.
fn state_budget(len: usize) -> usize {
    (64 * len).max(1 << 20)
}

/// Reads k2 text (see [`TextFormat`]).
pub(crate) fn parse_k2(s: &str, format: &TextFormat) -> Result<ParsedText, Error> {
    let mut out = empty_parsed(format);
    let mut arc_lines = Vec::new();
    let mut final_state: Option<(i32, usize)> = None;
    let mut last_line = 0;
    let mut previous_src: Option<i32> = None;
    for (idx, raw) in s.lines().enumerate() {
        let line = idx + 1;
        let tokens = tokenize(raw);
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
        let arc = parse_arc_line(&tokens, format, line)?;
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
        push_ragged(&mut out.ragged, arc.ragged);
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

/// Negates a weight, turning `-0.0` into `0.0` so that costs and scores of zero print as `0`.
#[inline]
fn negate(x: f32) -> f32 {
    -x + 0.0
}

/// Reads OpenFst text (see [`TextFormat`]); several final states become `-1` arcs into one
/// new final state numbered after all others; the start state (the first line's source) is
/// swapped with state 0 when it is not 0.
pub(crate) fn parse_openfst(s: &str, format: &TextFormat) -> Result<ParsedText, Error> {
    struct Line {
        arc: ArcLine,
    }
    let mut arcs: Vec<Line> = Vec::new();
    let mut finals: Vec<(i32, f32, usize)> = Vec::new();
    let mut start: Option<i32> = None;
    let mut max_state: i32 = -1;
    let mut max_state_line = 1;
    for (idx, raw) in s.lines().enumerate() {
        let line = idx + 1;
        let tokens = tokenize(raw);
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
        let arc = parse_arc_line(&tokens, format, line)?;
        if arc.label == -1 || arc.aux.contains(&-1) {
            return Err(parse_err(line, ParseProblem::MinusOneLabel));
        }
        start.get_or_insert(arc.src);
        if arc.src.max(arc.dest) > max_state {
            max_state = arc.src.max(arc.dest);
            max_state_line = line;
        }
        arcs.push(Line { arc });
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
    for l in &arcs {
        counts[renumber(l.arc.src) as usize + 1] += 1;
    }
    for i in 0..num_states {
        counts[i + 1] += counts[i];
    }
    let mut order = vec![0usize; arcs.len()];
    let mut fill = counts.clone();
    for (i, l) in arcs.iter().enumerate() {
        let s = renumber(l.arc.src) as usize;
        order[fill[s]] = i;
        fill[s] += 1;
    }
    let mut out = empty_parsed(format);
    out.num_states = num_states;
    let num_aux = format.aux_label_names.len();
    let num_ragged = format.ragged_label_names.len();
    for state in 0..num_states {
        for &i in &order[counts[state]..counts[state + 1]] {
            let a = &arcs[i].arc;
            out.arcs.push(Arc::new(
                state as i32,
                renumber(a.dest),
                a.label,
                negate(a.weight),
            ));
            for (column, value) in out.aux.iter_mut().zip(&a.aux) {
                column.push(*value);
            }
            push_ragged(&mut out.ragged, a.ragged.clone());
        }
        if let Some(cost) = final_of[state] {
            out.arcs
                .push(Arc::new(state as i32, super_final, -1, negate(cost)));
            for column in out.aux.iter_mut() {
                column.push(-1);
            }
            push_ragged(&mut out.ragged, vec![Vec::new(); num_ragged]);
        }
    }
    debug_assert_eq!(out.aux.len(), num_aux);
    Ok(out)
}

/// Per-arc label columns handed to the writers.
pub(crate) struct Columns<'a> {
    pub(crate) aux: Vec<&'a [i32]>,
    /// (row_splits, values) per ragged column.
    pub(crate) ragged: Vec<(&'a [i32], &'a [i32])>,
}

fn write_labels(out: &mut String, cols: &Columns<'_>, arc_idx: usize) {
    for column in &cols.aux {
        let _ = write!(out, " {}", column[arc_idx]);
    }
    for (splits, values) in &cols.ragged {
        let base = splits[0];
        let list =
            &values[(splits[arc_idx] - base) as usize..(splits[arc_idx + 1] - base) as usize];
        out.push_str(" [");
        for (k, v) in list.iter().enumerate() {
            if k > 0 {
                out.push(' ');
            }
            let _ = write!(out, "{v}");
        }
        out.push(']');
    }
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
        let _ = writeln!(out, " {}", arc.score);
    }
    let _ = writeln!(out, "{final_state}");
    out
}

/// Writes OpenFst text: per state its arcs, then its final line if it has a `-1` arc.
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
                final_line = Some(negate(arc.score));
                continue;
            }
            let _ = write!(out, "{} {} {}", arc.src_state, arc.dest_state, arc.label);
            write_labels(&mut out, cols, arc_idx);
            let cost = negate(arc.score);
            if cost != 0.0 {
                let _ = write!(out, " {cost}");
            }
            out.push('\n');
        }
        match final_line {
            Some(cost) if cost != 0.0 => {
                let _ = writeln!(out, "{state} {cost}");
            }
            Some(_) => {
                let _ = writeln!(out, "{state}");
            }
            None if !is_mentioned => {
                let _ = writeln!(out, "{state} Infinity");
            }
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn err_of(s: &str, format: &TextFormat) -> (usize, ParseProblem) {
        let result = if format.openfst {
            parse_openfst(s, format)
        } else {
            parse_k2(s, format)
        };
        match result {
            Err(Error::Parse { line, problem }) => (line, problem),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn tokenizer_splits_brackets() {
        assert_eq!(
            tokenize(" 0 1\t2 [11 12] []"),
            vec![
                Token::Word("0"),
                Token::Word("1"),
                Token::Word("2"),
                Token::Open,
                Token::Word("11"),
                Token::Word("12"),
                Token::Close,
                Token::Open,
                Token::Close
            ]
        );
    }

    #[test]
    fn k2_errors_name_the_line() {
        let acc = TextFormat::acceptor();
        assert_eq!(
            err_of("0 1 1 0.5\n1 5 -1 0\n2\n", &acc),
            (
                2,
                ParseProblem::DestBeyondFinal {
                    dest: 5,
                    final_state: 2
                }
            )
        );
        assert_eq!(
            err_of("0 1 -1 0.5\n1 2 -1 0\n2\n", &acc),
            (
                1,
                ParseProblem::MinusOneNotFinal {
                    dest: 1,
                    final_state: 2
                }
            )
        );
        assert_eq!(
            err_of("0 1 1 0.5\n1 2 -1 0\n", &acc),
            (2, ParseProblem::MissingFinalLine)
        );
        assert_eq!(
            err_of("0 1 x 0.5\n1\n", &acc),
            (
                1,
                ParseProblem::BadNumber {
                    token: "x".into(),
                    field: "label"
                }
            )
        );
        assert_eq!(err_of("0 1 1 0.5\n\n1 2 3 4 5\n2\n", &acc).0, 3);
        assert_eq!(
            err_of("1 2 1 0\n0 2 -1 0\n2\n", &acc),
            (
                2,
                ParseProblem::UnsortedSource {
                    src: 0,
                    previous: 1
                }
            )
        );
        assert_eq!(
            err_of("0 1 -1 0\n1\n0 1 -1 0\n", &acc),
            (3, ParseProblem::AfterFinalLine)
        );
        assert_eq!(
            err_of("0 1 1 0 [3]\n1\n", &acc).1,
            ParseProblem::Brackets {
                detail: "an unexpected bracket"
            }
        );
        let ragged = TextFormat::acceptor().ragged(&["r"]);
        assert_eq!(
            err_of("0 1 1 [3\n1\n", &ragged).1,
            ParseProblem::Brackets {
                detail: "[ without ]"
            }
        );
    }

    #[test]
    fn absurd_state_numbers_are_refused_before_allocating() {
        let acc = TextFormat::acceptor();
        assert_eq!(
            err_of("0 1 1 0\n2000000000\n", &acc),
            (2, ParseProblem::TooManyStates { state: 2000000000 })
        );
        assert_eq!(
            err_of("0 3000000000 1 0\n1\n", &acc),
            (1, ParseProblem::TooManyStates { state: 3000000000 })
        );
        let fst = TextFormat::acceptor().openfst();
        assert_eq!(
            err_of("0 1 2\n1\n900000000 0.5\n", &fst),
            (3, ParseProblem::TooManyStates { state: 900000000 })
        );
        // a million states are fine even for a short text
        assert_eq!(parse_k2("0 1 -1 0\n1\n", &acc).unwrap().num_states, 2);
        assert!(parse_k2("0 999999 -1 0\n999999\n", &acc).is_ok());
    }

    #[test]
    fn openfst_rejects_minus_one_and_double_finals() {
        let fst = TextFormat::acceptor().openfst();
        assert_eq!(
            err_of("0 1 -1 0.5\n1\n", &fst),
            (1, ParseProblem::MinusOneLabel)
        );
        assert_eq!(
            err_of("0 1 2\n1\n1 0.5\n", &fst),
            (3, ParseProblem::FinalTwice { state: 1 })
        );
    }

    #[test]
    fn openfst_reads_finals_into_one_final_state() {
        // k2's docs example: several final states with costs
        let s = "0 1 2 -1.2\n0 2 10 -2.2\n1 6 1 -3.2\n1 3 3 -4.2\n2 6 2 -5.2\n2 4 2 -6.2\n3 6 3 -7.2\n5 0 1 -8.2\n7\n6 -9.2\n";
        let p = parse_openfst(s, &TextFormat::acceptor().openfst()).unwrap();
        assert_eq!(p.num_states, 9);
        let arcs: Vec<(i32, i32, i32, f32)> = p
            .arcs
            .iter()
            .map(|a| (a.src_state, a.dest_state, a.label, a.score))
            .collect();
        assert_eq!(
            arcs,
            vec![
                (0, 1, 2, 1.2),
                (0, 2, 10, 2.2),
                (1, 6, 1, 3.2),
                (1, 3, 3, 4.2),
                (2, 6, 2, 5.2),
                (2, 4, 2, 6.2),
                (3, 6, 3, 7.2),
                (5, 0, 1, 8.2),
                (6, 8, -1, 9.2),
                (7, 8, -1, 0.0)
            ]
        );
    }

    #[test]
    fn openfst_infinite_final_cost_means_not_final() {
        let p = parse_openfst(
            "0 1 5\n1 Infinity\n2 inf\n0 0.5\n",
            &TextFormat::acceptor().openfst(),
        )
        .unwrap();
        assert_eq!(p.num_states, 4);
        assert_eq!(
            p.arcs,
            vec![Arc::new(0, 1, 5, 0.0), Arc::new(0, 3, -1, -0.5)]
        );
    }

    #[test]
    fn openfst_start_state_is_swapped_to_zero() {
        let p = parse_openfst("2 0 5 0.5\n0 1\n", &TextFormat::acceptor().openfst()).unwrap();
        // start 2 <-> 0: arc 0 -> 2 label 5, state 2 final
        assert_eq!(p.num_states, 4);
        assert_eq!(
            p.arcs,
            vec![Arc::new(0, 2, 5, -0.5), Arc::new(2, 3, -1, -1.0)]
        );
    }
}
