//! Smaller k2 operations around the algebra: `expand_ragged_attributes`,
//! `prune_on_arc_post`, `linear_fsa_with_self_loops`, `index_fsa`, `cat`, and the `FsaVec`
//! form of `remove_epsilon_and_add_self_loops`.

use ragged_core::Ragged;

use super::stack_derivs;
use crate::arc::Arc;
use crate::attr::{gather_all, Attr};
use crate::error::Error;
use crate::fsa::{create_fsa_vec, Fsa, FsaVec};
use crate::kernels::scores::Semiring;

impl Fsa {
    /// k2's `expand_ragged_attributes` for the ragged `aux_labels`: an arc with aux list
    /// `[a1 .. aL]` becomes a chain of `max(L, 1)` arcs with plain aux labels `a1 .. aL`
    /// (or 0), the label, score and arc map on the first arc (0 and -1 on the others), a
    /// final arc's `-1` on the chain's last arc. An FSA without ragged `aux_labels` comes
    /// back as it is, with the identity arc map.
    pub fn expand_ragged_attributes(&self) -> Result<(Fsa, Vec<i32>), Error> {
        if !matches!(self.aux_labels(), Some(Attr::Ragged(_))) {
            return Ok((self.clone(), (0..self.num_arcs() as i32).collect()));
        }
        // inverting expands the chains; inverting back restores labels and aux labels
        let (inverted, arc_map) = self.invert()?;
        let (expanded, _) = inverted.invert()?;
        Ok((expanded, arc_map))
    }

    /// k2's `linear_fsa_with_self_loops`: a linear FSA of this (linear) FSA's labels that
    /// are positive, in arc order, with an epsilon self-loop on every non-final state.
    pub fn linear_fsa_with_self_loops(&self) -> Fsa {
        let labels: Vec<i32> = self.labels().into_iter().filter(|&l| l > 0).collect();
        let linear = Fsa::linear(&labels).expect("positive labels are valid");
        linear.add_epsilon_self_loops().0
    }

    /// k2's `prune_on_arc_post`: drops the arcs whose log-semiring posterior is below
    /// `ln(threshold_prob)` (states are kept; call `connect` to trim). Needs
    /// `0 < threshold_prob < 1` and a top-sorted acyclic FSA.
    pub fn prune_on_arc_post(&self, threshold_prob: f64) -> Result<(Fsa, Vec<i32>), Error> {
        check_threshold(threshold_prob)?;
        let post: Vec<f64> = self.get_arc_post(Semiring::Log)?;
        Ok(prune(self, &post, threshold_prob.ln()))
    }
}

fn check_threshold(threshold_prob: f64) -> Result<(), Error> {
    if threshold_prob > 0.0 && threshold_prob < 1.0 {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            what: "threshold_prob",
            value: threshold_prob,
            allowed: "(0, 1)",
        })
    }
}

fn prune(fsa: &Fsa, post: &[f64], threshold: f64) -> (Fsa, Vec<i32>) {
    let mut arcs: Vec<Arc> = Vec::new();
    let mut arc_map = Vec::new();
    for (i, (arc, &p)) in fsa.arcs().values().iter().zip(post).enumerate() {
        if p >= threshold {
            arcs.push(*arc);
            arc_map.push(i as i32);
        }
    }
    let mut out = Fsa::from_arcs(arcs, fsa.num_states()).expect("a subset of valid arcs");
    for (name, attr) in gather_all(fsa.attrs(), &arc_map) {
        out.set_attr(&name, attr)
            .expect("gathered to the kept arcs");
    }
    (out, arc_map)
}

impl FsaVec {
    /// [`Fsa::remove_epsilon_and_add_self_loops`] on every FSA, in parallel.
    pub fn remove_epsilon_and_add_self_loops(&self) -> Result<(FsaVec, Ragged<i32>), Error> {
        let results = super::run(
            self.num_arcs() >= crate::PARALLEL_MIN_ARCS,
            self.num_fsas(),
            |i| self.get(i).remove_epsilon_and_add_self_loops(),
        )
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.map_err(|e| renumber_fsa(e, i)))
        .collect::<Result<Vec<_>, _>>()?;
        Ok(stack_derivs(results, &self.arc_offsets()))
    }

    /// [`Fsa::prune_on_arc_post`] on every FSA (k2's `prune_on_arc_post`).
    pub fn prune_on_arc_post(&self, threshold_prob: f64) -> Result<(FsaVec, Vec<i32>), Error> {
        check_threshold(threshold_prob)?;
        let post: Vec<f64> = self.get_arc_post(Semiring::Log)?;
        let offsets = self.arc_offsets();
        let mut fsas = Vec::with_capacity(self.num_fsas());
        let mut arc_map = Vec::new();
        for i in 0..self.num_fsas() {
            let fsa = self.get(i);
            let local = &post[offsets[i]..offsets[i] + fsa.num_arcs()];
            let (out, map) = prune(&fsa, local, threshold_prob.ln());
            arc_map.extend(map.iter().map(|&m| m + offsets[i] as i32));
            fsas.push(out);
        }
        Ok((create_fsa_vec(&fsas), arc_map))
    }

    /// [`Fsa::linear_fsa_with_self_loops`] on every FSA.
    pub fn linear_fsa_with_self_loops(&self) -> FsaVec {
        let fsas: Vec<Fsa> = (0..self.num_fsas())
            .map(|i| self.get(i).linear_fsa_with_self_loops())
            .collect();
        create_fsa_vec(&fsas)
    }

    /// k2's `index_fsa`: the FSAs at `indices`, in that order (repeats allowed), with their
    /// attributes.
    pub fn index_fsa(&self, indices: &[i32]) -> Result<FsaVec, Error> {
        let mut fsas = Vec::with_capacity(indices.len());
        for (position, &index) in indices.iter().enumerate() {
            if index < 0 || index as usize >= self.num_fsas() {
                return Err(Error::FsaIndexOutOfRange {
                    position,
                    index,
                    num_fsas: self.num_fsas(),
                });
            }
            fsas.push(self.get(index as usize));
        }
        FsaVec::from_fsas(&fsas)
    }

    /// k2's `cat`: the FSAs of every FsaVec, one after another. Attributes must agree
    /// ([`Error::AttrMismatch`] names the first FSA that differs).
    pub fn cat(parts: &[&FsaVec]) -> Result<FsaVec, Error> {
        let fsas: Vec<Fsa> = parts.iter().flat_map(|v| v.to_fsas()).collect();
        FsaVec::from_fsas(&fsas)
    }
}

/// Puts the FSA index into an error from a single-FSA call.
fn renumber_fsa(err: Error, fsa_idx: usize) -> Error {
    match err {
        Error::PositiveEpsilonCycle { state, .. } => Error::PositiveEpsilonCycle {
            fsa: fsa_idx,
            state,
        },
        other => other,
    }
}

/// The attribute k2's `levenshtein_graph` stores each arc's score offset under.
pub const INS_DEL_SCORE_OFFSET: &str = "__ins_del_score_offset_internal_attr_";

impl Fsa {
    /// k2's `levenshtein_graph` for one symbol sequence: see [`FsaVec::levenshtein_graph`].
    pub fn levenshtein_graph(symbols: &[i32], ins_del_score: f32) -> Result<Fsa, Error> {
        Ok(FsaVec::levenshtein_graph(&[symbols.to_vec()], ins_del_score)?.get(0))
    }
}

impl FsaVec {
    /// k2's `levenshtein_graph`: for each sequence `s1 .. sn`, states `0..=n` and a final
    /// state `n + 1`. State `i < n` has a self-loop `0` (score `ins_del_score`, aux 0: an
    /// insertion), an arc `0` to `i + 1` (score -0.5, aux `s(i+1)`: a substitution or a
    /// deletion) and an arc `s(i+1)` to `i + 1` (score 0, aux `s(i+1)`: a match); state `n`
    /// has the self-loop and the `-1` arc. `aux_labels` as described, and the `f32`
    /// attribute [`INS_DEL_SCORE_OFFSET`] (`ins_del_score + 0.5` on self-loops, else 0).
    /// Symbols 0 and -1 are refused.
    pub fn levenshtein_graph(symbols: &[Vec<i32>], ins_del_score: f32) -> Result<FsaVec, Error> {
        let mut fsas = Vec::with_capacity(symbols.len());
        for seq in symbols {
            if let Some(&bad) = seq.iter().find(|&&s| s == 0 || s == -1) {
                return Err(Error::InvalidArgument {
                    what: "symbol",
                    value: bad as f64,
                    allowed: "labels other than 0 and -1",
                });
            }
            let n = seq.len() as i32;
            let mut arcs = Vec::with_capacity(3 * seq.len() + 2);
            let mut aux = Vec::with_capacity(arcs.capacity());
            let mut offsets = Vec::with_capacity(arcs.capacity());
            let offset = ins_del_score - (-0.5);
            for (i, &s) in seq.iter().enumerate() {
                let i = i as i32;
                arcs.push(Arc::new(i, i, 0, ins_del_score));
                arcs.push(Arc::new(i, i + 1, 0, -0.5));
                arcs.push(Arc::new(i, i + 1, s, 0.0));
                aux.extend_from_slice(&[0, s, s]);
                offsets.extend_from_slice(&[offset, 0.0, 0.0]);
            }
            arcs.push(Arc::new(n, n, 0, ins_del_score));
            arcs.push(Arc::new(n, n + 1, -1, 0.0));
            aux.extend_from_slice(&[0, -1]);
            offsets.extend_from_slice(&[offset, 0.0]);
            let fsa = Fsa::from_arcs(arcs, seq.len() + 2)
                .expect("arcs built in state order")
                .with_attr(crate::AUX_LABELS, Attr::I32(aux))?
                .with_attr(INS_DEL_SCORE_OFFSET, Attr::F32(offsets))?;
            fsas.push(fsa);
        }
        Ok(create_fsa_vec(&fsas))
    }
}

impl FsaVec {
    /// k2's `levenshtein_alignment`: the best alignment of each hypothesis graph `hyps[i]`
    /// with the reference graph `self[hyp_to_ref_map[i]]` (both from
    /// [`FsaVec::levenshtein_graph`]), as a linear FSA whose labels are the aligned
    /// symbols (0 for an insertion, deletion or substitution), with `ref_labels` and
    /// `hyp_labels` attributes, and scores whose total is minus the edit distance. The
    /// lattice is k2's (`intersect` with 0 as an ordinary symbol, epsilon self-loops
    /// removed); ties between equally good alignments go to the first arc.
    pub fn levenshtein_alignment(
        &self,
        hyps: &FsaVec,
        hyp_to_ref_map: &[i32],
    ) -> Result<FsaVec, Error> {
        for (fsas, operand) in [(self, "refs"), (hyps, "hyps")] {
            if !matches!(fsas.aux_labels(), Some(Attr::I32(_))) {
                return Err(Error::MissingAttr {
                    name: format!("{operand}.aux_labels"),
                    needed: "the plain aux labels of a levenshtein_graph",
                });
            }
        }
        let pairs = super::map_pairs(hyp_to_ref_map, hyps.num_fsas(), self.num_fsas())?;
        let mut hyps = hyps.clone();
        let hyp_labels = hyps.attrs().get(crate::AUX_LABELS).cloned();
        let mut renamed = hyps.attrs().clone();
        renamed.remove(crate::AUX_LABELS);
        if let Some(labels) = hyp_labels {
            renamed.insert("hyp_labels".to_string(), labels);
        }
        hyps = FsaVec::from_parts_unchecked(hyps.arcs().clone(), renamed);
        let (lattice, _, _) = self.intersect_pairs_unchecked(&hyps, &pairs, false)?;
        let (lattice, _) = lattice.remove_epsilon_self_loops();
        let (sorted, _) = lattice.top_sort()?;
        let (best, _) = sorted.shortest_path()?;
        let mut alignments = Vec::with_capacity(best.num_fsas());
        for fsa in best.to_fsas() {
            let (mut inverted, _) = fsa.invert()?;
            let ref_labels = inverted.labels();
            let offsets = inverted.remove_attr(INS_DEL_SCORE_OFFSET);
            let aux = inverted
                .remove_attr(crate::AUX_LABELS)
                .expect("inverted from an FSA with aux labels");
            let Attr::I32(labels) = aux else {
                unreachable!("invert gives plain aux labels")
            };
            let arcs: Vec<Arc> = inverted
                .arcs()
                .values()
                .iter()
                .zip(&labels)
                .enumerate()
                .map(|(k, (a, &label))| {
                    let offset = match &offsets {
                        Some(Attr::F32(v)) => v[k],
                        _ => 0.0,
                    };
                    Arc::new(a.src_state, a.dest_state, label, a.score - offset)
                })
                .collect();
            let mut out = Fsa::from_arcs(arcs, inverted.num_states())?;
            for (name, attr) in inverted.attrs() {
                out.set_attr(name, attr.clone())?;
            }
            out.set_attr("ref_labels", Attr::I32(ref_labels))?;
            alignments.push(out);
        }
        Ok(create_fsa_vec(&alignments))
    }
}
