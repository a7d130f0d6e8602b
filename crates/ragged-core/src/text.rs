//! k2's text form of ragged arrays and shapes: `[ [ 1 2 ] [ 3 ] ]`, `[ [ x x ] [ x ] ]`.

use crate::error::Error;

/// One token: `[`, `]`, or a leaf word, with its byte position.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Open,
    Close,
    Leaf(&'a str),
}

fn tokenize(text: &str) -> Vec<(usize, Token<'_>)> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
        } else if c == b'[' {
            tokens.push((i, Token::Open));
            i += 1;
        } else if c == b']' {
            tokens.push((i, Token::Close));
            i += 1;
        } else {
            let start = i;
            while i < bytes.len()
                && !bytes[i].is_ascii_whitespace()
                && !matches!(bytes[i], b'[' | b']' | b',')
            {
                i += 1;
            }
            tokens.push((start, Token::Leaf(&text[start..i])));
        }
    }
    tokens
}

fn found(text: &str, position: usize) -> String {
    match text[position..].chars().next() {
        Some(c) => format!("'{c}'"),
        None => "end of input".to_string(),
    }
}

/// The parsed structure: `row_splits` per axis (1..num_axes) and the leaves with positions.
pub(crate) struct Parsed<'a> {
    pub(crate) row_splits: Vec<Vec<i32>>,
    pub(crate) leaves: Vec<(usize, &'a str)>,
}

/// Parses k2's nested-bracket form; the number of axes is the deepest bracket nesting, except
/// that `[ ]` is, as in k2, an empty array of 2 axes.
///
/// Leaves (numbers, or `x` for shapes) may only appear in the innermost lists, and lists of
/// every other depth hold only lists. Commas are accepted as separators.
pub(crate) fn parse_nested(text: &str) -> Result<Parsed<'_>, Error> {
    let tokens = tokenize(text);
    // Pass 1: the deepest nesting and bracket balance.
    let mut depth = 0usize;
    let mut max_depth = 0usize;
    let mut closed_top = false;
    for &(pos, tok) in &tokens {
        if closed_top {
            return Err(Error::Parse {
                position: pos,
                expected: "end of input after the outermost ']'",
                found: found(text, pos),
            });
        }
        match tok {
            Token::Open => {
                depth += 1;
                max_depth = max_depth.max(depth);
            }
            Token::Close => {
                if depth == 0 {
                    return Err(Error::Parse {
                        position: pos,
                        expected: "'['",
                        found: found(text, pos),
                    });
                }
                depth -= 1;
                if depth == 0 {
                    closed_top = true;
                }
            }
            Token::Leaf(_) => {
                if depth == 0 {
                    return Err(Error::Parse {
                        position: pos,
                        expected: "'['",
                        found: found(text, pos),
                    });
                }
            }
        }
    }
    if tokens.is_empty() {
        return Err(Error::Parse {
            position: text.len(),
            expected: "'['",
            found: "end of input".to_string(),
        });
    }
    if depth != 0 {
        return Err(Error::Parse {
            position: text.len(),
            expected: "']'",
            found: "end of input".to_string(),
        });
    }
    if max_depth == 1 && tokens.len() == 2 {
        // `[ ]`: k2 reads an empty outer list as an empty array of 2 axes (dim0 0), the form
        // it prints for one, so an empty batch round-trips.
        return Ok(Parsed {
            row_splits: vec![vec![0]],
            leaves: Vec::new(),
        });
    }
    if max_depth < 2 {
        return Err(Error::TooFewAxes {
            got: max_depth,
            min: 2,
        });
    }
    // Pass 2: build row_splits. Lists at depth d (2..=max_depth) are rows of axis d - 1.
    let num_axes = max_depth;
    let mut row_splits: Vec<Vec<i32>> = (1..num_axes).map(|_| vec![0i32]).collect();
    // counts[d] = lists opened so far at depth d; leaves counted separately.
    let mut counts = vec![0usize; num_axes + 2];
    let mut leaves = Vec::new();
    let mut depth = 0usize;
    for &(pos, tok) in &tokens {
        match tok {
            Token::Open => {
                if depth == num_axes {
                    unreachable!("depth never exceeds the maximum");
                }
                depth += 1;
                counts[depth] += 1;
                // A list at depth `depth` (>= 3) is an element of a list at depth - 1,
                // which must not already hold leaves; leaves only sit at depth num_axes.
            }
            Token::Close => {
                if depth >= 2 {
                    let inner = if depth == num_axes {
                        leaves.len()
                    } else {
                        counts[depth + 1]
                    };
                    let value = i32::try_from(inner).map_err(|_| Error::Overflow {
                        what: "the number of parsed elements",
                        value: inner as u64,
                    })?;
                    row_splits[depth - 2].push(value);
                }
                depth -= 1;
            }
            Token::Leaf(word) => {
                if depth != num_axes {
                    return Err(Error::Parse {
                        position: pos,
                        expected: "'[' or ']' (elements belong in the innermost lists)",
                        found: found(text, pos),
                    });
                }
                leaves.push((pos, word));
            }
        }
    }
    Ok(Parsed { row_splits, leaves })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(text: &str, splits: &[&[i32]], leaves: &[&str]) {
        let p = parse_nested(text).unwrap();
        let got: Vec<&[i32]> = p.row_splits.iter().map(|v| &v[..]).collect();
        assert_eq!(got, splits);
        let words: Vec<&str> = p.leaves.iter().map(|l| l.1).collect();
        assert_eq!(words, leaves);
    }

    #[test]
    fn parses_k2_forms() {
        check("[ [ x x ] [ x ] ]", &[&[0, 2, 3]], &["x", "x", "x"]);
        check("[[1 2] [3]]", &[&[0, 2, 3]], &["1", "2", "3"]);
        check("[ [ ] ]", &[&[0, 0]], &[]);
        check("[ [ [ 1 ] ] [ ] ]", &[&[0, 1, 1], &[0, 1]], &["1"]);
        check("[ [ [ ] [ 5 ] ] ]", &[&[0, 2], &[0, 0, 1]], &["5"]);
    }

    #[test]
    fn leaves_outside_innermost_lists_are_errors() {
        assert_eq!(
            parse_nested("[ [ 1 ] [ [ 2 ] ] ]").err(),
            Some(Error::Parse {
                position: 4,
                expected: "'[' or ']' (elements belong in the innermost lists)",
                found: "'1'".into()
            })
        );
        assert!(matches!(
            parse_nested("[ [ 1 ]"),
            Err(Error::Parse { position: 7, .. })
        ));
        assert!(matches!(
            parse_nested("[ [ 1 ] ] ]"),
            Err(Error::Parse { position: 10, .. })
        ));
    }

    #[test]
    fn empty_outer_list_is_an_empty_array_of_two_axes() {
        // k2 1.23.2 reads `[ ]` (and `[]`) as 2 axes with dim0 0
        check("[ ]", &[&[0]], &[]);
        check("[]", &[&[0]], &[]);
        check(" [ , ] ", &[&[0]], &[]);
        // a flat list of elements is still one axis too few, as in k2
        assert_eq!(
            parse_nested("[ 1 2 ]").err(),
            Some(Error::TooFewAxes { got: 1, min: 2 })
        );
        assert_eq!(
            parse_nested("").err(),
            Some(Error::Parse {
                position: 0,
                expected: "'['",
                found: "end of input".into()
            })
        );
    }
}
