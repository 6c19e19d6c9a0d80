"""``reference_ops()`` as a drop-in for ONNX's ReferenceEvaluator, on ONNX's own node tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import onnx_idx_check as oic

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from conftest import TESTDATA  # noqa: E402


def _cases() -> list[Path]:
    # ONNX's official node tests for these operators and the spec's worked examples, as the
    # repository keeps them (testdata/README.md says where each comes from).
    if not TESTDATA.is_dir():
        return []
    return sorted(p.parent for p in TESTDATA.glob("*/*/model.onnx"))


def _load(path: Path) -> np.ndarray:
    t = TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


@pytest.mark.parametrize("case", _cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_evaluator_with_the_drop_in_gives_every_expected_output(case):
    model = onnx.load(str(case / "model.onnx"))
    ref = ReferenceEvaluator(model, new_ops=oic.reference_ops())
    names = [i.name for i in model.graph.input]
    initialized = {i.name for i in model.graph.initializer}
    names = [n for n in names if n not in initialized]
    for ds in sorted(case.glob("test_data_set_*")):
        feeds = {n: _load(ds / f"input_{k}.pb") for k, n in enumerate(names)}
        got = ref.run(None, feeds)
        for k, out in enumerate(got):
            expected = _load(ds / f"output_{k}.pb")
            assert out.dtype == expected.dtype, (case, k)
            np.testing.assert_array_equal(out, expected, err_msg=f"{case} output {k}")


def test_the_drop_in_replaces_the_evaluators_own_kernels():
    names = {(c.op_domain, c.__name__) for c in oic.reference_ops()}
    for op in ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND"):
        assert ("", op) in names
    assert ("org.openvinotoolkit", "Gather") in names
    assert ("com.microsoft", "GatherGrad") in names


def _model(op: str, opset: int, inputs, output_type, **attrs):
    node = helper.make_node(op, [n for n, _, _ in inputs], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("y", output_type, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_negative_indices_at_gather_1_raise_where_the_plain_evaluator_wraps():
    model = _model(
        "Gather",
        1,
        [("x", TensorProto.FLOAT, [3]), ("i", TensorProto.INT64, [1])],
        TensorProto.FLOAT,
    )
    feeds = {"x": np.array([1, 2, 3], np.float32), "i": np.array([-1])}
    with pytest.raises(oic.SpecError, match="negative"):
        ReferenceEvaluator(model, new_ops=oic.reference_ops()).run(None, feeds)


def test_out_of_range_gather_elements_raises_with_the_tensors_name():
    model = _model(
        "GatherElements",
        13,
        [("x", TensorProto.FLOAT, [2, 2]), ("i", TensorProto.INT64, [2, 2])],
        TensorProto.FLOAT,
        axis=1,
    )
    feeds = {"x": np.ones((2, 2), np.float32), "i": np.array([[0, 2], [1, 0]])}
    with pytest.raises(oic.SpecError, match=r"indices.*2.*out of range|range.*2"):
        ReferenceEvaluator(model, new_ops=oic.reference_ops()).run(None, feeds)


def test_gather_elements_on_a_long_axis_matches_take_along_axis():
    # The plain evaluator goes wrong once the gathered axis is 64 or longer (issue 17).
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 200)).astype(np.float32)
    i = rng.integers(-200, 200, size=(3, 50))
    model = _model(
        "GatherElements",
        13,
        [("x", TensorProto.FLOAT, [3, 200]), ("i", TensorProto.INT64, [3, 50])],
        TensorProto.FLOAT,
        axis=1,
    )
    (y,) = ReferenceEvaluator(model, new_ops=oic.reference_ops()).run(None, {"x": x, "i": i})
    np.testing.assert_array_equal(y, np.take_along_axis(x, np.where(i < 0, i + 200, i), axis=1))


def test_attributes_are_checked_by_type_as_in_a_model_file():
    model = _model(
        "Gather",
        13,
        [("x", TensorProto.FLOAT, [3]), ("i", TensorProto.INT64, [1])],
        TensorProto.FLOAT,
        axis=0.5,
    )
    feeds = {"x": np.array([1, 2, 3], np.float32), "i": np.array([0])}
    with pytest.raises(oic.SpecError, match="axis"):
        ReferenceEvaluator(model, new_ops=oic.reference_ops()).run(None, feeds)


def test_the_opset_of_the_model_picks_the_version():
    # ScatterElements max arrives with 18: at opset 16 the same node is a violation.
    inputs = [
        ("x", TensorProto.FLOAT, [1, 3]),
        ("i", TensorProto.INT64, [1, 2]),
        ("u", TensorProto.FLOAT, [1, 2]),
    ]
    feeds = {
        "x": np.array([[1, 2, 3]], np.float32),
        "i": np.array([[0, 0]]),
        "u": np.array([[5, 4]], np.float32),
    }
    m18 = _model("ScatterElements", 18, inputs, TensorProto.FLOAT, axis=1, reduction="max")
    (y,) = ReferenceEvaluator(m18, new_ops=oic.reference_ops()).run(None, feeds)
    np.testing.assert_array_equal(y, [[5, 2, 3]])
    m16 = _model("ScatterElements", 16, inputs, TensorProto.FLOAT, axis=1, reduction="max")
    with pytest.raises(oic.SpecError, match="max"):
        ReferenceEvaluator(m16, new_ops=oic.reference_ops()).run(None, feeds)
