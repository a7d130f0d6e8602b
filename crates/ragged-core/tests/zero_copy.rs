//! Zero-copy operations allocate nothing, and sharing operations allocate only a handle per
//! axis however large the array: counted with a per-thread counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ragged_core::{Ragged, RaggedShape, RowPartition};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    static BYTES: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds
// `GlobalAlloc`'s contract; the counters only read the layout and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        let _ = BYTES.try_with(|c| c.set(c.get() + layout.size()));
        // SAFETY: the caller's `layout` (non-zero size, as `alloc` requires) goes to the
        // system allocator as it came.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, that is from the system allocator, with
        // this `layout`, as `dealloc`'s caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (allocations, bytes) made by this thread while running `f`.
fn count<R>(f: impl FnOnce() -> R) -> (usize, usize, R) {
    let (a0, b0) = (ALLOCATIONS.with(Cell::get), BYTES.with(Cell::get));
    let r = f();
    (
        ALLOCATIONS.with(Cell::get) - a0,
        BYTES.with(Cell::get) - b0,
        r,
    )
}

fn big() -> Ragged<u32> {
    let lengths: Vec<i32> = (0..100_000i32).map(|i| i % 5).collect();
    let top = RowPartition::from_row_lengths(&vec![10; 10_000]).unwrap();
    let mid = RowPartition::from_row_lengths(&lengths).unwrap();
    let shape = RaggedShape::from_layers(vec![top, mid]).unwrap();
    let n = shape.num_elements();
    Ragged::new(shape, (0..n as u32).collect())
}

#[test]
fn views_and_getters_allocate_nothing() {
    let r = big();
    r.row_ids(1);
    r.row_ids(2);
    let (allocs, _, total) = count(|| {
        let v = r.index(0, 4_321);
        let sub = v.index(3);
        let mut total = sub.values().iter().map(|&x| x as u64).sum::<u64>();
        total += v.values().len() as u64 + v.dim0() as u64;
        total += r.shape().offset_of(&[4_321, 3, 1]).unwrap_or(0) as u64;
        total += r.row_ids(2)[777] as u64 + r.row_splits(1)[9_999] as u64;
        total += r.shape().layer(2).prefix(50).nvals() as u64;
        total += r.get(9_999).map_or(0, |v| v.dim0()) as u64;
        total
    });
    assert!(total > 0);
    assert_eq!(
        allocs, 0,
        "views, getters and layer prefixes must not allocate"
    );
}

#[test]
fn sharing_operations_allocate_per_axis_not_per_element() {
    let r = big();
    let shape = r.shape().clone();
    // A few small allocations (a Vec of layer handles), never the row splits or ids.
    let (_, bytes, p) = count(|| shape.prefix(5_000));
    assert!(bytes <= 256, "prefix allocated {bytes} bytes");
    assert!(p.layers()[1].shares_storage_with(&shape.layers()[1]));
    let (_, bytes, _) = count(|| shape.clone());
    assert!(bytes <= 256, "clone allocated {bytes} bytes");
    let (_, bytes, _) = count(|| shape.remove_axis(0).unwrap());
    assert!(bytes <= 256, "remove_axis(0) allocated {bytes} bytes");
    let (_, bytes, _) = count(|| shape.unsqueeze(0).unwrap());
    assert!(bytes <= 512, "unsqueeze(0) allocated {bytes} bytes");
    let (_, bytes, _) = count(|| ragged_core::decompose_ragged_shape(&shape, 1).unwrap());
    assert!(bytes <= 256, "decompose allocated {bytes} bytes");
    let (_, bytes, _) = count(|| r.clone().remove_axis(0).unwrap());
    assert!(
        bytes <= 256 + r.num_elements() * 4,
        "moving values must not copy twice"
    );
}
