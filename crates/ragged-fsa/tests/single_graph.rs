//! A single `Fsa` as the graphs of a dense operation, borrowed as a vector of one (as k2
//! wraps it, without copying its arcs): the same lattices, arc maps, losses and gradients,
//! bit for bit, as the `FsaVec` of one that `create_fsa_vec` copies it into (the form the
//! golden tests check against k2), with the graph's attributes carried into the lattice.

use crate::hlg;

use ndarray::Array3;
use ragged_fsa::{
    create_fsa_vec, ctc_loss, intersect_dense, intersect_dense_pruned, mmi_loss, DenseFsaVec, Fsa,
    FsaVecRef,
};

#[test]
fn a_single_graph_gives_what_its_vector_of_one_gives() {
    let hlg = hlg::compile_hlg(50);
    let (n, t, c) = (3, 40, hlg::NUM_PHONES + 1);
    // the CTC benches' seeded log-probs (a log-softmax of random logits per frame)
    let input = benches::ctc::ctc_input(n, t, c, 1, 5, 21);
    let lp = Array3::from_shape_vec((n, t, c), input.log_probs()).unwrap();
    let segments = [[0, 0, 40], [1, 3, 30], [2, 0, 25]];
    let dense = DenseFsaVec::new(lp.view(), &segments);
    let one = create_fsa_vec(std::slice::from_ref(&hlg));
    for beam in [8.0, f32::INFINITY] {
        let (lattice, a_map, b_map) = intersect_dense(&hlg, &dense, beam, None).unwrap();
        assert!(lattice.num_arcs() > 0 && lattice.aux_labels().is_some());
        let copied = intersect_dense(&one, &dense, beam, None).unwrap();
        assert!(
            copied == (lattice, a_map, b_map),
            "intersect_dense at {beam}"
        );
        let mapped = intersect_dense(&hlg, &dense, beam, Some(&[2])).unwrap();
        assert!(mapped == intersect_dense(&one, &dense, beam, Some(&[2])).unwrap());
    }
    let pruned = intersect_dense_pruned(&hlg, &dense, 20.0, 8.0, 30, 10_000).unwrap();
    assert!(pruned.0.num_arcs() > 0);
    assert!(pruned == intersect_dense_pruned(&one, &dense, 20.0, 8.0, 30, 10_000).unwrap());

    // CTC with one topology shared by every segment, and MMI with a single numerator
    let topo = Fsa::ctc_topo(hlg::NUM_PHONES as i32, false).unwrap();
    let topo_one = create_fsa_vec(std::slice::from_ref(&topo));
    for beam in [10.0, f32::INFINITY] {
        let got = ctc_loss(&topo, &dense, beam).unwrap();
        let want = ctc_loss(&topo_one, &dense, beam).unwrap();
        assert!(got.loss.iter().all(|l| l.is_finite()));
        assert_eq!(got.loss, want.loss, "ctc_loss at {beam}");
        assert_eq!(got.grad, want.grad, "ctc_loss gradient at {beam}");
    }
    let got = mmi_loss(&hlg, &topo, &dense, 0.5).unwrap();
    let want = mmi_loss(&one, &topo, &dense, 0.5).unwrap();
    assert_eq!(got.loss, want.loss);
    assert_eq!(got.grad, want.grad);
}

#[test]
fn a_single_graph_is_a_vector_of_one() {
    let fsa: Fsa = "0 1 1 0.5\n1 2 -1 0\n2".parse().unwrap();
    let graphs = FsaVecRef::from(&fsa);
    assert_eq!(graphs.num_fsas(), 1);
    assert_eq!(graphs.num_arcs(), 2);
    assert_eq!(graphs.get(0), fsa);
    assert!(std::ptr::eq(graphs.attrs(), fsa.attrs()));
    let vec = create_fsa_vec(std::slice::from_ref(&fsa));
    let of_vec = FsaVecRef::from(&vec);
    assert_eq!((of_vec.num_fsas(), of_vec.num_arcs()), (1, 2));
    assert_eq!(of_vec.get(0), fsa);
}

#[test]
#[should_panic(expected = "fsa 1 out of bounds for a container with 1 fsas")]
fn fsa_1_of_a_single_graph_panics() {
    let fsa: Fsa = "0 1 -1 0\n1".parse().unwrap();
    FsaVecRef::from(&fsa).get(1);
}
