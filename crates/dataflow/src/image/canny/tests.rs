//! The tests of Canny against a transcription of the algorithm, OpenCV's thresholds and
//! every vector level.

use super::classify::{decide, decide_chunk};
use super::*;
use crate::delayed::SourceExt;
use crate::explicit::View;

/// A direct transcription of the algorithm's definition: Sobel with replicated
/// borders, the same sector tests, then hysteresis by repeated sweeps until nothing
/// changes.
fn model(data: &[u8], rows: usize, cols: usize, low: i64, high: i64, l2: bool) -> Vec<u8> {
    let (dx, dy) = model_sobel(data, rows, cols);
    model_from_gradient(&dx, &dy, rows, cols, low, high, l2)
}

/// The Sobel gradient (replicated borders) of a grey image, by its definition.
fn model_sobel(data: &[u8], rows: usize, cols: usize) -> (Vec<i32>, Vec<i32>) {
    let px = |y: isize, x: isize| -> i32 {
        let y = y.clamp(0, rows as isize - 1) as usize;
        let x = x.clamp(0, cols as isize - 1) as usize;
        data[y * cols + x] as i32
    };
    let mut dx = vec![0i32; rows * cols];
    let mut dy = vec![0i32; rows * cols];
    for y in 0..rows as isize {
        for x in 0..cols as isize {
            let i = y as usize * cols + x as usize;
            dx[i] = px(y - 1, x + 1) + 2 * px(y, x + 1) + px(y + 1, x + 1)
                - px(y - 1, x - 1)
                - 2 * px(y, x - 1)
                - px(y + 1, x - 1);
            dy[i] = px(y + 1, x - 1) + 2 * px(y + 1, x) + px(y + 1, x + 1)
                - px(y - 1, x - 1)
                - 2 * px(y - 1, x)
                - px(y - 1, x + 1);
        }
    }
    (dx, dy)
}

fn model_norm(a: i32, b: i32, l2: bool) -> i64 {
    let (a, b) = (a as i64, b as i64);
    if l2 {
        a * a + b * b
    } else {
        a.abs() + b.abs()
    }
}

/// The model of an RGB image (pixels `[r, g, b]` in row order), as OpenCV's `Canny`
/// describes a multi-channel image: per pixel, the gradient of the channel whose
/// magnitude is largest, the first such channel in storage order. Also returns how many
/// pixels had a tie between channels with different gradients (so tests can check that
/// the tie rule was exercised).
fn model_rgb(
    data: &[[u8; 3]],
    rows: usize,
    cols: usize,
    low: i64,
    high: i64,
    l2: bool,
) -> (Vec<u8>, usize) {
    let channels: Vec<(Vec<i32>, Vec<i32>)> = (0..3)
        .map(|k| {
            let plane: Vec<u8> = data.iter().map(|p| p[k]).collect();
            model_sobel(&plane, rows, cols)
        })
        .collect();
    let (mut dx, mut dy) = (vec![0i32; rows * cols], vec![0i32; rows * cols]);
    let mut ties = 0;
    for i in 0..rows * cols {
        let mags: Vec<i64> = channels
            .iter()
            .map(|(x, y)| model_norm(x[i], y[i], l2))
            .collect();
        let best = *mags.iter().max().unwrap();
        let first = mags.iter().position(|&m| m == best).unwrap();
        let tied_other = (first + 1..3).any(|k| {
            mags[k] == best
                && (channels[k].0[i], channels[k].1[i])
                    != (channels[first].0[i], channels[first].1[i])
        });
        ties += usize::from(tied_other);
        (dx[i], dy[i]) = (channels[first].0[i], channels[first].1[i]);
    }
    (
        model_from_gradient(&dx, &dy, rows, cols, low, high, l2),
        ties,
    )
}

/// Suppression, thresholds and hysteresis of the gradient `dx`, `dy`, by their
/// definition.
fn model_from_gradient(
    dx: &[i32],
    dy: &[i32],
    rows: usize,
    cols: usize,
    low: i64,
    high: i64,
    l2: bool,
) -> Vec<u8> {
    let mag = |y: isize, x: isize| -> i64 {
        if y < 0 || x < 0 || y >= rows as isize || x >= cols as isize {
            return 0;
        }
        let i = y as usize * cols + x as usize;
        model_norm(dx[i], dy[i], l2)
    };
    let mut class = vec![0u8; rows * cols];
    for y in 0..rows as isize {
        for x in 0..cols as isize {
            let i = y as usize * cols + x as usize;
            let m = mag(y, x);
            if m <= low {
                continue;
            }
            // The angle in floating point: sector boundaries at 22.5 and 67.5 degrees.
            let (gx, gy) = (dx[i] as f64, dy[i] as f64);
            let t = gy.abs() / gx.abs().max(1e-300);
            let ok = if gy.abs() < gx.abs() * 0.41421356 || (gx == 0.0 && gy == 0.0) {
                m > mag(y, x - 1) && m >= mag(y, x + 1)
            } else if t > 2.41421356 || gx == 0.0 {
                m > mag(y - 1, x) && m >= mag(y + 1, x)
            } else {
                let s = if (gx < 0.0) != (gy < 0.0) { -1 } else { 1 };
                m > mag(y - 1, x - s) && m > mag(y + 1, x + s)
            };
            if ok {
                class[i] = if m > high { 2 } else { 1 };
            }
        }
    }
    loop {
        let mut changed = false;
        for y in 0..rows {
            for x in 0..cols {
                if class[y * cols + x] != 1 {
                    continue;
                }
                let near = (y.saturating_sub(1)..=(y + 1).min(rows - 1)).any(|yy| {
                    (x.saturating_sub(1)..=(x + 1).min(cols - 1))
                        .any(|xx| class[yy * cols + xx] == 2)
                });
                if near {
                    class[y * cols + x] = 2;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    class
        .into_iter()
        .map(|c| if c == 2 { 255 } else { 0 })
        .collect()
}

fn scene(rows: usize, cols: usize, seed: u64) -> Vec<u8> {
    (0..rows * cols)
        .map(|i| {
            let (y, x) = ((i / cols) as f64, (i % cols) as f64);
            let disc = ((y - rows as f64 / 2.0).powi(2) + (x - cols as f64 / 3.0).powi(2)).sqrt()
                < rows as f64 / 3.0;
            let noise = ((i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as f64;
            (if disc { 180.0 } else { 40.0 + x * 0.5 } + noise * 3.0).min(255.0) as u8
        })
        .collect()
}

#[test]
fn matches_the_model_and_is_deterministic_in_parallel() {
    for (rows, cols, seed) in [(64, 80, 1), (150, 130, 7), (33, 200, 3)] {
        let data = scene(rows, cols, seed);
        let a = View::new(Dim2(rows, cols), &data);
        for (norm, low, high) in [
            (Norm::L1, 20.0, 60.0),
            (Norm::L2, 15.0, 50.0),
            (Norm::L1, 90.0, 30.0),
        ] {
            let p = Canny {
                low,
                high,
                norm,
                threads: Threads::Seq,
            };
            let seq = canny(&a, &p).unwrap();
            let (l, h) = thresholds(&p).unwrap();
            assert_eq!(
                seq.as_slice(),
                &model(&data, rows, cols, l, h, norm == Norm::L2)[..],
                "{rows}x{cols} {norm:?}"
            );
            // A delayed source goes through the row-filling path.
            assert_eq!(canny(&a.map(|v| v), &p).unwrap(), seq);
            for t in [2, 3, 7] {
                // Two of the three sizes are under the default threshold: lower it
                // so that every size runs in bands.
                let par = crate::with_parallel_threshold(0, || {
                    let par = canny(
                        &a,
                        &Canny {
                            threads: Threads::Fixed(t),
                            ..p
                        },
                    );
                    assert_eq!(crate::load::last_band_count(), t, "threads {t}");
                    par
                })
                .unwrap();
                assert_eq!(par, seq, "threads {t}");
            }
        }
    }
}

#[test]
fn a_chunk_decided_at_once_equals_pixel_by_pixel() {
    // Gradients on and around the sector boundaries (|dy| / |dx| near tan 22.5 and
    // tan 67.5, both signs), magnitudes from a small range so that ties with the
    // neighbours are common, and thresholds on both sides of them.
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    };
    for round in 0..400 {
        let cols = 40;
        let rows: [Vec<i32>; 3] =
            std::array::from_fn(|_| (0..cols + 2).map(|_| next(9) as i32).collect());
        let g: Vec<[i16; 2]> = (0..cols)
            .map(|k| {
                let x = next(2041) as i16 - 1020;
                let y = match (round + k) % 4 {
                    // exactly on the lines |y| = tan(22.5) |x| and tan(67.5) |x|,
                    // as the fixed-point test rounds them
                    0 => ((i32::from(x).abs() * TG22) >> SHIFT) as i16,
                    1 => ((i32::from(x).abs() * (TG22 + (1 << (SHIFT + 1)))) >> SHIFT).min(1020)
                        as i16,
                    _ => next(2041) as i16 - 1020,
                };
                let y = if next(2) == 0 { -y } else { y };
                [x, y]
            })
            .collect();
        let (low, high) = (next(6) as i64, 2 + next(8) as i64);
        for c in [0usize, 3, 8] {
            let mut class = [NONE; 32];
            let refs = [&rows[0][..], &rows[1][..], &rows[2][..]];
            decide_chunk(&g[c..c + 32], refs, c, low as i32, high as i32, &mut class);
            for (k, &got) in class.iter().enumerate() {
                let j = c + k + 1;
                let mag_at =
                    |dy: isize, dx: isize| rows[(1 + dy) as usize][(j as isize + dx) as usize];
                let want = decide(g[c + k], rows[1][j], low, high, mag_at);
                assert_eq!(got, want, "round {round}, column {}", c + k);
            }
        }
    }
}

#[test]
fn dense_noise_matches_the_model() {
    // Pure noise with a low threshold of 1: nearly every chunk is decided at once.
    for (rows, cols) in [(37, 70), (20, 129)] {
        let data: Vec<u8> = (0..rows * cols)
            .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as u8)
            .collect();
        let a = View::new(Dim2(rows, cols), &data);
        for (norm, low, high) in [(Norm::L1, 1.0, 120.0), (Norm::L2, 1.0, 90.0)] {
            let p = Canny {
                low,
                high,
                norm,
                threads: Threads::Seq,
            };
            let (l, h) = thresholds(&p).unwrap();
            let want = model(&data, rows, cols, l, h, norm == Norm::L2);
            assert_eq!(canny(&a, &p).unwrap().as_slice(), &want[..], "{norm:?}");
            let two = crate::with_parallel_threshold(0, || {
                canny(
                    &a,
                    &Canny {
                        threads: Threads::Fixed(2),
                        ..p
                    },
                )
            })
            .unwrap();
            assert_eq!(two.as_slice(), &want[..], "{norm:?}, two bands");
        }
    }
}

#[test]
fn edge_positions_like_a_filter() {
    let map: Vec<u8> = (0..203u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 29) as u8 % 3)
        .collect();
    for range in [0..203, 5..200, 17..18, 9..9] {
        let want: Vec<usize> = range.clone().filter(|&p| map[p] == EDGE).collect();
        assert_eq!(edge_positions(&map, range), want);
    }
}

#[test]
fn thresholds_follow_opencv() {
    let p = Canny {
        low: 10.5,
        high: 3.2,
        norm: Norm::L2,
        threads: Threads::Seq,
    };
    assert_eq!(thresholds(&p).unwrap(), (10, 110));
    for (name, bad) in [
        ("low", Canny { low: f64::NAN, ..p }),
        (
            "high",
            Canny {
                high: f64::NAN,
                ..p
            },
        ),
    ] {
        assert_eq!(
            thresholds(&bad).unwrap_err(),
            Error::InvalidArgument {
                name,
                value: "NaN".into(),
                rule: "a Canny threshold must be a number",
            }
        );
        let a = View::new(Dim2(1, 1), &[0u8]);
        assert_eq!(
            canny(&a, &bad).unwrap_err().to_string(),
            format!("parameter `{name}` = NaN: a Canny threshold must be a number")
        );
    }
}

#[test]
fn every_simd_level_equals_the_model_at_the_vector_edges() {
    // Widths around the 32-column steps of the vector rows (shorter than a step,
    // one over, one under), images one to three rows high, and thresholds that keep
    // every pixel (negative), a few, or none.
    for (k, &cols) in [1usize, 2, 31, 32, 33, 63, 64, 65, 97].iter().enumerate() {
        for rows in [1usize, 2, 3, 17] {
            let data = scene(rows, cols, 90 + k as u64);
            let a = View::new(Dim2(rows, cols), &data);
            for (low, high) in [(-1.0, -1.0), (-1.0, 40.0), (10.0, 30.0), (5000.0, 6000.0)] {
                let p = Canny {
                    low,
                    high,
                    norm: Norm::L1,
                    threads: Threads::Fixed(2),
                };
                let (l, h) = thresholds(&p).unwrap();
                let want = model(&data, rows, cols, l, h, false);
                for got in cpu_features::at_every_level(|_| {
                    crate::with_parallel_threshold(0, || canny(&a, &p)).unwrap()
                }) {
                    assert_eq!(got.as_slice(), &want[..], "{rows}x{cols} {low}/{high}");
                }
            }
        }
    }
}

#[test]
fn the_avx512_rows_and_the_avx2_rows_equal_the_model_on_any_processor() {
    // The dispatch leaves the AVX-512 rows off where 512-bit operations are split (a
    // Zen 4): both choices still run here, at every level the processor has.
    for (k, &cols) in [31usize, 64, 65, 97, 200].iter().enumerate() {
        let rows = 23;
        let data = scene(rows, cols, 70 + k as u64);
        let a = View::new(Dim2(rows, cols), &data);
        let p = Canny {
            low: 20.0,
            high: 60.0,
            norm: Norm::L1,
            threads: Threads::Fixed(2),
        };
        let (l, h) = thresholds(&p).unwrap();
        let want = model(&data, rows, cols, l, h, false);
        for avx512_rows in [false, true] {
            for got in cpu_features::at_every_level(|_| {
                crate::with_parallel_threshold(0, || canny_with(&a, &p, avx512_rows)).unwrap()
            }) {
                assert_eq!(got.as_slice(), &want[..], "{cols} columns {avx512_rows}");
            }
        }
    }
    assert_eq!(avx512_rows_pay(), !cpu_features::splits_512_bit_ops());
}

#[test]
fn every_simd_level_equals_the_model() {
    for (k, &cols) in [1usize, 31, 63, 64, 65, 129, 301].iter().enumerate() {
        let rows = 40;
        let data = scene(rows, cols, 50 + k as u64);
        let a = View::new(Dim2(rows, cols), &data);
        for (norm, low, high) in [(Norm::L1, 20.0, 60.0), (Norm::L2, 15.0, 50.0)] {
            let p = Canny {
                low,
                high,
                norm,
                threads: Threads::Fixed(2),
            };
            let (l, h) = thresholds(&p).unwrap();
            let want = model(&data, rows, cols, l, h, norm == Norm::L2);
            for got in cpu_features::at_every_level(|_| {
                crate::with_parallel_threshold(0, || canny(&a, &p)).unwrap()
            }) {
                assert_eq!(got.as_slice(), &want[..], "{cols} columns {norm:?}");
            }
        }
    }
}

/// A colour scene: the grey scene in each channel, shifted differently, plus low-level
/// noise (values 0..4 in places), so that channels often tie on magnitude with different
/// gradients.
fn scene_rgb(rows: usize, cols: usize, seed: u64) -> Vec<[u8; 3]> {
    let base = scene(rows, cols, seed);
    let noise = scene(rows, cols, seed ^ 0xABCD);
    (0..rows * cols)
        .map(|i| {
            let (y, x) = (i / cols, i % cols);
            let tiny =
                |k: u64| ((i as u64 ^ (seed + k)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 62) as u8;
            if (y / 8 + x / 8) % 3 == 0 {
                // a flat patch of tiny noise: equal magnitudes across channels are common
                [tiny(1), tiny(2), tiny(3)]
            } else {
                [base[i], noise[i], base[(i + 7) % (rows * cols)]]
            }
        })
        .collect()
}

#[test]
fn rgb_matches_the_model_at_every_level_and_band_count() {
    let mut ties = 0;
    for (k, &(rows, cols)) in [
        (1usize, 1usize),
        (2, 33),
        (17, 31),
        (23, 64),
        (40, 65),
        (31, 129),
        (9, 301),
    ]
    .iter()
    .enumerate()
    {
        let data = scene_rgb(rows, cols, 40 + k as u64);
        let a = View::new(Dim2(rows, cols), &data);
        for (norm, low, high) in [
            (Norm::L1, 20.0, 60.0),
            (Norm::L2, 15.0, 50.0),
            (Norm::L1, 1.0, 3.0),
            (Norm::L2, 1.0, 4.0),
            (Norm::L1, -1.0, 40.0),
        ] {
            let p = Canny {
                low,
                high,
                norm,
                threads: Threads::Fixed(2),
            };
            let (l, h) = thresholds(&p).unwrap();
            let (want, t) = model_rgb(&data, rows, cols, l, h, norm == Norm::L2);
            ties += t;
            for avx512_rows in [false, true] {
                for got in cpu_features::at_every_level(|_| {
                    crate::with_parallel_threshold(0, || canny_rgb_with(&a, &p, avx512_rows))
                        .unwrap()
                }) {
                    assert_eq!(
                        got.as_slice(),
                        &want[..],
                        "{rows}x{cols} {norm:?} {low}/{high} {avx512_rows}"
                    );
                }
            }
            // a delayed source: rows come through `fill_span`, not as memory
            let delayed = (&a).map(|px: [u8; 3]| px);
            assert_eq!(
                canny_rgb(&delayed, &p).unwrap().as_slice(),
                &want[..],
                "{rows}x{cols} {norm:?}, delayed"
            );
            let seq = canny_rgb(
                &a,
                &Canny {
                    threads: Threads::Seq,
                    ..p
                },
            )
            .unwrap();
            assert_eq!(
                seq.as_slice(),
                &want[..],
                "{rows}x{cols} {norm:?}, one band"
            );
        }
    }
    assert!(
        ties > 100,
        "only {ties} channel ties: the tie rule went untested"
    );
}

#[test]
fn rgb_with_equal_channels_is_grey_canny_and_bad_thresholds_are_refused() {
    // three equal channels tie everywhere: the result is the grey image's
    let (rows, cols) = (37, 70);
    let grey = scene(rows, cols, 5);
    let rgb: Vec<[u8; 3]> = grey.iter().map(|&v| [v, v, v]).collect();
    let (g, c) = (
        View::new(Dim2(rows, cols), &grey),
        View::new(Dim2(rows, cols), &rgb),
    );
    for norm in [Norm::L1, Norm::L2] {
        let p = Canny {
            low: 20.0,
            high: 60.0,
            norm,
            threads: Threads::Fixed(2),
        };
        assert_eq!(
            canny_rgb(&c, &p).unwrap().as_slice(),
            canny(&g, &p).unwrap().as_slice()
        );
    }
    let bad = Canny {
        low: f64::NAN,
        ..Canny::default()
    };
    assert_eq!(
        canny_rgb(&c, &bad).unwrap_err().to_string(),
        "parameter `low` = NaN: a Canny threshold must be a number"
    );
    let empty: Vec<[u8; 3]> = Vec::new();
    let e = View::new(Dim2(0, 5), &empty);
    assert_eq!(
        canny_rgb(&e, &Canny::default()).unwrap().extent(),
        Dim2(0, 5)
    );
}

#[test]
fn l2_at_every_level_equals_the_model_at_the_vector_edges() {
    for (k, &cols) in [1usize, 2, 31, 32, 33, 63, 64, 65, 97].iter().enumerate() {
        for rows in [1usize, 2, 3, 17] {
            let data = scene(rows, cols, 190 + k as u64);
            let a = View::new(Dim2(rows, cols), &data);
            for (low, high) in [(-1.0, -1.0), (-1.0, 40.0), (10.0, 30.0), (2000.0, 3000.0)] {
                let p = Canny {
                    low,
                    high,
                    norm: Norm::L2,
                    threads: Threads::Fixed(2),
                };
                let (l, h) = thresholds(&p).unwrap();
                let want = model(&data, rows, cols, l, h, true);
                for avx512_rows in [false, true] {
                    for got in cpu_features::at_every_level(|_| {
                        crate::with_parallel_threshold(0, || canny_with(&a, &p, avx512_rows))
                            .unwrap()
                    }) {
                        assert_eq!(got.as_slice(), &want[..], "{rows}x{cols} {low}/{high}");
                    }
                }
            }
        }
    }
}
