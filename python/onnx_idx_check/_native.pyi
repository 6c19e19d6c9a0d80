"""Type stubs of the extension module ``onnx_idx_check._native`` (python/src/lib.rs)."""

import os
from typing import Optional, Sequence, Union

import numpy as np

__version__: str
DEFAULT_MAX_OUTPUT_BYTES: int

class SpecError(ValueError):
    """The inputs or attributes break the operator's spec at this version."""

class UnsupportedError(NotImplementedError):
    """The spec allows these inputs, but onnx-idx-check does not evaluate them."""

class OutputTooLargeError(MemoryError):
    """An output would be larger than the limit, or than this machine can allocate."""

class CheckFailedToRun(RuntimeError):
    """A check could not run at all: no verdict exists."""

# (ONNX dtype id, shape, words): a flat numpy array of unsigned words of the element's width,
# one byte per element for the packed sub-byte types, or a list of bytes for strings.
Triple = tuple[int, list[int], Union[np.ndarray, list[bytes]]]
_PathArg = Union[str, "os.PathLike[str]"]

def evaluate(
    domain: str,
    op_type: str,
    opset: int,
    attrs: Sequence[tuple[str, Union[int, str, bytes]]],
    inputs: Sequence[Optional[Triple]],
    outputs: int = 1,
    max_bytes: int = ...,
) -> list[Triple]: ...
def main(argv: Sequence[str], keep_freed_memory: bool = False) -> int: ...
def check(
    paths: Sequence[_PathArg],
    *,
    actual: Optional[_PathArg] = None,
    runtime: Optional[str] = None,
    runtime_cmd: Optional[str] = None,
    expectations: Optional[_PathArg] = None,
    filter: Sequence[str] = ...,
    exclude: Sequence[str] = ...,
    jobs: Optional[int] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    exact: bool = False,
    timeout: Optional[float] = None,
    repeat: Optional[int] = None,
    max_tensor_bytes: Optional[int] = None,
    fail_fast: bool = False,
    deny_skip: bool = False,
    min_cases: Optional[int] = None,
    require_ops: Sequence[str] = ...,
) -> tuple[str, str, bool]: ...

