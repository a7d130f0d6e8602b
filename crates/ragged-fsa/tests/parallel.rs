//! Work on one FSA that is split over rayon's threads (`remove_epsilon`'s closures and
//! arcs by ranges of states, `connect`'s two searches, `compose`'s wide frontiers,
//! `minimize`'s hashing, checking and copying by ranges of states) gives,
//! arc for arc, what one thread gives: on the benchmark's decoding graph and on random
//! cyclic and acyclic graphs large enough to be split, and the same error when two states
//! fail. (`compose`'s frontiers are also tested against the queue's definition, and at
//! every budget limit, in the kernel's unit tests.)

use crate::common::{tuples, Rng};
use ragged_fsa::{Arc, Error, Fsa, WeightPushing};

/// `f` run inside a rayon pool of `threads` threads.
fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}

/// A cyclic FSA of `n` states with about three arcs a state, one in eight an epsilon (so
/// the epsilon closures stay small, as in a decoding graph), every score in [-2, -0.01]:
/// every cycle is negative. Arcs go anywhere but into the final state, which `-1` arcs
/// from about one state in ten enter.
fn epsilon_graph(rng: &mut Rng, n: i32) -> Fsa {
    let mut arcs = Vec::new();
    for s in 0..n - 1 {
        for _ in 0..1 + rng.below(5) {
            let d = rng.below((n - 1) as u64) as i32;
            let label = if rng.below(8) == 0 {
                0
            } else {
                1 + rng.below(8) as i32
            };
            let score = -0.01 - rng.below(200) as f32 / 100.0;
            arcs.push(Arc::new(s, d, label, score));
        }
        if rng.below(10) == 0 {
            arcs.push(Arc::new(s, n - 1, -1, -0.5));
        }
    }
    Fsa::from_arcs(arcs, n as usize).expect("a valid FSA")
}

/// What a result says: its arcs, its derivs and its attributes (as text).
type Whole = (Vec<(i32, i32, i32, f32)>, Vec<Vec<i32>>, String);

/// The whole of a result of `remove_epsilon`.
fn whole(result: &(Fsa, ragged_core::Ragged<i32>)) -> Whole {
    let (fsa, derivs) = result;
    (
        tuples(fsa),
        derivs.to_vec_vec(),
        format!("{:?}", fsa.attrs()),
    )
}

#[test]
fn remove_epsilon_on_several_threads_is_the_one_thread_result_arc_for_arc() {
    let mut rng = Rng(35);
    for n in [30, 3_000, 9_000] {
        for _ in 0..3 {
            let fsa = epsilon_graph(&mut rng, n);
            let one = on_threads(1, || fsa.remove_epsilon().expect("negative cycles only"));
            // above this many arcs the states are split into ranges, a job each
            assert!(n < 1_000 || fsa.num_arcs() >= ragged_fsa::PARALLEL_MIN_ARCS);
            for threads in [2, 3, 4] {
                let many = on_threads(threads, || fsa.remove_epsilon().expect("as on one"));
                assert_eq!(whole(&many), whole(&one), "{n} states, {threads} threads");
            }
            let (out, _) = &one;
            assert!(out.labels().iter().all(|&l| l != 0));
        }
    }
}

/// A top-sorted acyclic FSA of `n` states (k2's host algorithm's case): about three arcs a
/// state, each to one of the next 40 states, one in four an epsilon.
fn acyclic_epsilon_graph(rng: &mut Rng, n: i32) -> Fsa {
    let mut arcs = Vec::new();
    for s in 0..n - 1 {
        for _ in 0..1 + rng.below(5) {
            let d = (s + 1 + rng.below(40) as i32).min(n - 1);
            let label = if d == n - 1 {
                -1
            } else if rng.below(4) == 0 {
                0
            } else {
                1 + rng.below(8) as i32
            };
            arcs.push(Arc::new(s, d, label, rng.score()));
        }
    }
    Fsa::from_arcs(arcs, n as usize).expect("a valid FSA")
}

#[test]
fn remove_epsilon_of_an_acyclic_fsa_on_several_threads_is_the_one_thread_result() {
    let mut rng = Rng(36);
    for n in [30, 3_000, 9_000] {
        let fsa = acyclic_epsilon_graph(&mut rng, n);
        assert!(n < 1_000 || fsa.num_arcs() >= ragged_fsa::PARALLEL_MIN_ARCS);
        let one = on_threads(1, || fsa.remove_epsilon().expect("acyclic"));
        for threads in [2, 3, 4] {
            let many = on_threads(threads, || fsa.remove_epsilon().expect("as on one"));
            assert_eq!(whole(&many), whole(&one), "{n} states, {threads} threads");
        }
        assert!(one.0.labels().iter().all(|&l| l != 0));
    }
}

#[test]
fn remove_epsilon_of_the_benchmark_graph_on_two_threads_is_the_one_thread_result() {
    // the algebra bench's L o G (fewer words), determinized, disambiguation symbols to
    // epsilon: the graph `rmeps_lg` times
    let words = 2_000;
    let l = Fsa::from_openfst(&benches::graphs::lexicon_text(words, 40, 2026), false).unwrap();
    let g = Fsa::from_openfst(&benches::graphs::grammar_text(words, 2026), true).unwrap();
    let (lg, _, _) = l.compose(&g, true).unwrap();
    let (det, _) = lg.determinize(WeightPushing::None).unwrap();
    let arcs: Vec<Arc> = det
        .arcs()
        .values()
        .iter()
        .map(|a| {
            let label = if a.label > 40 { 0 } else { a.label };
            Arc::new(a.src_state, a.dest_state, label, a.score)
        })
        .collect();
    let plain = Fsa::from_arcs(arcs, det.num_states()).unwrap();
    assert!(plain.num_arcs() >= 4 * ragged_fsa::PARALLEL_MIN_ARCS);
    let one = on_threads(1, || plain.remove_epsilon().unwrap());
    let two = on_threads(2, || plain.remove_epsilon().unwrap());
    assert_eq!(whole(&two), whole(&one));
    // and the transducer with its aux labels, as the decoding graph's compilation runs it
    let one = on_threads(1, || det.connect().0.remove_epsilon().unwrap());
    let two = on_threads(2, || det.connect().0.remove_epsilon().unwrap());
    assert_eq!(whole(&two), whole(&one));
}

#[test]
fn remove_epsilon_names_the_same_first_failing_state_on_any_number_of_threads() {
    let mut rng = Rng(7);
    let base = epsilon_graph(&mut rng, 6_000);
    // two positive epsilon cycles, one early and one late in the state order; every part
    // but those reaching them succeeds
    let mut arcs: Vec<Arc> = base.arcs().values().to_vec();
    for (a, b) in [(5_000, 5_001), (400, 401)] {
        arcs.push(Arc::new(a, b, 0, 1.0));
        arcs.push(Arc::new(b, a, 0, 1.0));
    }
    arcs.sort_by_key(|a| a.src_state);
    let fsa = Fsa::from_arcs(arcs, base.num_states()).unwrap();
    let one = on_threads(1, || fsa.remove_epsilon().map(|_| ()));
    let Err(Error::PositiveEpsilonCycle { fsa: 0, state }) = one else {
        panic!("a positive epsilon cycle, got {one:?}");
    };
    assert!(
        state <= 401,
        "the first state in order that reaches a cycle: {state}"
    );
    for threads in [2, 3, 8] {
        assert_eq!(
            on_threads(threads, || fsa.remove_epsilon().map(|_| ())),
            one
        );
    }
}

#[test]
fn connect_on_two_threads_keeps_what_one_thread_keeps() {
    let mut rng = Rng(11);
    for _ in 0..4 {
        // arcs anywhere: some states unreachable, some dead ends
        let fsa = epsilon_graph(&mut rng, 5_000);
        let one = on_threads(1, || fsa.connect());
        let two = on_threads(2, || fsa.connect());
        assert_eq!(tuples(&two.0), tuples(&one.0));
        assert_eq!(two.1, one.1);
        assert!(one.0.num_states() < fsa.num_states(), "something to remove");
    }
}

/// The width of the widest breadth-first frontier of `fsa` from its start state (its states
/// at one distance from the start).
fn widest_frontier(fsa: &Fsa) -> usize {
    let n = fsa.num_states();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for a in fsa.arcs().values() {
        out[a.src_state as usize].push(a.dest_state as usize);
    }
    let mut depth = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::from([0usize]);
    depth[0] = 0;
    let mut width = vec![0usize; n + 1];
    while let Some(s) = queue.pop_front() {
        width[depth[s]] += 1;
        for &d in &out[s] {
            if depth[d] == usize::MAX {
                depth[d] = depth[s] + 1;
                queue.push_back(d);
            }
        }
    }
    width.into_iter().max().unwrap_or(0)
}

/// An FSA with its arcs, its derivs or arc maps, and its attributes, for comparing results.
fn whole_with(fsa: &Fsa, maps: Vec<Vec<i32>>) -> Whole {
    (tuples(fsa), maps, format!("{:?}", fsa.attrs()))
}

#[test]
fn compose_determinize_and_minimize_of_the_benchmark_graph_on_two_threads_are_the_one_thread_results(
) {
    // the algebra bench's L and G (fewer words): compose's frontiers are wide enough to be
    // matched in parallel; determinize's connection runs its two searches side by side;
    // minimize hashes, checks and copies by ranges of states, and gathers the aux labels in
    // parallel
    let words = 2_000;
    let l = Fsa::from_openfst(&benches::graphs::lexicon_text(words, 40, 2026), false).unwrap();
    let g = Fsa::from_openfst(&benches::graphs::grammar_text(words, 2026), true).unwrap();
    let compose = |threads| {
        on_threads(threads, || {
            let (lg, a_map, b_map) = l.compose(&g, true).unwrap();
            (whole_with(&lg, vec![a_map, b_map]), lg)
        })
    };
    let (one, lg) = compose(1);
    assert_eq!(compose(2).0, one);
    assert!(widest_frontier(&lg) >= 1_024, "{}", widest_frontier(&lg));
    for pushing in [WeightPushing::None, WeightPushing::Eager] {
        let determinize = |threads| {
            on_threads(threads, || {
                let (det, derivs) = lg.determinize(pushing).unwrap();
                (whole_with(&det, derivs.to_vec_vec()), det)
            })
        };
        let (one, det) = determinize(1);
        assert_eq!(determinize(2).0, one, "{pushing:?}");
        assert!(widest_frontier(&det) >= 1_024, "{}", widest_frontier(&det));
        let minimize = |threads| {
            on_threads(threads, || {
                let (min, arc_map) = det.minimize().unwrap();
                whole_with(&min, vec![arc_map])
            })
        };
        let one = minimize(1);
        assert_eq!(minimize(2), one, "{pushing:?}");
        assert!(det.num_states() >= 4_096 && det.num_arcs() >= 4 * ragged_fsa::PARALLEL_MIN_ARCS);
    }
}
