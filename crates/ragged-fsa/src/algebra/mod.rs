//! k2's FSA algebra on `Fsa` and `FsaVec`: `intersect`, `compose`, `remove_epsilon`,
//! `determinize`, and `minimize` (OpenFst's `minimize_encoded`), each returning its arc
//! maps and carrying the attributes through them.

mod determinize;
mod extras;
mod intersect;
mod minimize;
mod push;
mod random_paths;
mod reach;
mod rmeps;

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ragged_core::Ragged;
use rayon::prelude::*;

use crate::attr::{
    gather_all, gather_all_but, ragged_from_parts, ragged_parts, Attr, Attrs, AUX_LABELS,
};
use crate::error::Error;
use crate::fsa::{create_fsa_vec, Fsa, FsaVec, PARALLEL_MIN_ARCS};
use crate::kernels::structure;
use crate::view::{ArcBudget, Built, MAX_OUTPUT_ARCS};
use rmeps::BuiltDerivs;

pub use extras::INS_DEL_SCORE_OFFSET;

/// Where `determinize` puts the scores of its result (after k2's
/// `DeterminizeWeightPushingType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightPushing {
    /// No pushing, k2's `kNoWeightPushing` arc for arc: an arc carries the scores of the
    /// input arcs that all best paths into its destination subset share, so scores wait
    /// until the paths meet again, as the output labels do.
    #[default]
    None,
    /// Push with `max` towards the start: the best path out of every state scores 0, except
    /// for the total on the first arcs (OpenFst's `Push` to the initial state).
    Tropical,
    /// Push with log-sum towards the start: every state's outgoing arcs sum to 1 in
    /// probability, except for the total on the first arcs.
    Log,
    /// No pushing, with the scores as early as the subsets allow: an arc carries the best
    /// score its destination subset reaches, less its source's (OpenFst's and Kaldi's
    /// `Determinize`; k2's `kTropicalWeightPushing` gives the same arcs).
    Eager,
}

/// Options of [`Fsa::determinize_with`]: the pushing and the bounds that stop a
/// determinization which would not end (an input without the twins property) or would not
/// fit in memory (one whose deterministic equivalent is exponentially larger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeterminizeConfig {
    /// How the result's scores are pushed.
    pub weight_pushing: WeightPushing,
    /// Stop with [`Error::DeterminizeLimit`] once the result would have this many states.
    pub max_states: usize,
    /// Stop with [`Error::DeterminizeLimit`] once the result would have this many arcs.
    pub max_arcs: usize,
    /// Stop with [`Error::OutputLimit`] once the subset construction holds this many bytes:
    /// the subsets (each element twice, in the list and in the lookup table), the residual
    /// output strings and best-path chains the subsets keep (twice as well, with their
    /// per-entry overhead), and the result's arcs, derivs and output labels, counted at
    /// their allocated capacity. The count is checked after every new arc (so after every
    /// new subset too), so the memory in use stays within a small factor of it (table
    /// slack, the scratch of one subset's moves). Without the twins property the chains
    /// grow with the depth of the construction, so memory grows with the square of the
    /// states: this bound, not `max_states`, is what stops such inputs.
    pub max_bytes: usize,
}

impl Default for DeterminizeConfig {
    /// No pushing; at most 2^24 states, 2^26 arcs and 2^30 bytes (1 GiB) held.
    fn default() -> Self {
        Self {
            weight_pushing: WeightPushing::None,
            max_states: 1 << 24,
            max_arcs: 1 << 26,
            max_bytes: 1 << 30,
        }
    }
}

/// A multiply-and-fold hasher (in the style of rustc's `FxHasher`) for the integer keys of
/// the algebra's hash maps: state pairs, subsets, signatures. Not resistant to chosen
/// collisions, which only cost time here, never correctness.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl FastHasher {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(Self::K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // fold the high bits down: hashbrown takes its bucket from the low bits
        self.0 ^ (self.0 >> 32)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.add(x as u64);
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.add(x as u64);
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    #[inline]
    fn write_i32(&mut self, x: i32) {
        self.add(x as u32 as u64);
    }
    #[inline]
    fn write_i64(&mut self, x: i64) {
        self.add(x as u64);
    }
}

/// The build-hasher of [`FastHasher`].
pub(crate) type FastBuild = BuildHasherDefault<FastHasher>;

pub(crate) type PairMap = HashMap<u64, i32, FastBuild>;

fn gather_checked(attr: &Attr, map: &[i32]) -> Attr {
    attr.gather(map)
}

/// k2's rule for the attributes of a binary operation: an attribute of one side is gathered
/// through that side's arc map (0 or empty where the map is -1); an `f32` attribute of both
/// sides is the sum; any other attribute of both sides is dropped.
fn binary_attrs(a: &Attrs, a_map: &[i32], b: &Attrs, b_map: &[i32], skip: &[&str]) -> Attrs {
    let mut out = Attrs::new();
    for (name, attr) in a {
        if skip.contains(&name.as_str()) {
            continue;
        }
        match (attr, b.get(name)) {
            (_, None) => {
                out.insert(name.clone(), gather_checked(attr, a_map));
            }
            (Attr::F32(_), Some(Attr::F32(_))) => {
                let (Attr::F32(x), Attr::F32(y)) = (attr.gather(a_map), b[name].gather(b_map))
                else {
                    unreachable!("gather keeps the kind")
                };
                out.insert(
                    name.clone(),
                    Attr::F32(x.iter().zip(&y).map(|(p, q)| p + q).collect()),
                );
            }
            _ => {}
        }
    }
    for (name, attr) in b {
        if skip.contains(&name.as_str()) || a.contains_key(name) {
            continue;
        }
        out.insert(name.clone(), gather_checked(attr, b_map));
    }
    out
}

/// k2's rule for a ragged arc map (`fsa_from_unary_function_ragged` with fillers removed):
/// `f32` attributes are summed over each row; `i32` ones become ragged lists with the
/// zeros (and the `-1` of final arcs) removed; ragged ones are concatenated, and ragged
/// `aux_labels` lose their zeros.
fn ragged_attrs(src: &Fsa, derivs: &BuiltDerivs) -> Attrs {
    let labels = src.arcs().values();
    let rows = derivs.deriv_splits.len() - 1;
    let mut out = Attrs::new();
    for (name, attr) in src.attrs() {
        let new = match attr {
            Attr::F32(v) => Attr::F32(
                (0..rows)
                    .map(|i| derivs.derivs(i).iter().map(|&j| v[j as usize]).sum())
                    .collect(),
            ),
            Attr::I32(v) => {
                let mut splits = vec![0i32];
                let mut values = Vec::new();
                for i in 0..rows {
                    for &j in derivs.derivs(i) {
                        let j = j as usize;
                        let x = v[j];
                        if x != 0 && !(x == -1 && labels[j].label == -1) {
                            values.push(x);
                        }
                    }
                    splits.push(values.len() as i32);
                }
                Attr::Ragged(ragged_from_parts(splits, values))
            }
            Attr::Ragged(r) => {
                let (s, v) = ragged_parts(r);
                let drop_zeros = name == AUX_LABELS;
                let mut splits = vec![0i32];
                let mut values = Vec::new();
                for i in 0..rows {
                    for &j in derivs.derivs(i) {
                        let j = j as usize;
                        values.extend(
                            v[s[j] as usize..s[j + 1] as usize]
                                .iter()
                                .filter(|&&x| !(drop_zeros && x == 0)),
                        );
                    }
                    splits.push(values.len() as i32);
                }
                Attr::Ragged(ragged_from_parts(splits, values))
            }
        };
        out.insert(name.clone(), new);
    }
    out
}

fn derivs_ragged(d: &BuiltDerivs) -> Ragged<i32> {
    ragged_from_parts(d.deriv_splits.clone(), d.deriv_values.clone())
}

/// The epsilon-removed `fsa`, connected, by k2's rule for picking the algorithm: a
/// top-sorted acyclic input has its epsilons folded into the arcs that follow them (k2's
/// host `EpsilonsRemoverPrunedMax`), any other input into the following or the preceding
/// arcs, whichever makes fewer (k2's `RemoveEpsilonDevice`). In the first case, when every
/// input state reaches the final state, so does every kept state (each has an arc for the
/// first non-epsilon arc of such a path), and all kept states are reachable by
/// construction: the result is connected already.
fn remove_epsilon_connected(fsa: &Fsa, fsa_idx: usize) -> Result<BuiltDerivs, Error> {
    let view = fsa.view();
    let top_sorted_acyclic = view.arcs.iter().all(|a| a.dest_state > a.src_state);
    if !top_sorted_acyclic {
        let d = rmeps::remove_epsilon_combining(view, fsa_idx)?;
        return Ok(connect_derivs(d));
    }
    let (accessible, coaccessible) = structure::accessible_coaccessible(fsa.view());
    let d = rmeps::remove_epsilon(fsa.view(), fsa_idx, &accessible)?;
    Ok(if coaccessible.iter().all(|&c| c) {
        d
    } else {
        connect_derivs(d)
    })
}

/// Keeps the accessible and co-accessible states of a result with ragged arc map.
fn connect_derivs(d: BuiltDerivs) -> BuiltDerivs {
    let Built {
        splits,
        arcs,
        arc_map,
    } = structure::connect(d.view());
    d.select(splits, arcs, &arc_map)
}

/// `map[i]` through `outer`, keeping -1.
fn compose_maps(map: &[i32], outer: &[i32]) -> Vec<i32> {
    map.iter()
        .map(|&i| if i < 0 { -1 } else { outer[i as usize] })
        .collect()
}

impl Fsa {
    /// `self` connected, as [`Fsa::connect`] gives it, with its arc map; `self` itself, and
    /// no map, when every state is accessible and co-accessible already (as in a result of
    /// compose or determinize that is connected), which spares a copy of the arcs and
    /// attributes.
    fn connected(&self) -> (Cow<'_, Fsa>, Option<Vec<i32>>) {
        let (accessible, coaccessible) = reach::accessible_coaccessible(self.view());
        if self.num_states() > 0 && accessible.iter().chain(&coaccessible).all(|&c| c) {
            return (Cow::Borrowed(self), None);
        }
        let built = structure::connect_given(self.view(), &accessible, &coaccessible);
        let (conn, map) = self.with_built(built);
        (Cow::Owned(conn), Some(map))
    }

    /// `self` when its arcs are sorted (no map); otherwise an arc-sorted copy of the arcs
    /// (no attributes) and its arc map. Sparing the copy matters for a large input such as
    /// a grammar of millions of arcs.
    fn sorted_arcs(&self) -> (Cow<'_, Fsa>, Option<Vec<i32>>) {
        if structure::is_arc_sorted(self.view()) {
            return (Cow::Borrowed(self), None);
        }
        let bare = Fsa::from_parts_unchecked(self.arcs().clone(), Attrs::new());
        let (sorted, map) = bare.arc_sort();
        (Cow::Owned(sorted), Some(map))
    }

    /// k2's `intersect`: the result accepts the label sequences both accept, a path's
    /// score the sum of the two paths' scores. Labels are matched; a transducer's
    /// `aux_labels` are an attribute like any other (k2's rule below), so a transducer
    /// intersected with an acceptor keeps its output labels. With
    /// `treat_epsilons_specially`, an epsilon arc (label 0) of either side moves that side
    /// alone; otherwise 0 is an ordinary label. The inputs need not be arc-sorted. The
    /// result is not connected (as k2's); its states are the state pairs met from `(0, 0)`,
    /// in the order of a breadth-first walk, the pair of final states last. Returns the
    /// result and, per result arc, the arc of `self` and of `b` it came from (`-1` for
    /// none). Attributes follow k2's rule (gathered; `f32` ones of both sides summed; other
    /// ones of both sides dropped). Exact in the log semiring when 0 is ordinary; with
    /// epsilons, exact in the tropical semiring (an epsilon of each side gives two orders).
    ///
    /// **Bound.** The result has at most [`MAX_OUTPUT_ARCS`](crate::MAX_OUTPUT_ARCS) arcs
    /// (the product of two FSAs can have the product of their arc counts): the arcs of each
    /// state pair are counted before they are stored, and past the bound the call returns
    /// [`Error::OutputLimit`] with the count reached. The same holds for [`Fsa::compose`],
    /// and for the `FsaVec` versions over all their pairs together.
    pub fn intersect(
        &self,
        b: &Fsa,
        treat_epsilons_specially: bool,
    ) -> Result<(Fsa, Vec<i32>, Vec<i32>), Error> {
        let budget = ArcBudget::new(MAX_OUTPUT_ARCS);
        self.intersect_unchecked(b, treat_epsilons_specially, &budget, "intersect")
    }

    fn intersect_raw(
        &self,
        b: &Fsa,
        eps: bool,
        budget: &ArcBudget,
        op: &'static str,
    ) -> Result<(Built, Vec<i32>, Vec<i32>), Error> {
        let (sa, ma) = self.sorted_arcs();
        let (sb, mb) = b.sorted_arcs();
        let (built, am, bm) =
            intersect::intersect(sa.view(), sb.view(), eps, budget).map_err(|count| {
                Error::OutputLimit {
                    op,
                    what: "arcs (MAX_OUTPUT_ARCS)",
                    count,
                    limit: budget.limit,
                }
            })?;
        let through = |map: Vec<i32>, sort_map: Option<Vec<i32>>| match sort_map {
            Some(sort_map) => compose_maps(&map, &sort_map),
            None => map,
        };
        Ok((built, through(am, ma), through(bm, mb)))
    }

    fn intersect_unchecked(
        &self,
        b: &Fsa,
        eps: bool,
        budget: &ArcBudget,
        op: &'static str,
    ) -> Result<(Fsa, Vec<i32>, Vec<i32>), Error> {
        let (built, a_map, b_map) = self.intersect_raw(b, eps, budget, op)?;
        let attrs = binary_attrs(self.attrs(), &a_map, b.attrs(), &b_map, &[]);
        Ok((Fsa::from_built_unchecked(built, attrs), a_map, b_map))
    }

    /// k2's `compose`: `self`'s `aux_labels` (plain or ragged) are matched with `b`'s
    /// labels, as [`Fsa::intersect`] matches labels (same epsilon rule, same state order).
    /// The result's labels are `self`'s labels, its `aux_labels` are `b`'s (or the matched
    /// labels when `b` is an acceptor). Returns the result and the arc maps into `self` and
    /// `b`. Exact in the tropical semiring.
    pub fn compose(
        &self,
        b: &Fsa,
        treat_epsilons_specially: bool,
    ) -> Result<(Fsa, Vec<i32>, Vec<i32>), Error> {
        let budget = ArcBudget::new(MAX_OUTPUT_ARCS);
        self.compose_impl(b, treat_epsilons_specially, None, &budget)
    }

    /// [`Fsa::compose`], keeping the matched labels (k2's `inner_labels`) as the plain `i32`
    /// attribute `inner_labels_name`.
    pub fn compose_with_inner_labels(
        &self,
        b: &Fsa,
        treat_epsilons_specially: bool,
        inner_labels_name: &str,
    ) -> Result<(Fsa, Vec<i32>, Vec<i32>), Error> {
        let budget = ArcBudget::new(MAX_OUTPUT_ARCS);
        self.compose_impl(
            b,
            treat_epsilons_specially,
            Some(inner_labels_name),
            &budget,
        )
    }

    fn compose_impl(
        &self,
        b: &Fsa,
        eps: bool,
        inner: Option<&str>,
        budget: &ArcBudget,
    ) -> Result<(Fsa, Vec<i32>, Vec<i32>), Error> {
        match self.aux_labels() {
            Some(Attr::I32(_)) | Some(Attr::Ragged(_)) => {}
            _ => {
                return Err(Error::MissingAttr {
                    name: AUX_LABELS.to_string(),
                    needed: "the aux_labels (i32 or ragged) that compose matches",
                })
            }
        }
        if let Some(Attr::F32(_)) = b.aux_labels() {
            return Err(Error::MissingAttr {
                name: AUX_LABELS.to_string(),
                needed: "an i32 or ragged i32 attribute",
            });
        }
        let (inv, inv_map) = self.invert()?;
        let left: Vec<i32> = match inv.aux_labels() {
            Some(Attr::I32(v)) => v.clone(),
            _ => unreachable!("invert gives plain aux labels"),
        };
        let (built, inv_arc_map, b_map) = inv.intersect_raw(b, eps, budget, "compose")?;
        let a_map = compose_maps(&inv_arc_map, &inv_map);
        let matched: Vec<i32> = built.arcs.iter().map(|a| a.label).collect();
        let mut arcs_built = built;
        for (arc, &m) in arcs_built.arcs.iter_mut().zip(&inv_arc_map) {
            arc.label = if m < 0 { 0 } else { left[m as usize] };
        }
        let mut attrs = binary_attrs(self.attrs(), &a_map, b.attrs(), &b_map, &[AUX_LABELS]);
        let aux = match b.aux_labels() {
            Some(attr) => attr.gather(&b_map),
            None => Attr::I32(matched.clone()),
        };
        attrs.insert(AUX_LABELS.to_string(), aux);
        if let Some(name) = inner {
            attrs.insert(name.to_string(), Attr::I32(matched));
        }
        Ok((Fsa::from_built_unchecked(arcs_built, attrs), a_map, b_map))
    }

    /// k2's `remove_epsilon`: an equivalent FSA in the tropical semiring without epsilon
    /// arcs, connected and arc-sorted. On a top-sorted acyclic input (k2's host algorithm)
    /// each kept state gets, per (label, destination) of the non-epsilon arcs its epsilon
    /// closure reaches, one arc with the best score. On any other input (k2's
    /// `RemoveEpsilonDevice`, which k2 also runs on the CPU there) each best epsilon chain
    /// between two states with non-epsilon arcs is folded into the arcs that follow it or
    /// into those that precede it, whichever are fewer, so that the result stays small. Cycles are allowed, but not an epsilon cycle with positive score
    /// ([`Error::PositiveEpsilonCycle`]). `arc_derivs` row `i` is the epsilon chain and the
    /// arc that result arc `i` stands for; attributes follow k2's ragged rule (`f32` summed,
    /// `i32` turned into ragged lists without zeros and final `-1`s).
    pub fn remove_epsilon(&self) -> Result<(Fsa, Ragged<i32>), Error> {
        let d = remove_epsilon_connected(self, 0)?;
        Ok(self.with_derivs(d))
    }

    /// [`Fsa::remove_epsilon`], then an epsilon self-loop on every non-final state (its
    /// first arc, with an empty `arc_derivs` row), as k2's
    /// `remove_epsilon_and_add_self_loops`.
    pub fn remove_epsilon_and_add_self_loops(&self) -> Result<(Fsa, Ragged<i32>), Error> {
        let d = remove_epsilon_connected(self, 0)?;
        let Built {
            splits,
            arcs,
            arc_map,
        } = structure::add_epsilon_self_loops(d.view());
        Ok(self.with_derivs(d.select(splits, arcs, &arc_map)))
    }

    fn with_derivs(&self, d: BuiltDerivs) -> (Fsa, Ragged<i32>) {
        let attrs = ragged_attrs(self, &d);
        let derivs = derivs_ragged(&d);
        let built = Built {
            splits: d.splits,
            arcs: d.arcs,
            arc_map: Vec::new(),
        };
        (Fsa::from_built_unchecked(built, attrs), derivs)
    }

    /// k2's `determinize` of an epsilon-free FSA ([`Error::HasEpsilon`] otherwise), with the
    /// default bound of [`DeterminizeConfig`]; see [`Fsa::determinize_with`].
    pub fn determinize(&self, weight_pushing: WeightPushing) -> Result<(Fsa, Ragged<i32>), Error> {
        self.determinize_with(&DeterminizeConfig {
            weight_pushing,
            ..DeterminizeConfig::default()
        })
    }

    /// Determinizes an epsilon-free FSA on its labels by weighted subset construction in the
    /// tropical semiring: the result is deterministic, arc-sorted and equivalent in the
    /// tropical semiring; states are numbered in breadth-first order from the start, the
    /// final state last. The input is connected first. As in k2, an arc emits the input
    /// arcs that all best paths into its destination subset share (from k2's base state on):
    /// a transducer's output labels come out with them as ragged `aux_labels`, and so do the
    /// scores unless [`WeightPushing`] says otherwise; where paths with the same labels
    /// disagree on their output (a non-functional input), the best path's output is kept,
    /// as k2's does. `arc_derivs` row
    /// `i` lists the input arcs that result arc `i` merges (one per input state it reaches,
    /// the best first); other attributes follow the best (first) arc. Stops with
    /// [`Error::DeterminizeLimit`] past the configured bound on states or arcs, and with
    /// [`Error::OutputLimit`] past the bound on the bytes the construction holds
    /// ([`DeterminizeConfig::max_bytes`], 1 GiB by default), so that no input runs out of
    /// memory.
    pub fn determinize_with(
        &self,
        config: &DeterminizeConfig,
    ) -> Result<(Fsa, Ragged<i32>), Error> {
        self.determinize_indexed(config, 0)
    }

    fn determinize_indexed(
        &self,
        config: &DeterminizeConfig,
        fsa_idx: usize,
    ) -> Result<(Fsa, Ragged<i32>), Error> {
        if let Some(arc) = self.arcs().values().iter().position(|a| a.label == 0) {
            return Err(Error::HasEpsilon {
                op: "determinize",
                fsa: fsa_idx,
                arc,
            });
        }
        let (conn, conn_map) = self.connected();
        let bounds = determinize::Bounds {
            max_states: config.max_states,
            max_arcs: config.max_arcs,
            max_bytes: config.max_bytes,
        };
        let mut det = match conn.aux_labels() {
            None => determinize::determinize(conn.view(), fsa_idx, bounds, |_| &[])?,
            Some(Attr::I32(v)) => determinize::determinize(conn.view(), fsa_idx, bounds, |i| {
                std::slice::from_ref(&v[i])
            })?,
            Some(Attr::Ragged(r)) => {
                let (s, v) = ragged_parts(r);
                determinize::determinize(conn.view(), fsa_idx, bounds, |i| {
                    &v[s[i] as usize..s[i + 1] as usize]
                })?
            }
            Some(Attr::F32(_)) => {
                return Err(Error::MissingAttr {
                    name: AUX_LABELS.to_string(),
                    needed: "an i32 or ragged i32 attribute",
                })
            }
        };
        let d = &mut det.fsa;
        if let Some(conn_map) = &conn_map {
            for v in &mut d.deriv_values {
                *v = conn_map[*v as usize];
            }
        }
        match config.weight_pushing {
            WeightPushing::None => determinize::delay_scores(d, &det.pending),
            WeightPushing::Eager => {}
            WeightPushing::Tropical => push::push(&d.splits, &mut d.arcs, false, fsa_idx)?,
            WeightPushing::Log => push::push(&d.splits, &mut d.arcs, true, fsa_idx)?,
        }
        let best: Vec<i32> = (0..d.arcs.len()).map(|i| d.derivs(i)[0]).collect();
        // the aux labels are the construction's own, not gathered along the best arcs
        let mut attrs = gather_all_but(self.attrs(), &best, AUX_LABELS);
        if self.aux_labels().is_some() {
            attrs.insert(
                AUX_LABELS.to_string(),
                Attr::Ragged(ragged_from_parts(det.out_splits, det.out_labels)),
            );
        }
        let derivs = derivs_ragged(d);
        let built = Built {
            splits: std::mem::take(&mut d.splits),
            arcs: std::mem::take(&mut d.arcs),
            arc_map: Vec::new(),
        };
        Ok((Fsa::from_built_unchecked(built, attrs), derivs))
    }

    /// Minimizes a deterministic FSA as OpenFst's `minimize_encoded` (Kaldi's
    /// `fstminimizeencoded`) does: each arc is read as one symbol (label, aux labels if
    /// any, score), the FSA is connected, and equivalent states are merged (the coarsest
    /// stable partition, as Moore's refinement defines it). Needs the encoded arcs of each
    /// state to be distinct ([`Error::NotDeterministic`]). The start stays 0 and the final
    /// state last; each merged state keeps the arcs of its lowest state, which the arc map
    /// names.
    pub fn minimize(&self) -> Result<(Fsa, Vec<i32>), Error> {
        self.minimize_indexed(0)
    }

    fn minimize_indexed(&self, fsa_idx: usize) -> Result<(Fsa, Vec<i32>), Error> {
        let (conn, conn_map) = self.connected();
        let empty: [i32; 0] = [];
        let built = match conn.aux_labels() {
            Some(Attr::I32(v)) => {
                minimize::minimize(conn.view(), fsa_idx, |i| std::slice::from_ref(&v[i]))?
            }
            Some(Attr::Ragged(r)) => {
                let (s, v) = ragged_parts(r);
                minimize::minimize(conn.view(), fsa_idx, |i| {
                    &v[s[i] as usize..s[i + 1] as usize]
                })?
            }
            _ => minimize::minimize(conn.view(), fsa_idx, |_| &empty[..])?,
        };
        let mut built = built;
        let arc_map = match &conn_map {
            Some(conn_map) => compose_maps(&built.arc_map, conn_map),
            None => std::mem::take(&mut built.arc_map),
        };
        let attrs = gather_all(self.attrs(), &arc_map);
        Ok((Fsa::from_built_unchecked(built, attrs), arc_map))
    }
}

/// Which FSA of `a` and of `b` each output FSA pairs (k2's rule: equal counts pair up,
/// a count of 1 is used against every FSA of the other side).
fn pairing(a: usize, b: usize) -> Result<Vec<(usize, usize)>, Error> {
    if a == b {
        Ok((0..a).map(|i| (i, i)).collect())
    } else if a == 1 {
        Ok((0..b).map(|i| (0, i)).collect())
    } else if b == 1 {
        Ok((0..a).map(|i| (i, 0)).collect())
    } else {
        Err(Error::FsaCountMismatch { a, b })
    }
}

/// Stacks per-FSA results, turning their local arc maps into global ones.
fn stack_binary(
    results: Vec<(Fsa, Vec<i32>, Vec<i32>)>,
    pairs: &[(usize, usize)],
    a_offsets: &[usize],
    b_offsets: &[usize],
) -> (FsaVec, Vec<i32>, Vec<i32>) {
    let mut a_map = Vec::new();
    let mut b_map = Vec::new();
    let mut fsas = Vec::with_capacity(results.len());
    for ((fsa, am, bm), &(ia, ib)) in results.into_iter().zip(pairs) {
        let (oa, ob) = (a_offsets[ia] as i32, b_offsets[ib] as i32);
        a_map.extend(am.iter().map(|&m| if m < 0 { -1 } else { m + oa }));
        b_map.extend(bm.iter().map(|&m| if m < 0 { -1 } else { m + ob }));
        fsas.push(fsa);
    }
    (create_fsa_vec(&fsas), a_map, b_map)
}

fn stack_derivs(results: Vec<(Fsa, Ragged<i32>)>, offsets: &[usize]) -> (FsaVec, Ragged<i32>) {
    let mut splits = vec![0i32];
    let mut values = Vec::new();
    let mut fsas = Vec::with_capacity(results.len());
    for (i, (fsa, derivs)) in results.into_iter().enumerate() {
        let (s, v) = ragged_parts(&derivs);
        let base = values.len() as i32;
        splits.extend(s[1..].iter().map(|x| x + base));
        values.extend(v.iter().map(|&x| x + offsets[i] as i32));
        fsas.push(fsa);
    }
    (create_fsa_vec(&fsas), ragged_from_parts(splits, values))
}

fn run<R: Send>(parallel: bool, n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    if parallel && n > 1 {
        (0..n).into_par_iter().map(&f).collect()
    } else {
        (0..n).map(f).collect()
    }
}

impl FsaVec {
    fn big(&self) -> bool {
        self.num_arcs() >= PARALLEL_MIN_ARCS
    }

    /// [`Fsa::intersect`] of FSA pairs, k2's batching: equal counts pair up, a single FSA on
    /// either side is used against every FSA of the other. In parallel across pairs.
    pub fn intersect(
        &self,
        b: &FsaVec,
        treat_epsilons_specially: bool,
    ) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
        let pairs = pairing(self.num_fsas(), b.num_fsas())?;
        self.intersect_pairs(b, &pairs, treat_epsilons_specially)
    }

    /// [`Fsa::intersect`] of FSA `b_to_a_map[i]` of `self` with FSA `i` of `b`, for every
    /// FSA of `b` (k2's `intersect_device` batching).
    pub fn intersect_with_map(
        &self,
        b: &FsaVec,
        b_to_a_map: &[i32],
        treat_epsilons_specially: bool,
    ) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
        let pairs = map_pairs(b_to_a_map, b.num_fsas(), self.num_fsas())?;
        self.intersect_pairs(b, &pairs, treat_epsilons_specially)
    }

    fn intersect_pairs(
        &self,
        b: &FsaVec,
        pairs: &[(usize, usize)],
        eps: bool,
    ) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
        self.intersect_pairs_unchecked(b, pairs, eps)
    }

    /// The intersections of the given pairs (also `levenshtein_alignment`'s, which
    /// intersects transducers as k2 does). The pairs share one bound on arcs.
    pub(crate) fn intersect_pairs_unchecked(
        &self,
        b: &FsaVec,
        pairs: &[(usize, usize)],
        eps: bool,
    ) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
        let parallel = self.big() || b.big();
        let budget = ArcBudget::new(MAX_OUTPUT_ARCS);
        let results = run(parallel, pairs.len(), |k| {
            let (ia, ib) = pairs[k];
            self.get(ia)
                .intersect_unchecked(&b.get(ib), eps, &budget, "intersect")
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
        Ok(stack_binary(
            results,
            pairs,
            &self.arc_offsets(),
            &b.arc_offsets(),
        ))
    }

    /// [`Fsa::compose`] of FSA pairs, with [`FsaVec::intersect`]'s batching.
    pub fn compose(
        &self,
        b: &FsaVec,
        treat_epsilons_specially: bool,
    ) -> Result<(FsaVec, Vec<i32>, Vec<i32>), Error> {
        let pairs = pairing(self.num_fsas(), b.num_fsas())?;
        let parallel = self.big() || b.big();
        let budget = ArcBudget::new(MAX_OUTPUT_ARCS);
        let results = run(parallel, pairs.len(), |k| {
            let (ia, ib) = pairs[k];
            self.get(ia)
                .compose_impl(&b.get(ib), treat_epsilons_specially, None, &budget)
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
        Ok(stack_binary(
            results,
            &pairs,
            &self.arc_offsets(),
            &b.arc_offsets(),
        ))
    }

    /// [`Fsa::remove_epsilon`] on every FSA, in parallel; the error names the first FSA.
    pub fn remove_epsilon(&self) -> Result<(FsaVec, Ragged<i32>), Error> {
        let results = run(self.big(), self.num_fsas(), |i| {
            let fsa = self.get(i);
            remove_epsilon_connected(&fsa, i).map(|d| fsa.with_derivs(d))
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
        Ok(stack_derivs(results, &self.arc_offsets()))
    }

    /// [`Fsa::determinize`] on every FSA, in parallel.
    pub fn determinize(
        &self,
        weight_pushing: WeightPushing,
    ) -> Result<(FsaVec, Ragged<i32>), Error> {
        self.determinize_with(&DeterminizeConfig {
            weight_pushing,
            ..DeterminizeConfig::default()
        })
    }

    /// [`Fsa::determinize_with`] on every FSA (the bound applies to each), in parallel.
    pub fn determinize_with(
        &self,
        config: &DeterminizeConfig,
    ) -> Result<(FsaVec, Ragged<i32>), Error> {
        let results = run(self.big(), self.num_fsas(), |i| {
            self.get(i).determinize_indexed(config, i)
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
        Ok(stack_derivs(results, &self.arc_offsets()))
    }

    /// [`Fsa::minimize`] on every FSA, in parallel.
    pub fn minimize(&self) -> Result<(FsaVec, Vec<i32>), Error> {
        let results = run(self.big(), self.num_fsas(), |i| {
            self.get(i).minimize_indexed(i)
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
        let offsets = self.arc_offsets();
        let mut arc_map = Vec::new();
        let mut fsas = Vec::with_capacity(results.len());
        for (i, (fsa, map)) in results.into_iter().enumerate() {
            arc_map.extend(map.iter().map(|&m| m + offsets[i] as i32));
            fsas.push(fsa);
        }
        Ok((create_fsa_vec(&fsas), arc_map))
    }
}

/// The (FSA of `a`, FSA of `b`) pairs a map from each FSA of `b` (there are `num_b`) to an
/// FSA of `a` (there are `num_a`) names, checked: one entry per FSA of `b`, each in range.
pub(crate) fn map_pairs(
    map: &[i32],
    num_b: usize,
    num_a: usize,
) -> Result<Vec<(usize, usize)>, Error> {
    if map.len() != num_b {
        return Err(Error::FsaCountMismatch {
            a: map.len(),
            b: num_b,
        });
    }
    map.iter()
        .enumerate()
        .map(|(position, &index)| match usize::try_from(index) {
            Ok(a) if a < num_a => Ok((a, position)),
            _ => Err(Error::FsaIndexOutOfRange {
                position,
                index,
                num_fsas: num_a,
            }),
        })
        .collect()
}

/// `f` inside a rayon pool of `threads` threads (for the kernels' unit tests).
#[cfg(test)]
pub(crate) fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}
