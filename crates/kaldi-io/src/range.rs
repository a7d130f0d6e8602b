//! Kaldi's `[...]` ranges on scp entries (`ExtractRangeSpecifier`,
//! `ParseMatrixRangeSpecifier`): `feats.ark:12[0:9]`, `[0:9,3:5]`, `[:,3:5]`.

/// Kaldi's `ExtractRangeSpecifier`: `file[range]` with exactly one `[` splits into the
/// file and the range.
pub(crate) fn split_range(rest: &str) -> Option<(&str, &str)> {
    let inner = rest.strip_suffix(']')?;
    let (file, range) = inner.split_once('[')?;
    if file.is_empty() || range.is_empty() || range.contains('[') {
        return None;
    }
    Some((file, range))
}

/// `a:b` (both inclusive) or `:` for everything.
fn parse_pair(part: &str, len: usize) -> Result<Option<(i64, i64)>, String> {
    if part == ":" {
        return Ok(None);
    }
    let (a, b) = part
        .split_once(':')
        .ok_or_else(|| format!("`{part}` is not `first:last`"))?;
    let parse = |s: &str| {
        s.parse::<i32>()
            .map(i64::from)
            .map_err(|_| format!("`{s}` in `{part}` is not an integer"))
    };
    let _ = len;
    Ok(Some((parse(a)?, parse(b)?)))
}

/// Kaldi's `ParseMatrixRangeSpecifier`: `r0:r1` or `r0:r1,c0:c1` (either may be `:`),
/// inclusive; the last row may lie up to 3 past the matrix's last row (Kaldi's tolerance
/// for frame rounding; the result is clipped to the matrix). Returns (row0, rows, col0, cols).
pub(crate) fn parse_matrix_range(
    range: &str,
    rows: usize,
    cols: usize,
) -> Result<(usize, usize, usize, usize), String> {
    let parts: Vec<&str> = range.split(',').collect();
    if parts.len() > 2 || parts.iter().any(|p| p.is_empty()) {
        return Err("expected `r0:r1` or `r0:r1,c0:c1`".to_string());
    }
    let (rows_i, cols_i) = (rows as i64, cols as i64);
    let (r0, r1) = parse_pair(parts[0], rows)?.unwrap_or((0, rows_i - 1));
    let (c0, c1) = match parts.get(1) {
        Some(p) => parse_pair(p, cols)?.unwrap_or((0, cols_i - 1)),
        None => (0, cols_i - 1),
    };
    const LENGTH_TOLERANCE: i64 = 3;
    if !(r0 >= 0 && r0 <= r1 && r1 < rows_i + LENGTH_TOLERANCE && r0 < rows_i) {
        return Err(format!("rows {r0}:{r1} do not fit a matrix of {rows} rows"));
    }
    if !(c0 >= 0 && c0 <= c1 && c1 < cols_i) {
        return Err(format!(
            "columns {c0}:{c1} do not fit a matrix of {cols} columns"
        ));
    }
    let last_row = r1.min(rows_i - 1);
    Ok((
        r0 as usize,
        (last_row - r0 + 1) as usize,
        c0 as usize,
        (c1 - c0 + 1) as usize,
    ))
}

/// Kaldi's vector range `i:j` (inclusive) or `:`, with the same tolerance of up to 3
/// past the last element as rows have (clipped). Returns (start, len).
pub(crate) fn parse_vector_range(range: &str, dim: usize) -> Result<(usize, usize), String> {
    if range.contains(',') {
        return Err("a vector range is `first:last`, without a `,`".to_string());
    }
    let dim_i = dim as i64;
    let (a, b) = parse_pair(range, dim)?.unwrap_or((0, dim_i - 1));
    const LENGTH_TOLERANCE: i64 = 3;
    if !(a >= 0 && a <= b && b < dim_i + LENGTH_TOLERANCE && a < dim_i) {
        return Err(format!(
            "elements {a}:{b} do not fit a vector of dimension {dim}"
        ));
    }
    Ok((a as usize, (b.min(dim_i - 1) - a + 1) as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_file_and_range() {
        assert_eq!(split_range("a.ark:12[0:9]"), Some(("a.ark:12", "0:9")));
        assert_eq!(
            split_range("a.ark:12[0:9,1:2]"),
            Some(("a.ark:12", "0:9,1:2"))
        );
        assert_eq!(split_range("a.ark:12[]"), None);
        assert_eq!(split_range("[0:1]"), None);
        assert_eq!(split_range("a[b[0:1]"), None);
        assert_eq!(split_range("a.ark"), None);
    }

    #[track_caller]
    fn check(range: &str, shape: (usize, usize), want: Result<(usize, usize, usize, usize), &str>) {
        assert_eq!(
            parse_matrix_range(range, shape.0, shape.1),
            want.map_err(str::to_string)
        );
    }

    #[test]
    fn matrix_ranges_follow_kaldi() {
        check("0:2", (10, 6), Ok((0, 3, 0, 6)));
        check("3:9,1:4", (10, 6), Ok((3, 7, 1, 4)));
        check(":,0:5", (10, 6), Ok((0, 10, 0, 6)));
        check("2:4,:", (10, 6), Ok((2, 3, 0, 6)));
        // up to three rows past the last are tolerated and clipped
        check("8:11", (10, 6), Ok((8, 2, 0, 6)));
        check("8:12", (10, 6), Ok((8, 2, 0, 6)));
        check(
            "8:13",
            (10, 6),
            Err("rows 8:13 do not fit a matrix of 10 rows"),
        );
        check(
            "10:11",
            (10, 6),
            Err("rows 10:11 do not fit a matrix of 10 rows"),
        );
        check(
            "3:2",
            (10, 6),
            Err("rows 3:2 do not fit a matrix of 10 rows"),
        );
        check(
            "-1:2",
            (10, 6),
            Err("rows -1:2 do not fit a matrix of 10 rows"),
        );
        check(
            "0:1,2:6",
            (10, 6),
            Err("columns 2:6 do not fit a matrix of 6 columns"),
        );
        check(",2:2", (10, 6), Err("expected `r0:r1` or `r0:r1,c0:c1`"));
        check("1:2,", (10, 6), Err("expected `r0:r1` or `r0:r1,c0:c1`"));
        check(
            "1:2,3:4,5:6",
            (10, 6),
            Err("expected `r0:r1` or `r0:r1,c0:c1`"),
        );
        check("0", (10, 6), Err("`0` is not `first:last`"));
        check("0:x", (10, 6), Err("`x` in `0:x` is not an integer"));
        assert_eq!(parse_vector_range("1:3", 5), Ok((1, 3)));
        assert_eq!(parse_vector_range(":", 5), Ok((0, 5)));
        assert_eq!(parse_vector_range("1:7", 5), Ok((1, 4)));
        assert_eq!(
            parse_vector_range("1:8", 5),
            Err("elements 1:8 do not fit a vector of dimension 5".to_string())
        );
        assert_eq!(
            parse_vector_range("5:6", 5),
            Err("elements 5:6 do not fit a vector of dimension 5".to_string())
        );
        assert_eq!(
            parse_vector_range("0:1,2:3", 5),
            Err("a vector range is `first:last`, without a `,`".to_string())
        );
    }
}
