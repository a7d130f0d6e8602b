//! The algorithms as methods of `Fsa` and `FsaVec`, each returning its arc map (new arc ->
//! old arc, `-1` for a new arc) and carrying the attributes through it; an `FsaVec` is
//! processed in parallel across its FSAs.

use rayon::prelude::*;

use crate::arc::Arc;
use crate::attr::{gather_all, gather_all_but, ragged_parts, Attr, Attrs, AUX_LABELS};
use crate::error::Error;
use crate::fsa::{Fsa, FsaVec, PARALLEL_MIN_ARCS};
use crate::kernels::construct;
use crate::kernels::scores::{self, Real, Semiring};
use crate::kernels::structure;
use crate::view::{Built, FsaView};

impl Fsa {
    fn unary(&self, f: impl Fn(FsaView<'_>) -> Built) -> (Fsa, Vec<i32>) {
        self.with_built(f(self.view()))
    }

    fn try_unary(
        &self,
        f: impl Fn(FsaView<'_>) -> Result<Built, Error>,
    ) -> Result<(Fsa, Vec<i32>), Error> {
        Ok(self.with_built(f(self.view())?))
    }

    /// The FSA `built` from this one, with this one's attributes gathered through its arc
    /// map, and that arc map.
    pub(crate) fn with_built(&self, mut built: Built) -> (Fsa, Vec<i32>) {
        let attrs = gather_all(self.attrs(), &built.arc_map);
        let arc_map = std::mem::take(&mut built.arc_map);
        (Fsa::from_built_unchecked(built, attrs), arc_map)
    }

    /// Sorts the arcs of every state by label (as `u32`: epsilon first, `-1` last), then by
    /// destination (k2's `arc_sort`).
    pub fn arc_sort(&self) -> (Fsa, Vec<i32>) {
        let mut values = self.arcs().values().to_vec();
        let mut arc_map: Vec<i32> = (0..values.len() as i32).collect();
        let shape = self.arcs().shape();
        structure::arc_sort_in_place(shape.row_splits(1), &mut values, &mut arc_map);
        let arcs = ragged_core::Ragged::new(shape.clone(), values);
        let attrs = gather_all(self.attrs(), &arc_map);
        (Fsa::from_parts_unchecked(arcs, attrs), arc_map)
    }

    /// Sorts the states topologically as k2's `top_sort` does (Kahn's algorithm in batches,
    /// each batch in state order, the final state last); self-loops are allowed, any other
    /// cycle is [`Error::Cycle`]. States not reachable from the start are dropped.
    pub fn top_sort(&self) -> Result<(Fsa, Vec<i32>), Error> {
        self.try_unary(|v| structure::top_sort(v, 0))
    }

    /// Keeps the states that are accessible and co-accessible, in their order (k2's
    /// `connect`); the empty FSA when no path reaches the final state.
    pub fn connect(&self) -> (Fsa, Vec<i32>) {
        self.unary(structure::connect)
    }

    /// Reverses the FSA as k2 does: old final state `F` -> start 0, old start -> `F`, other
    /// states unchanged, a new final state `F + 1` entered from `F` by a `-1` arc; the old
    /// `-1` arcs become epsilon arcs leaving the new start state.
    pub fn reverse(&self) -> (Fsa, Vec<i32>) {
        self.unary(structure::reverse)
    }

    /// Kleene closure (k2's `closure`): arcs into the final state go back to the start with
    /// label 0 (aux label 0), and a new `-1` arc (aux label `-1`) leads from the start to the
    /// final state.
    pub fn closure(&self) -> (Fsa, Vec<i32>) {
        let (built, new_arc) = structure::closure(self.view());
        let arc_map = built.arc_map.clone();
        let mut attrs = gather_all(self.attrs(), &arc_map);
        if let Some(Attr::I32(aux)) = attrs.get_mut(AUX_LABELS) {
            for (i, value) in aux.iter_mut().enumerate() {
                if Some(i) == new_arc {
                    *value = -1;
                } else if *value == -1 {
                    *value = 0;
                }
            }
        }
        (Fsa::from_built_unchecked(built, attrs), arc_map)
    }

    /// Adds an epsilon self-loop (score 0) to every non-final state, as its first arc.
    pub fn add_epsilon_self_loops(&self) -> (Fsa, Vec<i32>) {
        self.unary(structure::add_epsilon_self_loops)
    }

    /// Removes the epsilon self-loops.
    pub fn remove_epsilon_self_loops(&self) -> (Fsa, Vec<i32>) {
        self.unary(structure::remove_epsilon_self_loops)
    }

    /// Swaps labels and `aux_labels` (k2's `invert`). Ragged aux labels are first expanded
    /// into chains of arcs as k2's `expand_ragged_attributes` does (the score and the arc map
    /// on the first arc of a chain, the `-1` of a final arc on its last arc), so the result
    /// has plain aux labels. An acceptor (no `aux_labels`) is its own inverse.
    pub fn invert(&self) -> Result<(Fsa, Vec<i32>), Error> {
        let identity: Vec<i32> = (0..self.num_arcs() as i32).collect();
        match self.aux_labels() {
            None => Ok((self.clone(), identity)),
            Some(Attr::I32(aux)) => {
                let labels = self.labels();
                let mut arcs = self.arcs().clone();
                for (arc, &a) in arcs.values_mut().iter_mut().zip(aux) {
                    arc.label = a;
                }
                let mut attrs = self.attrs().clone();
                attrs.insert(AUX_LABELS.to_string(), Attr::I32(labels));
                let out = Fsa::from_parts_unchecked(arcs, attrs);
                Ok((out, identity))
            }
            Some(Attr::Ragged(r)) => {
                let (splits, values) = ragged_parts(r);
                let (built, aux) = structure::invert_ragged(self.view(), splits, values);
                let arc_map = built.arc_map.clone();
                // the aux labels are the inversion's own
                let mut attrs = gather_all_but(self.attrs(), &arc_map, AUX_LABELS);
                attrs.insert(AUX_LABELS.to_string(), Attr::I32(aux));
                Ok((Fsa::from_built_unchecked(built, attrs), arc_map))
            }
            Some(Attr::F32(_)) => Err(Error::MissingAttr {
                name: AUX_LABELS.to_string(),
                needed: "an i32 or ragged i32 attribute",
            }),
        }
    }

    /// A linear FSA accepting `labels` (scores 0; k2's `linear_fsa`).
    #[doc(alias = "linear_fsa")]
    pub fn linear(labels: &[i32]) -> Result<Fsa, Error> {
        check_labels(0, labels)?;
        Ok(Fsa::from_built_unchecked(
            construct::linear(labels),
            Attrs::new(),
        ))
    }

    /// A linear FST from labels and aux labels of equal length (k2's `linear_fst`); the
    /// final arc's aux label is `-1`.
    pub fn linear_fst(labels: &[i32], aux_labels: &[i32]) -> Result<Fsa, Error> {
        check_labels(0, labels)?;
        check_aux(0, labels, aux_labels)?;
        let mut aux = aux_labels.to_vec();
        aux.push(-1);
        Fsa::linear(labels)?.with_attr(AUX_LABELS, Attr::I32(aux))
    }

    /// k2's CTC topology for tokens `0..=max_token` (0 is blank), with `aux_labels`;
    /// `modified` gives the topology with no mandatory blank between repeats.
    ///
    /// `max_token` must be at least 0, and the topology must fit the `i32` offsets: the
    /// standard one has `(max_token + 1) * (max_token + 2)` arcs (so `max_token <= 46339`),
    /// the modified one `4 * max_token + 2`. Anything else is [`Error::InvalidArgument`].
    pub fn ctc_topo(max_token: i32, modified: bool) -> Result<Fsa, Error> {
        if max_token < 0 {
            return Err(Error::InvalidArgument {
                what: "max_token",
                value: max_token.into(),
                allowed: "the largest token must be at least 0 (the blank)",
            });
        }
        let tokens = i64::from(max_token) + 1;
        let num_arcs = if modified {
            4 * tokens - 2
        } else {
            tokens * (tokens + 1)
        };
        if num_arcs > i64::from(i32::MAX) {
            return Err(Error::InvalidArgument {
                what: "max_token",
                value: max_token.into(),
                allowed: "the topology's arcs must be numbered by i32 offsets",
            });
        }
        let (built, aux) =
            construct::ctc_topo(max_token, modified, num_arcs as usize).map_err(|_| {
                Error::InvalidArgument {
                    what: "max_token",
                    value: max_token.into(),
                    allowed: "the allocator refused the memory for the topology's arcs",
                }
            })?;
        let mut attrs = Attrs::new();
        attrs.insert(AUX_LABELS.to_string(), Attr::I32(aux));
        Ok(Fsa::from_built_unchecked(built, attrs))
    }

    /// Forward scores of every state (0 at the start); needs a top-sorted acyclic FSA.
    pub fn get_forward_scores<T: Real>(&self, semiring: Semiring) -> Result<Vec<T>, Error> {
        scores::check_top_sorted_acyclic(self.view(), 0)?;
        Ok(scores::forward::<T>(self.view(), semiring, false).0)
    }

    /// Backward scores of every state (0 at the final state); needs a top-sorted acyclic FSA.
    pub fn get_backward_scores<T: Real>(&self, semiring: Semiring) -> Result<Vec<T>, Error> {
        scores::check_top_sorted_acyclic(self.view(), 0)?;
        Ok(scores::backward::<T>(self.view(), semiring))
    }

    /// The total score (`-inf` when no path reaches the final state, or the FSA is empty).
    #[doc(alias = "get_tot_scores")]
    pub fn get_tot_score<T: Real>(&self, semiring: Semiring) -> Result<T, Error> {
        scores::check_top_sorted_acyclic(self.view(), 0)?;
        Ok(scores::tot::<T>(self.view(), semiring))
    }

    /// Arc posteriors `forward[src] + score + backward[dest] - tot`.
    pub fn get_arc_post<T: Real>(&self, semiring: Semiring) -> Result<Vec<T>, Error> {
        scores::check_top_sorted_acyclic(self.view(), 0)?;
        Ok(scores::arc_post::<T>(self.view(), semiring))
    }

    /// The best path as a linear FSA (empty when there is none), with its arc map; needs a
    /// top-sorted acyclic FSA.
    pub fn shortest_path(&self) -> Result<(Fsa, Vec<i32>), Error> {
        scores::check_top_sorted_acyclic(self.view(), 0)?;
        Ok(self.unary(best_path_built::<f64>))
    }
}

fn best_path_built<T: Real>(view: FsaView<'_>) -> Built {
    let path = scores::best_path::<T>(view);
    if path.is_empty() {
        return Built::empty();
    }
    let arcs = path
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let a = view.arcs[i];
            Arc::new(k as i32, k as i32 + 1, a.label, a.score)
        })
        .collect();
    let arc_map = path.iter().map(|&i| i as i32).collect();
    Built::from_sorted_arcs(path.len() + 1, arcs, arc_map)
}

fn check_labels(sequence: usize, labels: &[i32]) -> Result<(), Error> {
    match labels.iter().position(|&l| l == -1) {
        Some(position) => Err(Error::ReservedLabel { sequence, position }),
        None => Ok(()),
    }
}

fn check_aux(sequence: usize, labels: &[i32], aux: &[i32]) -> Result<(), Error> {
    if labels.len() != aux.len() {
        return Err(Error::LengthMismatch {
            sequence,
            labels: labels.len(),
            aux_labels: aux.len(),
        });
    }
    Ok(())
}

impl FsaVec {
    fn unary(&self, f: impl Fn(FsaView<'_>) -> Built + Sync) -> (FsaVec, Vec<i32>) {
        let parts = self.map_views(|_, v| f(v));
        FsaVec::from_built(parts, &self.arc_offsets(), self.attrs())
    }

    fn try_unary(
        &self,
        f: impl Fn(usize, FsaView<'_>) -> Result<Built, Error> + Sync,
    ) -> Result<(FsaVec, Vec<i32>), Error> {
        let parts = self
            .map_views(f)
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FsaVec::from_built(parts, &self.arc_offsets(), self.attrs()))
    }

    /// [`Fsa::arc_sort`] on every FSA. The shape does not change, so the arcs are copied
    /// once and sorted in place, FSA by FSA (in parallel when large).
    pub fn arc_sort(&self) -> (FsaVec, Vec<i32>) {
        let mut values = self.arcs().values().to_vec();
        let mut arc_map: Vec<i32> = (0..values.len() as i32).collect();
        let shape = self.arcs().shape();
        let (splits1, splits2) = (shape.row_splits(1), shape.row_splits(2));
        // one job per FSA, on disjoint slices
        let mut jobs = Vec::with_capacity(self.num_fsas());
        {
            let (mut rest_arcs, mut rest_map) = (values.as_mut_slice(), arc_map.as_mut_slice());
            for i in 0..self.num_fsas() {
                let (s0, s1) = (splits1[i] as usize, splits1[i + 1] as usize);
                let len = (splits2[s1] - splits2[s0]) as usize;
                let (arcs, tail) = rest_arcs.split_at_mut(len);
                rest_arcs = tail;
                let (map, tail) = rest_map.split_at_mut(len);
                rest_map = tail;
                jobs.push((&splits2[s0..=s1], arcs, map));
            }
        }
        let sort = |(splits, arcs, map): (&[i32], &mut [Arc], &mut [i32])| {
            structure::arc_sort_in_place(splits, arcs, map)
        };
        if self.num_fsas() > 1 && self.num_arcs() >= PARALLEL_MIN_ARCS {
            jobs.into_par_iter().for_each(sort);
        } else {
            jobs.into_iter().for_each(sort);
        }
        let arcs = ragged_core::Ragged::new(shape.clone(), values);
        let attrs = gather_all(self.attrs(), &arc_map);
        (FsaVec::from_parts_unchecked(arcs, attrs), arc_map)
    }

    /// [`Fsa::top_sort`] on every FSA; the error names the first FSA with a cycle.
    pub fn top_sort(&self) -> Result<(FsaVec, Vec<i32>), Error> {
        self.try_unary(|i, v| structure::top_sort(v, i))
    }

    /// [`Fsa::connect`] on every FSA.
    pub fn connect(&self) -> (FsaVec, Vec<i32>) {
        self.unary(structure::connect)
    }

    /// [`Fsa::reverse`] on every FSA.
    pub fn reverse(&self) -> (FsaVec, Vec<i32>) {
        self.unary(structure::reverse)
    }

    /// [`Fsa::add_epsilon_self_loops`] on every FSA.
    pub fn add_epsilon_self_loops(&self) -> (FsaVec, Vec<i32>) {
        self.unary(structure::add_epsilon_self_loops)
    }

    /// [`Fsa::remove_epsilon_self_loops`] on every FSA.
    pub fn remove_epsilon_self_loops(&self) -> (FsaVec, Vec<i32>) {
        self.unary(structure::remove_epsilon_self_loops)
    }

    /// [`Fsa::closure`] on every FSA.
    pub fn closure(&self) -> (FsaVec, Vec<i32>) {
        self.per_fsa(|fsa| fsa.closure())
    }

    /// [`Fsa::invert`] on every FSA.
    pub fn invert(&self) -> Result<(FsaVec, Vec<i32>), Error> {
        let results: Vec<(Fsa, Vec<i32>)> = self
            .map_views_indexed_fsas(|fsa| fsa.invert())
            .into_iter()
            .collect::<Result<_, _>>()?;
        Ok(self.join(results))
    }

    fn per_fsa(&self, f: impl Fn(&Fsa) -> (Fsa, Vec<i32>) + Sync) -> (FsaVec, Vec<i32>) {
        let results = self.map_views_indexed_fsas(f);
        self.join(results)
    }

    fn map_views_indexed_fsas<R: Send>(&self, f: impl Fn(&Fsa) -> R + Sync) -> Vec<R> {
        self.map_views(|i, _| f(&self.get(i)))
    }

    fn join(&self, results: Vec<(Fsa, Vec<i32>)>) -> (FsaVec, Vec<i32>) {
        let offsets = self.arc_offsets();
        let mut arc_map = Vec::new();
        let mut fsas = Vec::with_capacity(results.len());
        for (i, (fsa, map)) in results.into_iter().enumerate() {
            arc_map.extend(
                map.iter()
                    .map(|&m| if m < 0 { -1 } else { m + offsets[i] as i32 }),
            );
            fsas.push(fsa);
        }
        (crate::fsa::create_fsa_vec(&fsas), arc_map)
    }

    /// The union of all FSAs as one FSA (k2's `union`): a new start state with epsilon arcs
    /// to each FSA's start, all final states merged into one.
    pub fn union(&self) -> (Fsa, Vec<i32>) {
        let views: Vec<FsaView<'_>> = (0..self.num_fsas()).map(|i| self.view(i)).collect();
        let (built, origin) = construct::union(&views);
        let offsets = self.arc_offsets();
        let arc_map: Vec<i32> = origin
            .iter()
            .map(|o| match o {
                Some((fsa, arc)) => (offsets[*fsa] + arc) as i32,
                None => -1,
            })
            .collect();
        let attrs = gather_all(self.attrs(), &arc_map);
        (Fsa::from_built_unchecked(built, attrs), arc_map)
    }

    /// Linear FSAs, one per label sequence (k2's `linear_fsa` on a list of lists).
    #[doc(alias = "linear_fsa")]
    pub fn linear(sequences: &[Vec<i32>]) -> Result<FsaVec, Error> {
        for (i, s) in sequences.iter().enumerate() {
            check_labels(i, s)?;
        }
        let parts = sequences.iter().map(|s| construct::linear(s)).collect();
        Ok(FsaVec::from_built(parts, &[], &Attrs::new()).0)
    }

    /// Linear FSAs from a 2-axis ragged array of label sequences (k2's `linear_fsa` on a
    /// `RaggedTensor`).
    pub fn linear_from_ragged(labels: &ragged_core::Ragged<i32>) -> Result<FsaVec, Error> {
        if labels.num_axes() != 2 {
            return Err(Error::WrongAxes {
                expected: 2,
                got: labels.num_axes(),
            });
        }
        FsaVec::linear(&labels.to_vec_vec())
    }

    /// Linear FSTs from label and aux-label sequences (k2's `linear_fst` on lists).
    pub fn linear_fst(sequences: &[Vec<i32>], aux_labels: &[Vec<i32>]) -> Result<FsaVec, Error> {
        if sequences.len() != aux_labels.len() {
            return Err(Error::LengthMismatch {
                sequence: sequences.len().min(aux_labels.len()),
                labels: sequences.len(),
                aux_labels: aux_labels.len(),
            });
        }
        let mut aux = Vec::new();
        for (i, (s, a)) in sequences.iter().zip(aux_labels).enumerate() {
            check_labels(i, s)?;
            check_aux(i, s, a)?;
            aux.extend_from_slice(a);
            aux.push(-1);
        }
        let mut out = FsaVec::linear(sequences)?;
        out.set_attr(AUX_LABELS, Attr::I32(aux))?;
        Ok(out)
    }

    /// k2's CTC graphs, one per token sequence, with `aux_labels`.
    pub fn ctc_graph(sequences: &[Vec<i32>], modified: bool) -> Result<FsaVec, Error> {
        let mut parts = Vec::with_capacity(sequences.len());
        let mut aux = Vec::new();
        for (i, s) in sequences.iter().enumerate() {
            check_labels(i, s)?;
            let (built, a) = construct::ctc_graph(s, modified);
            parts.push(built);
            aux.extend(a);
        }
        let mut out = FsaVec::from_built(parts, &[], &Attrs::new()).0;
        out.set_attr(AUX_LABELS, Attr::I32(aux))?;
        Ok(out)
    }

    fn check_all_top_sorted(&self) -> Result<(), Error> {
        self.map_views(|i, v| scores::check_top_sorted_acyclic(v, i))
            .into_iter()
            .collect()
    }

    /// Forward scores of every state (idx01 order); needs top-sorted acyclic FSAs.
    pub fn get_forward_scores<T: Real>(&self, semiring: Semiring) -> Result<Vec<T>, Error> {
        self.check_all_top_sorted()?;
        Ok(self
            .map_views(|_, v| scores::forward::<T>(v, semiring, false).0)
            .concat())
    }

    /// Backward scores of every state (idx01 order); needs top-sorted acyclic FSAs.
    pub fn get_backward_scores<T: Real>(&self, semiring: Semiring) -> Result<Vec<T>, Error> {
        self.check_all_top_sorted()?;
        Ok(self
            .map_views(|_, v| scores::backward::<T>(v, semiring))
            .concat())
    }

    /// The total score of every FSA (`-inf` for an FSA without a successful path).
    pub fn get_tot_scores<T: Real>(&self, semiring: Semiring) -> Result<Vec<T>, Error> {
        self.check_all_top_sorted()?;
        Ok(self.map_views(|_, v| scores::tot::<T>(v, semiring)))
    }

    /// Arc posteriors of every arc (idx012 order).
    pub fn get_arc_post<T: Real>(&self, semiring: Semiring) -> Result<Vec<T>, Error> {
        self.check_all_top_sorted()?;
        Ok(self
            .map_views(|_, v| scores::arc_post::<T>(v, semiring))
            .concat())
    }

    /// The best path of every FSA as a linear FSA (empty when there is none), with the arc
    /// map into this FsaVec (k2's `shortest_path`).
    pub fn shortest_path(&self) -> Result<(FsaVec, Vec<i32>), Error> {
        self.check_all_top_sorted()?;
        Ok(self.unary(best_path_built::<f64>))
    }
}
