//! Building shapes as k2 does: `ragged_shape2/3/4` from splits and/or ids, composing and
//! decomposing, single layers, trivial, regular, empty and random shapes.

use crate::error::{to_offset, Error};
use crate::par;
use crate::row_partition::{
    check_row_ids, check_row_ids_against_splits, check_row_splits, RowPartition,
};
use crate::shape::RaggedShape;

/// One layer from `row_splits` and/or `row_ids` (k2's `RaggedShape2`).
///
/// At least one of `row_splits`, `row_ids` must be given. When only `row_ids` is given the
/// number of rows is `row_ids.last() + 1` (0 when empty), as in k2. `cached_tot_size`, when
/// given, must equal the number of elements. When both are given they must agree.
///
/// ```
/// use ragged_core::ragged_shape2;
/// let s = ragged_shape2(None, Some(&[0, 0, 1, 1, 2, 2, 2, 3]), None).unwrap();
/// assert_eq!(s.row_splits(1), &[0, 2, 4, 7, 8]);
/// ```
pub fn ragged_shape2(
    row_splits: Option<&[i32]>,
    row_ids: Option<&[i32]>,
    cached_tot_size: Option<usize>,
) -> Result<RaggedShape, Error> {
    Ok(RaggedShape::from_matching_layers(vec![layer_from(
        row_splits,
        row_ids,
        cached_tot_size,
    )?]))
}

fn layer_from(
    row_splits: Option<&[i32]>,
    row_ids: Option<&[i32]>,
    cached_tot_size: Option<usize>,
) -> Result<RowPartition, Error> {
    let layer = match (row_splits, row_ids) {
        (None, None) => {
            return Err(Error::InvalidArgument {
                what: "number of encodings given (row_splits, row_ids); need at least one",
                value: 0,
            })
        }
        (Some(splits), None) => RowPartition::from_row_splits(splits.to_vec())?,
        (None, Some(ids)) => {
            let nrows = ids.last().map_or(0, |&r| r.max(-1) + 1).max(0) as usize;
            RowPartition::from_value_rowids(ids.to_vec(), nrows)?
        }
        (Some(splits), Some(ids)) => {
            check_row_splits(splits)?;
            check_row_ids(ids, splits.len() - 1)?;
            check_row_ids_against_splits(splits, ids)?;
            // SAFETY: `check_row_splits` and `check_row_ids_against_splits` just passed.
            unsafe { RowPartition::from_parts_unchecked(splits.to_vec(), Some(ids.to_vec())) }
        }
    };
    if let Some(n) = cached_tot_size {
        if n != layer.nvals() {
            return Err(Error::SizeMismatch {
                what: "cached_tot_size vs the number of elements",
                expected: layer.nvals(),
                got: n,
            });
        }
    }
    Ok(layer)
}

/// Three axes from two layers, each given by splits and/or ids (k2's `RaggedShape3`).
#[allow(clippy::too_many_arguments)]
pub fn ragged_shape3(
    row_splits1: Option<&[i32]>,
    row_ids1: Option<&[i32]>,
    cached_tot_size1: Option<usize>,
    row_splits2: Option<&[i32]>,
    row_ids2: Option<&[i32]>,
    cached_tot_size2: Option<usize>,
) -> Result<RaggedShape, Error> {
    let l1 = layer_from(row_splits1, row_ids1, cached_tot_size1)?;
    let l2 = layer_from_rows(row_splits2, row_ids2, cached_tot_size2, l1.nvals())?;
    RaggedShape::from_layers(vec![l1, l2])
}

/// Four axes from three layers, each given by splits and/or ids (k2's `RaggedShape4`).
#[allow(clippy::too_many_arguments)]
pub fn ragged_shape4(
    row_splits1: Option<&[i32]>,
    row_ids1: Option<&[i32]>,
    cached_tot_size1: Option<usize>,
    row_splits2: Option<&[i32]>,
    row_ids2: Option<&[i32]>,
    cached_tot_size2: Option<usize>,
    row_splits3: Option<&[i32]>,
    row_ids3: Option<&[i32]>,
    cached_tot_size3: Option<usize>,
) -> Result<RaggedShape, Error> {
    let l1 = layer_from(row_splits1, row_ids1, cached_tot_size1)?;
    let l2 = layer_from_rows(row_splits2, row_ids2, cached_tot_size2, l1.nvals())?;
    let l3 = layer_from_rows(row_splits3, row_ids3, cached_tot_size3, l2.nvals())?;
    RaggedShape::from_layers(vec![l1, l2, l3])
}

/// A lower layer: when only row ids are given, the row count comes from the layer above
/// (so trailing empty rows are kept), unlike k2's guess from the last id.
fn layer_from_rows(
    row_splits: Option<&[i32]>,
    row_ids: Option<&[i32]>,
    cached_tot_size: Option<usize>,
    nrows: usize,
) -> Result<RowPartition, Error> {
    if let (None, Some(ids)) = (row_splits, row_ids) {
        let layer = RowPartition::from_value_rowids(ids.to_vec(), nrows)?;
        return layer_from(Some(layer.row_splits()), None, cached_tot_size).map(|_| layer);
    }
    layer_from(row_splits, row_ids, cached_tot_size)
}

/// Stacks `bottom` under `top` (k2's `ComposeRaggedShapes`); needs `top.num_elements() == bottom.dim0()`.
pub fn compose_ragged_shapes(
    top: &RaggedShape,
    bottom: &RaggedShape,
) -> Result<RaggedShape, Error> {
    if top.num_elements() != bottom.dim0() {
        return Err(Error::SizeMismatch {
            what: "top.num_elements() vs bottom.dim0()",
            expected: top.num_elements(),
            got: bottom.dim0(),
        });
    }
    let mut layers = top.layers().to_vec();
    layers.extend_from_slice(bottom.layers());
    Ok(RaggedShape::from_matching_layers(layers))
}

/// Three shapes composed top to bottom (k2's `ComposeRaggedShapes3`).
pub fn compose_ragged_shapes3(
    a: &RaggedShape,
    b: &RaggedShape,
    c: &RaggedShape,
) -> Result<RaggedShape, Error> {
    compose_ragged_shapes(&compose_ragged_shapes(a, b)?, c)
}

/// Splits at axis `axis` into `(top, bottom)` with `top.num_axes() == axis + 1` and
/// `bottom.num_axes() == src.num_axes() - axis` (k2's `DecomposeRaggedShape`); layers are shared.
/// Needs `1 <= axis <= src.num_axes() - 2`.
pub fn decompose_ragged_shape(
    src: &RaggedShape,
    axis: usize,
) -> Result<(RaggedShape, RaggedShape), Error> {
    if axis == 0 || axis + 2 > src.num_axes() {
        return Err(Error::AxisOutOfRange {
            axis,
            min: 1,
            end: src.num_axes().saturating_sub(1),
        });
    }
    let (top, bottom) = src.layers().split_at(axis);
    Ok((
        RaggedShape::from_matching_layers(top.to_vec()),
        RaggedShape::from_matching_layers(bottom.to_vec()),
    ))
}

/// The 2-axis shape of one layer, `0 <= layer < src.num_layers()` (k2's `GetLayer`); shared.
pub fn get_layer(src: &RaggedShape, layer: usize) -> Result<RaggedShape, Error> {
    let Some(l) = src.layers().get(layer) else {
        return Err(Error::AxisOutOfRange {
            axis: layer,
            min: 0,
            end: src.num_layers(),
        });
    };
    Ok(RaggedShape::from_matching_layers(vec![l.clone()]))
}

/// One row holding `num_elements` elements: `[ [ x x .. ] ]` (k2's `TrivialShape`).
pub fn trivial_shape(num_elements: usize) -> Result<RaggedShape, Error> {
    let n = to_offset(num_elements, "the number of elements")?;
    Ok(RaggedShape::from_matching_layers(vec![
        RowPartition::from_row_splits(vec![0, n])?,
    ]))
}

/// `dim0` rows of `dim1` elements each (k2's `RegularRaggedShape`).
pub fn regular_ragged_shape(dim0: usize, dim1: usize) -> Result<RaggedShape, Error> {
    Ok(RaggedShape::from_matching_layers(vec![
        RowPartition::from_uniform_row_length(dim1, dim0)?,
    ]))
}

/// A shape with `num_axes` axes and `dim0() == 0` (k2's `EmptyRaggedShape`); needs
/// `num_axes >= 2`. A number of axes beyond `i32` is [`Error::Overflow`], like the sizes of
/// the other constructors, and so is a layer list the allocator refuses (never an abort).
pub fn empty_ragged_shape(num_axes: usize) -> Result<RaggedShape, Error> {
    if num_axes < 2 {
        return Err(Error::TooFewAxes {
            got: num_axes,
            min: 2,
        });
    }
    to_offset(num_axes, "the number of axes")?;
    let num_layers = num_axes - 1;
    let mut layers = Vec::new();
    layers
        .try_reserve_exact(num_layers)
        .map_err(|_| Error::Overflow {
            what: "the layers of an empty shape",
            value: num_layers as u64,
        })?;
    let empty = RowPartition::from_row_splits(vec![0])?;
    layers.resize(num_layers, empty);
    Ok(RaggedShape::from_matching_layers(layers))
}

/// A small deterministic generator (SplitMix64) for random shapes.
#[derive(Debug, Clone)]
pub struct ShapeRng(u64);

impl ShapeRng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }
}

/// A random shape for tests and benches (k2's `RandomRaggedShape`), built bottom-up so the
/// number of elements lies in `min_num_elements..=max_num_elements` and the number of axes in
/// `min_num_axes..=max_num_axes`. With `set_row_ids` the row ids are computed up front.
pub fn random_ragged_shape(
    rng: &mut ShapeRng,
    set_row_ids: bool,
    min_num_axes: usize,
    max_num_axes: usize,
    min_num_elements: usize,
    max_num_elements: usize,
) -> Result<RaggedShape, Error> {
    if min_num_axes < 2 || max_num_axes < min_num_axes {
        return Err(Error::InvalidArgument {
            what: "axis range (min_num_axes must be >= 2 and <= max_num_axes); min_num_axes",
            value: min_num_axes as i64,
        });
    }
    if max_num_elements < min_num_elements {
        return Err(Error::InvalidArgument {
            what: "element range; max_num_elements",
            value: max_num_elements as i64,
        });
    }
    to_offset(max_num_elements, "max_num_elements")?;
    let num_axes = rng.range(min_num_axes, max_num_axes);
    let mut n = rng.range(min_num_elements, max_num_elements);
    let mut layers = Vec::with_capacity(num_axes - 1);
    for _ in 0..num_axes - 1 {
        // Split `n` items into rows of random length (often empty), i.e. random row_ids.
        let nrows = rng.range(if n == 0 { 0 } else { 1 }, n.max(1));
        let mut ids: Vec<i32> = (0..n)
            .map(|_| rng.range(0, nrows.max(1) - 1) as i32)
            .collect();
        ids.sort_unstable();
        // Test shapes: the checked constructors, whose cost does not matter here.
        let layer = if set_row_ids {
            RowPartition::from_value_rowids(ids, nrows)?
        } else {
            let mut splits = vec![0i32; nrows + 1];
            par::row_ids_to_row_splits(&ids, &mut splits);
            RowPartition::from_row_splits(splits)?
        };
        layers.push(layer);
        n = nrows;
    }
    layers.reverse();
    Ok(RaggedShape::from_matching_layers(layers))
}

/// A random ragged array of `i32` in `min_value..=max_value` on a [`random_ragged_shape`]
/// (k2's `RandomRagged<int32_t>`).
pub fn random_ragged(
    rng: &mut ShapeRng,
    min_value: i32,
    max_value: i32,
    min_num_axes: usize,
    max_num_axes: usize,
    min_num_elements: usize,
    max_num_elements: usize,
) -> Result<crate::Ragged<i32>, Error> {
    if max_value < min_value {
        return Err(Error::InvalidArgument {
            what: "value range; max_value",
            value: max_value as i64,
        });
    }
    let shape = random_ragged_shape(
        rng,
        false,
        min_num_axes,
        max_num_axes,
        min_num_elements,
        max_num_elements,
    )?;
    let span = (max_value as i64 - min_value as i64 + 1) as u64;
    let values = (0..shape.num_elements())
        .map(|_| (min_value as i64 + (rng.next_u64() % span) as i64) as i32)
        .collect();
    crate::Ragged::try_new(shape, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape2_from_either_encoding() {
        let a = ragged_shape2(Some(&[0, 2, 4, 7, 8]), None, Some(8)).unwrap();
        let b = ragged_shape2(None, Some(&[0, 0, 1, 1, 2, 2, 2, 3]), None).unwrap();
        let c = ragged_shape2(
            Some(&[0, 2, 4, 7, 8]),
            Some(&[0, 0, 1, 1, 2, 2, 2, 3]),
            None,
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert!(matches!(
            ragged_shape2(
                Some(&[0, 2, 4, 7, 8]),
                Some(&[0, 0, 1, 1, 2, 2, 3, 3]),
                None
            ),
            Err(Error::RowIdsMismatch {
                position: 6,
                expected: 2,
                got: 3
            })
        ));
        assert!(matches!(
            ragged_shape2(Some(&[0, 2]), None, Some(3)),
            Err(Error::SizeMismatch {
                expected: 2,
                got: 3,
                ..
            })
        ));
        assert!(ragged_shape2(None, None, None).is_err());
        assert_eq!(ragged_shape2(None, Some(&[]), None).unwrap().dim0(), 0);
    }

    #[test]
    fn shape3_keeps_trailing_empty_rows_below() {
        let s = ragged_shape3(Some(&[0, 2, 3]), None, None, None, Some(&[0, 0, 1]), None).unwrap();
        assert_eq!(s.row_splits(2), &[0, 2, 3, 3]);
        assert_eq!(s.to_string(), "[ [ [ x x ] [ x ] ] [ [ ] ] ]");
        let s4 = ragged_shape4(
            Some(&[0, 1]),
            None,
            None,
            Some(&[0, 2]),
            None,
            None,
            None,
            Some(&[1]),
            None,
        )
        .unwrap();
        assert_eq!(s4.to_string(), "[ [ [ [ ] [ x ] ] ] ]");
    }

    #[test]
    fn compose_and_decompose_are_inverse() {
        let s: RaggedShape = "[ [ [ x ] [ ] ] [ [ x x ] ] ]".parse().unwrap();
        let (top, bottom) = decompose_ragged_shape(&s, 1).unwrap();
        assert_eq!(top.to_string(), "[ [ x x ] [ x ] ]");
        assert_eq!(bottom.to_string(), "[ [ x ] [ ] [ x x ] ]");
        assert_eq!(compose_ragged_shapes(&top, &bottom).unwrap(), s);
        assert!(decompose_ragged_shape(&s, 2).is_err());
        assert_eq!(get_layer(&s, 1).unwrap(), bottom);
        assert!(compose_ragged_shapes(&bottom, &top).is_err());
    }

    #[test]
    fn simple_shapes() {
        assert_eq!(trivial_shape(3).unwrap().to_string(), "[ [ x x x ] ]");
        assert_eq!(
            regular_ragged_shape(2, 3).unwrap().to_string(),
            "[ [ x x x ] [ x x x ] ]"
        );
        let e = empty_ragged_shape(3).unwrap();
        assert_eq!((e.num_axes(), e.dim0(), e.num_elements()), (3, 0, 0));
        assert_eq!(e.to_string(), "[ ]");
    }

    #[test]
    fn empty_shapes_with_impossible_axis_counts_are_overflow_errors() {
        // 2^40 axes once asked for 16 TiB of layers and aborted
        for num_axes in [1usize << 40, usize::MAX, i32::MAX as usize + 1] {
            assert_eq!(
                empty_ragged_shape(num_axes),
                Err(Error::Overflow {
                    what: "the number of axes",
                    value: num_axes as u64
                })
            );
        }
        assert_eq!(
            empty_ragged_shape(1 << 40).unwrap_err().to_string(),
            "the number of axes would be 1099511627776, beyond the i32 offset limit 2147483647"
        );
        // the same error as its sibling's for the same size
        assert!(matches!(
            trivial_shape(1 << 40),
            Err(Error::Overflow {
                value: 1099511627776,
                ..
            })
        ));
        assert_eq!(
            empty_ragged_shape(1),
            Err(Error::TooFewAxes { got: 1, min: 2 })
        );
        let deep = empty_ragged_shape(1000).unwrap();
        assert_eq!((deep.num_axes(), deep.dim0()), (1000, 0));
    }

    #[test]
    fn random_ragged_values_in_range() {
        let mut rng = ShapeRng::new(9);
        for _ in 0..20 {
            let r = random_ragged(&mut rng, -3, 4, 2, 3, 0, 50).unwrap();
            assert!(r.values().iter().all(|v| (-3..=4).contains(v)));
            r.shape().validate().unwrap();
        }
        assert!(random_ragged(&mut rng, 2, 1, 2, 2, 0, 1).is_err());
    }

    #[test]
    fn random_shapes_are_valid_and_in_range() {
        let mut rng = ShapeRng::new(5);
        for _ in 0..50 {
            let s = random_ragged_shape(&mut rng, true, 2, 4, 0, 100).unwrap();
            s.validate().unwrap();
            assert!((2..=4).contains(&s.num_axes()));
            assert!(s.num_elements() <= 100);
        }
    }
}
