//! Hysteresis: the 8-connected flood that grows edges from `EDGE` pixels into `WEAK`
//! ones, and the edge positions of a row, which seed the flood across band borders.

use super::{EDGE, WEAK};

/// Grows edges from the `EDGE` positions `(y, x)` on `stack` into 8-connected `WEAK`
/// pixels of `map` (rows `0..rows` of width `cols`).
pub(super) fn flood(map: &mut [u8], rows: usize, cols: usize, mut stack: Vec<(u32, u32)>) {
    assert_eq!(map.len(), rows * cols, "flood: a map of the wrong size");
    while let Some((y, x)) = stack.pop() {
        let (y, x) = (y as usize, x as usize);
        if y > 0 && y + 1 < rows && x > 0 && x + 1 < cols {
            // Inside the image, the eight neighbours lie at fixed offsets from `at`: no
            // clipping, no row slices (the checked path below took four times as long).
            let at = y * cols + x;
            let (up, down) = (at - cols, at + cols);
            // `WEAK` is the only class with bit 0 set: one test for the eight neighbours,
            // since most pixels popped have none left to grow into
            let any = map[up - 1]
                | map[up]
                | map[up + 1]
                | map[at - 1]
                | map[at + 1]
                | map[down - 1]
                | map[down]
                | map[down + 1];
            if any & WEAK == 0 {
                continue;
            }
            for (p, ny, nx) in [
                (up - 1, y - 1, x - 1),
                (up, y - 1, x),
                (up + 1, y - 1, x + 1),
                (at - 1, y, x - 1),
                (at + 1, y, x + 1),
                (down - 1, y + 1, x - 1),
                (down, y + 1, x),
                (down + 1, y + 1, x + 1),
            ] {
                if map[p] == WEAK {
                    map[p] = EDGE;
                    stack.push((ny as u32, nx as u32));
                }
            }
            continue;
        }
        let y0 = y.saturating_sub(1);
        let y1 = (y + 1).min(rows - 1);
        let x0 = x.saturating_sub(1);
        let x1 = (x + 1).min(cols - 1);
        for yy in y0..=y1 {
            let line = &mut map[yy * cols..(yy + 1) * cols];
            for (xx, v) in line[x0..=x1].iter_mut().enumerate() {
                if *v == WEAK {
                    *v = EDGE;
                    stack.push((yy as u32, (x0 + xx) as u32));
                }
            }
        }
    }
}

/// Positions inside `range` of `map` holding `EDGE`, eight bytes at a time: `EDGE` is the
/// only class with bit 1 set, so a word's bits `0x02` mark its edge bytes.
pub(super) fn edge_positions(map: &[u8], range: std::ops::Range<usize>) -> Vec<usize> {
    const MARK: u64 = 0x0202_0202_0202_0202;
    let mut out = Vec::new();
    let slice = &map[range.clone()];
    let words = slice.chunks_exact(8);
    let tail_start = range.start + slice.len() / 8 * 8;
    let tail = words.remainder();
    for (w, word) in words.enumerate() {
        let mut bits = u64::from_le_bytes(word.try_into().expect("8 bytes")) & MARK;
        while bits != 0 {
            out.push(range.start + w * 8 + (bits.trailing_zeros() / 8) as usize);
            bits &= bits - 1;
        }
    }
    out.extend(
        tail.iter()
            .enumerate()
            .filter(|(_, &v)| v == EDGE)
            .map(|(k, _)| tail_start + k),
    );
    out
}
