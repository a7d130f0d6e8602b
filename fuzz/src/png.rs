//! PNG bytes through dataflow's image pipeline: decode (8-bit grey or RGB, as
//! `read_grey_png` takes them), grey, histogram, equalisation, Gaussian blur, Sobel and Canny,
//! each run sequentially and on two row bands (the results must be equal), the grey
//! conversion and the histogram checked against naive loops, and the grey image written as
//! PNG and read back.

use std::io::Cursor;

use dataflow::image::{
    canny, equalize_hist, gaussian_blur, gaussian_blur_rgb, grey, histogram, rgb_to_grey, sobel_dx,
    sobel_dy, Canny, Norm,
};
use dataflow::{compute_with, Array, Border, Dim2, Plain, Threads, View};

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 1 << 16;

/// The decoder refuses images wider or taller than this, and allocations above
/// [`MAX_DECODE_BYTES`]; the pipeline runs only on images of at most [`MAX_PIXELS`].
const MAX_SIDE: u32 = 1024;
const MAX_DECODE_BYTES: u64 = 64 << 20;
const MAX_PIXELS: usize = 128 * 128;

/// Decodes the PNG and runs the pipeline on it.
pub fn png_pipeline(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let mut reader = image::ImageReader::with_format(Cursor::new(data), image::ImageFormat::Png);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    let Ok(img) = reader.decode() else {
        return;
    };
    if (img.width() as usize) * (img.height() as usize) > MAX_PIXELS {
        return;
    }
    // The parameters come from the image itself, so the engine can steer them.
    let seed: Vec<u8> = img.as_bytes().iter().take(4).copied().collect();
    let pick = |k: usize| seed.get(k).copied().unwrap_or(0);
    let border = match pick(0) % 5 {
        0 => Border::Constant(pick(1)),
        1 => Border::Replicate,
        2 => Border::Reflect,
        3 => Border::Reflect101,
        _ => Border::Wrap,
    };
    let grey_image = match img {
        image::DynamicImage::ImageLuma8(g) => {
            let view = View::from_luma(&g);
            assert_eq!(view.as_slice(), g.as_raw().as_slice(), "luma view");
            view.to_array()
        }
        image::DynamicImage::ImageRgb8(rgb) => {
            let view = View::from_rgb(&rgb);
            let converted = compute_with(&grey(view), Plain, Threads::Seq);
            for (k, px) in rgb.as_raw().chunks_exact(3).enumerate() {
                assert_eq!(
                    converted.as_slice()[k],
                    rgb_to_grey([px[0], px[1], px[2]]),
                    "grey of pixel {k}"
                );
            }
            let banded = compute_with(&grey(view), Plain, Threads::Fixed(2));
            assert_eq!(converted.as_slice(), banded.as_slice(), "grey on two bands");
            let one = gaussian_blur_rgb::<3, _>(view, 0.0, border, Threads::Seq);
            let two = gaussian_blur_rgb::<3, _>(view, 0.0, border, Threads::Fixed(2));
            assert_eq!(
                one.ok().map(Array::into_vec),
                two.ok().map(Array::into_vec),
                "rgb blur"
            );
            converted
        }
        _ => return,
    };
    pipeline(&grey_image, border, pick(2), pick(3));
}

fn pipeline(a: &Array<u8, Dim2>, border: Border<u8>, low: u8, high: u8) {
    let mut model = [0u64; 256];
    for &v in a.as_slice() {
        model[usize::from(v)] += 1;
    }
    assert_eq!(histogram(a, Threads::Seq), model, "histogram");
    assert_eq!(
        histogram(a, Threads::Fixed(2)),
        model,
        "histogram on two bands"
    );
    let eq1 = equalize_hist(a, Threads::Seq);
    let eq2 = equalize_hist(a, Threads::Fixed(2));
    assert_eq!(eq1.as_slice(), eq2.as_slice(), "equalize_hist on two bands");

    let blur = |threads| {
        gaussian_blur::<3, _>(a, 0.0, border, threads)
            .ok()
            .map(Array::into_vec)
    };
    assert_eq!(
        blur(Threads::Seq),
        blur(Threads::Fixed(2)),
        "blur 3 on two bands"
    );
    let blur5 = |threads| {
        gaussian_blur::<5, _>(a, 1.1, border, threads)
            .ok()
            .map(Array::into_vec)
    };
    assert_eq!(
        blur5(Threads::Seq),
        blur5(Threads::Fixed(2)),
        "blur 5 on two bands"
    );

    let dx = |threads| compute_with(&sobel_dx(a.view(), border), Plain, threads).into_vec();
    assert_eq!(
        dx(Threads::Seq),
        dx(Threads::Fixed(2)),
        "sobel dx on two bands"
    );
    let dy = |threads| compute_with(&sobel_dy(a.view(), border), Plain, threads).into_vec();
    assert_eq!(
        dy(Threads::Seq),
        dy(Threads::Fixed(2)),
        "sobel dy on two bands"
    );

    for norm in [Norm::L1, Norm::L2] {
        let edges = |threads| {
            let params = Canny {
                low: f64::from(low),
                high: f64::from(high) * 2.0,
                norm,
                threads,
            };
            canny(a, &params).ok().map(Array::into_vec)
        };
        let one = edges(Threads::Seq);
        assert_eq!(one, edges(Threads::Fixed(2)), "canny {norm:?} on two bands");
        if let Some(map) = &one {
            assert!(
                map.iter().all(|&v| v == 0 || v == 255),
                "canny writes 0 or 255"
            );
        }
    }

    // PNG out and in again.
    let mut png = Vec::new();
    image::DynamicImage::ImageLuma8(a.clone().into_luma())
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("a grey image encodes");
    let back = image::load_from_memory_with_format(&png, image::ImageFormat::Png)
        .expect("an encoded image decodes")
        .into_luma8();
    let extent = a.extent();
    assert_eq!(
        (back.height() as usize, back.width() as usize),
        (extent.0, extent.1)
    );
    assert_eq!(back.as_raw().as_slice(), a.as_slice(), "PNG round trip");
}
