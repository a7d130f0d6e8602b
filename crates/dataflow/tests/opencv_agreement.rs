//! Agreement with OpenCV on golden files written by `tests/golden/generate.py`
//! (opencv-python-headless): grey conversion and histogram identical, equalisation
//! identical, blur identical (the issue asks for one grey level), Sobel identical (goldens
//! from `tests/golden/sobel.py`), Canny equal on at least 99.9% of pixels.

use std::path::PathBuf;

use dataflow::image::{
    canny, equalize_hist, gaussian_blur, gaussian_blur_rgb, grey, histogram, sobel_dx, sobel_dy,
    sobel_xy, Canny, Norm,
};
use dataflow::{compute_with, Array, Border, Dim2, Plain, Threads, View};

const SCENES: [&str; 3] = ["landscape", "shapes", "checker"];

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

fn read_rgb(name: &str) -> image::RgbImage {
    image::open(golden(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .to_rgb8()
}

fn read_grey(name: &str) -> Array<u8, Dim2> {
    let img = image::open(golden(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let g = match img {
        image::DynamicImage::ImageLuma8(g) => g,
        other => panic!("{name}: expected 8-bit grey, got {:?}", other.color()),
    };
    View::from_luma(&g).to_array()
}

fn our_grey(scene: &str) -> Array<u8, Dim2> {
    let rgb = read_rgb(&format!("{scene}.png"));
    compute_with(&grey(View::from_rgb(&rgb)), Plain, Threads::Fixed(2))
}

#[track_caller]
fn max_diff(a: &[u8], b: &[u8]) -> u8 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

#[test]
fn grey_is_identical_to_cvtcolor() {
    for scene in SCENES {
        assert_eq!(
            our_grey(scene),
            read_grey(&format!("{scene}.grey.png")),
            "{scene}"
        );
    }
}

#[test]
fn histogram_is_identical_to_calchist() {
    for scene in SCENES {
        let text = std::fs::read_to_string(golden(&format!("{scene}.hist.txt"))).unwrap();
        let want: Vec<u64> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
        let g = read_grey(&format!("{scene}.grey.png"));
        for threads in [Threads::Seq, Threads::Fixed(2), Threads::Fixed(3)] {
            assert_eq!(histogram(&g, threads).to_vec(), want, "{scene}");
        }
    }
}

#[test]
fn equalisation_is_identical_to_equalizehist() {
    for scene in SCENES {
        let g = read_grey(&format!("{scene}.grey.png"));
        assert_eq!(
            equalize_hist(&g, Threads::Fixed(2)),
            read_grey(&format!("{scene}.equal.png")),
            "{scene}"
        );
    }
}

#[test]
fn blur_equals_gaussianblur() {
    for scene in SCENES {
        let g = read_grey(&format!("{scene}.grey.png"));
        let b5 = gaussian_blur::<5, _>(&g, 0.0, Border::Reflect101, Threads::Fixed(2)).unwrap();
        let want5 = read_grey(&format!("{scene}.blur5.png"));
        assert!(
            max_diff(b5.as_slice(), want5.as_slice()) == 0,
            "{scene} 5x5"
        );
        let b9 = gaussian_blur::<9, _>(&g, 2.0, Border::Reflect101, Threads::Seq).unwrap();
        let want9 = read_grey(&format!("{scene}.blur9s2.png"));
        assert!(
            max_diff(b9.as_slice(), want9.as_slice()) == 0,
            "{scene} 9x9 sigma 2"
        );
        let rgb = read_rgb(&format!("{scene}.png"));
        let brgb = gaussian_blur_rgb::<5, _>(
            View::from_rgb(&rgb),
            0.0,
            Border::Reflect101,
            Threads::Fixed(2),
        )
        .unwrap();
        let want_rgb = read_rgb(&format!("{scene}.blur5rgb.png"));
        let flat: Vec<u8> = brgb.as_slice().iter().flatten().copied().collect();
        assert!(max_diff(&flat, want_rgb.as_raw()) == 0, "{scene} rgb 5x5");
    }
}

#[track_caller]
fn check_canny(
    scene: &str,
    input: &Array<u8, Dim2>,
    low: f64,
    high: f64,
    norm: Norm,
    golden_name: &str,
) {
    let want = read_grey(golden_name);
    for threads in [Threads::Seq, Threads::Fixed(2), Threads::Fixed(4)] {
        let got = canny(
            input,
            &Canny {
                low,
                high,
                norm,
                threads,
            },
        )
        .unwrap();
        let same = got
            .as_slice()
            .iter()
            .zip(want.as_slice())
            .filter(|(a, b)| a == b)
            .count();
        let ratio = same as f64 / want.as_slice().len() as f64;
        assert!(
            ratio >= 0.999,
            "{scene} {golden_name}: {same} of {} pixels agree",
            want.as_slice().len()
        );
    }
}

#[test]
fn canny_agrees_with_cv2_canny() {
    for scene in SCENES {
        let g = read_grey(&format!("{scene}.grey.png"));
        check_canny(
            scene,
            &g,
            50.0,
            150.0,
            Norm::L1,
            &format!("{scene}.canny_l1.png"),
        );
        check_canny(
            scene,
            &g,
            30.0,
            90.0,
            Norm::L2,
            &format!("{scene}.canny_l2.png"),
        );
        let blurred = read_grey(&format!("{scene}.blur5.png"));
        check_canny(
            scene,
            &blurred,
            20.0,
            60.0,
            Norm::L1,
            &format!("{scene}.canny_blur.png"),
        );
    }
}

/// A signed 16-bit golden stored as a 16-bit grey PNG of `value + 32768`.
fn read_signed(name: &str) -> Vec<i16> {
    let img = image::open(golden(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let g = match img {
        image::DynamicImage::ImageLuma16(g) => g,
        other => panic!("{name}: expected 16-bit grey, got {:?}", other.color()),
    };
    g.as_raw()
        .iter()
        .map(|&v| (i32::from(v) - 32768) as i16)
        .collect()
}

#[test]
fn sobel_is_identical_to_cv2_sobel() {
    for scene in SCENES {
        let g = read_grey(&format!("{scene}.grey.png"));
        for (suffix, border) in [("", Border::Reflect101), ("_rep", Border::Replicate)] {
            let want_x = read_signed(&format!("{scene}.sobel_dx{suffix}.png"));
            let want_y = read_signed(&format!("{scene}.sobel_dy{suffix}.png"));
            assert_eq!(want_x.len(), g.as_slice().len(), "{scene}");
            for threads in [Threads::Seq, Threads::Fixed(2), Threads::Fixed(3)] {
                let (dx, dy) = sobel_xy(&g, border, threads);
                assert_eq!(dx.as_slice(), &want_x[..], "{scene}{suffix} dx {threads:?}");
                assert_eq!(dy.as_slice(), &want_y[..], "{scene}{suffix} dy {threads:?}");
            }
            // The delayed stencils give the same.
            let dx = compute_with(&sobel_dx(g.view(), border), Plain, Threads::Fixed(2));
            let dy = compute_with(&sobel_dy(g.view(), border), Plain, Threads::Fixed(2));
            assert_eq!(dx.as_slice(), &want_x[..], "{scene}{suffix} delayed dx");
            assert_eq!(dy.as_slice(), &want_y[..], "{scene}{suffix} delayed dy");
        }
    }
}
