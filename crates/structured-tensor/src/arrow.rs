//! Arrow interchange (feature `arrow`): a rank-`k` `StructuredTensor` is `k - 1` nested Arrow
//! `ListArray`s over a `StructArray` of its structs; each field is a column of that
//! `StructArray` (nested structs are `StructArray`s, a field's own dimensions are lists).
//! Row partitions become offsets buffers without copying (shared on the way out); leaf
//! buffers are shared both ways (booleans copied, since Arrow packs them in bits).
//!
//! ```text
//! rank 1: Struct{a: Int64, b: List<Float64>, c: Struct{..}}      (one row per struct)
//! rank 2: List<Struct{..}>   offsets = row_partitions()[0]
//! ```

use std::ptr::NonNull;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type, UInt8Type};
use arrow_array::{
    Array as ArrowArray, ArrayRef, BinaryArray, BooleanArray, Float32Array, Float64Array,
    Int32Array, Int64Array, LargeBinaryArray, LargeListArray, LargeStringArray, ListArray,
    RecordBatch, StringArray, StructArray, UInt8Array,
};
use arrow_buffer::{
    alloc::Allocation, ArrowNativeType, BooleanBuffer, Buffer, NullBuffer, OffsetBuffer,
    ScalarBuffer,
};
use arrow_schema::{DataType, Field, Fields};
use indexmap::IndexMap;

use crate::array::Array;
use crate::buffer::{Element, ValueBuffer};
use crate::error::{is_valid_field_name, Error, FieldPath};
use crate::partition::RowPartition;
use crate::strings::{BytesColumn, StringColumn};
use crate::structured::{FieldValue, StructuredTensor};
use crate::validity::Validity;
use crate::values::{DType, Values};

fn arrow_error(path: &FieldPath, problem: impl Into<String>) -> Error {
    Error::Arrow {
        path: path.clone(),
        problem: problem.into(),
    }
}

/// How Arrow data (and Parquet files, read through Arrow) are taken in. The default is
/// TensorFlow's rules: no nulls, field names `^[a-zA-Z][a-zA-Z0-9_]*$`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArrowOptions {
    /// Nulls are read: a null leaf value is a null (the leaf is nullable), a null list an
    /// empty list (an error when the writer left values under it), a null struct makes
    /// every leaf below it null. Off: a null is an error.
    pub nulls: bool,
    /// Any UTF-8 field name; off: TensorFlow's rule.
    pub any_field_names: bool,
}

impl ArrowOptions {
    /// Nulls read (see [`ArrowOptions::nulls`]).
    pub fn with_nulls(mut self, nulls: bool) -> ArrowOptions {
        self.nulls = nulls;
        self
    }

    /// Any UTF-8 field name allowed.
    pub fn with_any_field_names(mut self, any: bool) -> ArrowOptions {
        self.any_field_names = any;
        self
    }

    /// Everything real-world data needs: nulls and any field name.
    pub fn permissive() -> ArrowOptions {
        ArrowOptions {
            nulls: true,
            any_field_names: true,
        }
    }
}

/// A validity bitmap as Arrow's null buffer (`None` when there is no null).
fn null_buffer(validity: Option<&Validity>) -> Option<NullBuffer> {
    let v = validity?;
    let bits = BooleanBuffer::new(Buffer::from(v.as_bytes().to_vec()), 0, v.len());
    Some(NullBuffer::new(bits))
}

/// An Arrow buffer over `data`, a buffer held by `owner`, without copying: the Arrow buffer
/// keeps a clone of `owner`'s `Arc`.
fn shared_buffer<T: Copy>(owner: &Arc<Values>, data: &[T]) -> Buffer {
    let ptr = NonNull::from(data).cast::<u8>();
    let allocation: Arc<dyn Allocation> = owner.clone();
    // SAFETY: `ptr` points at `size_of_val(data)` initialised bytes inside one of `owner`'s
    // buffers; a `Values` behind an `Arc` is never mutated, moved or freed while shared (the
    // crate takes no `&mut` through the `Arc`), and `allocation` keeps it alive as long as
    // the Arrow buffer lives.
    unsafe { Buffer::from_custom_allocation(ptr, std::mem::size_of_val(data), allocation) }
}

/// A string column as an Arrow `StringArray` (`LargeStringArray` past `i32` offsets),
/// sharing its offsets and bytes (no copy, no pass over the elements).
fn strings_to_arrow(owner: &Arc<Values>, column: &StringColumn) -> ArrayRef {
    let layout = column.as_bytes();
    let values = shared_buffer(owner, layout.bytes());
    if let Some(offsets) = layout.offsets_i32() {
        let offsets = ScalarBuffer::<i32>::from(shared_buffer(owner, offsets));
        // SAFETY: a string column's offsets are non-empty, start at 0 and never decrease
        // (checked by `BytesColumn::try_from_*_parts`, kept by every op).
        let offsets = unsafe { OffsetBuffer::new_unchecked(offsets) };
        // SAFETY: `StringArray::try_new` would accept these parts: the offsets end at the
        // number of bytes and every element is valid UTF-8 (the `StringColumn` invariant,
        // checked by `StringColumn::from_bytes`), and there is no null buffer.
        Arc::new(unsafe { StringArray::new_unchecked(offsets, values, None) })
    } else {
        let offsets = layout.offsets_i64().expect("offsets are i32 or i64");
        let offsets = ScalarBuffer::<i64>::from(shared_buffer(owner, offsets));
        // SAFETY: as above, for `i64` offsets.
        let offsets = unsafe { OffsetBuffer::new_unchecked(offsets) };
        // SAFETY: as above.
        Arc::new(unsafe { LargeStringArray::new_unchecked(offsets, values, None) })
    }
}

/// The leaf values as an Arrow array: numbers and strings share the column's buffers (no
/// copy); booleans are copied, since Arrow packs them in bits.
fn leaf_to_arrow(values: &Arc<Values>, validity: Option<&Validity>) -> ArrayRef {
    let leaf = leaf_values_to_arrow(values);
    match null_buffer(validity) {
        None => leaf,
        Some(nulls) => {
            let data = leaf
                .into_data()
                .into_builder()
                .nulls(Some(nulls))
                .build()
                .expect("a validity bitmap as long as the values");
            arrow_array::make_array(data)
        }
    }
}

fn leaf_values_to_arrow(values: &Arc<Values>) -> ArrayRef {
    match &**values {
        Values::I64(v) => Arc::new(Int64Array::new(shared_buffer(values, v).into(), None)),
        Values::F64(v) => Arc::new(Float64Array::new(shared_buffer(values, v).into(), None)),
        Values::Bool(v) => Arc::new(BooleanArray::from(v.clone())),
        Values::Str(v) => strings_to_arrow(values, v),
        Values::I32(v) => Arc::new(Int32Array::new(shared_buffer(values, v).into(), None)),
        Values::F32(v) => Arc::new(Float32Array::new(shared_buffer(values, v).into(), None)),
        Values::U8(v) => Arc::new(UInt8Array::new(shared_buffer(values, v).into(), None)),
        Values::Bytes(v) => bytes_to_arrow(values, v),
    }
}

/// A bytes column as an Arrow `BinaryArray` (`LargeBinaryArray` past `i32` offsets),
/// sharing its offsets and bytes.
fn bytes_to_arrow(owner: &Arc<Values>, column: &BytesColumn) -> ArrayRef {
    let values = shared_buffer(owner, column.bytes());
    if let Some(offsets) = column.offsets_i32() {
        let offsets = ScalarBuffer::<i32>::from(shared_buffer(owner, offsets));
        // SAFETY: a bytes column's offsets are non-empty, start at 0 and never decrease
        // (checked by `BytesColumn::try_from_*_parts`, kept by every op).
        let offsets = unsafe { OffsetBuffer::new_unchecked(offsets) };
        Arc::new(
            BinaryArray::try_new(offsets, values, None)
                .expect("a bytes column's offsets end at its byte count"),
        )
    } else {
        let offsets = column.offsets_i64().expect("offsets are i32 or i64");
        let offsets = ScalarBuffer::<i64>::from(shared_buffer(owner, offsets));
        // SAFETY: as above, for `i64` offsets.
        let offsets = unsafe { OffsetBuffer::new_unchecked(offsets) };
        Arc::new(
            LargeBinaryArray::try_new(offsets, values, None)
                .expect("a bytes column's offsets end at its byte count"),
        )
    }
}

/// The elements of an Arrow scalar buffer, shared (no copy: the returned buffer keeps the
/// Arrow buffer alive) when they are aligned for `T`, else copied.
fn values_from_arrow<T: Element + ArrowNativeType>(
    values: &ScalarBuffer<T>,
    path: &FieldPath,
) -> Result<ValueBuffer<T>, Error> {
    let buffer = values.inner().clone();
    let len = buffer.len();
    ValueBuffer::share_or_copy(Arc::new(buffer), 0..len)
        .map_err(|e| arrow_error(path, e.to_string()))
}

/// An Arrow offset width, and the column built over offsets of that width.
trait ArrowOffset: Element + ArrowNativeType + Into<i64> {
    /// A checked column over these offsets and bytes.
    fn column(offsets: ValueBuffer<Self>, bytes: ValueBuffer<u8>) -> Result<BytesColumn, Error>;
}

impl ArrowOffset for i32 {
    fn column(offsets: ValueBuffer<i32>, bytes: ValueBuffer<u8>) -> Result<BytesColumn, Error> {
        BytesColumn::try_from_i32_buffers(offsets, bytes)
    }
}

impl ArrowOffset for i64 {
    fn column(offsets: ValueBuffer<i64>, bytes: ValueBuffer<u8>) -> Result<BytesColumn, Error> {
        BytesColumn::try_from_i64_buffers(offsets, bytes)
    }
}

/// A bytes column from an Arrow array's offsets and value bytes. The bytes the elements
/// cover are shared (no copy). The offsets are shared too when they start at 0 and are
/// already the width we keep (`i32` while the bytes fit it, `i64` beyond); otherwise (a
/// slice whose offsets start later, or `LargeBinary` offsets over few bytes) they are
/// rebased or narrowed into a copy. The offsets are checked either way.
fn bytes_from_arrow<O: ArrowOffset>(
    offsets: &OffsetBuffer<O>,
    bytes: &Buffer,
    path: &FieldPath,
) -> Result<BytesColumn, Error> {
    let first: i64 = offsets[0].into();
    let last: i64 = offsets[offsets.len() - 1].into();
    let range = usize::try_from(first).unwrap_or(usize::MAX)..usize::try_from(last).unwrap_or(0);
    let shared = ValueBuffer::<u8>::try_share(Arc::new(bytes.clone()), range)
        .map_err(|e| arrow_error(path, format!("the offsets {first}..{last}: {e}")))?;
    let fits_i32 = i32::try_from(last - first).is_ok();
    let keeps_width = fits_i32 == (std::mem::size_of::<O>() == 4);
    let column = if first == 0 && keeps_width {
        O::column(values_from_arrow(offsets.inner(), path)?, shared)
    } else {
        let rebased = offsets.iter().map(|&o| o.into() - first);
        if fits_i32 {
            BytesColumn::try_from_i32_buffers(rebased.map(|o| o as i32).collect(), shared)
        } else {
            BytesColumn::try_from_i64_buffers(rebased.collect(), shared)
        }
    };
    column.map_err(|e| arrow_error(path, e.to_string()))
}

/// A string column from an Arrow array's offsets and value bytes, shared as
/// [`bytes_from_arrow`] shares them; the bytes are checked to be UTF-8 (a read, no copy).
fn strings_from_arrow<O: ArrowOffset>(
    offsets: &OffsetBuffer<O>,
    bytes: &Buffer,
    path: &FieldPath,
) -> Result<StringColumn, Error> {
    StringColumn::from_bytes(bytes_from_arrow(offsets, bytes, path)?)
        .map_err(|e| arrow_error(path, e.to_string()))
}

/// `child` wrapped in one list per partition, the last partition innermost: `List`s whose
/// offsets share the partitions' memory for shape dtype `int32`, `LargeList`s with the
/// offsets widened to `i64` (a copy) for `int64`.
fn wrap_in_lists(mut child: ArrayRef, partitions: &[RowPartition], shape_dtype: DType) -> ArrayRef {
    for p in partitions.iter().rev() {
        let item_nullable = child.null_count() > 0 || nullable_leaf_type(child.as_ref());
        let field = Arc::new(Field::new("item", child.data_type().clone(), item_nullable));
        child = if shape_dtype == DType::I64 {
            let wide: Vec<i64> = p.row_splits().iter().map(|&s| i64::from(s)).collect();
            // SAFETY: widened row splits keep the partition's invariant (non-empty, start at
            // 0, never decrease), which the safe constructors of `RowPartition` check and
            // its `unsafe` `*_unchecked` constructors require of their callers.
            let offsets = unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(wide)) };
            Arc::new(
                LargeListArray::try_new(field, offsets, child, None)
                    .expect("a partition's last split is the number of items below it"),
            )
        } else {
            Arc::new(
                ListArray::try_new(field, p.to_arrow_offsets(), child, None)
                    .expect("a partition's last split is the number of items below it"),
            )
        };
    }
    child
}

/// The struct array of the innermost structs of `st`: one column per field, each holding
/// the field's values below the struct's own dimensions.
fn structs_to_arrow(st: &StructuredTensor) -> StructArray {
    let skip = st.row_partitions().len();
    let mut fields = Vec::with_capacity(st.fields().len());
    let mut columns = Vec::with_capacity(st.fields().len());
    for (name, value) in st.fields() {
        let column = value_to_arrow(value, skip);
        let nullable = column.null_count() > 0
            || matches!(value, FieldValue::Array(a) if a.is_nullable()
                && a.rank() == skip + 1);
        fields.push(Field::new(name, column.data_type().clone(), nullable));
        columns.push(column);
    }
    if columns.is_empty() {
        return StructArray::new_empty_fields(st.num_structs(), None);
    }
    StructArray::try_new(Fields::from(fields), columns, None)
        .expect("every field has one item per struct")
}

/// True when `array` is a leaf array whose nulls were declared (it has a null buffer of
/// no nulls: kept nullable, so that a nullable leaf without nulls stays nullable).
fn nullable_leaf_type(array: &dyn ArrowArray) -> bool {
    array.nulls().is_some()
}

/// A field's value with its first `skip` dimensions (the enclosing struct's) removed.
fn value_to_arrow(value: &FieldValue, skip: usize) -> ArrayRef {
    match value {
        FieldValue::Array(a) => wrap_in_lists(
            leaf_to_arrow(a.values_arc(), a.validity()),
            &a.row_partitions()[skip.min(a.row_partitions().len())..],
            a.shape_dtype(),
        ),
        FieldValue::Struct(s) => wrap_in_lists(
            Arc::new(structs_to_arrow(s)),
            &s.row_partitions()[skip..],
            s.shape_dtype(),
        ),
    }
}

impl StructuredTensor {
    /// This tensor as an Arrow array (feature `arrow`): a `StructArray` with one row per
    /// struct at rank 1, inside `rank - 1` `ListArray`s at higher ranks, whose offsets are
    /// the row partitions themselves (shared, not copied); leaf values become Arrow arrays
    /// (`Int64`, `Float64`, `Utf8`, ... sharing the leaf's memory; `Boolean` copied into
    /// bits), a field's own dimensions become lists. A rank-0 tensor is [`Error::Arrow`]: take its `[0]`-free form with
    /// `partition_outer_dimension` or build a one-row tensor instead.
    pub fn to_arrow(&self) -> Result<ArrayRef, Error> {
        if self.rank() == 0 {
            return Err(arrow_error(
                &FieldPath::root(),
                "a rank-0 StructuredTensor has no rows for Arrow; give it rank 1",
            ));
        }
        Ok(wrap_in_lists(
            Arc::new(structs_to_arrow(self)),
            self.row_partitions(),
            self.shape_dtype(),
        ))
    }

    /// A rank-1 tensor as an Arrow `RecordBatch`: one column per field, one row per struct.
    pub fn to_record_batch(&self) -> Result<RecordBatch, Error> {
        if self.rank() != 1 {
            return Err(arrow_error(
                &FieldPath::root(),
                format!(
                    "a RecordBatch holds a rank-1 StructuredTensor, this one has rank {}",
                    self.rank()
                ),
            ));
        }
        Ok(RecordBatch::from(structs_to_arrow(self)))
    }

    /// A tensor from an Arrow array (feature `arrow`): a `StructArray` (rank 1) or lists of
    /// one (`List` or `LargeList`; rank = 1 + the list depth). Columns become fields:
    /// `Int64`, `Float64`, `Boolean`, `Utf8`/`LargeUtf8` leaves, lists of them (the field's
    /// own ragged dimensions), nested `StructArray`s. Leaf values are read in place (the
    /// tensor holds the Arrow buffers; booleans, misaligned numbers and rebased string
    /// offsets are copied, see [`ValueBuffer`]); the partitions are copied from the offsets
    /// (rebased where the array is a slice) and shared by every field. Nulls, other
    /// types, field names outside `^[a-zA-Z][a-zA-Z0-9_]*$` and a name given twice in one
    /// struct are errors naming the path.
    pub fn from_arrow(array: &dyn ArrowArray) -> Result<StructuredTensor, Error> {
        Self::from_arrow_with_options(array, &ArrowOptions::default())
    }

    /// [`StructuredTensor::from_arrow`] under `options`: nulls (a null leaf value is a
    /// null, a null list an empty list, a null struct nulls every leaf below) and any
    /// UTF-8 field name, each when asked for.
    pub fn from_arrow_with_options(
        array: &dyn ArrowArray,
        options: &ArrowOptions,
    ) -> Result<StructuredTensor, Error> {
        let nrows = array.len();
        let ctx = Ctx {
            options,
            inherited: None,
        };
        match value_from_arrow(
            array.slice(0, nrows),
            &[],
            false,
            nrows,
            &FieldPath::root(),
            ctx,
        )? {
            FieldValue::Struct(st) => Ok(st),
            FieldValue::Array(_) => Err(arrow_error(
                &FieldPath::root(),
                format!(
                    "expected a Struct array or lists of one, found {}",
                    array.data_type()
                ),
            )),
        }
    }

    /// A rank-1 tensor from an Arrow `RecordBatch`: one field per column.
    pub fn from_record_batch(batch: &RecordBatch) -> Result<StructuredTensor, Error> {
        Self::from_arrow(&StructArray::from(batch.clone()))
    }

    /// [`StructuredTensor::from_record_batch`] under `options` (see
    /// [`StructuredTensor::from_arrow_with_options`]).
    pub fn from_record_batch_with_options(
        batch: &RecordBatch,
        options: &ArrowOptions,
    ) -> Result<StructuredTensor, Error> {
        Self::from_arrow_with_options(&StructArray::from(batch.clone()), options)
    }
}

/// What a conversion from Arrow carries down: the options, and the nulls of the
/// enclosing struct at this array's top level.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    options: &'a ArrowOptions,
    inherited: Option<&'a NullBuffer>,
}

/// A null list must hold no values (we read it as an empty list).
fn check_null_lists_empty(
    array: &dyn ArrowArray,
    nulls: &NullBuffer,
    path: &FieldPath,
) -> Result<(), Error> {
    let lengths: Vec<i64> = match array.data_type() {
        DataType::List(_) => {
            let o = array.as_list::<i32>().offsets();
            o.windows(2).map(|w| i64::from(w[1] - w[0])).collect()
        }
        DataType::LargeList(_) => {
            let o = array.as_list::<i64>().offsets();
            o.windows(2).map(|w| w[1] - w[0]).collect()
        }
        _ => return Ok(()),
    };
    for (i, len) in lengths.into_iter().enumerate() {
        if nulls.is_null(i) && len != 0 {
            return Err(arrow_error(
                path,
                format!(
                    "the null list at index {i} has {len} values under it; a null list reads \
                     as an empty list"
                ),
            ));
        }
    }
    Ok(())
}

/// The first null of `array`, as an error at `path`.
fn check_no_nulls(array: &dyn ArrowArray, path: &FieldPath) -> Result<(), Error> {
    if let Some(nulls) = array.logical_nulls() {
        if nulls.null_count() > 0 {
            let index = (0..nulls.len()).find(|&i| nulls.is_null(i)).unwrap_or(0);
            return Err(arrow_error(
                path,
                format!("null at index {index}; StructuredTensor values hold no nulls"),
            ));
        }
    }
    Ok(())
}

/// A field value from `array`, whose outer dimensions are `outer` (shared with the
/// enclosing struct) and whose lists below them are its own dimensions.
///
/// A `LargeList` level (here or above) makes the value's shape dtype `int64`; a struct takes
/// `int64` when any field does, and converts the others (TensorFlow's rule for a struct's
/// fields).
fn value_from_arrow(
    array: ArrayRef,
    outer: &[RowPartition],
    outer_large: bool,
    nrows: usize,
    path: &FieldPath,
    ctx: Ctx<'_>,
) -> Result<FieldValue, Error> {
    let mut partitions = outer.to_vec();
    let mut large = outer_large;
    let mut current = array;
    let mut inherited = ctx.inherited.cloned();
    loop {
        let nulls = if ctx.options.nulls {
            NullBuffer::union(inherited.as_ref(), current.logical_nulls().as_ref())
        } else {
            check_no_nulls(current.as_ref(), path)?;
            None
        };
        inherited = None;
        let has_nulls = nulls.as_ref().is_some_and(|n| n.null_count() > 0);
        if has_nulls
            && matches!(
                current.data_type(),
                DataType::List(_) | DataType::LargeList(_)
            )
        {
            check_null_lists_empty(current.as_ref(), nulls.as_ref().expect("nulls"), path)?;
        }
        let values = match current.data_type() {
            DataType::List(_) => {
                let list = current.as_list::<i32>();
                let (p, range) = RowPartition::from_arrow_offsets(list.offsets());
                partitions.push(p);
                let child = list.values().slice(range.start, range.len());
                current = child;
                continue;
            }
            DataType::LargeList(_) => {
                large = true;
                let list = current.as_list::<i64>();
                let offsets = list.offsets();
                let (first, last) = (offsets[0], offsets[offsets.len() - 1]);
                let splits = offsets
                    .iter()
                    .map(|&o| i32::try_from(o - first))
                    .collect::<Result<Vec<i32>, _>>()
                    .map_err(|_| arrow_error(path, "a LargeList beyond i32 offsets"))?;
                partitions.push(RowPartition::from_row_splits(splits)?);
                let child = list.values().slice(first as usize, (last - first) as usize);
                current = child;
                continue;
            }
            DataType::Struct(_) => {
                let structs = current.as_struct();
                let mut fields = IndexMap::new();
                for (field, column) in structs.fields().iter().zip(structs.columns()) {
                    let name = field.name();
                    if !ctx.options.any_field_names && !is_valid_field_name(name) {
                        return Err(Error::InvalidFieldName {
                            name: name.clone(),
                            path: path.clone(),
                        });
                    }
                    // a second column of one name would silently replace the first
                    if fields.contains_key(name) {
                        return Err(arrow_error(
                            path,
                            format!("the field name '{name}' appears twice"),
                        ));
                    }
                    let child_ctx = Ctx {
                        options: ctx.options,
                        inherited: nulls.as_ref().filter(|n| n.null_count() > 0),
                    };
                    let value = value_from_arrow(
                        column.clone(),
                        &partitions,
                        large,
                        nrows,
                        &path.child(name),
                        child_ctx,
                    )?;
                    fields.insert(name.clone(), value);
                }
                let wide = large || fields.values().any(|v| v.shape_dtype() == DType::I64);
                let dtype = if wide { DType::I64 } else { DType::I32 };
                let fields = fields
                    .into_iter()
                    .map(|(k, v)| Ok((k, v.with_shape_dtype(dtype)?)))
                    .collect::<Result<_, Error>>()?;
                let rank = partitions.len() + 1;
                return Ok(FieldValue::Struct(
                    StructuredTensor::from_parts_unchecked(rank, nrows, partitions, fields)
                        .tagged(dtype),
                ));
            }
            DataType::Int64 => Values::I64(values_from_arrow(
                current.as_primitive::<Int64Type>().values(),
                path,
            )?),
            DataType::Float64 => Values::F64(values_from_arrow(
                current.as_primitive::<Float64Type>().values(),
                path,
            )?),
            DataType::Boolean => Values::Bool(current.as_boolean().values().iter().collect()),
            DataType::Int32 => Values::I32(values_from_arrow(
                current.as_primitive::<Int32Type>().values(),
                path,
            )?),
            DataType::Float32 => Values::F32(values_from_arrow(
                current.as_primitive::<Float32Type>().values(),
                path,
            )?),
            DataType::UInt8 => Values::U8(values_from_arrow(
                current.as_primitive::<UInt8Type>().values(),
                path,
            )?),
            DataType::Binary => {
                let b = current.as_binary::<i32>();
                Values::Bytes(bytes_from_arrow(b.offsets(), b.values(), path)?)
            }
            DataType::LargeBinary => {
                let b = current.as_binary::<i64>();
                Values::Bytes(bytes_from_arrow(b.offsets(), b.values(), path)?)
            }
            DataType::Utf8 => {
                let strings = current.as_string::<i32>();
                Values::Str(strings_from_arrow(
                    strings.offsets(),
                    strings.values(),
                    path,
                )?)
            }
            DataType::LargeUtf8 => {
                let strings = current.as_string::<i64>();
                Values::Str(strings_from_arrow(
                    strings.offsets(),
                    strings.values(),
                    path,
                )?)
            }
            other => {
                return Err(arrow_error(
                    path,
                    format!(
                        "unsupported Arrow type {other} (take Int64, Int32, Float64, Float32, \
                         UInt8, Boolean, Utf8, LargeUtf8, Binary, LargeBinary, List, \
                         LargeList, Struct)"
                    ),
                ))
            }
        };
        // the partitions chain by construction; from_partitions checks it all the same
        let mut array = Array::from_partitions(nrows, partitions, values)?;
        if ctx.options.nulls && (nulls.is_some() || current.nulls().is_some()) {
            let validity = match &nulls {
                Some(n) => {
                    let bits = n.inner();
                    Validity::from_bitmap(bits.values(), bits.offset(), bits.len())
                        .ok_or_else(|| arrow_error(path, "a null buffer shorter than its array"))?
                }
                None => Validity::all_valid(current.len()),
            };
            array = array.with_validity(Some(validity))?;
        }
        let dtype = if large { DType::I64 } else { DType::I32 };
        return Ok(FieldValue::Array(array.with_shape_dtype(dtype)?));
    }
}
