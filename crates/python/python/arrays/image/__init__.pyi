from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]

BORDER_CONSTANT: int
BORDER_REPLICATE: int
BORDER_REFLECT: int
BORDER_WRAP: int
BORDER_REFLECT_101: int
BORDER_DEFAULT: int
COLOR_BGR2GRAY: int
COLOR_RGB2GRAY: int
CV_16S: int

def canny(
    image: Any, threshold1: float, threshold2: float, edges: Optional[U8] = None, apertureSize: int = 3, L2gradient: bool = False
) -> U8: ...
def gaussian_blur(
    image: Any, ksize: Union[int, Tuple[int, int]], sigma: float = 0.0, sigmaY: float = 0.0, borderType: int = ...
) -> U8: ...
def sobel(
    image: Any, ddepth: int, dx: int, dy: int, ksize: int = 3, scale: float = 1.0, delta: float = 0.0, borderType: int = ...
) -> npt.NDArray[np.int16]: ...
def equalize_hist(image: Any) -> U8: ...
def calc_hist(
    images: Sequence[Any], channels: Sequence[int], mask: Any, histSize: Sequence[int], ranges: Sequence[float], accumulate: bool = False
) -> npt.NDArray[np.float32]: ...
def cvt_color(image: Any, code: int) -> U8: ...
