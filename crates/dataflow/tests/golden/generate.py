#!/usr/bin/env python3
"""Writes the OpenCV golden files the `opencv_agreement` tests compare against.

Needs numpy and opencv-python-headless. Run from anywhere:

    python3 crates/dataflow/tests/golden/generate.py

For each scene it writes, next to this script:
  <scene>.png            the RGB input
  <scene>.grey.png       cv2.cvtColor(rgb, COLOR_RGB2GRAY)
  <scene>.hist.txt       cv2.calcHist of the grey image, 256 counts, one per line
  <scene>.equal.png      cv2.equalizeHist of the grey image
  <scene>.blur5.png      cv2.GaussianBlur(grey, (5, 5), 0)           (reflect-101)
  <scene>.blur9s2.png    cv2.GaussianBlur(grey, (9, 9), 2.0)
  <scene>.blur5rgb.png   cv2.GaussianBlur(rgb, (5, 5), 0)
  <scene>.canny_l1.png   cv2.Canny(grey, 50, 150)
  <scene>.canny_l2.png   cv2.Canny(grey, 30, 90, L2gradient=True)
  <scene>.canny_blur.png cv2.Canny(blur5, 20, 60)
and versions.txt with the library versions. Scenes are generated procedurally from fixed
seeds, so the script reproduces the same inputs everywhere.
"""

import os

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
H, W = 160, 256


def value_noise(rng, h, w, cell):
    """Smooth noise: random values on a coarse grid, bilinearly interpolated."""
    gh, gw = h // cell + 2, w // cell + 2
    grid = rng.random((gh, gw))
    ys = np.arange(h) / cell
    xs = np.arange(w) / cell
    y0 = ys.astype(int)
    x0 = xs.astype(int)
    fy = (ys - y0)[:, None]
    fx = (xs - x0)[None, :]
    a = grid[y0][:, x0]
    b = grid[y0][:, x0 + 1]
    c = grid[y0 + 1][:, x0]
    d = grid[y0 + 1][:, x0 + 1]
    fy = fy * fy * (3 - 2 * fy)
    fx = fx * fx * (3 - 2 * fx)
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def landscape(seed):
    """A photograph-like scene: sky, sun, layered hills with texture, a lake, trees, grain."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
    img = np.zeros((H, W, 3))
    sky_t = yy / H
    img[...] = np.stack([90 + 100 * sky_t, 140 + 80 * sky_t, 230 - 30 * sky_t], axis=-1)
    clouds = value_noise(rng, H, W, 24) * 0.6 + value_noise(rng, H, W, 9) * 0.4
    img += (np.clip(clouds - 0.55, 0, 1) * 220)[..., None]
    sun = ((yy - 35) ** 2 + (xx - 190) ** 2) < 14 ** 2
    img[sun] = [255, 240, 190]
    for k, (base, amp, colour) in enumerate([(70, 18, (70, 110, 80)), (95, 14, (50, 95, 45)), (118, 9, (85, 120, 50))]):
        ridge = base + amp * np.sin(xx[0] / (23 + 9 * k) + k) + 10 * value_noise(rng, 1, W, 16)[0]
        mask = yy > ridge[None, :]
        tex = value_noise(rng, H, W, 5 + 2 * k)[..., None] * 50 - 25
        img = np.where(mask[..., None], np.array(colour)[None, None, :] + tex, img)
    lake = (yy > 132) & (np.abs(xx - 80) < 60 + (yy - 132) * 2)
    img[lake] = img[lake] * 0.4 + np.array([40, 70, 120]) * 0.6
    for tx in rng.integers(10, W - 10, 7):
        top = int(rng.integers(85, 110))
        for row in range(top, top + 28):
            half = (row - top) // 3 + 1
            img[row, max(tx - half, 0):tx + half] = [25, 60, 30]
        img[top + 28:top + 34, tx - 1:tx + 2] = [70, 45, 25]
    img += rng.normal(0, 4, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def shapes(seed):
    """A synthetic scene: flat shapes, thin lines, a ramp and a noisy patch."""
    rng = np.random.default_rng(seed)
    img = np.full((H, W, 3), (30, 30, 40), np.uint8)
    img[:, :, 0] = np.linspace(20, 120, W, dtype=np.uint8)[None, :]
    cv2.rectangle(img, (20, 20), (90, 70), (200, 60, 60), -1)
    cv2.circle(img, (160, 60), 35, (60, 200, 90), -1)
    cv2.ellipse(img, (200, 120), (40, 20), 30, 0, 360, (240, 240, 80), -1)
    pts = np.array([[30, 150], [80, 95], [120, 150]], np.int32)
    cv2.fillPoly(img, [pts], (80, 80, 230))
    for k in range(6):
        cv2.line(img, (130 + 8 * k, 100), (100 + 12 * k, 158), (255, 255, 255), 1)
    patch = rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)
    img[5:35, 200:240] = patch
    return img


def checker(seed):
    """A small checkerboard with a diagonal step and noise, odd-sized."""
    rng = np.random.default_rng(seed)
    h, w = 67, 93
    yy, xx = np.mgrid[0:h, 0:w]
    g = np.where(((yy // 9) + (xx // 11)) % 2 == 0, 60, 190).astype(np.float64)
    g += np.where(xx + yy > 90, 30, 0)
    g += rng.normal(0, 6, g.shape)
    g = np.clip(np.rint(g), 0, 255).astype(np.uint8)
    return np.stack([g, (g * 0.8).astype(np.uint8), 255 - g], axis=-1)


def write_png(name, arr):
    # cv2.imwrite expects BGR for colour images.
    if arr.ndim == 3:
        arr = cv2.cvtColor(arr, cv2.COLOR_RGB2BGR)
    ok = cv2.imwrite(os.path.join(HERE, name), arr, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    assert ok, name


def main():
    scenes = {"landscape": landscape(7), "shapes": shapes(11), "checker": checker(5)}
    for name, rgb in scenes.items():
        grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        hist = cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel().astype(np.int64)
        blur5 = cv2.GaussianBlur(grey, (5, 5), 0)
        write_png(f"{name}.png", rgb)
        write_png(f"{name}.grey.png", grey)
        with open(os.path.join(HERE, f"{name}.hist.txt"), "w") as f:
            f.write("\n".join(str(int(v)) for v in hist) + "\n")
        write_png(f"{name}.equal.png", cv2.equalizeHist(grey))
        write_png(f"{name}.blur5.png", blur5)
        write_png(f"{name}.blur9s2.png", cv2.GaussianBlur(grey, (9, 9), 2.0))
        write_png(f"{name}.blur5rgb.png", cv2.GaussianBlur(rgb, (5, 5), 0))
        write_png(f"{name}.canny_l1.png", cv2.Canny(grey, 50, 150))
        write_png(f"{name}.canny_l2.png", cv2.Canny(grey, 30, 90, L2gradient=True))
        write_png(f"{name}.canny_blur.png", cv2.Canny(blur5, 20, 60))
    with open(os.path.join(HERE, "versions.txt"), "w") as f:
        f.write(f"opencv {cv2.__version__}\nnumpy {np.__version__}\n")


if __name__ == "__main__":
    main()
