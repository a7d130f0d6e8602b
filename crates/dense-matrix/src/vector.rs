//! Vectors: the owned [`Vector`] and the borrowed [`VectorBase`] that every method lives on.
//!
//! Kaldi has `VectorBase` (the operations), `Vector` (owns memory) and `SubVector` (borrows
//! it, "not const-safe"). Here `VectorBase<R>` is an unsized type over `[R]`, like `str` over
//! `[u8]`: `&VectorBase<R>` is a shared view ([`VectorView`]) and `&mut VectorBase<R>` a
//! mutable one ([`VectorViewMut`]), and `Vector<R>` dereferences to it, so every method
//! works on owned vectors and views alike and the borrow checker makes views safe.

use std::fmt;
use std::ops::{Deref, DerefMut, Index, IndexMut};

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::{dim_mismatch, out_of_bounds};
use crate::{kernels, Error, Position, Real};

/// What `resize` does with the contents (Kaldi's `MatrixResizeType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[doc(alias = "MatrixResizeType")]
pub enum ResizeType {
    /// All elements become zero (Kaldi's `kSetZero`, the default).
    #[default]
    #[doc(alias = "kSetZero")]
    SetZero,
    /// Contents unspecified (Kaldi's `kUndefined`): kept if the size does not change,
    /// otherwise zero here (safe Rust never exposes uninitialised memory).
    #[doc(alias = "kUndefined")]
    Undefined,
    /// The overlapping part is kept, new elements are zero (Kaldi's `kCopyData`).
    #[doc(alias = "kCopyData")]
    CopyData,
}

/// The operations of a vector, on owned vectors and borrowed views alike (Kaldi's
/// `VectorBase`). Obtain one by dereferencing a [`Vector`], from a matrix row, or with
/// [`VectorBase::from_slice`].
#[repr(transparent)]
pub struct VectorBase<R>([R]);

/// A shared view of a vector (Kaldi's `SubVector`, read-only).
pub type VectorView<'a, R> = &'a VectorBase<R>;

/// A mutable view of a vector (Kaldi's `SubVector`).
pub type VectorViewMut<'a, R> = &'a mut VectorBase<R>;

/// An owned, contiguous vector (Kaldi's `Vector`).
#[derive(Clone, Default, PartialEq)]
pub struct Vector<R> {
    data: Vec<R>,
}

impl<R: Real> VectorBase<R> {
    /// A shared vector view of a slice.
    pub fn from_slice(data: &[R]) -> &Self {
        // SAFETY: `VectorBase<R>` is `repr(transparent)` over `[R]`.
        unsafe { &*(data as *const [R] as *const Self) }
    }

    /// A mutable vector view of a slice.
    pub fn from_slice_mut(data: &mut [R]) -> &mut Self {
        // SAFETY: `VectorBase<R>` is `repr(transparent)` over `[R]`.
        unsafe { &mut *(data as *mut [R] as *mut Self) }
    }

    /// Number of elements (Kaldi's `Dim`).
    #[inline]
    pub fn dim(&self) -> usize {
        self.0.len()
    }

    /// The elements as a slice (Kaldi's `Data`).
    #[inline]
    pub fn data(&self) -> &[R] {
        &self.0
    }

    /// The elements as a mutable slice.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [R] {
        &mut self.0
    }

    /// Element `i`, or `None` when out of range.
    pub fn get(&self, i: usize) -> Option<R> {
        self.0.get(i).copied()
    }

    /// The view of elements `origin .. origin + len` (Kaldi's `Range`).
    ///
    /// # Panics
    /// If the range does not fit.
    #[track_caller]
    pub fn range(&self, origin: usize, len: usize) -> &VectorBase<R> {
        self.check_range(origin, len);
        VectorBase::from_slice(&self.0[origin..origin + len])
    }

    /// The mutable view of elements `origin .. origin + len`.
    ///
    /// # Panics
    /// If the range does not fit.
    #[track_caller]
    pub fn range_mut(&mut self, origin: usize, len: usize) -> &mut VectorBase<R> {
        self.check_range(origin, len);
        VectorBase::from_slice_mut(&mut self.0[origin..origin + len])
    }

    /// Two disjoint mutable views, before and from `mid`.
    ///
    /// # Panics
    /// If `mid > dim()`.
    #[track_caller]
    pub fn split_at_mut(&mut self, mid: usize) -> (&mut VectorBase<R>, &mut VectorBase<R>) {
        if mid > self.dim() {
            out_of_bounds("split point", mid, self.dim(), "a vector");
        }
        let (a, b) = self.0.split_at_mut(mid);
        (VectorBase::from_slice_mut(a), VectorBase::from_slice_mut(b))
    }

    #[track_caller]
    fn check_range(&self, origin: usize, len: usize) {
        if origin.checked_add(len).is_none_or(|end| end > self.dim()) {
            panic!(
                "range {origin}..{} out of bounds for a vector with {} elements",
                origin.saturating_add(len),
                self.dim()
            );
        }
    }

    #[track_caller]
    pub(crate) fn check_same_dim(&self, op: &str, other_dim: usize) {
        if self.dim() != other_dim {
            dim_mismatch(op, "vector dim", self.dim(), "dim", other_dim);
        }
    }

    /// A copy as an owned vector.
    pub fn to_vector(&self) -> Vector<R> {
        Vector {
            data: self.0.to_vec(),
        }
    }

    // ---------------------------------------------------------------- set and copy

    /// Sets every element to zero.
    #[doc(alias = "SetZero")]
    pub fn set_zero(&mut self) {
        self.0.fill(R::ZERO);
    }

    /// Sets every element to `f`.
    pub fn set(&mut self, f: R) {
        self.0.fill(f);
    }

    /// Fills with standard normal samples from `rng` (Kaldi's `SetRandn`).
    #[doc(alias = "SetRandn")]
    pub fn set_randn(&mut self, rng: &mut impl Rng) {
        for v in self.0.iter_mut() {
            let x: f64 = StandardNormal.sample(rng);
            *v = R::from_f64(x);
        }
    }

    /// Fills with uniform samples in `[0, 1)` from `rng` (Kaldi's `SetRandUniform`).
    #[doc(alias = "SetRandUniform")]
    pub fn set_rand_uniform(&mut self, rng: &mut impl Rng) {
        for v in self.0.iter_mut() {
            *v = R::from_f64(rng.random::<f64>());
        }
    }

    /// Copies `v`, converting between precisions if needed (Kaldi's `CopyFromVec`).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "CopyFromVec")]
    pub fn copy_from_vec<S: Real>(&mut self, v: &VectorBase<S>) {
        self.check_same_dim("copy_from_vec", v.dim());
        for (o, &x) in self.0.iter_mut().zip(v.data()) {
            *o = R::from_f64(x.to_f64());
        }
    }

    // ---------------------------------------------------------------- element-wise

    /// Adds `c` to every element.
    pub fn add(&mut self, c: R) {
        kernels::map_inplace(&mut self.0, |x| x.iter_mut().for_each(|v| *v += c));
    }

    /// Multiplies every element by `alpha`.
    pub fn scale(&mut self, alpha: R) {
        kernels::map_inplace(&mut self.0, |x| x.iter_mut().for_each(|v| *v *= alpha));
    }

    /// `self[i] *= v[i]`.
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "MulElements")]
    pub fn mul_elements(&mut self, v: &VectorBase<R>) {
        self.check_same_dim("mul_elements", v.dim());
        kernels::zip_inplace(&mut self.0, v.data(), |a, b| {
            a.iter_mut().zip(b).for_each(|(x, &y)| *x *= y)
        });
    }

    /// `self[i] /= v[i]`.
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "DivElements")]
    pub fn div_elements(&mut self, v: &VectorBase<R>) {
        self.check_same_dim("div_elements", v.dim());
        kernels::zip_inplace(&mut self.0, v.data(), |a, b| {
            a.iter_mut().zip(b).for_each(|(x, &y)| *x /= y)
        });
    }

    /// `self[i] = 1 / self[i]`.
    #[doc(alias = "InvertElements")]
    pub fn invert_elements(&mut self) {
        kernels::map_inplace(&mut self.0, |x| x.iter_mut().for_each(|v| *v = R::ONE / *v));
    }

    /// `self[i] = ln(self[i])`; an error (and no change) if an element is negative.
    #[doc(alias = "ApplyLog")]
    pub fn apply_log(&mut self) -> Result<(), Error> {
        if let Some(i) = self.0.iter().position(|&v| v < R::ZERO) {
            return Err(Error::LogOfNegative {
                position: Position::Vector(i),
                value: self.0[i].to_f64(),
            });
        }
        kernels::map_inplace(&mut self.0, |x| x.iter_mut().for_each(|v| *v = v.ln()));
        Ok(())
    }

    /// `self[i] = e^self[i]`.
    #[doc(alias = "ApplyExp")]
    pub fn apply_exp(&mut self) {
        kernels::map_inplace(&mut self.0, |x| R::exp_slice(x));
    }

    /// `self[i] = |self[i]|`.
    #[doc(alias = "ApplyAbs")]
    pub fn apply_abs(&mut self) {
        kernels::map_inplace(&mut self.0, |x| x.iter_mut().for_each(|v| *v = v.abs()));
    }

    /// `self[i] = self[i]^power`; an error (and no change) for a negative element and a
    /// non-integer power.
    #[doc(alias = "ApplyPow")]
    pub fn apply_pow(&mut self, power: R) -> Result<(), Error> {
        if power.floor() != power {
            if let Some(i) = self.0.iter().position(|&v| v < R::ZERO) {
                return Err(Error::PowerOfNegative {
                    position: Position::Vector(i),
                    value: self.0[i].to_f64(),
                    power: power.to_f64(),
                });
            }
        }
        kernels::map_inplace(&mut self.0, |x| {
            x.iter_mut().for_each(|v| *v = v.powf(power))
        });
        Ok(())
    }

    /// `self[i] = |self[i]|^power`, times the sign of `self[i]` when `include_sign`; with
    /// a negative `power`, a zero stays zero (Kaldi's `ApplyPowAbs`, where `0^power` would
    /// be inf).
    #[doc(alias = "ApplyPowAbs")]
    pub fn apply_pow_abs(&mut self, power: R, include_sign: bool) {
        let negative = power < R::ZERO;
        kernels::map_inplace(&mut self.0, |x| {
            for v in x.iter_mut() {
                if negative && *v == R::ZERO {
                    *v = R::ZERO;
                    continue;
                }
                let p = v.abs().powf(power);
                *v = if include_sign && *v < R::ZERO { -p } else { p };
            }
        });
    }

    /// `self[i] = max(self[i], floor_val)`; returns how many elements changed.
    #[doc(alias = "ApplyFloor")]
    pub fn apply_floor(&mut self, floor_val: R) -> usize {
        let mut count = 0;
        for v in self.0.iter_mut() {
            if *v < floor_val {
                *v = floor_val;
                count += 1;
            }
        }
        count
    }

    /// `self[i] = min(self[i], ceiling_val)`; returns how many elements changed.
    #[doc(alias = "ApplyCeiling")]
    pub fn apply_ceiling(&mut self, ceiling_val: R) -> usize {
        let mut count = 0;
        for v in self.0.iter_mut() {
            if *v > ceiling_val {
                *v = ceiling_val;
                count += 1;
            }
        }
        count
    }

    /// `self = sigmoid(src)` element-wise.
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    pub fn sigmoid(&mut self, src: &VectorBase<R>) {
        self.check_same_dim("sigmoid", src.dim());
        kernels::zip_inplace(&mut self.0, src.data(), kernels::sigmoid);
    }

    /// `self = tanh(src)` element-wise.
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    pub fn tanh(&mut self, src: &VectorBase<R>) {
        self.check_same_dim("tanh", src.dim());
        kernels::zip_inplace(&mut self.0, src.data(), kernels::tanh);
    }

    /// `self = ln(1 + e^src)` element-wise.
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "SoftHinge")]
    pub fn soft_hinge(&mut self, src: &VectorBase<R>) {
        self.check_same_dim("soft_hinge", src.dim());
        kernels::zip_inplace(&mut self.0, src.data(), kernels::soft_hinge);
    }

    // ---------------------------------------------------------------- softmax

    /// `x_i = e^(x_i) / sum_j e^(x_j)`; returns the log normaliser `ln sum_j e^(x_j)`
    /// (Kaldi's `ApplySoftMax`, computed as `max + ln(sum e^(x - max))`).
    #[doc(alias("ApplySoftMax", "softmax"))]
    pub fn apply_softmax(&mut self) -> R {
        kernels::softmax(&mut self.0)
    }

    /// `x_i = x_i - ln sum_j e^(x_j)`; returns that log normaliser (Kaldi's
    /// `ApplyLogSoftMax`).
    #[doc(alias("ApplyLogSoftMax", "log_softmax"))]
    pub fn apply_log_softmax(&mut self) -> R {
        kernels::log_softmax(&mut self.0)
    }

    /// `ln sum_i e^(x_i)`, computed stably; with `prune = Some(p)` and `p > 0`, terms
    /// below `max - p` are left out (Kaldi's `LogSumExp(prune)`, which prunes only for a
    /// positive `prune`: its default `-1`, or `0`, is no pruning). `-inf` when empty.
    #[doc(alias = "LogSumExp")]
    pub fn log_sum_exp(&self, prune: Option<R>) -> R {
        let m = kernels::max(&self.0);
        if m == R::NEG_INFINITY {
            return m;
        }
        let cutoff = prune.filter(|&p| p > R::ZERO).map(|p| m - p);
        let sum: f64 = self
            .0
            .iter()
            .filter(|&&v| cutoff.is_none_or(|c| v >= c))
            .map(|&v| (v - m).to_f64().exp())
            .sum();
        m + R::from_f64(sum.ln())
    }

    // ---------------------------------------------------------------- reductions

    /// Sum of the elements (accumulated in `f64`).
    pub fn sum(&self) -> R {
        R::from_f64(kernels::block_sum(&self.0, kernels::sum_f64))
    }

    /// Sum of the natural logs of the elements (Kaldi's `SumLog`; `NaN` if one is
    /// negative, `-inf` if one is zero).
    #[doc(alias = "SumLog")]
    pub fn sum_log(&self) -> R {
        R::from_f64(kernels::block_sum(&self.0, |x| {
            x.iter().map(|&v| v.to_f64().ln()).sum()
        }))
    }

    /// Largest element; `-inf` when empty (as Kaldi).
    pub fn max(&self) -> R {
        kernels::max(&self.0)
    }

    /// Smallest element; `+inf` when empty (as Kaldi).
    pub fn min(&self) -> R {
        kernels::min(&self.0)
    }

    /// The largest element and its (first) index.
    ///
    /// # Panics
    /// If the vector is empty.
    #[track_caller]
    #[doc(alias = "argmax")]
    pub fn max_index(&self) -> (R, usize) {
        if self.0.is_empty() {
            out_of_bounds("index", 0, 0, "max_index of a vector");
        }
        let mut best = (self.0[0], 0);
        for (i, &v) in self.0.iter().enumerate().skip(1) {
            if v > best.0 {
                best = (v, i);
            }
        }
        best
    }

    /// The smallest element and its (first) index.
    ///
    /// # Panics
    /// If the vector is empty.
    #[track_caller]
    #[doc(alias = "argmin")]
    pub fn min_index(&self) -> (R, usize) {
        if self.0.is_empty() {
            out_of_bounds("index", 0, 0, "min_index of a vector");
        }
        let mut best = (self.0[0], 0);
        for (i, &v) in self.0.iter().enumerate().skip(1) {
            if v < best.0 {
                best = (v, i);
            }
        }
        best
    }

    /// The `p`-norm: `p = 0` counts non-zeros, `p = inf` is the largest absolute value,
    /// otherwise `(sum |x_i|^p)^(1/p)` (Kaldi's `Norm`).
    ///
    /// # Panics
    /// If `p < 0`.
    #[track_caller]
    pub fn norm(&self, p: R) -> R {
        crate::matrix_ops::slices_norm(std::iter::once(&self.0[..]), p)
    }

    /// Whether every `|x_i| <= cutoff` (Kaldi's `IsZero`).
    #[doc(alias = "IsZero")]
    pub fn is_zero(&self, cutoff: R) -> bool {
        self.0.iter().all(|v| v.abs() <= cutoff)
    }

    /// Kaldi's `ApproxEqual`: `||self - other||_2 <= tol * ||self||_2`.
    ///
    /// # Panics
    /// If the dimensions differ.
    #[track_caller]
    #[doc(alias = "ApproxEqual")]
    pub fn approx_equal(&self, other: &VectorBase<R>, tol: R) -> bool {
        self.check_same_dim("approx_equal", other.dim());
        let diff: f64 = self
            .0
            .iter()
            .zip(other.data())
            .map(|(&a, &b)| (a - b).to_f64().powi(2))
            .sum();
        let norm: f64 = self.0.iter().map(|&a| a.to_f64().powi(2)).sum();
        diff.sqrt() <= tol.to_f64() * norm.sqrt()
    }
}

/// Panics with the size if `dim` elements of `R` exceed `isize::MAX` bytes (where `Vec`
/// would only say "capacity overflow").
#[track_caller]
fn check_vector_dim<R>(what: &'static str, dim: usize) {
    let fits = dim
        .checked_mul(std::mem::size_of::<R>())
        .is_some_and(|bytes| bytes <= isize::MAX as usize);
    if !fits {
        crate::error::precondition(&format!(
            "{what}: {dim} elements overflow the address space"
        ));
    }
}

impl<R: Real> Vector<R> {
    /// A vector of `dim` zeros (Kaldi's `Vector(dim)`).
    ///
    /// # Panics
    /// If `dim` elements overflow the address space (more than `isize::MAX` bytes).
    #[track_caller]
    pub fn new(dim: usize) -> Self {
        check_vector_dim::<R>("Vector::new", dim);
        Self {
            data: vec![R::ZERO; dim],
        }
    }

    /// The empty vector.
    pub fn empty() -> Self {
        Self { data: Vec::new() }
    }

    /// A vector that takes ownership of `data`.
    pub fn from_vec(data: Vec<R>) -> Self {
        Self { data }
    }

    /// A vector copied from a slice.
    pub fn from_slice(data: &[R]) -> Self {
        Self {
            data: data.to_vec(),
        }
    }

    /// The elements, as a `Vec`.
    pub fn into_vec(self) -> Vec<R> {
        self.data
    }

    /// Changes the dimension (Kaldi's `Resize`), handling contents by `resize_type`.
    ///
    /// # Panics
    /// If `dim` elements overflow the address space.
    #[track_caller]
    pub fn resize(&mut self, dim: usize, resize_type: ResizeType) {
        check_vector_dim::<R>("Vector::resize", dim);
        match resize_type {
            ResizeType::SetZero => {
                self.data.clear();
                self.data.resize(dim, R::ZERO);
            }
            ResizeType::Undefined => {
                if dim != self.data.len() {
                    self.data.clear();
                    self.data.resize(dim, R::ZERO);
                }
            }
            ResizeType::CopyData => self.data.resize(dim, R::ZERO),
        }
    }

    /// Exchanges contents with `other` (Kaldi's `Swap`).
    pub fn swap(&mut self, other: &mut Vector<R>) {
        std::mem::swap(&mut self.data, &mut other.data);
    }

    /// Removes element `i`, shifting the rest down (Kaldi's `RemoveElement`).
    ///
    /// # Panics
    /// If `i >= dim()`.
    #[track_caller]
    #[doc(alias = "RemoveElement")]
    pub fn remove_element(&mut self, i: usize) {
        if i >= self.data.len() {
            out_of_bounds("element", i, self.data.len(), "a vector");
        }
        self.data.remove(i);
    }
}

impl<R> Deref for Vector<R> {
    type Target = VectorBase<R>;
    fn deref(&self) -> &VectorBase<R> {
        // SAFETY: `VectorBase<R>` is `repr(transparent)` over `[R]`.
        unsafe { &*(self.data.as_slice() as *const [R] as *const VectorBase<R>) }
    }
}

impl<R> DerefMut for Vector<R> {
    fn deref_mut(&mut self) -> &mut VectorBase<R> {
        // SAFETY: `VectorBase<R>` is `repr(transparent)` over `[R]`.
        unsafe { &mut *(self.data.as_mut_slice() as *mut [R] as *mut VectorBase<R>) }
    }
}

impl<R: Real> From<Vec<R>> for Vector<R> {
    fn from(data: Vec<R>) -> Self {
        Self { data }
    }
}

impl<R: Real> From<&VectorBase<R>> for Vector<R> {
    fn from(v: &VectorBase<R>) -> Self {
        v.to_vector()
    }
}

impl<R: Real> Index<usize> for VectorBase<R> {
    type Output = R;
    #[track_caller]
    fn index(&self, i: usize) -> &R {
        match self.0.get(i) {
            Some(v) => v,
            None => out_of_bounds("element", i, self.0.len(), "a vector"),
        }
    }
}

impl<R: Real> IndexMut<usize> for VectorBase<R> {
    #[track_caller]
    fn index_mut(&mut self, i: usize) -> &mut R {
        let n = self.0.len();
        match self.0.get_mut(i) {
            Some(v) => v,
            None => out_of_bounds("element", i, n, "a vector"),
        }
    }
}

impl<R: Real> PartialEq for VectorBase<R> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<R: Real> fmt::Debug for VectorBase<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<R: Real> fmt::Debug for Vector<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

/// Kaldi's text form: `[ 1 2 3 ]`.
impl<R: Real> fmt::Display for VectorBase<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[")?;
        for v in &self.0 {
            write!(f, " {v}")?;
        }
        write!(f, " ]")
    }
}

impl<R: Real> fmt::Display for Vector<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resize_kinds_follow_kaldi() {
        let mut v = Vector::from_vec(vec![1.0f64, 2.0, 3.0]);
        v.resize(5, ResizeType::CopyData);
        assert_eq!(v.data(), &[1.0, 2.0, 3.0, 0.0, 0.0]);
        v.resize(2, ResizeType::CopyData);
        assert_eq!(v.data(), &[1.0, 2.0]);
        v.resize(2, ResizeType::Undefined);
        assert_eq!(v.data(), &[1.0, 2.0]);
        v.resize(3, ResizeType::SetZero);
        assert_eq!(v.data(), &[0.0, 0.0, 0.0]);
    }

    #[test]
    fn remove_element_and_swap() {
        let mut v = Vector::from_vec(vec![1.0f32, 2.0, 3.0]);
        v.remove_element(1);
        assert_eq!(v.data(), &[1.0, 3.0]);
        let mut w = Vector::new(1);
        v.swap(&mut w);
        assert_eq!((v.dim(), w.dim()), (1, 2));
    }

    #[test]
    #[should_panic(expected = "element 3 out of bounds for a vector with 3 elements")]
    fn index_out_of_range_names_index_and_size() {
        let v = Vector::<f64>::new(3);
        let _ = v[3];
    }

    #[test]
    #[should_panic(expected = "add_vec: vector dim 3 does not match dim 2")]
    fn dim_mismatch_names_both() {
        let mut v = Vector::<f64>::new(3);
        v.add_vec(1.0, &Vector::new(2));
    }

    #[test]
    fn views_write_through() {
        let mut v = Vector::from_vec(vec![1.0f64, 2.0, 3.0, 4.0]);
        {
            let (a, b) = v.split_at_mut(2);
            a.scale(10.0);
            b.add(1.0);
        }
        v.range_mut(1, 2).set(7.0);
        assert_eq!(v.data(), &[10.0, 7.0, 7.0, 5.0]);
    }

    #[test]
    fn display_is_kaldi_text() {
        assert_eq!(Vector::from_vec(vec![1.0f64, 2.5]).to_string(), "[ 1 2.5 ]");
    }
}
