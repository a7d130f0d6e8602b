//! Separable convolution loaded band by band: the row pass of each band goes into a ring
//! of `N` row buffers that the column pass reads, so the intermediate image never exists in
//! full and stays in cache (the load strategy behind the Gaussian blur).

use rayon::prelude::*;

use crate::convolve::{border_interpolate, convolve_rows, Border, Stencil1, Tap};
use crate::explicit::Array;
use crate::load::{schedule_bands, Threads};
use crate::shape::Dim2;
use crate::source::Source;

/// A row of the intermediate image: an image row index, or a constant row.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum RowKey {
    Image(usize),
    Constant,
}

/// The rows `y - N/2 ..= y + N/2` of the intermediate, read through `border`.
fn needed_rows<K1: Copy, const N: usize>(
    y: usize,
    rows: usize,
    border: &Border<K1>,
) -> [RowKey; N] {
    std::array::from_fn(|i| {
        let p = y as isize + i as isize - (N / 2) as isize;
        match border_interpolate(p, rows, border) {
            Some(q) => RowKey::Image(q),
            None => RowKey::Constant,
        }
    })
}

/// One band of rows `band` of the output, written to `out` (the band's rows only).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn band<A, K1, K2, U, const N: usize, Fo>(
    a: &A,
    row: Stencil1<K1, N>,
    col: Stencil1<K2, N>,
    border: Border<A::Elem>,
    col_border: Border<K1>,
    finish: &Fo,
    band: std::ops::Range<usize>,
    out: &mut [U],
) where
    A: Source<Shape = Dim2>,
    K1: Tap + From<A::Elem>,
    K2: Tap + From<K1>,
    Fo: Fn(K2) -> U,
{
    let extent = a.extent();
    let Dim2(rows, cols) = extent;
    let constant = match col_border {
        Border::Constant(v) => v,
        _ => K1::ZERO,
    };
    let rows_pass = convolve_rows(a, row, border);
    let mut ring: Vec<(Option<RowKey>, Vec<K1>)> =
        (0..N).map(|_| (None, vec![K1::ZERO; cols])).collect();
    let mut acc = vec![K2::ZERO; cols];
    for y in band.clone() {
        let need = needed_rows::<K1, N>(y, rows, &col_border);
        // Bring every needed row into the ring, evicting rows no longer needed.
        for key in need {
            if ring.iter().any(|(k, _)| *k == Some(key)) {
                continue;
            }
            let slot = ring
                .iter()
                .position(|(k, _)| k.is_none_or(|k| !need.contains(&k)))
                .expect("N slots hold at most N needed rows");
            let (k, buf) = &mut ring[slot];
            match key {
                RowKey::Image(q) => {
                    // SAFETY: row q and the columns lie inside the extent; buf has `cols`.
                    unsafe { rows_pass.fill_span(extent, cols, q, 0..cols, buf.as_mut_ptr()) }
                }
                RowKey::Constant => buf.iter_mut().for_each(|v| *v = constant),
            }
            *k = Some(key);
        }
        acc.iter_mut().for_each(|v| *v = K2::ZERO);
        for (i, key) in need.iter().enumerate() {
            let tap = col.taps[i];
            let src = &ring
                .iter()
                .find(|(k, _)| *k == Some(*key))
                .expect("loaded above")
                .1;
            if tap == K2::ZERO {
            } else if tap == K2::ONE {
                acc.iter_mut()
                    .zip(src)
                    .for_each(|(s, &v)| *s = *s + K2::from(v));
            } else if tap == K2::MINUS_ONE {
                acc.iter_mut()
                    .zip(src)
                    .for_each(|(s, &v)| *s = *s - K2::from(v));
            } else {
                acc.iter_mut()
                    .zip(src)
                    .for_each(|(s, &v)| *s = *s + tap * K2::from(v));
            }
        }
        let out_row = &mut out[(y - band.start) * cols..(y - band.start + 1) * cols];
        out_row
            .iter_mut()
            .zip(&acc)
            .for_each(|(o, &v)| *o = finish(v));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn band_avx2<A, K1, K2, U, const N: usize, Fo>(
    a: &A,
    row: Stencil1<K1, N>,
    col: Stencil1<K2, N>,
    border: Border<A::Elem>,
    col_border: Border<K1>,
    finish: &Fo,
    rows: std::ops::Range<usize>,
    out: &mut [U],
) where
    A: Source<Shape = Dim2>,
    K1: Tap + From<A::Elem>,
    K2: Tap + From<K1>,
    Fo: Fn(K2) -> U,
{
    band(a, row, col, border, col_border, finish, rows, out)
}

/// Separable convolution of a 2-D source: `row` along the rows (reading outside through
/// `border`), then `col` down the columns of that intermediate (reading outside through
/// `col_border`, in the intermediate's type), then `finish` on every sum.
///
/// The result equals loading `convolve_rows(a, row, border)` and then
/// `convolve_cols(.., col, col_border).map(finish)`, bit for bit, but each band keeps only
/// `N` intermediate rows. Bands are static, so the result does not depend on `threads`.
#[allow(clippy::too_many_arguments)]
pub fn convolve_separable<A, K1, K2, U, const N: usize, Fo>(
    a: &A,
    row: Stencil1<K1, N>,
    col: Stencil1<K2, N>,
    border: Border<A::Elem>,
    col_border: Border<K1>,
    finish: Fo,
    threads: Threads,
) -> Array<U, Dim2>
where
    A: Source<Shape = Dim2>,
    K1: Tap + From<A::Elem>,
    K2: Tap + From<K1>,
    U: Copy + Send + Sync + Default,
    Fo: Fn(K2) -> U + Sync,
{
    let extent = a.extent();
    let Dim2(rows, cols) = extent;
    let mut out = Array::filled(extent, U::default());
    if rows == 0 || cols == 0 {
        return out;
    }
    let work = schedule_bands(&[(0..rows, 0..cols)], threads);
    let mut pieces = Vec::with_capacity(work.len());
    let mut rest = out.as_mut_slice();
    for (r, _) in &work {
        let (head, tail) = rest.split_at_mut(r.len() * cols);
        pieces.push((r.clone(), head));
        rest = tail;
    }
    let run = |(r, piece): (std::ops::Range<usize>, &mut [U])| {
        #[cfg(target_arch = "x86_64")]
        {
            if cpu_features::simd_level() >= cpu_features::SimdLevel::Avx2 {
                // SAFETY: the processor supports AVX2: `simd_level()` never exceeds the
                // detected level, and the AVX2 level is granted only with AVX2.
                return unsafe { band_avx2(a, row, col, border, col_border, &finish, r, piece) };
            }
        }
        band(a, row, col, border, col_border, &finish, r, piece)
    };
    if pieces.len() > 1 {
        pieces.into_par_iter().for_each(run);
    } else {
        pieces.into_iter().for_each(run);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convolve::convolve_cols;
    use crate::delayed::SourceExt;
    use crate::explicit::View;
    use crate::load::{compute_with, Plain};

    #[test]
    fn equals_two_passes_for_every_border() {
        for (rows, cols) in [(1, 1), (2, 7), (37, 300), (5, 3)] {
            let data: Vec<u8> = (0..rows * cols).map(|i| ((i * 7919) % 253) as u8).collect();
            let a = View::new(Dim2(rows, cols), &data);
            let row = Stencil1::new([3i32, -1, 7, 0, 2]);
            let col = Stencil1::new([2i64, 1, -3, 0, 5]);
            let borders: [(Border<u8>, Border<i32>); 5] = [
                (Border::Constant(9), Border::Constant(-4)),
                (Border::Replicate, Border::Replicate),
                (Border::Reflect, Border::Reflect),
                (Border::Reflect101, Border::Reflect101),
                (Border::Wrap, Border::Wrap),
            ];
            for (b1, b2) in borders {
                let tmp = compute_with(&convolve_rows(a, row, b1), Plain, Threads::Seq);
                let want = compute_with(
                    &convolve_cols(tmp.view(), col, b2).map(|v: i64| v),
                    Plain,
                    Threads::Seq,
                );
                for threads in [Threads::Seq, Threads::Fixed(3)] {
                    // at every vector level (the AVX2 copy of the band loop and the portable one)
                    for got in cpu_features::at_every_level(|_| {
                        crate::with_parallel_threshold(0, || {
                            convolve_separable(&a, row, col, b1, b2, |v: i64| v, threads)
                        })
                    }) {
                        assert_eq!(got, want, "{rows}x{cols} {b1:?}");
                    }
                    assert_eq!(crate::load::last_band_count(), threads.count().min(rows));
                }
            }
        }
    }
}
