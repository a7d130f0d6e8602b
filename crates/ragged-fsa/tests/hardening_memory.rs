//! The memory bounds of hardening round 3 (items 4 and 5), measured: a counting allocator
//! records the peak of the bytes in use while each hostile input is refused. One test
//! function runs the cases one after another, so that no other test allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ragged_fsa::{DeterminizeConfig, Error, Fsa, WeightPushing};

struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Requests of more bytes than this are refused (a null pointer, as an exhausted allocator
/// gives): a hostile value for the code that must turn a failed allocation into an error.
static REFUSE_ABOVE: AtomicUsize = AtomicUsize::new(usize::MAX);

// SAFETY: every call is passed on to `System` unchanged (the layout and pointer the caller
// gave, which `GlobalAlloc`'s contract makes valid); only counters are updated around it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > REFUSE_ABOVE.load(Ordering::Relaxed) {
            return std::ptr::null_mut();
        }
        // SAFETY: `layout` is the caller's, valid and of non-zero size by the contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc`/`realloc` above with this `layout`.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > REFUSE_ABOVE.load(Ordering::Relaxed) {
            return std::ptr::null_mut();
        }
        // SAFETY: `ptr` came from `System` with `layout`; `new_size` is the caller's, valid
        // by the contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let now = IN_USE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f`, returning its result, the time it took and the peak of the bytes in use above
/// what was in use before.
fn measure<R>(f: impl FnOnce() -> R) -> (R, Duration, usize) {
    let base = IN_USE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let started = Instant::now();
    let r = f();
    let elapsed = started.elapsed();
    (
        r,
        elapsed,
        PEAK.load(Ordering::Relaxed).saturating_sub(base),
    )
}

const MIB: usize = 1 << 20;

/// A 7-arc FSA without the twins property: `a b* c | a b* d`, the `b` loop scoring -1 on one
/// branch and -2 on the other, so the residual of the two paths on `a b^k` grows with `k`
/// and every `k` gives a new subset (each keeping its best paths, `k` arcs long).
fn not_twins() -> Fsa {
    "0 1 1 0\n0 2 1 0\n1 1 2 -1\n1 3 3 0\n2 2 2 -2\n2 3 4 0\n3 4 -1 0\n4"
        .parse()
        .unwrap()
}

/// "The k-th symbol from the end is 1" over the symbols 1 and 2: k + 2 states, 2k + 3
/// arcs; its deterministic equivalent has 2^k states.
fn kth_from_end(k: i32) -> Fsa {
    let mut text = String::from("0 0 1 0\n0 0 2 0\n0 1 1 0\n");
    for s in 1..k {
        text.push_str(&format!("{s} {} 1 0\n{s} {} 2 0\n", s + 1, s + 1));
    }
    text.push_str(&format!("{k} {} -1 0\n{}", k + 1, k + 1));
    text.parse().unwrap()
}

fn assert_byte_limit(err: Error, limit: usize) -> usize {
    match err {
        Error::OutputLimit {
            op: "determinize",
            what,
            count,
            limit: l,
        } => {
            assert_eq!(l, limit);
            assert!(what.contains("DeterminizeConfig::max_bytes"), "{what}");
            assert!(count > limit);
            count
        }
        other => panic!("expected the byte bound, got {other:?}"),
    }
}

#[test]
fn hostile_inputs_are_refused_within_bounded_memory() {
    // item 4: determinize with the default config (it used to reach 4 GiB in 8 s)
    let fsa = not_twins();
    assert_eq!(fsa.num_arcs(), 7);
    let (r, took, peak) = measure(|| fsa.determinize(WeightPushing::None));
    let count = assert_byte_limit(r.unwrap_err(), 1 << 30);
    eprintln!(
        "not twins, default bound: refused at {} MiB counted, peak {} MiB, {took:?}",
        count / MIB,
        peak / MIB
    );
    assert!(peak < 1536 * MIB, "peak {} MiB", peak / MIB);
    assert!(took < Duration::from_secs(60), "{took:?}");

    // the same bounds hold with every pushing and for a smaller bound, tightly
    for pushing in [WeightPushing::Eager, WeightPushing::Tropical] {
        let config = DeterminizeConfig {
            weight_pushing: pushing,
            max_bytes: 64 * MIB,
            ..DeterminizeConfig::default()
        };
        let (r, took, peak) = measure(|| fsa.determinize_with(&config));
        assert_byte_limit(r.unwrap_err(), 64 * MIB);
        eprintln!("not twins, 64 MiB: peak {} MiB, {took:?}", peak / MIB);
        assert!(peak < 96 * MIB, "peak {} MiB", peak / MIB);
    }

    // "the 30th symbol from the end": 2^30 states
    let fsa = kth_from_end(30);
    let (r, took, peak) = measure(|| fsa.determinize(WeightPushing::None));
    let count = assert_byte_limit(r.unwrap_err(), 1 << 30);
    eprintln!(
        "30th from the end, default bound: refused at {} MiB counted, peak {} MiB, {took:?}",
        count / MIB,
        peak / MIB
    );
    assert!(peak < 1536 * MIB, "peak {} MiB", peak / MIB);
    assert!(took < Duration::from_secs(120), "{took:?}");
    // a small k still determinizes: 2^k + 1 states
    let (det, _) = kth_from_end(4).determinize(WeightPushing::None).unwrap();
    assert_eq!(det.num_states(), 17);

    // item 5: the refused products allocate next to nothing
    let arcs = (0..20_000)
        .map(|i| ragged_fsa::Arc::new(0, 1, -1, i as f32))
        .collect();
    let a = Fsa::from_arcs(arcs, 2).unwrap();
    let (r, took, peak) = measure(|| a.intersect(&a, false));
    assert!(matches!(r, Err(Error::OutputLimit { .. })));
    eprintln!(
        "intersect of 20,000 parallel arcs: peak {} MiB, {took:?}",
        peak / MIB
    );
    assert!(peak < 64 * MIB, "peak {} MiB", peak / MIB);

    let mut loops: Vec<ragged_fsa::Arc> = (0..200_001)
        .map(|_| ragged_fsa::Arc::new(0, 0, 0, 0.0))
        .collect();
    loops.push(ragged_fsa::Arc::new(0, 1, -1, 0.0));
    let graphs = ragged_fsa::create_fsa_vec(&[Fsa::from_arcs(loops, 2).unwrap()]);
    let lp = ndarray::Array3::<f32>::zeros((1, 2000, 1));
    let dense = ragged_fsa::DenseFsaVec::new(lp.view(), &[[0, 0, 2000]]);
    let (r, took, peak) = measure(|| ragged_fsa::intersect_dense(&graphs, &dense, 10.0, None));
    assert!(matches!(r, Err(Error::OutputLimit { .. })));
    eprintln!(
        "intersect_dense, 200,001 self-loops: peak {} MiB, {took:?}",
        peak / MIB
    );
    assert!(peak < 64 * MIB, "peak {} MiB", peak / MIB);
    let (r, took, peak) =
        measure(|| ragged_fsa::intersect_dense_pruned(&graphs, &dense, 20.0, 8.0, 30, 10_000));
    assert!(matches!(r, Err(Error::OutputLimit { .. })));
    eprintln!(
        "intersect_dense_pruned, 200,001 self-loops: peak {} MiB, {took:?}",
        peak / MIB
    );
    // the candidates the search stores before it knows the total: at most the bound's
    assert!(peak < 32 * 20 * MIB + 64 * MIB, "peak {} MiB", peak / MIB);

    // a borrowed DenseFsaVec builds k2's layout (here 2 x 1,000 x 1,001 floats, 8 MB) when
    // an intersection first reads it: an allocator that refuses is an error, not a panic
    let lp = ndarray::Array3::<f32>::zeros((2, 1000, 1000));
    let dense = ragged_fsa::DenseFsaVecOf::borrowed(lp.view(), &[[0, 0, 999], [1, 0, 999]], 0)
        .expect("valid segments");
    let graphs = ragged_fsa::FsaVec::ctc_graph(&[vec![1, 2], vec![3]], false).unwrap();
    REFUSE_ABOVE.store(4 * MIB, Ordering::Relaxed);
    let refused = [
        dense.try_scores().map(|_| ()),
        ragged_fsa::intersect_dense(&graphs, &dense, 10.0, None).map(|_| ()),
        ragged_fsa::intersect_dense_pruned(&graphs, &dense, 20.0, 8.0, 30, 10_000).map(|_| ()),
    ];
    REFUSE_ABOVE.store(usize::MAX, Ordering::Relaxed);
    for r in refused {
        assert!(
            matches!(r, Err(Error::TooLarge { what }) if what.contains("allocation failed")),
            "{r:?}"
        );
    }
    // and with memory, the same calls succeed and see the built layout
    assert_eq!(dense.try_scores().map(|s| s.len()), Ok(2 * 1000 * 1001));
    assert!(ragged_fsa::intersect_dense(&graphs, &dense, 10.0, None).is_ok());
}
