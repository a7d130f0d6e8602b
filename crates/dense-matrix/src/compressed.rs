//! Kaldi's `CompressedMatrix`: a float matrix stored in one or two bytes per element.
//!
//! The layout and the arithmetic are Kaldi's (`src/matrix/compressed-matrix.cc`), so a
//! matrix compressed here has the same bytes as Kaldi's for the same input and method, and
//! decompresses to the same floats:
//! - a global header: `min_value`, `range` (`f32`), `num_rows`, `num_cols` (`i32`), and the
//!   format (1, 2 or 3, told by the token `CM `, `CM2 `, `CM3 ` on disk);
//! - format 1 (`SpeechFeature`): per column four 16-bit quantiles of the column (0%, 25%,
//!   75%, 100%), then one byte per element, column by column, interpolating piecewise
//!   linearly between the quantiles (bytes 0..64, 64..192, 192..255);
//! - format 2 (`TwoByte*`): one `u16` per element, row by row, linear over the global range;
//! - format 3 (`OneByte*`): one `u8` per element, row by row, linear over the global range.

use std::io::{BufRead, Write};

use crate::io::{io_err, read_exact_named, read_up_to, READ_CHUNK};
use crate::{Error, Matrix, MatrixBase, Position, Real};

/// Kaldi's `CompressionMethod`; the discriminants are Kaldi's numbers (`--compression-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompressionMethod {
    /// `kAutomaticMethod` (1): `SpeechFeature` above 8 rows, else `TwoByteAuto`.
    #[default]
    Auto = 1,
    /// `kSpeechFeature` (2): per-column quantiles and one byte per element (format 1).
    SpeechFeature = 2,
    /// `kTwoByteAuto` (3): two bytes per element over the matrix's own range.
    TwoByteAuto = 3,
    /// `kTwoByteSignedInteger` (4): two bytes over -32768..=32767 (exact for such integers).
    TwoByteSignedInteger = 4,
    /// `kOneByteAuto` (5): one byte per element over the matrix's own range.
    OneByteAuto = 5,
    /// `kOneByteUnsignedInteger` (6): one byte over 0..=255 (exact for such integers).
    OneByteUnsignedInteger = 6,
    /// `kOneByteZeroOne` (7): one byte over 0..=1 (exact for 0 and 1).
    OneByteZeroOne = 7,
}

impl CompressionMethod {
    /// The method with Kaldi's number `code` (1..=7), as `copy-feats --compression-method`.
    pub fn from_kaldi_code(code: i32) -> Option<Self> {
        use CompressionMethod::*;
        Some(match code {
            1 => Auto,
            2 => SpeechFeature,
            3 => TwoByteAuto,
            4 => TwoByteSignedInteger,
            5 => OneByteAuto,
            6 => OneByteUnsignedInteger,
            7 => OneByteZeroOne,
            _ => return None,
        })
    }

    /// Kaldi's number of this method.
    pub fn kaldi_code(self) -> i32 {
        self as i32
    }
}

/// Kaldi's data formats of a compressed matrix (the `format` field of the global header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `kOneByteWithColHeaders`, token `CM`.
    OneByteWithColHeaders,
    /// `kTwoByte`, token `CM2`.
    TwoByte,
    /// `kOneByte`, token `CM3`.
    OneByte,
}

impl Format {
    fn token(self) -> &'static [u8] {
        match self {
            Format::OneByteWithColHeaders => b"CM ",
            Format::TwoByte => b"CM2 ",
            Format::OneByte => b"CM3 ",
        }
    }
}

/// Kaldi's `CompressedMatrix`: see the module documentation for the layout.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedMatrix {
    format: Format,
    min_value: f32,
    range: f32,
    num_rows: usize,
    num_cols: usize,
    /// Everything after the global header, exactly as Kaldi stores it.
    data: Vec<u8>,
}

/// The widest range of values a matrix may span to be compressed: Kaldi's `CharToFloat`
/// multiplies a gap between percentiles by up to 128 (in `f32`) before scaling it, so a
/// wider range would decompress to infinities. Real features span a few thousand at most.
pub const MAX_RANGE: f32 = f32::MAX / 256.0;

/// Kaldi's `FloatToUint16`: `f32` arithmetic, then `+ 0.499` in `f64` and truncation.
#[inline]
fn float_to_uint16(min_value: f32, range: f32, value: f32) -> u16 {
    let f = ((value - min_value) / range).clamp(0.0, 1.0);
    ((f * 65535.0) as f64 + 0.499) as i32 as u16
}

/// Kaldi's `FloatToUint8`.
#[inline]
fn float_to_uint8(min_value: f32, range: f32, value: f32) -> u8 {
    let f = ((value - min_value) / range).clamp(0.0, 1.0);
    ((f * 255.0) as f64 + 0.499) as i32 as u8
}

/// Kaldi's `Uint16ToFloat`: `min + range * (1/65535 as f32) * value`, all in `f32`.
#[inline]
fn uint16_to_float(min_value: f32, range: f32, value: u16) -> f32 {
    min_value + range * 1.525_902_2e-5_f32 * value as f32
}

/// C++'s `static_cast<int>(double)` as x86-64 executes it (`cvttsd2si`): truncation, and
/// the "integer indefinite" `i32::MIN` for NaN or out-of-range values, where Rust's `as`
/// would saturate. Kaldi reaches that case when two adjacent quantiles decode to the same
/// float (a tiny range far from zero); then its clamps take the segment's lower bound.
#[inline]
fn trunc_i32_like_cpp(x: f64) -> i32 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        x as i32
    } else {
        i32::MIN
    }
}

/// Kaldi's `FloatToChar` for one column: the byte of a value between the column's
/// quantiles `p = [p0, p25, p75, p100]`, bytes 0..=64, 64..=192 and 192..=255 for the three
/// segments. The segment is picked arithmetically, not by branches, so random data does not
/// cost a mispredicted branch per element; each segment's arithmetic is Kaldi's.
struct CharCoder {
    p25: f32,
    p75: f32,
    lo: [f32; 3],
    width: [f32; 3],
    steps: [f32; 3],
    first: [i64; 3],
    last: [i64; 3],
}

impl CharCoder {
    fn new(p: [f32; 4]) -> Self {
        let [p0, p25, p75, p100] = p;
        CharCoder {
            p25,
            p75,
            lo: [p0, p25, p75],
            width: [p25 - p0, p75 - p25, p100 - p75],
            steps: [64.0, 128.0, 63.0],
            first: [0, 64, 192],
            last: [64, 192, 255],
        }
    }

    #[inline]
    fn code(&self, value: f32) -> u8 {
        // Kaldi: `value < p25` -> 0, else `value < p75` -> 1, else 2
        let below_p25 = (value < self.p25) as usize;
        let below_p75 = (value < self.p75) as usize;
        let seg = (1 - below_p25) * (2 - below_p75);
        let f = (value - self.lo[seg]) / self.width[seg];
        let step = trunc_i32_like_cpp((f * self.steps[seg]) as f64 + 0.5) as i64;
        (self.first[seg] + step).clamp(self.first[seg], self.last[seg]) as u8
    }
}

/// Kaldi's `FloatToChar`, as written there (the reference for [`CharCoder`]).
#[cfg(test)]
fn float_to_char(p: [f32; 4], value: f32) -> u8 {
    let [p0, p25, p75, p100] = p;
    let ans = if value < p25 {
        let f = (value - p0) / (p25 - p0);
        (trunc_i32_like_cpp((f * 64.0) as f64 + 0.5) as i64).clamp(0, 64)
    } else if value < p75 {
        let f = (value - p25) / (p75 - p25);
        (64 + trunc_i32_like_cpp((f * 128.0) as f64 + 0.5) as i64).clamp(64, 192)
    } else {
        let f = (value - p75) / (p100 - p75);
        (192 + trunc_i32_like_cpp((f * 63.0) as f64 + 0.5) as i64).clamp(192, 255)
    };
    ans as u8
}

/// Kaldi's `CharToFloat`: `f32` products, then the `f64` scale and sum, rounded to `f32`.
#[inline]
fn char_to_float(p: [f32; 4], value: u8) -> f32 {
    let [p0, p25, p75, p100] = p;
    let v = value as i32;
    if v <= 64 {
        (p0 as f64 + ((p25 - p0) * v as f32) as f64 * (1.0 / 64.0)) as f32
    } else if v <= 192 {
        (p25 as f64 + ((p75 - p25) * (v - 64) as f32) as f64 * (1.0 / 128.0)) as f32
    } else {
        (p75 as f64 + ((p100 - p75) * (v - 192) as f32) as f64 * (1.0 / 63.0)) as f32
    }
}

/// A `u32` whose integer order is the float's total order (sign-magnitude to offset).
#[inline]
fn order_key(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The float whose [`order_key`] is `key`.
#[inline]
fn from_order_key(key: u32) -> f32 {
    if key >> 31 == 1 {
        f32::from_bits(key & 0x7fff_ffff)
    } else {
        f32::from_bits(!key)
    }
}

/// Kaldi's `ComputeColHeader`: the four quantiles of one column as 16-bit codes, each at
/// least one above the previous.
fn column_header(min_value: f32, range: f32, column: &mut [f32]) -> [u16; 4] {
    let n = column.len();
    let code = |x: f32| float_to_uint16(min_value, range, x);
    let p0;
    let p25;
    let p75;
    let p100;
    if n >= 5 {
        let quarter = n / 4;
        // the order statistics Kaldi's nth_element calls pick (any selection gives the
        // same values): the minimum, positions n/4 and 3n/4 in sorted order, the maximum
        let q0 = column.iter().copied().fold(f32::INFINITY, f32::min);
        let q100 = column.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        // select on integer keys in the floats' order: cheaper comparisons than floats'
        let mut keys: Vec<u32> = column.iter().map(|&x| order_key(x)).collect();
        let (_, q25, above) = keys.select_nth_unstable(quarter);
        let q25 = from_order_key(*q25);
        let (_, q75, _) = above.select_nth_unstable(2 * quarter - 1);
        let q75 = from_order_key(*q75);
        p0 = code(q0).min(65532);
        p25 = code(q25).max(p0 + 1).min(65533);
        p75 = code(q75).max(p25 + 1).min(65534);
        p100 = code(q100).max(p75 + 1);
    } else {
        column.sort_unstable_by(f32::total_cmp);
        p0 = code(column[0]).min(65532);
        p25 = if n > 1 {
            code(column[1]).max(p0 + 1).min(65533)
        } else {
            p0 + 1
        };
        p75 = if n > 2 {
            code(column[2]).max(p25 + 1).min(65534)
        } else {
            p25 + 1
        };
        p100 = if n > 3 {
            code(column[3]).max(p75 + 1)
        } else {
            p75 + 1
        };
    }
    [p0, p25, p75, p100]
}

impl CompressedMatrix {
    /// The empty (0 x 0) compressed matrix.
    pub fn empty() -> Self {
        CompressedMatrix {
            format: Format::OneByteWithColHeaders,
            min_value: 0.0,
            range: 0.0,
            num_rows: 0,
            num_cols: 0,
            data: Vec::new(),
        }
    }

    /// Kaldi's `CompressedMatrix(mat, method)` (`CopyFromMat`); a NaN or infinite element
    /// is an error, as Kaldi refuses it.
    pub fn compress<R: Real>(
        matrix: &MatrixBase<R>,
        method: CompressionMethod,
    ) -> Result<Self, Error> {
        let (num_rows, num_cols) = matrix.shape();
        if num_rows == 0 {
            return Ok(Self::empty());
        }
        if i32::try_from(num_rows).is_err() || i32::try_from(num_cols).is_err() {
            // Kaldi's header stores both sizes as int32
            return Err(Error::HeaderSizeOverflow {
                what: "a compressed matrix (Kaldi's header holds int32 sizes)",
                factors: vec![num_rows as u64, num_cols as u64],
            });
        }
        // Kaldi's header holds the minimum and the range as f32: every value must be a
        // finite f32 (an f64 matrix may hold more)
        let (mut lowest, mut highest) = ((f32::INFINITY, (0, 0)), (f32::NEG_INFINITY, (0, 0)));
        for (r, row) in matrix.rows().enumerate() {
            for (c, x) in row.iter().enumerate() {
                let value = x.to_f64() as f32;
                if !value.is_finite() {
                    return Err(Error::CannotCompress {
                        position: Position::Matrix(r, c),
                        value: x.to_f64(),
                    });
                }
                if value < lowest.0 {
                    lowest = (value, (r, c));
                }
                if value > highest.0 {
                    highest = (value, (r, c));
                }
            }
        }
        // ...and small enough that Kaldi's decompression, which multiplies a gap between
        // percentiles by up to 128 before scaling it down, stays finite
        if highest.0 - lowest.0 > MAX_RANGE {
            let (r, c) = highest.1;
            return Err(Error::CannotCompress {
                position: Position::Matrix(r, c),
                value: f64::from(highest.0),
            });
        }
        let method = match method {
            CompressionMethod::Auto if num_rows > 8 => CompressionMethod::SpeechFeature,
            CompressionMethod::Auto => CompressionMethod::TwoByteAuto,
            other => other,
        };
        use CompressionMethod::*;
        let format = match method {
            SpeechFeature => Format::OneByteWithColHeaders,
            TwoByteAuto | TwoByteSignedInteger => Format::TwoByte,
            _ => Format::OneByte,
        };
        let (min_value, range) = match method {
            SpeechFeature | TwoByteAuto | OneByteAuto => {
                let min_value = matrix.min().to_f64() as f32;
                let mut max_value = matrix.max().to_f64() as f32;
                if max_value == min_value {
                    max_value = (min_value as f64 + (1.0 + min_value.abs() as f64)) as f32;
                }
                // a constant matrix near f32::MAX widens its range past what the header
                // (and Kaldi's decompression) can hold: refuse it like any other such range
                let range = max_value - min_value;
                if !range.is_finite() || range > MAX_RANGE {
                    let (r, c) = lowest.1;
                    return Err(Error::CannotCompress {
                        position: Position::Matrix(r, c),
                        value: f64::from(lowest.0),
                    });
                }
                (min_value, range)
            }
            TwoByteSignedInteger => (-32768.0, 65535.0),
            OneByteUnsignedInteger => (0.0, 255.0),
            OneByteZeroOne => (0.0, 1.0),
            Auto => unreachable!("Auto was resolved above"),
        };
        let elements = num_rows * num_cols;
        let data = match format {
            Format::OneByteWithColHeaders => {
                let mut data = vec![0u8; num_cols * 8 + elements];
                let (headers, bytes) = data.split_at_mut(num_cols * 8);
                // the matrix column by column, as f32, gathered in one pass over the rows
                let mut columns = vec![0f32; elements];
                for (r, row) in matrix.rows().enumerate() {
                    for (c, &x) in row.iter().enumerate() {
                        columns[c * num_rows + r] = x.to_f64() as f32;
                    }
                }
                let mut scratch = vec![0f32; num_rows];
                for c in 0..num_cols {
                    let column = &columns[c * num_rows..(c + 1) * num_rows];
                    scratch.copy_from_slice(column);
                    let codes = column_header(min_value, range, &mut scratch);
                    for (k, code) in codes.iter().enumerate() {
                        headers[c * 8 + 2 * k..c * 8 + 2 * k + 2]
                            .copy_from_slice(&code.to_le_bytes());
                    }
                    let coder =
                        CharCoder::new(codes.map(|code| uint16_to_float(min_value, range, code)));
                    let out = &mut bytes[c * num_rows..(c + 1) * num_rows];
                    for (o, &x) in out.iter_mut().zip(column) {
                        *o = coder.code(x);
                    }
                }
                data
            }
            Format::TwoByte => {
                let mut data = Vec::with_capacity(2 * elements);
                for row in matrix.rows() {
                    for &x in row {
                        let code = float_to_uint16(min_value, range, x.to_f64() as f32);
                        data.extend_from_slice(&code.to_le_bytes());
                    }
                }
                data
            }
            Format::OneByte => matrix
                .rows()
                .flat_map(|row| row.iter())
                .map(|&x| float_to_uint8(min_value, range, x.to_f64() as f32))
                .collect(),
        };
        Ok(CompressedMatrix {
            format,
            min_value,
            range,
            num_rows,
            num_cols,
            data,
        })
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// Kaldi's `Scale(alpha)`: every element times `alpha`, by scaling the global header's
    /// offset and range (the codes stay; the column quantiles are relative to them).
    pub fn scale(&mut self, alpha: f32) {
        if self.num_rows != 0 {
            self.min_value *= alpha;
            self.range *= alpha;
        }
    }

    /// Number of columns.
    pub fn num_cols(&self) -> usize {
        self.num_cols
    }

    /// Kaldi's token of the stored format: `CM` (one byte with column headers), `CM2`
    /// (two bytes) or `CM3` (one byte).
    pub fn token(&self) -> &'static str {
        match self.format {
            Format::OneByteWithColHeaders => "CM",
            Format::TwoByte => "CM2",
            Format::OneByte => "CM3",
        }
    }

    /// Kaldi's `CopyToMat`: the decompressed matrix, converted to `R`.
    pub fn to_matrix<R: Real>(&self) -> Matrix<R> {
        self.to_matrix_range(0, self.num_rows, 0, self.num_cols)
    }

    /// Kaldi's `CopyToMat(row_offset, col_offset, dest)`: `num_rows x num_cols` elements
    /// from `(row_offset, col_offset)`, decompressed.
    ///
    /// # Panics
    /// If the window does not lie inside the matrix, or exactly one of its sizes is 0.
    #[track_caller]
    pub fn to_matrix_range<R: Real>(
        &self,
        row_offset: usize,
        num_rows: usize,
        col_offset: usize,
        num_cols: usize,
    ) -> Matrix<R> {
        if row_offset + num_rows > self.num_rows || col_offset + num_cols > self.num_cols {
            crate::error::precondition(&format!(
                "to_matrix_range: rows {row_offset}..{} and columns {col_offset}..{} do not lie \
                 inside a {} x {} compressed matrix",
                row_offset + num_rows,
                col_offset + num_cols,
                self.num_rows,
                self.num_cols
            ));
        }
        if num_rows == 0 || num_cols == 0 {
            return Matrix::new(num_rows, num_cols);
        }
        let mut data = vec![R::ZERO; num_rows * num_cols];
        self.decode_window(row_offset, num_rows, col_offset, num_cols, &mut data);
        Matrix::from_vec(num_rows, num_cols, data).expect("the length is rows * cols")
    }

    /// The whole decompressed matrix, row by row, into `data` (replacing its contents and
    /// reusing its memory: only growth beyond its present length is zeroed first).
    pub(crate) fn decompress_into<R: Real>(&self, data: &mut Vec<R>) {
        let n = self.num_rows * self.num_cols;
        data.truncate(n);
        data.resize(n, R::ZERO);
        if n > 0 {
            self.decode_window(0, self.num_rows, 0, self.num_cols, data);
        }
    }

    /// Decodes the `num_rows x num_cols` window at `(row_offset, col_offset)` into `data`
    /// (`num_rows * num_cols` elements, row-major); the window lies inside the matrix.
    fn decode_window<R: Real>(
        &self,
        row_offset: usize,
        num_rows: usize,
        col_offset: usize,
        num_cols: usize,
        data: &mut [R],
    ) {
        let (min_value, range) = (self.min_value, self.range);
        match self.format {
            Format::OneByteWithColHeaders => {
                let (headers, bytes) = self.data.split_at(self.num_cols * 8);
                // a column's 256 possible values, decoded once: the same floats as
                // decoding each byte, and no branches in the loop over the rows
                let mut table = [R::ZERO; 256];
                for c in 0..num_cols {
                    let col = col_offset + c;
                    let h = &headers[col * 8..col * 8 + 8];
                    let p = [0, 1, 2, 3].map(|k| {
                        let code = u16::from_le_bytes([h[2 * k], h[2 * k + 1]]);
                        uint16_to_float(min_value, range, code)
                    });
                    for (byte, value) in table.iter_mut().enumerate() {
                        *value = R::from_f64(char_to_float(p, byte as u8) as f64);
                    }
                    let start = col * self.num_rows + row_offset;
                    let column = &bytes[start..start + num_rows];
                    for (dst, &b) in data[c..].iter_mut().step_by(num_cols).zip(column) {
                        *dst = table[b as usize];
                    }
                }
            }
            Format::TwoByte => {
                let increment = (range as f64 * (1.0 / 65535.0)) as f32;
                for (r, out_row) in data.chunks_exact_mut(num_cols).enumerate() {
                    let start = 2 * ((row_offset + r) * self.num_cols + col_offset);
                    let src = &self.data[start..start + 2 * num_cols];
                    for (dst, b) in out_row.iter_mut().zip(src.chunks_exact(2)) {
                        let code = u16::from_le_bytes([b[0], b[1]]);
                        *dst = R::from_f64((min_value + code as f32 * increment) as f64);
                    }
                }
            }
            Format::OneByte => {
                let increment = (range as f64 * (1.0 / 255.0)) as f32;
                for (r, out_row) in data.chunks_exact_mut(num_cols).enumerate() {
                    let start = (row_offset + r) * self.num_cols + col_offset;
                    let src = &self.data[start..start + num_cols];
                    for (dst, &code) in out_row.iter_mut().zip(src) {
                        *dst = R::from_f64((min_value + code as f32 * increment) as f64);
                    }
                }
            }
        }
    }

    /// Kaldi's `CompressedMatrix(cmat, row_offset, num_rows, col_offset, num_cols,
    /// allow_padding)`: the `num_rows x num_cols` window of `other` from `(row_offset,
    /// col_offset)`, built from its codes without re-compressing (same format, global header
    /// and column headers, so it decompresses to exactly the window of `other`'s
    /// decompression). With `allow_padding`, rows before the first or after the last
    /// repeat the first or last row. A window with no rows or no columns is the empty matrix.
    ///
    /// Unlike Kaldi, which also asserts `row_offset < other.num_rows()` with padding, any
    /// `row_offset` is accepted with padding (as `extract_row_range_with_padding` does for
    /// full and sparse matrices).
    ///
    /// # Errors
    /// [`Error::HeaderSizeOverflow`] if `num_rows` does not fit Kaldi's `int32` header or
    /// the data size overflows.
    ///
    /// # Panics
    /// If the columns do not lie inside `other`; without `allow_padding`, if the rows do
    /// not; with it, if `other` is empty and the window is not.
    #[track_caller]
    pub fn from_range(
        other: &CompressedMatrix,
        row_offset: i32,
        num_rows: usize,
        col_offset: usize,
        num_cols: usize,
        allow_padding: bool,
    ) -> Result<Self, Error> {
        let (old_rows, old_cols) = (other.num_rows, other.num_cols);
        let cols_inside = col_offset
            .checked_add(num_cols)
            .is_some_and(|end| end <= old_cols);
        let rows_inside = usize::try_from(row_offset).is_ok_and(|start| {
            start
                .checked_add(num_rows)
                .is_some_and(|end| end <= old_rows)
        });
        let empty_window = num_rows == 0 || num_cols == 0;
        if !cols_inside || (!allow_padding && !rows_inside) || (old_rows == 0 && !empty_window) {
            crate::error::precondition(&format!(
                "CompressedMatrix::from_range: {num_rows} rows from row {row_offset} and \
                 {num_cols} columns from column {col_offset} do not lie inside a {old_rows} x \
                 {old_cols} compressed matrix{}",
                if allow_padding {
                    " (rows may be padded, columns may not)"
                } else {
                    ""
                }
            ));
        }
        if empty_window {
            return Ok(Self::empty());
        }
        let overflow = || Error::HeaderSizeOverflow {
            what: "a compressed matrix (Kaldi's header holds int32 sizes)",
            factors: vec![num_rows as u64, num_cols as u64],
        };
        if i32::try_from(num_rows).is_err() {
            return Err(overflow());
        }
        let elements = num_rows.checked_mul(num_cols).ok_or_else(overflow)?;
        // the source row of each output row: padding repeats the first or last row
        let last = old_rows as i64 - 1;
        let source_row = |r: usize| (i64::from(row_offset) + r as i64).clamp(0, last) as usize;
        let data = match other.format {
            Format::OneByteWithColHeaders => {
                let size = num_cols
                    .checked_mul(8)
                    .and_then(|h| h.checked_add(elements))
                    .ok_or_else(overflow)?;
                let mut data = Vec::with_capacity(size);
                let (headers, bytes) = other.data.split_at(old_cols * 8);
                data.extend_from_slice(&headers[col_offset * 8..(col_offset + num_cols) * 8]);
                for col in col_offset..col_offset + num_cols {
                    let column = &bytes[col * old_rows..(col + 1) * old_rows];
                    if rows_inside {
                        let start = row_offset as usize;
                        data.extend_from_slice(&column[start..start + num_rows]);
                    } else {
                        data.extend((0..num_rows).map(|r| column[source_row(r)]));
                    }
                }
                data
            }
            Format::TwoByte | Format::OneByte => {
                let width = if other.format == Format::TwoByte {
                    2
                } else {
                    1
                };
                let size = elements.checked_mul(width).ok_or_else(overflow)?;
                let mut data = Vec::with_capacity(size);
                for r in 0..num_rows {
                    let start = width * (source_row(r) * old_cols + col_offset);
                    data.extend_from_slice(&other.data[start..start + width * num_cols]);
                }
                data
            }
        };
        Ok(CompressedMatrix {
            format: other.format,
            min_value: other.min_value,
            range: other.range,
            num_rows,
            num_cols,
            data,
        })
    }

    /// Kaldi's binary `Write`: the token `CM `, `CM2 ` or `CM3 `, the global header without
    /// its format field, then the data; the empty matrix is `CM ` and 16 zero bytes.
    pub fn write_kaldi(&self, w: &mut impl Write) -> Result<(), Error> {
        let mut head = Vec::with_capacity(20);
        head.extend_from_slice(self.format.token());
        head.extend_from_slice(&self.min_value.to_le_bytes());
        head.extend_from_slice(&self.range.to_le_bytes());
        head.extend_from_slice(&(self.num_rows as i32).to_le_bytes());
        head.extend_from_slice(&(self.num_cols as i32).to_le_bytes());
        w.write_all(&head).map_err(io_err)?;
        w.write_all(&self.data).map_err(io_err)
    }

    /// Kaldi's binary `Read` of a `CM`, `CM2` or `CM3` object. Sizes from the header are
    /// checked and the data is read in bounded pieces.
    #[allow(
        clippy::missing_panics_doc,
        reason = "the format tokens are ASCII constants"
    )]
    pub fn read_kaldi(r: &mut impl BufRead) -> Result<Self, Error> {
        let expected = "the compressed-matrix token `CM `, `CM2 ` or `CM3 `";
        let mut t = [0u8; 3];
        read_exact_named(r, &mut t, || expected.to_string())?;
        let format = match &t {
            b"CM " => Format::OneByteWithColHeaders,
            b"CM2" | b"CM3" => {
                let mut space = [0u8; 1];
                read_exact_named(r, &mut space, || expected.to_string())?;
                if space[0] != b' ' {
                    return Err(Error::Format {
                        expected,
                        found: String::from_utf8_lossy(&[t[0], t[1], t[2], space[0]]).into(),
                    });
                }
                if t[2] == b'2' {
                    Format::TwoByte
                } else {
                    Format::OneByte
                }
            }
            _ => {
                return Err(Error::Format {
                    expected,
                    found: String::from_utf8_lossy(&t).into_owned(),
                })
            }
        };
        let name = std::str::from_utf8(&format.token()[..format.token().len() - 1])
            .expect("tokens are ASCII");
        let mut h = [0u8; 16];
        read_exact_named(r, &mut h, || {
            format!("the header of a `{name}` compressed matrix")
        })?;
        let min_value = f32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let range = f32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        let rows = i32::from_le_bytes([h[8], h[9], h[10], h[11]]);
        let cols = i32::from_le_bytes([h[12], h[13], h[14], h[15]]);
        let num_rows = usize::try_from(rows).map_err(|_| Error::NegativeSize {
            what: "the number of rows of a compressed matrix",
            value: rows,
        })?;
        let num_cols = usize::try_from(cols).map_err(|_| Error::NegativeSize {
            what: "the number of columns of a compressed matrix",
            value: cols,
        })?;
        if num_cols == 0 {
            // Kaldi reads any header with no columns as the empty matrix. Its writer puts
            // 20 bytes after `CM ` for the empty matrix (the format field included) where
            // its reader takes 16: skip the 4 zero bytes it leaves, which can start nothing
            // else (a key, a token or a number).
            if r.fill_buf().map_err(io_err)?.starts_with(&[0, 0, 0, 0]) {
                r.consume(4);
            }
            return Ok(Self::empty());
        }
        // every decompressed value lies between `min_value` and `min_value + range`; Kaldi
        // does not check, and a header whose bounds are not finite decompresses to inf or
        // NaN, which no compression writes and no compression can store again
        if !(min_value.is_finite() && range.is_finite() && (min_value + range).is_finite()) {
            return Err(Error::Format {
                expected: "a compressed-matrix header with a finite minimum and range",
                found: format!("minimum {min_value}, range {range}"),
            });
        }
        check_decoded_extremes(format, min_value, range)?;
        if num_rows == 0 {
            return Err(Error::EmptyDimension {
                rows: num_rows,
                cols: num_cols,
            });
        }
        let overflow = || Error::HeaderSizeOverflow {
            what: "a compressed matrix",
            factors: vec![num_rows as u64, num_cols as u64],
        };
        let elements = num_rows.checked_mul(num_cols).ok_or_else(overflow)?;
        let size = match format {
            Format::OneByteWithColHeaders => num_cols
                .checked_mul(8)
                .and_then(|headers| headers.checked_add(elements)),
            Format::TwoByte => elements.checked_mul(2),
            Format::OneByte => Some(elements),
        }
        .ok_or_else(overflow)?;
        let mut data = Vec::with_capacity(size.min(READ_CHUNK));
        while data.len() < size {
            let start = data.len();
            let piece = (size - start).min(READ_CHUNK);
            data.resize(start + piece, 0);
            let got = read_up_to(r, &mut data[start..])?;
            if got < piece {
                return Err(Error::UnexpectedEnd {
                    reading: format!("the data of a {num_rows} x {num_cols} `{name}` matrix"),
                    needed: size as u64,
                    got: (start + got) as u64,
                });
            }
        }
        if format == Format::OneByteWithColHeaders {
            check_column_headers(min_value, range, &data[..num_cols * 8])?;
        }
        Ok(CompressedMatrix {
            format,
            min_value,
            range,
            num_rows,
            num_cols,
            data,
        })
    }
}

/// The error of a header whose values decode to a float that is not finite.
fn not_finite_decoding(found: String) -> Error {
    Error::Format {
        expected: "a compressed-matrix header whose values all decode to finite floats",
        found,
    }
}

/// Refuses a global header (finite itself) of which some code decodes to inf or NaN, as
/// Kaldi computes the values, in `f32`: `min + code * increment` for `CM2` and `CM3`, the
/// percentiles `min + range / 65535 * code` for `CM`. Each decoding is monotone in the
/// code, so its extremes are those of the smallest and largest codes.
fn check_decoded_extremes(format: Format, min_value: f32, range: f32) -> Result<(), Error> {
    let (code, value) = match format {
        Format::TwoByte => {
            let increment = (range as f64 * (1.0 / 65535.0)) as f32;
            (65535, min_value + 65535.0 * increment)
        }
        Format::OneByte => {
            let increment = (range as f64 * (1.0 / 255.0)) as f32;
            (255, min_value + 255.0 * increment)
        }
        Format::OneByteWithColHeaders => (65535, uint16_to_float(min_value, range, 65535)),
    };
    if value.is_finite() {
        Ok(())
    } else {
        Err(not_finite_decoding(format!(
            "minimum {min_value}, range {range} (code {code} decodes to {value})"
        )))
    }
}

/// Refuses a `CM` column header whose percentiles, or the bytes between them as Kaldi's
/// `CharToFloat` decodes them in `f32`, are not finite (a gap between percentiles times 64,
/// 128 or 63 can overflow). Within each of its three segments the decoding is monotone in
/// the byte, so the bytes at the segments' ends are its extremes.
fn check_column_headers(min_value: f32, range: f32, headers: &[u8]) -> Result<(), Error> {
    for (col, h) in headers.chunks_exact(8).enumerate() {
        let codes = [0, 1, 2, 3].map(|k| u16::from_le_bytes([h[2 * k], h[2 * k + 1]]));
        let p = codes.map(|code| uint16_to_float(min_value, range, code));
        let bad = [0u8, 64, 65, 192, 193, 255]
            .into_iter()
            .map(|byte| (byte, char_to_float(p, byte)))
            .find(|(_, value)| !value.is_finite());
        if let Some((byte, value)) = bad {
            return Err(not_finite_decoding(format!(
                "minimum {min_value}, range {range}, column {col}: percentile codes {codes:?}, \
                 values {p:?} (byte {byte} decodes to {value})"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A 2 x 2 matrix by `TwoByteAuto`, worked by hand from Kaldi's formulas: min -1,
    /// range 4, codes `(x + 1) / 4 * 65535 + 0.499` truncated (1 -> 32767.999 -> 32767).
    #[test]
    fn two_byte_worked_example() {
        let m = Matrix::from_rows(&[[-1.0f32, 3.0], [0.0, 1.0]]);
        let c = CompressedMatrix::compress(&m, CompressionMethod::TwoByteAuto).unwrap();
        let mut bytes = Vec::new();
        c.write_kaldi(&mut bytes).unwrap();
        let mut want = b"CM2 ".to_vec();
        want.extend((-1.0f32).to_le_bytes());
        want.extend(4.0f32.to_le_bytes());
        want.extend(2i32.to_le_bytes());
        want.extend(2i32.to_le_bytes());
        for code in [0u16, 65535, 16384, 32767] {
            want.extend(code.to_le_bytes());
        }
        assert_eq!(bytes, want);
        let back = CompressedMatrix::read_kaldi(&mut &bytes[..]).unwrap();
        assert_eq!(back, c);
        let d = back.to_matrix::<f32>();
        // -1 + code * (4 / 65535), the increment rounded to f32 first
        assert_eq!(d[(0, 0)], -1.0);
        assert_eq!(d[(0, 1)], 3.0);
        assert_eq!(
            d[(1, 0)],
            -1.0 + 16384.0 * (4.0f64 * (1.0 / 65535.0)) as f32
        );
        assert_eq!(
            d[(1, 1)],
            -1.0 + 32767.0 * (4.0f64 * (1.0 / 65535.0)) as f32
        );
    }

    /// A constant matrix gets range 1 + |min| (Kaldi's guard against a zero range).
    #[test]
    fn constant_matrix_and_auto_choice() {
        let m = Matrix::from_rows(&[[2.5f64; 3]; 2]);
        let c = CompressedMatrix::compress(&m, CompressionMethod::Auto).unwrap();
        assert_eq!((c.token(), c.min_value, c.range), ("CM2", 2.5, 3.5));
        let tall = Matrix::<f32>::new(9, 2);
        let c = CompressedMatrix::compress(&tall, CompressionMethod::Auto).unwrap();
        assert_eq!(c.token(), "CM");
        let c = CompressedMatrix::compress(&tall, CompressionMethod::OneByteZeroOne).unwrap();
        assert_eq!((c.token(), c.min_value, c.range), ("CM3", 0.0, 1.0));
        let empty = CompressedMatrix::compress(&Matrix::<f32>::empty(), CompressionMethod::Auto);
        assert_eq!(empty.unwrap(), CompressedMatrix::empty());
        assert_eq!(CompressionMethod::from_kaldi_code(8), None);
        assert_eq!(CompressionMethod::OneByteZeroOne.kaldi_code(), 7);
    }

    /// A window decompresses to the same floats as the whole matrix has there (Kaldi's
    /// `CopyToMat(row_offset, col_offset, dest)`), in every format.
    #[test]
    fn windows_agree_with_the_whole() {
        let mut m = Matrix::<f64>::new(12, 5);
        for r in 0..12 {
            for c in 0..5 {
                m[(r, c)] = ((r * 7 + c * 13) % 17) as f64 - 8.5 + c as f64 * 0.1;
            }
        }
        for method in [
            CompressionMethod::SpeechFeature,
            CompressionMethod::TwoByteAuto,
            CompressionMethod::OneByteAuto,
        ] {
            let c = CompressedMatrix::compress(&m, method).unwrap();
            let whole = c.to_matrix::<f64>();
            let part = c.to_matrix_range::<f64>(3, 6, 1, 3);
            assert_eq!(part, Matrix::from(&*whole.range(3, 6, 1, 3)), "{method:?}");
        }
    }

    #[test]
    #[should_panic(
        expected = "to_matrix_range: rows 10..13 and columns 0..1 do not lie inside a 12 x 5"
    )]
    fn windows_outside_panic() {
        let c = CompressedMatrix::compress(&Matrix::<f32>::new(12, 5), CompressionMethod::Auto)
            .unwrap();
        let _ = c.to_matrix_range::<f32>(10, 3, 0, 1);
    }

    /// The branch-free coder equals Kaldi's branching `FloatToChar` on every segment,
    /// boundary and degenerate column (equal quantiles: division by zero).
    #[test]
    fn char_coder_equals_kaldis_branches() {
        let columns = [
            [-1.0f32, 0.0, 1.0, 2.0],
            [0.5, 0.5000001, 0.7, 9.0],
            [1e6, 1e6, 1e6, 1e6 + 0.0625],
            [3.0, 3.0, 3.0, 3.0],
        ];
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for p in columns {
            let coder = CharCoder::new(p);
            let mut values = p.to_vec();
            values.extend([p[0] - 1.0, p[3] + 1.0, -0.0, 0.0, f32::MAX, f32::MIN]);
            for _ in 0..2000 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let u = (rng >> 40) as f32 / (1u64 << 24) as f32;
                values.push(p[0] + (p[3] - p[0]) * (1.2 * u - 0.1));
            }
            for x in values {
                assert_eq!(coder.code(x), float_to_char(p, x), "{p:?} {x}");
            }
        }
        assert_eq!(trunc_i32_like_cpp(f64::INFINITY), i32::MIN);
        assert_eq!(trunc_i32_like_cpp(f64::NAN), i32::MIN);
        assert_eq!(trunc_i32_like_cpp(-2.9), -2);
        assert_eq!(trunc_i32_like_cpp(2147483647.5), 2147483647);
    }

    #[test]
    fn order_keys_sort_as_floats() {
        let xs = [f32::MIN, -1.0, -1e-40, -0.0, 0.0, 1e-40, 0.5, 1.0, f32::MAX];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) < order_key(w[1]), "{} < {}", w[0], w[1]);
        }
        for x in xs {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn non_finite_values_are_refused() {
        let m = Matrix::from_rows(&[[1.0f32, 2.0], [f32::NAN, 0.0]]);
        let err = CompressedMatrix::compress(&m, CompressionMethod::Auto).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot compress NaN at element (1, 0): a compressed matrix holds finite f32 values spanning at most 1.3292279e36"
        );
        // values beyond f32 (in an f64 matrix), and a range that overflows f32 (found by
        // the fuzzer: such a matrix compressed to a header that decompresses to inf)
        let wide = Matrix::from_rows(&[[1.0f64, 1e50]]);
        assert_eq!(
            CompressedMatrix::compress(&wide, CompressionMethod::Auto).unwrap_err(),
            Error::CannotCompress {
                position: Position::Matrix(0, 1),
                value: 1e50
            }
        );
        let spread = Matrix::from_rows(&[[-3e38f32, 0.0], [3e38, 1.0]]);
        assert_eq!(
            CompressedMatrix::compress(&spread, CompressionMethod::Auto).unwrap_err(),
            Error::CannotCompress {
                position: Position::Matrix(1, 0),
                value: f64::from(3e38f32)
            }
        );
        // found by the fuzzer: 9.67e36 among small values is a finite range, but Kaldi's
        // decompression of it overflows to inf
        let wide_gap = Matrix::from_rows(&[
            [0.38f32],
            [9.67e36],
            [1.0],
            [2.0],
            [3.0],
            [4.0],
            [5.0],
            [6.0],
            [7.0],
        ]);
        assert_eq!(
            CompressedMatrix::compress(&wide_gap, CompressionMethod::Auto).unwrap_err(),
            Error::CannotCompress {
                position: Position::Matrix(1, 0),
                value: f64::from(9.67e36f32)
            }
        );
        // the widest range allowed is compressed, and decompresses to finite values
        let edge = Matrix::from_rows(&[
            [0.0f32],
            [MAX_RANGE],
            [1.0],
            [2.0],
            [3.0],
            [4.0],
            [5.0],
            [6.0],
            [7.0],
        ]);
        for method in [
            CompressionMethod::SpeechFeature,
            CompressionMethod::TwoByteAuto,
            CompressionMethod::OneByteAuto,
        ] {
            let c = CompressedMatrix::compress(&edge, method).unwrap();
            let back: Matrix<f32> = c.to_matrix();
            assert!(
                back.rows().all(|r| r.iter().all(|x| x.is_finite())),
                "{method:?}"
            );
        }
    }

    #[test]
    fn a_constant_matrix_whose_widened_range_overflows_is_refused() {
        // all values equal: the range becomes 1 + |min|, which overflows f32 here (the
        // fuzzer's input: a 1 x 1 matrix holding 0x7f200001)
        let big = f32::from_bits(0x7f20_0001);
        for method in [
            CompressionMethod::Auto,
            CompressionMethod::SpeechFeature,
            CompressionMethod::TwoByteAuto,
            CompressionMethod::OneByteAuto,
        ] {
            assert_eq!(
                CompressedMatrix::compress(&Matrix::from_rows(&[[big]]), method).unwrap_err(),
                Error::CannotCompress {
                    position: Position::Matrix(0, 0),
                    value: f64::from(big)
                },
                "{method:?}"
            );
        }
        // a constant matrix of ordinary values still compresses, to the same values
        let c = CompressedMatrix::compress(
            &Matrix::from_rows(&[[3.5f32, 3.5]]),
            CompressionMethod::Auto,
        )
        .unwrap();
        assert_eq!(c.to_matrix::<f32>(), Matrix::from_rows(&[[3.5f32, 3.5]]));
    }

    #[track_caller]
    fn check_read_err(bytes: &[u8], want: Error) {
        assert_eq!(
            CompressedMatrix::read_kaldi(&mut &bytes[..]).unwrap_err(),
            want
        );
    }

    #[test]
    fn headers_whose_bounds_are_not_finite() {
        // found by the fuzzer: such a header decompressed to inf
        let header = |min: f32, range: f32| {
            let mut b = b"CM2 ".to_vec();
            b.extend(min.to_le_bytes());
            b.extend(range.to_le_bytes());
            b.extend(1i32.to_le_bytes());
            b.extend(1i32.to_le_bytes());
            b.extend([0u8; 2]);
            b
        };
        for (min, range, found) in [
            (f32::MAX, f32::MAX, "minimum 340282350000000000000000000000000000000, range 340282350000000000000000000000000000000"),
            (0.0, f32::INFINITY, "minimum 0, range inf"),
            (f32::NAN, 1.0, "minimum NaN, range 1"),
        ] {
            check_read_err(
                &header(min, range),
                Error::Format {
                    expected: "a compressed-matrix header with a finite minimum and range",
                    found: found.into(),
                },
            );
        }
        // finite bounds whose top code decodes to inf in Kaldi's f32 arithmetic
        // (`65535 * (f32::MAX / 65535)` rounds past f32::MAX) are refused too
        let top = -1.0 + 65535.0 * ((f32::MAX as f64 / 65535.0) as f32);
        assert!(top.is_infinite());
        check_read_err(
            &header(-1.0, f32::MAX),
            Error::Format {
                expected: "a compressed-matrix header whose values all decode to finite floats",
                found: "minimum -1, range 340282350000000000000000000000000000000 \
                        (code 65535 decodes to inf)"
                    .into(),
            },
        );
        // half of that range reads, and decodes to finite values
        let fine = CompressedMatrix::read_kaldi(&mut &header(-1.0, f32::MAX / 2.0)[..]).unwrap();
        assert_eq!((fine.num_rows(), fine.num_cols()), (1, 1));
        assert_eq!(fine.to_matrix::<f32>()[(0, 0)], -1.0);
    }

    #[test]
    fn hostile_headers() {
        let header = |token: &[u8], rows: i32, cols: i32| {
            let mut b = token.to_vec();
            b.extend([0u8; 8]);
            b.extend(rows.to_le_bytes());
            b.extend(cols.to_le_bytes());
            b
        };
        check_read_err(
            &header(b"CM ", i32::MAX, i32::MAX),
            Error::UnexpectedEnd {
                reading: "the data of a 2147483647 x 2147483647 `CM` matrix".into(),
                needed: 2147483647 * 8 + 2147483647 * 2147483647,
                got: 0,
            },
        );
        check_read_err(
            &header(b"CM3 ", -1, 3),
            Error::NegativeSize {
                what: "the number of rows of a compressed matrix",
                value: -1,
            },
        );
        check_read_err(
            &header(b"CM2 ", 0, 3),
            Error::EmptyDimension { rows: 0, cols: 3 },
        );
        check_read_err(
            b"CM4 ",
            Error::Format {
                expected: "the compressed-matrix token `CM `, `CM2 ` or `CM3 `",
                found: "CM4".into(),
            },
        );
        check_read_err(
            b"CM2x",
            Error::Format {
                expected: "the compressed-matrix token `CM `, `CM2 ` or `CM3 `",
                found: "CM2x".into(),
            },
        );
        check_read_err(
            b"CM \0\0",
            Error::UnexpectedEnd {
                reading: "the header of a `CM` compressed matrix".into(),
                needed: 16,
                got: 2,
            },
        );
        let mut cut = header(b"CM2 ", 2, 2);
        cut.extend([1, 2, 3]);
        check_read_err(
            &cut,
            Error::UnexpectedEnd {
                reading: "the data of a 2 x 2 `CM2` matrix".into(),
                needed: 8,
                got: 3,
            },
        );
    }

    /// The largest error Kaldi's documentation gives each method, for a column with the
    /// given min and max, in a matrix with global `range`.
    fn bound(method: CompressionMethod, col_min: f32, col_max: f32, range: f32) -> f32 {
        let quantum = range / 65535.0;
        match method {
            CompressionMethod::TwoByteAuto => quantum,
            CompressionMethod::OneByteAuto => range / 255.0,
            // bytes between quantiles at least 63 apart, quantiles quantised to 16 bits
            _ => (col_max - col_min) / 63.0 + 3.0 * quantum,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 64,
            rng_seed: proptest::test_runner::RngSeed::Fixed(15),
            ..ProptestConfig::default()
        })]

        /// Random matrices through each automatic method stay within Kaldi's bound and
        /// survive a write/read round trip unchanged.
        #[test]
        fn round_trip_within_the_bound(
            rows in 1usize..30,
            cols in 1usize..6,
            scale in 0.01f32..1000.0,
            seed in any::<u64>(),
        ) {
            use rand::{Rng, SeedableRng};
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut m = Matrix::<f32>::new(rows, cols);
            for r in 0..rows {
                for c in 0..cols {
                    m[(r, c)] = (rng.random::<f32>() * 2.0 - 1.0) * scale;
                }
            }
            for method in [
                CompressionMethod::SpeechFeature,
                CompressionMethod::TwoByteAuto,
                CompressionMethod::OneByteAuto,
            ] {
                let c = CompressedMatrix::compress(&m, method).unwrap();
                let d = c.to_matrix::<f32>();
                for col in 0..cols {
                    let values: Vec<f32> = (0..rows).map(|r| m[(r, col)]).collect();
                    let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
                    let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let b = bound(method, lo, hi, c.range) * 1.001 + 1e-6 * scale;
                    for r in 0..rows {
                        let err = (d[(r, col)] - m[(r, col)]).abs();
                        prop_assert!(err <= b, "{method:?} ({r}, {col}): error {err} > {b}");
                    }
                }
                let mut bytes = Vec::new();
                c.write_kaldi(&mut bytes).unwrap();
                prop_assert_eq!(&CompressedMatrix::read_kaldi(&mut &bytes[..]).unwrap(), &c);
            }
        }

        /// The integer methods store integers in their range exactly.
        #[test]
        fn integer_methods_are_exact(values in proptest::collection::vec(-32768i32..=32767, 12)) {
            let m = Matrix::from_vec(3, 4, values.iter().map(|&v| v as f32).collect()).unwrap();
            let c = CompressedMatrix::compress(&m, CompressionMethod::TwoByteSignedInteger).unwrap();
            prop_assert_eq!(c.to_matrix::<f32>(), m);
            let bytes: Vec<f32> = values.iter().map(|&v| (v.rem_euclid(256)) as f32).collect();
            let m = Matrix::from_vec(3, 4, bytes).unwrap();
            let c = CompressedMatrix::compress(&m, CompressionMethod::OneByteUnsignedInteger).unwrap();
            prop_assert_eq!(c.to_matrix::<f32>(), m);
            let bits: Vec<f32> = values.iter().map(|&v| (v & 1) as f32).collect();
            let m = Matrix::from_vec(3, 4, bits).unwrap();
            let c = CompressedMatrix::compress(&m, CompressionMethod::OneByteZeroOne).unwrap();
            prop_assert_eq!(c.to_matrix::<f32>(), m);
        }
    }
}
