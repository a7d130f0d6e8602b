#!/usr/bin/env python3
"""Writes the OpenCV Sobel goldens the `opencv_agreement` tests compare against.

Needs numpy and opencv-python-headless, for example:

    python -m venv venv && venv/bin/pip install numpy opencv-python-headless
    venv/bin/python crates/dataflow/tests/golden/sobel.py

It reads the grey goldens `<scene>.grey.png` written by `generate.py` (so the Sobel input
is OpenCV's own grey image) and writes, next to this script, for each scene:
  <scene>.sobel_dx.png      cv2.Sobel(grey, CV_16S, 1, 0)                       (reflect-101)
  <scene>.sobel_dy.png      cv2.Sobel(grey, CV_16S, 0, 1)
  <scene>.sobel_dx_rep.png  cv2.Sobel(grey, CV_16S, 1, 0, borderType=BORDER_REPLICATE)
  <scene>.sobel_dy_rep.png  cv2.Sobel(grey, CV_16S, 0, 1, borderType=BORDER_REPLICATE)
Each is a 16-bit grey PNG holding `value + 32768` (signed 16-bit values offset into the
unsigned range PNG stores), and sobel_versions.txt records the library versions.
"""

import os

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCENES = ["landscape", "shapes", "checker"]
OFFSET = 32768


def write_signed(name, arr):
    assert arr.dtype == np.int16, arr.dtype
    shifted = (arr.astype(np.int32) + OFFSET).astype(np.uint16)
    ok = cv2.imwrite(os.path.join(HERE, name), shifted, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    assert ok, name


def main():
    for scene in SCENES:
        grey = cv2.imread(os.path.join(HERE, f"{scene}.grey.png"), cv2.IMREAD_UNCHANGED)
        assert grey is not None and grey.dtype == np.uint8 and grey.ndim == 2, scene
        for suffix, border in [("", cv2.BORDER_REFLECT_101), ("_rep", cv2.BORDER_REPLICATE)]:
            dx = cv2.Sobel(grey, cv2.CV_16S, 1, 0, ksize=3, borderType=border)
            dy = cv2.Sobel(grey, cv2.CV_16S, 0, 1, ksize=3, borderType=border)
            write_signed(f"{scene}.sobel_dx{suffix}.png", dx)
            write_signed(f"{scene}.sobel_dy{suffix}.png", dy)
    with open(os.path.join(HERE, "sobel_versions.txt"), "w") as f:
        f.write(f"opencv {cv2.__version__}\nnumpy {np.__version__}\n")


if __name__ == "__main__":
    main()
