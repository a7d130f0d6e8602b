//! Kaldi's `SparseVector`, `SparseMatrix` and `GeneralMatrix` (`sparse-matrix.h`), the
//! dense-times-sparse products of `MatrixBase` (`AddMatSmat`, `AddSmatMat`, `AddSmat`),
//! `TraceMatSmat`, `VecSvec`, and the binary forms `SV` and `SM`.
//!
//! A sparse vector is Kaldi's: a dimension and `(index, value)` pairs sorted by index with
//! no duplicates. A sparse matrix is a list of sparse rows of one dimension. Unlike Kaldi,
//! which trusts a binary `SV` to be sorted, reading checks it (an index out of range or not
//! above its predecessor is [`Error::SparseIndex`]), so every value is kept as written and
//! the products can rely on the order.
//!
//! Binary layout (Kaldi's `Write(os, true)`): `SV ` then the dimension and the number of
//! pairs as `int32` (a size byte `4`, little endian), then per pair the index (`int32`) and
//! the value as Kaldi's `WriteBasicType<Real>` (a size byte `4` and an `f32`, or `8` and an
//! `f64`); `SM ` then the number of rows (`int32`) and each row as an `SV`. Reading accepts
//! either value width, as Kaldi's `ReadBasicType` converts between precisions. Text:
//! `dim=5 [ 0 0.5 3 -2 ] ` and `rows=2 ` followed by the rows and a newline (values in
//! shortest round-trip digits, like the crate's other text forms).

use std::io::{BufRead, Read, Write};

use crate::error::{dim_mismatch, out_of_bounds, shape_mismatch};
use crate::io::{
    io_err, read_exact_named, read_size, token_too_long, MAX_TEXT_LINE_LEN, READ_CHUNK,
};
use crate::{
    CompressedMatrix, CompressionMethod, Error, Matrix, MatrixBase, Real, Trans, VectorBase,
};

mod build;
mod convert;
mod general;

pub use general::{
    append_general_matrix_rows, extract_row_range_with_padding, filter_compressed_matrix_rows,
    filter_general_matrix_rows, filter_matrix_rows, filter_sparse_matrix_rows,
};

/// Kaldi's `SparseVector<Real>`: a dimension and `(index, value)` pairs sorted by index.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SparseVector<R: Real> {
    dim: usize,
    pairs: Vec<(usize, R)>,
}

impl<R: Real> SparseVector<R> {
    /// Kaldi's `SparseVector(dim)`: all zeros.
    pub fn new(dim: usize) -> Self {
        SparseVector {
            dim,
            pairs: Vec::new(),
        }
    }

    /// Kaldi's `SparseVector(dim, pairs)`: sorts by index, sums duplicates and drops the
    /// pairs whose value is (or sums to) zero; an index `>= dim` is [`Error::SparseIndex`].
    pub fn from_pairs(dim: usize, mut pairs: Vec<(usize, R)>) -> Result<Self, Error> {
        if let Some((element, &(index, _))) = pairs.iter().enumerate().find(|(_, p)| p.0 >= dim) {
            return Err(Error::SparseIndex {
                element,
                index: index as i64,
                dim,
                previous: None,
            });
        }
        pairs.sort_by_key(|p| p.0);
        let mut out: Vec<(usize, R)> = Vec::with_capacity(pairs.len());
        for (i, v) in pairs {
            match out.last_mut() {
                Some(last) if last.0 == i => last.1 += v,
                _ => {
                    if out.last().is_some_and(|l| l.1 == R::ZERO) {
                        out.pop();
                    }
                    out.push((i, v));
                }
            }
        }
        if out.last().is_some_and(|l| l.1 == R::ZERO) {
            out.pop();
        }
        Ok(SparseVector { dim, pairs: out })
    }

    /// Kaldi's `SparseVector(const VectorBase &)`: the non-zero elements of `vec`.
    pub fn from_vector(vec: &VectorBase<R>) -> Self {
        let pairs = vec
            .data()
            .iter()
            .enumerate()
            .filter(|(_, &v)| v != R::ZERO)
            .map(|(i, &v)| (i, v))
            .collect();
        SparseVector {
            dim: vec.dim(),
            pairs,
        }
    }

    /// Kaldi's `Dim()`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Kaldi's `NumElements()`: the number of stored pairs.
    #[doc(alias = "NumElements")]
    pub fn num_elements(&self) -> usize {
        self.pairs.len()
    }

    /// Kaldi's `GetElement(i)`: the `i`-th stored pair.
    #[doc(alias = "GetElement")]
    pub fn get_element(&self, i: usize) -> (usize, R) {
        match self.pairs.get(i) {
            Some(&p) => p,
            None => out_of_bounds("element", i, self.pairs.len(), "sparse vector"),
        }
    }

    /// Kaldi's `Data()`: the pairs, sorted by index.
    pub fn data(&self) -> &[(usize, R)] {
        &self.pairs
    }

    /// Kaldi's `Sum()`.
    pub fn sum(&self) -> R {
        self.pairs.iter().map(|p| p.1).sum()
    }

    /// Kaldi's `Scale(alpha)`: scales the stored values (zeros stay stored, as in Kaldi).
    pub fn scale(&mut self, alpha: R) {
        for p in &mut self.pairs {
            p.1 *= alpha;
        }
    }

    /// Kaldi's `Max(&index)`: the largest element (implicit zeros count) and its index;
    /// `None` for dimension 0.
    pub fn max(&self) -> Option<(R, usize)> {
        if self.dim == 0 {
            return None;
        }
        let mut best: Option<(R, usize)> = None;
        for &(i, v) in &self.pairs {
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, i));
            }
        }
        if self.pairs.len() < self.dim && best.is_none_or(|(b, _)| b < R::ZERO) {
            // the first index that holds an implicit zero
            let zero_at = self
                .pairs
                .iter()
                .enumerate()
                .find(|&(k, p)| p.0 != k)
                .map_or(self.pairs.len(), |(k, _)| k);
            best = Some((R::ZERO, zero_at));
        }
        best
    }

    /// Kaldi's `CopyElementsToVec(vec)`: `vec` becomes this vector, dense.
    #[doc(alias = "CopyElementsToVec")]
    pub fn copy_elements_to_vec(&self, vec: &mut VectorBase<R>) {
        if vec.dim() != self.dim {
            dim_mismatch(
                "copy_elements_to_vec",
                "vector dim",
                vec.dim(),
                "sparse dim",
                self.dim,
            );
        }
        vec.set_zero();
        let d = vec.data_mut();
        for &(i, v) in &self.pairs {
            d[i] = v;
        }
    }

    /// Kaldi's `AddToVec(alpha, vec)`: `vec += alpha * self`.
    #[doc(alias = "AddToVec")]
    pub fn add_to_vec(&self, alpha: R, vec: &mut VectorBase<R>) {
        if vec.dim() != self.dim {
            dim_mismatch(
                "add_to_vec",
                "vector dim",
                vec.dim(),
                "sparse dim",
                self.dim,
            );
        }
        let d = vec.data_mut();
        for &(i, v) in &self.pairs {
            d[i] += alpha * v;
        }
    }

    /// Kaldi's `Write(os, binary)`: the binary `SV` object, or the text form
    /// `dim=5 [ 0 0.5 3 -2 ] ` (values in shortest round-trip digits).
    pub fn write_kaldi(&self, w: &mut impl Write, binary: bool) -> Result<(), Error> {
        if !binary {
            let mut t = format!("dim={} [ ", self.dim);
            for &(i, v) in &self.pairs {
                t.push_str(&format!("{i} {v} "));
            }
            t.push_str("] ");
            return w.write_all(t.as_bytes()).map_err(io_err);
        }
        let mut buf = Vec::with_capacity(13 + self.pairs.len() * (6 + std::mem::size_of::<R>()));
        buf.extend_from_slice(b"SV ");
        push_int32(&mut buf, self.dim, "the dimension of a sparse vector")?;
        push_int32(
            &mut buf,
            self.pairs.len(),
            "the element count of a sparse vector",
        )?;
        for &(i, v) in &self.pairs {
            push_int32(&mut buf, i, "an index of a sparse vector")?;
            push_real(&mut buf, v);
        }
        w.write_all(&buf).map_err(io_err)
    }

    /// Kaldi's `Read(is, binary)`: a binary `SV` object (its values in either precision)
    /// or the text form.
    pub fn read_kaldi(r: &mut impl BufRead, binary: bool) -> Result<Self, Error> {
        if binary {
            Self::read_binary(r)
        } else {
            Self::read_text(&mut Tokens { r, line: 1 })
        }
    }

    fn read_text<B: BufRead>(t: &mut Tokens<'_, B>) -> Result<Self, Error> {
        let dim = t.header("dim=", "expected `dim=<int>`")?;
        let open = t.expect_next("expected `[`")?;
        if open != "[" {
            return Err(t.parse_err(open, "expected `[`"));
        }
        let mut pairs: Vec<(usize, R)> = Vec::new();
        loop {
            let tok = t.expect_next("expected an index or `]`")?;
            if tok == "]" {
                break;
            }
            let index: usize = tok
                .parse()
                .map_err(|_| t.parse_err(tok.clone(), "not an index"))?;
            let previous = pairs.last().map(|p| p.0);
            if index >= dim || previous.is_some_and(|p| index <= p) {
                return Err(Error::SparseIndex {
                    element: pairs.len(),
                    index: index as i64,
                    dim,
                    previous,
                });
            }
            let tok = t.expect_next("expected a value")?;
            let value: f64 = tok
                .parse()
                .map_err(|_| t.parse_err(tok.clone(), "not a number"))?;
            pairs.push((index, R::from_f64(value)));
        }
        Ok(SparseVector { dim, pairs })
    }

    fn read_binary(r: &mut impl Read) -> Result<Self, Error> {
        expect_token(r, b"SV ", "the sparse vector token `SV `")?;
        let dim = read_size(r, "the dimension of a sparse vector")?;
        let n = read_size(r, "the element count of a sparse vector")?;
        if n > dim {
            return Err(Error::SparseCount { count: n, dim });
        }
        // at least 10 bytes a pair: the capacity follows the data, not the header
        let mut pairs: Vec<(usize, R)> = Vec::with_capacity(n.min(READ_CHUNK / 10));
        for element in 0..n {
            let index = read_index(r, element, n)?;
            let previous = pairs.last().map(|p| p.0);
            if index >= dim || previous.is_some_and(|p| index <= p) {
                return Err(Error::SparseIndex {
                    element,
                    index: index as i64,
                    dim,
                    previous,
                });
            }
            let value = read_real::<R>(r, element, n)?;
            pairs.push((index, value));
        }
        Ok(SparseVector { dim, pairs })
    }
}

/// Kaldi's `VecSvec(vec, svec)`: the dot product of a dense and a sparse vector.
#[doc(alias = "VecSvec")]
pub fn vec_svec<R: Real>(vec: &VectorBase<R>, svec: &SparseVector<R>) -> R {
    if vec.dim() != svec.dim() {
        dim_mismatch(
            "vec_svec",
            "vector dim",
            vec.dim(),
            "sparse dim",
            svec.dim(),
        );
    }
    let d = vec.data();
    svec.pairs.iter().map(|&(i, v)| d[i] * v).sum()
}

/// Kaldi's `SparseMatrix<Real>`: rows of sparse vectors of one dimension.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SparseMatrix<R: Real> {
    cols: usize,
    rows: Vec<SparseVector<R>>,
}

impl<R: Real> SparseMatrix<R> {
    /// Kaldi's `SparseMatrix(num_rows, num_cols)`: all zeros.
    pub fn new(num_rows: usize, num_cols: usize) -> Self {
        SparseMatrix {
            cols: num_cols,
            rows: vec![SparseVector::new(num_cols); num_rows],
        }
    }

    /// Rows given as sparse vectors; all must have dimension `num_cols`, else
    /// [`Error::SparseRowDim`].
    pub fn from_rows(num_cols: usize, rows: Vec<SparseVector<R>>) -> Result<Self, Error> {
        if let Some((row, v)) = rows.iter().enumerate().find(|(_, v)| v.dim != num_cols) {
            return Err(Error::SparseRowDim {
                row,
                dim: v.dim,
                expected: num_cols,
            });
        }
        Ok(SparseMatrix {
            cols: num_cols,
            rows,
        })
    }

    /// Kaldi's `SparseMatrix(const MatrixBase &)`: the non-zero elements of `mat`.
    pub fn from_matrix(mat: &MatrixBase<R>) -> Self {
        SparseMatrix {
            cols: mat.num_cols(),
            rows: (0..mat.num_rows())
                .map(|r| SparseVector::from_vector(mat.row(r)))
                .collect(),
        }
    }

    /// Kaldi's `NumRows()`.
    #[doc(alias = "NumRows")]
    pub fn num_rows(&self) -> usize {
        self.rows.len()
    }

    /// Kaldi's `NumCols()`.
    #[doc(alias = "NumCols")]
    pub fn num_cols(&self) -> usize {
        self.cols
    }

    /// Kaldi's `NumElements()`: the stored pairs of all rows.
    #[doc(alias = "NumElements")]
    pub fn num_elements(&self) -> usize {
        self.rows.iter().map(|r| r.num_elements()).sum()
    }

    /// Kaldi's `Row(r)`.
    pub fn row(&self, r: usize) -> &SparseVector<R> {
        match self.rows.get(r) {
            Some(v) => v,
            None => out_of_bounds("row", r, self.rows.len(), "sparse matrix"),
        }
    }

    /// Kaldi's `SetRow(r, vec)`; panics if `vec`'s dimension is not `num_cols()`.
    #[doc(alias = "SetRow")]
    pub fn set_row(&mut self, r: usize, vec: SparseVector<R>) {
        if vec.dim != self.cols {
            dim_mismatch("set_row", "vector dim", vec.dim, "num_cols", self.cols);
        }
        let n = self.rows.len();
        match self.rows.get_mut(r) {
            Some(slot) => *slot = vec,
            None => out_of_bounds("row", r, n, "sparse matrix"),
        }
    }

    /// Kaldi's `Sum()`.
    pub fn sum(&self) -> R {
        self.rows.iter().map(|r| r.sum()).sum()
    }

    /// Kaldi's `FrobeniusNorm()`.
    #[doc(alias = "FrobeniusNorm")]
    pub fn frobenius_norm(&self) -> R {
        self.rows
            .iter()
            .flat_map(|r| r.pairs.iter())
            .map(|p| p.1 * p.1)
            .sum::<R>()
            .sqrt()
    }

    /// Kaldi's `Scale(alpha)`.
    pub fn scale(&mut self, alpha: R) {
        for r in &mut self.rows {
            r.scale(alpha);
        }
    }

    /// Kaldi's `CopyToMat(mat, trans)`: `mat` (shaped as `op(self)`) becomes this matrix.
    #[doc(alias = "CopyToMat")]
    pub fn copy_to_mat(&self, mat: &mut MatrixBase<R>, trans: Trans) {
        let want = match trans {
            Trans::NoTrans => (self.num_rows(), self.cols),
            Trans::Trans => (self.cols, self.num_rows()),
        };
        if mat.shape() != want {
            shape_mismatch("copy_to_mat", mat.shape(), want);
        }
        mat.set_zero();
        self.add_to_mat(R::ONE, mat, trans);
    }

    /// Kaldi's `AddToMat(alpha, mat, trans)`: `mat += alpha * op(self)`.
    #[doc(alias = "AddToMat")]
    pub fn add_to_mat(&self, alpha: R, mat: &mut MatrixBase<R>, trans: Trans) {
        let want = match trans {
            Trans::NoTrans => (self.num_rows(), self.cols),
            Trans::Trans => (self.cols, self.num_rows()),
        };
        if mat.shape() != want {
            shape_mismatch("add_to_mat", mat.shape(), want);
        }
        for (r, row) in self.rows.iter().enumerate() {
            for &(c, v) in &row.pairs {
                match trans {
                    Trans::NoTrans => mat.row_data_mut(r)[c] += alpha * v,
                    Trans::Trans => mat.row_data_mut(c)[r] += alpha * v,
                }
            }
        }
    }

    /// The dense copy of this matrix.
    pub fn to_matrix(&self) -> Matrix<R> {
        let mut m = Matrix::new(self.num_rows(), self.cols);
        self.add_to_mat(R::ONE, &mut m, Trans::NoTrans);
        m
    }

    /// Kaldi's `Write(os, binary)`: the binary `SM` object, or the text form
    /// `rows=2 dim=5 [ 0 0.5 ] dim=5 [ ] ` and a newline.
    pub fn write_kaldi(&self, w: &mut impl Write, binary: bool) -> Result<(), Error> {
        if !binary {
            write!(w, "rows={} ", self.rows.len()).map_err(io_err)?;
            for r in &self.rows {
                r.write_kaldi(w, false)?;
            }
            return w.write_all(b"\n").map_err(io_err);
        }
        let mut head = b"SM ".to_vec();
        push_int32(
            &mut head,
            self.rows.len(),
            "the row count of a sparse matrix",
        )?;
        w.write_all(&head).map_err(io_err)?;
        for r in &self.rows {
            r.write_kaldi(w, true)?;
        }
        Ok(())
    }

    /// Kaldi's `Read(is, binary)`: a binary `SM` object or the text form. Every row must
    /// have the first row's dimension ([`Error::SparseRowDim`]).
    pub fn read_kaldi(r: &mut impl BufRead, binary: bool) -> Result<Self, Error> {
        if binary {
            return Self::read_binary(r);
        }
        let mut t = Tokens { r, line: 1 };
        let n = t.header("rows=", "expected `rows=<int>`")?;
        // each row's text takes at least 8 bytes: the capacity follows the data
        let mut rows: Vec<SparseVector<R>> = Vec::with_capacity(n.min(READ_CHUNK / 8));
        Self::collect_rows(&mut rows, n, || SparseVector::read_text(&mut t))
    }

    fn collect_rows(
        rows: &mut Vec<SparseVector<R>>,
        n: usize,
        mut next: impl FnMut() -> Result<SparseVector<R>, Error>,
    ) -> Result<Self, Error> {
        let mut cols = 0;
        for row in 0..n {
            let v = next()?;
            if row == 0 {
                cols = v.dim;
            } else if v.dim != cols {
                return Err(Error::SparseRowDim {
                    row,
                    dim: v.dim,
                    expected: cols,
                });
            }
            rows.push(v);
        }
        Ok(SparseMatrix {
            cols,
            rows: std::mem::take(rows),
        })
    }

    fn read_binary(r: &mut impl Read) -> Result<Self, Error> {
        expect_token(r, b"SM ", "the sparse matrix token `SM `")?;
        let n = read_size(r, "the row count of a sparse matrix")?;
        // each row takes at least 13 bytes: the capacity follows the data
        let mut rows: Vec<SparseVector<R>> = Vec::with_capacity(n.min(READ_CHUNK / 13));
        Self::collect_rows(&mut rows, n, || SparseVector::read_binary(r))
    }
}

/// Kaldi's `TraceMatSmat(A, B, trans)`: `tr(A op(B))`.
#[doc(alias = "TraceMatSmat")]
pub fn trace_mat_smat<R: Real>(a: &MatrixBase<R>, b: &SparseMatrix<R>, trans: Trans) -> R {
    let mut sum = R::ZERO;
    match trans {
        Trans::NoTrans => {
            // tr(A B) = sum_{k,j} A[j,k] B[k,j]
            if (a.num_rows(), a.num_cols()) != (b.num_cols(), b.num_rows()) {
                shape_mismatch("trace_mat_smat", a.shape(), (b.num_cols(), b.num_rows()));
            }
            for (k, row) in b.rows.iter().enumerate() {
                for &(j, v) in &row.pairs {
                    sum += a.row_data(j)[k] * v;
                }
            }
        }
        Trans::Trans => {
            if a.shape() != (b.num_rows(), b.num_cols()) {
                shape_mismatch("trace_mat_smat", a.shape(), (b.num_rows(), b.num_cols()));
            }
            for (r, row) in b.rows.iter().enumerate() {
                sum += vec_svec(a.row(r), row);
            }
        }
    }
    sum
}

impl<R: Real> MatrixBase<R> {
    /// Kaldi's `AddSmat(alpha, A, trans)`: `self += alpha * op(A)`.
    #[doc(alias = "AddSmat")]
    pub fn add_smat(&mut self, alpha: R, a: &SparseMatrix<R>, trans: Trans) {
        a.add_to_mat(alpha, self, trans);
    }

    /// Kaldi's `AddMatSmat(alpha, A, B, transB, beta)`: `self = alpha * A op(B) + beta *
    /// self`, `B` sparse; `self` is scaled by `beta` first, as in Kaldi.
    #[doc(alias = "AddMatSmat")]
    pub fn add_mat_smat(
        &mut self,
        alpha: R,
        a: &MatrixBase<R>,
        b: &SparseMatrix<R>,
        trans_b: Trans,
        beta: R,
    ) {
        let (b_rows, b_cols) = match trans_b {
            Trans::NoTrans => (b.num_rows(), b.num_cols()),
            Trans::Trans => (b.num_cols(), b.num_rows()),
        };
        if a.num_cols() != b_rows {
            shape_mismatch("add_mat_smat", a.shape(), (b_rows, b_cols));
        }
        if self.shape() != (a.num_rows(), b_cols) {
            shape_mismatch("add_mat_smat", self.shape(), (a.num_rows(), b_cols));
        }
        self.scale(beta);
        for i in 0..a.num_rows() {
            match trans_b {
                Trans::NoTrans => {
                    // row i of the result: sum_k A[i,k] B[k,:]
                    for (k, brow) in b.rows.iter().enumerate() {
                        let aik = alpha * a.row_data(i)[k];
                        let out = self.row_data_mut(i);
                        for &(j, v) in &brow.pairs {
                            out[j] += aik * v;
                        }
                    }
                }
                Trans::Trans => {
                    // result[i, j] = A[i,:] . B[j,:]
                    for (j, brow) in b.rows.iter().enumerate() {
                        let d = vec_svec(a.row(i), brow);
                        self.row_data_mut(i)[j] += alpha * d;
                    }
                }
            }
        }
    }

    /// Kaldi's `AddSmatMat(alpha, A, transA, B, beta)`: `self = alpha * op(A) B + beta *
    /// self`, `A` sparse; `self` is scaled by `beta` first, as in Kaldi.
    #[doc(alias = "AddSmatMat")]
    pub fn add_smat_mat(
        &mut self,
        alpha: R,
        a: &SparseMatrix<R>,
        trans_a: Trans,
        b: &MatrixBase<R>,
        beta: R,
    ) {
        let (a_rows, a_cols) = match trans_a {
            Trans::NoTrans => (a.num_rows(), a.num_cols()),
            Trans::Trans => (a.num_cols(), a.num_rows()),
        };
        if a_cols != b.num_rows() {
            shape_mismatch("add_smat_mat", (a_rows, a_cols), b.shape());
        }
        if self.shape() != (a_rows, b.num_cols()) {
            shape_mismatch("add_smat_mat", self.shape(), (a_rows, b.num_cols()));
        }
        self.scale(beta);
        for (r, arow) in a.rows.iter().enumerate() {
            for &(c, v) in &arow.pairs {
                // NoTrans: out row r += v B[c,:]; Trans: out row c += v B[r,:]
                let (out_row, b_row) = match trans_a {
                    Trans::NoTrans => (r, c),
                    Trans::Trans => (c, r),
                };
                let s = alpha * v;
                let src = b.row_data(b_row);
                let out = self.row_data_mut(out_row);
                for (o, &x) in out.iter_mut().zip(src) {
                    *o += s * x;
                }
            }
        }
    }
}

/// Kaldi's `GeneralMatrix`: a full, a compressed or a sparse matrix (Kaldi's `Type()` is
/// the variant). Reading a binary `CM`, `CM2` or `CM3` object gives
/// [`GeneralMatrix::Compressed`], as Kaldi's `Read` does.
#[derive(Debug, Clone, PartialEq)]
pub enum GeneralMatrix<R: Real> {
    /// Kaldi's `kFullMatrix`.
    Full(Matrix<R>),
    /// Kaldi's `kSparseMatrix`.
    Sparse(SparseMatrix<R>),
    /// Kaldi's `kCompressedMatrix` (its values are `f32` inside, whatever `R` is).
    Compressed(CompressedMatrix),
}

impl<R: Real> GeneralMatrix<R> {
    /// Kaldi's `NumRows()`.
    #[doc(alias = "NumRows")]
    pub fn num_rows(&self) -> usize {
        match self {
            GeneralMatrix::Full(m) => m.num_rows(),
            GeneralMatrix::Sparse(s) => s.num_rows(),
            GeneralMatrix::Compressed(c) => c.num_rows(),
        }
    }

    /// Kaldi's `NumCols()`.
    #[doc(alias = "NumCols")]
    pub fn num_cols(&self) -> usize {
        match self {
            GeneralMatrix::Full(m) => m.num_cols(),
            GeneralMatrix::Sparse(s) => s.num_cols(),
            GeneralMatrix::Compressed(c) => c.num_cols(),
        }
    }

    /// Kaldi's `CopyToMat(mat, trans)`.
    #[doc(alias = "CopyToMat")]
    pub fn copy_to_mat(&self, mat: &mut MatrixBase<R>, trans: Trans) {
        let dense = |m: &MatrixBase<R>, mat: &mut MatrixBase<R>| {
            let want = match trans {
                Trans::NoTrans => m.shape(),
                Trans::Trans => (m.num_cols(), m.num_rows()),
            };
            if mat.shape() != want {
                shape_mismatch("copy_to_mat", mat.shape(), want);
            }
            mat.set_zero();
            mat.add_mat(R::ONE, m, trans);
        };
        match self {
            GeneralMatrix::Full(m) => dense(m, mat),
            GeneralMatrix::Sparse(s) => s.copy_to_mat(mat, trans),
            GeneralMatrix::Compressed(c) => dense(&c.to_matrix::<R>(), mat),
        }
    }

    /// Kaldi's `AddToMat(alpha, mat, trans)`: `mat += alpha * op(self)`.
    #[doc(alias = "AddToMat")]
    pub fn add_to_mat(&self, alpha: R, mat: &mut MatrixBase<R>, trans: Trans) {
        match self {
            GeneralMatrix::Full(m) => mat.add_mat(alpha, m, trans),
            GeneralMatrix::Sparse(s) => s.add_to_mat(alpha, mat, trans),
            GeneralMatrix::Compressed(c) => mat.add_mat(alpha, &c.to_matrix::<R>(), trans),
        }
    }

    /// Kaldi's `Scale(alpha)`; a compressed matrix scales its header's offset and range,
    /// as Kaldi's `CompressedMatrix::Scale` (the value converted to `f32`).
    pub fn scale(&mut self, alpha: R) {
        match self {
            GeneralMatrix::Full(m) => m.scale(alpha),
            GeneralMatrix::Sparse(s) => s.scale(alpha),
            GeneralMatrix::Compressed(c) => c.scale(alpha.to_f64() as f32),
        }
    }

    /// Kaldi's `GetMatrix(&mat)`: the dense copy (decompressed for a compressed matrix).
    #[doc(alias = "GetMatrix")]
    pub fn get_matrix(&self) -> Matrix<R> {
        match self {
            GeneralMatrix::Full(m) => m.clone(),
            GeneralMatrix::Sparse(s) => s.to_matrix(),
            GeneralMatrix::Compressed(c) => c.to_matrix(),
        }
    }

    /// Kaldi's `Compress()`: a full matrix with rows becomes [`GeneralMatrix::Compressed`]
    /// by `method` (Kaldi's `Compress()` uses [`CompressionMethod::Auto`]); any other
    /// matrix is left as it is. A NaN or infinity is [`Error::CannotCompress`], and the
    /// matrix stays full.
    pub fn compress(&mut self, method: CompressionMethod) -> Result<(), Error> {
        if let GeneralMatrix::Full(m) = self {
            if m.num_rows() != 0 {
                *self = GeneralMatrix::Compressed(CompressedMatrix::compress(m, method)?);
            }
        }
        Ok(())
    }

    /// Kaldi's `Uncompress()`: a compressed matrix becomes [`GeneralMatrix::Full`]; any
    /// other matrix is left as it is.
    pub fn uncompress(&mut self) {
        if let GeneralMatrix::Compressed(c) = self {
            *self = GeneralMatrix::Full(c.to_matrix());
        }
    }

    /// Kaldi's `Write(os, binary)`: the underlying matrix's own form (`SM`, `CM`/`CM2`/
    /// `CM3`, or `FM`/`DM`); in text a compressed matrix is written decompressed, as a
    /// full matrix, as Kaldi does.
    pub fn write_kaldi(&self, w: &mut impl Write, binary: bool) -> Result<(), Error> {
        match self {
            GeneralMatrix::Full(m) => m.write_kaldi(w, binary),
            GeneralMatrix::Sparse(s) => s.write_kaldi(w, binary),
            GeneralMatrix::Compressed(c) if binary => c.write_kaldi(w),
            GeneralMatrix::Compressed(c) => c.to_matrix::<f32>().write_kaldi(w, false),
        }
    }

    /// Kaldi's `Read(is, binary)`: in binary an `S` starts a sparse matrix, a `C` a
    /// compressed one, anything else is read as a full matrix; in text, after white space,
    /// an `r` (`rows=`) starts a sparse matrix, anything else a full one.
    pub fn read_kaldi(r: &mut impl BufRead, binary: bool) -> Result<Self, Error> {
        if !binary {
            skip_space(r)?;
        }
        let first = r.fill_buf().map_err(io_err)?.first().copied();
        match (binary, first) {
            (true, Some(b'S')) | (false, Some(b'r')) => {
                Ok(GeneralMatrix::Sparse(SparseMatrix::read_kaldi(r, binary)?))
            }
            (true, Some(b'C')) => Ok(GeneralMatrix::Compressed(CompressedMatrix::read_kaldi(r)?)),
            _ => Ok(GeneralMatrix::Full(Matrix::read_kaldi(r, binary)?)),
        }
    }
}

fn skip_space(r: &mut impl BufRead) -> Result<(), Error> {
    loop {
        let buf = r.fill_buf().map_err(io_err)?;
        let n = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let all = n == buf.len() && n > 0;
        r.consume(n);
        if !all {
            return Ok(());
        }
    }
}

/// Whitespace-separated tokens of Kaldi's text forms, with the line they are on.
struct Tokens<'a, B: BufRead> {
    r: &'a mut B,
    line: usize,
}

impl<B: BufRead> Tokens<'_, B> {
    fn next(&mut self) -> Result<Option<String>, Error> {
        let mut tok = Vec::new();
        loop {
            let buf = self.r.fill_buf().map_err(io_err)?;
            let Some(&b) = buf.first() else { break };
            if b.is_ascii_whitespace() {
                if !tok.is_empty() {
                    break;
                }
                if b == b'\n' {
                    self.line += 1;
                }
            } else if tok.len() == MAX_TEXT_LINE_LEN {
                return Err(token_too_long(self.line, &tok));
            } else {
                tok.push(b);
            }
            self.r.consume(1);
        }
        Ok((!tok.is_empty()).then(|| String::from_utf8_lossy(&tok).into_owned()))
    }

    fn parse_err(&self, token: String, reason: &'static str) -> Error {
        Error::Parse {
            line: self.line,
            token,
            reason,
        }
    }

    fn expect_next(&mut self, reason: &'static str) -> Result<String, Error> {
        match self.next()? {
            Some(t) => Ok(t),
            None => Err(self.parse_err(String::new(), reason)),
        }
    }

    /// A `prefix<int>` token such as `dim=5`.
    fn header(&mut self, prefix: &str, reason: &'static str) -> Result<usize, Error> {
        let tok = self.expect_next(reason)?;
        match tok.strip_prefix(prefix).map(str::parse::<usize>) {
            Some(Ok(v)) => Ok(v),
            _ => Err(self.parse_err(tok, reason)),
        }
    }
}

fn push_int32(buf: &mut Vec<u8>, v: usize, what: &'static str) -> Result<(), Error> {
    let v = i32::try_from(v).map_err(|_| Error::Format {
        expected: what,
        found: format!("{v}, which does not fit in int32"),
    })?;
    buf.push(4);
    buf.extend_from_slice(&v.to_le_bytes());
    Ok(())
}

fn push_real<R: Real>(buf: &mut Vec<u8>, v: R) {
    if R::NAME == "f32" {
        buf.push(4);
        buf.extend_from_slice(&(v.to_f64() as f32).to_le_bytes());
    } else {
        buf.push(8);
        buf.extend_from_slice(&v.to_f64().to_le_bytes());
    }
}

fn expect_token(r: &mut impl Read, token: &[u8; 3], expected: &'static str) -> Result<(), Error> {
    let mut t = [0u8; 3];
    read_exact_named(r, &mut t, || expected.to_string())?;
    if &t != token {
        return Err(Error::Format {
            expected,
            found: String::from_utf8_lossy(&t).into_owned(),
        });
    }
    Ok(())
}

fn read_index(r: &mut impl Read, element: usize, n: usize) -> Result<usize, Error> {
    let mut b = [0u8; 5];
    read_exact_named(r, &mut b, || {
        format!("the index of pair {element} of {n} of a sparse vector")
    })?;
    if b[0] != 4 {
        return Err(Error::Format {
            expected: "the int32 size byte 4 of a sparse vector index",
            found: b[0].to_string(),
        });
    }
    let v = i32::from_le_bytes([b[1], b[2], b[3], b[4]]);
    usize::try_from(v).map_err(|_| Error::NegativeSize {
        what: "an index of a sparse vector",
        value: v,
    })
}

fn read_real<R: Real>(r: &mut impl Read, element: usize, n: usize) -> Result<R, Error> {
    let reading = || format!("the value of pair {element} of {n} of a sparse vector");
    let mut size = [0u8; 1];
    read_exact_named(r, &mut size, reading)?;
    match size[0] {
        4 => {
            let mut b = [0u8; 4];
            read_exact_named(r, &mut b, reading)?;
            Ok(R::from_f64(f32::from_le_bytes(b) as f64))
        }
        8 => {
            let mut b = [0u8; 8];
            read_exact_named(r, &mut b, reading)?;
            Ok(R::from_f64(f64::from_le_bytes(b)))
        }
        other => Err(Error::Format {
            expected: "the size byte 4 or 8 of a sparse vector value",
            found: other.to_string(),
        }),
    }
}
