"""numpy arrays to the extension module's ``(dtype, shape, words)`` triples and back.

The extension takes each tensor as its ONNX dtype id, its shape and a flat array of unsigned
words of the element's width (the bits of a float are its word), so that one Rust kernel serves
every dtype. Sub-byte types (int4, float4e2m1, ...) travel one code per byte, as ``ml_dtypes``
stores them; strings as a list of ``bytes``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

# ONNX TensorProto.DataType ids of the dtypes numpy has natively.
_NATIVE: dict[str, int] = {
    "float32": 1,
    "uint8": 2,
    "int8": 3,
    "uint16": 4,
    "int16": 5,
    "int32": 6,
    "int64": 7,
    "bool": 9,
    "float16": 10,
    "float64": 11,
    "uint32": 12,
    "uint64": 13,
    "complex64": 14,
    "complex128": 15,
}
STRING = 8
# The ml_dtypes names of the ONNX dtypes numpy lacks.
_ML_DTYPES: dict[str, int] = {
    "bfloat16": 16,
    "float8_e4m3fn": 17,
    "float8_e4m3fnuz": 18,
    "float8_e5m2": 19,
    "float8_e5m2fnuz": 20,
    "uint4": 21,
    "int4": 22,
    "float4_e2m1fn": 23,
    "float8_e8m0fnu": 24,
    "uint2": 25,
    "int2": 26,
    "float6_e2m3fn": 27,
    "float6_e3m2fn": 28,
}
_ONNX_NAMES = {
    **{v: k for k, v in _NATIVE.items()},
    **{v: k for k, v in _ML_DTYPES.items()},
    STRING: "string",
}
_WORD = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}


def _ml_dtypes() -> Any:
    try:
        import ml_dtypes  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - ml_dtypes comes with onnx
        raise TypeError(
            "this dtype needs the ml_dtypes package: pip install ml_dtypes"
        ) from e
    return ml_dtypes


def onnx_id(dtype: np.dtype) -> int:
    """The ONNX dtype id of a numpy dtype; strings of every numpy kind are ``8``."""
    if dtype.kind in "OUST":
        return STRING
    if dtype.name in _NATIVE and dtype.kind != "V":
        return _NATIVE[dtype.name]
    if dtype.name in _ML_DTYPES:
        return _ML_DTYPES[dtype.name]
    raise TypeError(
        f"numpy dtype {dtype} has no ONNX counterpart that onnx-idx-check evaluates "
        f"(numpy's bool, integers, floats and complex, ml_dtypes' "
        f"{', '.join(sorted(_ML_DTYPES))}, and strings)"
    )


def numpy_dtype(onnx: int) -> np.dtype:
    """The numpy dtype that holds ONNX dtype ``onnx`` (ml_dtypes for bfloat16 and the like)."""
    name = _ONNX_NAMES[onnx]
    if onnx in _ML_DTYPES.values():
        return np.dtype(getattr(_ml_dtypes(), name))
    if onnx == STRING:
        return np.dtype(object)
    return np.dtype(name)


def _string_bytes(a: np.ndarray, what: str) -> list[bytes]:
    out = []
    for i, s in enumerate(a.reshape(-1).tolist()):
        if isinstance(s, str):
            out.append(s.encode("utf-8"))
        elif isinstance(s, (bytes, bytearray)):
            out.append(bytes(s))
        else:
            raise TypeError(
                f"{what}: element {i} of a string tensor is {type(s).__name__}, not str or bytes"
            )
    return out


def to_triple(x: Any, what: str) -> tuple[int, list[int], Any]:
    """The triple of one input (``what`` names it in errors)."""
    a = np.asarray(x)
    dtype_id = onnx_id(a.dtype)
    shape = list(a.shape)
    if dtype_id == STRING:
        return dtype_id, shape, _string_bytes(a, what)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    # A view of the same memory when the array is C-contiguous (numpy copies otherwise).
    a = np.ascontiguousarray(a)
    words = a.reshape(-1).view(_WORD[a.dtype.itemsize])
    return dtype_id, shape, words


class StringKind:
    """How the string inputs of a call were given, so that string outputs come back alike: the
    first string input decides the form (object array of ``str`` or of ``bytes``, fixed-width
    ``U`` or ``S``, or ``StringDType``)."""

    def __init__(self, arrays: Sequence[Any]) -> None:
        self.kind = "str"
        # For fixed-width inputs: the widest such input of the same kind, in characters (U) or
        # bytes (S), so that an output is at least as wide as numpy's own functions make it
        # (``np.take`` of a ``<U3`` array is ``<U3``).
        self.width = 0
        strings = [
            a
            for a in (np.asarray(x) for x in arrays if x is not None)
            if a.dtype.kind in "OUST"
        ]
        if not strings:
            return
        first = strings[0]
        if first.dtype.kind in "TUS":
            self.kind = first.dtype.kind
        elif first.size and isinstance(first.reshape(-1)[0], bytes):
            self.kind = "bytes"
        if self.kind in "US":
            per_char = 4 if self.kind == "U" else 1
            self.width = max(
                a.dtype.itemsize // per_char for a in strings if a.dtype.kind == self.kind
            )

    def array(self, strings: list[bytes], shape: list[int]) -> np.ndarray:
        """The strings as the inputs had them: ``str`` (UTF-8, or ``bytes`` where the bytes
        are not UTF-8) in an object array, ``bytes`` in an object array, numpy's
        ``StringDType``, or fixed-width ``U`` (``<Un``) and ``S`` (``|Sn``) arrays, ``n`` the
        width of the widest such input or of the longest output string if longer."""
        if self.kind in ("bytes", "S"):
            items: list[Any] = list(strings)
        else:
            items = []
            for s in strings:
                try:
                    items.append(s.decode("utf-8"))
                except UnicodeDecodeError:
                    items.append(s)
        if self.kind == "S":
            n = max([self.width, 1, *(len(s) for s in items)])
            return np.array(items, dtype=f"S{n}").reshape(shape)
        if self.kind == "U" and all(isinstance(s, str) for s in items):
            n = max([self.width, 1, *(len(s) for s in items)])
            return np.array(items, dtype=f"<U{n}").reshape(shape)
        if self.kind == "T" and all(isinstance(s, str) for s in items):
            return np.array(items, dtype=np.dtypes.StringDType()).reshape(shape)
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(shape)


def from_triple(t: tuple[int, list[int], Any], strings: StringKind) -> np.ndarray:
    """The numpy array of one output triple; its words become the array without a copy."""
    dtype_id, shape, words = t
    if dtype_id == STRING:
        return strings.array(words, shape)
    return words.view(numpy_dtype(dtype_id)).reshape(shape)


def prepare(inputs: Sequence[Optional[Any]], names: Sequence[str]) -> list[Any]:
    """Triples of every input, ``None`` kept for an omitted optional one."""
    return [None if x is None else to_triple(x, n) for x, n in zip(inputs, names)]
