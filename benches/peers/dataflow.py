"""Peers of the dataflow benchmarks: OpenCV (cvtColor, calcHist, GaussianBlur, Sobel,
Canny) and numpy (bincount) on the same 2560 x 1600 input as
`crates/dataflow/benches/dataflow.rs`, at 1 and 2 threads.

OpenCV runs with OpenCL off (`cv2.ocl.setUseOpenCL(False)`), IPP off
(`cv2.ipp.setUseIPP(False)`), its own SIMD dispatch left on (`cv2.setUseOptimized(True)`),
and `cv2.setNumThreads(n)` set to our thread count for each `_t<n>` workload. Under
`cargo xtask bench --simd-cap avx2` the harness sets `OPENCV_CPU_DISABLE` to OpenCV's
AVX-512 features and `NPY_DISABLE_CPU_FEATURES` to numpy's; the script prints, as a note,
the features OpenCV and numpy dispatch on (OpenCV marks a disabled one with `?`).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

CRATE = "dataflow"


def make_input(np):
    w, h = size(2560, 4), size(1600, 4)
    r = splitmix64_array(6, w * h).reshape(h, w)
    yy, xx = np.mgrid[0:h, 0:w]
    base = 40 + 120 * ((xx // 64 + yy // 64) % 2) + ((xx + 2 * yy) % 256) // 4
    chans = [base + ((r >> np.uint64(8 * c)) & np.uint64(15)).astype(np.int64) for c in range(3)]
    return np.ascontiguousarray(np.stack(chans, axis=-1).astype(np.uint8))


def note(peer, text):
    """A line the harness lists under the table's notes."""
    print(json.dumps({"crate": CRATE, "peer": peer, "note": text}), flush=True)


def numpy_dispatch(np):
    """The dispatch targets numpy uses on this CPU (after `NPY_DISABLE_CPU_FEATURES`)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
        except ImportError:
            return "unknown"
    on = [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]
    return " ".join(on) or "baseline only"


def main():
    try:
        import numpy as np
    except ImportError as e:
        skip(CRATE, "numpy", str(e))
        return
    rgb = make_input(np)
    note("numpy", "dispatches on " + numpy_dispatch(np))
    try:
        import cv2
    except ImportError as e:
        skip(CRATE, "opencv", str(e))
        cv2 = None
    if cv2 is not None:
        cv2.ocl.setUseOpenCL(False)
        if hasattr(cv2, "ipp"):
            cv2.ipp.setUseIPP(False)
        cv2.setUseOptimized(True)
        note("opencv", "CPU features (`*` dispatched, `?` switched off): " + cv2.getCPUFeaturesLine())
        grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        version = cv2.__version__
        for t in (1, 2):
            cv2.setNumThreads(t)
            sfx = f"_t{t}"
            report(CRATE, "grey" + sfx, "opencv", time_it(lambda: cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)), version)
            report(CRATE, "hist" + sfx, "opencv", time_it(lambda: cv2.calcHist([grey], [0], None, [256], [0, 256])), version)
            report(CRATE, "blur5_grey" + sfx, "opencv", time_it(lambda: cv2.GaussianBlur(grey, (5, 5), 0)), version)
            report(CRATE, "blur5_rgb" + sfx, "opencv", time_it(lambda: cv2.GaussianBlur(rgb, (5, 5), 0)), version)
            report(
                CRATE,
                "sobel" + sfx,
                "opencv",
                time_it(lambda: (cv2.Sobel(grey, cv2.CV_16S, 1, 0), cv2.Sobel(grey, cv2.CV_16S, 0, 1))),
                version,
            )
            report(CRATE, "canny" + sfx, "opencv", time_it(lambda: cv2.Canny(grey, 50, 150)), version)
    else:
        grey = (rgb.astype(np.uint32) @ np.array([9798, 19235, 3735], np.uint32) + (1 << 14)) >> 15
        grey = grey.astype(np.uint8)
    flat = grey.ravel()
    seconds = time_it(lambda: np.bincount(flat, minlength=256))
    for t in (1, 2):
        report(CRATE, f"hist_t{t}", "numpy_bincount", seconds, np.__version__)


if __name__ == "__main__":
    main()
