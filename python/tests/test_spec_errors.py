"""Every input docs/semantics.md says is an error raises SpecError, with a message naming what is wrong.

One parametrized case per rule (D2-D6, D13, D14 and the per-op rules of §3/§4/§6), each at the
versions it applies to. The regexes match the meaningful part of each message: the input, the
position, the offending value and the valid range or the version it arrives with.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import onnx_idx_check as oic

BF16 = ml_dtypes.bfloat16
F8 = ml_dtypes.float8_e4m3fn
I64 = np.int64
D = np.arange(12, dtype=np.float32).reshape(3, 4)  # shape [3, 4]
D3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def i64(x):
    return np.array(x, dtype=np.int64)


def i32(x):
    return np.array(x, dtype=np.int32)


def f32(x):
    return np.array(x, dtype=np.float32)


def ev(op, opset, inputs, attrs=(), domain=""):
    return oic.evaluate(domain, op, opset, inputs, list(attrs))


C = pytest.param  # (callable, regex, id=...)

# ---------------------------------------------------------------------------------------------
# D3: index out of range, positive and negative, per op and version; D2: negatives at the
# versions that do not allow them


OUT_OF_RANGE = [
    # Gather
    *[C(lambda o=o: oic.gather(D, i64([0, 3]), opset=o),
        r"indices\[1\] = 3 is out of range \[-3, 2\] for axis 0 \(size 3\)", id=f"Gather-{o}-positive")
      for o in (11, 13)],
    *[C(lambda o=o: oic.gather(D, i32([[0], [-5]]), axis=1, opset=o),
        r"indices\[1,0\] = -5 is out of range \[-4, 3\] for axis 1 \(size 4\)",
        id=f"Gather-{o}-negative") for o in (11, 13)],
    C(lambda: oic.gather(D, i64([3]), opset=1),
      r"indices\[0\] = 3 is out of range.*axis 0.*size 3", id="Gather-1-positive"),
    C(lambda: oic.gather(D, i64([np.iinfo(np.int64).min])),
      r"indices\[0\] = -9223372036854775808 is out of range \[-3, 2\]", id="Gather-i64-min"),
    C(lambda: oic.gather(D, i32([np.iinfo(np.int32).max])),
      r"indices\[0\] = 2147483647 is out of range \[-3, 2\]", id="Gather-i32-max"),
    C(lambda: oic.gather(np.zeros((0, 3), np.float32), i64([0])),
      r"indices\[0\] = 0 is out of range.*axis 0 has size 0", id="Gather-empty-axis"),
    C(lambda: oic.gather(D, i64([[0, 1], [5, -9]]), axis=1),
      r"indices\[1,0\] = 5 is out of range \[-4, 3\]", id="Gather-reports-first-bad-position"),
    # D2: negative indices are out of range at Gather-1 (opsets 1-10) and Scatter-9
    *[C(lambda o=o: oic.gather(D, i64([0, -1]), opset=o),
        r"indices\[1\] = -1 is negative, which Gather-1 does not allow \(negative indices "
        r"arrive with opset 11\); valid range \[0, 2\]", id=f"Gather-opset{o}-negative-index")
      for o in (1, 10)],
    C(lambda: oic.scatter(D, i64([[-1]]), f32([[9]])),
      r"indices\[0,0\] = -1 is negative, which Scatter-9 does not allow \(negative indices "
      r"arrive with opset 11\)", id="Scatter-9-negative-index"),
    C(lambda: oic.scatter(D, i64([[3]]), f32([[9]]), opset=10),
      r"indices\[0,0\] = 3 is out of range.*axis 0.*size 3", id="Scatter-9-positive"),
    # GatherElements
    *[C(lambda o=o: oic.gather_elements(D, i64([[0, 4]]), axis=1, opset=o),
        r"indices\[0,1\] = 4 is out of range \[-4, 3\] for axis 1 \(size 4\)",
        id=f"GatherElements-{o}-positive") for o in (11, 13)],
    *[C(lambda o=o: oic.gather_elements(D, i32([[0], [-4]]), axis=0, opset=o),
        r"indices\[1,0\] = -4 is out of range \[-3, 2\] for axis 0 \(size 3\)",
        id=f"GatherElements-{o}-negative") for o in (11, 13)],
    # GatherND: each component against its own dimension
    *[C(lambda o=o: oic.gather_nd(D, i64([[0, 0], [2, 4]]), opset=o),
        r"indices\[1,1\] = 4 is out of range \[-4, 3\] for data dimension 1 \(size 4\)",
        id=f"GatherND-{o}-positive") for o in (11, 12, 13)],
    *[C(lambda o=o: oic.gather_nd(D, i64([[-4, 0]]), opset=o),
        r"indices\[0,0\] = -4 is out of range \[-3, 2\] for data dimension 0 \(size 3\)",
        id=f"GatherND-{o}-negative") for o in (11, 12, 13)],
    C(lambda: oic.gather_nd(D3, i64([[1], [3]]), batch_dims=1, opset=13),
      r"indices\[1,0\] = 3 is out of range \[-3, 2\] for data dimension 1 \(size 3\)",
      id="GatherND-batch-dims-positive"),
    # ScatterElements, every version, with and without reduction
    *[C(lambda o=o: oic.scatter_elements(D, i64([[0, 4]]), f32([[1, 2]]), axis=1, opset=o),
        r"indices\[0,1\] = 4 is out of range \[-4, 3\] for axis 1 \(size 4\)",
        id=f"ScatterElements-{o}-positive") for o in (11, 13, 16, 18)],
    *[C(lambda o=o: oic.scatter_elements(D, i32([[-4]]), f32([[1]]), opset=o),
        r"indices\[0,0\] = -4 is out of range \[-3, 2\] for axis 0 \(size 3\)",
        id=f"ScatterElements-{o}-negative") for o in (11, 13, 16, 18)],
    C(lambda: oic.scatter_elements(D, i64([[0, 0, 7]]), f32([[1, 2, 3]]), axis=1,
                                   reduction="add"),
      r"indices\[0,2\] = 7 is out of range \[-4, 3\]", id="ScatterElements-18-add-positive"),
    # ScatterND
    *[C(lambda o=o: oic.scatter_nd(D, i64([[0, 4]]), f32([1]), opset=o),
        r"indices\[0,1\] = 4 is out of range \[-4, 3\] for data dimension 1 \(size 4\)",
        id=f"ScatterND-{o}-positive") for o in (11, 13, 16, 18)],
    *[C(lambda o=o: oic.scatter_nd(D, i64([[1], [-4]]), f32([[1] * 4, [2] * 4]), opset=o),
        r"indices\[1,0\] = -4 is out of range \[-3, 2\] for data dimension 0 \(size 3\)",
        id=f"ScatterND-{o}-negative") for o in (11, 13, 16, 18)],
    C(lambda: oic.scatter_nd(D, i64([[2, 1], [3, 0]]), f32([1, 2]), reduction="mul"),
      r"indices\[1,0\] = 3 is out of range \[-3, 2\]", id="ScatterND-18-mul-positive"),
    # TensorScatter: linear mode needs wi + L <= M; write indices are never negative
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 2, 1), np.float32),
                                 i64([0, 3]), axis=1),
      r"linear mode: write_indices\[1\] \+ sequence length \(3 \+ 2\) exceeds max sequence "
      r"length 4", id="TensorScatter-linear-overflow"),
    *[C(lambda m=m: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32),
                                       np.zeros((2, 1, 1), np.float32), i64([0, -1]), axis=1,
                                       mode=m),
        r"write_indices\[1\] = -1 is negative", id=f"TensorScatter-{m}-negative")
      for m in ("linear", "circular")],
    # com.microsoft gradients
    C(lambda: oic.gather_grad(i64([3, 2]), i64([0, 3]), f32([[1, 1], [2, 2]])),
      r"indices\[1\] = 3 is out of range \[-3, 2\] for axis 0 \(size 3\)",
      id="GatherGrad-positive"),
    C(lambda: oic.gather_grad(i64([3, 2]), i64([-4]), f32([[1, 2]]), axis=0),
      r"indices\[0\] = -4 is out of range \[-3, 2\]", id="GatherGrad-negative"),
    C(lambda: oic.gather_elements_grad(f32([[1, 2]]), i64([1, 3]), i64([[2, 3]]), axis=1),
      r"indices\[0,1\] = 3 is out of range \[-3, 2\] for axis 1 \(size 3\)",
      id="GatherElementsGrad-positive"),
    C(lambda: oic.gather_elements_grad(f32([[1, 2]]), i64([1, 3]), i64([[-4, 0]]), axis=1),
      r"indices\[0,0\] = -4 is out of range \[-3, 2\]", id="GatherElementsGrad-negative"),
]


@pytest.mark.parametrize("call,message", OUT_OF_RANGE)
def test_index_out_of_range(call, message):
    with pytest.raises(oic.SpecError, match=message):
        call()


# ---------------------------------------------------------------------------------------------
# D6: shapes and ranks


SHAPES = [
    # GatherElements / ScatterElements / GatherElementsGrad: equal ranks
    *[C(lambda o=o: oic.gather_elements(D, i64([0, 1]), opset=o),
        r"indices has rank 1 but data has rank 2; they must be equal",
        id=f"GatherElements-{o}-rank") for o in (11, 13)],
    *[C(lambda o=o: oic.scatter_elements(D, i64([0, 1]), f32([1, 2]), opset=o),
        r"indices has rank 1 but data has rank 2; they must be equal",
        id=f"ScatterElements-{o}-rank") for o in (11, 13, 16, 18)],
    C(lambda: oic.scatter(D, i64([0, 1]), f32([1, 2])),
      r"indices has rank 1 but data has rank 2", id="Scatter-9-rank"),
    C(lambda: oic.gather_elements_grad(f32([1, 2]), i64([1, 3]), i64([2, 1]), axis=0),
      r"indices has rank 1 but .* has rank 2; they must be equal", id="GatherElementsGrad-rank"),
    # ... and indices no larger than data off the axis
    C(lambda: oic.gather_elements(D, np.zeros((4, 2), I64), axis=1),
      r"indices shape \[4, 2\] exceeds data shape \[3, 4\] on dimension 0 \(4 > 3\); only the "
      r"axis dimension \(1\) may be larger", id="GatherElements-off-axis-dim"),
    C(lambda: oic.scatter_elements(D, np.zeros((2, 5), I64), np.zeros((2, 5), np.float32)),
      r"indices shape \[2, 5\] exceeds data shape \[3, 4\] on dimension 1 \(5 > 4\); only the "
      r"axis dimension \(0\) may be larger", id="ScatterElements-off-axis-dim"),
    C(lambda: oic.scatter(D, np.zeros((2, 5), I64), np.zeros((2, 5), np.float32)),
      r"exceeds data shape \[3, 4\] on dimension 1 \(5 > 4\)", id="Scatter-9-off-axis-dim"),
    C(lambda: oic.gather_elements_grad(np.ones((4, 1), np.float32), i64([3, 3]),
                                       np.zeros((4, 1), I64), axis=1),
      r"indices shape \[4, 1\] exceeds .*shape \[3, 3\] on dimension 0 \(4 > 3\)",
      id="GatherElementsGrad-off-axis-dim"),
    # updates must have exactly the shape the op needs
    *[C(lambda o=o: oic.scatter_elements(D, i64([[0, 1]]), f32([[1, 2, 3]]), opset=o),
        r"updates has shape \[1, 3\] but indices has shape \[1, 2\]; they must be equal",
        id=f"ScatterElements-{o}-updates-shape") for o in (11, 13, 16, 18)],
    C(lambda: oic.scatter(D, i64([[0, 1]]), f32([[1], [2]])),
      r"updates has shape \[2, 1\] but indices has shape \[1, 2\]", id="Scatter-9-updates-shape"),
    *[C(lambda o=o: oic.scatter_nd(D, i64([[0], [1]]), f32([[1, 2, 3, 4]]), opset=o),
        r"updates has shape \[1, 4\] but must have indices.shape\[:-1\] \+\+ "
        r"data.shape\[1:\] = \[2, 4\]", id=f"ScatterND-{o}-updates-shape")
      for o in (11, 13, 16, 18)],
    C(lambda: oic.scatter_nd(D, i64([[0, 1]]), f32([1, 2])),
      r"updates has shape \[2\] but must have .* = \[1\]", id="ScatterND-updates-shape-k=r"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 3), np.float32), np.zeros((2, 2, 2), np.float32),
                                 axis=1),
      r"update has shape \[2, 2, 2\]; it must equal past_cache's shape \[2, 4, 3\] except on "
      r"axis 1", id="TensorScatter-update-shape"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 3), np.float32), np.zeros((3, 1, 3), np.float32),
                                 axis=1),
      r"update has shape \[3, 1, 3\]; it must equal past_cache's shape \[2, 4, 3\] except on "
      r"axis 1", id="TensorScatter-update-batch"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 5, 1), np.float32),
                                 axis=1),
      r"update's sequence length 5 exceeds past_cache's max sequence length 4 \(axis 1\)",
      id="TensorScatter-L>M-linear"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 5, 1), np.float32),
                                 i64([0, 0]), axis=1, mode="circular"),
      r"update's sequence length 5 exceeds past_cache's max sequence length 4",
      id="TensorScatter-L>M-circular"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 1, 1), np.float32),
                                 i64([0, 0, 0]), axis=1),
      r"write_indices has shape \[3\]; it must be \[batch_size\] = \[2\]",
      id="TensorScatter-write-indices-length"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 1, 1), np.float32),
                                 np.zeros((2, 1), I64), axis=1),
      r"write_indices has shape \[2, 1\]; it must be \[batch_size\] = \[2\]",
      id="TensorScatter-write-indices-rank"),
    C(lambda: oic.gather_grad(i64([3, 2]), i64([0, 1]), f32([1, 2, 3])),
      r"dY has shape \[3\] but must have shape\[:axis\] \+\+ indices.shape \+\+ "
      r"shape\[axis\+1:\] = \[2, 2\]", id="GatherGrad-dY-shape"),
    C(lambda: oic.gather_elements_grad(f32([[1, 2, 3]]), i64([1, 3]), i64([[2, 1]]), axis=1),
      r"dY has shape \[1, 3\] but indices has shape \[1, 2\]; they must be equal",
      id="GatherElementsGrad-dY-shape"),
    C(lambda: oic.gather_grad(i64([-1]), i64([0]), f32([1])),
      r"shape \[-1\] has a negative dimension", id="GatherGrad-negative-shape"),
    C(lambda: oic.gather_grad(i64([[3]]), i64([0]), f32([1])),
      r"shape must be a 1-D tensor, it has shape \[1, 1\]", id="GatherGrad-shape-rank"),
    # rank >= 1 for data, and for GatherND/ScatterND indices
    C(lambda: oic.gather(np.array(5.0, np.float32), i64(0)),
      r"data must have rank >= 1, it is a scalar", id="Gather-rank-0-data"),
    C(lambda: oic.gather_elements(np.array(5.0, np.float32), i64(0)),
      r"data must have rank >= 1, it is a scalar", id="GatherElements-rank-0-data"),
    C(lambda: oic.scatter_nd(np.array(5.0, np.float32), np.zeros((1, 0), I64), f32([1])),
      r"data must have rank >= 1, it is a scalar", id="ScatterND-rank-0-data"),
    C(lambda: oic.openvino_gather(np.array(5.0, np.float32), i64(0), 0),
      r"data must have rank >= 1, it is a scalar", id="OpenVINO-rank-0-data"),
    C(lambda: oic.gather_nd(D, i64(0)),
      r"indices must have rank >= 1, it is a scalar", id="GatherND-rank-0-indices"),
    C(lambda: oic.scatter_nd(D, i64(0), f32(1)),
      r"indices must have rank >= 1, it is a scalar", id="ScatterND-rank-0-indices"),
    # GatherND: 1 <= k <= r - b, batch_dims < min(q, r), equal batch dims
    C(lambda: oic.gather_nd(D, i64([[0, 1, 0]])),
      r"indices.shape\[-1\] = 3 must be in \[1, 2\] \(rank of data 2 minus batch_dims 0\)",
      id="GatherND-k>r"),
    C(lambda: oic.gather_nd(D3, i64([[0, 1, 0], [1, 1, 1]]), batch_dims=1),
      r"indices.shape\[-1\] = 3 must be in \[1, 2\] \(rank of data 3 minus batch_dims 1\)",
      id="GatherND-k>r-b"),
    C(lambda: oic.gather_nd(D, np.zeros((2, 0), I64)),
      r"indices.shape\[-1\] = 0 must be in \[1, 2\]", id="GatherND-k=0"),
    C(lambda: oic.gather_nd(D, i64([[0], [1]]), batch_dims=1),
      r"the first batch_dims \(1\) dims of indices \[2, 1\] and data \[3, 4\] must be equal",
      id="GatherND-batch-3-vs-2"),
    C(lambda: oic.gather_nd(np.ones((2, 3), np.float32), i64([[0], [1], [2], [0]]), batch_dims=1),
      r"the first batch_dims \(1\) dims of indices \[4, 1\] and data \[2, 3\] must be equal",
      id="GatherND-batch-4-vs-2-divisible"),
    C(lambda: oic.gather_nd(D, i64([[0], [1], [2]]), batch_dims=-1),
      r"batch_dims -1 must be in \[0, 2\)", id="GatherND-batch-dims-negative"),
    C(lambda: oic.gather_nd(D, i64([[0], [1], [2]]), batch_dims=2),
      r"batch_dims 2 must be in \[0, 2\)", id="GatherND-batch-dims=q"),
    # ScatterND: k <= r
    C(lambda: oic.scatter_nd(D, i64([[0, 1, 1]]), f32([1])),
      r"indices.shape\[-1\] = 3 must not exceed the rank of data \(2\)", id="ScatterND-k>r"),
]


@pytest.mark.parametrize("call,message", SHAPES)
def test_shape_rule(call, message):
    with pytest.raises(oic.SpecError, match=message):
        call()


# ---------------------------------------------------------------------------------------------
# D5: attributes (reduction per version, attributes a version lacks, axis ranges, modes);
# Scatter deprecated at 11, ops before their first version


def _se(reduction, opset):
    return lambda: oic.scatter_elements(D, i64([[0]]), f32([[1]]), reduction=reduction,
                                        opset=opset)


def _snd(reduction, opset):
    return lambda: oic.scatter_nd(D, i64([[0, 0]]), f32([1]), reduction=reduction, opset=opset)


ATTRIBUTES = [
    # any reduction, even "none", before version 16
    *[C(f(red, o), rf"attribute 'reduction' is not defined by {op}-{v} \(it arrives with "
                   r"version 16\)", id=f"{op}-{o}-reduction-{red}")
      for op, f in (("ScatterElements", _se), ("ScatterND", _snd))
      for o, v in ((11, 11), (12, 11), (13, 13), (15, 13))
      for red in ("none", "add")],
    # max and min arrive with 18
    *[C(f(red, o), rf"reduction '{red}' is not allowed by {op}-16 \(allowed: none, add, mul\); "
                   r"max and min arrive with version 18", id=f"{op}-{o}-reduction-{red}")
      for op, f in (("ScatterElements", _se), ("ScatterND", _snd))
      for o in (16, 17) for red in ("max", "min")],
    # unknown reduction strings
    *[C(f(red, o), rf"reduction '{red}' is not a known reduction \(allowed by {op}-{v}: "
                   rf"none, add, mul{', max, min' if v == 18 else ''}\)",
        id=f"{op}-{o}-reduction-{red or 'empty'}")
      for op, f in (("ScatterElements", _se), ("ScatterND", _snd))
      for o, v in ((16, 16), (18, 18)) for red in ("sub", "MAX", "")],
    C(lambda: ev("Scatter", 9, [D, i64([[0]]), f32([[1]])], [("reduction", "add")]),
      r"attribute 'reduction' is not defined by Scatter-9", id="Scatter-9-reduction"),
    # batch_dims: not at GatherND-11 (not even 0), not at ONNX Gather
    C(lambda: oic.gather_nd(D3, i64([[0], [1]]), batch_dims=1, opset=11),
      r"attribute 'batch_dims' is not defined by GatherND-11 \(it arrives with version 12\)",
      id="GatherND-11-batch-dims"),
    C(lambda: ev("GatherND", 11, [D, i64([[0, 1]])], [("batch_dims", 0)]),
      r"attribute 'batch_dims' is not defined by GatherND-11 \(it arrives with version 12\)",
      id="GatherND-11-batch-dims-0"),
    C(lambda: ev("Gather", 13, [D, i64([0])], [("batch_dims", 0)]),
      r"attribute 'batch_dims' is not defined by Gather-13", id="Gather-13-batch-dims"),
    C(lambda: ev("Gather", 13, [D, i64([0])], [("foo", 1)]),
      r"attribute 'foo' is not defined by Gather-13", id="Gather-13-unknown-attribute"),
    # axis out of range, both sides
    *[C(lambda a=a: oic.gather(D, i64([0]), axis=a),
        rf"axis {a} is out of range \[-2, 1\] for rank 2", id=f"Gather-axis{a}")
      for a in (2, -3)],
    C(lambda: oic.gather(D, i64([0]), axis=2, opset=1),
      r"axis 2 is out of range \[-2, 1\] for rank 2", id="Gather-1-axis2"),
    *[C(lambda a=a: oic.gather_elements(D, i64([[0]]), axis=a),
        rf"axis {a} is out of range \[-2, 1\] for rank 2", id=f"GatherElements-axis{a}")
      for a in (2, -3)],
    *[C(lambda a=a: oic.scatter_elements(D, i64([[0]]), f32([[1]]), axis=a),
        rf"axis {a} is out of range \[-2, 1\] for rank 2", id=f"ScatterElements-axis{a}")
      for a in (2, -3)],
    C(lambda: oic.scatter(D, i64([[0]]), f32([[1]]), axis=2),
      r"axis 2 is out of range \[-2, 1\] for rank 2", id="Scatter-9-axis2"),
    C(lambda: oic.gather_grad(i64([3]), i64([0]), f32([1]), axis=1),
      r"axis 1 is out of range \[-1, 0\] for rank 1", id="GatherGrad-axis1"),
    C(lambda: oic.gather_elements_grad(f32([[1]]), i64([1, 3]), i64([[0]]), axis=-3),
      r"axis -3 is out of range \[-2, 1\] for rank 2", id="GatherElementsGrad-axis-3"),
    C(lambda: oic.openvino_gather(D, i64([0]), 2),
      r"axis 2 is out of range \[-2, 1\] for rank 2", id="OpenVINO-axis2"),
    # TensorScatter: the axis is never the batch axis 0; mode linear|circular
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 1, 1), np.float32),
                                 axis=0),
      r"axis 0 resolves to 0, the batch axis; the sequence axis must be in \[1, 2\] for rank 3",
      id="TensorScatter-axis0"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 1, 1), np.float32),
                                 axis=-3),
      r"axis -3 resolves to 0, the batch axis", id="TensorScatter-axis-3"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4), np.float32), np.zeros((2, 1), np.float32)),
      r"axis -2 resolves to 0, the batch axis; the sequence axis must be in \[1, 1\] for rank 2",
      id="TensorScatter-default-axis-rank2"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 1, 1), np.float32),
                                 axis=3),
      r"axis 3 is out of range \[-3, 2\] for rank 3", id="TensorScatter-axis3"),
    *[C(lambda m=m: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32),
                                       np.zeros((2, 1, 1), np.float32), axis=1, mode=m),
        rf"mode must be 'linear' or 'circular', got '{m}'", id=f"TensorScatter-mode-{m or 'empty'}")
      for m in ("foo", "Linear", "")],
    # OpenVINO Gather-8 (§6): batch_dims range, batch_dims <= axis, equal batch sizes, axis input
    C(lambda: oic.openvino_gather(np.ones((2, 3), np.float32), i64([[0], [1]]), 1, batch_dims=2),
      r"batch_dims \(2\) must be <= axis \(1\) after normalisation", id="OpenVINO-batch-dims>axis"),
    C(lambda: oic.openvino_gather(np.ones((2, 3), np.float32), i64([[0], [1]]), 1, batch_dims=-3),
      r"batch_dims -3 is out of range \[-2, 2\]", id="OpenVINO-batch-dims-range"),
    C(lambda: oic.openvino_gather(np.ones((2, 3, 4), np.float32), np.ones((3, 2), I64), 2,
                                  batch_dims=1),
      r"data \[2, 3, 4\] and indices \[3, 2\] must have equal sizes in the first batch_dims \(1\) "
      r"dims", id="OpenVINO-batch-sizes"),
    C(lambda: oic.openvino_gather(D, i64([0]), i64([0, 0])),
      r"axis input must be a scalar or have 1 element, it has shape \[2\]",
      id="OpenVINO-axis-two-elements"),
    # D5: Scatter at opset >= 11 is deprecated; ops before their first version
    *[C(lambda o=o: oic.scatter(D, i64([[0]]), f32([[1]]), opset=o),
        r"Scatter is deprecated since opset 11 \(the last version is Scatter-9\)",
        id=f"Scatter-opset{o}-deprecated") for o in (11, 13, 18)],
    C(lambda: oic.scatter(D, i64([[0]]), f32([[1]]), opset=8),
      r"Scatter does not exist at ai.onnx opset 8 \(its first version is 9\)", id="Scatter-opset8"),
    *[C(lambda op=op, f=f: f(), rf"{op} does not exist at ai.onnx opset 10 \(its first version "
                               r"is 11\)", id=f"{op}-opset10")
      for op, f in (("GatherElements", lambda: oic.gather_elements(D, i64([[0]]), opset=10)),
                    ("GatherND", lambda: oic.gather_nd(D, i64([[0]]), opset=10)),
                    ("ScatterElements", _se(None, 10)), ("ScatterND", _snd(None, 10)))],
    C(lambda: oic.tensor_scatter(np.zeros((2, 4, 1), np.float32), np.zeros((2, 1, 1), np.float32),
                                 axis=1, opset=23),
      r"TensorScatter does not exist at ai.onnx opset 23 \(its first version is 24\)",
      id="TensorScatter-opset23"),
]


@pytest.mark.parametrize("call,message", ATTRIBUTES)
def test_attribute_rule(call, message):
    with pytest.raises(oic.SpecError, match=message):
        call()


# ---------------------------------------------------------------------------------------------
# D4: type constraints per version (§2)


def _with(dt, op, opset):
    x = np.ones((2, 3), dtype=dt)
    return {
        "Gather": lambda: oic.gather(x, i64([0]), opset=opset),
        "GatherElements": lambda: oic.gather_elements(x, i64([[0]]), opset=opset),
        "GatherND": lambda: oic.gather_nd(x, i64([[0]]), opset=opset),
        "Scatter": lambda: oic.scatter(x, i64([[0]]), x[:1, :1], opset=opset),
        "ScatterElements": lambda: oic.scatter_elements(x, i64([[0]]), x[:1, :1], opset=opset),
        "ScatterND": lambda: oic.scatter_nd(x, i64([[0]]), x[:1], opset=opset),
    }[op]


BF16_BEFORE = [("Gather", 1, 1), ("Gather", 10, 1), ("Gather", 11, 11), ("Gather", 12, 11),
               ("GatherElements", 11, 11), ("GatherElements", 12, 11),
               ("GatherND", 11, 11), ("GatherND", 12, 12),
               ("ScatterElements", 11, 11), ("ScatterElements", 12, 11),
               ("ScatterND", 11, 11), ("ScatterND", 12, 11)]

TYPES = [
    *[C(_with(BF16, op, o),
        rf"input 'data' is bfloat16, which is not allowed by {op}-{v} \(constraint T\); it is "
        r"allowed from version 13", id=f"{op}-opset{o}-bfloat16")
      for op, o, v in BF16_BEFORE],
    *[C(_with(BF16, "Scatter", o),
        r"input 'data' is bfloat16, which is not allowed by Scatter-9 \(constraint T\)",
        id=f"Scatter-opset{o}-bfloat16") for o in (9, 10)],
    # float8 (and the other small floats) are only TensorScatter's
    *[C(_with(F8, op, o),
        rf"input 'data' is float8e4m3fn, which is not allowed by {op}-{v} \(constraint T\)",
        id=f"{op}-{o}-float8")
      for op, o, v in (("Gather", 13, 13), ("GatherElements", 13, 13), ("GatherND", 13, 13),
                       ("Scatter", 9, 9), ("ScatterElements", 18, 18), ("ScatterND", 18, 18))],
    *[C(lambda dt=dt: oic.tensor_scatter(np.zeros((2, 3, 1), dt), np.zeros((2, 1, 1), dt), axis=1),
        rf"input 'past_cache' is {name}, which is not allowed by TensorScatter-24 \(constraint T\)",
        id=f"TensorScatter-{name}")
      for dt, name in ((ml_dtypes.float6_e2m3fn, "float6e2m3"), (ml_dtypes.int2, "int2"))],
    # index types: Tind int32|int64 for Gather*/Scatter*, int64 only for *ND and TensorScatter
    *[C(lambda it=it: oic.gather(D, np.array([0], it)),
        rf"input 'indices' is {name}, which is not allowed by Gather-13 \(constraint Tind\)",
        id=f"Gather-indices-{name}")
      for it, name in ((np.float32, "float"), (np.float64, "double"), (np.int16, "int16"),
                       (np.int8, "int8"), (np.uint32, "uint32"), (np.uint64, "uint64"),
                       (bool, "bool"))],
    C(lambda: oic.gather_elements(D, np.array([[0.0]])),
      r"input 'indices' is double, which is not allowed by GatherElements-13 \(constraint Tind\)",
      id="GatherElements-indices-double"),
    C(lambda: oic.scatter_elements(D, np.array([[0]], np.int8), f32([[1]])),
      r"input 'indices' is int8, which is not allowed by ScatterElements-18 \(constraint Tind\)",
      id="ScatterElements-indices-int8"),
    C(lambda: oic.scatter(D, np.array([[0]], np.uint8), f32([[1]])),
      r"input 'indices' is uint8, which is not allowed by Scatter-9 \(constraint Tind\)",
      id="Scatter-indices-uint8"),
    *[C(lambda o=o: oic.gather_nd(D, i32([[0, 1]]), opset=o),
        rf"input 'indices' is int32, which is not allowed by GatherND-{o} \(constraint Tind\)",
        id=f"GatherND-{o}-indices-int32") for o in (11, 12, 13)],
    *[C(lambda o=o: oic.scatter_nd(D, i32([[0, 1]]), f32([1]), opset=o),
        rf"input 'indices' is int32, which is not allowed by ScatterND-{o} \(constraint Tind\)",
        id=f"ScatterND-{o}-indices-int32") for o in (11, 13, 16, 18)],
    C(lambda: oic.tensor_scatter(np.zeros((2, 3, 1), np.float32), np.zeros((2, 1, 1), np.float32),
                                 i32([0, 0]), axis=1),
      r"input 'write_indices' is int32, which is not allowed by TensorScatter-24 "
      r"\(constraint Tind\)", id="TensorScatter-write-indices-int32"),
    # T must be one type across inputs
    C(lambda: oic.scatter_elements(D, i64([[0]]), np.array([[1]], np.int64)),
      r"input 'updates' is int64 but 'data' is float; both are T and must have the same type",
      id="ScatterElements-updates-type"),
    C(lambda: oic.scatter_nd(D, i64([[0, 0]]), np.array([1.0])),
      r"input 'updates' is double but 'data' is float; both are T", id="ScatterND-updates-type"),
    C(lambda: oic.scatter(D, i64([[0]]), np.array([[True]])),
      r"input 'updates' is bool but 'data' is float; both are T", id="Scatter-updates-type"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 3, 1), np.float32), np.zeros((2, 1, 1), np.float64),
                                 axis=1),
      r"input 'update' is double but 'past_cache' is float; both are T",
      id="TensorScatter-update-type"),
    C(lambda: oic.tensor_scatter(np.zeros((2, 3, 1), F8),
                                 np.zeros((2, 1, 1), ml_dtypes.float8_e5m2), axis=1),
      r"input 'update' is float8e5m2 but 'past_cache' is float8e4m3fn",
      id="TensorScatter-update-float8-kind"),
    # D14: the gradients take float16/float/double/bfloat16 and an int64 shape
    *[C(lambda dt=dt: oic.gather_grad(i64([3]), i64([0]), np.array([1], dt)),
        rf"input 'dY' is {name}, which is not allowed by GatherGrad-1 \(constraint T\)",
        id=f"GatherGrad-dY-{name}")
      for dt, name in ((np.int64, "int64"), (np.int32, "int32"), (np.complex64, "complex64"))],
    C(lambda: oic.gather_grad(i32([3]), i64([0]), f32([1])),
      r"input 'shape' is int32, which is not allowed by GatherGrad-1 \(constraint I\)",
      id="GatherGrad-shape-int32"),
    C(lambda: oic.gather_grad(i64([3]), np.array([0.0]), f32([1])),
      r"input 'indices' is double, which is not allowed by GatherGrad-1", id="GatherGrad-indices-double"),
    C(lambda: oic.gather_elements_grad(np.array([[1]], np.int64), i64([1, 3]), i64([[0]])),
      r"input 'dY' is int64, which is not allowed by GatherElementsGrad-1 \(constraint T\)",
      id="GatherElementsGrad-dY-int64"),
    # OpenVINO Gather-8: indices and axis of an integer type
    C(lambda: oic.openvino_gather(D, np.array([0.0]), 0),
      r"input 'indices' is double, which is not allowed by Gather-8 \(constraint T_IND\)",
      id="OpenVINO-indices-double"),
    C(lambda: oic.openvino_gather(D, i64([0]), np.array(1.0)),
      r"input 'axis' is double, which is not allowed by Gather-8 \(constraint T_AXIS\)",
      id="OpenVINO-axis-double"),
]


@pytest.mark.parametrize("call,message", TYPES)
def test_type_constraint(call, message):
    with pytest.raises(oic.SpecError, match=message):
        call()


# ---------------------------------------------------------------------------------------------
# What is NOT an error (the decisions that keep ORT's and the reference's behaviour)


NOT_ERRORS = [
    # D7: duplicates with reduction "none" are allowed; the last write wins
    C(lambda: oic.scatter_elements(f32([0, 0]), i64([1, 1]), f32([1, 2])), f32([0, 2]),
      id="ScatterElements-18-duplicates-none"),
    C(lambda: oic.scatter_elements(f32([0, 0]), i64([1, -1]), f32([1, 2]), reduction="none",
                                   opset=16), f32([0, 2]), id="ScatterElements-16-duplicates-none"),
    C(lambda: oic.scatter_elements(f32([0, 0]), i64([1, 1]), f32([1, 2]), opset=11), f32([0, 2]),
      id="ScatterElements-11-duplicates"),
    C(lambda: oic.scatter(f32([0, 0]), i64([1, 1]), f32([1, 2])), f32([0, 2]),
      id="Scatter-9-duplicates"),
    C(lambda: oic.scatter_nd(f32([0, 0]), i64([[1], [-1]]), f32([1, 2]), opset=13), f32([0, 2]),
      id="ScatterND-13-duplicates"),
    # D6: the axis dim of indices is free (may exceed data's)
    C(lambda: oic.gather_elements(f32([[1, 2]]), i64([[1, 0, 1]]), axis=1), f32([[2, 1, 2]]),
      id="GatherElements-axis-dim-longer"),
    C(lambda: oic.scatter_elements(f32([[1, 2]]), i64([[1, 0, 1]]), f32([[5, 6, 7]]), axis=1),
      f32([[6, 7]]), id="ScatterElements-axis-dim-longer"),
    # D2: negatives from Gather-11 on, in every GatherElements/GatherND/Scatter* version
    C(lambda: oic.gather(f32([1, 2, 3]), i64([-3]), opset=11), f32([1]), id="Gather-11-negative"),
    C(lambda: oic.gather_elements(f32([1, 2, 3]), i64([-3]), opset=11), f32([1]),
      id="GatherElements-11-negative"),
    C(lambda: oic.gather_nd(f32([1, 2, 3]), i64([[-3]]), opset=11), f32([1]),
      id="GatherND-11-negative"),
    C(lambda: oic.scatter_elements(f32([1, 2, 3]), i64([-3]), f32([9]), opset=11), f32([9, 2, 3]),
      id="ScatterElements-11-negative"),
    C(lambda: oic.scatter_nd(f32([1, 2, 3]), i64([[-3]]), f32([9]), opset=11), f32([9, 2, 3]),
      id="ScatterND-11-negative"),
    # TensorScatter circular: write indices past M wrap (wi = 9, M = 4 writes at 1, 2)
    C(lambda: oic.tensor_scatter(np.zeros((1, 4), np.float32), np.ones((1, 2), np.float32),
                                 i64([9]), axis=1, mode="circular"), f32([[0, 1, 1, 0]]),
      id="TensorScatter-circular-wraps"),
    # OpenVINO Gather-8: out of range is zeros, not an error
    C(lambda: oic.openvino_gather(f32([1, 2, 3, 4, 5]), i64([3, 10, -20]), 0), f32([4, 0, 0]),
      id="OpenVINO-out-of-range-zeros"),
    # GatherND batch_dims = 0 stated explicitly at version 12
    C(lambda: ev("GatherND", 12, [f32([1, 2]), i64([[1]])], [("batch_dims", 0)])[0], f32([2]),
      id="GatherND-12-batch-dims-0"),
]


@pytest.mark.parametrize("call,expected", NOT_ERRORS)
def test_not_an_error(call, expected):
    got = call()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------------------------
# The error classes


def test_spec_error_is_a_value_error():
    assert issubclass(oic.SpecError, ValueError)
    with pytest.raises(ValueError, match=r"indices\[0\] = 9 is out of range"):
        oic.gather(D, i64([9]))


def test_unsupported_error_is_not_implemented_error_and_not_a_spec_error():
    assert issubclass(oic.UnsupportedError, NotImplementedError)
    assert not issubclass(oic.UnsupportedError, ValueError)
    with pytest.raises(oic.UnsupportedError, match=r"reduction 'mul' on string"):
        s = np.array(["a", "b"], dtype=object)
        oic.scatter_elements(s, i64([0]), s[:1], reduction="mul")


@pytest.mark.parametrize("domain,op", [("", "Foo"), ("", "gather"), ("ai.onnx", "GatherFoo"),
                                       ("com.foo", "Gather"), ("org.openvinotoolkit", "Foo"),
                                       ("com.microsoft", "ScatterND")])
def test_evaluate_unknown_op_is_a_value_error(domain, op):
    with pytest.raises(ValueError, match=rf"no operator {op} in domain '{domain}'"):
        oic.evaluate(domain, op, 13, [D, i64([0])])


def test_ai_onnx_is_the_default_domain():
    got = oic.evaluate("ai.onnx", "Gather", 13, [D, i64([2])])[0]
    np.testing.assert_array_equal(got, D[[2]])


def test_output_too_large_is_refused_before_allocation():
    with pytest.raises(oic.OutputTooLargeError, match=r"32000 bytes, more than the limit of 100"):
        oic.gather(np.zeros((3, 4)), np.zeros(1000, I64), max_output_bytes=100)


def test_duplicate_indices_do_not_raise_and_the_last_write_wins():
    """docs/semantics.md (D7): duplicates under no reduction are not a SpecError; the last
    write in row-major order of the indices wins (expected values worked out by hand)."""
    got = oic.scatter_nd(np.zeros(3), np.array([[1], [1]]), np.array([5.0, 7.0]))
    assert got.tolist() == [0.0, 7.0, 0.0]
    got = oic.scatter_elements(np.zeros(3), np.array([2, 2]), np.array([5.0, 7.0]), opset=11)
    assert got.tolist() == [0.0, 0.0, 7.0]
    got = oic.scatter(np.zeros(3), np.array([0, 0]), np.array([5.0, 7.0]))
    assert got.tolist() == [7.0, 0.0, 0.0]
    got = oic.scatter_nd(np.zeros(3), np.array([[1], [1]]), np.array([5.0, 7.0]), reduction="add")
    assert got.tolist() == [0.0, 12.0, 0.0]
