//! PNG in and out through the `image` crate.

use std::path::Path;

use crate::error::Error;
use crate::explicit::{Array, View};
use crate::load::{compute_with, Plain, Threads};
use crate::shape::Dim2;

use super::color::grey;

fn image_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Image {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Reads an 8-bit grey or RGB PNG as a grey array; RGB is converted with
/// [`rgb_to_grey`](super::rgb_to_grey).
pub fn read_grey_png(path: impl AsRef<Path>) -> Result<Array<u8, Dim2>, Error> {
    let path = path.as_ref();
    let img = image::open(path).map_err(|e| image_error(path, e))?;
    match img {
        image::DynamicImage::ImageLuma8(g) => {
            let v = View::from_luma(&g);
            Ok(v.to_array())
        }
        image::DynamicImage::ImageRgb8(rgb) => Ok(compute_with(
            &grey(View::from_rgb(&rgb)),
            Plain,
            Threads::All,
        )),
        other => Err(image_error(
            path,
            format!(
                "colour type {:?} is neither 8-bit grey nor 8-bit RGB",
                other.color()
            ),
        )),
    }
}

/// Writes a grey array as an 8-bit PNG.
pub fn write_grey_png(path: impl AsRef<Path>, a: &Array<u8, Dim2>) -> Result<(), Error> {
    let path = path.as_ref();
    a.clone()
        .into_luma()
        .save(path)
        .map_err(|e| image_error(path, e))
}
