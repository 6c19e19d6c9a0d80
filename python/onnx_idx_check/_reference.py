"""Op classes for ``onnx.reference.ReferenceEvaluator(model, new_ops=reference_ops())``."""

from __future__ import annotations

from typing import Any

from . import _native
from ._ops import evaluate

# (domain, op_type) of every operator the kernels evaluate. The evaluator keys new ops by
# (op_domain, class name), so each class is named for its op_type.
_OPS = [
    ("", "Gather"),
    ("", "GatherElements"),
    ("", "GatherND"),
    ("", "Scatter"),
    ("", "ScatterElements"),
    ("", "ScatterND"),
    ("", "TensorScatter"),
    ("org.openvinotoolkit", "Gather"),
    ("com.microsoft", "GatherGrad"),
    ("com.microsoft", "GatherElementsGrad"),
]


def _run(self: Any, *inputs: Any, **linked: Any) -> tuple[Any, ...]:
    node = self.onnx_node
    opsets = self.run_params["opsets"]
    domain = node.domain
    opset = opsets.get(domain, opsets.get("ai.onnx" if domain == "" else "", None))
    if opset is None:
        raise RuntimeError(f"the model imports no opset for domain {domain!r}")
    attrs: list[tuple[str, Any]] = []
    for a in node.attribute:
        if a.ref_attr_name:
            # An attribute of a function node that refers to the caller's: the evaluator
            # resolved it into the keyword arguments.
            value = linked.get(a.name)
            if value is None:
                raise RuntimeError(f"linked attribute {a.name!r} has no value")
            attrs.append((a.name, value.decode() if isinstance(value, bytes) else value))
        else:
            # Serialized, so that the kernels check its type as for a node of a file.
            attrs.append((a.name, a.SerializeToString()))
    names = [n or f"input {i}" for i, n in enumerate(node.input)]
    outs = evaluate(
        domain,
        node.op_type,
        int(opset),
        list(inputs),
        attrs,
        outputs=max(1, len(node.output)),
        names=names,
    )
    return tuple(outs)


def reference_ops() -> list[type]:
    """Op classes for ONNX's reference evaluator that evaluate Gather, GatherElements,
    GatherND, Scatter, ScatterElements, ScatterND, TensorScatter, OpenVINO's Gather-8 and the
    GatherGrad ops with onnx-idx-check's kernels: strict per version (an input the spec
    forbids raises :class:`SpecError` instead of wrapping or reading past the end) and fast.

    Needs the ``onnx`` package.

    >>> import numpy as np, onnx
    >>> from onnx import helper, TensorProto
    >>> from onnx.reference import ReferenceEvaluator
    >>> import onnx_idx_check
    >>> node = helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)
    >>> graph = helper.make_graph([node], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
    ...      helper.make_tensor_value_info("i", TensorProto.INT64, [2, 2])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    >>> ref = ReferenceEvaluator(model, new_ops=onnx_idx_check.reference_ops())
    >>> ref.run(None, {"x": np.array([[1, 2], [3, 4]], np.float32),
    ...                "i": np.array([[0, 0], [1, 0]])})[0]
    array([[1., 1.],
           [4., 3.]], dtype=float32)
    """
    from onnx.reference.op_run import OpRun  # noqa: PLC0415 - onnx is optional

    classes: list[type] = []
    for domain, op_type in _OPS:
        doc = (
            f"{op_type} of domain {domain or 'ai.onnx'!r}, evaluated by onnx-idx-check "
            f"{_native.__version__}."
        )
        classes.append(
            type(
                op_type,
                (OpRun,),
                {"op_domain": domain, "_run": _run, "__doc__": doc, "__module__": __name__},
            )
        )
    return classes
