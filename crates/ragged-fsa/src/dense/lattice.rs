//! What training and decoding do with lattices: the gradient of the total scores with
//! respect to the arc scores, the LF-MMI loss, and the best path of each lattice.

use ndarray::Array3;

use crate::attr::Attr;
use crate::dense::ctc::{gradient, pair_posteriors};
use crate::dense::dense_fsa::DenseFsaVecOf;
use crate::dense::intersect_dense::{check_beam, check_labels, pair_up};
use crate::error::Error;
use crate::fsa::{Fsa, FsaVec, FsaVecRef};
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

/// Options of [`mmi_loss_with`]: icefall's `LFMMILoss(den_scale, beam_size)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MmiLossConfig {
    /// The scale of the denominator's total score.
    pub den_scale: f64,
    /// k2's `output_beam` of both intersections (icefall's `beam_size`, 8 there):
    /// numerator and denominator lattices keep the arcs within this of their best path,
    /// and the totals and occupations are taken on those lattices, as
    /// `k2.intersect_dense(graphs, dense, output_beam)` does. `f32::INFINITY` (the default)
    /// is the exact objective on the whole trellis.
    pub output_beam: f32,
    /// With a finite `output_beam`, the most arcs the numerator lattices, and then the
    /// denominator lattices, may hold in all (default
    /// [`MAX_OUTPUT_ARCS`](crate::MAX_OUTPUT_ARCS)): counted before they are stored, and
    /// past it the loss is [`Error::OutputLimit`].
    pub max_lattice_arcs: usize,
}

impl Default for MmiLossConfig {
    fn default() -> Self {
        Self {
            den_scale: 1.0,
            output_beam: f32::INFINITY,
            max_lattice_arcs: crate::view::MAX_OUTPUT_ARCS,
        }
    }
}

/// icefall's `LFMMILoss` (exact, no output beam): numerator graphs (one per segment, or
/// one shared) and one denominator graph shared by all segments; per segment
/// `loss = -(num_tot - den_scale * den_tot)` with log-semiring totals, and its gradient
/// `den_scale * den_occupation - num_occupation` with respect to `log_probs`.
pub fn mmi_loss<'g>(
    num_graphs: impl Into<FsaVecRef<'g>>,
    den_graph: &Fsa,
    dense: &DenseFsaVecOf<'_>,
    den_scale: f64,
) -> Result<MmiLoss, Error> {
    mmi_loss_with(
        num_graphs,
        den_graph,
        dense,
        &MmiLossConfig {
            den_scale,
            ..MmiLossConfig::default()
        },
    )
}

/// [`mmi_loss`] with options: icefall's `LFMMILoss(den_scale, beam_size)` as it computes
/// the loss by default (`k2.intersect_dense(num_graphs, dense, output_beam=beam_size)` and
/// the same with the denominator, log-semiring totals in `f64`). The gradient is the one of
/// those pruned totals: occupations on the pruned lattices. Hostile values follow
/// [`ctc_loss_with`](crate::ctc_loss_with)'s rule (graph scores NaN or `+inf`:
/// [`Error::BadScore`]; `+inf` in `log_probs` where a graph reads it:
/// [`Error::InfiniteLogProb`]), on both graphs.
pub fn mmi_loss_with<'g>(
    num_graphs: impl Into<FsaVecRef<'g>>,
    den_graph: &Fsa,
    dense: &DenseFsaVecOf<'_>,
    config: &MmiLossConfig,
) -> Result<MmiLoss, Error> {
    let num_graphs = num_graphs.into();
    check_beam("output_beam", config.output_beam)?;
    let den_scale = config.den_scale;
    let num_pairs = pair_up(num_graphs.num_fsas(), dense.num_fsas(), None)?;
    for i in 0..num_graphs.num_fsas() {
        check_labels(num_graphs.view(i), i, dense.num_symbols())?;
    }
    let den = FsaVecRef::One(den_graph);
    check_labels(den.view(0), 0, dense.num_symbols())?;
    let den_pairs = pair_up(1, dense.num_fsas(), None)?;
    let bound = ("mmi_loss", "lattice arcs (MmiLossConfig::max_lattice_arcs)");
    let max_arcs = config.max_lattice_arcs;
    let mut num = pair_posteriors(
        num_graphs,
        dense,
        &num_pairs,
        config.output_beam,
        max_arcs,
        bound,
    )?;
    let mut den_post =
        pair_posteriors(den, dense, &den_pairs, config.output_beam, max_arcs, bound)?;
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
    // written once, the numerator's terms then the denominator's in each element
    let grad = gradient(
        dense,
        &[(&num_pairs, &num, -1.0), (&den_pairs, &den_post, den_scale)],
    );
    Ok(MmiLoss { loss, grad })
}

/// The best path of one lattice, as a decoder reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct BestPath {
    /// The labels along the path, one per frame, without the final `-1`.
    pub labels: Vec<i32>,
    /// The aux labels (word ids) along the path without 0 and `-1` (for [`one_best`], empty
    /// when the lattice has no `aux_labels`; for [`nbest`], the labels then).
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

/// SplitMix64, the sampler's source of randomness (seeded, reproducible).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The n-best list of every lattice, as k2's `Nbest.from_lattice`: `num_paths` paths are
/// drawn at random in proportion to their probability under scores scaled by
/// `nbest_scale` (k2's `random_paths`), then made unique by their word sequence (aux
/// labels without 0 and `-1`; labels likewise when the lattice has no aux labels). Each
/// distinct sequence is reported once, with the best-scoring path drawn for it (score
/// unscaled), best first. `seed` makes the draw reproducible (k2 uses torch's generator, so
/// the draws themselves differ from k2's). Needs top-sorted acyclic FSAs.
pub fn nbest(
    lattices: &FsaVec,
    num_paths: usize,
    nbest_scale: f32,
    seed: u64,
) -> Result<Vec<Vec<BestPath>>, Error> {
    lattices.check_each_top_sorted()?;
    let aux = lattices.aux_labels();
    Ok(lattices.map_views(|i, view| {
        let n = view.num_states();
        if n == 0 {
            return Vec::new();
        }
        // backward log scores of the scaled lattice
        let scale = nbest_scale as f64;
        let mut bwd = vec![f64::NEG_INFINITY; n];
        bwd[n - 1] = 0.0;
        for state in (0..n - 1).rev() {
            let mut acc = f64::NEG_INFINITY;
            for arc in view.state_arcs(state) {
                acc = ragged_core::log_add(
                    acc,
                    scale * arc.score as f64 + bwd[arc.dest_state as usize],
                );
            }
            bwd[state] = acc;
        }
        if bwd[0] == f64::NEG_INFINITY {
            return Vec::new();
        }
        let base = lattices.arc_range(i).start;
        let mut rng = SplitMix64(seed ^ (i as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let mut found: Vec<BestPath> = Vec::new();
        for _ in 0..num_paths {
            let (mut state, mut path) = (0usize, Vec::new());
            while state != n - 1 {
                let range = view.arc_range(state);
                let mut u = rng.next_f64();
                let mut chosen = None;
                for arc_idx in range.clone() {
                    let arc = view.arcs[arc_idx];
                    let b = bwd[arc.dest_state as usize];
                    if b == f64::NEG_INFINITY {
                        continue;
                    }
                    let p = (scale * arc.score as f64 + b - bwd[state]).exp();
                    chosen = Some(arc_idx);
                    if u < p {
                        break;
                    }
                    u -= p;
                }
                let arc_idx = chosen.expect("a state with a finite backward score has a way on");
                path.push(arc_idx);
                state = view.arcs[arc_idx].dest_state as usize;
            }
            let labels: Vec<i32> = path
                .iter()
                .map(|&a| view.arcs[a].label)
                .filter(|&l| l != -1)
                .collect();
            let mut words = Vec::new();
            match aux {
                Some(Attr::I32(values)) => words.extend(path.iter().map(|&a| values[base + a])),
                Some(Attr::Ragged(r)) => {
                    let splits = r.row_splits(1);
                    for &a in &path {
                        let (b, e) = (splits[base + a] as usize, splits[base + a + 1] as usize);
                        words.extend_from_slice(&r.values()[b..e]);
                    }
                }
                _ => words.extend(labels.iter().copied()),
            }
            words.retain(|&x| x != 0 && x != -1);
            let score: f64 = path.iter().map(|&a| view.arcs[a].score as f64).sum();
            match found.iter_mut().find(|p| p.aux_labels == words) {
                Some(known) if known.score >= score => {}
                Some(known) => {
                    known.labels = labels;
                    known.score = score;
                }
                None => found.push(BestPath {
                    labels,
                    aux_labels: words,
                    score,
                }),
            }
        }
        found.sort_by(|a, b| b.score.total_cmp(&a.score));
        found
    }))
}
