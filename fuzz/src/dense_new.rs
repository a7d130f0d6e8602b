//! dense-matrix's validating constructors: `MatrixView::from_slice`, `Matrix::from_vec` and
//! `Matrix::try_new` with sizes from the bytes (edge sizes included), each accepted exactly
//! when a naive model of Kaldi's rules says so, and every element of an accepted matrix read
//! back and compared with the buffer.

use dense_matrix::{Matrix, MatrixView, StrideType};

use crate::Bytes;

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 4096;

/// `Matrix::try_new` is called only up to this many elements (larger sizes are legitimate
/// allocations, not bugs).
const MAX_NEW: usize = 1 << 16;

/// The first three size fields (rows, cols, stride), then the elements, one byte each.
pub fn dense_new(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let mut bytes = Bytes::new(data);
    let (rows, cols, stride) = (size(&mut bytes), size(&mut bytes), size(&mut bytes));
    let elements: Vec<f32> = bytes.rest().iter().map(|&b| f32::from(b as i8)).collect();
    view(&elements, rows, cols, stride);
    from_vec(elements, rows, cols);
    try_new(rows, cols);
}

/// A size: mostly small, sometimes one of the values where products wrap.
fn size(bytes: &mut Bytes<'_>) -> usize {
    match bytes.byte() {
        0xff => usize::MAX,
        0xfe => 1 << 32,
        0xfd => (1 << 62) + 1,
        0xfc => 1 << 63,
        b => usize::from(b % 32),
    }
}

fn view(elements: &[f32], rows: usize, cols: usize, stride: usize) {
    // The model: a view needs both sizes zero or both non-zero, `stride >= cols`, and
    // `(rows - 1) * stride + cols` elements.
    let needed = if rows == 0 {
        Some(0)
    } else {
        (rows - 1)
            .checked_mul(stride)
            .and_then(|n| n.checked_add(cols))
    };
    // a size whose product overflows must be refused (issue 17, item 1: it used to wrap)
    let valid = needed.is_some_and(|needed| {
        (rows == 0) == (cols == 0) && stride >= cols && needed <= elements.len()
    });
    match MatrixView::from_slice(elements, rows, cols, stride) {
        Ok(view) => {
            assert!(
                valid,
                "accepted a {rows} x {cols} view, stride {stride}, over {} elements",
                elements.len()
            );
            assert_eq!((view.num_rows(), view.num_cols()), (rows, cols));
            for r in 0..rows {
                for c in 0..cols {
                    assert_eq!(view[(r, c)], elements[r * stride + c], "view ({r}, {c})");
                }
            }
        }
        Err(_) => assert!(
            !valid,
            "refused a valid {rows} x {cols} view, stride {stride}, over {} elements",
            elements.len()
        ),
    }
}

fn from_vec(elements: Vec<f32>, rows: usize, cols: usize) {
    // an overflowing product must be refused (issue 17, item 1: `1 << 63` x 2 over no data
    // used to be accepted)
    let valid = rows
        .checked_mul(cols)
        .is_some_and(|product| (rows == 0) == (cols == 0) && elements.len() == product);
    match Matrix::from_vec(rows, cols, elements.clone()) {
        Ok(m) => {
            assert!(
                valid,
                "from_vec accepted {rows} x {cols} over {} elements",
                elements.len()
            );
            for r in 0..rows {
                for c in 0..cols {
                    assert_eq!(m[(r, c)], elements[r * cols + c], "from_vec ({r}, {c})");
                }
            }
        }
        Err(_) => assert!(
            !valid,
            "from_vec refused {rows} x {cols} over {} elements",
            elements.len()
        ),
    }
}

fn try_new(rows: usize, cols: usize) {
    // an overflowing product is refused with `SizeOverflow` (issue 17, item 1: it used to
    // wrap); sizes above the cap are legitimate allocations, so only small ones are built
    if rows.checked_mul(cols).is_none() {
        assert!(
            matches!(
                Matrix::<f64>::try_new(rows, cols, StrideType::Default),
                Err(dense_matrix::Error::SizeOverflow { .. })
            ),
            "try_new({rows}, {cols}) must overflow"
        );
        return;
    }
    if rows.checked_mul(cols).is_none_or(|n| n > MAX_NEW) || cols > MAX_NEW {
        return;
    }
    for stride_type in [StrideType::Default, StrideType::EqualNumCols] {
        match Matrix::<f64>::try_new(rows, cols, stride_type) {
            Ok(m) => {
                assert_eq!((rows == 0), (cols == 0), "try_new accepted {rows} x {cols}");
                assert_eq!((m.num_rows(), m.num_cols()), (rows, cols));
                assert!(
                    m.stride() >= cols,
                    "stride {} below {cols} columns",
                    m.stride()
                );
                for r in 0..rows {
                    for c in 0..cols {
                        assert_eq!(m[(r, c)], 0.0, "try_new ({r}, {c}) is not zero");
                    }
                }
            }
            Err(_) => assert_ne!(rows == 0, cols == 0, "try_new refused {rows} x {cols}"),
        }
    }
}
