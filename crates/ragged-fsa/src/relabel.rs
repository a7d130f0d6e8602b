//! k2-style label maps on FSAs: `fsa.labels = f(fsa.labels)` and the same on `aux_labels`
//! (plain or ragged), by a function or a table, and the disambiguation-to-epsilon step of
//! icefall's HLG recipe in one call.

use crate::arc::Arc;
use crate::attr::{Attr, Attrs, AUX_LABELS};
use crate::error::Error;
use crate::fsa::{Fsa, FsaVec};

/// What [`Error::MissingAttr`] says a label map on `aux_labels` needs.
const AUX_KIND: &str = "plain or ragged i32 labels";

fn map_arc_labels(arcs: &mut [Arc], mut f: impl FnMut(i32) -> i32) {
    for arc in arcs {
        if arc.label != -1 {
            arc.label = f(arc.label);
        }
    }
}

/// The aux-label values of every arc, mutably (each value of a ragged list), or the error
/// naming what is missing.
fn aux_values(attrs: &mut Attrs) -> Result<&mut [i32], Error> {
    match attrs.get_mut(AUX_LABELS) {
        Some(Attr::I32(values)) => Ok(values),
        Some(Attr::Ragged(ragged)) => Ok(ragged.values_mut()),
        _ => Err(Error::MissingAttr {
            name: AUX_LABELS.to_string(),
            needed: AUX_KIND,
        }),
    }
}

/// The arc of each aux-label value: the value itself for plain labels, the row of a
/// ragged list.
fn aux_arc_of(attrs: &Attrs, value_idx: usize) -> usize {
    match attrs.get(AUX_LABELS) {
        Some(Attr::Ragged(ragged)) => ragged.shape().row_ids(1)[value_idx] as usize,
        _ => value_idx,
    }
}

fn map_values(values: &mut [i32], mut f: impl FnMut(i32) -> i32) {
    for value in values {
        if *value != -1 {
            *value = f(*value);
        }
    }
}

/// The first value (other than `-1`) that `table` cannot map, as `(value index, value)`.
fn first_unmapped(values: impl Iterator<Item = i32>, table: &[i32]) -> Option<(usize, i32)> {
    values.enumerate().find(|&(_, value)| {
        value != -1 && usize::try_from(value).map_or(true, |v| v >= table.len())
    })
}

fn by_table(table: &[i32]) -> impl Fn(i32) -> i32 + '_ {
    // every value was checked by `first_unmapped` before
    move |value| table[value as usize]
}

fn labels_by_table(arcs: &mut [Arc], table: &[i32]) -> Result<(), Error> {
    if let Some((position, value)) = first_unmapped(arcs.iter().map(|a| a.label), table) {
        return Err(Error::MapOutOfRange {
            map: "labels",
            position,
            value,
            size: table.len(),
        });
    }
    map_arc_labels(arcs, by_table(table));
    Ok(())
}

fn aux_labels_by_table(attrs: &mut Attrs, table: &[i32]) -> Result<(), Error> {
    let unmapped = first_unmapped(aux_values(attrs)?.iter().copied(), table);
    if let Some((value_idx, value)) = unmapped {
        return Err(Error::MapOutOfRange {
            map: AUX_LABELS,
            position: aux_arc_of(attrs, value_idx),
            value,
            size: table.len(),
        });
    }
    map_values(aux_values(attrs)?, by_table(table));
    Ok(())
}

fn check_disambig_id(what: &'static str, id: i32) -> Result<(), Error> {
    if id < 1 {
        return Err(Error::InvalidArgument {
            what,
            value: f64::from(id),
            allowed: "at least 1 (the id of `#0`; 0 is epsilon)",
        });
    }
    Ok(())
}

fn remove_disambig(
    arcs: &mut [Arc],
    attrs: &mut Attrs,
    first_token_disambig_id: i32,
    first_word_disambig_id: i32,
) -> Result<(), Error> {
    check_disambig_id("first_token_disambig_id", first_token_disambig_id)?;
    check_disambig_id("first_word_disambig_id", first_word_disambig_id)?;
    if attrs.contains_key(AUX_LABELS) {
        for value in aux_values(attrs)? {
            if *value >= first_word_disambig_id {
                *value = 0;
            }
        }
    }
    for arc in arcs {
        if arc.label >= first_token_disambig_id {
            arc.label = 0;
        }
    }
    Ok(())
}

impl Fsa {
    /// Replaces each arc's label `l` by `f(l)` (k2's `fsa.labels = f(fsa.labels)`); the
    /// `-1` of arcs into the final state is left as it is and never passed to `f`.
    ///
    /// ```
    /// use ragged_fsa::Fsa;
    ///
    /// let mut fsa: Fsa = "0 1 3 0.5\n1 2 -1 0\n2".parse().unwrap();
    /// fsa.map_labels(|label| label * 10);
    /// assert_eq!(fsa.labels(), [30, -1]);
    /// ```
    #[doc(alias = "relabel")]
    #[doc(alias = "set_labels")]
    pub fn map_labels(&mut self, f: impl FnMut(i32) -> i32) {
        map_arc_labels(self.parts_mut().0, f);
    }

    /// Replaces each arc's label `l` by `table[l]` (k2's `fsa.labels = table[fsa.labels]`,
    /// OpenFst's `fstrelabel`); `-1` is left as it is. A label outside `0..table.len()` is
    /// [`Error::MapOutOfRange`] naming the first such arc, and nothing is changed.
    #[doc(alias = "fstrelabel")]
    pub fn map_labels_by_table(&mut self, table: &[i32]) -> Result<(), Error> {
        labels_by_table(self.parts_mut().0, table)
    }

    /// Replaces each aux label `l` (one per arc, or each value of a ragged list) by
    /// `f(l)`; `-1` is left as it is. Without plain or ragged `aux_labels`, it is
    /// [`Error::MissingAttr`].
    pub fn map_aux_labels(&mut self, f: impl FnMut(i32) -> i32) -> Result<(), Error> {
        map_values(aux_values(self.parts_mut().1)?, f);
        Ok(())
    }

    /// Replaces each aux label `l` by `table[l]`; `-1` is left as it is. A value outside
    /// `0..table.len()` is [`Error::MapOutOfRange`] naming the arc it is on, and nothing is
    /// changed.
    pub fn map_aux_labels_by_table(&mut self, table: &[i32]) -> Result<(), Error> {
        aux_labels_by_table(self.parts_mut().1, table)
    }

    /// The disambiguation symbols become epsilons, as icefall does before
    /// `remove_epsilon` when it builds HLG: every label `>= first_token_disambig_id` (the
    /// id of `#0` in the token or phone table) and every aux label, plain or in a ragged
    /// list, `>= first_word_disambig_id` (`#0` in the word table) is set to 0. These are
    /// k2's two lines
    ///
    /// ```text
    /// LG.labels[LG.labels >= first_token_disambig_id] = 0
    /// LG.aux_labels.values[LG.aux_labels.values >= first_word_disambig_id] = 0
    /// ```
    ///
    /// An FSA without `aux_labels` (an acceptor) has only its labels changed. Like k2, it
    /// leaves the zeros in ragged aux labels (icefall removes them after `remove_epsilon`
    /// with `remove_values_eq(0)`). An id below 1 is [`Error::InvalidArgument`].
    ///
    /// ```
    /// use ragged_fsa::{Fsa, TextFormat};
    ///
    /// // tokens: 1..=3, #0 = 4, #1 = 5; words: 1..=2, #0 = 3
    /// let mut lg = Fsa::from_text(
    ///     "0 1 1 2 0\n1 2 4 3 0\n2 3 5 0 0\n3 4 -1 -1 0\n4\n",
    ///     &TextFormat::transducer(),
    /// )
    /// .unwrap();
    /// lg.remove_disambig_symbols(4, 3).unwrap();
    /// assert_eq!(lg.labels(), [1, 0, 0, -1]);
    /// assert_eq!(lg.aux_labels().unwrap().as_i32().unwrap(), [2, 0, 0, -1]);
    /// ```
    #[doc(alias = "fstrmsymbols")]
    #[doc(alias = "disambig_to_epsilon")]
    #[doc(alias = "remove_disambig")]
    pub fn remove_disambig_symbols(
        &mut self,
        first_token_disambig_id: i32,
        first_word_disambig_id: i32,
    ) -> Result<(), Error> {
        let (arcs, attrs) = self.parts_mut();
        remove_disambig(arcs, attrs, first_token_disambig_id, first_word_disambig_id)
    }
}

impl FsaVec {
    /// [`Fsa::map_labels`] on every FSA.
    #[doc(alias = "relabel")]
    pub fn map_labels(&mut self, f: impl FnMut(i32) -> i32) {
        map_arc_labels(self.parts_mut().0, f);
    }

    /// [`Fsa::map_labels_by_table`] on every FSA; the error names the arc by its idx012.
    #[doc(alias = "fstrelabel")]
    pub fn map_labels_by_table(&mut self, table: &[i32]) -> Result<(), Error> {
        labels_by_table(self.parts_mut().0, table)
    }

    /// [`Fsa::map_aux_labels`] on every FSA.
    pub fn map_aux_labels(&mut self, f: impl FnMut(i32) -> i32) -> Result<(), Error> {
        map_values(aux_values(self.parts_mut().1)?, f);
        Ok(())
    }

    /// [`Fsa::map_aux_labels_by_table`] on every FSA; the error names the arc by its idx012.
    pub fn map_aux_labels_by_table(&mut self, table: &[i32]) -> Result<(), Error> {
        aux_labels_by_table(self.parts_mut().1, table)
    }

    /// [`Fsa::remove_disambig_symbols`] on every FSA.
    #[doc(alias = "fstrmsymbols")]
    #[doc(alias = "disambig_to_epsilon")]
    pub fn remove_disambig_symbols(
        &mut self,
        first_token_disambig_id: i32,
        first_word_disambig_id: i32,
    ) -> Result<(), Error> {
        let (arcs, attrs) = self.parts_mut();
        remove_disambig(arcs, attrs, first_token_disambig_id, first_word_disambig_id)
    }
}

#[cfg(test)]
mod tests {
    use ragged_core::Ragged;

    use crate::{create_fsa_vec, Arc, Attr, Error, Fsa, TextFormat};

    /// A random FSA with labels in `-1..12` on final arcs only as `-1`, and aux labels
    /// (plain or ragged) in `-1..9`, from a seed.
    fn random_fsa(seed: u64, ragged: bool) -> Fsa {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let num_states = 2 + next(5) as i32;
        let mut arcs = Vec::new();
        for src in 0..num_states - 1 {
            for _ in 0..next(4) {
                let dest = (src + 1 + next(2) as i32).min(num_states - 1);
                let label = if dest == num_states - 1 {
                    -1
                } else {
                    next(12) as i32
                };
                arcs.push(Arc::new(src, dest, label, next(7) as f32 * 0.25));
            }
        }
        let n = arcs.len();
        let fsa = Fsa::from_arcs(arcs, num_states as usize).unwrap();
        let aux = if ragged {
            let lists: Vec<Vec<i32>> = (0..n)
                .map(|_| (0..next(3)).map(|_| next(10) as i32 - 1).collect())
                .collect();
            Attr::Ragged(Ragged::from_nested(lists).unwrap())
        } else {
            Attr::I32((0..n).map(|_| next(10) as i32 - 1).collect())
        };
        fsa.with_attr("aux_labels", aux).unwrap()
    }

    /// The aux labels per arc, as lists (a plain label as a list of one).
    fn aux_lists(fsa: &Fsa) -> Vec<Vec<i32>> {
        match fsa.aux_labels().unwrap() {
            Attr::I32(v) => v.iter().map(|&x| vec![x]).collect(),
            Attr::Ragged(r) => r.to_vec_vec(),
            Attr::F32(_) => unreachable!(),
        }
    }

    #[test]
    fn label_maps_equal_a_per_arc_loop() {
        let table: Vec<i32> = (0..12).map(|l| 100 + 3 * l).collect();
        for seed in 0..60 {
            for ragged in [false, true] {
                let fsa = random_fsa(seed, ragged);
                // the model: one arc at a time, -1 kept
                let mut want_labels = Vec::new();
                for arc in fsa.arcs().values() {
                    want_labels.push(if arc.label == -1 {
                        -1
                    } else {
                        arc.label * 7 - 2
                    });
                }
                let mut want_aux = Vec::new();
                for list in aux_lists(&fsa) {
                    let mut out = Vec::new();
                    for x in list {
                        out.push(if x == -1 { -1 } else { table[x as usize] });
                    }
                    want_aux.push(out);
                }
                let mut got = fsa.clone();
                got.map_labels(|l| l * 7 - 2);
                got.map_aux_labels_by_table(&table).unwrap();
                assert_eq!(got.labels(), want_labels, "seed {seed}");
                assert_eq!(aux_lists(&got), want_aux, "seed {seed}");
                // the closure and the table forms agree, and the scores and states stay
                let mut by_fn = fsa.clone();
                by_fn.map_aux_labels(|x| table[x as usize]).unwrap();
                by_fn
                    .map_labels_by_table(&(0..12).map(|l| l * 7 - 2).collect::<Vec<_>>())
                    .unwrap();
                assert_eq!(by_fn, got, "seed {seed}");
                assert_eq!(got.scores(), fsa.scores());
                assert_eq!(got.arcs().shape(), fsa.arcs().shape());
            }
        }
    }

    #[test]
    fn remove_disambig_symbols_equals_k2s_two_lines() {
        for seed in 0..60 {
            for ragged in [false, true] {
                let fsa = random_fsa(seed, ragged);
                let (first_token, first_word) = (8, 6);
                // the model: k2's masks, applied one arc at a time
                let want_labels: Vec<i32> = fsa
                    .labels()
                    .into_iter()
                    .map(|l| if l >= first_token { 0 } else { l })
                    .collect();
                let want_aux: Vec<Vec<i32>> = aux_lists(&fsa)
                    .into_iter()
                    .map(|list| {
                        list.into_iter()
                            .map(|x| if x >= first_word { 0 } else { x })
                            .collect()
                    })
                    .collect();
                let mut got = fsa.clone();
                got.remove_disambig_symbols(first_token, first_word)
                    .unwrap();
                assert_eq!(got.labels(), want_labels, "seed {seed}");
                assert_eq!(aux_lists(&got), want_aux, "seed {seed}");
                // an FsaVec of three of them: the same, FSA by FSA
                let mut vec = create_fsa_vec(&[fsa.clone(), random_fsa(seed + 1000, ragged), fsa]);
                let mut each: Vec<Fsa> = vec.to_fsas();
                for f in &mut each {
                    f.remove_disambig_symbols(first_token, first_word).unwrap();
                }
                vec.remove_disambig_symbols(first_token, first_word)
                    .unwrap();
                assert_eq!(vec.to_fsas(), each, "seed {seed}");
            }
        }
    }

    /// A hand-worked lexicon-and-grammar piece: phones a=1 b=2, #0=3 #1=4; words
    /// ab=1, #0=2. Worked by hand: arc 1's `#0:#0` and arc 2's `#1` become epsilons, the
    /// word list `[1 2]` becomes `[1 0]`.
    #[test]
    fn hand_worked_lexicon() {
        let text = "0 1 1 [1 2] 0.5\n1 2 3 [2] 0\n2 3 4 [] 0\n3 4 2 [] -1\n4 5 -1 [-1] 0\n5\n";
        let format = TextFormat {
            ragged_label_names: vec!["aux_labels".into()],
            ..TextFormat::default()
        };
        let mut lg = Fsa::from_text(text, &format).unwrap();
        lg.remove_disambig_symbols(3, 2).unwrap();
        assert_eq!(lg.labels(), [1, 0, 0, 2, -1]);
        assert_eq!(
            aux_lists(&lg),
            [vec![1, 0], vec![0], vec![], vec![], vec![-1]]
        );
        assert_eq!(
            lg.to_text(&format).unwrap(),
            "0 1 1 [1 0] 0.5\n1 2 0 [0] 0\n2 3 0 [] 0\n3 4 2 [] -1\n4 5 -1 [-1] 0\n5\n"
        );
    }

    #[test]
    fn bad_tables_and_missing_aux_labels_are_errors_that_change_nothing() {
        let mut fsa = Fsa::from_text(
            "0 1 2 5 0\n1 2 9 1 0\n2 3 -1 -1 0\n3\n",
            &TextFormat::transducer(),
        )
        .unwrap();
        let before = fsa.clone();
        let err = fsa.map_labels_by_table(&[0, 1, 2, 3]).unwrap_err();
        assert_eq!(err.to_string(), "labels[1] = 9 is outside 0..4");
        let err = fsa.map_aux_labels_by_table(&[0, 1, 2]).unwrap_err();
        assert_eq!(err.to_string(), "aux_labels[0] = 5 is outside 0..3");
        assert_eq!(fsa, before);
        // a ragged list names its arc
        let ragged = Ragged::from_nested(vec![vec![0], vec![1, 1, 7], vec![-1]]).unwrap();
        let mut lexicon = fsa
            .clone()
            .with_attr("aux_labels", Attr::Ragged(ragged))
            .unwrap();
        let err = lexicon.map_aux_labels_by_table(&[0, 1, 2]).unwrap_err();
        assert_eq!(err.to_string(), "aux_labels[1] = 7 is outside 0..3");
        // an acceptor has no aux labels to map; remove_disambig_symbols maps its labels
        let mut acceptor: Fsa = "0 1 5 0\n1 2 -1 0\n2".parse().unwrap();
        assert!(matches!(
            acceptor.map_aux_labels(|x| x),
            Err(Error::MissingAttr { .. })
        ));
        acceptor.remove_disambig_symbols(5, 1).unwrap();
        assert_eq!(acceptor.labels(), [0, -1]);
        assert_eq!(
            acceptor
                .remove_disambig_symbols(0, 1)
                .unwrap_err()
                .to_string(),
            Error::InvalidArgument {
                what: "first_token_disambig_id",
                value: 0.0,
                allowed: "at least 1 (the id of `#0`; 0 is epsilon)"
            }
            .to_string()
        );
        // aux_labels of the wrong kind
        let mut wrong = fsa.clone();
        wrong
            .set_attr("aux_labels", Attr::F32(vec![0.0; 3]))
            .unwrap();
        assert!(wrong.map_aux_labels_by_table(&[0]).is_err());
        assert!(wrong.remove_disambig_symbols(1, 1).is_err());
    }
}
