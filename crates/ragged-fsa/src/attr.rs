//! Per-arc attributes carried alongside the arcs (k2's tensor and ragged attributes):
//! `aux_labels` and any number of named `f32`, `i32` or ragged `i32` arrays.

use std::collections::BTreeMap;

use ragged_core::{Ragged, RaggedShape, RowPartition};
use rayon::prelude::*;

use crate::fsa::PARALLEL_MIN_ARCS;

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
            Attr::F32(v) => Attr::F32(map_arcs(
                arc_map,
                |&i| if i < 0 { 0.0 } else { v[i as usize] },
            )),
            Attr::I32(v) => Attr::I32(map_arcs(
                arc_map,
                |&i| if i < 0 { 0 } else { v[i as usize] },
            )),
            Attr::Ragged(r) if in_parallel(arc_map.len()) => {
                Attr::Ragged(gathered_ragged(r, arc_map))
            }
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
                    new_splits.push(split_of(new_values.len()));
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

/// Whether work over `len` arcs goes to rayon: [`PARALLEL_MIN_ARCS`] arcs or more, and
/// more than one thread.
fn in_parallel(len: usize) -> bool {
    len >= PARALLEL_MIN_ARCS && rayon::current_num_threads() > 1
}

/// `f` of each entry of `arc_map`, in order, in parallel jobs when [`in_parallel`].
pub(crate) fn map_arcs<T: Send>(arc_map: &[i32], f: impl Fn(&i32) -> T + Sync + Send) -> Vec<T> {
    if in_parallel(arc_map.len()) {
        arc_map
            .par_iter()
            .with_min_len(GATHER_CHUNK)
            .map(f)
            .collect()
    } else {
        arc_map.iter().map(f).collect()
    }
}

/// Arcs per parallel job of a gather.
const GATHER_CHUNK: usize = 8192;

/// A row-split (an `i32` offset) from a count of values.
fn split_of(len: usize) -> i32 {
    i32::try_from(len).expect("a gathered ragged attribute has at most i32::MAX values")
}

/// A ragged attribute gathered through `arc_map` (`-1`: an empty list): the row-splits on
/// one thread, then the values copied in parallel, each chunk of arcs into its own slice.
fn gathered_ragged(r: &Ragged<i32>, arc_map: &[i32]) -> Ragged<i32> {
    let (splits, values) = ragged_parts(r);
    let row = |i: i32| {
        if i < 0 {
            0..0
        } else {
            splits[i as usize] as usize..splits[i as usize + 1] as usize
        }
    };
    let mut new_splits = Vec::with_capacity(arc_map.len() + 1);
    new_splits.push(0);
    let mut total = 0usize;
    for &i in arc_map {
        total += row(i).len();
        new_splits.push(split_of(total));
    }
    let mut new_values = vec![0i32; total];
    let mut parts = Vec::with_capacity(arc_map.len().div_ceil(GATHER_CHUNK));
    let mut rest = new_values.as_mut_slice();
    for (k, map) in arc_map.chunks(GATHER_CHUNK).enumerate() {
        let begin = k * GATHER_CHUNK;
        let len = (new_splits[begin + map.len()] - new_splits[begin]) as usize;
        let (part, tail) = rest.split_at_mut(len);
        parts.push((map, part));
        rest = tail;
    }
    parts.into_par_iter().for_each(|(map, part)| {
        let mut at = 0;
        for &i in map {
            let src = &values[row(i)];
            // element by element: the lists are short, and a copy call per arc costs more
            for (slot, &value) in part[at..at + src.len()].iter_mut().zip(src) {
                *slot = value;
            }
            at += src.len();
        }
    });
    ragged_from_parts(new_splits, new_values)
}

/// A 2-axis ragged array from row-splits the caller built correctly.
pub(crate) fn ragged_from_parts(splits: Vec<i32>, values: Vec<i32>) -> Ragged<i32> {
    let layer = RowPartition::from_row_splits(splits).expect("row splits built by this crate");
    let shape = RaggedShape::from_layers(vec![layer]).expect("one layer");
    Ragged::new(shape, values)
}

/// Gathers every attribute through an arc map.
pub(crate) fn gather_all(attrs: &Attrs, arc_map: &[i32]) -> Attrs {
    gather_where(attrs, arc_map, |_| true)
}

/// Gathers every attribute but `skip` through an arc map: for an operation that makes
/// that attribute itself.
pub(crate) fn gather_all_but(attrs: &Attrs, arc_map: &[i32], skip: &str) -> Attrs {
    gather_where(attrs, arc_map, |name| name != skip)
}

/// Gathers the attributes whose names `keep` accepts through an arc map.
fn gather_where(attrs: &Attrs, arc_map: &[i32], keep: impl Fn(&str) -> bool) -> Attrs {
    attrs
        .iter()
        .filter(|(name, _)| keep(name))
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

    #[test]
    fn a_large_gather_on_two_threads_is_the_naive_one() {
        // a map with new arcs (-1), repeats and jumps, long enough to be gathered in
        // parallel chunks; lists of 0 to 3 values, some chunks all empty
        let n = 5 * GATHER_CHUNK + 123;
        let mut state = 1u64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) % m
        };
        let lists: Vec<Vec<i32>> = (0..n)
            .map(|i| {
                let len = if (i / GATHER_CHUNK) % 3 == 1 {
                    0
                } else {
                    next(4)
                };
                (0..len).map(|_| next(1000) as i32).collect()
            })
            .collect();
        let map: Vec<i32> = (0..n + 777)
            .map(|i| match next(10) {
                0 => -1,
                1 => map_repeat(i, n),
                _ => next(n as u64) as i32,
            })
            .collect();
        let mut splits = vec![0i32];
        for l in &lists {
            splits.push(splits.last().unwrap() + l.len() as i32);
        }
        let ragged = Attr::Ragged(ragged_from_parts(splits, lists.concat()));
        let floats = Attr::F32((0..n).map(|i| i as f32 * 0.5).collect());
        let ints = Attr::I32((0..n).map(|i| 7 * i as i32).collect());
        let (r, f, i) = crate::algebra::on_threads(2, || {
            (ragged.gather(&map), floats.gather(&map), ints.gather(&map))
        });
        let want: Vec<Vec<i32>> = map
            .iter()
            .map(|&m| {
                if m < 0 {
                    Vec::new()
                } else {
                    lists[m as usize].clone()
                }
            })
            .collect();
        assert_eq!(r.as_ragged().unwrap().to_vec_vec(), want);
        let want_f: Vec<f32> = map
            .iter()
            .map(|&m| if m < 0 { 0.0 } else { m as f32 * 0.5 })
            .collect();
        assert_eq!(f, Attr::F32(want_f));
        let want_i: Vec<i32> = map.iter().map(|&m| if m < 0 { 0 } else { 7 * m }).collect();
        assert_eq!(i, Attr::I32(want_i));
    }

    /// An index into `0..n` that repeats every few entries.
    fn map_repeat(i: usize, n: usize) -> i32 {
        ((i / 5) % n) as i32
    }
}
