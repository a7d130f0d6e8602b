//! `prune_ragged`: beam and max-active pruning of the items of one axis (k2's `PruneRagged`).

use std::ops::Sub;

use crate::error::Error;
use crate::ragged::Ragged;
use crate::renumbering::Renumbering;

/// The larger of a running maximum and `v` (the running one on ties and incomparables).
fn larger<T: PartialOrd>(best: Option<T>, v: T) -> Option<T> {
    match best {
        Some(b) if v.partial_cmp(&b) != Some(std::cmp::Ordering::Greater) => Some(b),
        _ => Some(v),
    }
}

impl<T: Copy + PartialOrd + Sub<Output = T>> Ragged<T> {
    /// Which items of axis `axis` survive beam pruning (k2's `PruneRagged`), as a
    /// [`Renumbering`] over `tot_size(axis)` items to pass to [`Ragged::subset_ragged`].
    ///
    /// An item's score is its largest element (the element itself on the last axis); empty
    /// items have no score and are always pruned. Items are grouped by their row on axis
    /// `axis - 1` (one group for `axis == 0`); an item is kept when its score is at least
    /// the group's best minus `beam`, and, when `max_elems > 0`, when it is among the
    /// `max_elems` best of its group (earlier items win ties).
    ///
    /// ```
    /// use ragged_core::Ragged;
    /// let r: Ragged<f32> = "[ [ 0 -1 -2 -3 ] [ -10 -20 ] [ ] ]".parse().unwrap();
    /// let keep = r.prune_ragged(1, 5.0, 3).unwrap();
    /// assert_eq!(r.subset_ragged(&keep, 1).unwrap().0.to_string(), "[ [ 0 -1 -2 ] [ -10 ] [ ] ]");
    /// let keep = r.prune_ragged(0, 5.0, 0).unwrap();
    /// assert_eq!(r.subset_ragged(&keep, 0).unwrap().0.to_string(), "[ [ 0 -1 -2 -3 ] ]");
    /// ```
    pub fn prune_ragged(
        &self,
        axis: usize,
        beam: T,
        max_elems: usize,
    ) -> Result<Renumbering, Error> {
        let n_axes = self.num_axes();
        if axis >= n_axes {
            return Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: n_axes,
            });
        }
        let n_items = self.tot_size(axis);
        let values = self.values();
        // Element range of every item on `axis`: compose the splits below it.
        let scores: Vec<Option<T>> = if axis == n_axes - 1 {
            values.iter().map(|&v| Some(v)).collect()
        } else {
            let mut bounds: Vec<i32> = (0..=n_items as i32).collect();
            for a in axis + 1..n_axes {
                let s = self.row_splits(a);
                bounds = bounds.iter().map(|&b| s[b as usize]).collect();
            }
            bounds
                .windows(2)
                .map(|w| {
                    values[w[0] as usize..w[1] as usize]
                        .iter()
                        .copied()
                        .fold(None, larger)
                })
                .collect()
        };
        let groups: Vec<i32> = if axis == 0 {
            vec![0, n_items as i32]
        } else {
            self.row_splits(axis).to_vec()
        };
        let mut keep = vec![false; n_items];
        for g in groups.windows(2) {
            let (b, e) = (g[0] as usize, g[1] as usize);
            let best = scores[b..e].iter().flatten().copied().fold(None, larger);
            let Some(best) = best else { continue };
            let cutoff = best - beam;
            let mut passing: Vec<usize> = (b..e)
                .filter(|&i| scores[i].is_some_and(|s| s >= cutoff))
                .collect();
            if max_elems > 0 && passing.len() > max_elems {
                passing.sort_by(|&x, &y| {
                    scores[y]
                        .partial_cmp(&scores[x])
                        .unwrap_or(std::cmp::Ordering::Equal)
                        .then(x.cmp(&y))
                });
                passing.truncate(max_elems);
            }
            for i in passing {
                keep[i] = true;
            }
        }
        Renumbering::from_keep(&keep)
    }
}

#[cfg(test)]
mod tests {
    use crate::Ragged;

    #[test]
    fn k2_prune_examples() {
        let r: Ragged<f32> = "[ [ 0 -1 -2 -3 ] [ -10 -20 ] [ ] ]".parse().unwrap();
        assert_eq!(
            r.prune_ragged(1, 5.0, 3).unwrap().keep(),
            &[true, true, true, false, true, false]
        );
        assert_eq!(
            r.prune_ragged(0, 5.0, 0).unwrap().keep(),
            &[true, false, false]
        );
        assert!(r.prune_ragged(2, 1.0, 0).is_err());
    }

    #[test]
    fn prune_inner_axis_of_three() {
        let r: Ragged<i32> = "[ [ [ 1 9 ] [ 2 ] [ ] [ 8 ] ] [ [ 0 ] ] ]".parse().unwrap();
        // Group 0 best 9: beam 2 keeps scores >= 7: [1 9] and [8]; max 1 keeps [1 9].
        assert_eq!(
            r.prune_ragged(1, 2, 0).unwrap().keep(),
            &[true, false, false, true, true]
        );
        assert_eq!(
            r.prune_ragged(1, 2, 1).unwrap().keep(),
            &[true, false, false, false, true]
        );
    }
}
