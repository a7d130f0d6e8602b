//! dataflow's validating constructors: `View::try_new`, `Array::from_vec` and `Array::filled`
//! over `Dim1`/`Dim2`/`Dim3` extents from the bytes (edge sizes included), every element then
//! read back through `Source` and compared with the buffer; and `border_interpolate`
//! against a closed-form model of OpenCV's border modes.

use dataflow::{border_interpolate, Array, Border, Dim1, Dim2, Dim3, Error, Shape, Source, View};

use crate::Bytes;

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 4096;

/// `Array::filled` is called only up to this many elements (larger sizes are legitimate
/// allocations, not bugs).
const MAX_FILLED: usize = 1 << 16;

/// The first byte picks the constructor, the next bytes the extent (or the border
/// arguments), the rest is the element buffer.
pub fn dataflow_new(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let mut bytes = Bytes::new(data);
    match bytes.byte() % 4 {
        0 => {
            let extent = Dim1(size(&mut bytes));
            constructors(extent, Some(extent.0), &mut bytes);
        }
        1 => {
            let extent = Dim2(size(&mut bytes), size(&mut bytes));
            constructors(extent, extent.0.checked_mul(extent.1), &mut bytes);
        }
        2 => {
            let extent = Dim3(size(&mut bytes), size(&mut bytes), size(&mut bytes));
            let product = extent
                .0
                .checked_mul(extent.1)
                .and_then(|p| p.checked_mul(extent.2));
            constructors(extent, product, &mut bytes);
        }
        _ => border(&mut bytes),
    }
}

/// A size: mostly small, sometimes one of the values where products wrap.
fn size(bytes: &mut Bytes<'_>) -> usize {
    match bytes.byte() {
        0xff => usize::MAX,
        0xfe => 1 << 32,
        0xfd => (1 << 62) + 1,
        0xfc => 1 << 63,
        0xfb => usize::from(bytes.u16()),
        b => usize::from(b % 64),
    }
}

/// `product` is the extent's true element count (`None` when it overflows `usize`).
fn constructors<S: Shape>(extent: S, product: Option<usize>, bytes: &mut Bytes<'_>) {
    // an extent whose size overflows is refused by every fallible constructor (issue 17,
    // item 3: `size()` used to wrap, so impossible extents were accepted)
    let Some(product) = product else {
        let overflow =
            |result: Result<(), Error>| matches!(result, Err(Error::SizeOverflow { .. }));
        let buffer = bytes.rest();
        assert!(
            overflow(View::try_new(extent, buffer).map(|_| ())),
            "View::try_new of {extent:?}"
        );
        assert!(
            overflow(Array::from_vec(extent, buffer.to_vec()).map(|_| ())),
            "Array::from_vec of {extent:?}"
        );
        assert!(
            overflow(Array::try_filled(extent, 0u8).map(|_| ())),
            "Array::try_filled of {extent:?}"
        );
        return;
    };
    assert_eq!(extent.size(), product, "size of {extent:?}");
    let buffer = bytes.rest();
    match View::try_new(extent, buffer) {
        Ok(view) => {
            assert_eq!(
                buffer.len(),
                product,
                "View::try_new accepted a wrong length"
            );
            for (k, &want) in buffer.iter().enumerate() {
                assert_eq!(view.linear_index(k), want, "view element {k}");
            }
            let copy = view.to_array();
            assert_eq!(copy.as_slice(), buffer, "to_array");
        }
        Err(_) => assert_ne!(
            buffer.len(),
            product,
            "View::try_new refused the right length"
        ),
    }
    let owned = bytes.rest().to_vec();
    match Array::from_vec(extent, owned.clone()) {
        Ok(array) => {
            assert_eq!(
                owned.len(),
                product,
                "Array::from_vec accepted a wrong length"
            );
            for (k, &want) in owned.iter().enumerate() {
                assert_eq!(array.linear_index(k), want, "array element {k}");
            }
        }
        Err(_) => assert_ne!(
            owned.len(),
            product,
            "Array::from_vec refused the right length"
        ),
    }
    if product <= MAX_FILLED {
        let value = bytes.byte();
        let filled = Array::filled(extent, value);
        assert_eq!(filled.as_slice().len(), product, "Array::filled length");
        assert!(
            filled.as_slice().iter().all(|&v| v == value),
            "Array::filled value"
        );
    }
}

/// `border_interpolate(p, len, mode)` against a closed form of OpenCV's
/// `borderInterpolate`.
fn border(bytes: &mut Bytes<'_>) {
    let len = usize::from(bytes.u16() % 512);
    let raw = bytes.u16() as i16;
    let p = match bytes.byte() % 4 {
        0 => isize::from(raw),
        1 => isize::from(raw) * 1000,
        2 => isize::from(raw) + len as isize,
        _ => -isize::from(raw),
    };
    let mode = match bytes.byte() % 5 {
        0 => Border::Constant(0u8),
        1 => Border::Replicate,
        2 => Border::Reflect,
        3 => Border::Reflect101,
        _ => Border::Wrap,
    };
    // length 0 has no position to map to (issue 17, item 9: it used to loop forever or
    // divide by zero); far positions take constant time, whatever the length
    if len == 0 {
        assert_eq!(border_interpolate(p, len, &mode), None, "length 0");
        return;
    }
    assert_eq!(
        border_interpolate(p, len, &mode),
        border_model(p, len, &mode),
        "border_interpolate({p}, {len}, {mode:?})"
    );
}

/// OpenCV's border modes in closed form, for `len >= 1`.
fn border_model(p: isize, len: usize, mode: &Border<u8>) -> Option<usize> {
    let n = len as isize;
    if (0..n).contains(&p) {
        return Some(p as usize);
    }
    let q = match mode {
        Border::Constant(_) => return None,
        Border::Replicate => p.clamp(0, n - 1),
        Border::Wrap => p.rem_euclid(n),
        Border::Reflect => {
            // period 2n: 0 1 .. n-1 n-1 .. 1 0
            let r = p.rem_euclid(2 * n);
            if r < n {
                r
            } else {
                2 * n - 1 - r
            }
        }
        Border::Reflect101 if n == 1 => 0,
        Border::Reflect101 => {
            // period 2n - 2: 0 1 .. n-1 n-2 .. 1
            let r = p.rem_euclid(2 * n - 2);
            if r < n {
                r
            } else {
                2 * n - 2 - r
            }
        }
    };
    Some(q as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn border_model_matches_opencv_examples() {
        // OpenCV's documentation: for "abcdefgh", reflect is "fedcba|abcdefgh|hgfedcb",
        // reflect101 "gfedcb|abcdefgh|gfedcba", wrap "cdefgh|abcdefgh|abcdefg".
        let check = |mode: Border<u8>, left: [usize; 3], right: [usize; 3]| {
            for (k, p) in [-1isize, -2, -3].into_iter().enumerate() {
                assert_eq!(border_model(p, 8, &mode), Some(left[k]), "{mode:?} {p}");
            }
            for (k, p) in [8isize, 9, 10].into_iter().enumerate() {
                assert_eq!(border_model(p, 8, &mode), Some(right[k]), "{mode:?} {p}");
            }
        };
        check(Border::Reflect, [0, 1, 2], [7, 6, 5]);
        check(Border::Reflect101, [1, 2, 3], [6, 5, 4]);
        check(Border::Wrap, [7, 6, 5], [0, 1, 2]);
        check(Border::Replicate, [0, 0, 0], [7, 7, 7]);
        assert_eq!(border_model(-5, 8, &Border::Constant(0)), None);
    }
}
