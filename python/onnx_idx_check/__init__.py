"""onnx-idx-check: the reference for ONNX's indexing operators, from Python.

- A numpy API, strict per operator version: :func:`gather`, :func:`gather_elements`,
  :func:`gather_nd`, :func:`scatter`, :func:`scatter_elements`, :func:`scatter_nd`,
  :func:`tensor_scatter`, :func:`openvino_gather`, :func:`gather_grad`,
  :func:`gather_elements_grad` (and :func:`evaluate` for any of them by name). Inputs the spec
  forbids raise :class:`SpecError`, a ``ValueError``, with the message ``onnx-idx-check run``
  prints.
- :func:`reference_ops`: drop-in op classes for ``onnx.reference.ReferenceEvaluator``.
- :func:`check` and :func:`generate`: whole runs, as the command line's ``run`` and
  ``generate``.
- A pytest plugin: ``pytest --onnx-idx-check PATH`` runs each node-test case as a test.

>>> import numpy as np, onnx_idx_check as oic
>>> oic.gather_elements(np.array([[1, 2], [3, 4]]), np.array([[0, 0], [1, 0]]), axis=1)
array([[1, 1],
       [4, 3]])
>>> oic.gather(np.array([1, 2, 3]), np.array([-1]), opset=1)
Traceback (most recent call last):
...
onnx_idx_check.SpecError: indices[0] = -1 is negative, which Gather-1 does not allow (negative indices arrive with opset 11); valid range [0, 2] for axis 0 (size 3) (onnx-idx-check's decision D2, not the spec: docs/semantics.md#d2-negative-indices-before-opset-11)
"""

from ._check import Report, check, generate
from ._native import (
    CheckFailedToRun,
    OutputTooLargeError,
    SpecError,
    UnsupportedError,
    __version__,
)
from ._ops import (
    DEFAULT_MAX_OUTPUT_BYTES,
    evaluate,
    gather,
    gather_elements,
    gather_elements_grad,
    gather_grad,
    gather_nd,
    openvino_gather,
    scatter,
    scatter_elements,
    scatter_nd,
    tensor_scatter,
)
from ._reference import reference_ops

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "CheckFailedToRun",
    "OutputTooLargeError",
    "Report",
    "SpecError",
    "UnsupportedError",
    "__version__",
    "check",
    "evaluate",
    "gather",
    "gather_elements",
    "gather_elements_grad",
    "gather_grad",
    "gather_nd",
    "generate",
    "openvino_gather",
    "reference_ops",
    "scatter",
    "scatter_elements",
    "scatter_nd",
    "tensor_scatter",
]
