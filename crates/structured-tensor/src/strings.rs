//! Variable-length columns stored Arrow-style: one byte buffer plus offsets, `i32` while
//! the bytes fit (Arrow's `Utf8`/`Binary`) and `i64` beyond (`LargeUtf8`/`LargeBinary`).
//! [`BytesColumn`] holds any bytes (TensorFlow's `tf.string` holds bytes), [`StringColumn`]
//! the same layout with every element valid UTF-8. Gather, concat and slice copy byte ranges
//! in bulk; no element is ever its own heap allocation.
//!
//! ```text
//! ["ab", "", "cde"]  =>  offsets [0, 2, 2, 5]   bytes "abcde"
//! ```

use std::fmt;

use crate::buffer::ValueBuffer;
use crate::error::{index_panic, Error};
use crate::runs::{copy_run, extend_short, put_run, BLOCK_BYTES};

/// The offsets of a variable-length column: `offsets[i]..offsets[i + 1]` is element `i`.
///
/// **Invariant:** non-empty, starts at 0, never decreases, ends at the number of bytes.
#[derive(Clone)]
enum Offsets {
    /// While the bytes fit in `i32` (Arrow's `Utf8` / `Binary`).
    Small(ValueBuffer<i32>),
    /// Beyond `i32::MAX` bytes (Arrow's `LargeUtf8` / `LargeBinary`).
    Large(ValueBuffer<i64>),
}

/// The two offset widths, for code written once over both.
trait OffsetInt: Copy + Send + Sync + 'static {
    /// The offset as an index (offsets are never negative).
    fn to_usize(self) -> usize;
    /// An index as an offset; the caller has checked that it fits.
    fn from_usize(n: usize) -> Self;
    /// An index as an offset, wrapping when it does not fit (for values never read).
    fn from_usize_wrapping(n: usize) -> Self;
}

impl OffsetInt for i32 {
    #[inline]
    fn to_usize(self) -> usize {
        self as usize
    }
    #[inline]
    fn from_usize(n: usize) -> Self {
        debug_assert!(n <= i32::MAX as usize);
        n as i32
    }
    #[inline]
    fn from_usize_wrapping(n: usize) -> Self {
        n as i32
    }
}

impl OffsetInt for i64 {
    #[inline]
    fn to_usize(self) -> usize {
        self as usize
    }
    #[inline]
    fn from_usize(n: usize) -> Self {
        n as i64
    }
    #[inline]
    fn from_usize_wrapping(n: usize) -> Self {
        n as i64
    }
}

/// Offsets a gather writes as one block per range (see [`put_run`]): a block of `i32`s.
const LANES: usize = BLOCK_BYTES / 4;

/// The largest byte count `i32` offsets can address.
const SMALL_LIMIT: usize = i32::MAX as usize;

impl Offsets {
    /// Offsets `[0]` with room for `items` more, wide enough for `bytes` bytes.
    fn with_capacity(items: usize, bytes: usize) -> Offsets {
        if bytes <= SMALL_LIMIT {
            let mut v = Vec::with_capacity(items + 1);
            v.push(0);
            Offsets::Small(v.into())
        } else {
            let mut v = Vec::with_capacity(items + 1);
            v.push(0);
            Offsets::Large(v.into())
        }
    }

    /// Number of offsets (one more than the number of elements).
    #[inline]
    fn count(&self) -> usize {
        match self {
            Offsets::Small(v) => v.len(),
            Offsets::Large(v) => v.len(),
        }
    }

    /// Offset `i` as an index.
    #[inline]
    fn at(&self, i: usize) -> usize {
        match self {
            Offsets::Small(v) => v[i].to_usize(),
            Offsets::Large(v) => v[i].to_usize(),
        }
    }

    /// Switches to `i64` offsets when `end` bytes no longer fit in `i32`.
    fn make_room(&mut self, end: usize) {
        if let Offsets::Small(v) = self {
            if end > SMALL_LIMIT {
                *self = Offsets::Large(v.iter().map(|&o| i64::from(o)).collect());
            }
        }
    }

    /// Appends the end offset of a new element.
    #[inline]
    fn push(&mut self, end: usize) {
        self.make_room(end);
        match self {
            Offsets::Small(v) => v.to_mut().push(i32::from_usize(end)),
            Offsets::Large(v) => v.to_mut().push(i64::from_usize(end)),
        }
    }

    fn reserve(&mut self, items: usize) {
        match self {
            Offsets::Small(v) => v.to_mut().reserve(items),
            Offsets::Large(v) => v.to_mut().reserve(items),
        }
    }
}

/// Appends elements `start..end` of a column (offsets `src`, bytes `src_bytes`) to
/// `dst`/`dst_bytes`, rebasing the offsets: one `memcpy` for the bytes.
#[inline]
fn append_range<S: OffsetInt, D: OffsetInt>(
    src: &[S],
    src_bytes: &[u8],
    start: usize,
    end: usize,
    dst: &mut Vec<D>,
    dst_bytes: &mut Vec<u8>,
) {
    let first = src[start].to_usize();
    let last = src[end].to_usize();
    let base = dst_bytes.len();
    extend_short(dst_bytes, &src_bytes[first..last]);
    if base == first {
        dst.extend(
            src[start + 1..=end]
                .iter()
                .map(|&o| D::from_usize(o.to_usize())),
        );
    } else {
        dst.extend(
            src[start + 1..=end]
                .iter()
                .map(|&o| D::from_usize(o.to_usize() - first + base)),
        );
    }
}

/// Appends the elements in `ranges` (checked by the caller: `items` elements of `bytes`
/// bytes in all) of a column to `dst` / `dst_bytes`, whose offsets are wide enough for
/// the result. Each range's offsets and bytes are written as fixed-size blocks where they
/// fit one (see [`put_run`]): a gather copies many ranges of a string or two.
fn gather_into<S: OffsetInt, D: OffsetInt>(
    src: &[S],
    src_bytes: &[u8],
    ranges: &[(usize, usize)],
    (items, bytes): (usize, usize),
    dst: &mut Vec<D>,
    dst_bytes: &mut Vec<u8>,
) {
    let offset_room = items
        .checked_add(LANES)
        .expect("item count overflows usize");
    let byte_room = bytes
        .checked_add(BLOCK_BYTES)
        .expect("byte count overflows usize");
    dst.reserve_exact(offset_room);
    dst_bytes.reserve_exact(byte_room);
    let (old_items, old_bytes) = (dst.len(), dst_bytes.len());
    let offsets = &mut dst.spare_capacity_mut()[..offset_room];
    let spare_bytes = &mut dst_bytes.spare_capacity_mut()[..byte_room];
    let (mut at, mut written) = (0usize, 0usize);
    for &(a, b) in ranges {
        let (first, last) = (src[a].to_usize(), src[b].to_usize());
        // lanes past the range compute offsets that are overwritten or left unused, so
        // they may wrap; the range's own ones fit, since the caller sized `D` for them
        let base = (old_bytes + written).wrapping_sub(first);
        put_run::<S, D, LANES>(offsets, at, src, a + 1, b + 1, |o| {
            D::from_usize_wrapping(o.to_usize().wrapping_add(base))
        });
        copy_run::<u8, BLOCK_BYTES>(spare_bytes, written, src_bytes, first, last);
        at += b - a;
        written += last - first;
    }
    assert_eq!(at, items, "the ranges hold {at} elements, not {items}");
    assert_eq!(
        written, bytes,
        "the ranges hold {written} bytes, not {bytes}"
    );
    // SAFETY: each range wrote its `b - a` offsets at `at` and its `last - first` bytes
    // at `written` before either moved past them (`put_run` and `copy_run` write at least the run), so
    // the first `items` offsets and `bytes` bytes of the spare capacity are initialised,
    // as the asserts above checked the counts.
    unsafe {
        dst.set_len(old_items + items);
        dst_bytes.set_len(old_bytes + bytes);
    }
}

/// Byte strings that need not be UTF-8: one byte buffer and the offsets between elements.
///
/// **Invariant:** the offsets are non-empty, start at 0 and never decrease; `bytes.len()` is
/// the last offset.
#[derive(Clone)]
pub struct BytesColumn {
    offsets: Offsets,
    bytes: ValueBuffer<u8>,
}

impl Default for BytesColumn {
    fn default() -> Self {
        BytesColumn::new()
    }
}

impl BytesColumn {
    /// An empty column.
    pub fn new() -> BytesColumn {
        BytesColumn::with_capacity(0, 0)
    }

    /// An empty column with room for `items` elements of `bytes` bytes in all.
    pub fn with_capacity(items: usize, bytes: usize) -> BytesColumn {
        BytesColumn {
            offsets: Offsets::with_capacity(items, bytes),
            bytes: ValueBuffer::with_capacity(bytes),
        }
    }

    /// A column from `i32` offsets and bytes, checked: the offsets start at 0, never
    /// decrease and end at `bytes.len()` (else [`Error::InvalidStringColumn`]).
    pub fn try_from_i32_parts(offsets: Vec<i32>, bytes: Vec<u8>) -> Result<BytesColumn, Error> {
        BytesColumn::try_from_i32_buffers(offsets.into(), bytes.into())
    }

    /// [`BytesColumn::try_from_i32_parts`] over buffers that may be shared (an Arrow
    /// array's offsets and bytes, read in place).
    pub fn try_from_i32_buffers(
        offsets: ValueBuffer<i32>,
        bytes: ValueBuffer<u8>,
    ) -> Result<BytesColumn, Error> {
        check_offsets(&offsets, bytes.len())?;
        Ok(BytesColumn {
            offsets: Offsets::Small(offsets),
            bytes,
        })
    }

    /// A column from `i32` offsets and bytes that a selection of whole elements of a valid
    /// column built (so the offsets start at 0, never decrease and end at `bytes.len()`;
    /// checked in debug builds only).
    pub(crate) fn from_gathered_i32_parts(offsets: Vec<i32>, bytes: Vec<u8>) -> BytesColumn {
        debug_assert!(check_offsets(&offsets, bytes.len()).is_ok());
        BytesColumn {
            offsets: Offsets::Small(offsets.into()),
            bytes: bytes.into(),
        }
    }

    /// A column from `i64` offsets and bytes, checked as [`BytesColumn::try_from_i32_parts`].
    pub fn try_from_i64_parts(offsets: Vec<i64>, bytes: Vec<u8>) -> Result<BytesColumn, Error> {
        BytesColumn::try_from_i64_buffers(offsets.into(), bytes.into())
    }

    /// [`BytesColumn::try_from_i64_parts`] over buffers that may be shared.
    pub fn try_from_i64_buffers(
        offsets: ValueBuffer<i64>,
        bytes: ValueBuffer<u8>,
    ) -> Result<BytesColumn, Error> {
        check_offsets(&offsets, bytes.len())?;
        Ok(BytesColumn {
            offsets: Offsets::Large(offsets),
            bytes,
        })
    }

    /// True when the bytes are shared with another owner's memory (an Arrow buffer).
    pub fn bytes_shared(&self) -> bool {
        self.bytes.is_shared()
    }

    /// True when the offsets are shared with another owner's memory (an Arrow buffer).
    pub fn offsets_shared(&self) -> bool {
        match &self.offsets {
            Offsets::Small(v) => v.is_shared(),
            Offsets::Large(v) => v.is_shared(),
        }
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.count() - 1
    }

    /// True when there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` (panics when out of range, like slice indexing).
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        if i >= self.len() {
            index_panic("element", i, self.len());
        }
        &self.bytes[self.offsets.at(i)..self.offsets.at(i + 1)]
    }

    /// Appends one element.
    #[inline]
    pub fn push(&mut self, value: &[u8]) {
        self.bytes.to_mut().extend_from_slice(value);
        self.offsets.push(self.bytes.len());
    }

    /// The elements in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |i| &self.bytes[self.offsets.at(i)..self.offsets.at(i + 1)])
    }

    /// Every element's bytes, back to back (Arrow's values buffer).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The offsets when they are `i32` (Arrow's `Binary`/`Utf8` layout).
    pub fn offsets_i32(&self) -> Option<&[i32]> {
        match &self.offsets {
            Offsets::Small(v) => Some(v),
            Offsets::Large(_) => None,
        }
    }

    /// The offsets when they are `i64` (more than `i32::MAX` bytes: `LargeBinary`).
    pub fn offsets_i64(&self) -> Option<&[i64]> {
        match &self.offsets {
            Offsets::Small(_) => None,
            Offsets::Large(v) => Some(v),
        }
    }

    /// Elements `start..end` as a new column (one copy of their bytes).
    pub fn slice(&self, start: usize, end: usize) -> BytesColumn {
        if start > end || end > self.len() {
            index_panic("slice end", end.max(start), self.len());
        }
        self.gather_ranges(&[(start, end)])
    }

    /// The elements in the given ranges, in order; each range is one byte copy.
    pub fn gather_ranges(&self, ranges: &[(usize, usize)]) -> BytesColumn {
        let n = self.len();
        let mut items = 0usize;
        let mut total = 0usize;
        for &(a, b) in ranges {
            if a > b || b > n {
                index_panic("element", b.max(a), n);
            }
            items = items
                .checked_add(b - a)
                .expect("gathered element count overflows usize");
            total = total
                .checked_add(self.offsets.at(b) - self.offsets.at(a))
                .expect("gathered byte count overflows usize");
        }
        // room for the blocks past the last range, so that `gather_into` does not grow
        // (and copy) the buffers
        let mut out = BytesColumn {
            offsets: Offsets::with_capacity(items.saturating_add(LANES), total),
            bytes: Vec::with_capacity(total.saturating_add(BLOCK_BYTES)).into(),
        };
        // the offset widths are fixed for the whole gather: dispatch once
        let dst_bytes = out.bytes.to_mut();
        let counts = (items, total);
        match (&mut out.offsets, &self.offsets) {
            (Offsets::Small(d), Offsets::Small(s)) => {
                gather_into(s, &self.bytes, ranges, counts, d.to_mut(), dst_bytes)
            }
            (Offsets::Small(d), Offsets::Large(s)) => {
                gather_into(s, &self.bytes, ranges, counts, d.to_mut(), dst_bytes)
            }
            (Offsets::Large(d), Offsets::Small(s)) => {
                gather_into(s, &self.bytes, ranges, counts, d.to_mut(), dst_bytes)
            }
            (Offsets::Large(d), Offsets::Large(s)) => {
                gather_into(s, &self.bytes, ranges, counts, d.to_mut(), dst_bytes)
            }
        }
        out
    }

    /// The elements at `indices`, in order (each index checked, panicking like slices).
    pub fn gather(&self, indices: &[usize]) -> BytesColumn {
        let n = self.len();
        let mut total = 0usize;
        for &i in indices {
            if i >= n {
                index_panic("element", i, n);
            }
            total += self.offsets.at(i + 1) - self.offsets.at(i);
        }
        let mut out = BytesColumn::with_capacity(indices.len(), total);
        for &i in indices {
            out.extend_from(self, i, i + 1);
        }
        out
    }

    /// The columns one after another (one copy of each one's bytes; offsets and bytes are
    /// appended in parallel tasks when large, see [`ragged_core::append`]).
    pub fn concat(parts: &[&BytesColumn]) -> BytesColumn {
        let total = parts.iter().map(|p| p.bytes.len()).sum();
        if total <= SMALL_LIMIT {
            if let Some(joined) = BytesColumn::concat_small(parts) {
                return joined;
            }
        }
        let items = parts.iter().map(|p| p.len()).sum();
        let mut out = BytesColumn::with_capacity(items, total);
        for p in parts {
            out.extend_from(p, 0, p.len());
        }
        out
    }

    /// [`BytesColumn::concat`] of columns that all have `i32` offsets, when their bytes
    /// together fit `i32` offsets (checked by the caller); `None` when a part has `i64`
    /// offsets.
    fn concat_small(parts: &[&BytesColumn]) -> Option<BytesColumn> {
        let mut offsets: Vec<&[i32]> = Vec::with_capacity(parts.len());
        let mut bytes: Vec<&[u8]> = Vec::with_capacity(parts.len());
        for p in parts {
            let Offsets::Small(o) = &p.offsets else {
                return None;
            };
            offsets.push(o.as_slice());
            bytes.push(&p.bytes[o[0].to_usize()..o[o.len() - 1].to_usize()]);
        }
        let offsets = ragged_core::splice_row_splits(&offsets)
            .expect("non-empty offsets whose bytes the caller checked fit in i32");
        Some(BytesColumn {
            offsets: Offsets::Small(offsets.into()),
            bytes: ragged_core::append(&bytes).into(),
        })
    }

    /// Appends elements `start..end` of `other` (panics when out of range).
    pub fn extend_from(&mut self, other: &BytesColumn, start: usize, end: usize) {
        if start > end || end > other.len() {
            index_panic("element", end.max(start), other.len());
        }
        let added = other.offsets.at(end) - other.offsets.at(start);
        self.offsets.make_room(self.bytes.len() + added);
        self.offsets.reserve(end - start);
        match (&mut self.offsets, &other.offsets) {
            (Offsets::Small(d), Offsets::Small(s)) => {
                append_range(s, &other.bytes, start, end, d.to_mut(), self.bytes.to_mut())
            }
            (Offsets::Small(d), Offsets::Large(s)) => {
                append_range(s, &other.bytes, start, end, d.to_mut(), self.bytes.to_mut())
            }
            (Offsets::Large(d), Offsets::Small(s)) => {
                append_range(s, &other.bytes, start, end, d.to_mut(), self.bytes.to_mut())
            }
            (Offsets::Large(d), Offsets::Large(s)) => {
                append_range(s, &other.bytes, start, end, d.to_mut(), self.bytes.to_mut())
            }
        }
    }

    /// Frees unused capacity of both buffers.
    pub fn shrink_to_fit(&mut self) {
        match &mut self.offsets {
            Offsets::Small(v) => v.shrink_to_fit(),
            Offsets::Large(v) => v.shrink_to_fit(),
        }
        self.bytes.shrink_to_fit();
    }

    /// The `i32` offsets and the bytes, taken apart (`Err(self)` when the offsets are `i64`).
    pub fn into_i32_parts(self) -> Result<(Vec<i32>, Vec<u8>), BytesColumn> {
        match self.offsets {
            Offsets::Small(o) => Ok((o.into_vec(), self.bytes.into_vec())),
            Offsets::Large(_) => Err(self),
        }
    }
}

/// Checks the offsets invariant against `len` bytes.
fn check_offsets<O: OffsetInt + PartialOrd + fmt::Display>(
    offsets: &[O],
    len: usize,
) -> Result<(), Error> {
    let bad = |index: usize, what: String| Err(Error::InvalidStringColumn { index, what });
    match offsets.first() {
        None => {
            return bad(
                0,
                "the offsets are empty; they need at least [0]".to_string(),
            )
        }
        Some(&first) if first.to_usize() != 0 => {
            return bad(0, format!("the first offset is {first}, not 0"))
        }
        _ => {}
    }
    for (i, w) in offsets.windows(2).enumerate() {
        if w[1] < w[0] {
            return bad(
                i + 1,
                format!("offset {} is below the one before it ({})", w[1], w[0]),
            );
        }
    }
    let last = offsets[offsets.len() - 1];
    if last.to_usize() != len {
        return bad(
            offsets.len() - 1,
            format!("the last offset is {last}, but there are {len} bytes"),
        );
    }
    Ok(())
}

impl PartialEq for BytesColumn {
    /// Equal when the elements are (the offset width is not compared).
    fn eq(&self, other: &BytesColumn) -> bool {
        match (&self.offsets, &other.offsets) {
            (Offsets::Small(a), Offsets::Small(b)) => a == b && self.bytes == other.bytes,
            (Offsets::Large(a), Offsets::Large(b)) => a == b && self.bytes == other.bytes,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl fmt::Debug for BytesColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|b| b.escape_ascii().to_string()))
            .finish()
    }
}

impl<B: AsRef<[u8]>> FromIterator<B> for BytesColumn {
    fn from_iter<I: IntoIterator<Item = B>>(iter: I) -> Self {
        let mut out = BytesColumn::new();
        for b in iter {
            out.push(b.as_ref());
        }
        out
    }
}

impl From<Vec<Vec<u8>>> for BytesColumn {
    fn from(v: Vec<Vec<u8>>) -> Self {
        let total = v.iter().map(Vec::len).sum();
        let mut out = BytesColumn::with_capacity(v.len(), total);
        for b in &v {
            out.push(b);
        }
        out
    }
}

/// UTF-8 strings in the [`BytesColumn`] layout: `get(i)` is a `&str` into one buffer.
///
/// **Invariant:** every element is valid UTF-8 (checked by `try_from_*_parts`, kept by
/// `push(&str)` and by every op, which copies whole elements).
#[derive(Clone, Default, PartialEq)]
pub struct StringColumn {
    inner: BytesColumn,
}

impl StringColumn {
    /// An empty column.
    pub fn new() -> StringColumn {
        StringColumn::default()
    }

    /// An empty column with room for `items` strings of `bytes` bytes in all.
    pub fn with_capacity(items: usize, bytes: usize) -> StringColumn {
        StringColumn {
            inner: BytesColumn::with_capacity(items, bytes),
        }
    }

    /// A column from `i32` offsets and bytes, checked: the offsets as for
    /// [`BytesColumn::try_from_i32_parts`], the bytes valid UTF-8 and every offset on a
    /// character boundary (else [`Error::InvalidStringColumn`]).
    pub fn try_from_i32_parts(offsets: Vec<i32>, bytes: Vec<u8>) -> Result<StringColumn, Error> {
        StringColumn::from_bytes(BytesColumn::try_from_i32_parts(offsets, bytes)?)
    }

    /// A column from `i64` offsets and bytes, checked as
    /// [`StringColumn::try_from_i32_parts`].
    pub fn try_from_i64_parts(offsets: Vec<i64>, bytes: Vec<u8>) -> Result<StringColumn, Error> {
        StringColumn::from_bytes(BytesColumn::try_from_i64_parts(offsets, bytes)?)
    }

    /// A string column from a bytes column whose elements are all valid UTF-8 (else
    /// [`Error::InvalidStringColumn`] naming the first element that is not).
    pub fn from_bytes(bytes: BytesColumn) -> Result<StringColumn, Error> {
        if let Err(e) = std::str::from_utf8(&bytes.bytes) {
            let at = e.valid_up_to();
            let index = (0..bytes.len())
                .find(|&i| bytes.offsets.at(i + 1) > at)
                .unwrap_or(0);
            return Err(Error::InvalidStringColumn {
                index,
                what: format!("element {index} is not valid UTF-8 (byte {at})"),
            });
        }
        let text = &bytes.bytes;
        for i in 1..bytes.offsets.count() - 1 {
            let o = bytes.offsets.at(i);
            // a UTF-8 continuation byte is 0b10xx_xxxx: an offset there splits a character
            if text.get(o).is_some_and(|&b| b & 0xC0 == 0x80) {
                return Err(Error::InvalidStringColumn {
                    index: i,
                    what: format!("offset {o} splits a UTF-8 character"),
                });
            }
        }
        Ok(StringColumn { inner: bytes })
    }

    /// The column of whole elements of valid string columns that a selection copied into
    /// `bytes` (every element valid UTF-8, since each is one of theirs; checked in debug
    /// builds only).
    pub(crate) fn from_gathered(bytes: BytesColumn) -> StringColumn {
        debug_assert!(std::str::from_utf8(&bytes.bytes).is_ok());
        StringColumn { inner: bytes }
    }

    /// Number of strings.
    #[inline]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True when there are no strings.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// String `i` (panics when out of range, like slice indexing).
    #[inline]
    pub fn get(&self, i: usize) -> &str {
        let bytes = self.inner.get(i);
        // SAFETY: every element is valid UTF-8, the invariant `from_bytes` checks (whole
        // buffer valid, every offset on a character boundary) and every other constructor
        // keeps (`push(&str)`, ops copying whole elements of valid columns).
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    /// Appends one string.
    #[inline]
    pub fn push(&mut self, value: &str) {
        self.inner.push(value.as_bytes());
    }

    /// The strings in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The column's layout: its bytes and offsets.
    pub fn as_bytes(&self) -> &BytesColumn {
        &self.inner
    }

    /// The column as bytes (TensorFlow's `tf.string` view).
    pub fn into_bytes(self) -> BytesColumn {
        self.inner
    }

    /// Frees unused capacity of both buffers.
    pub fn shrink_to_fit(&mut self) {
        self.inner.shrink_to_fit();
    }

    /// Strings `start..end` as a new column (one copy of their bytes).
    pub fn slice(&self, start: usize, end: usize) -> StringColumn {
        StringColumn {
            inner: self.inner.slice(start, end),
        }
    }

    /// The strings in the given ranges, in order; each range is one byte copy.
    pub fn gather_ranges(&self, ranges: &[(usize, usize)]) -> StringColumn {
        StringColumn {
            inner: self.inner.gather_ranges(ranges),
        }
    }

    /// The strings at `indices`, in order (panics on an index out of range).
    pub fn gather(&self, indices: &[usize]) -> StringColumn {
        StringColumn {
            inner: self.inner.gather(indices),
        }
    }

    /// The columns one after another.
    pub fn concat(parts: &[&StringColumn]) -> StringColumn {
        let inner: Vec<&BytesColumn> = parts.iter().map(|p| &p.inner).collect();
        StringColumn {
            inner: BytesColumn::concat(&inner),
        }
    }

    /// Appends strings `start..end` of `other` (panics when out of range).
    pub fn extend_from(&mut self, other: &StringColumn, start: usize, end: usize) {
        self.inner.extend_from(&other.inner, start, end);
    }
}

impl fmt::Debug for StringColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<S: AsRef<str>> FromIterator<S> for StringColumn {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut out = StringColumn::new();
        for s in iter {
            out.push(s.as_ref());
        }
        out
    }
}

impl From<Vec<String>> for StringColumn {
    fn from(v: Vec<String>) -> Self {
        let total = v.iter().map(String::len).sum();
        let mut out = StringColumn::with_capacity(v.len(), total);
        for s in &v {
            out.push(s);
        }
        out
    }
}

impl From<Vec<&str>> for StringColumn {
    fn from(v: Vec<&str>) -> Self {
        v.into_iter().collect()
    }
}

impl From<&[&str]> for StringColumn {
    fn from(v: &[&str]) -> Self {
        v.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> StringColumn {
        v.iter().collect()
    }

    fn to_vec(c: &StringColumn) -> Vec<String> {
        c.iter().map(str::to_string).collect()
    }

    #[test]
    fn layout_is_arrows() {
        let c = strings(&["ab", "", "cde"]);
        assert_eq!(c.as_bytes().offsets_i32(), Some(&[0, 2, 2, 5][..]));
        assert_eq!(c.as_bytes().bytes(), b"abcde");
        assert_eq!(c.get(2), "cde");
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn gather_concat_slice_match_vec_of_strings() {
        let c = strings(&["a", "bb", "", "dddd", "é"]);
        assert_eq!(to_vec(&c.gather(&[4, 0, 0, 3])), ["é", "a", "a", "dddd"]);
        assert_eq!(
            to_vec(&c.gather_ranges(&[(3, 5), (0, 2)])),
            ["dddd", "é", "a", "bb"]
        );
        assert_eq!(to_vec(&c.slice(1, 3)), ["bb", ""]);
        let both = StringColumn::concat(&[&c.slice(3, 5), &c.slice(0, 1)]);
        assert_eq!(to_vec(&both), ["dddd", "é", "a"]);
        assert_eq!(both.as_bytes().offsets_i32(), Some(&[0, 4, 6, 7][..]));
    }

    #[test]
    fn large_offsets_mix_with_small_ones() {
        let big = BytesColumn::try_from_i64_parts(vec![0, 1, 3], b"xyz".to_vec()).unwrap();
        let small: BytesColumn = [b"q".as_slice()].into_iter().collect();
        let both = BytesColumn::concat(&[&small, &big]);
        assert_eq!(both.offsets_i32(), Some(&[0, 1, 2, 4][..]));
        assert_eq!(
            both,
            BytesColumn::from(vec![b"q".to_vec(), b"x".to_vec(), b"yz".to_vec()])
        );
        let mut large = big.clone();
        large.extend_from(&small, 0, 1);
        assert_eq!(large.offsets_i64(), Some(&[0, 1, 3, 4][..]));
        assert_eq!(
            large,
            BytesColumn::from(vec![b"x".to_vec(), b"yz".to_vec(), b"q".to_vec()])
        );
    }

    /// `gather_ranges` against picking the elements one by one from a `Vec<Vec<u8>>`, on
    /// `i32` and `i64` offsets: elements of 0 to 40 bytes (so a range's bytes fit a block
    /// or not), ranges of 0 to 12 elements (past the offset block), ranges ending at the
    /// last element (where a block would read past the column), and the offsets checked
    /// by rebuilding the column from them.
    #[test]
    fn gather_ranges_matches_picking_elements() {
        let mut rng = crate::tf_ops::SplitMix64(12);
        let mut below = |n: usize| rng.below(n as u64) as usize;
        for round in 0..200 {
            let n = below(30);
            let elements: Vec<Vec<u8>> = (0..n)
                .map(|i| (0..below(41)).map(|j| (i * 7 + j) as u8).collect())
                .collect();
            let small = BytesColumn::from(elements.clone());
            let wide: Vec<i64> = small
                .offsets_i32()
                .unwrap()
                .iter()
                .map(|&o| o.into())
                .collect();
            let large = BytesColumn::try_from_i64_parts(wide, small.bytes().to_vec()).unwrap();
            let ranges: Vec<(usize, usize)> = (0..below(8))
                .map(|_| {
                    let a = if below(3) == 0 { n } else { below(n + 1) };
                    let a = a.saturating_sub(below(3));
                    (a, a + below(n - a + 1).min(below(13)))
                })
                .collect();
            let expected: Vec<Vec<u8>> = ranges
                .iter()
                .flat_map(|&(a, b)| elements[a..b].iter().cloned())
                .collect();
            for column in [&small, &large] {
                let got = column.gather_ranges(&ranges);
                let rebuilt = match (got.offsets_i32(), got.offsets_i64()) {
                    (Some(o), _) => {
                        BytesColumn::try_from_i32_parts(o.to_vec(), got.bytes().to_vec())
                    }
                    (_, Some(o)) => {
                        BytesColumn::try_from_i64_parts(o.to_vec(), got.bytes().to_vec())
                    }
                    _ => unreachable!("a column has offsets of one width"),
                }
                .unwrap();
                assert_eq!(
                    rebuilt,
                    BytesColumn::from(expected.clone()),
                    "round {round}, ranges {ranges:?}"
                );
                assert_eq!(got, rebuilt);
            }
        }
    }

    /// `gather_into` of the whole two-element column `["ab", "c"]` told `counts`.
    fn gather_all_of_two_with(counts: (usize, usize)) {
        let c = BytesColumn::from(vec![b"ab".to_vec(), b"c".to_vec()]);
        let (mut offsets, mut bytes) = (vec![0i32], Vec::new());
        let src = c.offsets_i32().unwrap();
        gather_into(src, c.bytes(), &[(0, 2)], counts, &mut offsets, &mut bytes);
    }

    /// The hostile values for `gather_into`'s `set_len`: counts that are not the ranges'
    /// must panic before the lengths are set.
    #[test]
    #[should_panic(expected = "the ranges hold 2 elements, not 3")]
    fn gather_into_refuses_a_wrong_element_count() {
        gather_all_of_two_with((3, 3));
    }

    #[test]
    #[should_panic(expected = "the ranges hold 3 bytes, not 2")]
    fn gather_into_refuses_a_wrong_byte_count() {
        gather_all_of_two_with((2, 2));
    }

    #[test]
    fn offsets_are_checked() {
        let e = BytesColumn::try_from_i32_parts(vec![], vec![]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid string column at offset 0: the offsets are empty; they need at least [0]"
        );
        let e = BytesColumn::try_from_i32_parts(vec![1, 2], b"ab".to_vec()).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidStringColumn {
                index: 0,
                what: "the first offset is 1, not 0".to_string()
            }
        );
        let e = BytesColumn::try_from_i32_parts(vec![0, 2, 1, 2], b"ab".to_vec()).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidStringColumn {
                index: 2,
                what: "offset 1 is below the one before it (2)".to_string()
            }
        );
        let e = BytesColumn::try_from_i64_parts(vec![0, 3], b"ab".to_vec()).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidStringColumn {
                index: 1,
                what: "the last offset is 3, but there are 2 bytes".to_string()
            }
        );
    }

    #[test]
    fn hostile_utf8_is_refused_before_get_can_see_it() {
        // "é" is two bytes: an offset between them would make `get` return half a character
        let e =
            StringColumn::try_from_i32_parts(vec![0, 1, 2], "é".as_bytes().to_vec()).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidStringColumn {
                index: 1,
                what: "offset 1 splits a UTF-8 character".to_string()
            }
        );
        let e =
            StringColumn::try_from_i32_parts(vec![0, 1, 3], vec![b'a', 0xFF, b'b']).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidStringColumn {
                index: 1,
                what: "element 1 is not valid UTF-8 (byte 1)".to_string()
            }
        );
        let ok = StringColumn::try_from_i32_parts(vec![0, 2, 3], "éa".as_bytes().to_vec()).unwrap();
        assert_eq!(to_vec(&ok), ["é", "a"]);
    }

    #[test]
    #[should_panic(expected = "element 3 out of bounds for a value with 3 elements")]
    fn get_out_of_range_panics() {
        strings(&["a", "b", "c"]).get(3);
    }

    #[test]
    fn equality_ignores_offset_width() {
        let small = StringColumn::try_from_i32_parts(vec![0, 1, 3], b"abc".to_vec()).unwrap();
        let large = StringColumn::try_from_i64_parts(vec![0, 1, 3], b"abc".to_vec()).unwrap();
        assert_eq!(small, large);
        assert_ne!(small, strings(&["ab", "c"]));
        assert_eq!(format!("{small:?}"), r#"["a", "bc"]"#);
    }
}
