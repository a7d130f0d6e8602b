//! ragged-core's text readers: `Ragged<i32>`, `Ragged<f32>` and `RaggedShape` from k2's
//! text form, printed and read back (the round trip must hold), with the offset <-> coordinate
//! maps checked against each other.

use std::fmt::Display;
use std::str::FromStr;

use ragged_core::{Ragged, RaggedShape};

use crate::same_f32;

/// Inputs longer than this are ignored, which bounds each input's work. (Printing no longer
/// recurses once per level, issue 17 item 8; ragged-core's own test prints a million
/// levels.)
pub const MAX_LEN: usize = 4096;

/// At most this many elements go through the offset <-> coordinate check.
const MAX_COORD_CHECKS: usize = 512;

/// `Ragged<i32>` and `Ragged<f32>` from the text, then print, reparse, compare.
pub fn ragged_text(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    round_trip::<i32>(text, |a, b| a == b);
    round_trip::<f32>(text, same_f32);
}

/// `RaggedShape` from the text, then print, reparse, compare.
pub fn shape_text(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(shape) = text.parse::<RaggedShape>() else {
        return;
    };
    check_shape(&shape);
    let printed = shape.to_string();
    let back: RaggedShape = printed
        .parse()
        .unwrap_or_else(|e| panic!("printed shape {printed:?} does not parse: {e}"));
    assert_same_shape(&shape, &back, &printed);
    assert_eq!(back.to_string(), printed, "printing is not stable");
    let _ = format!("{shape:?}");
}

fn round_trip<T>(text: &str, same: impl Fn(T, T) -> bool)
where
    T: FromStr + Display + std::fmt::Debug + Copy,
{
    let Ok(ragged) = text.parse::<Ragged<T>>() else {
        return;
    };
    check_shape(ragged.shape());
    assert_eq!(ragged.values().len(), ragged.shape().num_elements());
    let printed = ragged.to_string();
    let back: Ragged<T> = printed
        .parse()
        .unwrap_or_else(|_| panic!("printed array {printed:?} does not parse"));
    assert_same_shape(ragged.shape(), back.shape(), &printed);
    for (k, (&a, &b)) in ragged.values().iter().zip(back.values()).enumerate() {
        assert!(
            same(a, b),
            "value {k} changed: {a:?} -> {b:?} through {printed:?}"
        );
    }
    assert_eq!(back.to_string(), printed, "printing is not stable");
    let _ = format!("{ragged:?}");
}

/// The shape's invariants, from the outside: row splits start at 0, never decrease, and each
/// axis's last split is the next axis's row count; `coords_of` and `offset_of` are inverse.
fn check_shape(shape: &RaggedShape) {
    let num_axes = shape.num_axes();
    assert!(num_axes >= 2, "a parsed shape has {num_axes} axes");
    let mut rows = shape.dim0();
    for axis in 1..num_axes {
        let splits = shape.row_splits(axis);
        assert_eq!(splits.len(), rows + 1, "axis {axis}: row_splits length");
        assert_eq!(splits[0], 0, "axis {axis}: row_splits start");
        assert!(
            splits.windows(2).all(|w| w[0] <= w[1]),
            "axis {axis}: row_splits decrease"
        );
        rows = *splits.last().expect("non-empty") as usize;
    }
    assert_eq!(
        rows,
        shape.num_elements(),
        "last axis's split vs element count"
    );
    for offset in 0..shape.num_elements().min(MAX_COORD_CHECKS) {
        let coords = shape.coords_of(offset);
        assert_eq!(coords.len(), num_axes);
        assert_eq!(
            shape.offset_of(&coords),
            Some(offset),
            "offset {offset} -> {coords:?} -> back"
        );
    }
}

fn assert_same_shape(a: &RaggedShape, b: &RaggedShape, printed: &str) {
    assert_eq!(
        a.num_axes(),
        b.num_axes(),
        "axes changed through {printed:?}"
    );
    assert_eq!(a.dim0(), b.dim0(), "dim0 changed through {printed:?}");
    for axis in 1..a.num_axes() {
        assert_eq!(
            a.row_splits(axis),
            b.row_splits(axis),
            "axis {axis} changed through {printed:?}"
        );
    }
}
