from collections.abc import Mapping
from typing import IO, Any, Dict, Iterator, Optional, Tuple, Union
import os

import numpy as np
import numpy.typing as npt

from arrays._native import CompressedMatrix as CompressedMatrix

Value = Union[npt.NDArray[np.float32], npt.NDArray[np.float64], npt.NDArray[np.int32], Any]
PathOrFile = Union[str, os.PathLike, IO[bytes]]

kAutomaticMethod: int
kSpeechFeature: int
kTwoByteAuto: int
kTwoByteSignedInteger: int
kOneByteAuto: int
kOneByteUnsignedInteger: int
kOneByteZeroOne: int

class ReadHelper:
    rspecifier: str
    closed: bool
    def __init__(self, rspecifier: str, segments: Optional[str] = None, *, holder: Optional[str] = None) -> None: ...
    def __iter__(self) -> Iterator[Tuple[str, Value]]: ...
    def __enter__(self) -> ReadHelper: ...
    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None: ...
    def close(self) -> None: ...

class WriteHelper:
    wspecifier: str
    compression_method: Optional[int]
    closed: bool
    def __init__(self, wspecifier: str, compression_method: Optional[int] = None, write_function: Optional[str] = None) -> None: ...
    def __call__(self, key: str, array: Any) -> None: ...
    def __setitem__(self, key: str, value: Any) -> None: ...
    def __enter__(self) -> WriteHelper: ...
    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None: ...
    def close(self) -> None: ...

def load_ark(fname: PathOrFile, endian: str = "<") -> Iterator[Tuple[str, Value]]: ...
def load_mat(ark_name: str, endian: str = "<", fd_dict: Any = None) -> Value: ...
def load_scp(
    fname: str, endian: str = "<", separator: Optional[str] = None, segments: Optional[str] = None, max_cache_fd: int = 0
) -> Mapping[str, Value]: ...
def load_scp_sequential(
    fname: str, endian: str = "<", separator: Optional[str] = None, segments: Optional[str] = None
) -> Iterator[Tuple[str, Value]]: ...
def save_ark(
    ark: PathOrFile,
    array_dict: Dict[str, Any],
    scp: Optional[Union[str, os.PathLike, IO[str]]] = None,
    append: bool = False,
    text: bool = False,
    endian: str = "<",
    compression_method: Optional[int] = None,
    write_function: Optional[str] = None,
    write_kwargs: Optional[dict] = None,
) -> None: ...
def save_mat(fname: PathOrFile, array: Any, endian: str = "<", compression_method: Optional[int] = None) -> int: ...
