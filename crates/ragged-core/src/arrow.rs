//! Arrow interchange (feature `arrow`): a `Ragged<T>` of `n` axes is an Arrow `ListArray`
//! nested `n - 1` deep over a `PrimitiveArray<T>`, row splits as the offsets, zero-copy
//! where the layouts agree.
//!
//! ```text
//! Ragged { row_splits(1), .., row_splits(n-1), values }
//!   <=> List<List<..<Primitive>>>: offsets = row_splits(1), child = List(offsets = row_splits(2), ..)
//! ```

use std::sync::Arc;

use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, LargeListArray, ListArray, PrimitiveArray};
use arrow_buffer::{ArrowNativeType, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};

use crate::error::Error;
use crate::ragged::Ragged;
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;

/// The element types a [`Ragged`] exchanges with Arrow: the native types of Arrow's primitive
/// arrays (`i8`..`i64`, `u8`..`u64`, `f32`, `f64`).
pub trait ArrowValue: ArrowNativeType {
    /// The Arrow primitive type whose native type is `Self`.
    type ArrowType: ArrowPrimitiveType<Native = Self>;
}

macro_rules! arrow_value {
    ($($t:ty => $a:ty),* $(,)?) => {
        $(impl ArrowValue for $t {
            type ArrowType = $a;
        })*
    };
}

arrow_value!(
    i8 => Int8Type, i16 => Int16Type, i32 => Int32Type, i64 => Int64Type,
    u8 => UInt8Type, u16 => UInt16Type, u32 => UInt32Type, u64 => UInt64Type,
    f32 => Float32Type, f64 => Float64Type,
);

/// The Arrow field of a list's items: named `item`, as Arrow's builders name it, not nullable.
fn item_field(data_type: DataType) -> Arc<Field> {
    Arc::new(Field::new("item", data_type, false))
}

/// Wraps `child` in one list level per offsets buffer, innermost last.
fn nest(mut child: ArrayRef, offsets: Vec<arrow_buffer::OffsetBuffer<i32>>) -> ListArray {
    let mut offsets = offsets;
    let outer = offsets.remove(0);
    for inner in offsets.into_iter().rev() {
        let field = item_field(child.data_type().clone());
        let list = ListArray::try_new(field, inner, child, None)
            .expect("row splits end at the number of items below them");
        child = Arc::new(list);
    }
    let field = item_field(child.data_type().clone());
    ListArray::try_new(field, outer, child, None)
        .expect("row splits end at the number of items below them")
}

impl<T: ArrowValue> Ragged<T> {
    /// This array as an Arrow `ListArray` nested `num_axes() - 1` deep (a 2-axis array is a
    /// `List<T>`, a 3-axis one `List<List<T>>`), without copying: the values become the
    /// child buffer and each layer's row splits its offsets buffer, moved when this array
    /// holds the only handle to them and shared otherwise (the buffer keeps them alive).
    ///
    /// ```
    /// use ragged_core::Ragged;
    /// let r: Ragged<i32> = "[ [ 1 2 ] [ ] [ 3 ] ]".parse().unwrap();
    /// let list = r.into_arrow();
    /// assert_eq!(list.value_offsets(), &[0, 2, 2, 3]);
    /// let back = Ragged::<i32>::from_arrow(std::sync::Arc::new(list)).unwrap();
    /// assert_eq!(back.to_vec_vec(), vec![vec![1, 2], vec![], vec![3]]);
    /// ```
    pub fn into_arrow(self) -> ListArray {
        let (shape, values) = self.into_parts();
        let offsets = shape
            .into_layers()
            .into_iter()
            .map(RowPartition::into_arrow_offsets)
            .collect();
        let leaf: ArrayRef = Arc::new(PrimitiveArray::<T::ArrowType>::new(
            ScalarBuffer::from(values),
            None,
        ));
        nest(leaf, offsets)
    }

    /// Like [`Ragged::into_arrow`], borrowing: the row splits are shared with the result (no
    /// copy), the values copied once.
    pub fn to_arrow(&self) -> ListArray {
        let offsets = self
            .shape()
            .layers()
            .iter()
            .map(RowPartition::to_arrow_offsets)
            .collect();
        let leaf: ArrayRef = Arc::new(PrimitiveArray::<T::ArrowType>::new(
            ScalarBuffer::from(self.values().to_vec()),
            None,
        ));
        nest(leaf, offsets)
    }

    /// A ragged array from an Arrow `ListArray` or `LargeListArray`, nested as deep as the
    /// lists go, over a `PrimitiveArray` of `T`'s Arrow type.
    ///
    /// Zero-copy where the layouts agree: when `array` (and each child below it) is the
    /// only handle to its buffers, starts at offset 0 and is not a slice, its offsets
    /// become the row splits and its values buffer the values, without copying. Otherwise
    /// (shared buffers, a sliced array whose first offset is not 0, `i64` offsets) they are
    /// copied, rebased to start at 0. A null anywhere is [`Error::ArrowNull`]: nulls have
    /// no place in a ragged array, and dropping them would lose data. A type other than
    /// lists over `T` is [`Error::ArrowType`].
    pub fn from_arrow(array: ArrayRef) -> Result<Self, Error> {
        let mut layers = Vec::new();
        let mut current = array;
        let mut axis = 0;
        loop {
            check_no_nulls(current.as_ref(), axis)?;
            match current.data_type() {
                DataType::List(_) => {
                    let list = downcast_owned::<ListArray>(current);
                    let (_, offsets, child, _) = list.into_parts();
                    let (splits, begin, end) = splits_from_i32(offsets);
                    // SAFETY: `splits_from_i32` rebases an `OffsetBuffer` (non-empty,
                    // non-negative, never decreasing: its own invariant) to start at 0.
                    layers.push(unsafe { RowPartition::from_row_splits_unchecked(splits) });
                    current = slice_if_needed(child, begin, end);
                }
                DataType::LargeList(_) => {
                    let list = downcast_owned::<LargeListArray>(current);
                    let (_, offsets, child, _) = list.into_parts();
                    let (splits, begin, end) = splits_from_i64(&offsets)?;
                    // SAFETY: `splits_from_i64` rebases an `OffsetBuffer` (as above) to start
                    // at 0, having checked that `last - first` fits `i32`, so no cast wraps.
                    layers.push(unsafe { RowPartition::from_row_splits_unchecked(splits) });
                    current = slice_if_needed(child, begin, end);
                }
                found if layers.is_empty() => {
                    return Err(Error::ArrowType {
                        axis,
                        expected: "a list (List or LargeList)".to_string(),
                        found: found.to_string(),
                    })
                }
                found if *found == T::ArrowType::DATA_TYPE => {
                    let leaf = downcast_owned::<PrimitiveArray<T::ArrowType>>(current);
                    let (_, buffer, _) = leaf.into_parts();
                    let values = buffer
                        .into_inner()
                        .into_vec::<T>()
                        .unwrap_or_else(|shared| shared.typed_data::<T>().to_vec());
                    let shape = RaggedShape::from_matching_layers(layers);
                    return Ok(Ragged::from_matching_parts(shape, values));
                }
                found => {
                    return Err(Error::ArrowType {
                        axis,
                        expected: format!("a list or {}", T::ArrowType::DATA_TYPE),
                        found: found.to_string(),
                    })
                }
            }
            axis += 1;
        }
    }
}

/// `Error::ArrowNull` naming the first null of `array`, if it has one.
fn check_no_nulls(array: &dyn Array, axis: usize) -> Result<(), Error> {
    match array.logical_nulls() {
        Some(nulls) if nulls.null_count() > 0 => Err(Error::ArrowNull {
            axis,
            index: first_null(&nulls),
        }),
        _ => Ok(()),
    }
}

fn first_null(nulls: &NullBuffer) -> usize {
    (0..nulls.len())
        .find(|&i| nulls.is_null(i))
        .expect("null_count > 0")
}

/// The concrete array behind `array`, owned: a clone of it (which shares its buffers) once
/// `array` is dropped, so that when `array` was the only handle, the clone is too.
fn downcast_owned<A: Array + Clone + 'static>(array: ArrayRef) -> A {
    let owned = array
        .as_any()
        .downcast_ref::<A>()
        .expect("the data type was matched above")
        .clone();
    drop(array);
    owned
}

/// The row splits of `i32` offsets, with the child range they cover. Offsets starting at 0
/// are taken over without copying when nobody else holds them; otherwise copied, rebased.
fn splits_from_i32(offsets: arrow_buffer::OffsetBuffer<i32>) -> (Vec<i32>, usize, usize) {
    let first = offsets[0];
    let last = offsets[offsets.len() - 1];
    let (begin, end) = (first as usize, last as usize);
    if first == 0 {
        let splits = offsets
            .into_inner()
            .into_inner()
            .into_vec::<i32>()
            .unwrap_or_else(|shared| shared.typed_data::<i32>().to_vec());
        return (splits, begin, end);
    }
    (offsets.iter().map(|&o| o - first).collect(), begin, end)
}

/// The row splits of `i64` offsets (copied, rebased to 0), with the child range they cover;
/// rows beyond `i32` offsets are [`Error::Overflow`].
fn splits_from_i64(
    offsets: &arrow_buffer::OffsetBuffer<i64>,
) -> Result<(Vec<i32>, usize, usize), Error> {
    let first = offsets[0];
    let last = offsets[offsets.len() - 1];
    if last - first > i64::from(i32::MAX) || offsets.len() - 1 > i32::MAX as usize {
        return Err(Error::Overflow {
            what: "the number of items of a LargeList",
            value: (last - first) as u64,
        });
    }
    let splits = offsets.iter().map(|&o| (o - first) as i32).collect();
    Ok((splits, first as usize, last as usize))
}

/// `child` restricted to `begin..end` (zero-copy in Arrow), unless it already is exactly that.
fn slice_if_needed(child: ArrayRef, begin: usize, end: usize) -> ArrayRef {
    if begin == 0 && end == child.len() {
        child
    } else {
        child.slice(begin, end - begin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_taken_over_only_when_unshared_and_unsliced() {
        let offsets = arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![0, 2, 5]));
        let ptr = offsets.as_ptr();
        let (splits, begin, end) = splits_from_i32(offsets);
        assert_eq!((splits.as_slice(), begin, end), (&[0, 2, 5][..], 0, 5));
        assert_eq!(splits.as_ptr(), ptr);
        let offsets = arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![3, 4, 9]));
        assert_eq!(splits_from_i32(offsets), (vec![0, 1, 6], 3, 9));
        let offsets = arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 1, 2]));
        let shared = offsets.clone();
        let (splits, _, _) = splits_from_i32(offsets);
        assert_ne!(splits.as_ptr(), shared.as_ptr());
        assert_eq!(splits, vec![0, 1, 2]);
    }

    #[test]
    fn large_offsets_beyond_i32_are_overflow_errors() {
        let offsets =
            arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![5i64, 5, 5 + (1i64 << 31)]));
        assert_eq!(
            splits_from_i64(&offsets),
            Err(Error::Overflow {
                what: "the number of items of a LargeList",
                value: 1 << 31
            })
        );
        let offsets = arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(vec![7i64, 8, 10]));
        assert_eq!(splits_from_i64(&offsets), Ok((vec![0, 1, 3], 7, 10)));
    }
}
