"""The numpy API: one function per operator, strict per version.

Each function evaluates the operator exactly as ``onnx-idx-check run`` evaluates a node of a
model at the given opset (the version with the highest ``since`` at or below it), with the same
checks and messages: inputs the spec forbids raise :class:`SpecError`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _native
from ._convert import StringKind, from_triple, prepare

ArrayLike = Any
Attr = Union[int, str, bytes]

DEFAULT_MAX_OUTPUT_BYTES: int = _native.DEFAULT_MAX_OUTPUT_BYTES


def evaluate(
    domain: str,
    op_type: str,
    opset: int,
    inputs: Sequence[Optional[ArrayLike]],
    attrs: Optional[Sequence[tuple[str, Attr]]] = None,
    *,
    outputs: int = 1,
    names: Optional[Sequence[str]] = None,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> list[np.ndarray]:
    """Evaluates any operator onnx-idx-check knows, as a node of ``domain`` at ``opset``.

    ``attrs`` are ``(name, value)`` pairs: an ``int``, a ``str``, or a serialized
    ``onnx.AttributeProto``. Returns every output.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.evaluate("", "Gather", 13, [np.array([5, 6, 7]), np.array([2, 0])])
    [array([7, 5])]
    """
    names = names or [f"input {i}" for i in range(len(inputs))]
    triples = _native.evaluate(
        domain,
        op_type,
        opset,
        list(attrs or []),
        prepare(inputs, names),
        outputs,
        max_output_bytes,
    )
    strings = StringKind(inputs)
    return [from_triple(t, strings) for t in triples]


def _one(
    op_type: str,
    opset: int,
    inputs: Sequence[Optional[ArrayLike]],
    names: Sequence[str],
    attrs: Sequence[tuple[str, Attr]],
    max_output_bytes: int,
    domain: str = "",
) -> np.ndarray:
    return evaluate(
        domain,
        op_type,
        opset,
        inputs,
        attrs,
        names=names,
        max_output_bytes=max_output_bytes,
    )[0]


def _optional(**attrs: Optional[Attr]) -> list[tuple[str, Attr]]:
    """The attributes given, in order; ``None`` means "not given": the version's default."""
    return [(k, v) for k, v in attrs.items() if v is not None]


def gather(
    data: ArrayLike,
    indices: ArrayLike,
    axis: int = 0,
    *,
    opset: int = 13,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """ONNX Gather (versions 1, 11, 13): entries of ``data`` along ``axis`` picked by
    ``indices``. Negative indices count from the back from version 11 on; an index out of
    range raises :class:`SpecError`.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.gather(np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]]), np.array([[0, 1], [1, 2]]))
    array([[[1. , 1.2],
            [2.3, 3.4]],
    <BLANKLINE>
           [[2.3, 3.4],
            [4.5, 5.7]]])
    """
    return _one(
        "Gather",
        opset,
        [data, indices],
        ["data", "indices"],
        [("axis", axis)],
        max_output_bytes,
    )


def gather_elements(
    data: ArrayLike,
    indices: ArrayLike,
    axis: int = 0,
    *,
    opset: int = 13,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """ONNX GatherElements (versions 11, 13): like ``np.take_along_axis``, strict about
    ranks, shapes and out-of-range indices.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.gather_elements(np.array([[1, 2], [3, 4]]), np.array([[0, 0], [1, 0]]), axis=1)
    array([[1, 1],
           [4, 3]])
    """
    return _one(
        "GatherElements",
        opset,
        [data, indices],
        ["data", "indices"],
        [("axis", axis)],
        max_output_bytes,
    )


def gather_nd(
    data: ArrayLike,
    indices: ArrayLike,
    batch_dims: int = 0,
    *,
    opset: int = 13,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """ONNX GatherND (versions 11, 12, 13): slices of ``data`` addressed by the last axis of
    ``indices``; ``batch_dims`` from version 12 on.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.gather_nd(np.array([[0, 1], [2, 3]]), np.array([[0, 0], [1, 1]]))
    array([0, 3])
    """
    attrs = _optional(batch_dims=batch_dims if batch_dims != 0 or opset >= 12 else None)
    return _one(
        "GatherND", opset, [data, indices], ["data", "indices"], attrs, max_output_bytes
    )


def scatter(
    data: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    axis: int = 0,
    *,
    opset: int = 9,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """ONNX Scatter (version 9, deprecated at opset 11 for ScatterElements): a copy of
    ``data`` with ``updates`` written where ``indices`` point along ``axis``.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.scatter(np.zeros((1, 5)), np.array([[1, 3]]), np.array([[1.1, 2.1]]), axis=1)
    array([[0. , 1.1, 0. , 2.1, 0. ]])
    """
    return _one(
        "Scatter",
        opset,
        [data, indices, updates],
        ["data", "indices", "updates"],
        [("axis", axis)],
        max_output_bytes,
    )


def scatter_elements(
    data: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    axis: int = 0,
    reduction: Optional[str] = None,
    *,
    opset: int = 18,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """ONNX ScatterElements (versions 11, 13, 16, 18): ``reduction`` is ``"none"``, ``"add"``
    or ``"mul"`` from version 16 and also ``"max"`` or ``"min"`` from 18; ``None`` leaves the
    attribute out. With reduction "none", duplicate indices are allowed and the last write
    wins (decision D7).

    >>> import numpy as np, onnx_idx_check as oic
    >>> data = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]])
    >>> oic.scatter_elements(data, np.array([[1, 1]]), np.array([[1.1, 2.1]]), 1, "add")
    array([[1. , 5.2, 3. , 4. , 5. ]])
    """
    return _one(
        "ScatterElements",
        opset,
        [data, indices, updates],
        ["data", "indices", "updates"],
        [("axis", axis), *_optional(reduction=reduction)],
        max_output_bytes,
    )


def scatter_nd(
    data: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    reduction: Optional[str] = None,
    *,
    opset: int = 18,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """ONNX ScatterND (versions 11, 13, 16, 18): slices of ``updates`` written where the last
    axis of ``indices`` addresses ``data``, with the reductions of ScatterElements.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.scatter_nd(np.arange(1, 9), np.array([[4], [3], [1], [7]]), np.array([9, 10, 11, 12]))
    array([ 1, 11,  3, 10,  9,  6,  7, 12])
    """
    return _one(
        "ScatterND",
        opset,
        [data, indices, updates],
        ["data", "indices", "updates"],
        _optional(reduction=reduction),
        max_output_bytes,
    )


def tensor_scatter(
    past_cache: ArrayLike,
    update: ArrayLike,
    write_indices: Optional[ArrayLike] = None,
    axis: int = -2,
    mode: Optional[str] = None,
    *,
    opset: int = 24,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """ONNX TensorScatter (version 24): ``update`` written into each batch row of
    ``past_cache`` along ``axis`` from ``write_indices[b]`` on (0 without it); ``mode`` is
    ``"linear"`` (the default) or ``"circular"``.

    >>> import numpy as np, onnx_idx_check as oic
    >>> cache = np.zeros((2, 4, 1), dtype=np.float32)
    >>> oic.tensor_scatter(cache, np.ones((2, 1, 1), np.float32), np.array([1, 3]), axis=1)[:, :, 0]
    array([[0., 1., 0., 0.],
           [0., 0., 0., 1.]], dtype=float32)
    """
    return _one(
        "TensorScatter",
        opset,
        [past_cache, update, write_indices],
        ["past_cache", "update", "write_indices"],
        [("axis", axis), *_optional(mode=mode)],
        max_output_bytes,
    )


def openvino_gather(
    data: ArrayLike,
    indices: ArrayLike,
    axis: ArrayLike,
    batch_dims: int = 0,
    *,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """OpenVINO's Gather-8 (domain ``org.openvinotoolkit``): ``axis`` is an input (a scalar),
    ``batch_dims`` may be negative, negative indices count from the back and an index out of
    range gathers zeros.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.openvino_gather(np.array([1, 2, 3, 4, 5]), np.array([0, -1, 7]), 0)
    array([1, 5, 0])
    """
    if isinstance(axis, (int, np.integer)):
        axis = np.asarray(axis, dtype=np.int64)
    return _one(
        "Gather",
        8,
        [data, indices, axis],
        ["data", "indices", "axis"],
        [("batch_dims", batch_dims)],
        max_output_bytes,
        domain="org.openvinotoolkit",
    )


def gather_grad(
    shape: ArrayLike,
    indices: ArrayLike,
    dY: ArrayLike,  # noqa: N803 - the input's name in the op's schema
    axis: int = 0,
    *,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """onnxruntime's GatherGrad (domain ``com.microsoft``), the gradient of Gather: zeros of
    ``shape`` with each slice of ``dY`` added where ``indices`` gathered it from.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.gather_grad(np.array([3]), np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0]))
    array([4., 0., 2.])
    """
    return _one(
        "GatherGrad",
        1,
        [shape, indices, dY],
        ["shape", "indices", "dY"],
        [("axis", axis)],
        max_output_bytes,
        domain="com.microsoft",
    )


def gather_elements_grad(
    dY: ArrayLike,  # noqa: N803 - the input's name in the op's schema
    shape: ArrayLike,
    indices: ArrayLike,
    axis: int = 0,
    *,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> np.ndarray:
    """onnxruntime's GatherElementsGrad (domain ``com.microsoft``), the gradient of
    GatherElements: zeros of ``shape`` with ``dY`` added where ``indices`` point.

    >>> import numpy as np, onnx_idx_check as oic
    >>> oic.gather_elements_grad(np.array([[1.0, 2.0]]), np.array([1, 3]), np.array([[2, 2]]), axis=1)
    array([[0., 0., 3.]])
    """
    return _one(
        "GatherElementsGrad",
        1,
        [dY, shape, indices],
        ["dY", "shape", "indices"],
        [("axis", axis)],
        max_output_bytes,
        domain="com.microsoft",
    )
