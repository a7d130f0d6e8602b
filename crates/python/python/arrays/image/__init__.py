"""cv2's image calls over the Rust dataflow crate: ``import arrays.image as image``.

Argument names and defaults are OpenCV's (``cv2.Canny(image, threshold1, threshold2,
apertureSize=3, L2gradient=False)`` is ``canny(image, threshold1, threshold2,
apertureSize=3, L2gradient=False)``). Images are uint8 numpy arrays: grey ``(H, W)`` or
RGB ``(H, W, 3)``. A C-contiguous image is read in place; any other strides (a crop, a
channel-reversed view, a transposed array) are copied once into C order first. Results
are new numpy arrays that own the Rust buffer (no copy). The work runs with the GIL
released, in parallel row bands on the Rust side's rayon pool (``RAYON_NUM_THREADS``).

Grey, histogram, equalisation, Sobel and Canny agree with OpenCV 5 pixel for pixel. The
Gaussian blurs agree pixel for pixel where dataflow's fixed-point taps equal OpenCV's
(``sigma <= 0`` up to 11 taps, 9 taps at sigma 2, and others: see docs/python.md); with
other kernels a pixel may differ by up to two levels (one per pass)
(``tests/test_image.py`` checks both live against opencv-python-headless).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from arrays import _native

__all__ = [
    "canny",
    "gaussian_blur",
    "sobel",
    "equalize_hist",
    "calc_hist",
    "cvt_color",
    "BORDER_CONSTANT",
    "BORDER_REPLICATE",
    "BORDER_REFLECT",
    "BORDER_WRAP",
    "BORDER_REFLECT_101",
    "BORDER_DEFAULT",
    "COLOR_BGR2GRAY",
    "COLOR_RGB2GRAY",
    "CV_16S",
]

# OpenCV's numbers for the border modes, colour conversions and depths used here
BORDER_CONSTANT = 0
BORDER_REPLICATE = 1
BORDER_REFLECT = 2
BORDER_WRAP = 3
BORDER_REFLECT_101 = 4
BORDER_DEFAULT = BORDER_REFLECT_101
COLOR_BGR2GRAY = 6
COLOR_RGB2GRAY = 7
CV_16S = 3


def _image(image: Any) -> np.ndarray:
    array = np.asarray(image)
    if array.dtype != np.uint8:
        raise ValueError(f"an image of dtype {array.dtype}: uint8 pixels are supported")
    return array


def canny(
    image: Any,
    threshold1: float,
    threshold2: float,
    edges: Optional[np.ndarray] = None,
    apertureSize: int = 3,
    L2gradient: bool = False,
) -> np.ndarray:
    """``cv2.Canny``: 255 on edges, 0 elsewhere, of a grey ``(H, W)`` or 3-channel
    ``(H, W, 3)`` image (no blur first, as in OpenCV). A 3-channel image takes, at each
    pixel, the gradient of the channel with the largest magnitude (the first in storage
    order on ties, as OpenCV: RGB or BGR, the result is cv2's on the same array).
    Thresholds are OpenCV's (swapped when ``threshold1 > threshold2``); only
    ``apertureSize=3``."""
    if edges is not None:
        raise NotImplementedError("edges= (an output array): the result is returned")
    return _native.image_canny(_image(image), float(threshold1), float(threshold2), int(apertureSize), bool(L2gradient))


def _ksize(ksize: Union[int, Tuple[int, int]], sigma: float) -> int:
    if isinstance(ksize, (tuple, list)):
        width, height = ksize
        if width != height:
            raise NotImplementedError(f"ksize {tuple(ksize)}: square kernels only")
        ksize = width
    ksize = int(ksize)
    if ksize == 0:
        # OpenCV's size from sigma for 8-bit images
        if sigma <= 0:
            raise ValueError("ksize 0 needs a positive sigma")
        ksize = int(np.round(sigma * 3 * 2 + 1)) | 1
    return ksize


def gaussian_blur(
    image: Any,
    ksize: Union[int, Tuple[int, int]],
    sigma: float = 0.0,
    sigmaY: float = 0.0,
    borderType: int = BORDER_DEFAULT,
) -> np.ndarray:
    """``cv2.GaussianBlur(image, (k, k), sigma, sigmaY=0, borderType=BORDER_DEFAULT)`` of a
    grey or RGB image; ``sigma <= 0`` takes OpenCV's sigma for the size; ``ksize`` odd,
    1..31 (an int or a square ``(k, k)``; ``(0, 0)`` takes the size from ``sigma``)."""
    if sigmaY not in (0, sigma):
        raise NotImplementedError(f"sigmaY {sigmaY} other than sigma {sigma}: one sigma for both axes")
    return _native.image_gaussian_blur(_image(image), _ksize(ksize, sigma), float(sigma), int(borderType))


def sobel(
    image: Any,
    ddepth: int,
    dx: int,
    dy: int,
    ksize: int = 3,
    scale: float = 1.0,
    delta: float = 0.0,
    borderType: int = BORDER_DEFAULT,
) -> np.ndarray:
    """``cv2.Sobel(image, cv2.CV_16S, dx, dy, ksize=3, borderType=...)``: the int16 first
    derivative of a grey image along x (``dx=1, dy=0``) or y (``dx=0, dy=1``)."""
    if ddepth != CV_16S:
        raise NotImplementedError(f"ddepth {ddepth}: CV_16S ({CV_16S}) only")
    if ksize != 3 or scale != 1 or delta != 0:
        raise NotImplementedError("ksize 3, scale 1 and delta 0 only")
    return _native.image_sobel(_image(image), int(dx), int(dy), int(borderType))


def equalize_hist(image: Any) -> np.ndarray:
    """``cv2.equalizeHist`` of a grey image."""
    return _native.image_equalize_hist(_image(image))


def calc_hist(
    images: Sequence[Any],
    channels: Sequence[int],
    mask: Any,
    histSize: Sequence[int],
    ranges: Sequence[float],
    accumulate: bool = False,
) -> np.ndarray:
    """``cv2.calcHist([image], [c], None, [256], [0, 256])``: the counts of the 256 levels of
    one channel (``c`` of an RGB image is copied out first), float32 of shape (256,) as
    OpenCV 5 returns them."""
    if len(images) != 1 or len(channels) != 1:
        raise NotImplementedError("one image and one channel")
    if mask is not None:
        raise NotImplementedError("mask: counts of the whole image only")
    if list(histSize) != [256] or [float(r) for r in ranges] != [0.0, 256.0]:
        raise NotImplementedError("histSize [256] and ranges [0, 256] only")
    if accumulate:
        raise NotImplementedError("accumulate: add the returned counts instead")
    image = _image(images[0])
    channel = int(channels[0])
    if image.ndim == 3:
        if not 0 <= channel < image.shape[2]:
            raise ValueError(f"channel {channel} of an image with {image.shape[2]} channels")
        image = image[:, :, channel]
    elif channel != 0:
        raise ValueError(f"channel {channel} of a grey image")
    counts = _native.image_histogram(image)
    return counts.astype(np.float32)


def cvt_color(image: Any, code: int) -> np.ndarray:
    """``cv2.cvtColor(image, COLOR_RGB2GRAY)`` or ``COLOR_BGR2GRAY``: OpenCV's fixed-point
    grey."""
    if code not in (COLOR_RGB2GRAY, COLOR_BGR2GRAY):
        raise NotImplementedError(f"code {code}: COLOR_RGB2GRAY ({COLOR_RGB2GRAY}) and COLOR_BGR2GRAY ({COLOR_BGR2GRAY}) only")
    return _native.image_grey(_image(image), code == COLOR_BGR2GRAY)
