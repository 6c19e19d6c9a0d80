#!/usr/bin/env python3
"""The minimal cases of the upstream indexing bugs that docs/upstream-bugs.md follows.

Usage: python3 scripts/upstream_bugs.py [--check] [--out DIR]

Writes one ONNX node-test case per trigger (model.onnx, test_data_set_0/input_K.pb and
output_K.pb) into DIR/<runtime>-<number>-<short-name>/ (DIR: upstream-bugs/ at the repository
root). Most triggers come in two forms: the indices as a graph input (`-input`) and as an
initializer (`-const`), since runtimes take other paths for constants (tinygrad#14185 is exactly
that). The expected outputs are the values the issue threads give, written out by hand, checked
against numpy here; never what a runtime or onnx-idx-check computes.

The bytes are the same on every run. --check writes nothing and exits 1 when a file under DIR
differs from what this script would write, is missing, or is not one of its files.

Needs onnx and numpy (scripts/requirements-onnx-reference.txt).
"""

import argparse
import dataclasses
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "upstream-bugs"
# Every model says IR version 8 (opsets up to 18): the newest IR onnx 1.23 writes by default is
# refused by some of the runtimes under test, which would hide the bug behind a refusal.
IR_VERSION = 8
NAN = np.float32("nan")
GITATTRIBUTES = b"""# Written by scripts/upstream_bugs.py. ONNX protobuf files are binary: never convert their
# line ends or diff them as text.
*.onnx binary
*.pb binary
"""


@dataclasses.dataclass
class Case:
    """One trigger: a single-node model, its inputs and the hand-worked expected output."""

    name: str
    op: str
    opset: int
    attrs: dict
    # (name, array) in the node's input order; the indices input is `indices`
    inputs: list
    expected: np.ndarray
    # the numpy computation the hand-written expected output is checked against
    numpy_expected: np.ndarray


def f32(values):
    return np.array(values, dtype=np.float32)


def i64(values):
    return np.array(values, dtype=np.int64)


def scatter_elements_1d(data, indices, updates, fn):
    """ScatterElements on rank 1 with numpy, updates applied in order (D8)."""
    out = data.copy()
    for i, u in zip(indices, updates):
        out[i] = fn(out[i], u)
    return out


def gather_nd_batch(data, indices, batch_dims):
    """GatherND with numpy: loops over the batch dimensions, fancy-indexes the rest."""
    batch_shape = data.shape[:batch_dims]
    out = np.empty(indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1] :], data.dtype)
    for b in np.ndindex(*batch_shape):
        idx = indices[b]
        sub = data[b]
        out[b] = sub[tuple(np.moveaxis(idx, -1, 0))]
    return out


def triggers():
    """Every trigger once, with the indices as a graph input (the `-const` twins are derived)."""
    out = []
    arange34 = np.arange(12, dtype=np.float32).reshape(3, 4)

    # apache/tvm#20217: GatherElements, GatherND and ScatterND forwarded negative indices
    # unnormalised (the thread's own three examples, on a 3x4 arange / zeros).
    idx = i64(np.full((3, 4), -1))
    out.append(
        Case(
            "tvm-20217-gatherelements-negative",
            "GatherElements",
            13,
            {"axis": 1},
            [("data", arange34), ("indices", idx)],
            f32([[3, 3, 3, 3], [7, 7, 7, 7], [11, 11, 11, 11]]),
            np.take_along_axis(arange34, idx, axis=1),
        )
    )
    idx = i64([[-1, -1], [0, -2]])
    out.append(
        Case(
            "tvm-20217-gathernd-negative",
            "GatherND",
            13,
            {},
            [("data", arange34), ("indices", idx)],
            f32([11, 2]),
            arange34[idx[:, 0], idx[:, 1]],
        )
    )
    idx = i64([[-1], [0]])
    upd = f32([[1, 2, 3, 4], [5, 6, 7, 8]])
    ref = np.zeros((3, 4), np.float32)
    ref[idx[:, 0]] = upd
    out.append(
        Case(
            "tvm-20217-scatternd-negative",
            "ScatterND",
            13,
            {},
            [("data", np.zeros((3, 4), np.float32)), ("indices", idx), ("updates", upd)],
            f32([[5, 6, 7, 8], [0, 0, 0, 0], [1, 2, 3, 4]]),
            ref,
        )
    )

    # apache/tvm#19435: ScatterElements ignored `reduction` (overwrote). The thread's add case,
    # and a max case where the last write differs from the maximum.
    data = np.ones((3, 3), np.float32)
    idx = i64([[0, 1, 2], [0, 1, 2]])
    upd = f32([[1, 2, 3], [4, 5, 6]])
    ref = data.copy()
    np.add.at(ref, (idx, np.broadcast_to(np.arange(3), idx.shape)), upd)
    out.append(
        Case(
            "tvm-19435-scatterelements-add",
            "ScatterElements",
            18,
            {"axis": 0, "reduction": "add"},
            [("data", data), ("indices", idx), ("updates", upd)],
            f32([[6, 1, 1], [1, 8, 1], [1, 1, 10]]),
            ref,
        )
    )
    data, idx, upd = f32([4, 1, 7]), i64([0, 0, 2, 1]), f32([2, 9, 3, -1])
    out.append(
        Case(
            "tvm-19435-scatterelements-max",
            "ScatterElements",
            18,
            {"axis": 0, "reduction": "max"},
            [("data", data), ("indices", idx), ("updates", upd)],
            f32([9, 1, 7]),
            scatter_elements_1d(data, idx, upd, np.maximum),
        )
    )

    # apache/tvm#19531: Gather with negative indices (the thread's X and I).
    data, idx = f32([1, 2, 3, 4, 5]), i64([-1, -3, 0])
    out.append(
        Case(
            "tvm-19531-gather-negative",
            "Gather",
            13,
            {"axis": 0},
            [("data", data), ("indices", idx)],
            f32([5, 3, 1]),
            np.take(data, idx, axis=0),
        )
    )

    # iree-org/iree#24503: NaN in max/min reductions. The thread's op (ReduceMax) is outside
    # onnx-idx-check's operators; this is its indexing twin on the thread's rows [NaN, 1] and
    # [2, NaN]: the NaN sits once in the data and once in the update. Expected: NaN propagates
    # either way (semantics D8, numpy's maximum/minimum), which is IREE's arith.maximumf.
    data, idx, upd = f32([NAN, 2]), i64([0, 1]), f32([1, NAN])
    for red, fn in (("max", np.maximum), ("min", np.minimum)):
        out.append(
            Case(
                f"iree-24503-scatterelements-{red}-nan",
                "ScatterElements",
                18,
                {"axis": 0, "reduction": red},
                [("data", data), ("indices", idx), ("updates", upd)],
                f32([NAN, NAN]),
                scatter_elements_1d(data, idx, upd, fn),
            )
        )
        # the same through ScatterND, which IREE lowers differently (it refuses
        # ScatterElements max/min)
        out.append(
            Case(
                f"iree-24503-scatternd-{red}-nan",
                "ScatterND",
                18,
                {"reduction": red},
                [("data", data), ("indices", idx.reshape(2, 1)), ("updates", upd)],
                f32([NAN, NAN]),
                scatter_elements_1d(data, idx, upd, fn),
            )
        )

    # tinygrad#14185: the ONNX Gather assumed constant indices. 1-D and 2-D indices, with a
    # negative one.
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    idx = i64([2, -1, 0])
    out.append(
        Case(
            "tinygrad-14185-gather-1d",
            "Gather",
            13,
            {"axis": 0},
            [("data", data), ("indices", idx)],
            f32([[4, 5], [6, 7], [0, 1]]),
            np.take(data, idx, axis=0),
        )
    )
    idx = i64([[0, -1], [2, 1]])
    out.append(
        Case(
            "tinygrad-14185-gather-2d",
            "Gather",
            13,
            {"axis": 0},
            [("data", data), ("indices", idx)],
            f32([[[0, 1], [6, 7]], [[4, 5], [2, 3]]]),
            np.take(data, idx, axis=0),
        )
    )

    # tinygrad#8241 added GatherND and ScatterND ("the onnx test suite not testing enough
    # cases"): batch_dims with a negative index, and ScatterND add with a duplicate index in
    # rank-3 indices.
    data = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    idx = i64([[-1], [0]])
    out.append(
        Case(
            "tinygrad-8241-gathernd-batchdims",
            "GatherND",
            13,
            {"batch_dims": 1},
            [("data", data), ("indices", idx)],
            f32([[2, 3], [4, 5]]),
            gather_nd_batch(data, idx, 1),
        )
    )
    data, idx, upd = f32([1, 2, 3]), i64([[[0], [0]], [[2], [0]]]), f32([[10, 20], [30, 40]])
    ref = data.copy()
    np.add.at(ref, idx[..., 0], upd)
    out.append(
        Case(
            "tinygrad-8241-scatternd-add-duplicates",
            "ScatterND",
            16,
            {"reduction": "add"},
            [("data", data), ("indices", idx), ("updates", upd)],
            f32([71, 2, 33]),
            ref,
        )
    )

    # microsoft/onnxruntime#16855: the WebGPU (JSEP) Gather reads int64 indices as their low
    # 32 bits. In-range indices, negative ones included, in both index types.
    data = f32([[1, 2], [3, 4], [5, 6]])
    for dtype, name in ((np.int64, "int64"), (np.int32, "int32")):
        idx = np.array([[-1, 0], [-3, 2]], dtype=dtype)
        out.append(
            Case(
                f"onnxruntime-web-16855-gather-{name}-negative",
                "Gather",
                13,
                {"axis": 0},
                [("data", data), ("indices", idx)],
                f32([[[5, 6], [1, 2]], [[1, 2], [5, 6]]]),
                np.take(data, idx, axis=0),
            )
        )

    # microsoft/onnxruntime#32731: GatherND with data of rank 5 on WebGPU (the thread's model:
    # opset 17, float16 [1,1,4,4,8], int64 indices [1,1,8,2] in [0,4), batch_dims 2).
    data = np.arange(128, dtype=np.float16).reshape(1, 1, 4, 4, 8)
    idx = i64([[[[k % 4, (3 * k + 1) % 4] for k in range(8)]]])
    hand = np.array(
        [[[[32 * (k % 4) + 8 * ((3 * k + 1) % 4) + j for j in range(8)] for k in range(8)]]],
        dtype=np.float16,
    )
    out.append(
        Case(
            "onnxruntime-web-32731-gathernd-rank5",
            "GatherND",
            17,
            {"batch_dims": 2},
            [("data", data), ("indices", idx)],
            hand,
            gather_nd_batch(data, idx, 2),
        )
    )
    return out


def elem_type(array):
    return helper.np_dtype_to_tensor_dtype(array.dtype)


def build(case, const):
    """The model of a case and its graph inputs: `indices` an initializer when `const`."""
    graph_inputs, initializers = [], []
    for name, array in case.inputs:
        if const and name == "indices":
            initializers.append(numpy_helper.from_array(array, name))
        else:
            graph_inputs.append((name, array))
    node = helper.make_node(case.op, [n for n, _ in case.inputs], ["output"], **case.attrs)
    graph = helper.make_graph(
        [node],
        case.name.replace("-", "_"),
        [helper.make_tensor_value_info(n, elem_type(a), list(a.shape)) for n, a in graph_inputs],
        [
            helper.make_tensor_value_info(
                "output", elem_type(case.expected), list(case.expected.shape)
            )
        ],
        initializer=initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", case.opset)],
        producer_name="onnx-idx-check scripts/upstream_bugs.py",
        ir_version=IR_VERSION,
    )
    onnx.checker.check_model(model, full_check=True)
    return model, graph_inputs


def same(a, b):
    """Equal values, shapes and dtypes, NaN equal to NaN."""
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def files():
    """{relative path: bytes} of every file the script writes."""
    out = {".gitattributes": GITATTRIBUTES}
    for case in triggers():
        if not same(case.expected, case.numpy_expected):
            raise AssertionError(
                f"{case.name}: the hand-written expected output {case.expected.tolist()} "
                f"differs from numpy's {case.numpy_expected.tolist()}"
            )
        forms = [("-input", False), ("-const", True)]
        for suffix, const in forms:
            name = case.name + suffix
            model, graph_inputs = build(case, const)
            out[f"{name}/model.onnx"] = model.SerializeToString(deterministic=True)
            for k, (input_name, array) in enumerate(graph_inputs):
                tensor = numpy_helper.from_array(array, input_name)
                out[f"{name}/test_data_set_0/input_{k}.pb"] = tensor.SerializeToString(
                    deterministic=True
                )
            tensor = numpy_helper.from_array(case.expected, "output")
            out[f"{name}/test_data_set_0/output_0.pb"] = tensor.SerializeToString(
                deterministic=True
            )
    return out


def on_disk(root):
    if not root.is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help="target directory")
    args = parser.parse_args(argv)
    want = files()
    have = on_disk(args.out)
    if args.check:
        problems = [f"missing: {p}" for p in sorted(want.keys() - have.keys())]
        problems += [f"differs: {p}" for p in sorted(want.keys() & have.keys()) if want[p] != have[p]]
        problems += [f"not written by this script: {p}" for p in sorted(have.keys() - want.keys())]
        if problems:
            for line in problems:
                print(f"{args.out}: {line}", file=sys.stderr)
            print(
                "error: the upstream-bug cases are stale; run python3 scripts/upstream_bugs.py",
                file=sys.stderr,
            )
            return 1
        print(f"{args.out}: {len(want)} files up to date")
        return 0
    stale = sorted(have.keys() - want.keys())
    for rel in stale:
        (args.out / rel).unlink()
    for rel, data in sorted(want.items()):
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if have.get(rel) != data:
            path.write_bytes(data)
    # empty directories a removed case left behind
    for d in sorted((p for p in args.out.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()
    print(f"{args.out}: {len(want)} files written ({len(stale)} stale removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
