"""Rust ragged arrays and FSAs for Python.

``arrays.k2`` is k2's Python API: an icefall script runs after replacing ``import k2`` with
``import arrays.k2 as k2``.
"""

from arrays import _native

__version__: str = _native.__version__

__all__ = ["__version__"]
