//! Peak working memory of the Canny pipeline, measured with a counting allocator: the edge
//! map (1 byte per pixel, the output), plus per-row buffers (the gradient of three rows per
//! band) and the hysteresis stacks; no full-size gradient plane or other temporaries.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use dataflow::image::{canny, Canny, Norm};
use dataflow::{compute_with, from_fn, Dim2, Plain, Threads};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn canny_keeps_the_map_only() {
    let (rows, cols) = (600, 800);
    let img = compute_with(
        &from_fn(Dim2(rows, cols), |Dim2(y, x)| {
            if (y / 40 + x / 50) % 2 == 0 {
                60u8
            } else {
                190
            }
        }),
        Plain,
        Threads::Seq,
    );
    let pixels = rows * cols;
    for threads in [Threads::Seq, Threads::Fixed(2)] {
        let before = LIVE.load(Ordering::SeqCst);
        PEAK.store(before, Ordering::SeqCst);
        let edges = canny(
            &img,
            &Canny {
                low: 50.0,
                high: 150.0,
                norm: Norm::L2,
                threads,
            },
        )
        .unwrap();
        let peak = PEAK.load(Ordering::SeqCst) - before;
        // 1 byte of map per pixel, and well under 1 byte per pixel more for the stacks
        // and row buffers.
        assert!(peak <= 2 * pixels, "peak {peak} bytes for {pixels} pixels");
        assert!(peak >= pixels, "peak {peak} bytes: the map is expected");
        assert!(edges.as_slice().contains(&255));
        println!(
            "canny peak working memory: {peak} bytes for {pixels} pixels ({:.2} bytes/pixel)",
            peak as f64 / pixels as f64
        );
    }
}
