"""Canny on a 2560 x 1600 grey numpy image: arrays.image.canny against cv2.Canny, call
overhead included (each call takes the numpy array and returns a new one), alternated
rounds, medians; prints the times and the ours / OpenCV ratio.

    python crates/python/benches/canny.py [ROUNDS] [THREADS] [ipp]

The image: the dataflow crate's landscape scene resized to 2560 x 1600 (cv2.resize,
linear) with seeded noise. OpenCV runs with `cv2.setNumThreads(THREADS)` (default 1) and,
as in benches/peers/dataflow.py, without OpenCL and IPP (a third argument `ipp` leaves
IPP on, as opencv-python-headless has it by default); ours on a rayon pool of
THREADS threads (`RAYON_NUM_THREADS`, set here before the first call). Thresholds 50/150,
L1 and L2. Needs numpy, opencv-python-headless and arrays installed.
"""

import os
import statistics
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
os.environ["RAYON_NUM_THREADS"] = str(THREADS)

import cv2  # noqa: E402
import numpy as np  # noqa: E402

import arrays.image as image  # noqa: E402

cv2.setNumThreads(THREADS)
cv2.ocl.setUseOpenCL(False)
if hasattr(cv2, "setUseOptimized"):
    cv2.setUseOptimized(True)
IPP = len(sys.argv) > 3 and sys.argv[3] == "ipp"
try:
    cv2.ipp.setUseIPP(IPP)
except AttributeError:
    pass

here = os.path.dirname(os.path.abspath(__file__))
scene = cv2.imread(os.path.join(here, "..", "..", "dataflow", "tests", "golden", "landscape.png"), cv2.IMREAD_GRAYSCALE)
grey = cv2.resize(scene, (2560, 1600), interpolation=cv2.INTER_LINEAR)
noise = np.random.default_rng(29).integers(-8, 9, size=grey.shape)
grey = np.clip(grey.astype(int) + noise, 0, 255).astype(np.uint8)

for l2 in (False, True):
    sides = {
        "ours": lambda: image.canny(grey, 50, 150, L2gradient=l2),
        "cv2": lambda: cv2.Canny(grey, 50, 150, L2gradient=l2),
    }
    assert np.array_equal(sides["ours"](), sides["cv2"]())
    times = {side: [] for side in sides}
    for _ in range(ROUNDS):
        for side, run in sides.items():
            start = time.perf_counter()
            run()
            times[side].append(time.perf_counter() - start)
    med = {side: statistics.median(t) for side, t in times.items()}
    norm = "L2" if l2 else "L1"
    print(
        f"canny 2560x1600 {norm}, {THREADS} thread(s), IPP {'on' if IPP else 'off'}: ours {med['ours'] * 1e3:.2f} ms, "
        f"cv2 {med['cv2'] * 1e3:.2f} ms, ours / cv2 {med['ours'] / med['cv2']:.3f}"
    )
