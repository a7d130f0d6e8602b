//! [`ValueBuffer`]: the flat elements of a leaf (and a string column's bytes and offsets),
//! either owned (a `Vec`) or shared with an owner that keeps the memory alive (an Arrow
//! buffer taken in by `from_arrow`), read as `&[T]` and copied on the first write.
//!
//! Memory is shared only where it can be read as `&[T]` as it stands: the byte range must
//! lie in the owner's bytes, hold whole elements and start on `T`'s alignment. Anything
//! else is either an error ([`ValueBuffer::try_share`]) or a copy
//! ([`ValueBuffer::share_or_copy`]).

use std::any::Any;
use std::fmt;
use std::ops::{Deref, Range};
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::ptr::NonNull;
use std::sync::Arc;

mod sealed {
    /// Keeps [`super::Element`] to the types listed in this module.
    pub trait Sealed {}
}

/// An element type a [`ValueBuffer`] can share: plain numbers, for which every bit pattern
/// of the right size is a value (so any aligned bytes read as them).
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {}

/// Lists the element types.
macro_rules! elements {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {}
    )*};
}
elements!(u8, i32, i64, f32, f64);

/// Bytes whose address and contents never change while the value lives (behind an `Arc`,
/// only shared references are ever taken): what a [`ValueBuffer`] may share.
///
/// # Safety
///
/// `stable_bytes` must return the same memory, with the same contents, on every call for
/// as long as the value lives, and nothing may write to it meanwhile.
pub unsafe trait StableBytes: Send + Sync + RefUnwindSafe + UnwindSafe + 'static {
    /// The bytes.
    fn stable_bytes(&self) -> &[u8];
}

// SAFETY: a `Vec` reached only through shared references (an `Arc` hands out no `&mut`
// while shared, and `ValueBuffer` never asks for one) neither reallocates nor changes.
unsafe impl StableBytes for Vec<u8> {
    fn stable_bytes(&self) -> &[u8] {
        self
    }
}

// SAFETY: an Arrow `Buffer` is immutable: its bytes sit behind its own `Arc` and it offers
// no mutation through `&self`.
#[cfg(feature = "arrow")]
unsafe impl StableBytes for arrow_buffer::Buffer {
    fn stable_bytes(&self) -> &[u8] {
        self.as_slice()
    }
}

/// Why bytes could not be shared as elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareError {
    /// The byte range is not inside the owner's bytes.
    OutOfRange {
        /// The range asked for.
        range: Range<usize>,
        /// The owner's byte count.
        len: usize,
    },
    /// The range's length is not a whole number of elements.
    PartialElement {
        /// The range's length in bytes.
        bytes: usize,
        /// The element size.
        size: usize,
    },
    /// The range starts off the element's alignment.
    Misaligned {
        /// The start address modulo the alignment.
        misalignment: usize,
        /// The alignment needed.
        align: usize,
    },
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::OutOfRange { range, len } => write!(
                f,
                "the byte range {}..{} is outside the owner's {len} bytes",
                range.start, range.end
            ),
            ShareError::PartialElement { bytes, size } => write!(
                f,
                "{bytes} bytes are not a whole number of {size}-byte elements"
            ),
            ShareError::Misaligned {
                misalignment,
                align,
            } => write!(
                f,
                "the bytes start {misalignment} bytes past a {align}-byte boundary"
            ),
        }
    }
}

impl std::error::Error for ShareError {}

/// Elements owned or shared (see the [module docs](self)).
enum Repr<T> {
    /// Our own memory.
    Owned(Vec<T>),
    /// `len` elements at `ptr`, inside memory that `owner` keeps alive and unchanged.
    Shared {
        ptr: NonNull<T>,
        len: usize,
        owner: Arc<dyn Any + Send + Sync + RefUnwindSafe + UnwindSafe>,
    },
}

/// A flat buffer of elements, owned or shared with the memory of another library (an Arrow
/// buffer), copied on write: it reads as `&[T]`; [`ValueBuffer::to_mut`] copies shared
/// elements into a `Vec` of its own before the first write, so the shared memory is never
/// written.
pub struct ValueBuffer<T: Element> {
    repr: Repr<T>,
}

// SAFETY: shared elements are only read (never written: `to_mut` copies first), and their
// owner is `Send + Sync`; owned ones are a `Vec<T>` of `Send + Sync` elements.
unsafe impl<T: Element> Send for ValueBuffer<T> {}
// SAFETY: as above: `&ValueBuffer` hands out only `&[T]`.
unsafe impl<T: Element> Sync for ValueBuffer<T> {}

impl<T: Element> ValueBuffer<T> {
    /// An empty owned buffer.
    pub fn new() -> ValueBuffer<T> {
        ValueBuffer::from(Vec::new())
    }

    /// An empty owned buffer with room for `n` elements.
    pub fn with_capacity(n: usize) -> ValueBuffer<T> {
        ValueBuffer::from(Vec::with_capacity(n))
    }

    /// The elements of `owner`'s bytes in `bytes`, shared (no copy): `owner` is kept alive
    /// by the buffer and its clones. An error when the range is outside the bytes, is not
    /// a whole number of elements or starts off `T`'s alignment.
    pub fn try_share<O: StableBytes>(
        owner: Arc<O>,
        bytes: Range<usize>,
    ) -> Result<ValueBuffer<T>, ShareError> {
        let all = owner.stable_bytes();
        let Some(view) = all.get(bytes.clone()) else {
            return Err(ShareError::OutOfRange {
                range: bytes,
                len: all.len(),
            });
        };
        let size = std::mem::size_of::<T>();
        if view.len() % size != 0 {
            return Err(ShareError::PartialElement {
                bytes: view.len(),
                size,
            });
        }
        let align = std::mem::align_of::<T>();
        let misalignment = view.as_ptr() as usize % align;
        if misalignment != 0 {
            return Err(ShareError::Misaligned {
                misalignment,
                align,
            });
        }
        let ptr = NonNull::from(view).cast::<T>();
        let len = view.len() / size;
        let owner: Arc<dyn Any + Send + Sync + RefUnwindSafe + UnwindSafe> = owner;
        Ok(ValueBuffer {
            repr: Repr::Shared { ptr, len, owner },
        })
    }

    /// [`ValueBuffer::try_share`], or a copy of the elements when they start off `T`'s
    /// alignment (an error only for a range outside the bytes or not of whole elements).
    pub fn share_or_copy<O: StableBytes>(
        owner: Arc<O>,
        bytes: Range<usize>,
    ) -> Result<ValueBuffer<T>, ShareError> {
        match ValueBuffer::try_share(owner.clone(), bytes.clone()) {
            Err(ShareError::Misaligned { .. }) => {
                let view = &owner.stable_bytes()[bytes];
                let n = view.len() / std::mem::size_of::<T>();
                let mut out: Vec<T> = Vec::with_capacity(n);
                // SAFETY: `try_share` checked that `view` lies in the owner's bytes and
                // holds exactly `n` whole elements; `out` has room for `n` elements, the
                // byte copy needs no alignment, and every bit pattern is a `T` (`Element`
                // is sealed to plain numbers), so `n` elements are initialised.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        view.as_ptr(),
                        out.as_mut_ptr().cast::<u8>(),
                        view.len(),
                    );
                    out.set_len(n);
                }
                Ok(ValueBuffer::from(out))
            }
            other => other,
        }
    }

    /// True when the elements are shared with another owner's memory (not copied).
    pub fn is_shared(&self) -> bool {
        matches!(self.repr, Repr::Shared { .. })
    }

    /// The elements.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match &self.repr {
            Repr::Owned(v) => v,
            // SAFETY: `try_share` checked that `len` elements at `ptr` lie inside the
            // owner's bytes and are aligned for `T`; the owner, held in `owner`, keeps
            // them alive and unchanged (`StableBytes`), and any bits are a `T`.
            Repr::Shared { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }

    /// The elements as a `Vec` of our own, to write to: shared elements are copied first
    /// (copy on write; the shared memory is never written).
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if let Repr::Shared { .. } = self.repr {
            self.repr = Repr::Owned(self.as_slice().to_vec());
        }
        match &mut self.repr {
            Repr::Owned(v) => v,
            Repr::Shared { .. } => unreachable!("made owned above"),
        }
    }

    /// The elements as a `Vec` (a copy when shared).
    pub fn into_vec(self) -> Vec<T> {
        match self.repr {
            Repr::Owned(v) => v,
            Repr::Shared { .. } => self.as_slice().to_vec(),
        }
    }

    /// Frees unused capacity of owned elements (shared ones have none).
    pub fn shrink_to_fit(&mut self) {
        if let Repr::Owned(v) = &mut self.repr {
            v.shrink_to_fit();
        }
    }
}

impl<T: Element> Default for ValueBuffer<T> {
    fn default() -> Self {
        ValueBuffer::new()
    }
}

impl<T: Element> Clone for ValueBuffer<T> {
    /// Owned elements are copied; shared ones share the same owner again (no copy).
    fn clone(&self) -> Self {
        let repr = match &self.repr {
            Repr::Owned(v) => Repr::Owned(v.clone()),
            Repr::Shared { ptr, len, owner } => Repr::Shared {
                ptr: *ptr,
                len: *len,
                owner: owner.clone(),
            },
        };
        ValueBuffer { repr }
    }
}

impl<T: Element> Deref for ValueBuffer<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Element> AsRef<[T]> for ValueBuffer<T> {
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Element + fmt::Debug> fmt::Debug for ValueBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl<T: Element + PartialEq> PartialEq for ValueBuffer<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Element + PartialEq> PartialEq<Vec<T>> for ValueBuffer<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Element + PartialEq> PartialEq<[T]> for ValueBuffer<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.as_slice() == other
    }
}

impl<T: Element + PartialEq, const N: usize> PartialEq<[T; N]> for ValueBuffer<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        self.as_slice() == other
    }
}

impl<T: Element> From<Vec<T>> for ValueBuffer<T> {
    fn from(v: Vec<T>) -> Self {
        ValueBuffer {
            repr: Repr::Owned(v),
        }
    }
}

impl<T: Element> From<&[T]> for ValueBuffer<T> {
    fn from(v: &[T]) -> Self {
        ValueBuffer::from(v.to_vec())
    }
}

impl<T: Element> From<ValueBuffer<T>> for Vec<T> {
    fn from(v: ValueBuffer<T>) -> Self {
        v.into_vec()
    }
}

impl<T: Element> FromIterator<T> for ValueBuffer<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        ValueBuffer::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<'a, T: Element> IntoIterator for &'a ValueBuffer<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An owner holding the native bytes of `values` from `pad` bytes past an 8-byte
    /// boundary (a `Vec<u8>` itself may start anywhere), and their byte range.
    fn owner_at(values: &[i64], pad: usize) -> (Arc<Vec<u8>>, Range<usize>) {
        let mut bytes = vec![0u8; 16 + values.len() * 8];
        let start = (8 - bytes.as_ptr() as usize % 8) % 8 + pad;
        for (i, x) in values.iter().enumerate() {
            bytes[start + i * 8..start + i * 8 + 8].copy_from_slice(&x.to_ne_bytes());
        }
        // moving the Vec into the Arc keeps its heap allocation where it is
        (Arc::new(bytes), start..start + values.len() * 8)
    }

    fn aligned_owner(values: &[i64]) -> (Arc<Vec<u8>>, Range<usize>) {
        owner_at(values, 0)
    }

    #[test]
    fn aligned_bytes_are_shared_in_place() {
        let (owner, range) = aligned_owner(&[7, -1, 9]);
        let start = owner[range.start..].as_ptr();
        let buf = ValueBuffer::<i64>::try_share(owner.clone(), range).unwrap();
        assert!(buf.is_shared());
        assert_eq!(buf, [7, -1, 9]);
        assert_eq!(buf.as_ptr().cast::<u8>(), start);
        // the clone shares the same memory and keeps the owner alive
        let copy = buf.clone();
        assert_eq!(copy.as_ptr(), buf.as_ptr());
        assert_eq!(Arc::strong_count(&owner), 3);
        drop((buf, copy));
        assert_eq!(Arc::strong_count(&owner), 1);
    }

    #[test]
    fn writing_copies_and_leaves_the_owner_unchanged() {
        let (owner, range) = aligned_owner(&[1, 2]);
        let before = owner.as_slice().to_vec();
        let mut buf = ValueBuffer::<i64>::try_share(owner.clone(), range).unwrap();
        buf.to_mut()[0] = 100;
        buf.to_mut().push(3);
        assert!(!buf.is_shared());
        assert_eq!(buf, [100, 2, 3]);
        assert_eq!(*owner, before);
    }

    /// The hostile values for `try_share`'s checks, which its `unsafe` reads rely on: a
    /// misaligned start, a range past the end, a partial element.
    #[test]
    fn misaligned_short_and_out_of_range_bytes_are_refused() {
        let (owner, odd) = owner_at(&[1, 2, 3], 4);
        assert_eq!(
            ValueBuffer::<i64>::try_share(owner.clone(), odd.clone()).unwrap_err(),
            ShareError::Misaligned {
                misalignment: 4,
                align: 8
            }
        );
        // the same bytes are aligned for i32
        assert!(ValueBuffer::<i32>::try_share(owner.clone(), odd.clone()).is_ok());
        let len = owner.len();
        assert_eq!(
            ValueBuffer::<u8>::try_share(owner.clone(), 0..len + 1).unwrap_err(),
            ShareError::OutOfRange {
                range: 0..len + 1,
                len
            }
        );
        assert_eq!(
            ValueBuffer::<i64>::try_share(owner.clone(), odd.start - 4..odd.start + 8).unwrap_err(),
            ShareError::PartialElement { bytes: 12, size: 8 }
        );
        assert_eq!(
            ValueBuffer::<i32>::try_share(owner, 0..3)
                .unwrap_err()
                .to_string(),
            "3 bytes are not a whole number of 4-byte elements"
        );
    }

    #[test]
    fn misaligned_bytes_are_copied_by_share_or_copy() {
        // one byte past an 8-byte boundary: never aligned for i64
        let (owner, odd) = owner_at(&[5, 6, 7], 1);
        let refused = ValueBuffer::<i64>::try_share(owner.clone(), odd.clone());
        assert_eq!(
            refused.unwrap_err(),
            ShareError::Misaligned {
                misalignment: 1,
                align: 8
            }
        );
        let copied = ValueBuffer::<i64>::share_or_copy(owner, odd).unwrap();
        assert!(!copied.is_shared());
        assert_eq!(copied, [5, 6, 7]);
    }

    #[test]
    fn owned_buffers_convert_both_ways() {
        let buf: ValueBuffer<f64> = vec![0.5, 1.5].into();
        assert!(!buf.is_shared());
        assert_eq!(format!("{buf:?}"), "[0.5, 1.5]");
        assert_eq!(Vec::from(buf.clone()), vec![0.5, 1.5]);
        let collected: ValueBuffer<u8> = (1..=3).collect();
        assert_eq!(collected, vec![1, 2, 3]);
    }
}
