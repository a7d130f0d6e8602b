//! Concatenation: `cat` and `stack` along axis 0 or 1 with k2's merge map, and `append`.

use super::gather::{gather_runs, merge_map_of, Run};
use crate::error::{precondition, to_offset, Error};
use crate::ragged::Ragged;
use crate::row_partition::RowPartition;
use crate::shape::RaggedShape;

fn check_same_axes(srcs: &[&RaggedShape]) -> Result<(), Error> {
    if srcs.is_empty() {
        return Err(Error::InvalidArgument {
            what: "number of sources (need at least one)",
            value: 0,
        });
    }
    for s in srcs {
        if s.num_axes() != srcs[0].num_axes() {
            return Err(Error::SizeMismatch {
                what: "num_axes of the sources",
                expected: srcs[0].num_axes(),
                got: s.num_axes(),
            });
        }
    }
    Ok(())
}

fn check_same_dim0(srcs: &[&RaggedShape]) -> Result<(), Error> {
    for s in srcs {
        if s.dim0() != srcs[0].dim0() {
            return Err(Error::SizeMismatch {
                what: "dim0 of the sources",
                expected: srcs[0].dim0(),
                got: s.dim0(),
            });
        }
    }
    Ok(())
}

impl RaggedShape {
    /// Concatenates shapes along `axis` 0 or 1 (k2's `Cat`), returning the shape and the merge
    /// map: element `i` of the result is element `merge_map[i] / n` of source `merge_map[i] % n`.
    /// On axis 1 all sources need the same `dim0()` and row `i` is the rows `i` of all sources.
    pub fn cat_with_merge_map(
        axis: usize,
        srcs: &[&RaggedShape],
    ) -> Result<(RaggedShape, Vec<u32>), Error> {
        Self::cat_impl(axis, srcs, true)
    }

    /// [`RaggedShape::cat_with_merge_map`] without the merge map.
    pub fn cat(axis: usize, srcs: &[&RaggedShape]) -> Result<RaggedShape, Error> {
        Self::cat_impl(axis, srcs, false).map(|r| r.0)
    }

    fn cat_impl(
        axis: usize,
        srcs: &[&RaggedShape],
        want: bool,
    ) -> Result<(RaggedShape, Vec<u32>), Error> {
        check_same_axes(srcs)?;
        match axis {
            0 => {
                let runs = srcs
                    .iter()
                    .enumerate()
                    .map(|(src, s)| Run {
                        src,
                        begin: 0,
                        end: s.dim0(),
                    })
                    .collect();
                let (layers, ends) = gather_runs(srcs, 0, runs)?;
                let mm = if want {
                    merge_map_of(&ends, srcs.len())?
                } else {
                    Vec::new()
                };
                Ok((RaggedShape::from_matching_layers(layers), mm))
            }
            1 => {
                check_same_dim0(srcs)?;
                let dim0 = srcs[0].dim0();
                let mut splits = Vec::with_capacity(dim0 + 1);
                splits.push(0i32);
                let mut runs = Vec::with_capacity(dim0 * srcs.len());
                let mut total = 0usize;
                for i in 0..dim0 {
                    for (src, s) in srcs.iter().enumerate() {
                        let rs = s.row_splits(1);
                        let (b, e) = (rs[i] as usize, rs[i + 1] as usize);
                        total += e - b;
                        runs.push(Run {
                            src,
                            begin: b,
                            end: e,
                        });
                    }
                    splits.push(to_offset(total, "the size of axis 1 of the result")?);
                }
                let (mut layers, ends) = gather_runs(srcs, 1, runs)?;
                let mm = if want {
                    merge_map_of(&ends, srcs.len())?
                } else {
                    Vec::new()
                };
                // SAFETY: `splits` starts at 0 and pushes a running total of row lengths
                // (`e - b` of valid splits, non-negative), each checked by `to_offset`.
                layers.insert(0, unsafe {
                    RowPartition::from_row_splits_unchecked(splits)
                });
                Ok((RaggedShape::from_matching_layers(layers), mm))
            }
            _ => Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: 2,
            }),
        }
    }

    /// Stacks shapes into one with an extra axis (k2's `Stack`), with the merge map.
    /// On axis 0 the result's row `i` is source `i`; on axis 1 (same `dim0()` for all) the
    /// result's `[i][j]` is source `j`'s row `i`.
    pub fn stack_with_merge_map(
        axis: usize,
        srcs: &[&RaggedShape],
    ) -> Result<(RaggedShape, Vec<u32>), Error> {
        Self::stack_impl(axis, srcs, true)
    }

    /// [`RaggedShape::stack_with_merge_map`] without the merge map.
    pub fn stack(axis: usize, srcs: &[&RaggedShape]) -> Result<RaggedShape, Error> {
        Self::stack_impl(axis, srcs, false).map(|r| r.0)
    }

    fn stack_impl(
        axis: usize,
        srcs: &[&RaggedShape],
        want: bool,
    ) -> Result<(RaggedShape, Vec<u32>), Error> {
        check_same_axes(srcs)?;
        match axis {
            0 => {
                let lengths = srcs
                    .iter()
                    .map(|s| to_offset(s.dim0(), "dim0 of a source"))
                    .collect::<Result<Vec<i32>, Error>>()?;
                let top = RowPartition::from_row_lengths(&lengths)?;
                let (cat, mm) = Self::cat_impl(0, srcs, want)?;
                let mut layers = vec![top];
                layers.extend_from_slice(cat.layers());
                Ok((RaggedShape::from_matching_layers(layers), mm))
            }
            1 => {
                check_same_dim0(srcs)?;
                let dim0 = srcs[0].dim0();
                let top = RowPartition::from_uniform_row_length(srcs.len(), dim0)?;
                let mut runs = Vec::with_capacity(dim0 * srcs.len());
                for i in 0..dim0 {
                    for (src, _) in srcs.iter().enumerate() {
                        runs.push(Run {
                            src,
                            begin: i,
                            end: i + 1,
                        });
                    }
                }
                let (layers, ends) = gather_runs(srcs, 0, runs)?;
                let mm = if want {
                    merge_map_of(&ends, srcs.len())?
                } else {
                    Vec::new()
                };
                let mut all = vec![top];
                all.extend(layers);
                Ok((RaggedShape::from_matching_layers(all), mm))
            }
            _ => Err(Error::AxisOutOfRange {
                axis,
                min: 0,
                end: 2,
            }),
        }
    }
}

/// Values of the result of a merge: `merge_map[i] % n` picks the source, `/ n` the element.
fn merge_values<T: Clone>(srcs: &[&Ragged<T>], merge_map: &[u32]) -> Vec<T> {
    let n = srcs.len() as u32;
    merge_map
        .iter()
        .map(|&m| srcs[(m % n) as usize].values()[(m / n) as usize].clone())
        .collect()
}

impl<T: Clone> Ragged<T> {
    /// Concatenates along axis 0 or 1 (k2's `Cat`); see [`RaggedShape::cat`].
    pub fn cat(axis: usize, srcs: &[&Ragged<T>]) -> Result<Ragged<T>, Error> {
        Self::cat_with_merge_map(axis, srcs).map(|r| r.0)
    }

    /// Concatenates along axis 0 or 1 and returns the merge map too.
    pub fn cat_with_merge_map(
        axis: usize,
        srcs: &[&Ragged<T>],
    ) -> Result<(Ragged<T>, Vec<u32>), Error> {
        let shapes: Vec<&RaggedShape> = srcs.iter().map(|r| r.shape()).collect();
        if axis == 0 && !shapes.is_empty() {
            let (shape, mm) = RaggedShape::cat_with_merge_map(0, &shapes)?;
            let values = srcs
                .iter()
                .flat_map(|r| r.values().iter().cloned())
                .collect();
            return Ok((Ragged::from_matching_parts(shape, values), mm));
        }
        let (shape, mm) = RaggedShape::cat_with_merge_map(axis, &shapes)?;
        let values = merge_values(srcs, &mm);
        Ok((Ragged::from_matching_parts(shape, values), mm))
    }

    /// Stacks into an array with one more axis (k2's `Stack`); see [`RaggedShape::stack`].
    pub fn stack(axis: usize, srcs: &[&Ragged<T>]) -> Result<Ragged<T>, Error> {
        Self::stack_with_merge_map(axis, srcs).map(|r| r.0)
    }

    /// Stacks and returns the merge map too.
    pub fn stack_with_merge_map(
        axis: usize,
        srcs: &[&Ragged<T>],
    ) -> Result<(Ragged<T>, Vec<u32>), Error> {
        let shapes: Vec<&RaggedShape> = srcs.iter().map(|r| r.shape()).collect();
        let (shape, mm) = RaggedShape::stack_with_merge_map(axis, &shapes)?;
        let values = merge_values(srcs, &mm);
        Ok((Ragged::from_matching_parts(shape, values), mm))
    }

    /// Appends `other` after `self` along axis 0 (k2's `Append` of two sources).
    #[track_caller]
    pub fn append(&self, other: &Ragged<T>) -> Ragged<T> {
        match Self::cat(0, &[self, other]) {
            Ok(r) => r,
            Err(e) => precondition(format!("append: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> Ragged<i32> {
        text.parse().unwrap()
    }

    #[test]
    fn cat_axis0_concatenates() {
        let a = r("[ [ 1 2 ] [ ] ]");
        let b = r("[ [ 3 ] ]");
        let (c, mm) = Ragged::cat_with_merge_map(0, &[&a, &b]).unwrap();
        assert_eq!(c.to_string(), "[ [ 1 2 ] [ ] [ 3 ] ]");
        assert_eq!(mm, vec![0, 2, 1]);
        assert_eq!(a.append(&b), c);
    }

    #[test]
    fn cat_axis1_joins_rows() {
        let a = r("[ [ [ 1 ] [ 2 3 ] ] [ ] ]");
        let b = r("[ [ [ 4 ] ] [ [ 5 ] [ ] ] ]");
        let (c, mm) = Ragged::cat_with_merge_map(1, &[&a, &b]).unwrap();
        assert_eq!(c.to_string(), "[ [ [ 1 ] [ 2 3 ] [ 4 ] ] [ [ 5 ] [ ] ] ]");
        assert_eq!(mm, vec![0, 2, 4, 1, 3]);
    }

    #[test]
    fn stack_axis0_and_axis1() {
        let a = r("[ [ 1 2 ] [ 3 ] ]");
        let b = r("[ [ ] [ 4 5 ] ]");
        assert_eq!(
            Ragged::stack(0, &[&a, &b]).unwrap().to_string(),
            "[ [ [ 1 2 ] [ 3 ] ] [ [ ] [ 4 5 ] ] ]"
        );
        let (s1, mm) = Ragged::stack_with_merge_map(1, &[&a, &b]).unwrap();
        assert_eq!(s1.to_string(), "[ [ [ 1 2 ] [ ] ] [ [ 3 ] [ 4 5 ] ] ]");
        assert_eq!(mm, vec![0, 2, 4, 1, 3]);
    }

    #[test]
    fn mismatches_are_errors() {
        let a = r("[ [ 1 2 ] [ 3 ] ]");
        let b = r("[ [ 4 ] ]");
        let c = r("[ [ [ 4 ] ] ]");
        assert!(matches!(
            Ragged::cat(1, &[&a, &b]),
            Err(Error::SizeMismatch {
                what: "dim0 of the sources",
                ..
            })
        ));
        assert!(matches!(
            Ragged::cat(0, &[&a, &c]),
            Err(Error::SizeMismatch {
                what: "num_axes of the sources",
                ..
            })
        ));
        assert!(matches!(
            Ragged::cat(2, &[&a]),
            Err(Error::AxisOutOfRange { axis: 2, .. })
        ));
        assert!(Ragged::<i32>::cat(0, &[]).is_err());
    }
}
