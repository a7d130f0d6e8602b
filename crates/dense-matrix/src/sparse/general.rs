//! Kaldi's free functions on general matrices (`sparse-matrix.h`): `AppendGeneralMatrixRows`,
//! the row filters `FilterSparseMatrixRows`, `FilterMatrixRows`,
//! `FilterCompressedMatrixRows`, `FilterGeneralMatrixRows`, and
//! `ExtractRowRangeWithPadding`.

use super::{GeneralMatrix, SparseMatrix};
use crate::error::dim_mismatch;
use crate::{CompressedMatrix, Error, Matrix, MatrixBase, Real, StrideType};

/// Kaldi's `AppendGeneralMatrixRows(src, mat)`: the rows of all `src`, in order, in one
/// matrix. The result is [`GeneralMatrix::Sparse`] when every input is sparse or has no
/// rows, else [`GeneralMatrix::Full`] (never compressed: compressed inputs are
/// decompressed). No inputs give the empty full matrix.
///
/// # Errors
/// [`Error::AppendDim`] if two inputs with rows differ in their column count (inputs
/// without rows may have any); [`Error::EmptyDimension`] if the full result would have rows
/// but no columns.
#[allow(
    clippy::missing_panics_doc,
    reason = "a full result is built only when some input has rows, which set the column count"
)]
pub fn append_general_matrix_rows<R: Real>(
    src: &[&GeneralMatrix<R>],
) -> Result<GeneralMatrix<R>, Error> {
    if src.is_empty() {
        return Ok(GeneralMatrix::Full(Matrix::empty()));
    }
    let all_sparse = src
        .iter()
        .all(|m| matches!(m, GeneralMatrix::Sparse(_)) || m.num_rows() == 0);
    if all_sparse {
        let inputs = src
            .iter()
            .map(|m| match m {
                GeneralMatrix::Sparse(s) => s.clone(),
                other => SparseMatrix::new(0, other.num_cols()),
            })
            .collect();
        return SparseMatrix::append_sparse_matrix_rows(inputs).map(GeneralMatrix::Sparse);
    }
    let mut num_cols: Option<usize> = None;
    let mut total_rows = 0usize;
    for (input, m) in src.iter().enumerate() {
        if m.num_rows() == 0 {
            continue;
        }
        // the inputs exist in memory, so their row counts cannot overflow in sum
        total_rows += m.num_rows();
        match num_cols {
            None => num_cols = Some(m.num_cols()),
            Some(expected) if expected != m.num_cols() => {
                return Err(Error::AppendDim {
                    input,
                    cols: m.num_cols(),
                    expected,
                })
            }
            Some(_) => {}
        }
    }
    let num_cols = num_cols.expect("a non-sparse input has rows");
    let mut out = Matrix::try_new(total_rows, num_cols, StrideType::Default)?;
    let mut row_offset = 0;
    for m in src {
        match m {
            GeneralMatrix::Full(full) => copy_rows(&mut out, row_offset, full),
            GeneralMatrix::Compressed(c) if c.num_rows() != 0 => {
                copy_rows(&mut out, row_offset, &c.to_matrix::<R>())
            }
            GeneralMatrix::Compressed(_) => {}
            GeneralMatrix::Sparse(s) => {
                for (r, row) in s.rows.iter().enumerate() {
                    let dst = out.row_data_mut(row_offset + r);
                    for &(c, v) in &row.pairs {
                        dst[c] = v;
                    }
                }
            }
        }
        row_offset += m.num_rows();
    }
    Ok(GeneralMatrix::Full(out))
}

/// Copies the rows of `src` into `out` from row `row_offset` on (same column count).
fn copy_rows<R: Real>(out: &mut MatrixBase<R>, row_offset: usize, src: &MatrixBase<R>) {
    for (r, row) in src.rows().enumerate() {
        out.row_data_mut(row_offset + r).copy_from_slice(row);
    }
}

/// The number of kept rows; panics if the mask's length is not `num_rows`, and is
/// [`Error::NoKeptRows`] if it keeps none (Kaldi asserts the one and fails on the other).
#[track_caller]
fn count_kept(op: &'static str, num_rows: usize, keep_rows: &[bool]) -> Result<usize, Error> {
    if keep_rows.len() != num_rows {
        dim_mismatch(
            op,
            "keep_rows length",
            keep_rows.len(),
            "num_rows",
            num_rows,
        );
    }
    match keep_rows.iter().filter(|&&k| k).count() {
        0 => Err(Error::NoKeptRows { op, num_rows }),
        kept => Ok(kept),
    }
}

/// Kaldi's `FilterSparseMatrixRows(in, keep_rows, out)`: the rows `r` of `input` with
/// `keep_rows[r]`, in order.
///
/// # Errors
/// [`Error::NoKeptRows`] if `keep_rows` keeps no row.
///
/// # Panics
/// If `keep_rows.len() != input.num_rows()`.
#[track_caller]
pub fn filter_sparse_matrix_rows<R: Real>(
    input: &SparseMatrix<R>,
    keep_rows: &[bool],
) -> Result<SparseMatrix<R>, Error> {
    count_kept("filter_sparse_matrix_rows", input.num_rows(), keep_rows)?;
    let rows = input
        .rows
        .iter()
        .zip(keep_rows)
        .filter(|(_, &keep)| keep)
        .map(|(row, _)| row.clone())
        .collect();
    Ok(SparseMatrix {
        cols: input.cols,
        rows,
    })
}

/// Kaldi's `FilterMatrixRows(in, keep_rows, out)`: the rows `r` of `input` with
/// `keep_rows[r]`, in order.
///
/// # Errors
/// [`Error::NoKeptRows`] if `keep_rows` keeps no row.
///
/// # Panics
/// If `keep_rows.len() != input.num_rows()`.
#[track_caller]
pub fn filter_matrix_rows<R: Real>(
    input: &MatrixBase<R>,
    keep_rows: &[bool],
) -> Result<Matrix<R>, Error> {
    let kept = count_kept("filter_matrix_rows", input.num_rows(), keep_rows)?;
    Ok(filter_rows(input, keep_rows, kept))
}

/// The kept rows of `input`, `kept >= 1` of them.
fn filter_rows<R: Real>(input: &MatrixBase<R>, keep_rows: &[bool], kept: usize) -> Matrix<R> {
    let mut out = Matrix::new(kept, input.num_cols());
    let kept_rows = input.rows().zip(keep_rows).filter(|(_, &keep)| keep);
    for (out_row, (row, _)) in kept_rows.enumerate() {
        out.row_data_mut(out_row).copy_from_slice(row);
    }
    out
}

/// Kaldi's `FilterCompressedMatrixRows(in, keep_rows, out)`: the kept rows of `input`,
/// decompressed. As Kaldi, it decompresses only the kept rows when fewer than a third are
/// kept, else the whole matrix; the values are the same either way.
///
/// # Errors
/// [`Error::NoKeptRows`] if `keep_rows` keeps no row.
///
/// # Panics
/// If `keep_rows.len() != input.num_rows()`.
#[track_caller]
pub fn filter_compressed_matrix_rows<R: Real>(
    input: &CompressedMatrix,
    keep_rows: &[bool],
) -> Result<Matrix<R>, Error> {
    let kept = count_kept("filter_compressed_matrix_rows", input.num_rows(), keep_rows)?;
    // Kaldi's heuristic: decompressing row by row reads across the column-major bytes
    if kept as f64 > 0.33 * input.num_rows() as f64 {
        return Ok(filter_rows(&input.to_matrix::<R>(), keep_rows, kept));
    }
    let num_cols = input.num_cols();
    let mut out = Matrix::new(kept, num_cols);
    let kept_rows = (0..input.num_rows()).filter(|&r| keep_rows[r]);
    for (out_row, in_row) in kept_rows.enumerate() {
        let row = input.to_matrix_range::<R>(in_row, 1, 0, num_cols);
        out.row_data_mut(out_row).copy_from_slice(row.row_data(0));
    }
    Ok(out)
}

/// Kaldi's `FilterGeneralMatrixRows(in, keep_rows, out)`: the kept rows of `input`. When
/// every row is kept the result is a copy of `input` (a compressed matrix stays
/// compressed); otherwise a sparse input gives a sparse result and a full or compressed
/// one a full result, as in Kaldi.
///
/// # Errors
/// [`Error::NoKeptRows`] if `keep_rows` keeps no row.
///
/// # Panics
/// If `keep_rows.len() != input.num_rows()`.
#[track_caller]
pub fn filter_general_matrix_rows<R: Real>(
    input: &GeneralMatrix<R>,
    keep_rows: &[bool],
) -> Result<GeneralMatrix<R>, Error> {
    let kept = count_kept("filter_general_matrix_rows", input.num_rows(), keep_rows)?;
    if kept == keep_rows.len() {
        return Ok(input.clone());
    }
    Ok(match input {
        GeneralMatrix::Full(m) => GeneralMatrix::Full(filter_rows(m, keep_rows, kept)),
        GeneralMatrix::Sparse(s) => GeneralMatrix::Sparse(filter_sparse_matrix_rows(s, keep_rows)?),
        GeneralMatrix::Compressed(c) => {
            GeneralMatrix::Full(filter_compressed_matrix_rows(c, keep_rows)?)
        }
    })
}

/// Kaldi's `ExtractRowRangeWithPadding(in, row_offset, num_rows, out)`: rows
/// `row_offset .. row_offset + num_rows` of `input`, where a row before the first repeats
/// the first row and one after the last repeats the last. The result has `input`'s type;
/// a compressed input is cut from its codes without re-compressing
/// ([`CompressedMatrix::from_range`]). `num_rows == 0` gives the empty full matrix.
///
/// # Errors
/// [`Error::PadEmptyMatrix`] if `num_rows > 0` and `input` has no rows;
/// [`Error::SizeOverflow`] or [`Error::HeaderSizeOverflow`] if the result's size overflows.
pub fn extract_row_range_with_padding<R: Real>(
    input: &GeneralMatrix<R>,
    row_offset: i32,
    num_rows: usize,
) -> Result<GeneralMatrix<R>, Error> {
    if num_rows == 0 {
        return Ok(GeneralMatrix::Full(Matrix::empty()));
    }
    let num_rows_in = input.num_rows();
    if num_rows_in == 0 {
        return Err(Error::PadEmptyMatrix {
            num_rows,
            row_offset,
        });
    }
    let last = num_rows_in as i64 - 1;
    let source_row = |r: usize| (i64::from(row_offset) + r as i64).clamp(0, last) as usize;
    Ok(match input {
        GeneralMatrix::Full(m) => {
            let mut out = Matrix::try_new(num_rows, m.num_cols(), StrideType::Default)?;
            for r in 0..num_rows {
                out.row_data_mut(r)
                    .copy_from_slice(m.row_data(source_row(r)));
            }
            GeneralMatrix::Full(out)
        }
        GeneralMatrix::Sparse(s) => GeneralMatrix::Sparse(SparseMatrix {
            cols: s.cols,
            rows: (0..num_rows)
                .map(|r| s.rows[source_row(r)].clone())
                .collect(),
        }),
        GeneralMatrix::Compressed(c) => GeneralMatrix::Compressed(CompressedMatrix::from_range(
            c,
            row_offset,
            num_rows,
            0,
            c.num_cols(),
            true,
        )?),
    })
}
