//! PNG in and out: round trips of grey images, RGB read as OpenCV's grey, and the errors
//! for a missing file, a truncated file, an unsupported colour type and an unwritable path.

use std::path::PathBuf;

use dataflow::image::{read_grey_png, write_grey_png};
use dataflow::{Array, Dim2, Error, View};

/// A fresh path in the system's temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        TempFile(
            std::env::temp_dir().join(format!("dataflow-png-io-{}-{name}", std::process::id())),
        )
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

fn ramp(rows: usize, cols: usize) -> Array<u8, Dim2> {
    let data = (0..rows * cols)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
        .collect();
    Array::from_vec(Dim2(rows, cols), data).unwrap()
}

#[test]
fn grey_round_trips() {
    for (rows, cols) in [(1, 1), (3, 5), (64, 47), (1, 300)] {
        let a = ramp(rows, cols);
        let f = TempFile::new(&format!("round-{rows}x{cols}.png"));
        write_grey_png(&f.0, &a).unwrap();
        assert_eq!(read_grey_png(&f.0).unwrap(), a, "{rows}x{cols}");
        // What was written is an 8-bit grey PNG of the same pixels, read independently.
        let img = image::open(&f.0).unwrap().to_luma8();
        assert_eq!((img.height() as usize, img.width() as usize), (rows, cols));
        assert_eq!(img.as_raw().as_slice(), a.as_slice());
    }
}

#[test]
fn rgb_is_read_as_opencv_grey() {
    for scene in ["landscape", "shapes", "checker"] {
        let got = read_grey_png(golden(&format!("{scene}.png"))).unwrap();
        let want = image::open(golden(&format!("{scene}.grey.png")))
            .unwrap()
            .to_luma8();
        assert_eq!(got, View::from_luma(&want).to_array(), "{scene}");
    }
}

#[track_caller]
fn image_error(e: Error) -> (String, String) {
    match e {
        Error::Image { path, message } => (path, message),
        other => panic!("expected Error::Image, got {other:?}"),
    }
}

#[test]
fn missing_file_is_an_image_error_naming_the_path() {
    let f = TempFile::new("never-written.png");
    let (path, _) = image_error(read_grey_png(&f.0).unwrap_err());
    assert_eq!(path, f.0.display().to_string());
}

#[test]
fn truncated_file_is_an_image_error() {
    let full = TempFile::new("full.png");
    write_grey_png(&full.0, &ramp(40, 40)).unwrap();
    let bytes = std::fs::read(&full.0).unwrap();
    for keep in [bytes.len() / 2, 40, 8, 0] {
        let cut = TempFile::new(&format!("cut-{keep}.png"));
        std::fs::write(&cut.0, &bytes[..keep]).unwrap();
        let (path, message) = image_error(read_grey_png(&cut.0).unwrap_err());
        assert_eq!(path, cut.0.display().to_string());
        assert!(!message.is_empty(), "{keep} bytes");
    }
}

#[test]
fn other_colour_types_are_refused_by_name() {
    let cases: [(image::DynamicImage, &str); 3] = [
        (
            image::DynamicImage::ImageRgba8(image::RgbaImage::new(3, 2)),
            "colour type Rgba8 is neither 8-bit grey nor 8-bit RGB",
        ),
        (
            image::DynamicImage::ImageLuma16(image::ImageBuffer::new(3, 2)),
            "colour type L16 is neither 8-bit grey nor 8-bit RGB",
        ),
        (
            image::DynamicImage::ImageLumaA8(image::ImageBuffer::new(3, 2)),
            "colour type La8 is neither 8-bit grey nor 8-bit RGB",
        ),
    ];
    for (k, (img, want)) in cases.into_iter().enumerate() {
        let f = TempFile::new(&format!("colour-{k}.png"));
        img.save(&f.0).unwrap();
        let (path, message) = image_error(read_grey_png(&f.0).unwrap_err());
        assert_eq!((path, message.as_str()), (f.0.display().to_string(), want));
    }
}

#[test]
fn unwritable_path_is_an_image_error() {
    let dir = TempFile::new("no-such-dir");
    let target = dir.0.join("out.png");
    let (path, message) = image_error(write_grey_png(&target, &ramp(2, 2)).unwrap_err());
    assert_eq!(path, target.display().to_string());
    assert!(!message.is_empty());
}
