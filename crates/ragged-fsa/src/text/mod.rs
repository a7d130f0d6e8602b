//! Reading and writing FSAs as text: k2's format (`src dest label [aux..] [ragged..] score`,
//! last line the final state) and OpenFst's (`src dest ilabel [olabel..] [cost]`, final lines
//! `state [cost]`, any order).

use std::fmt::Write as _;

use crate::arc::Arc;
use crate::error::{Error, ParseProblem};

mod k2;
mod openfst;

pub(crate) use k2::{parse_k2, write_k2};
pub(crate) use openfst::{parse_openfst, write_openfst};

/// A score as text in the shortest form that reads back to the same `f32`: the fewest
/// digits that round-trip (Rust's formatting), positional for `1e-4 <= |x| < 1e16` and with
/// an exponent outside that range (`-4.440892e-16`, not `-0.0000000000000004440892`), the
/// rule of Python's `repr`; `0`, `-0`, `inf`, `-inf` and `NaN` as Rust prints them.
pub(crate) struct ShortScore(pub(crate) f32);

impl std::fmt::Display for ShortScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        let magnitude = x.abs();
        if x.is_finite() && x != 0.0 && !(1e-4..1e16).contains(&magnitude) {
            write!(f, "{x:e}")
        } else {
            write!(f, "{x}")
        }
    }
}

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
pub(super) enum Token<'a> {
    Word(&'a str),
    Open,
    Close,
}

/// The tokens of `line` into `tokens` (cleared first): words split at whitespace, and `[`
/// and `]` as tokens of their own wherever they stand.
pub(super) fn tokenize_into<'a>(line: &'a str, tokens: &mut Vec<Token<'a>>) {
    tokens.clear();
    if line.is_ascii() {
        // the common case, byte by byte: the ASCII characters `char::is_whitespace` takes
        // are tab, line feed, vertical tab, form feed, carriage return and space
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\t'..=b'\r' | b' ' => i += 1,
                b'[' => {
                    tokens.push(Token::Open);
                    i += 1;
                }
                b']' => {
                    tokens.push(Token::Close);
                    i += 1;
                }
                _ => {
                    let start = i;
                    while i < bytes.len() && !matches!(bytes[i], b'\t'..=b'\r' | b' ' | b'[' | b']')
                    {
                        i += 1;
                    }
                    // both ends are at ASCII bytes, so on character boundaries
                    tokens.push(Token::Word(&line[start..i]));
                }
            }
        }
        return;
    }
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
}

pub(super) struct ArcLine {
    pub(super) src: i32,
    pub(super) dest: i32,
    pub(super) label: i32,
    pub(super) aux: Vec<i32>,
    pub(super) ragged: Vec<Vec<i32>>,
    pub(super) weight: f32,
}

pub(super) fn parse_err(line: usize, problem: ParseProblem) -> Error {
    Error::Parse { line, problem }
}

pub(super) fn parse_int(token: &str, field: &'static str, line: usize) -> Result<i32, Error> {
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

pub(super) fn parse_state(token: &str, line: usize) -> Result<i32, Error> {
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

pub(super) fn parse_weight(token: &str, field: &'static str, line: usize) -> Result<f32, Error> {
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

impl ArcLine {
    /// An empty line to parse into, with one list per ragged column of `format`.
    pub(super) fn new(format: &TextFormat) -> Self {
        Self {
            src: 0,
            dest: 0,
            label: 0,
            aux: Vec::with_capacity(format.aux_label_names.len()),
            ragged: vec![Vec::new(); format.ragged_label_names.len()],
            weight: 0.0,
        }
    }
}

/// Parses an arc line's tokens into `arc` (its lists reused: cleared, then filled).
pub(super) fn parse_arc_line(
    tokens: &[Token<'_>],
    format: &TextFormat,
    line: usize,
    arc: &mut ArcLine,
) -> Result<(), Error> {
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
    arc.aux.clear();
    for _ in &format.aux_label_names {
        arc.aux
            .push(parse_int(next_word(&mut pos)?, "aux label", line)?);
    }
    debug_assert_eq!(arc.ragged.len(), format.ragged_label_names.len());
    for list in arc.ragged.iter_mut() {
        list.clear();
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
    arc.src = src;
    arc.dest = dest;
    arc.label = label;
    arc.weight = weight;
    Ok(())
}

/// Appends one list per ragged column: the `c`-th of `lists` to column `c`'s (row_splits,
/// values).
pub(super) fn push_ragged<L: AsRef<[i32]>>(
    ragged: &mut [(Vec<i32>, Vec<i32>)],
    lists: impl IntoIterator<Item = L>,
) {
    for ((splits, values), list) in ragged.iter_mut().zip(lists) {
        values.extend_from_slice(list.as_ref());
        splits.push(values.len() as i32);
    }
}

pub(super) fn empty_parsed(format: &TextFormat) -> ParsedText {
    ParsedText {
        num_states: 0,
        arcs: Vec::new(),
        aux: vec![Vec::new(); format.aux_label_names.len()],
        ragged: vec![(vec![0], Vec::new()); format.ragged_label_names.len()],
    }
}

/// The largest number of states a text of `len` bytes may ask for.
pub(super) fn state_budget(len: usize) -> usize {
    (64 * len).max(1 << 20)
}

/// Per-arc label columns handed to the writers.
pub(crate) struct Columns<'a> {
    pub(crate) aux: Vec<&'a [i32]>,
    /// (row_splits, values) per ragged column.
    pub(crate) ragged: Vec<(&'a [i32], &'a [i32])>,
}

pub(super) fn write_labels(out: &mut String, cols: &Columns<'_>, arc_idx: usize) {
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

#[cfg(test)]
mod tests {
    #[test]
    fn scores_print_short_and_read_back() {
        use super::ShortScore;
        let check = |x: f32, expected: &str| {
            let text = ShortScore(x).to_string();
            assert_eq!(text, expected, "{x:?}");
            let back: f32 = text.parse().unwrap();
            assert!(
                back.to_bits() == x.to_bits() || (x.is_nan() && back.is_nan()),
                "{x:?}"
            );
        };
        check(-4.440_892e-16, "-4.440892e-16");
        check(0.1, "0.1");
        check(-0.5, "-0.5");
        check(0.0001, "0.0001");
        check(0.000_099_999_99, "9.999999e-5");
        check(1e-5, "1e-5");
        check(123.25, "123.25");
        check(1e15, "1000000000000000");
        check(1e16, "1e16");
        check(-3.4028235e38, "-3.4028235e38");
        check(f32::MIN_POSITIVE, "1.1754944e-38");
        check(1e-45, "1e-45");
        check(0.0, "0");
        check(-0.0, "-0");
        check(f32::INFINITY, "inf");
        check(f32::NEG_INFINITY, "-inf");
        check(f32::NAN, "NaN");
        // every value of a sweep reads back bit for bit, and is never longer than the
        // plain form
        let mut x = 1e-30_f32;
        while x < 1e30 {
            for v in [x, -x, x * 1.000_001] {
                let text = ShortScore(v).to_string();
                assert_eq!(text.parse::<f32>().unwrap().to_bits(), v.to_bits(), "{v:?}");
                assert!(text.len() <= v.to_string().len(), "{v:?}: {text}");
            }
            x *= 3.7;
        }
    }

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

    fn tokenize(line: &str) -> Vec<Token<'_>> {
        let mut tokens = Vec::new();
        tokenize_into(line, &mut tokens);
        tokens
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
    fn tokenizer_agrees_with_a_char_by_char_model_on_ascii_and_other_lines() {
        // the model: whitespace (as `char::is_whitespace` says) ends a word, a bracket ends
        // one and is a token itself, anything else extends the word
        fn model(line: &str) -> Vec<Token<'_>> {
            let mut tokens = Vec::new();
            let mut start = None;
            for (i, c) in line.char_indices() {
                if c.is_whitespace() || c == '[' || c == ']' {
                    if let Some(s) = start.take() {
                        tokens.push(Token::Word(&line[s..i]));
                    }
                    match c {
                        '[' => tokens.push(Token::Open),
                        ']' => tokens.push(Token::Close),
                        _ => {}
                    }
                } else if start.is_none() {
                    start = Some(i);
                }
            }
            if let Some(s) = start {
                tokens.push(Token::Word(&line[s..]));
            }
            tokens
        }
        // every ASCII whitespace character (vertical tab and form feed too), brackets, and,
        // for the general path, non-ASCII whitespace and letters
        let ascii = [
            '0', '7', '-', '.', 'e', 'x', ' ', '\t', '\n', '\x0b', '\x0c', '\r', '[', ']',
        ];
        let other = ['\u{a0}', '\u{2003}', '\u{3000}', 'é', '中', '\u{85}'];
        let mut state = 11u64;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % n
        };
        for round in 0..4_000 {
            let len = next(16);
            let line: String = (0..len)
                .map(|_| {
                    if round % 2 == 1 && next(4) == 0 {
                        other[next(other.len())]
                    } else {
                        ascii[next(ascii.len())]
                    }
                })
                .collect();
            assert_eq!(tokenize(&line), model(&line), "{line:?}");
        }
        // the buffer is cleared between lines
        let mut tokens = Vec::new();
        tokenize_into("1 2 3", &mut tokens);
        tokenize_into("[4]", &mut tokens);
        assert_eq!(tokens, vec![Token::Open, Token::Word("4"), Token::Close]);
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
