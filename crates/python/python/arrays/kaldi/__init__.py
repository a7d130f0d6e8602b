"""kaldiio's API over the Rust kaldi-io crate: ``import arrays.kaldi as kaldiio``.

Names and argument names are kaldiio's (v2.18): ``ReadHelper``, ``WriteHelper``,
``load_ark``, ``load_scp``, ``load_mat``, ``save_ark``, ``save_mat``. Reading and writing
is Kaldi's own table code (every rspecifier and wspecifier option, pipes, ``file:offset``,
``[...]`` ranges) in Rust, with the GIL released; values come out as numpy arrays that own
the Rust buffer (no copy): float32/float64 matrices and vectors, compressed matrices
(decompressed to float32), int32 vectors (alignments), and, with ``holder="posterior"``,
Kaldi's posteriors as lists of lists of ``(int, float)``.
"""

from __future__ import annotations

import copyreg

import os
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any, Dict, Iterator, Optional, Tuple

from arrays import _native

__all__ = [
    "ReadHelper",
    "WriteHelper",
    "load_ark",
    "load_scp",
    "load_scp_sequential",
    "load_mat",
    "save_ark",
    "save_mat",
    "CompressedMatrix",
    "kAutomaticMethod",
    "kSpeechFeature",
    "kTwoByteAuto",
    "kTwoByteSignedInteger",
    "kOneByteAuto",
    "kOneByteUnsignedInteger",
    "kOneByteZeroOne",
]

CompressedMatrix = _native.CompressedMatrix


def _compressed_matrix_from_bytes(data: bytes) -> Any:
    """The unpickling side of ``CompressedMatrix``: Kaldi's compressed bytes, checked."""
    return _native.CompressedMatrix.from_bytes(data)


# a CompressedMatrix pickles as its Kaldi bytes (what an archive holds), so Ray ships it
copyreg.pickle(CompressedMatrix, lambda cm: (_compressed_matrix_from_bytes, (bytes(cm.to_bytes()),)))

# Kaldi's CompressionMethod numbers, as kaldiio's compression_method takes them
kAutomaticMethod = 1
kSpeechFeature = 2
kTwoByteAuto = 3
kTwoByteSignedInteger = 4
kOneByteAuto = 5
kOneByteUnsignedInteger = 6
kOneByteZeroOne = 7


def _check_endian(endian: str) -> None:
    if endian != "<":
        raise NotImplementedError(
            f"endian={endian!r}: Kaldi's archives are little-endian ('<'); big-endian "
            "archives are not supported"
        )


def _not_supported(name: str, value: Any) -> None:
    if value is not None:
        raise NotImplementedError(
            f"{name}={value!r} is not supported (wav, numpy and pickle values of kaldiio "
            "are not Kaldi objects)"
        )


class ReadHelper:
    """kaldiio's ``ReadHelper(rspecifier)``: iterates ``(key, numpy array)`` over an
    ``ark:`` or ``scp:`` rspecifier, with every Kaldi option (``p``, ``s``, ``cs``, ``o``,
    ``bg``), pipes (``ark:gunzip -c a.ark.gz |``) and ranges on scp lines.

    ``holder="posterior"`` reads Kaldi's posteriors (which share their header with int32
    vectors, so they must be asked for).
    """

    def __init__(self, rspecifier: str, segments: Optional[str] = None, *, holder: Optional[str] = None):
        if segments is not None:
            raise NotImplementedError("segments: kaldiio cuts wav recordings with it; wav is not supported")
        self.rspecifier = rspecifier
        self._reader = _native.KaldiSequentialReader(rspecifier, holder)
        self.closed = False

    def __iter__(self) -> Iterator[Tuple[str, Any]]:
        if self.closed:
            return
        try:
            yield from self._reader
        finally:
            self.close()

    def __enter__(self) -> "ReadHelper":
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()

    def close(self) -> None:
        """Closes the input (a pipe's command is waited for)."""
        if not self.closed:
            self._reader.close()
            self.closed = True


class WriteHelper:
    """kaldiio's ``WriteHelper(wspecifier, compression_method=None)``: ``helper(key,
    array)`` writes one value to an ``ark:``, ``ark,scp:`` or ``scp:`` wspecifier (with
    ``t``, ``b``, ``f``, ``nf``, ``p``, pipes ``ark:| gzip -c > a.ark.gz``).

    Values: float32/float64 matrices and vectors, int32 vectors, ``CompressedMatrix``,
    posteriors (lists of lists of ``(int, float)``); ``compression_method`` (Kaldi's
    number, 1..7) compresses float matrices.
    """

    def __init__(self, wspecifier: str, compression_method: Optional[int] = None, write_function: Optional[str] = None):
        _not_supported("write_function", write_function)
        self.wspecifier = wspecifier
        self.compression_method = compression_method
        self._writer = _native.KaldiWriter(wspecifier, compression_method)
        self.closed = False

    def __call__(self, key: str, array: Any) -> None:
        if self.closed:
            raise RuntimeError("WriteHelper has been already closed")
        self._writer.write(key, array)

    def __setitem__(self, key: str, value: Any) -> None:
        self(key, value)

    def __enter__(self) -> "WriteHelper":
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()

    def close(self) -> None:
        """Flushes and closes (a pipe's command is waited for, its failure raised)."""
        if not self.closed:
            self.closed = True
            self._writer.close()


def _rxfilename_of(fname: Any) -> Tuple[str, Optional[str]]:
    """A path for Rust to open, and a temporary file to remove after (for file objects)."""
    if isinstance(fname, (str, os.PathLike)):
        return os.fspath(fname), None
    if hasattr(fname, "read"):
        data = fname.read()
        if isinstance(data, str):
            data = data.encode()
        handle, path = tempfile.mkstemp(prefix="arrays-kaldi-")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        return path, path
    raise TypeError(f"expected a path or a file object, got {type(fname).__name__}")


def load_ark(fname: Any, endian: str = "<") -> Iterator[Tuple[str, Any]]:
    """kaldiio's ``load_ark(fname)``: a generator of ``(key, array)`` over an archive (a
    path, a pipe ``cmd |``, or a binary file object, whose rest is read first)."""
    _check_endian(endian)
    path, temporary = _rxfilename_of(fname)
    try:
        for item in _native.KaldiSequentialReader("ark:" + path):
            yield item
    finally:
        if temporary is not None:
            os.unlink(temporary)


def load_mat(ark_name: str, endian: str = "<", fd_dict: Any = None) -> Any:
    """kaldiio's ``load_mat``: one object from ``file``, ``file:offset``, a pipe ``cmd |``,
    with a Kaldi range ``[first:last]`` or ``[first:last,first:last]`` (inclusive)."""
    _check_endian(endian)
    return _native.kaldi_load_mat(ark_name)


def _read_script_text(fname: str) -> str:
    stripped = fname.strip()
    if stripped.endswith("|"):
        return subprocess.run(stripped[:-1], shell=True, check=True, stdout=subprocess.PIPE).stdout.decode()
    with open(fname, "r") as f:
        return f.read()


class _ScpTable(Mapping):
    """kaldiio's lazy ``load_scp`` mapping: keys in the script's order, each value read on
    access through Kaldi's random-access reader (which keeps the data files open)."""

    def __init__(self, fname: str):
        text = _read_script_text(fname)
        self._rxfilenames: Dict[str, str] = {}
        for line_no, line in enumerate(text.splitlines(), 1):
            parts = line.strip().split(None, 1)
            if len(parts) != 2:
                raise ValueError(f"{fname}: line {line_no} `{line}`: expected `key rxfilename`")
            self._rxfilenames[parts[0]] = parts[1]
        self._temporary: Optional[str] = None
        path = fname
        if fname.strip().endswith("|"):
            # the command ran once: the reader reads its output, saved
            handle, path = tempfile.mkstemp(prefix="arrays-kaldi-", suffix=".scp")
            with os.fdopen(handle, "w") as out:
                out.write(text)
            self._temporary = path
        self._reader = _native.KaldiRandomAccessReader("scp:" + path)
        self.fname = fname

    def __getitem__(self, key: str) -> Any:
        if key not in self._rxfilenames:
            raise KeyError(key)
        value = self._reader.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._rxfilenames)

    def __len__(self) -> int:
        return len(self._rxfilenames)

    def __contains__(self, key: object) -> bool:
        return key in self._rxfilenames

    def rxfilename(self, key: str) -> str:
        """The script's rxfilename of `key` (``a.ark:123``, with its range if any)."""
        return self._rxfilenames[key]

    def __del__(self) -> None:
        if getattr(self, "_temporary", None):
            try:
                os.unlink(self._temporary)
            except OSError:
                pass


def load_scp(
    fname: str,
    endian: str = "<",
    separator: Optional[str] = None,
    segments: Optional[str] = None,
    max_cache_fd: int = 0,
) -> Mapping:
    """kaldiio's ``load_scp(fname)``: a lazy mapping from key to array, random access by
    key (the data files stay open: ``max_cache_fd`` is not needed and ignored)."""
    _check_endian(endian)
    if separator is not None:
        raise NotImplementedError("separator: Kaldi's scripts separate key and rxfilename by whitespace")
    if segments is not None:
        raise NotImplementedError("segments: kaldiio cuts wav recordings with it; wav is not supported")
    return _ScpTable(fname)


def load_scp_sequential(fname: str, endian: str = "<", separator: Optional[str] = None, segments: Optional[str] = None) -> Iterator[Tuple[str, Any]]:
    """kaldiio's ``load_scp_sequential``: ``(key, array)`` in the script's order."""
    _check_endian(endian)
    if separator is not None or segments is not None:
        raise NotImplementedError("separator and segments are not supported")
    yield from _native.KaldiSequentialReader("scp:" + fname)


def _open_or_fd(fname: Any, mode: str):
    if isinstance(fname, (str, os.PathLike)):
        return open(fname, mode), True
    return fname, False


def save_ark(
    ark: Any,
    array_dict: Dict[str, Any],
    scp: Any = None,
    append: bool = False,
    text: bool = False,
    endian: str = "<",
    compression_method: Optional[int] = None,
    write_function: Optional[str] = None,
    write_kwargs: Optional[dict] = None,
) -> None:
    """kaldiio's ``save_ark``: writes ``key value`` records to ``ark`` (a path or a binary
    file object), and ``key ark:offset`` lines to ``scp`` when given. Values are encoded by
    Kaldi's holders in Rust (text values at Kaldi's precision, ``%.7g``)."""
    _check_endian(endian)
    _not_supported("write_function", write_function)
    if scp is not None and not isinstance(ark, (str, os.PathLike)) and not hasattr(ark, "tell"):
        raise TypeError("scp file can be created only if the output ark file is a file or a seekable file descriptor.")
    fd, owned = _open_or_fd(ark, "ab" if append else "wb")
    positions = []
    try:
        try:
            offset = fd.tell()
        except (OSError, AttributeError):
            offset = 0
        for key, value in array_dict.items():
            if not isinstance(key, str) or not key or any(c.isspace() for c in key):
                raise ValueError(f"invalid key {key!r}: a key is a non-empty string without whitespace")
            head = (key + " ").encode()
            fd.write(head)
            offset += len(head)
            positions.append(offset)
            body = _native.kaldi_value_bytes(value, text, compression_method)
            fd.write(body)
            offset += len(body)
    finally:
        if owned:
            fd.close()
    if scp is not None:
        name = os.fspath(ark) if isinstance(ark, (str, os.PathLike)) else ark.name
        sfd, sowned = _open_or_fd(scp, "a" if append else "w")
        try:
            for key, position in zip(array_dict, positions):
                sfd.write(f"{key} {name}:{position}\n")
        finally:
            if sowned:
                sfd.close()


def save_mat(fname: Any, array: Any, endian: str = "<", compression_method: Optional[int] = None) -> int:
    """kaldiio's ``save_mat``: one object (``\\0B`` and its binary form) to a path or a
    binary file object; returns the bytes written."""
    _check_endian(endian)
    body = _native.kaldi_value_bytes(array, False, compression_method)
    fd, owned = _open_or_fd(fname, "wb")
    try:
        fd.write(body)
    finally:
        if owned:
            fd.close()
    return len(body)
