//! Per-arc attributes carried alongside the arcs (k2's tensor and ragged attributes):
//! `aux_labels` and any number of named `f32`, `i32` or ragged `i32` arrays.

use std::collections::BTreeMap;

use ragged_core::{Ragged, RaggedShape, RowPartition};

/// The attributes of an FSA or FsaVec, by name (sorted, as k2 writes them).
pub type Attrs = BTreeMap<String, Attr>;

/// The name k2 gives the output labels of a transducer.
pub const AUX_LABELS: &str = "aux_labels";

/// One per-arc attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// One `f32` per arc.
    F32(Vec<f32>),
    /// One `i32` per arc (e.g. plain `aux_labels`).
    I32(Vec<i32>),
    /// A list of `i32` per arc: a 2-axis ragged array `[arc][value]` (e.g. ragged `aux_labels`).
    Ragged(Ragged<i32>),
}

impl Attr {
    /// The number of arcs it covers.
    pub fn len(&self) -> usize {
        match self {
            Attr::F32(v) => v.len(),
            Attr::I32(v) => v.len(),
            Attr::Ragged(r) => r.dim0(),
        }
    }

    /// Whether it covers no arcs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The plain `i32` values, if it is one.
    pub fn as_i32(&self) -> Option<&[i32]> {
        match self {
            Attr::I32(v) => Some(v),
            _ => None,
        }
    }

    /// The `f32` values, if it is one.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match self {
            Attr::F32(v) => Some(v),
            _ => None,
        }
    }

    /// The ragged values, if it is one.
    pub fn as_ragged(&self) -> Option<&Ragged<i32>> {
        match self {
            Attr::Ragged(r) => Some(r),
            _ => None,
        }
    }

    fn same_kind(&self, other: &Attr) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// Values through an arc map (new arc -> old arc); `-1` gives 0 or an empty list.
    pub(crate) fn gather(&self, arc_map: &[i32]) -> Attr {
        match self {
            Attr::F32(v) => Attr::F32(
                arc_map
                    .iter()
                    .map(|&i| if i < 0 { 0.0 } else { v[i as usize] })
                    .collect(),
            ),
            Attr::I32(v) => Attr::I32(
                arc_map
                    .iter()
                    .map(|&i| if i < 0 { 0 } else { v[i as usize] })
                    .collect(),
            ),
            Attr::Ragged(r) => {
                let (splits, values) = ragged_parts(r);
                let mut new_splits = Vec::with_capacity(arc_map.len() + 1);
                let mut new_values = Vec::new();
                new_splits.push(0);
                for &i in arc_map {
                    if i >= 0 {
                        let i = i as usize;
                        new_values
                            .extend_from_slice(&values[splits[i] as usize..splits[i + 1] as usize]);
                    }
                    new_splits.push(new_values.len() as i32);
                }
                Attr::Ragged(ragged_from_parts(new_splits, new_values))
            }
        }
    }

    /// The values of arcs `begin..end`.
    pub(crate) fn slice(&self, begin: usize, end: usize) -> Attr {
        match self {
            Attr::F32(v) => Attr::F32(v[begin..end].to_vec()),
            Attr::I32(v) => Attr::I32(v[begin..end].to_vec()),
            Attr::Ragged(r) => {
                let (splits, values) = ragged_parts(r);
                let base = splits[begin];
                let new_splits = splits[begin..=end].iter().map(|s| s - base).collect();
                let new_values = values[base as usize..splits[end] as usize].to_vec();
                Attr::Ragged(ragged_from_parts(new_splits, new_values))
            }
        }
    }

    /// Concatenates attributes of one kind; `None` if the kinds differ.
    pub(crate) fn concat(parts: &[&Attr]) -> Option<Attr> {
        let first = parts.first()?;
        if parts.iter().any(|p| !p.same_kind(first)) {
            return None;
        }
        Some(match first {
            Attr::F32(_) => Attr::F32(
                parts
                    .iter()
                    .flat_map(|p| p.as_f32().unwrap_or_default().iter().copied())
                    .collect(),
            ),
            Attr::I32(_) => Attr::I32(
                parts
                    .iter()
                    .flat_map(|p| p.as_i32().unwrap_or_default().iter().copied())
                    .collect(),
            ),
            Attr::Ragged(_) => {
                let mut splits = vec![0i32];
                let mut values = Vec::new();
                for part in parts {
                    if let Attr::Ragged(r) = part {
                        let (s, v) = ragged_parts(r);
                        let base = values.len() as i32;
                        splits.extend(s[1..].iter().map(|x| x + base));
                        values.extend_from_slice(v);
                    }
                }
                Attr::Ragged(ragged_from_parts(splits, values))
            }
        })
    }
}

/// The row-splits and values of a 2-axis ragged array.
pub(crate) fn ragged_parts(r: &Ragged<i32>) -> (&[i32], &[i32]) {
    (r.shape().row_splits(1), r.values())
}

/// A 2-axis ragged array from row-splits the caller built correctly.
pub(crate) fn ragged_from_parts(splits: Vec<i32>, values: Vec<i32>) -> Ragged<i32> {
    let layer = RowPartition::from_row_splits(splits).expect("row splits built by this crate");
    let shape = RaggedShape::from_layers(vec![layer]).expect("one layer");
    Ragged::new(shape, values)
}

/// Gathers every attribute through an arc map.
pub(crate) fn gather_all(attrs: &Attrs, arc_map: &[i32]) -> Attrs {
    attrs
        .iter()
        .map(|(name, attr)| (name.clone(), attr.gather(arc_map)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_fills_new_arcs_with_zero_or_empty() {
        let plain = Attr::I32(vec![5, 6, 7]);
        assert_eq!(plain.gather(&[2, -1, 0]), Attr::I32(vec![7, 0, 5]));
        let ragged = Attr::Ragged(ragged_from_parts(vec![0, 2, 2, 3], vec![1, 2, 3]));
        let out = ragged.gather(&[2, -1, 0]);
        assert_eq!(
            out.as_ragged().unwrap().to_vec_vec(),
            vec![vec![3], vec![], vec![1, 2]]
        );
    }

    #[test]
    fn slice_and_concat_are_inverse() {
        let ragged = Attr::Ragged(ragged_from_parts(vec![0, 2, 2, 3, 5], vec![1, 2, 3, 4, 5]));
        let a = ragged.slice(0, 2);
        let b = ragged.slice(2, 4);
        assert_eq!(
            a.as_ragged().unwrap().to_vec_vec(),
            vec![vec![1, 2], vec![]]
        );
        assert_eq!(Attr::concat(&[&a, &b]), Some(ragged));
        assert_eq!(
            Attr::concat(&[&Attr::I32(vec![1]), &Attr::F32(vec![1.0])]),
            None
        );
    }
}
