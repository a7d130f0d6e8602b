//! `Fsa` (2 axes: `[state][arc]`) and `FsaVec` (3 axes: `[fsa][state][arc]`) over ragged-core,
//! with their attributes, construction, text input/output and properties.

use std::fmt;
use std::str::FromStr;

use ragged_core::{Ragged, RaggedShape, RowPartition};
use rayon::prelude::*;

use crate::arc::Arc;
use crate::attr::{gather_all, ragged_from_parts, ragged_parts, Attr, Attrs, AUX_LABELS};
use crate::error::{index_out_of_range, Error};
use crate::properties::{self, Properties};
use crate::text::{self, Columns, ParsedText, TextFormat};
use crate::view::{Built, FsaView};

/// Below this many arcs an `FsaVec` is processed on the calling thread; above it, across
/// FSAs with rayon. Both paths give identical results.
pub const PARALLEL_MIN_ARCS: usize = 4096;

/// The graphs of a dense operation, borrowed: one FSA, seen as a vector of one, or an
/// [`FsaVec`]. k2 takes a single FSA where it takes an `FsaVec` (shared by every segment)
/// and wraps it without copying its arcs; so do [`intersect_dense`](crate::intersect_dense),
/// [`intersect_dense_pruned`](crate::intersect_dense_pruned), [`ctc_loss`](crate::ctc_loss)
/// and [`mmi_loss`](crate::mmi_loss), which take `&Fsa` or `&FsaVec` through this type.
#[derive(Debug, Clone, Copy)]
pub enum FsaVecRef<'a> {
    /// A single FSA: FSA 0 of a vector of one.
    One(&'a Fsa),
    /// A vector of FSAs.
    Vec(&'a FsaVec),
}

impl<'a> From<&'a Fsa> for FsaVecRef<'a> {
    fn from(fsa: &'a Fsa) -> Self {
        FsaVecRef::One(fsa)
    }
}

impl<'a> From<&'a FsaVec> for FsaVecRef<'a> {
    fn from(fsas: &'a FsaVec) -> Self {
        FsaVecRef::Vec(fsas)
    }
}

impl<'a> FsaVecRef<'a> {
    /// The number of FSAs (1 for a single FSA).
    pub fn num_fsas(&self) -> usize {
        match self {
            FsaVecRef::One(_) => 1,
            FsaVecRef::Vec(v) => v.num_fsas(),
        }
    }

    /// The total number of arcs.
    pub fn num_arcs(&self) -> usize {
        match self {
            FsaVecRef::One(f) => f.num_arcs(),
            FsaVecRef::Vec(v) => v.num_arcs(),
        }
    }

    /// The per-arc attributes, over all arcs.
    pub fn attrs(&self) -> &'a Attrs {
        match self {
            FsaVecRef::One(f) => f.attrs(),
            FsaVecRef::Vec(v) => v.attrs(),
        }
    }

    /// FSA `i` as an `Fsa` with its attributes (a copy).
    ///
    /// # Panics
    /// If `i >= num_fsas()`.
    pub fn get(&self, i: usize) -> Fsa {
        match self {
            FsaVecRef::One(f) if i == 0 => (*f).clone(),
            FsaVecRef::One(_) => index_out_of_range("fsa", i, 1),
            FsaVecRef::Vec(v) => v.get(i),
        }
    }

    /// The range of arc indices of FSA `i` among all arcs.
    pub(crate) fn arc_range(&self, i: usize) -> std::ops::Range<usize> {
        match self {
            FsaVecRef::One(f) if i == 0 => 0..f.num_arcs(),
            FsaVecRef::One(_) => index_out_of_range("fsa", i, 1),
            FsaVecRef::Vec(v) => v.arc_range(i),
        }
    }

    /// FSA `i`'s states and arcs.
    pub(crate) fn view(&self, i: usize) -> FsaView<'a> {
        match self {
            FsaVecRef::One(f) if i == 0 => f.view(),
            FsaVecRef::One(_) => index_out_of_range("fsa", i, 1),
            FsaVecRef::Vec(v) => v.view(i),
        }
    }
}

/// One FSA: arcs as a 2-axis ragged array `[state][arc]` plus per-arc attributes.
///
/// **Invariants:** the arcs have 2 axes; every arc's `src_state` is the state it is stored
/// under; every `dest_state` is in `0..num_states`; the final state (the last) has no
/// leaving arcs (k2's validity rule, checked by every constructor and parser); every
/// attribute covers every arc. k2's other conventions (start state 0, only arcs into the
/// final state labelled `-1`) are reported by [`Fsa::properties`] rather than enforced, as
/// in k2.
#[derive(Debug, Clone, PartialEq)]
pub struct Fsa {
    arcs: Ragged<Arc>,
    attrs: Attrs,
}

/// A vector of FSAs: arcs as a 3-axis ragged array `[fsa][state][arc]` (states numbered within
/// each FSA) plus per-arc attributes over all arcs.
///
/// **Invariants:** as for [`Fsa`], per FSA.
#[derive(Debug, Clone, PartialEq)]
pub struct FsaVec {
    arcs: Ragged<Arc>,
    attrs: Attrs,
}

fn check_arcs(splits: &[i32], arcs: &[Arc], arc_offset: usize) -> Result<(), Error> {
    let num_states = splits.len() - 1;
    let base = splits[0] as usize;
    for state in 0..num_states {
        for idx in splits[state] as usize..splits[state + 1] as usize {
            let arc = arcs[idx - base];
            if arc.src_state != state as i32 {
                return Err(Error::ArcSrcMismatch {
                    arc: idx - base + arc_offset,
                    src_state: arc.src_state,
                    row: state,
                });
            }
            if arc.dest_state < 0 || arc.dest_state as usize >= num_states {
                return Err(Error::DestOutOfRange {
                    arc: idx - base + arc_offset,
                    dest_state: arc.dest_state,
                    num_states,
                });
            }
        }
    }
    // k2's validity rule: the final state (the last) has no leaving arcs.
    if let Some(final_state) = num_states.checked_sub(1) {
        if splits[final_state] < splits[num_states] {
            return Err(Error::ArcLeavesFinal {
                arc: splits[final_state] as usize - base + arc_offset,
                final_state,
            });
        }
    }
    Ok(())
}

/// The most states an FSA of `num_arcs` arcs may declare: every state its arcs could name
/// (two per arc) plus the start and the final state, or a million (4 MiB of row splits)
/// when that is larger; never more than `i32` offsets can number.
fn state_limit(num_arcs: usize) -> usize {
    num_arcs
        .saturating_mul(2)
        .saturating_add(2)
        .max(1 << 20)
        .min(i32::MAX as usize)
}

fn check_attr(name: &str, attr: &Attr, num_arcs: usize) -> Result<(), Error> {
    if attr.len() != num_arcs {
        return Err(Error::AttrLength {
            name: name.to_string(),
            expected: num_arcs,
            got: attr.len(),
        });
    }
    Ok(())
}

fn shape2(splits: Vec<i32>) -> RaggedShape {
    let layer = RowPartition::from_row_splits(splits).expect("row splits built by this crate");
    RaggedShape::from_layers(vec![layer]).expect("one layer")
}

fn shape3(splits1: Vec<i32>, splits2: Vec<i32>) -> RaggedShape {
    let l1 = RowPartition::from_row_splits(splits1).expect("row splits built by this crate");
    let l2 = RowPartition::from_row_splits(splits2).expect("row splits built by this crate");
    RaggedShape::from_layers(vec![l1, l2]).expect("layers built to match")
}

impl Fsa {
    /// The FSA with no states (k2's empty FSA).
    pub fn empty() -> Self {
        Self::from_built_unchecked(Built::empty(), Attrs::new())
    }

    /// An FSA from its arcs, grouped by non-decreasing `src_state`, and its number of states.
    ///
    /// Checks k2's structure: every `src_state` and `dest_state` in `0..num_states`, arcs
    /// grouped by source state, and no arc leaving the final state (the last). `num_states`
    /// may not exceed what `i32` offsets allow, nor (beyond a million) twice the number of
    /// arcs plus two: more states than the arcs could name would only allocate memory.
    pub fn from_arcs(arcs: Vec<Arc>, num_states: usize) -> Result<Self, Error> {
        let limit = state_limit(arcs.len());
        if num_states > limit {
            return Err(Error::TooManyStates { num_states, limit });
        }
        if i32::try_from(arcs.len()).is_err() {
            return Err(Error::Ragged(ragged_core::Error::Overflow {
                what: "the number of arcs",
                value: arcs.len() as u64,
            }));
        }
        // Every source state is checked before it indexes anything.
        let mut previous = 0;
        for (i, arc) in arcs.iter().enumerate() {
            if arc.src_state < 0 || arc.src_state as usize >= num_states {
                return Err(Error::SrcOutOfRange {
                    arc: i,
                    src_state: arc.src_state,
                    num_states,
                });
            }
            if arc.src_state < previous {
                return Err(Error::ArcSrcMismatch {
                    arc: i,
                    src_state: arc.src_state,
                    row: previous as usize,
                });
            }
            previous = arc.src_state;
        }
        let mut splits = vec![0i32; num_states + 1];
        for arc in &arcs {
            splits[arc.src_state as usize + 1] += 1;
        }
        for i in 0..num_states {
            splits[i + 1] += splits[i];
        }
        check_arcs(&splits, &arcs, 0)?;
        Ok(Self {
            arcs: Ragged::try_new(shape2(splits), arcs)?,
            attrs: Attrs::new(),
        })
    }

    /// An FSA from a 2-axis ragged array of arcs `[state][arc]`.
    pub fn from_ragged(arcs: Ragged<Arc>) -> Result<Self, Error> {
        if arcs.num_axes() != 2 {
            return Err(Error::WrongAxes {
                expected: 2,
                got: arcs.num_axes(),
            });
        }
        check_arcs(arcs.shape().row_splits(1), arcs.values(), 0)?;
        Ok(Self {
            arcs,
            attrs: Attrs::new(),
        })
    }

    pub(crate) fn from_parts_unchecked(arcs: Ragged<Arc>, attrs: Attrs) -> Self {
        Self { arcs, attrs }
    }

    pub(crate) fn from_built_unchecked(built: Built, attrs: Attrs) -> Self {
        let arcs = Ragged::new(shape2(built.splits), built.arcs);
        Self { arcs, attrs }
    }

    /// Adds or replaces a per-arc attribute (k2's `fsa.name = value`).
    pub fn with_attr(mut self, name: &str, attr: Attr) -> Result<Self, Error> {
        self.set_attr(name, attr)?;
        Ok(self)
    }

    /// Adds or replaces a per-arc attribute; its length must be the number of arcs.
    pub fn set_attr(&mut self, name: &str, attr: Attr) -> Result<(), Error> {
        check_attr(name, &attr, self.num_arcs())?;
        self.attrs.insert(name.to_string(), attr);
        Ok(())
    }

    /// Removes an attribute, returning it.
    pub fn remove_attr(&mut self, name: &str) -> Option<Attr> {
        self.attrs.remove(name)
    }

    /// An attribute by name.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.get(name)
    }

    /// All attributes, by name.
    pub fn attrs(&self) -> &Attrs {
        &self.attrs
    }

    /// The `aux_labels` attribute (plain or ragged), if any.
    pub fn aux_labels(&self) -> Option<&Attr> {
        self.attrs.get(AUX_LABELS)
    }

    /// The arcs and the attributes, mutably: for changes that keep every invariant
    /// (labels and attribute values, never states or lengths).
    pub(crate) fn parts_mut(&mut self) -> (&mut [Arc], &mut Attrs) {
        (self.arcs.values_mut(), &mut self.attrs)
    }

    /// The arcs as a 2-axis ragged array `[state][arc]`.
    pub fn arcs(&self) -> &Ragged<Arc> {
        &self.arcs
    }

    /// The number of states (0 for the empty FSA).
    pub fn num_states(&self) -> usize {
        self.arcs.dim0()
    }

    /// The number of arcs.
    pub fn num_arcs(&self) -> usize {
        self.arcs.values().len()
    }

    /// The final state (the last), or `None` for the empty FSA.
    pub fn final_state(&self) -> Option<usize> {
        self.num_states().checked_sub(1)
    }

    /// The arcs leaving `state`.
    ///
    /// # Panics
    /// If `state >= num_states()`.
    pub fn state_arcs(&self, state: usize) -> &[Arc] {
        if state >= self.num_states() {
            index_out_of_range("state", state, self.num_states());
        }
        self.view().state_arcs(state)
    }

    /// The labels of all arcs.
    pub fn labels(&self) -> Vec<i32> {
        self.arcs.values().iter().map(|a| a.label).collect()
    }

    /// The scores of all arcs.
    pub fn scores(&self) -> Vec<f32> {
        self.arcs.values().iter().map(|a| a.score).collect()
    }

    pub(crate) fn view(&self) -> FsaView<'_> {
        FsaView::new(self.arcs.shape().row_splits(1), self.arcs.values())
    }

    /// k2's properties of this FSA.
    #[doc(alias = "properties_str")]
    pub fn properties(&self) -> Properties {
        properties::of_view(self.view())
    }

    /// Reads text in the given format (see [`TextFormat`]).
    #[doc(alias = "from_str")]
    pub fn from_text(s: &str, format: &TextFormat) -> Result<Self, Error> {
        let parsed = if format.openfst {
            text::parse_openfst(s, format)?
        } else {
            text::parse_k2(s, format)?
        };
        Self::from_parsed(parsed, format)
    }

    /// Reads OpenFst text: an acceptor, or a transducer whose output labels become `aux_labels`.
    #[doc(alias = "fstcompile")]
    pub fn from_openfst(s: &str, acceptor: bool) -> Result<Self, Error> {
        let format = if acceptor {
            TextFormat::acceptor()
        } else {
            TextFormat::transducer()
        };
        Self::from_text(s, &format.openfst())
    }

    fn from_parsed(parsed: ParsedText, format: &TextFormat) -> Result<Self, Error> {
        let ParsedText {
            num_states,
            arcs,
            aux,
            ragged,
        } = parsed;
        let mut fsa = Self::from_arcs(arcs, num_states)?;
        for (name, column) in format.aux_label_names.iter().zip(aux) {
            fsa.set_attr(name, Attr::I32(column))?;
        }
        for (name, (splits, values)) in format.ragged_label_names.iter().zip(ragged) {
            fsa.set_attr(name, Attr::Ragged(ragged_from_parts(splits, values)))?;
        }
        Ok(fsa)
    }

    fn columns<'a>(&'a self, format: &TextFormat) -> Result<Columns<'a>, Error> {
        let mut aux = Vec::new();
        for name in &format.aux_label_names {
            match self.attrs.get(name) {
                Some(Attr::I32(v)) => aux.push(v.as_slice()),
                _ => {
                    return Err(Error::MissingAttr {
                        name: name.clone(),
                        needed: "a plain i32 attribute",
                    })
                }
            }
        }
        let mut ragged = Vec::new();
        for name in &format.ragged_label_names {
            match self.attrs.get(name) {
                Some(Attr::Ragged(r)) => ragged.push(ragged_parts(r)),
                _ => {
                    return Err(Error::MissingAttr {
                        name: name.clone(),
                        needed: "a ragged i32 attribute",
                    })
                }
            }
        }
        Ok(Columns { aux, ragged })
    }

    /// Writes text in the given format; reading it back with the same format gives this FSA.
    #[doc(alias = "to_str")]
    #[doc(alias = "to_str_simple")]
    pub fn to_text(&self, format: &TextFormat) -> Result<String, Error> {
        let columns = self.columns(format)?;
        if format.openfst {
            text::write_openfst(self.view(), &columns)
        } else {
            Ok(text::write_k2(self.view(), &columns))
        }
    }

    /// Writes OpenFst text (costs = negated scores; the `-1` arcs become final lines), as an
    /// acceptor or, when it has plain `aux_labels`, as a transducer.
    #[doc(alias = "fstprint")]
    pub fn to_openfst(&self) -> Result<String, Error> {
        self.to_text(&self.default_format().openfst())
    }

    /// k2 text with a plain `aux_labels` column when there is one.
    fn default_format(&self) -> TextFormat {
        match self.aux_labels() {
            Some(Attr::I32(_)) => TextFormat::transducer(),
            _ => TextFormat::acceptor(),
        }
    }
}

impl FromStr for Fsa {
    type Err = Error;

    /// Reads k2's acceptor text: lines `src dest label score`, the last line the final state.
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::from_text(s, &TextFormat::acceptor())
    }
}

impl fmt::Display for Fsa {
    /// k2 text, with the `aux_labels` column when the FSA has plain aux labels.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_text(&self.default_format()) {
            Ok(s) => f.write_str(&s),
            Err(_) => Err(fmt::Error),
        }
    }
}

/// Stacks FSAs into an `FsaVec` (k2's `create_fsa_vec`, `Stack` on axis 0). Attributes that
/// every FSA has, with one kind, are stacked too; the others are left out (use
/// [`FsaVec::from_fsas`] to have that reported as an error).
pub fn create_fsa_vec(fsas: &[Fsa]) -> FsaVec {
    let common: Vec<String> = match fsas.first() {
        None => Vec::new(),
        Some(first) => first
            .attrs
            .keys()
            .filter(|name| {
                fsas.iter().all(|f| {
                    f.attrs.get(*name).is_some_and(|a| {
                        std::mem::discriminant(a) == std::mem::discriminant(&first.attrs[*name])
                    })
                })
            })
            .cloned()
            .collect(),
    };
    stack(fsas, &common)
}

fn stack(fsas: &[Fsa], names: &[String]) -> FsaVec {
    let mut splits1 = Vec::with_capacity(fsas.len() + 1);
    splits1.push(0i32);
    let total_states: usize = fsas.iter().map(|f| f.num_states()).sum();
    let total_arcs: usize = fsas.iter().map(|f| f.num_arcs()).sum();
    let mut splits2 = Vec::with_capacity(total_states + 1);
    splits2.push(0i32);
    let mut values = Vec::with_capacity(total_arcs);
    for fsa in fsas {
        let base = values.len() as i32;
        splits2.extend(fsa.arcs.shape().row_splits(1)[1..].iter().map(|s| s + base));
        values.extend_from_slice(fsa.arcs.values());
        splits1.push(splits2.len() as i32 - 1);
    }
    let mut attrs = Attrs::new();
    for name in names {
        let parts: Vec<&Attr> = fsas.iter().map(|f| &f.attrs[name]).collect();
        if let Some(attr) = Attr::concat(&parts) {
            attrs.insert(name.clone(), attr);
        }
    }
    FsaVec {
        arcs: Ragged::new(shape3(splits1, splits2), values),
        attrs,
    }
}

impl FsaVec {
    /// Stacks FSAs; every FSA must have the same attributes, of the same kinds.
    pub fn from_fsas(fsas: &[Fsa]) -> Result<Self, Error> {
        if let Some(first) = fsas.first() {
            for (i, fsa) in fsas.iter().enumerate().skip(1) {
                for name in first.attrs.keys().chain(fsa.attrs.keys()) {
                    let matches = match (first.attrs.get(name), fsa.attrs.get(name)) {
                        (Some(a), Some(b)) => {
                            std::mem::discriminant(a) == std::mem::discriminant(b)
                        }
                        _ => false,
                    };
                    if !matches {
                        return Err(Error::AttrMismatch {
                            name: name.clone(),
                            fsa: i,
                        });
                    }
                }
            }
        }
        Ok(create_fsa_vec(fsas))
    }

    /// An FsaVec from a 3-axis ragged array of arcs `[fsa][state][arc]`.
    pub fn from_ragged(arcs: Ragged<Arc>) -> Result<Self, Error> {
        if arcs.num_axes() != 3 {
            return Err(Error::WrongAxes {
                expected: 3,
                got: arcs.num_axes(),
            });
        }
        let splits1 = arcs.shape().row_splits(1);
        let splits2 = arcs.shape().row_splits(2);
        for i in 0..arcs.dim0() {
            let (s0, s1) = (splits1[i] as usize, splits1[i + 1] as usize);
            let (a0, a1) = (splits2[s0] as usize, splits2[s1] as usize);
            check_arcs(&splits2[s0..=s1], &arcs.values()[a0..a1], a0)?;
        }
        Ok(Self {
            arcs,
            attrs: Attrs::new(),
        })
    }

    /// Assembles per-FSA outputs; `arc_offsets[i]` is the first input arc of FSA `i`, used to
    /// turn the local arc maps into global ones. Large outputs are copied into place in
    /// parallel.
    pub(crate) fn from_built(
        parts: Vec<Built>,
        arc_offsets: &[usize],
        attrs: &Attrs,
    ) -> (FsaVec, Vec<i32>) {
        // where each FSA's states and arcs go
        let mut state_starts = Vec::with_capacity(parts.len() + 1);
        let mut arc_starts = Vec::with_capacity(parts.len() + 1);
        let (mut states, mut arcs) = (0usize, 0usize);
        for part in &parts {
            state_starts.push(states);
            arc_starts.push(arcs);
            states += part.splits.len() - 1;
            arcs += part.arcs.len();
        }
        state_starts.push(states);
        arc_starts.push(arcs);
        let splits1: Vec<i32> = state_starts.iter().map(|&s| s as i32).collect();
        let mut splits2 = vec![0i32; states + 1];
        let mut values = vec![Arc::default(); arcs];
        let mut arc_map = vec![0i32; arcs];
        // disjoint destination slices, one per FSA
        let mut jobs = Vec::with_capacity(parts.len());
        {
            let (mut rest_splits, mut rest_values, mut rest_map) = (
                &mut splits2[1..],
                values.as_mut_slice(),
                arc_map.as_mut_slice(),
            );
            for (i, part) in parts.iter().enumerate() {
                let (splits, tail) = rest_splits.split_at_mut(part.splits.len() - 1);
                rest_splits = tail;
                let (vals, tail) = rest_values.split_at_mut(part.arcs.len());
                rest_values = tail;
                let (map, tail) = rest_map.split_at_mut(part.arcs.len());
                rest_map = tail;
                jobs.push((i, part, splits, vals, map));
            }
        }
        let fill =
            |(i, part, splits, vals, map): (usize, &Built, &mut [i32], &mut [Arc], &mut [i32])| {
                let base = arc_starts[i] as i32;
                for (dst, src) in splits.iter_mut().zip(&part.splits[1..]) {
                    *dst = src + base;
                }
                vals.copy_from_slice(&part.arcs);
                let offset = arc_offsets.get(i).copied().unwrap_or(0) as i32;
                for (dst, &m) in map.iter_mut().zip(&part.arc_map) {
                    *dst = if m < 0 { -1 } else { m + offset };
                }
            };
        if parts.len() > 1 && arcs >= PARALLEL_MIN_ARCS {
            jobs.into_par_iter().for_each(fill);
        } else {
            jobs.into_iter().for_each(fill);
        }
        let attrs = gather_all(attrs, &arc_map);
        let arcs = Ragged::new(shape3(splits1, splits2), values);
        (FsaVec { arcs, attrs }, arc_map)
    }

    pub(crate) fn from_parts_unchecked(arcs: Ragged<Arc>, attrs: Attrs) -> Self {
        Self { arcs, attrs }
    }

    /// The arcs as a 3-axis ragged array `[fsa][state][arc]`.
    pub fn arcs(&self) -> &Ragged<Arc> {
        &self.arcs
    }

    /// The number of FSAs.
    pub fn num_fsas(&self) -> usize {
        self.arcs.dim0()
    }

    /// The total number of arcs.
    pub fn num_arcs(&self) -> usize {
        self.arcs.values().len()
    }

    /// The total number of states.
    pub fn num_states(&self) -> usize {
        self.arcs.tot_size(1)
    }

    /// An attribute by name (over all arcs).
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.get(name)
    }

    /// All attributes, by name.
    pub fn attrs(&self) -> &Attrs {
        &self.attrs
    }

    /// The `aux_labels` attribute, if any.
    pub fn aux_labels(&self) -> Option<&Attr> {
        self.attrs.get(AUX_LABELS)
    }

    /// The arcs and the attributes, mutably: for changes that keep every invariant
    /// (labels and attribute values, never states or lengths).
    pub(crate) fn parts_mut(&mut self) -> (&mut [Arc], &mut Attrs) {
        (self.arcs.values_mut(), &mut self.attrs)
    }

    /// Adds or replaces a per-arc attribute over all arcs.
    pub fn set_attr(&mut self, name: &str, attr: Attr) -> Result<(), Error> {
        check_attr(name, &attr, self.num_arcs())?;
        self.attrs.insert(name.to_string(), attr);
        Ok(())
    }

    /// The range of arc indices (idx012) of FSA `i`.
    pub(crate) fn arc_range(&self, i: usize) -> std::ops::Range<usize> {
        let splits1 = self.arcs.shape().row_splits(1);
        let splits2 = self.arcs.shape().row_splits(2);
        splits2[splits1[i] as usize] as usize..splits2[splits1[i + 1] as usize] as usize
    }

    pub(crate) fn view(&self, i: usize) -> FsaView<'_> {
        let splits1 = self.arcs.shape().row_splits(1);
        let splits2 = self.arcs.shape().row_splits(2);
        let (s0, s1) = (splits1[i] as usize, splits1[i + 1] as usize);
        let range = self.arc_range(i);
        FsaView::new(&splits2[s0..=s1], &self.arcs.values()[range])
    }

    /// The first arc index of every FSA.
    pub(crate) fn arc_offsets(&self) -> Vec<usize> {
        (0..self.num_fsas())
            .map(|i| self.arc_range(i).start)
            .collect()
    }

    /// FSA `i` as an `Fsa` with its attributes (a copy of its arcs).
    ///
    /// # Panics
    /// If `i >= num_fsas()`.
    pub fn get(&self, i: usize) -> Fsa {
        if i >= self.num_fsas() {
            index_out_of_range("fsa", i, self.num_fsas());
        }
        let view = self.view(i);
        let range = self.arc_range(i);
        let built = Built {
            splits: view.splits.iter().map(|s| s - view.splits[0]).collect(),
            arcs: view.arcs.to_vec(),
            arc_map: Vec::new(),
        };
        let attrs = self
            .attrs
            .iter()
            .map(|(name, a)| (name.clone(), a.slice(range.start, range.end)))
            .collect();
        Fsa::from_built_unchecked(built, attrs)
    }

    /// The arcs of FSA `i` as a zero-copy view `[state][arc]` into this FsaVec.
    ///
    /// # Panics
    /// If `i >= num_fsas()`.
    pub fn arcs_of(&self, i: usize) -> ragged_core::RaggedView<'_, Arc> {
        if i >= self.num_fsas() {
            index_out_of_range("fsa", i, self.num_fsas());
        }
        self.arcs.index(0, i)
    }

    /// FSA `i`, or `None` when out of range.
    pub fn try_get(&self, i: usize) -> Option<Fsa> {
        (i < self.num_fsas()).then(|| self.get(i))
    }

    /// All FSAs, split apart.
    pub fn to_fsas(&self) -> Vec<Fsa> {
        (0..self.num_fsas()).map(|i| self.get(i)).collect()
    }

    /// k2's properties of the FsaVec: those that hold for every FSA.
    pub fn properties(&self) -> Properties {
        self.map_views(|_, view| properties::of_view(view))
            .into_iter()
            .fold(Properties::ALL, |acc, p| acc & p)
    }

    /// Runs `f` on every FSA: in parallel across FSAs above [`PARALLEL_MIN_ARCS`] arcs.
    pub(crate) fn map_views<R: Send>(&self, f: impl Fn(usize, FsaView<'_>) -> R + Sync) -> Vec<R> {
        let parallel = self.num_fsas() > 1 && self.num_arcs() >= PARALLEL_MIN_ARCS;
        self.map_views_with(parallel, f)
    }

    pub(crate) fn map_views_with<R: Send>(
        &self,
        parallel: bool,
        f: impl Fn(usize, FsaView<'_>) -> R + Sync,
    ) -> Vec<R> {
        if parallel {
            (0..self.num_fsas())
                .into_par_iter()
                .map(|i| f(i, self.view(i)))
                .collect()
        } else {
            (0..self.num_fsas()).map(|i| f(i, self.view(i))).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(labels: &[i32]) -> Fsa {
        let mut arcs: Vec<Arc> = labels
            .iter()
            .enumerate()
            .map(|(i, &l)| Arc::new(i as i32, i as i32 + 1, l, 0.5))
            .collect();
        let n = labels.len() as i32;
        arcs.push(Arc::new(n, n + 1, -1, 0.0));
        Fsa::from_arcs(arcs, labels.len() + 2).unwrap()
    }

    #[test]
    fn constructors_check_the_structure() {
        assert_eq!(
            Fsa::from_arcs(vec![Arc::new(1, 2, 1, 0.), Arc::new(0, 2, -1, 0.)], 3),
            Err(Error::ArcSrcMismatch {
                arc: 1,
                src_state: 0,
                row: 1
            })
        );
        assert_eq!(
            Fsa::from_arcs(vec![Arc::new(0, 3, 1, 0.)], 3),
            Err(Error::DestOutOfRange {
                arc: 0,
                dest_state: 3,
                num_states: 3
            })
        );
        let three_axes = ragged_core::Ragged::from_nested3(vec![vec![vec![Arc::default()]]]);
        assert_eq!(
            Fsa::from_ragged(three_axes.unwrap()),
            Err(Error::WrongAxes {
                expected: 2,
                got: 3
            })
        );
        let mut fsa = linear(&[1, 2]);
        assert_eq!(
            fsa.set_attr("x", Attr::F32(vec![1.0])),
            Err(Error::AttrLength {
                name: "x".into(),
                expected: 3,
                got: 1
            })
        );
        assert_eq!(
            fsa.set_attr("x", Attr::F32(vec![1.0]))
                .unwrap_err()
                .to_string(),
            "attribute \"x\" has 1 values for 3 arcs"
        );
    }

    #[test]
    fn the_final_state_has_no_leaving_arcs() {
        // the fuzzed input that made top_sort panic: state 2 is final and has an arc
        assert_eq!(
            Fsa::from_arcs(vec![Arc::new(0, 2, -1, 0.), Arc::new(2, 1, 1, 0.)], 3),
            Err(Error::ArcLeavesFinal {
                arc: 1,
                final_state: 2
            })
        );
        assert_eq!(
            Fsa::from_arcs(vec![Arc::new(0, 0, 1, 0.)], 1)
                .unwrap_err()
                .to_string(),
            "arc 0 leaves the final state 0, which must have no leaving arcs"
        );
        let ragged = ragged_core::Ragged::from_nested(vec![
            vec![Arc::new(0, 1, -1, 0.)],
            vec![Arc::new(1, 0, 2, 0.)],
        ])
        .unwrap();
        assert_eq!(
            Fsa::from_ragged(ragged),
            Err(Error::ArcLeavesFinal {
                arc: 1,
                final_state: 1
            })
        );
        let vec = ragged_core::Ragged::from_nested3(vec![
            vec![vec![Arc::new(0, 1, -1, 0.)], vec![]],
            vec![vec![Arc::new(0, 1, -1, 0.)], vec![Arc::new(1, 1, 0, 0.)]],
        ])
        .unwrap();
        assert_eq!(
            FsaVec::from_ragged(vec),
            Err(Error::ArcLeavesFinal {
                arc: 2,
                final_state: 1
            })
        );
        // the text parsers refuse it too, naming the line
        assert_eq!(
            "0 2 -1 0\n2 1 1 0\n2\n".parse::<Fsa>(),
            Err(Error::Parse {
                line: 2,
                problem: crate::error::ParseProblem::SrcNotBeforeFinal {
                    src: 2,
                    final_state: 2
                }
            })
        );
    }

    #[test]
    fn state_counts_are_checked_before_allocating() {
        // no states, one arc: once an index panic
        assert_eq!(
            Fsa::from_arcs(vec![Arc::new(0, 0, 1, 0.)], 0),
            Err(Error::SrcOutOfRange {
                arc: 0,
                src_state: 0,
                num_states: 0
            })
        );
        assert_eq!(
            Fsa::from_arcs(vec![Arc::new(-1, 0, 1, 0.)], 2),
            Err(Error::SrcOutOfRange {
                arc: 0,
                src_state: -1,
                num_states: 2
            })
        );
        // usize::MAX states: once an overflow panic; 2^40: once a 4 TiB allocation
        for num_states in [usize::MAX, 1 << 40, i32::MAX as usize + 1] {
            assert_eq!(
                Fsa::from_arcs(vec![Arc::new(0, 1, -1, 0.)], num_states),
                Err(Error::TooManyStates {
                    num_states,
                    limit: 1 << 20
                })
            );
        }
        assert_eq!(
            Fsa::from_arcs(Vec::new(), (1 << 20) + 1)
                .unwrap_err()
                .to_string(),
            "1048577 states asked for, more than the 1048576 allowed for these arcs"
        );
        // a million states are allowed even with few arcs, and the empty FSA stays valid
        let wide = Fsa::from_arcs(vec![Arc::new(0, (1 << 20) - 1, -1, 0.)], 1 << 20).unwrap();
        assert_eq!(wide.num_states(), 1 << 20);
        assert_eq!(Fsa::from_arcs(Vec::new(), 0).unwrap(), Fsa::empty());
        assert_eq!(state_limit(1 << 30), (1 << 31) - 1);
        assert_eq!(state_limit(usize::MAX), i32::MAX as usize);
        assert_eq!(state_limit(1 << 20), (1 << 21) + 2);
    }

    #[test]
    fn fsa_vec_from_ragged_checks_every_fsa() {
        let good = ragged_core::Ragged::from_nested3(vec![
            vec![vec![Arc::new(0, 1, -1, 0.)], vec![]],
            vec![vec![Arc::new(0, 1, -1, 0.)], vec![]],
        ])
        .unwrap();
        assert_eq!(FsaVec::from_ragged(good).unwrap().num_fsas(), 2);
        let bad = ragged_core::Ragged::from_nested3(vec![
            vec![vec![Arc::new(0, 1, -1, 0.)], vec![]],
            vec![vec![Arc::new(0, 2, -1, 0.)], vec![]],
        ])
        .unwrap();
        assert_eq!(
            FsaVec::from_ragged(bad),
            Err(Error::DestOutOfRange {
                arc: 1,
                dest_state: 2,
                num_states: 2
            })
        );
    }

    #[test]
    fn stacking_keeps_common_attributes_and_from_fsas_insists() {
        let a = linear(&[1])
            .with_attr("w", Attr::F32(vec![1.0, 2.0]))
            .unwrap()
            .with_attr("only_a", Attr::I32(vec![0, 0]))
            .unwrap();
        let b = linear(&[2, 3])
            .with_attr("w", Attr::F32(vec![3.0, 4.0, 5.0]))
            .unwrap();
        let v = create_fsa_vec(&[a.clone(), b.clone()]);
        assert_eq!(v.attr("w"), Some(&Attr::F32(vec![1.0, 2.0, 3.0, 4.0, 5.0])));
        assert!(v.attr("only_a").is_none());
        assert_eq!(v.get(1), b);
        assert_eq!(
            FsaVec::from_fsas(&[a, b]),
            Err(Error::AttrMismatch {
                name: "only_a".into(),
                fsa: 1
            })
        );
    }

    #[test]
    fn arcs_of_is_a_view_of_the_same_arcs() {
        let v = create_fsa_vec(&[linear(&[1]), linear(&[2, 3])]);
        let view = v.arcs_of(1);
        assert_eq!(view.dim0(), 4);
        assert_eq!(view.values(), v.get(1).arcs().values());
        assert_eq!(view.value_offset(), 2);
        assert_eq!(v.num_states(), 7);
        assert!(create_fsa_vec(&[]).num_fsas() == 0);
    }
}
