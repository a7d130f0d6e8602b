//! What training and decoding do with lattices: the gradient of the total scores with
//! respect to the arc scores, the LF-MMI loss, and the best path of each lattice.

use ndarray::Array3;

use crate::attr::Attr;
use crate::dense::ctc::{pair_posteriors, scatter};
use crate::dense::dense_fsa::DenseFsaVec;
use crate::dense::intersect_dense::{check_labels, pair_up};
use crate::error::Error;
use crate::fsa::{create_fsa_vec, Fsa, FsaVec};
use crate::kernels::scores::{self, Semiring};

impl FsaVec {
    fn check_each_top_sorted(&self) -> Result<(), Error> {
        self.map_views(|i, v| scores::check_top_sorted_acyclic(v, i))
            .into_iter()
            .collect()
    }

    /// `d(sum of get_tot_scores) / d(arc scores)` for every arc (idx012 order), as k2's
    /// `get_tot_scores` backward: in the log semiring the arc posteriors (probabilities),
    /// in the tropical semiring 1 on the arcs of each FSA's best path and 0 elsewhere. FSAs
    /// without a successful path contribute zeros. Needs top-sorted acyclic FSAs.
    pub fn get_tot_scores_grad(&self, semiring: Semiring) -> Result<Vec<f64>, Error> {
        self.check_each_top_sorted()?;
        Ok(self
            .map_views(|_, view| match semiring {
                Semiring::Log => scores::arc_post::<f64>(view, Semiring::Log)
                    .into_iter()
                    .map(f64::exp)
                    .collect(),
                Semiring::Tropical => {
                    let mut grad = vec![0f64; view.arcs.len()];
                    for arc in scores::best_path::<f64>(view) {
                        grad[arc] = 1.0;
                    }
                    grad
                }
            })
            .concat())
    }
}

/// The LF-MMI loss of every supervision segment and its gradient.
#[derive(Debug, Clone, PartialEq)]
pub struct MmiLoss {
    /// One per segment: `-(num_tot - den_scale * den_tot)`; `+inf` when either graph has no
    /// path through the segment.
    pub loss: Vec<f64>,
    /// `d(sum of loss) / d(log_probs)`, the shape of `log_probs`; zero where the loss is
    /// infinite and outside every segment.
    pub grad: Array3<f32>,
}

/// icefall's `LFMMILoss` (exact, no output beam): numerator graphs (one per segment, or
/// one shared) and one denominator graph shared by all segments; per segment
/// `loss = -(num_tot - den_scale * den_tot)` with log-semiring totals, and its gradient
/// `den_scale * den_occupation - num_occupation` with respect to `log_probs`.
pub fn mmi_loss(
    num_graphs: &FsaVec,
    den_graph: &Fsa,
    dense: &DenseFsaVec,
    den_scale: f64,
) -> Result<MmiLoss, Error> {
    let num_pairs = pair_up(num_graphs.num_fsas(), dense.num_fsas(), None)?;
    for i in 0..num_graphs.num_fsas() {
        check_labels(num_graphs.view(i), i, dense.num_symbols())?;
    }
    let den = create_fsa_vec(std::slice::from_ref(den_graph));
    check_labels(den.view(0), 0, dense.num_symbols())?;
    let den_pairs = pair_up(1, dense.num_fsas(), None)?;
    let mut num = pair_posteriors(num_graphs, dense, &num_pairs, f32::INFINITY)?;
    let mut den_post = pair_posteriors(&den, dense, &den_pairs, f32::INFINITY)?;
    let mut loss = Vec::with_capacity(num.len());
    for (n, d) in num.iter_mut().zip(den_post.iter_mut()) {
        if n.tot == f64::NEG_INFINITY || d.tot == f64::NEG_INFINITY {
            loss.push(f64::INFINITY);
            n.occ.clear();
            d.occ.clear();
        } else {
            loss.push(-(n.tot - den_scale * d.tot));
        }
    }
    let [n, t, c] = dense.log_probs_dim();
    let mut grad = Array3::<f32>::zeros((n, t, c));
    scatter(&mut grad, dense, &num_pairs, &num, -1.0);
    scatter(&mut grad, dense, &den_pairs, &den_post, den_scale);
    Ok(MmiLoss { loss, grad })
}

/// The best path of one lattice, as a decoder reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct BestPath {
    /// The labels along the path, one per frame, without the final `-1`.
    pub labels: Vec<i32>,
    /// The aux labels (word ids) along the path without 0 and `-1` (empty when the lattice
    /// has no `aux_labels`).
    pub aux_labels: Vec<i32>,
    /// The path's score (tropical total), `-inf` when the lattice has no path.
    pub score: f64,
}

/// The best path of every lattice (k2's `shortest_path` then icefall's `get_texts`): its
/// labels and its aux labels (word ids). Needs top-sorted acyclic FSAs (lattices are).
pub fn one_best(lattices: &FsaVec) -> Result<Vec<BestPath>, Error> {
    lattices.check_each_top_sorted()?;
    let aux = lattices.aux_labels();
    Ok(lattices.map_views(|i, view| {
        let path = scores::best_path::<f64>(view);
        let base = lattices.arc_range(i).start;
        let score = if path.is_empty() {
            f64::NEG_INFINITY
        } else {
            path.iter().map(|&a| view.arcs[a].score as f64).sum()
        };
        let labels = path
            .iter()
            .map(|&a| view.arcs[a].label)
            .filter(|&l| l != -1)
            .collect();
        let mut aux_labels = Vec::new();
        match aux {
            Some(Attr::I32(values)) => {
                aux_labels.extend(path.iter().map(|&a| values[base + a]));
            }
            Some(Attr::Ragged(r)) => {
                let splits = r.row_splits(1);
                for &a in &path {
                    let (b, e) = (splits[base + a] as usize, splits[base + a + 1] as usize);
                    aux_labels.extend_from_slice(&r.values()[b..e]);
                }
            }
            _ => {}
        }
        aux_labels.retain(|&x| x != 0 && x != -1);
        BestPath {
            labels,
            aux_labels,
            score,
        }
    }))
}
