//! cv2's image calls for `arrays.image`, over dataflow's image pipeline: uint8 numpy images
//! in (grey `(H, W)` or RGB `(H, W, 3)`, read in place when C-contiguous, otherwise copied
//! once), numpy arrays out that own the Rust buffer.

use std::borrow::Cow;

use dataflow::image::{self as img, Canny, Norm};
use dataflow::{Border, Dim2, SourceExt, Threads, View};
use numpy::ndarray::{Array2, Array3};
use numpy::{IntoPyArray, PyArray2, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyNotImplementedError, PyValueError};
use pyo3::prelude::*;

fn flow_err(err: dataflow::Error) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// A uint8 image's pixels in C order (borrowed when the array is C-contiguous), with its
/// height, width and channel count (1 or 3).
struct Pixels<'a> {
    data: Cow<'a, [u8]>,
    rows: usize,
    cols: usize,
    channels: usize,
}

fn pixels<'a>(image: &'a PyReadonlyArrayDyn<'_, u8>, what: &str) -> PyResult<Pixels<'a>> {
    let shape = image.shape();
    let (rows, cols, channels) = match *shape {
        [rows, cols] => (rows, cols, 1),
        [rows, cols, 1] => (rows, cols, 1),
        [rows, cols, 3] => (rows, cols, 3),
        _ => {
            return Err(PyValueError::new_err(format!(
                "{what}: an image of shape {shape:?}: expected (height, width) grey or \
                 (height, width, 3) RGB uint8 pixels"
            )))
        }
    };
    // `as_slice` also takes Fortran order, whose memory is not in pixel order here
    let data = match image.as_slice() {
        Ok(slice) if image.is_c_contiguous() => Cow::Borrowed(slice),
        // not C-contiguous: one copy into C order
        _ => Cow::Owned(image.as_array().iter().copied().collect()),
    };
    Ok(Pixels {
        data,
        rows,
        cols,
        channels,
    })
}

fn grey_view<'a>(p: &'a Pixels<'_>, what: &str) -> PyResult<View<'a, u8, Dim2>> {
    if p.channels != 1 {
        return Err(PyNotImplementedError::new_err(format!(
            "{what} takes a grey image (height, width); convert with cvt_color(image, \
             COLOR_RGB2GRAY) first"
        )));
    }
    View::try_new(Dim2(p.rows, p.cols), &p.data).map_err(flow_err)
}

fn rgb_view<'a>(p: &'a Pixels<'_>) -> PyResult<View<'a, [u8; 3], Dim2>> {
    let (pixels, rest) = p.data.as_chunks::<3>();
    debug_assert!(rest.is_empty(), "three channels per pixel");
    View::try_new(Dim2(p.rows, p.cols), pixels).map_err(flow_err)
}

fn grey_out(py: Python<'_>, a: dataflow::Array<u8, Dim2>) -> Bound<'_, PyArray2<u8>> {
    let Dim2(rows, cols) = a.extent();
    Array2::from_shape_vec((rows, cols), a.into_vec())
        .expect("an image's extent matches its pixels")
        .into_pyarray(py)
}

/// OpenCV's border codes (`cv2.BORDER_*`), for the modes dataflow has.
fn border_of(code: i32) -> PyResult<Border<u8>> {
    Ok(match code {
        0 => Border::Constant(0),
        1 => Border::Replicate,
        2 => Border::Reflect,
        3 => Border::Wrap,
        4 => Border::Reflect101,
        _ => {
            return Err(PyNotImplementedError::new_err(format!(
                "borderType {code}: BORDER_CONSTANT (0), BORDER_REPLICATE (1), BORDER_REFLECT \
                 (2), BORDER_WRAP (3), BORDER_REFLECT_101 (4, the default) are supported"
            )))
        }
    })
}

/// `cv2.Canny(image, threshold1, threshold2, apertureSize=3, L2gradient=False)`, grey or
/// 3-channel (RGB or BGR: channels count in storage order, as in OpenCV).
#[pyfunction]
#[pyo3(signature = (image, threshold1, threshold2, aperture_size=3, l2_gradient=false))]
pub fn image_canny<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
    threshold1: f64,
    threshold2: f64,
    aperture_size: i32,
    l2_gradient: bool,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    if aperture_size != 3 {
        return Err(PyNotImplementedError::new_err(format!(
            "apertureSize {aperture_size}: only OpenCV's default, 3, is supported"
        )));
    }
    let p = pixels(&image, "canny")?;
    let params = Canny {
        low: threshold1,
        high: threshold2,
        norm: if l2_gradient { Norm::L2 } else { Norm::L1 },
        threads: Threads::All,
    };
    let edges = if p.channels == 3 {
        // OpenCV's 3-channel Canny: the channel of largest gradient at each pixel
        let view = rgb_view(&p)?;
        py.allow_threads(|| img::canny_rgb(&view, &params))
    } else {
        let view = grey_view(&p, "canny")?;
        py.allow_threads(|| img::canny(&view, &params))
    }
    .map_err(flow_err)?;
    Ok(grey_out(py, edges))
}

/// Calls `$body` with the const kernel size `N` equal to `$ksize` (odd, 1..=31).
macro_rules! with_ksize {
    ($ksize:expr, $n:ident => $body:expr) => {
        match $ksize {
            1 => {
                const $n: usize = 1;
                $body
            }
            3 => {
                const $n: usize = 3;
                $body
            }
            5 => {
                const $n: usize = 5;
                $body
            }
            7 => {
                const $n: usize = 7;
                $body
            }
            9 => {
                const $n: usize = 9;
                $body
            }
            11 => {
                const $n: usize = 11;
                $body
            }
            13 => {
                const $n: usize = 13;
                $body
            }
            15 => {
                const $n: usize = 15;
                $body
            }
            17 => {
                const $n: usize = 17;
                $body
            }
            19 => {
                const $n: usize = 19;
                $body
            }
            21 => {
                const $n: usize = 21;
                $body
            }
            23 => {
                const $n: usize = 23;
                $body
            }
            25 => {
                const $n: usize = 25;
                $body
            }
            27 => {
                const $n: usize = 27;
                $body
            }
            29 => {
                const $n: usize = 29;
                $body
            }
            31 => {
                const $n: usize = 31;
                $body
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "ksize {other}: an odd kernel size from 1 to 31"
                )))
            }
        }
    };
}

/// `cv2.GaussianBlur(image, (ksize, ksize), sigma, borderType=...)`, grey or RGB.
#[pyfunction]
#[pyo3(signature = (image, ksize, sigma, border_type=4))]
pub fn image_gaussian_blur<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
    ksize: usize,
    sigma: f64,
    border_type: i32,
) -> PyResult<Bound<'py, PyAny>> {
    let border = border_of(border_type)?;
    let p = pixels(&image, "gaussian_blur")?;
    let (rows, cols) = (p.rows, p.cols);
    if p.channels == 1 {
        let view = grey_view(&p, "gaussian_blur")?;
        let out = with_ksize!(ksize, N => py.allow_threads(|| {
            img::gaussian_blur::<N, _>(&view, sigma, border, Threads::All)
        }))
        .map_err(flow_err)?;
        return Ok(grey_out(py, out).into_any());
    }
    let view = rgb_view(&p)?;
    let out = with_ksize!(ksize, N => py.allow_threads(|| {
        img::gaussian_blur_rgb::<N, _>(view, sigma, border, Threads::All)
    }))
    .map_err(flow_err)?;
    Ok(
        Array3::from_shape_vec((rows, cols, 3), out.into_vec().into_flattened())
            .expect("an image's extent matches its pixels")
            .into_pyarray(py)
            .into_any(),
    )
}

/// `cv2.Sobel(image, cv2.CV_16S, dx, dy, ksize=3, borderType=...)`: int16 derivatives.
#[pyfunction]
#[pyo3(signature = (image, dx, dy, border_type=4))]
pub fn image_sobel<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
    dx: i32,
    dy: i32,
    border_type: i32,
) -> PyResult<Bound<'py, PyArray2<i16>>> {
    let border = border_of(border_type)?;
    if !matches!((dx, dy), (1, 0) | (0, 1)) {
        return Err(PyNotImplementedError::new_err(format!(
            "dx={dx}, dy={dy}: first derivatives (1, 0) and (0, 1) are supported"
        )));
    }
    let p = pixels(&image, "sobel")?;
    let view = grey_view(&p, "sobel")?;
    let (gx, gy) = py.allow_threads(|| img::sobel_xy(&view, border, Threads::All));
    let out = if dx == 1 { gx } else { gy };
    let Dim2(rows, cols) = out.extent();
    Ok(Array2::from_shape_vec((rows, cols), out.into_vec())
        .expect("an image's extent matches its pixels")
        .into_pyarray(py))
}

/// `cv2.equalizeHist(image)`.
#[pyfunction]
pub fn image_equalize_hist<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let p = pixels(&image, "equalize_hist")?;
    let view = grey_view(&p, "equalize_hist")?;
    let out = py.allow_threads(|| img::equalize_hist(&view, Threads::All));
    Ok(grey_out(py, out))
}

/// The 256 counts of a grey image's levels (`cv2.calcHist([image], [0], None, [256], [0,
/// 256])`, as exact integers).
#[pyfunction]
pub fn image_histogram<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let p = pixels(&image, "calc_hist")?;
    let view = grey_view(&p, "calc_hist")?;
    let counts = py.allow_threads(|| img::histogram(&view, Threads::All));
    Ok(counts.to_vec().into_pyarray(py).into_any())
}

/// `cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)` (`bgr` for `COLOR_BGR2GRAY`).
#[pyfunction]
#[pyo3(signature = (image, bgr=false))]
pub fn image_grey<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
    bgr: bool,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let p = pixels(&image, "cvt_color")?;
    if p.channels != 3 {
        return Err(PyValueError::new_err(
            "cvt_color to grey takes an RGB or BGR image of shape (height, width, 3)",
        ));
    }
    let view = rgb_view(&p)?;
    let out = py.allow_threads(|| {
        if bgr {
            let rgb = view.map(|[b, g, r]: [u8; 3]| [r, g, b]);
            dataflow::compute_with(&img::grey(rgb), dataflow::Plain, Threads::All)
        } else {
            dataflow::compute_with(&img::grey(view), dataflow::Plain, Threads::All)
        }
    });
    Ok(grey_out(py, out))
}

/// Registers the image functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(image_canny, m)?)?;
    m.add_function(wrap_pyfunction!(image_gaussian_blur, m)?)?;
    m.add_function(wrap_pyfunction!(image_sobel, m)?)?;
    m.add_function(wrap_pyfunction!(image_equalize_hist, m)?)?;
    m.add_function(wrap_pyfunction!(image_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(image_grey, m)?)?;
    Ok(())
}
