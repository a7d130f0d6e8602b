//! Separable Gaussian blur with OpenCV's kernels (`getGaussianKernel`) and its 8-bit
//! fixed-point arithmetic: taps with 8 fraction bits, a 16-bit horizontal pass, a vertical
//! pass with 16 fraction bits rounded to the nearest level.

use std::mem::MaybeUninit;

use crate::convolve::{Border, Stencil1};
use crate::error::Error;
use crate::explicit::Array;
use crate::load::Threads;
use crate::shape::{Dim2, Shape};
use crate::source::Source;

use super::fixed_blur::blur_fixed;

/// OpenCV's sigma for a kernel size when none is given: `0.3 ((ksize - 1) / 2 - 1) + 0.8`.
pub fn sigma_for_ksize(ksize: usize) -> f64 {
    0.3 * ((ksize as f64 - 1.0) * 0.5 - 1.0) + 0.8
}

/// The 1-D Gaussian kernel of `cv2.getGaussianKernel(ksize, sigma)`: for `sigma <= 0` and
/// `ksize` 1, 3, 5 or 7 the fixed binomial-like tables, otherwise
/// `exp(-x^2 / (2 sigma^2))` normalised to sum 1, with `sigma <= 0` replaced by
/// [`sigma_for_ksize`]. `ksize` must be odd.
pub fn gaussian_kernel(ksize: usize, sigma: f64) -> Result<Vec<f64>, Error> {
    if ksize.is_multiple_of(2) {
        return Err(Error::InvalidArgument {
            name: "ksize",
            value: ksize.to_string(),
            rule: "a Gaussian kernel size must be odd",
        });
    }
    if sigma.is_nan() {
        return Err(Error::InvalidArgument {
            name: "sigma",
            value: sigma.to_string(),
            rule: "sigma must be a number",
        });
    }
    if sigma <= 0.0 {
        let table: Option<&[f64]> = match ksize {
            1 => Some(&[1.0]),
            3 => Some(&[0.25, 0.5, 0.25]),
            5 => Some(&[0.0625, 0.25, 0.375, 0.25, 0.0625]),
            7 => Some(&[
                0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125,
            ]),
            _ => None,
        };
        if let Some(t) = table {
            return Ok(t.to_vec());
        }
    }
    let sigma = if sigma > 0.0 {
        sigma
    } else {
        sigma_for_ksize(ksize)
    };
    let scale = -0.5 / (sigma * sigma);
    let half = (ksize as f64 - 1.0) * 0.5;
    let raw: Vec<f64> = (0..ksize)
        .map(|i| {
            let x = i as f64 - half;
            (scale * x * x).exp()
        })
        .collect();
    let sum: f64 = raw.iter().sum();
    Ok(raw.into_iter().map(|t| t / sum).collect())
}

/// The kernel of [`gaussian_kernel`] as fixed-point taps with 8 fraction bits summing to
/// exactly 256, as OpenCV's 8-bit path uses: each tap rounded down, then the missing units
/// given one each to the taps with the largest remainders (ties to the lower index).
pub fn gaussian_stencil<const N: usize>(sigma: f64) -> Result<Stencil1<u16, N>, Error> {
    let k = gaussian_kernel(N, sigma)?;
    let scaled: Vec<f64> = k.iter().map(|t| t * 256.0).collect();
    let mut taps: [u16; N] = std::array::from_fn(|i| scaled[i].floor() as u16);
    let missing = 256 - taps.iter().map(|&t| t as usize).sum::<usize>();
    let mut order: Vec<usize> = (0..N).collect();
    order.sort_by(|&i, &j| {
        (scaled[j] - scaled[j].floor())
            .total_cmp(&(scaled[i] - scaled[i].floor()))
            .then(i.cmp(&j))
    });
    for &i in order.iter().cycle().take(missing) {
        taps[i] += 1;
    }
    Ok(Stencil1 { taps })
}

/// Gaussian blur of a grey image with an `N x N` kernel (`cv2.GaussianBlur(img, (N, N),
/// sigma)`; `sigma <= 0` picks OpenCV's sigma for `N`), reading outside through `border`
/// (OpenCV's default is [`Border::Reflect101`]).
///
/// Integer arithmetic throughout: the row pass in `u16` (8 fraction bits, at most
/// `255 * 256`), the column pass in `u32` (16 fraction bits) rounded to the nearest level.
/// Bands keep only `N` intermediate rows.
pub fn gaussian_blur<const N: usize, A: Source<Shape = Dim2, Elem = u8>>(
    a: &A,
    sigma: f64,
    border: Border<u8>,
    threads: Threads,
) -> Result<Array<u8, Dim2>, Error> {
    let st = gaussian_stencil::<N>(sigma)?;
    // SAFETY: `blur_fixed` writes every pixel of the output it is handed (it checks
    // that the output holds the extent's pixels and that its row bands cover them).
    Ok(unsafe {
        blurred(a.extent(), |out| {
            blur_fixed(a, st.taps, border, threads, out)
        })
    })
}

/// Gaussian blur of an RGB image, each channel blurred as a grey image would be. The
/// kernel reads the interleaved rows directly (neighbours along a row are 3 bytes apart),
/// so no channel planes are made.
pub fn gaussian_blur_rgb<const N: usize, A: Source<Shape = Dim2, Elem = [u8; 3]>>(
    a: A,
    sigma: f64,
    border: Border<u8>,
    threads: Threads,
) -> Result<Array<[u8; 3], Dim2>, Error> {
    let st = gaussian_stencil::<N>(sigma)?;
    // SAFETY: as in `gaussian_blur`.
    Ok(unsafe {
        blurred(a.extent(), |out| {
            blur_fixed(&a, st.taps, border, threads, out)
        })
    })
}

/// A new image of `extent` that `blur` writes in full, without clearing its memory
/// first (clearing is a pass over the output on one thread, a fifth of a two-thread blur).
///
/// # Safety
///
/// `blur`, when it returns, must have written every element of the slice it is handed.
unsafe fn blurred<P: Copy>(
    extent: Dim2,
    blur: impl FnOnce(&mut [MaybeUninit<P>]),
) -> Array<P, Dim2> {
    // panics, naming the extent, when its size overflows
    let n = extent.size();
    let mut data: Vec<P> = Vec::with_capacity(n);
    blur(&mut data.spare_capacity_mut()[..n]);
    // SAFETY: `blur` wrote all `n` elements (the caller's contract); `P` is `Copy`, so
    // nothing needs dropping.
    unsafe { data.set_len(n) };
    Array::from_vec(extent, data).expect("the length is the extent's size")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delayed::SourceExt;
    use crate::explicit::View;
    use crate::separable::convolve_separable;

    fn wide_border(b: Border<u8>) -> Border<u16> {
        match b {
            Border::Constant(v) => Border::Constant(u16::from(v) << 8),
            Border::Replicate => Border::Replicate,
            Border::Reflect => Border::Reflect,
            Border::Reflect101 => Border::Reflect101,
            Border::Wrap => Border::Wrap,
        }
    }

    /// The generic path the fixed-point kernel replaced: the row pass in `u16` through
    /// `convolve_separable`, the column pass as exact `f32` sums of integer products.
    fn reference<const N: usize, A: Source<Shape = Dim2, Elem = u8>>(
        a: &A,
        sigma: f64,
        border: Border<u8>,
    ) -> Array<u8, Dim2> {
        let st = gaussian_stencil::<N>(sigma).unwrap();
        let st_f = Stencil1 {
            taps: st.taps.map(f32::from),
        };
        let round = |v: f32| ((v + 32768.0) * (1.0 / 65536.0)) as u8;
        convolve_separable(
            a,
            st,
            st_f,
            border,
            wide_border(border),
            round,
            Threads::Seq,
        )
    }

    fn check_against_reference<const N: usize>(rows: usize, cols: usize, sigma: f64) {
        let data: Vec<u8> = (0..rows * cols)
            .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
            .collect();
        let rgb: Vec<[u8; 3]> = data
            .iter()
            .enumerate()
            .map(|(i, &v)| [v, (i * 13 % 256) as u8, 255 - v])
            .collect();
        let a = View::new(Dim2(rows, cols), &data);
        let c = View::new(Dim2(rows, cols), &rgb);
        for border in [
            Border::Constant(77),
            Border::Replicate,
            Border::Reflect,
            Border::Reflect101,
            Border::Wrap,
        ] {
            let want = reference::<N, _>(&a, sigma, border);
            let planes = [0, 1, 2].map(|k| reference::<N, _>(&c.map(move |p| p[k]), sigma, border));
            for threads in [Threads::Seq, Threads::Fixed(3)] {
                // Lowered threshold: the small images run in bands too.
                let got = crate::with_parallel_threshold(0, || {
                    gaussian_blur::<N, _>(&a, sigma, border, threads)
                })
                .unwrap();
                if rows > 0 && cols > 0 {
                    assert_eq!(crate::load::last_band_count(), threads.count().min(rows));
                }
                assert_eq!(got, want, "{rows}x{cols} N={N} {border:?}");
                // A delayed source goes through the row-filling path.
                let delayed = gaussian_blur::<N, _>(&a.map(|v| v), sigma, border, threads).unwrap();
                assert_eq!(delayed, want, "{rows}x{cols} N={N} {border:?} delayed");
                let got_rgb = crate::with_parallel_threshold(0, || {
                    gaussian_blur_rgb::<N, _>(c, sigma, border, threads)
                })
                .unwrap();
                for (k, plane) in planes.iter().enumerate() {
                    assert!(
                        got_rgb
                            .as_slice()
                            .iter()
                            .zip(plane.as_slice())
                            .all(|(p, v)| p[k] == *v),
                        "{rows}x{cols} N={N} {border:?} channel {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn fixed_point_kernel_equals_the_generic_path() {
        for (rows, cols) in [(1, 1), (2, 3), (3, 1), (7, 9), (61, 300)] {
            check_against_reference::<3>(rows, cols, 0.0);
            check_against_reference::<5>(rows, cols, 0.0);
            check_against_reference::<7>(rows, cols, 2.5);
        }
        check_against_reference::<9>(130, 700, 0.0);
    }

    #[test]
    fn kernels_match_opencv() {
        // Printed by cv2.getGaussianKernel(9, 0) in OpenCV 5.0, which returns the kernel
        // already in 8-bit fixed point: the formula with sigma 1.7, times 256, rounded.
        let k9 = gaussian_kernel(9, 0.0).unwrap();
        let want = [0.015625, 0.05078125, 0.1171875, 0.19921875, 0.234375];
        for (a, b) in k9.iter().zip(want) {
            assert!((a - b).abs() < 2.5e-3, "{k9:?}");
        }
        let taps = gaussian_stencil::<9>(0.0).unwrap().taps;
        assert_eq!(
            taps,
            want.map(|w| (w * 256.0) as u16)
                .iter()
                .chain(&[51, 30, 13, 4])
                .copied()
                .collect::<Vec<_>>()[..]
        );
        assert_eq!(
            gaussian_kernel(5, 0.0).unwrap(),
            vec![0.0625, 0.25, 0.375, 0.25, 0.0625]
        );
        assert!((sigma_for_ksize(9) - 1.7).abs() < 1e-12);
        assert_eq!(
            gaussian_stencil::<5>(0.0).unwrap().taps,
            [16, 64, 96, 64, 16]
        );
        assert_eq!(
            gaussian_kernel(4, 1.0).unwrap_err(),
            Error::InvalidArgument {
                name: "ksize",
                value: "4".into(),
                rule: "a Gaussian kernel size must be odd",
            }
        );
        assert_eq!(
            gaussian_kernel(5, f64::NAN).unwrap_err(),
            Error::InvalidArgument {
                name: "sigma",
                value: "NaN".into(),
                rule: "sigma must be a number",
            }
        );
        // A wide, flat kernel: every tap about 2.5, the sum still exactly 256.
        let wide = gaussian_stencil::<101>(1e6).unwrap().taps;
        assert_eq!(wide.iter().map(|&t| t as u32).sum::<u32>(), 256);
        assert!(wide.iter().all(|&t| t == 2 || t == 3), "{wide:?}");
    }

    /// Float model of a separable blur with reflect-101 borders.
    fn naive_blur(data: &[u8], rows: usize, cols: usize, k: &[f64]) -> Vec<f64> {
        let r = k.len() as isize / 2;
        let refl = |p: isize, n: isize| {
            crate::convolve::border_interpolate(p, n as usize, &Border::<u8>::Reflect101).unwrap()
        };
        let mut tmp = vec![0.0; rows * cols];
        for y in 0..rows {
            for x in 0..cols {
                tmp[y * cols + x] = (0..k.len())
                    .map(|j| {
                        k[j] * data[y * cols + refl(x as isize + j as isize - r, cols as isize)]
                            as f64
                    })
                    .sum();
            }
        }
        let mut out = vec![0.0; rows * cols];
        for y in 0..rows {
            for x in 0..cols {
                out[y * cols + x] = (0..k.len())
                    .map(|i| {
                        k[i] * tmp[refl(y as isize + i as isize - r, rows as isize) * cols + x]
                    })
                    .sum();
            }
        }
        out
    }

    #[test]
    fn blur_is_within_one_level_of_a_float_model() {
        let (rows, cols) = (41, 37);
        let data: Vec<u8> = (0..rows * cols).map(|i| ((i * 7919) % 251) as u8).collect();
        let a = View::new(Dim2(rows, cols), &data);
        let got = gaussian_blur::<5, _>(&a, 0.0, Border::Reflect101, Threads::Seq).unwrap();
        let want = naive_blur(&data, rows, cols, &gaussian_kernel(5, 0.0).unwrap());
        for (g, w) in got.as_slice().iter().zip(&want) {
            assert!((*g as f64 - w).abs() <= 1.0, "{g} vs {w}");
        }
        let got7 = gaussian_blur::<7, _>(&a, 2.5, Border::Reflect101, Threads::Fixed(2)).unwrap();
        let want7 = naive_blur(&data, rows, cols, &gaussian_kernel(7, 2.5).unwrap());
        for (g, w) in got7.as_slice().iter().zip(&want7) {
            assert!((*g as f64 - w).abs() <= 1.0, "{g} vs {w}");
        }
        let rgb: Vec<[u8; 3]> = data.iter().map(|&v| [v, 255 - v, v / 2]).collect();
        let c = View::new(Dim2(rows, cols), &rgb);
        let blurred =
            gaussian_blur_rgb::<5, _>(c, 0.0, Border::Reflect101, Threads::Fixed(2)).unwrap();
        let green =
            gaussian_blur::<5, _>(&c.map(|p| p[1]), 0.0, Border::Reflect101, Threads::Seq).unwrap();
        assert!(blurred
            .as_slice()
            .iter()
            .zip(green.as_slice())
            .all(|(p, g)| p[1] == *g));
        assert_eq!(blurred.as_slice()[0][0], got.as_slice()[0]);
    }

    #[test]
    fn every_simd_level_equals_the_reference() {
        for (k, &cols) in [1usize, 31, 63, 64, 65, 129, 301].iter().enumerate() {
            let rows = 7;
            let data: Vec<u8> = (0..rows * cols)
                .map(|i| {
                    ((i as u64 + 977 * k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
                })
                .collect();
            let rgb: Vec<[u8; 3]> = data.iter().map(|&v| [v, v / 3, 255 - v]).collect();
            let a = View::new(Dim2(rows, cols), &data);
            let c = View::new(Dim2(rows, cols), &rgb);
            for border in [Border::Reflect101, Border::Replicate] {
                let want = reference::<5, _>(&a, 0.0, border);
                let planes =
                    [0, 1, 2].map(|k| reference::<5, _>(&c.map(move |p| p[k]), 0.0, border));
                for (g, rgb_out) in cpu_features::at_every_level(|_| {
                    crate::with_parallel_threshold(0, || {
                        (
                            gaussian_blur::<5, _>(&a, 0.0, border, Threads::Fixed(2)).unwrap(),
                            gaussian_blur_rgb::<5, _>(c, 0.0, border, Threads::Fixed(2)).unwrap(),
                        )
                    })
                }) {
                    assert_eq!(g, want, "{cols} columns {border:?}");
                    for (k, plane) in planes.iter().enumerate() {
                        assert!(
                            rgb_out
                                .as_slice()
                                .iter()
                                .zip(plane.as_slice())
                                .all(|(p, v)| p[k] == *v),
                            "{cols} columns {border:?} channel {k}"
                        );
                    }
                }
            }
        }
    }
}
