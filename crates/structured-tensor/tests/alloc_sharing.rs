//! Memory: a built struct array holds each leaf value once plus one copy of its partitions;
//! fields share partitions instead of copying them (checked with a counting allocator).
//! One test in this binary, so no other test allocates while it measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use serde_json::{json, Value};
use structured_tensor::{Builder, RowPartition, StructuredTensor, Values};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds
// `GlobalAlloc`'s contract; the counter only reads sizes and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: the caller's `layout` goes to the system allocator as it came.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: `ptr` came from the system allocator with this `layout` (the caller's
        // guarantee, and every allocation here is the system's).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::SeqCst);
        // SAFETY: as for `dealloc`, and `new_size` is the caller's, checked by its contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::SeqCst)
}

const SLACK: isize = 64 * 1024;

#[test]
fn fields_share_partitions_instead_of_copying_them() {
    // --- Column builder: 50,000 rows of 1 or 2 structs, 8 int64 fields. ---
    let nrows = 50_000usize;
    let lengths: Vec<i32> = (0..nrows).map(|i| 1 + (i % 2) as i32).collect();
    let partition = RowPartition::from_row_lengths(&lengths).unwrap();
    let nstructs = partition.nvals();
    let splits_bytes = ((nrows + 1) * 4) as isize;
    let columns: Vec<Vec<i64>> = (0..8)
        .map(|f| (0..nstructs as i64).map(|i| i * 8 + f).collect())
        .collect();
    let before = live();
    let mut builder = Builder::with_partitions(nrows, vec![partition.clone()]).unwrap();
    for (f, column) in columns.into_iter().enumerate() {
        builder = builder
            .scalar(&format!("f{f}"), Values::I64(column.into()))
            .unwrap();
    }
    let st = builder.build().unwrap();
    let grew = live() - before;
    // The values were moved in and the partition is shared: only bookkeeping was allocated.
    // A copy of the partition per field would add 8 * splits_bytes (1.6 MB).
    assert!(grew < SLACK, "building allocated {grew} bytes");
    for value in st.fields().values() {
        assert!(value.row_partitions()[0].ptr_eq(&partition));
    }

    // Clone, merge_dims and partition_outer_dimension share values and partitions.
    let before = live();
    let copy = st.clone();
    let merged = st.merge_dims(0, 1).unwrap();
    let outer = RowPartition::from_uniform_row_length(2, nrows / 2).unwrap();
    let split = st.partition_outer_dimension(&outer).unwrap();
    let grew = live() - before;
    assert!(
        grew < SLACK + (nrows / 2 + 1) as isize * 4,
        "transforms allocated {grew} bytes"
    );
    assert_eq!(merged.nrows(), Some(nstructs));
    assert_eq!(split.rank(), 3);
    drop((copy, merged, split));

    // --- from_json: 20,000 rows of 1 or 2 structs with 6 integer fields. ---
    let rows = 20_000usize;
    let doc = Value::Array(
        (0..rows)
            .map(|r| {
                let n = 1 + r % 2;
                Value::Array(
                    (0..n)
                        .map(|k| json!({"a": r, "b": k, "c": 1, "d": 2, "e": 3, "f": 4}))
                        .collect(),
                )
            })
            .collect(),
    );
    let structs = rows + rows / 2;
    let before = live();
    let st = StructuredTensor::from_json(&doc).unwrap();
    let grew = live() - before;
    let leaves = (6 * structs * 8) as isize;
    let splits = ((rows + 1) * 4) as isize;
    // Each leaf once plus one partition; a partition copy per field would add 5 * splits.
    assert!(
        grew <= leaves + splits + SLACK,
        "from_json kept {grew} bytes for {leaves} bytes of leaves and {splits} of splits"
    );
    assert!(grew >= leaves, "the leaves are stored: {grew} >= {leaves}");
    let p = &st.row_partitions()[0];
    for value in st.fields().values() {
        assert!(value.row_partitions()[0].ptr_eq(p));
    }
    assert_eq!(splits_bytes, (nrows as isize + 1) * 4);
    drop((doc, st));

    // --- from_json, one record per row (the one-pass reader, in parallel chunks): an
    // integer, a list of 0 to 3 floats and a nested object with a string. ---
    let rows = 50_000usize;
    let doc = Value::Array(
        (0..rows)
            .map(|r| {
                let sizes: Vec<f64> = (0..r % 4).map(|k| k as f64 + 0.5).collect();
                json!({"age": r, "sizes": sizes, "name": {"first": "abcdefgh"}})
            })
            .collect(),
    );
    let floats: usize = (0..rows).map(|r| r % 4).sum();
    let before = live();
    let st = StructuredTensor::from_json(&doc).unwrap();
    let grew = live() - before;
    // Leaves: the ages, the floats, and per name an `i32` offset plus its 8 bytes (one
    // byte buffer for every name, no `String` per name).
    let leaves = (rows * 8 + floats * 8 + rows * (4 + 8)) as isize;
    let splits = ((rows + 1) * 4) as isize;
    assert!(
        grew <= leaves + splits + SLACK,
        "from_json kept {grew} bytes for {leaves} bytes of leaves and {splits} of splits"
    );
    assert!(grew >= leaves, "the leaves are stored: {grew} >= {leaves}");
    assert_eq!(
        st.to_json().as_array().map(Vec::len),
        Some(rows),
        "all records read"
    );
}
