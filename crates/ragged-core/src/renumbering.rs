//! `Renumbering`: a keep-mask over old items with its `old2new` and `new2old` maps (k2's
//! `Renumbering`), used by `subset_ragged` and `remove_empty_lists`.

use rayon::prelude::*;

use crate::error::Error;
use crate::par::{exclusive_sum_into, go_parallel};

/// Which of `num_old_elems` items are kept, with the maps between old and new numbering.
///
/// ```
/// use ragged_core::Renumbering;
/// let r = Renumbering::from_keep(&[true, false, true, true]).unwrap();
/// assert_eq!(r.new2old(), &[0, 2, 3]);
/// assert_eq!(r.old2new(), &[0, 1, 1, 2, 3]);
/// assert_eq!(r.num_new_elems(), 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renumbering {
    keep: Vec<bool>,
    old2new: Vec<i32>,
    new2old: Vec<i32>,
}

impl Renumbering {
    /// A renumbering from a keep mask; an error past `i32::MAX` items.
    pub fn from_keep(keep: &[bool]) -> Result<Self, Error> {
        crate::error::to_offset(keep.len(), "the number of items to renumber")?;
        let ones: Vec<i32> = if go_parallel(keep.len()) {
            keep.par_iter().map(|&k| k as i32).collect()
        } else {
            keep.iter().map(|&k| k as i32).collect()
        };
        let mut old2new = vec![0i32; keep.len() + 1];
        exclusive_sum_into(&ones, &mut old2new);
        let mut new2old = Vec::with_capacity(old2new[keep.len()] as usize);
        new2old.extend(
            keep.iter()
                .enumerate()
                .filter(|(_, &k)| k)
                .map(|(i, _)| i as i32),
        );
        Ok(Self {
            keep: keep.to_vec(),
            old2new,
            new2old,
        })
    }

    /// The keep mask, one entry per old item.
    pub fn keep(&self) -> &[bool] {
        &self.keep
    }

    /// `num_old_elems() + 1` entries: `old2new[i]` is the new index of old item `i` when kept
    /// (the exclusive sum of the mask; the last entry is `num_new_elems()`).
    pub fn old2new(&self) -> &[i32] {
        &self.old2new
    }

    /// The old index of each new item.
    pub fn new2old(&self) -> &[i32] {
        &self.new2old
    }

    /// Items before renumbering.
    pub fn num_old_elems(&self) -> usize {
        self.keep.len()
    }

    /// Items kept.
    pub fn num_new_elems(&self) -> usize {
        self.new2old.len()
    }
}
