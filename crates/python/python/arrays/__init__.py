"""Rust ragged arrays, FSAs, Kaldi tables and images for Python.

``arrays.k2`` is k2's Python API: an icefall script runs after replacing ``import k2`` with
``import arrays.k2 as k2``. ``arrays.kaldi`` is kaldiio's API (``import arrays.kaldi as
kaldiio``), ``arrays.image`` cv2's image calls on uint8 numpy arrays, and
``arrays.structured`` TensorFlow's ``StructuredTensor``.
"""

from arrays import _native

__version__: str = _native.__version__

__all__ = ["__version__"]
