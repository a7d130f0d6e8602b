//! Kaldi's text form of vectors and matrices: `[ 1 2 3 ]` and `[\n  1 2\n  3 4 ]`.
//!
//! `Display` writes it (shortest round-trip digits); `FromStr` reads it back, with rows on
//! separate lines as Kaldi writes them, `inf`/`nan` accepted.

use std::str::FromStr;

use crate::{Error, Matrix, Real, Vector};

/// The text between `[` and `]`, or the error naming what is missing.
fn brackets(s: &str) -> Result<&str, Error> {
    let t = s.trim();
    let inner = t.strip_prefix('[').ok_or(Error::Parse {
        line: 1,
        token: t.split_whitespace().next().unwrap_or("").to_string(),
        reason: "expected `[`",
    })?;
    inner.strip_suffix(']').ok_or(Error::Parse {
        line: t.lines().count().max(1),
        token: t.split_whitespace().last().unwrap_or("").to_string(),
        reason: "expected `]` at the end",
    })
}

fn parse_row<R: Real>(line: &str, line_no: usize) -> Result<Vec<R>, Error> {
    line.split_whitespace()
        .map(|tok| {
            tok.parse::<f64>()
                .map(R::from_f64)
                .map_err(|_| Error::Parse {
                    line: line_no,
                    token: tok.to_string(),
                    reason: "not a number",
                })
        })
        .collect()
}

impl<R: Real> FromStr for Vector<R> {
    type Err = Error;

    /// Reads Kaldi's text form `[ 1 2 3 ]`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let inner = brackets(s)?;
        let mut data = Vec::new();
        for (i, line) in inner.lines().enumerate() {
            data.extend(parse_row::<R>(line, i + 1)?);
        }
        Ok(Vector::from_vec(data))
    }
}

impl<R: Real> FromStr for Matrix<R> {
    type Err = Error;

    /// Reads Kaldi's text form: `[`, one row per line, `]` (`[ ]` is the empty matrix).
    fn from_str(s: &str) -> Result<Self, Error> {
        let inner = brackets(s)?;
        let mut rows: Vec<Vec<R>> = Vec::new();
        for (i, line) in inner.lines().enumerate() {
            let row = parse_row::<R>(line, i + 1)?;
            if row.is_empty() {
                continue;
            }
            if let Some(first) = rows.first() {
                if first.len() != row.len() {
                    return Err(Error::Parse {
                        line: i + 1,
                        token: format!("{} numbers", row.len()),
                        reason: "a row's length differs from the first row's",
                    });
                }
            }
            rows.push(row);
        }
        Ok(Matrix::from_rows(&rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_parse_round_trip() {
        let m = Matrix::from_rows(&[[1.5f64, -2.0, 1e-300], [f64::INFINITY, 0.1, 3.0]]);
        let back: Matrix<f64> = m.to_string().parse().unwrap();
        assert!(back == m);
        let v = Vector::from_vec(vec![0.1f32, -7.25, 3.0e30]);
        let back: Vector<f32> = v.to_string().parse().unwrap();
        assert!(back == v);
        assert_eq!("[ ]".parse::<Matrix<f64>>().unwrap().shape(), (0, 0));
        assert_eq!(
            "[\n  1 2\n  3 4 ]".parse::<Matrix<f32>>().unwrap()[(1, 0)],
            3.0
        );
    }

    #[test]
    fn parse_errors_name_line_and_token() {
        let err = "[\n  1 2\n  3 x ]".parse::<Matrix<f64>>().unwrap_err();
        assert_eq!(err.to_string(), "line 3: `x`: not a number");
        let err = "[\n  1 2\n  3 ]".parse::<Matrix<f64>>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 3: `1 numbers`: a row's length differs from the first row's"
        );
        let err = "1 2 ]".parse::<Vector<f64>>().unwrap_err();
        assert_eq!(err.to_string(), "line 1: `1`: expected `[`");
    }
}
