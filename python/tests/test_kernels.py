"""The numpy API of onnx-idx-check against independent numpy expressions.

Every expected value here comes from numpy itself (``np.take``, ``np.take_along_axis``,
``np.put_along_axis``, ``np.add.at`` and friends, fancy indexing) or from a deliberately naive
Python loop written from the spec's pseudocode, never from the package. Inputs are seeded and
random (ranks 1-4, zero-size dimensions where the spec allows them, random and negative axes,
int32 and int64 indices, negative indices where the version allows them) over every dtype the
op's version allows. The rules are docs/semantics.md (the decisions D1-D14 are binding).
"""

from __future__ import annotations

import operator
import zlib

import ml_dtypes
import numpy as np
import pytest

import onnx_idx_check as oic

BF16 = np.dtype(ml_dtypes.bfloat16)
F8E4M3FN = np.dtype(ml_dtypes.float8_e4m3fn)
STRING_DTYPE = np.dtypes.StringDType()

FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
# "classic15" of docs/semantics.md §2, with strings given both as object arrays of str and as
# numpy's StringDType.
CLASSIC = [*FLOATS, *INTS, "bool", "complex64", "complex128", "str", "StringDType"]
INDEX_DTYPES = ["int32", "int64"]
N_CASES = 12  # random cases per test item

# ---------------------------------------------------------------------------------------------
# helpers


def rng_for(*key) -> np.random.Generator:
    """A generator seeded by the test's parameters, so every item is reproducible on its own."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _strings(rng, n):
    alphabet = ["", "a", "bc", "déf", "ghij", "日本", "x" * 20, "\u00ff\u0100", "k l"]
    return [alphabet[i] + str(j) for i, j in zip(rng.integers(0, len(alphabet), n), range(n))]


def make_data(rng, shape, dt, scale=100.0):
    """Random data of dtype name ``dt``."""
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    if dt == "str":
        a = np.empty(n, dtype=object)
        a[:] = _strings(rng, n)
        return a.reshape(shape)
    if dt == "StringDType":
        return np.array(_strings(rng, n), dtype=STRING_DTYPE).reshape(shape)
    if dt == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dt in INTS:
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if dt in ("complex64", "complex128"):
        return (scale * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))).astype(dt)
    if dt == "bfloat16":
        return (scale * rng.standard_normal(shape)).astype(BF16)
    if dt == "float8_e4m3fn":
        return (8 * rng.standard_normal(shape)).astype(F8E4M3FN)
    if dt in ("float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
        return (8 * rng.standard_normal(shape)).astype(getattr(ml_dtypes, dt))
    if dt == "int4":
        return rng.integers(-8, 8, shape).astype(ml_dtypes.int4)
    if dt == "uint4":
        return rng.integers(0, 16, shape).astype(ml_dtypes.uint4)
    if dt == "float4_e2m1fn":
        return (2 * rng.standard_normal(shape)).astype(ml_dtypes.float4_e2m1fn)
    return (scale * rng.standard_normal(shape)).astype(dt)


def empty_like_dt(shape, dtype):
    return np.empty(shape, dtype=dtype)


def zeros_of(shape, dtype):
    """The zero ('' / False / 0) of a dtype, as OpenVINO's Gather-8 fills."""
    if dtype == object:
        a = np.empty(shape, dtype=object)
        a[...] = ""
        return a
    if dtype == STRING_DTYPE:
        return np.full(shape, "", dtype=STRING_DTYPE)
    return np.zeros(shape, dtype=dtype)


def assert_same(actual, expected):
    """dtype, shape and every element identical (floats bit for bit)."""
    assert isinstance(actual, np.ndarray), type(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.kind in "OT":
        assert actual.tolist() == expected.tolist()
        if expected.dtype.kind == "O":
            assert all(isinstance(s, str) for s in actual.reshape(-1).tolist())
    else:
        a = np.array(actual, copy=True).reshape(-1).view(np.uint8)
        e = np.array(expected, copy=True).reshape(-1).view(np.uint8)
        if not np.array_equal(a, e):
            diff = np.nonzero(
                (a.reshape(-1, expected.dtype.itemsize) != e.reshape(-1, expected.dtype.itemsize)).any(1)
            )[0]
            raise AssertionError(
                f"{len(diff)} element(s) differ, first at flat {diff[0]}: "
                f"{actual.reshape(-1)[diff[0]]!r} != {expected.reshape(-1)[diff[0]]!r}"
            )


def assert_values(actual, expected):
    """For arithmetic reductions: dtype and shape identical, values equal with NaN == NaN."""
    assert isinstance(actual, np.ndarray), type(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.kind in "OT":
        assert actual.tolist() == expected.tolist()
    elif expected.dtype.kind in "biuc":
        np.testing.assert_array_equal(actual, expected)
    else:  # float16/32/64 and the ml_dtypes floats
        np.testing.assert_array_equal(actual.astype(np.float64), expected.astype(np.float64))


def rand_shape(rng, rank, zero_ok=True, lo=1, hi=4):
    dims = rng.integers(lo, hi + 1, rank)
    if zero_ok and rank and rng.random() < 0.15:
        dims[rng.integers(rank)] = 0
    return tuple(int(d) for d in dims)


def rand_indices(rng, shape, size, negative, dtype):
    """Indices in [0, size) or, with ``negative``, in [-size, size)."""
    if size == 0:
        assert int(np.prod(shape)) == 0
        return np.zeros(shape, dtype=dtype)
    lo = -size if negative else 0
    return rng.integers(lo, size, shape).astype(dtype)


def rand_axis(rng, rank):
    axis = int(rng.integers(0, rank))
    return axis - rank if rng.random() < 0.5 else axis


def unique_along(rng, shape, axis, size, negative, dtype):
    """Indices of ``shape`` whose entries are distinct along ``axis`` (needs shape[axis] <= size)."""
    full = list(shape)
    full[axis] = size
    perm = np.argsort(rng.random(full), axis=axis)
    idx = np.take(perm, np.arange(shape[axis]), axis=axis)
    if negative and size:
        flip = rng.random(idx.shape) < 0.5
        idx = np.where(flip, idx - size, idx)
    return idx.astype(dtype)


def sub_block(shape, axis):
    """The slices that cut data down to an indices shape off the axis."""
    return tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(shape))


def elements_index(idx, axis):
    """The full advanced index that GatherElements/ScatterElements address with ``idx``."""
    grid = list(np.indices(idx.shape, sparse=True))
    grid[axis] = idx
    return tuple(grid)


def version_allows_bf16(op, opset):
    return {
        "Gather": opset >= 13,
        "GatherElements": opset >= 13,
        "GatherND": opset >= 13,
        "ScatterElements": opset >= 13,
        "ScatterND": opset >= 13,
    }[op]


def dtype_params(op, opsets):
    """(dtype, opset) pairs: classic15 at every version, bfloat16 where the version allows it."""
    out = [(dt, o) for o in opsets for dt in CLASSIC]
    out += [("bfloat16", o) for o in opsets if version_allows_bf16(op, o)]
    return out


UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
# The same on numpy scalars, for the naive loops. complex uses the scalar operators: numpy's
# complex multiply ufunc loops may contract a*c - b*d into an FMA (1 ulp off the textbook
# product); its scalar arithmetic does not, and neither the spec nor D8 asks for an FMA.
SCALAR_OPS = {"add": operator.add, "mul": operator.mul, "max": np.maximum, "min": np.minimum}


def reduction_dtypes(reduction):
    """The dtypes D8 says each reduction supports (everything else is UnsupportedError)."""
    numeric = [*FLOATS, *INTS, "bfloat16"]
    if reduction == "add":
        return [*numeric, "bool", "complex64", "complex128", "str", "StringDType"]
    if reduction == "mul":
        return [*numeric, "bool", "complex64", "complex128"]
    return numeric


def with_nans(rng, a, frac=0.2):
    if a.dtype.kind == "f" or a.dtype in (BF16,):
        a = a.copy()
        a[rng.random(a.shape) < frac] = np.nan
    return a


# ---------------------------------------------------------------------------------------------
# Gather


GATHER_OPSETS = [1, 10, 11, 12, 13, 24]


@pytest.mark.parametrize("itype", INDEX_DTYPES)
@pytest.mark.parametrize("dt,opset", dtype_params("Gather", GATHER_OPSETS))
def test_gather_matches_np_take(dt, opset, itype):
    rng = rng_for("gather", dt, opset, itype)
    negative = opset >= 11  # D2: Gather-1 rejects negatives
    for _ in range(N_CASES):
        r = int(rng.integers(1, 5))
        shape = rand_shape(rng, r)
        axis = rand_axis(rng, r)
        s = shape[axis]
        q = int(rng.integers(0, 4))
        ishape = rand_shape(rng, q)
        if s == 0 and q == 0:
            ishape = (0,)
        elif s == 0:
            ishape = (0,) + ishape[1:]
        data = make_data(rng, shape, dt)
        idx = rand_indices(rng, ishape, s, negative, itype)
        expected = np.asarray(np.take(data, idx, axis=axis), dtype=data.dtype)
        got = oic.gather(data, idx, axis=axis, opset=opset)
        assert got.ndim == r + idx.ndim - 1
        assert_same(got, expected)


def test_gather_scalar_index_on_1d_data_gives_rank_0():
    got = oic.gather(np.array([5.0, 6.0, 7.0], np.float32), np.array(-1, np.int64))
    assert_same(got, np.array(7.0, np.float32))


def test_gather_empty_indices_check_nothing():
    data = np.arange(12, dtype=np.int16).reshape(3, 4)
    assert_same(oic.gather(data, np.zeros((2, 0), np.int64), axis=1),
                np.zeros((3, 2, 0), np.int16))
    # A zero-size axis with no index at all is fine too.
    assert_same(oic.gather(np.zeros((0, 3), np.float64), np.zeros((0,), np.int32)),
                np.zeros((0, 3), np.float64))


# ---------------------------------------------------------------------------------------------
# GatherElements


@pytest.mark.parametrize("itype", INDEX_DTYPES)
@pytest.mark.parametrize("dt,opset", dtype_params("GatherElements", [11, 12, 13, 18]))
def test_gather_elements_matches_take_along_axis(dt, opset, itype):
    rng = rng_for("gather_elements", dt, opset, itype)
    for _ in range(N_CASES):
        r = int(rng.integers(1, 5))
        shape = rand_shape(rng, r)
        axis = rand_axis(rng, r)
        a = axis % r
        # Rank equal, dims off the axis <= data's, the axis dim free (D6).
        ishape = [int(rng.integers(0, n + 1)) for n in shape]
        ishape[a] = int(rng.integers(0, 6))
        if shape[a] == 0:
            ishape[a] = 0
        data = make_data(rng, shape, dt)
        idx = rand_indices(rng, tuple(ishape), shape[a], True, itype)
        expected = np.take_along_axis(data[sub_block(ishape, a)], idx, axis=axis)
        got = oic.gather_elements(data, idx, axis=axis, opset=opset)
        assert_same(got, expected)


# ---------------------------------------------------------------------------------------------
# GatherND


def gather_nd_naive(data, idx, b):
    k = idx.shape[-1]
    out = empty_like_dt(idx.shape[:-1] + data.shape[b + k:], data.dtype)
    for pos in np.ndindex(*idx.shape[:-1]):
        key = tuple(pos[:b]) + tuple(int(v) for v in idx[pos])
        out[pos] = data[key]
    return out


@pytest.mark.parametrize("dt,opset", dtype_params("GatherND", [11, 12, 13]))
def test_gather_nd_matches_naive_loop_and_fancy_indexing(dt, opset):
    rng = rng_for("gather_nd", dt, opset)
    for _ in range(N_CASES):
        r = int(rng.integers(1, 5))
        b = int(rng.integers(0, r)) if opset >= 12 else 0
        k = int(rng.integers(1, r - b + 1))
        shape = list(rand_shape(rng, r))
        for j in range(b, b + k):  # an indexed dim of size 0 can only take no index
            shape[j] = max(shape[j], 1)
        shape = tuple(shape)
        middle = rand_shape(rng, int(rng.integers(0, 3)))
        ishape = shape[:b] + middle + (k,)
        data = make_data(rng, shape, dt)
        comps = [rand_indices(rng, ishape[:-1] + (1,), shape[b + j], True, np.int64)
                 for j in range(k)]
        idx = np.concatenate(comps, axis=-1) if comps else np.zeros(ishape, np.int64)
        expected = gather_nd_naive(data, idx, b)
        got = oic.gather_nd(data, idx, batch_dims=b, opset=opset)
        assert got.ndim == idx.ndim + r - k - 1 - b
        assert_same(got, expected)
        if b == 0:  # the same thing through numpy's own fancy indexing
            assert_same(got, np.asarray(data[tuple(idx[..., j] for j in range(k))],
                                        dtype=data.dtype))


# ---------------------------------------------------------------------------------------------
# Scatter (9) and ScatterElements, reduction none


SCATTER_ELEMENTS_OPSETS = [11, 13, 16, 18]


def _scatter_elements_case(rng, dt, itype, negative, unique=True):
    r = int(rng.integers(1, 5))
    shape = rand_shape(rng, r)
    axis = rand_axis(rng, r)
    a = axis % r
    ishape = [int(rng.integers(0, n + 1)) for n in shape]
    if unique:
        ishape[a] = int(rng.integers(0, shape[a] + 1))
        idx = unique_along(rng, tuple(ishape), a, shape[a], negative, itype)
    else:
        ishape[a] = int(rng.integers(0, 6)) if shape[a] else 0
        idx = rand_indices(rng, tuple(ishape), shape[a], negative, itype)
    data = make_data(rng, shape, dt, scale=4.0)
    upd = make_data(rng, tuple(ishape), dt, scale=4.0)
    return data, idx, upd, axis, a


@pytest.mark.parametrize("itype", INDEX_DTYPES)
@pytest.mark.parametrize("dt", CLASSIC)
def test_scatter_9_matches_put_along_axis(dt, itype):
    rng = rng_for("scatter", dt, itype)
    for _ in range(N_CASES):
        data, idx, upd, axis, a = _scatter_elements_case(rng, dt, itype, negative=False)
        before = (data.copy(), idx.copy(), upd.copy())
        expected = data.copy()
        np.put_along_axis(expected[sub_block(idx.shape, a)], idx, upd, axis=axis)
        got = oic.scatter(data, idx, upd, axis=axis, opset=9 if rng.random() < 0.5 else 10)
        assert_same(got, expected)
        for x, y in zip((data, idx, upd), before):
            assert_same(x, y)


@pytest.mark.parametrize("itype", INDEX_DTYPES)
@pytest.mark.parametrize("dt,opset", dtype_params("ScatterElements", SCATTER_ELEMENTS_OPSETS))
def test_scatter_elements_none_matches_put_along_axis(dt, opset, itype):
    rng = rng_for("scatter_elements", dt, opset, itype)
    for i in range(N_CASES):
        data, idx, upd, axis, a = _scatter_elements_case(rng, dt, itype, negative=True)
        before = (data.copy(), idx.copy(), upd.copy())
        expected = data.copy()
        np.put_along_axis(expected[sub_block(idx.shape, a)], idx, upd, axis=axis)
        # From version 16 the attribute exists; "none" spelled out equals leaving it out.
        reduction = "none" if opset >= 16 and i % 2 else None
        got = oic.scatter_elements(data, idx, upd, axis=axis, reduction=reduction, opset=opset)
        assert_same(got, expected)
        assert not np.shares_memory(got, data)
        for x, y in zip((data, idx, upd), before):
            assert_same(x, y)


def scatter_elements_naive(data, idx, upd, axis, f=None):
    out = data.copy()
    a = axis % data.ndim
    for pos in np.ndindex(*idx.shape):
        t = list(pos)
        t[a] = int(idx[pos])
        t = tuple(t)
        out[t] = upd[pos] if f is None else f(out[t], upd[pos])
    return out


@pytest.mark.parametrize("opset", [9, 11, 13, 16, 18])
@pytest.mark.parametrize("dt", ["float32", "int8", "str", "bool"])
def test_duplicates_with_reduction_none_last_write_wins(dt, opset):
    """D7: duplicate indices with reduction "none": the last write in row-major order wins."""
    rng = rng_for("dups", dt, opset)
    for _ in range(N_CASES):
        data, idx, upd, axis, _ = _scatter_elements_case(
            rng, dt, "int64", negative=opset >= 11, unique=False)
        expected = scatter_elements_naive(data, idx, upd, axis)
        if opset == 9:
            got = oic.scatter(data, idx, upd, axis=axis)
        else:
            got = oic.scatter_elements(data, idx, upd, axis=axis, opset=opset)
        assert_same(got, expected)
    # And ScatterND: updates of the same cell, the last one stays.
    data = make_data(rng, (3, 2), dt)
    upd = make_data(rng, (4, 2), dt)
    idx = np.array([[1], [-2], [0], [1]], np.int64)
    expected = data.copy()
    expected[0] = upd[2]
    expected[1] = upd[3]
    if opset >= 11:
        assert_same(oic.scatter_nd(data, idx, upd, opset=opset), expected)


# ---------------------------------------------------------------------------------------------
# ScatterElements reductions


def _reduction_params(reductions_at):
    out = []
    for opset, reds in reductions_at:
        for red in reds:
            for dt in reduction_dtypes(red):
                out.append((red, dt, opset))
    return out


REDUCTIONS_AT = [(16, ["add", "mul"]), (18, ["add", "mul", "max", "min"])]


@pytest.mark.parametrize("itype", INDEX_DTYPES)
@pytest.mark.parametrize("reduction,dt,opset", _reduction_params(REDUCTIONS_AT))
def test_scatter_elements_reduction_matches_ufunc_at(reduction, dt, opset, itype):
    rng = rng_for("scatter_elements_red", reduction, dt, opset, itype)
    uf = UFUNCS[reduction]
    for _ in range(N_CASES):
        data, idx, upd, axis, a = _scatter_elements_case(
            rng, dt, itype, negative=True, unique=False)
        if reduction in ("max", "min"):
            data, upd = with_nans(rng, data), with_nans(rng, upd)
        before = (data.copy(), idx.copy(), upd.copy())
        if dt in ("StringDType", "complex64", "complex128"):  # the spec's loop instead
            expected = scatter_elements_naive(data, idx, upd, axis, SCALAR_OPS[reduction])
        else:
            expected = data.copy()
            with np.errstate(all="ignore"):
                uf.at(expected, elements_index(idx, a), upd)
        got = oic.scatter_elements(data, idx, upd, axis=axis, reduction=reduction, opset=opset)
        assert_values(got, expected)
        for x, y in zip((data, idx, upd), before):
            assert_same(x, y)


def test_scatter_elements_integer_reductions_wrap():
    data = np.array([100, 1, 2], np.int8)
    got = oic.scatter_elements(data, np.array([0, 0]), np.array([100, 2], np.int8), reduction="add")
    assert_same(got, np.array([-54, 1, 2], np.int8))
    data = np.array([2**62, 0], np.int64)
    got = oic.scatter_elements(data, np.array([0]), np.array([4], np.int64), reduction="mul")
    assert_same(got, np.array([0, 0], np.int64))


def test_scatter_reduction_float16_rounds_after_every_step():
    # 2048 + 1 + 1 in float16: each +1 rounds back to 2048 (ties to even); one sum would give 2050.
    data = np.array([2048.0], np.float16)
    upd = np.array([1.0, 1.0], np.float16)
    assert_same(oic.scatter_elements(data, np.array([0, 0]), upd, reduction="add"),
                np.array([2048.0], np.float16))
    assert_same(oic.scatter_nd(data, np.array([[0], [0]]), upd, reduction="add"),
                np.array([2048.0], np.float16))
    bf = np.array([256.0], BF16)
    assert_same(oic.scatter_nd(bf, np.array([[0], [0]]), np.array([1.0, 1.0], BF16),
                               reduction="add"),
                np.array([256.0], BF16))


@pytest.mark.parametrize("fn", ["scatter_elements", "scatter_nd"])
def test_max_min_propagate_nan_either_side(fn):
    data = np.array([1.0, np.nan, 3.0], np.float32)
    upd = np.array([np.nan, 5.0], np.float32)
    for red, expected in [("max", [np.nan, np.nan, 3.0]), ("min", [np.nan, np.nan, 3.0])]:
        if fn == "scatter_elements":
            got = oic.scatter_elements(data, np.array([0, 1]), upd, reduction=red)
        else:
            got = oic.scatter_nd(data, np.array([[0], [1]]), upd, reduction=red)
        assert_values(got, np.array(expected, np.float32))


@pytest.mark.parametrize("fn", ["scatter_elements", "scatter_nd"])
@pytest.mark.parametrize("dt,reduction", [("str", "mul"), ("str", "max"), ("str", "min"),
                                          ("bool", "max"), ("bool", "min"),
                                          ("complex64", "max"), ("complex128", "min")])
def test_unsupported_reductions_raise_unsupported_error(fn, dt, reduction):
    """D8: string mul/max/min, bool max/min, complex max/min are valid but not implemented."""
    rng = rng_for("unsupported", fn, dt, reduction)
    data = make_data(rng, (3,), dt)
    upd = make_data(rng, (2,), dt)
    with pytest.raises(oic.UnsupportedError, match=reduction):
        if fn == "scatter_elements":
            oic.scatter_elements(data, np.array([0, 0]), upd, reduction=reduction)
        else:
            oic.scatter_nd(data, np.array([[0], [0]]), upd, reduction=reduction)
    assert issubclass(oic.UnsupportedError, NotImplementedError)


# ---------------------------------------------------------------------------------------------
# ScatterND


def _scatter_nd_case(rng, dt, unique):
    r = int(rng.integers(1, 5))
    k = int(rng.integers(0, r + 1))
    shape = list(rand_shape(rng, r))
    for j in range(k):
        shape[j] = max(shape[j], 1)
    shape = tuple(shape)
    cells = int(np.prod(shape[:k], dtype=np.int64))
    middle = rand_shape(rng, int(rng.integers(1, 3)), lo=0, hi=3)
    n = int(np.prod(middle, dtype=np.int64))
    if unique:
        if k == 0:  # one update of the whole tensor at most is "unique"
            middle = (min(n, 1),) * len(middle)
        elif n > cells:
            middle = (cells,) + (1,) * (len(middle) - 1)
        n = int(np.prod(middle, dtype=np.int64))
        flat = rng.permutation(cells)[:n]
    else:
        flat = rng.integers(0, cells, n)
    if k == 0:
        coords = np.zeros(middle + (0,), np.int64)
    else:
        coords = np.array(np.unravel_index(flat, shape[:k]), dtype=np.int64).T.reshape(
            middle + (k,))
    neg = rng.random(coords.shape) < 0.5
    idx = np.where(neg, coords - np.array(shape[:k], dtype=np.int64), coords).astype(np.int64)
    data = make_data(rng, shape, dt, scale=4.0)
    upd = make_data(rng, middle + shape[k:], dt, scale=4.0)
    return data, idx, upd


def scatter_nd_naive(data, idx, upd, f=None):
    """The doc's loop; with a reduction, element by element (see SCALAR_OPS)."""
    out = data.copy()
    k = idx.shape[-1]
    for pos in np.ndindex(*idx.shape[:-1]):
        key = tuple(int(v) for v in idx[pos])
        if f is None:
            out[key] = upd[pos]
            continue
        for t in np.ndindex(*data.shape[k:]):
            out[key + t] = f(out[key + t], upd[pos + t])
    return out


@pytest.mark.parametrize("dt,opset", dtype_params("ScatterND", [11, 13, 16, 18]))
def test_scatter_nd_none_matches_naive_loop(dt, opset):
    rng = rng_for("scatter_nd", dt, opset)
    for i in range(N_CASES):
        data, idx, upd = _scatter_nd_case(rng, dt, unique=True)
        before = (data.copy(), idx.copy(), upd.copy())
        expected = scatter_nd_naive(data, idx, upd)
        reduction = "none" if opset >= 16 and i % 2 else None
        got = oic.scatter_nd(data, idx, upd, reduction=reduction, opset=opset)
        assert_same(got, expected)
        assert not np.shares_memory(got, data)
        for x, y in zip((data, idx, upd), before):
            assert_same(x, y)


@pytest.mark.parametrize("reduction,dt,opset", _reduction_params(REDUCTIONS_AT))
def test_scatter_nd_reduction_matches_ufunc_at(reduction, dt, opset):
    rng = rng_for("scatter_nd_red", reduction, dt, opset)
    uf = UFUNCS[reduction]
    for _ in range(N_CASES):
        data, idx, upd = _scatter_nd_case(rng, dt, unique=False)
        if reduction in ("max", "min"):
            data, upd = with_nans(rng, data), with_nans(rng, upd)
        before = (data.copy(), idx.copy(), upd.copy())
        k = idx.shape[-1]
        with np.errstate(all="ignore"):
            if dt in ("StringDType", "complex64", "complex128") or k == 0:
                expected = scatter_nd_naive(data, idx, upd, SCALAR_OPS[reduction])
            else:
                expected = data.copy()
                uf.at(expected, tuple(idx[..., j] for j in range(k)), upd)
        got = oic.scatter_nd(data, idx, upd, reduction=reduction, opset=opset)
        assert_values(got, expected)
        for x, y in zip((data, idx, upd), before):
            assert_same(x, y)


def test_scatter_nd_k0_replaces_the_whole_tensor_last_wins():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    upd = np.stack([data + 10, data + 20, data + 30])
    assert_same(oic.scatter_nd(data, np.zeros((3, 0), np.int64), upd), data + 30)
    assert_same(oic.scatter_nd(data, np.zeros((3, 0), np.int64), upd, reduction="add"),
                data + (data + 10) + (data + 20) + (data + 30))


def test_scatter_nd_empty_indices_give_data():
    data = np.zeros((0, 3), np.int32)
    assert_same(oic.scatter_nd(data, np.zeros((0, 1), np.int64), np.zeros((0, 3), np.int32)), data)
    data = np.arange(4.0)
    assert_same(oic.scatter_nd(data, np.zeros((0, 1), np.int64), np.zeros((0,))), data)


# ---------------------------------------------------------------------------------------------
# TensorScatter


TENSOR_SCATTER_DTYPES = [*CLASSIC, "bfloat16", "float8_e4m3fn", "float8_e5m2", "int4", "uint4",
                         "float4_e2m1fn"]


def tensor_scatter_naive(past, update, wi, axis, mode):
    """The pseudocode of the TensorScatter-24 doc, literally."""
    out = past.copy()
    M = past.shape[axis]
    L = update.shape[axis]
    if wi is None:
        wi = np.zeros(past.shape[0], np.int64)
    for prefix in np.ndindex(*past.shape[:axis]):
        for j in range(L):
            c = int(wi[prefix[0]]) + j
            if mode == "circular":
                c %= M
            out[prefix + (c,)] = update[prefix + (j,)]
    return out


@pytest.mark.parametrize("mode", [None, "linear", "circular"])
@pytest.mark.parametrize("dt", TENSOR_SCATTER_DTYPES)
def test_tensor_scatter_matches_spec_pseudocode(dt, mode):
    rng = rng_for("tensor_scatter", dt, mode)
    for i in range(N_CASES):
        r = int(rng.integers(2, 5))
        a = int(rng.integers(1, r))
        axis = a - r if rng.random() < 0.5 else a
        shape = rand_shape(rng, r, zero_ok=True, hi=5)
        M = shape[a]
        L = int(rng.integers(0, M + 1))
        ushape = shape[:a] + (L,) + shape[a + 1:]
        past = make_data(rng, shape, dt)
        update = make_data(rng, ushape, dt)
        if i % 3 == 0:
            wi = None
        elif mode == "circular":
            wi = rng.integers(0, 3 * M + 1, shape[0]).astype(np.int64)
        else:
            wi = rng.integers(0, M - L + 1, shape[0]).astype(np.int64)
        before = (past.copy(), update.copy())
        expected = tensor_scatter_naive(past, update, wi, a, mode)
        got = oic.tensor_scatter(past, update, wi, axis=axis, mode=mode)
        assert_same(got, expected)
        assert_same(past, before[0])
        assert_same(update, before[1])


def test_tensor_scatter_default_axis_is_minus_2():
    past = np.zeros((2, 3, 4, 2), np.float32)
    update = np.ones((2, 3, 1, 2), np.float32)
    expected = past.copy()
    expected[0, :, 2] = 1
    expected[1, :, 0] = 1
    assert_same(oic.tensor_scatter(past, update, np.array([2, 0], np.int64)), expected)


# ---------------------------------------------------------------------------------------------
# OpenVINO Gather-8


def openvino_gather_naive(data, idx, axis, b):
    """gather.hpp, literally: zeros first, then every in-range index copies its block."""
    rd, ri = data.ndim, idx.ndim
    axis = axis + rd if axis < 0 else axis
    b = b + ri if b < 0 else b
    s = data.shape[axis]
    out = zeros_of(data.shape[:axis] + idx.shape[b:] + data.shape[axis + 1:], data.dtype)
    for p in np.ndindex(*data.shape[:axis]):
        for i in np.ndindex(*idx.shape[b:]):
            k = int(idx[p[:b] + i])
            if k < 0:
                k += s
            if 0 <= k < s:
                out[p + i] = data[p + (k,)]
    return out


@pytest.mark.parametrize("itype", ["int32", "int64", "int8", "uint8"])
@pytest.mark.parametrize("dt", [*CLASSIC, "bfloat16"])
def test_openvino_gather_matches_naive_zero_fill(dt, itype):
    rng = rng_for("ov", dt, itype)
    for i in range(N_CASES):
        rd = int(rng.integers(1, 5))
        axis = int(rng.integers(0, rd))
        b = int(rng.integers(0, axis + 1))
        shape = rand_shape(rng, rd)
        ri = b + int(rng.integers(0, 3))
        ishape = shape[:b] + rand_shape(rng, ri - b)
        data = make_data(rng, shape, dt)
        s = shape[axis]
        lo = max(-2 * s - 3, np.iinfo(itype).min)
        idx = rng.integers(lo, 2 * s + 3, ishape).astype(itype)  # many out of range
        bd = b - ri if (b - ri >= -min(rd, ri) and rng.random() < 0.5) else b
        ax = axis - rd if rng.random() < 0.5 else axis
        ax_in = [ax, np.array(ax, np.int32), np.array([ax], np.int64)][i % 3]
        expected = openvino_gather_naive(data, idx, ax, bd)
        got = oic.openvino_gather(data, idx, ax_in, batch_dims=bd)
        assert_same(got, expected)
        if b == 0 and s > 0:  # without batch dims: np.take where the index is in range, else 0
            ok = (idx >= -s) & (idx < s)
            taken = np.asarray(np.take(data, np.where(ok, idx, 0), axis=ax), dtype=data.dtype)
            mask = ok.reshape((1,) * axis + ok.shape + (1,) * (rd - axis - 1))
            assert_same(got, np.where(mask, taken, zeros_of(taken.shape, data.dtype)))


def test_openvino_gather_spec_example_zero_fill():
    got = oic.openvino_gather(np.array([1, 2, 3, 4, 5], np.float32), np.array([3, 10, -20]), 0)
    assert_same(got, np.array([4, 0, 0], np.float32))
    got = oic.openvino_gather(np.array(["a", "b"], dtype=object), np.array([1, 2, -3]), 0)
    assert_same(got, np.array(["b", "", ""], dtype=object))
    got = oic.openvino_gather(np.array([True, True]), np.array([1, 2]), 0)
    assert_same(got, np.array([True, False]))


# ---------------------------------------------------------------------------------------------
# GatherGrad and GatherElementsGrad (com.microsoft, D14)


GRAD_DTYPES = ["float16", "float32", "float64", "bfloat16"]


@pytest.mark.parametrize("itype", INDEX_DTYPES)
@pytest.mark.parametrize("dt", GRAD_DTYPES)
def test_gather_grad_matches_add_at(dt, itype):
    rng = rng_for("gather_grad", dt, itype)
    for _ in range(N_CASES):
        r = int(rng.integers(1, 4))
        shape = rand_shape(rng, r)
        axis = rand_axis(rng, r)
        a = axis % r
        ishape = rand_shape(rng, int(rng.integers(0, 3)))
        if shape[a] == 0:
            ishape = (0,) + ishape[1:] if ishape else (0,)
        idx = rand_indices(rng, ishape, shape[a], True, itype)
        dy = make_data(rng, shape[:a] + idx.shape + shape[a + 1:], dt, scale=4.0)
        expected = np.zeros(shape, dtype=dy.dtype)
        np.add.at(expected, (slice(None),) * a + (idx,), dy)
        got = oic.gather_grad(np.array(shape, np.int64), idx, dy, axis=axis)
        assert_values(got, expected)


@pytest.mark.parametrize("itype", INDEX_DTYPES)
@pytest.mark.parametrize("dt", GRAD_DTYPES)
def test_gather_elements_grad_matches_add_at(dt, itype):
    rng = rng_for("gather_elements_grad", dt, itype)
    for _ in range(N_CASES):
        r = int(rng.integers(1, 5))
        shape = rand_shape(rng, r)
        axis = rand_axis(rng, r)
        a = axis % r
        ishape = [int(rng.integers(0, n + 1)) for n in shape]
        ishape[a] = int(rng.integers(0, 6)) if shape[a] else 0
        idx = rand_indices(rng, tuple(ishape), shape[a], True, itype)
        dy = make_data(rng, tuple(ishape), dt, scale=4.0)
        expected = np.zeros(shape, dtype=dy.dtype)
        np.add.at(expected, elements_index(idx, a), dy)
        got = oic.gather_elements_grad(dy, np.array(shape, np.int64), idx, axis=axis)
        assert_values(got, expected)


def test_gather_grad_is_the_adjoint_of_gather():
    """<gather(x), dy> == <x, gather_grad(dy)>, in float64 with exact small integers."""
    rng = rng_for("adjoint")
    x = rng.integers(-5, 6, (4, 5, 3)).astype(np.float64)
    idx = rng.integers(-5, 5, (2, 3)).astype(np.int64)
    dy = rng.integers(-5, 6, (4, 2, 3, 3)).astype(np.float64)
    y = np.take(x, idx, axis=1)
    dx = oic.gather_grad(np.array(x.shape), idx, dy, axis=1)
    assert float((y * dy).sum()) == float((x * dx).sum())


# ---------------------------------------------------------------------------------------------
# The ONNX operator docs' own examples, literal inputs and outputs


def f32(x):
    return np.array(x, dtype=np.float32)


def i64(x):
    return np.array(x, dtype=np.int64)


SND_DATA = [[[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
            [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
            [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]],
            [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]]
SND_UPD = [[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
           [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]]]
# The reduction examples (onnx's scatternd.py, shown in Operators.md) only touch slice 0
# (indices [[0], [0]]); slices 1-3 keep the data. The "Expecting output" comments there print
# the updates' [[1, 1, 1, 1], ...] as slice 2, a copy-paste slip from the no-reduction example:
# the generated node-test outputs (scatter_nd_impl) keep the data, as written here.
SND_TAIL = SND_DATA[1:]
SE_Z = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
SE_I = [[1, 0, 2], [0, 2, 1]]
SE_U = [[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]]
SE_O = [[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]]
TS_PAST = [[[[1, 2, 3, 4, 5], [5, 6, 7, 8, 9], [8, 7, 6, 5, 4], [4, 3, 2, 1, 0]]],
           [[[1, 2, 3, 4, 5], [5, 6, 7, 8, 9], [8, 7, 6, 5, 4], [4, 3, 2, 1, 0]]]]

SPEC_EXAMPLES = {
    # Gather docs
    "Gather-axis0": (lambda: oic.gather(
        f32([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]]), i64([[0, 1], [1, 2]])),
        f32([[[1.0, 1.2], [2.3, 3.4]], [[2.3, 3.4], [4.5, 5.7]]])),
    "Gather-axis1": (lambda: oic.gather(
        f32([[1.0, 1.2, 1.9], [2.3, 3.4, 3.9], [4.5, 5.7, 5.9]]), i64([[0, 2]]), axis=1),
        f32([[[1.0, 1.9]], [[2.3, 3.9]], [[4.5, 5.9]]])),
    # GatherElements docs
    "GatherElements-1": (lambda: oic.gather_elements(
        i64([[1, 2], [3, 4]]), i64([[0, 0], [1, 0]]), axis=1), i64([[1, 1], [4, 3]])),
    "GatherElements-2": (lambda: oic.gather_elements(
        i64([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), i64([[1, 2, 0], [2, 0, 0]]), axis=0),
        i64([[4, 8, 3], [7, 2, 3]])),
    # GatherND docs, examples 1-5
    "GatherND-1": (lambda: oic.gather_nd(i64([[0, 1], [2, 3]]), i64([[0, 0], [1, 1]])),
                   i64([0, 3])),
    "GatherND-2": (lambda: oic.gather_nd(i64([[0, 1], [2, 3]]), i64([[1], [0]])),
                   i64([[2, 3], [0, 1]])),
    "GatherND-3": (lambda: oic.gather_nd(i64([[[0, 1], [2, 3]], [[4, 5], [6, 7]]]),
                                         i64([[0, 1], [1, 0]])), i64([[2, 3], [4, 5]])),
    "GatherND-4": (lambda: oic.gather_nd(i64([[[0, 1], [2, 3]], [[4, 5], [6, 7]]]),
                                         i64([[[0, 1]], [[1, 0]]])), i64([[[2, 3]], [[4, 5]]])),
    "GatherND-5": (lambda: oic.gather_nd(i64([[[0, 1], [2, 3]], [[4, 5], [6, 7]]]),
                                         i64([[1], [0]]), batch_dims=1), i64([[2, 3], [4, 5]])),
    # Scatter-9 docs
    "Scatter-1": (lambda: oic.scatter(f32(SE_Z), i64(SE_I), f32(SE_U), opset=10), f32(SE_O)),
    "Scatter-2": (lambda: oic.scatter(f32([[1.0, 2.0, 3.0, 4.0, 5.0]]), i64([[1, 3]]),
                                      f32([[1.1, 2.1]]), axis=1, opset=10),
                  f32([[1.0, 1.1, 3.0, 2.1, 5.0]])),
    # ScatterElements docs and the official node tests with reductions
    "ScatterElements-1": (lambda: oic.scatter_elements(f32(SE_Z), i64(SE_I), f32(SE_U)),
                          f32(SE_O)),
    "ScatterElements-2": (lambda: oic.scatter_elements(
        f32([[1.0, 2.0, 3.0, 4.0, 5.0]]), i64([[1, 3]]), f32([[1.1, 2.1]]), axis=1),
        f32([[1.0, 1.1, 3.0, 2.1, 5.0]])),
    "ScatterElements-negative": (lambda: oic.scatter_elements(
        f32([[1.0, 2.0, 3.0, 4.0, 5.0]]), i64([[1, -3]]), f32([[1.1, 2.1]]), axis=1),
        f32([[1.0, 1.1, 2.1, 4.0, 5.0]])),
    "ScatterElements-add": (lambda: oic.scatter_elements(
        f32([[1.0, 2.0, 3.0, 4.0, 5.0]]), i64([[1, 1]]), f32([[1.1, 2.1]]), axis=1,
        reduction="add"), f32([[1.0, 5.2, 3.0, 4.0, 5.0]])),
    "ScatterElements-mul": (lambda: oic.scatter_elements(
        f32([[1.0, 2.0, 3.0, 4.0, 5.0]]), i64([[1, 1]]), f32([[1.1, 2.1]]), axis=1,
        reduction="mul"), f32([[1.0, 4.62, 3.0, 4.0, 5.0]])),
    "ScatterElements-max": (lambda: oic.scatter_elements(
        f32([[1.0, 2.0, 3.0, 4.0, 5.0]]), i64([[1, 1]]), f32([[1.1, 2.1]]), axis=1,
        reduction="max"), f32([[1.0, 2.1, 3.0, 4.0, 5.0]])),
    "ScatterElements-min": (lambda: oic.scatter_elements(
        f32([[1.0, 2.0, 3.0, 4.0, 5.0]]), i64([[1, 1]]), f32([[1.1, 2.1]]), axis=1,
        reduction="min"), f32([[1.0, 1.1, 3.0, 4.0, 5.0]])),
    # ScatterND docs and the official node tests with reductions
    "ScatterND-1": (lambda: oic.scatter_nd(i64([1, 2, 3, 4, 5, 6, 7, 8]),
                                           i64([[4], [3], [1], [7]]), i64([9, 10, 11, 12])),
                    i64([1, 11, 3, 10, 9, 6, 7, 12])),
    "ScatterND-2": (lambda: oic.scatter_nd(f32(SND_DATA), i64([[0], [2]]), f32(SND_UPD)),
                    f32([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
                         [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
                         [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]],
                         [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]])),
    "ScatterND-add": (lambda: oic.scatter_nd(f32(SND_DATA), i64([[0], [0]]), f32(SND_UPD),
                                             reduction="add"),
                      f32([[[7, 8, 9, 10], [13, 14, 15, 16], [18, 17, 16, 15],
                            [16, 15, 14, 13]], *SND_TAIL])),
    "ScatterND-mul": (lambda: oic.scatter_nd(f32(SND_DATA), i64([[0], [0]]), f32(SND_UPD),
                                             reduction="mul"),
                      f32([[[5, 10, 15, 20], [60, 72, 84, 96], [168, 147, 126, 105],
                            [128, 96, 64, 32]], *SND_TAIL])),
    "ScatterND-max": (lambda: oic.scatter_nd(f32(SND_DATA), i64([[0], [0]]), f32(SND_UPD),
                                             reduction="max"),
                      f32([[[5, 5, 5, 5], [6, 6, 7, 8], [8, 7, 7, 7], [8, 8, 8, 8]],
                           *SND_TAIL])),
    "ScatterND-min": (lambda: oic.scatter_nd(f32(SND_DATA), i64([[0], [0]]), f32(SND_UPD),
                                             reduction="min"),
                      f32([[[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 3, 2, 1]],
                           *SND_TAIL])),
    "ScatterND-max-elements": (lambda: oic.scatter_nd(
        f32([[1, 2], [3, 4]]), i64([[0, 0], [1, 1]]), f32([5, 1]), reduction="max"),
        f32([[5, 2], [3, 4]])),
    "ScatterND-min-elements": (lambda: oic.scatter_nd(
        f32([[1, 2], [3, 4]]), i64([[0, 0], [1, 1]]), f32([5, 1]), reduction="min"),
        f32([[1, 2], [3, 1]])),
    # TensorScatter official node tests
    "TensorScatter-linear": (lambda: oic.tensor_scatter(
        f32(TS_PAST), f32([[[[5, 5, 5, 5, 5]]], [[[1, 1, 1, 1, 1]]]]), i64([1, 2]), mode="linear"),
        f32([[[[1, 2, 3, 4, 5], [5, 5, 5, 5, 5], [8, 7, 6, 5, 4], [4, 3, 2, 1, 0]]],
             [[[1, 2, 3, 4, 5], [5, 6, 7, 8, 9], [1, 1, 1, 1, 1], [4, 3, 2, 1, 0]]]])),
    "TensorScatter-circular": (lambda: oic.tensor_scatter(
        f32(TS_PAST),
        f32([[[[5, 5, 5, 5, 5], [6, 6, 6, 6, 6]]], [[[1, 1, 1, 1, 1], [2, 2, 2, 2, 2]]]]),
        i64([1, 3]), mode="circular"),
        f32([[[[1, 2, 3, 4, 5], [5, 5, 5, 5, 5], [6, 6, 6, 6, 6], [4, 3, 2, 1, 0]]],
             [[[2, 2, 2, 2, 2], [5, 6, 7, 8, 9], [8, 7, 6, 5, 4], [1, 1, 1, 1, 1]]]])),
    # OpenVINO Gather-8 spec example
    "OpenVINO-Gather-8": (lambda: oic.openvino_gather(i64([1, 2, 3, 4, 5]), i64([3, 10, -20]), 0),
                          i64([4, 0, 0])),
}


@pytest.mark.parametrize("name", list(SPEC_EXAMPLES))
def test_spec_example(name):
    run, expected = SPEC_EXAMPLES[name]
    got = run()
    if "add" in name or "mul" in name:
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6)  # 2.0*1.1*2.1 is not exact in f32
    else:
        assert_same(got, expected)


# ---------------------------------------------------------------------------------------------
# bfloat16, float8: which versions allow them (D4, docs/semantics.md §2)


def _call_with(op, dt, opset):
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3).astype(dt)
    if op == "Gather":
        return oic.gather(x, np.array([1, 0]), opset=opset), np.take(x, [1, 0], axis=0)
    if op == "GatherElements":
        i = np.array([[1, 0, 1]])
        return oic.gather_elements(x, i, opset=opset), np.take_along_axis(x, i, 0)
    if op == "GatherND":
        i = np.array([[1, 2]])
        return oic.gather_nd(x, i, opset=opset), x[[1], [2]]
    if op == "ScatterElements":
        e = x.copy()
        e[1, 0] = x[0, 2]
        return oic.scatter_elements(x, np.array([[1]]), x[:1, 2:], opset=opset), e
    if op == "ScatterND":
        e = x.copy()
        e[0] = x[1]
        return oic.scatter_nd(x, np.array([[0]]), x[1:], opset=opset), e
    if op == "Scatter":
        e = x.copy()
        e[1, 0] = x[0, 2]
        return oic.scatter(x, np.array([[1]]), x[:1, 2:], opset=opset), e
    raise AssertionError(op)


BF16_CASES = [("Gather", 1, False), ("Gather", 10, False), ("Gather", 11, False),
              ("Gather", 12, False), ("Gather", 13, True), ("Gather", 21, True),
              ("GatherElements", 11, False), ("GatherElements", 12, False),
              ("GatherElements", 13, True),
              ("GatherND", 11, False), ("GatherND", 12, False), ("GatherND", 13, True),
              ("Scatter", 9, False), ("Scatter", 10, False),
              ("ScatterElements", 11, False), ("ScatterElements", 12, False),
              ("ScatterElements", 13, True), ("ScatterElements", 16, True),
              ("ScatterElements", 18, True),
              ("ScatterND", 11, False), ("ScatterND", 12, False), ("ScatterND", 13, True),
              ("ScatterND", 18, True)]


@pytest.mark.parametrize("op,opset,allowed", BF16_CASES)
def test_bfloat16_only_from_its_version(op, opset, allowed):
    if allowed:
        got, expected = _call_with(op, BF16, opset)
        assert_same(got, expected)
    else:
        with pytest.raises(oic.SpecError, match=r"bfloat16.*not allowed"):
            _call_with(op, BF16, opset)


@pytest.mark.parametrize("op,opset", [("Gather", 13), ("GatherElements", 13), ("GatherND", 13),
                                      ("Scatter", 9), ("ScatterElements", 18),
                                      ("ScatterND", 18)])
def test_float8_is_only_for_tensor_scatter(op, opset):
    with pytest.raises(oic.SpecError, match=r"float8e4m3fn.*not allowed"):
        _call_with(op, F8E4M3FN, opset)


# ---------------------------------------------------------------------------------------------
# Layouts: non-contiguous and big-endian inputs give numpy's results


def _relaid(a, kind):
    """``a`` with the same values and shape in another memory layout."""
    if kind == "fortran":
        return np.asfortranarray(a)
    if kind == "strided":  # steps of 2 (and -2 on axis 0) into a bigger buffer
        if a.ndim == 0:
            return a.copy()
        big = np.empty(tuple(2 * n + 1 for n in a.shape), dtype=a.dtype)
        view = big[(slice(2 * a.shape[0] - 1, None, -2),)
                   + tuple(slice(1, None, 2) for _ in a.shape[1:])]
        view[...] = a
        return view
    if kind == "transposed":  # the transpose of a C array that holds the transposed values
        return np.ascontiguousarray(a.T).T
    if kind == "big-endian":
        if a.dtype.kind in "iufc" and a.dtype.itemsize > 1:
            return a.astype(a.dtype.newbyteorder(">"))
        return a
    raise AssertionError(kind)


LAYOUTS = ["fortran", "strided", "transposed", "big-endian"]
LAYOUT_DTYPES = ["float32", "int16", "uint64", "complex128", "float16", "bool", "str",
                 "StringDType"]


def _put(d, i, u, axis):
    e = d.copy()
    np.put_along_axis(e[sub_block(i.shape, axis)], i, u, axis=axis)
    return e


def _add_at(shape, index, g):
    e = np.zeros(shape, dtype=g.dtype)
    np.add.at(e, index, g)
    return e


def _scatter_add(d, i, u, axis):
    e = d.copy()
    np.add.at(e, elements_index(i, axis), u)
    return e


def _layout_ops(rng, dt):
    """(name, package call, numpy expectation, inputs) for every op."""
    d3 = make_data(rng, (3, 4, 5), dt)
    idx = unique_along(rng, (3, 3, 5), 1, 4, True, np.int64)
    yield ("gather", lambda d, i: oic.gather(d, i, axis=1),
           lambda d, i: np.take(d, i, axis=1),
           (d3, rng.integers(-4, 4, (2, 3)).astype(np.int64)))
    yield ("gather_elements", lambda d, i: oic.gather_elements(d, i, axis=-1),
           lambda d, i: np.take_along_axis(d, i, axis=-1),
           (d3, rng.integers(-5, 5, (3, 4, 6)).astype(np.int32)))
    yield ("gather_nd", lambda d, i: oic.gather_nd(d, i, batch_dims=1),
           lambda d, i: gather_nd_naive(d, i, 1),
           (d3, np.stack([rng.integers(-4, 4, (3, 2)), rng.integers(0, 5, (3, 2))],
                         -1).astype(np.int64)))
    yield ("scatter_elements", lambda d, i, u: oic.scatter_elements(d, i, u, axis=1),
           lambda d, i, u: _put(d, i, u, 1), (d3, idx, make_data(rng, (3, 3, 5), dt)))
    yield ("scatter", lambda d, i, u: oic.scatter(d, i, u, axis=1),
           lambda d, i, u: _put(d, i, u, 1), (d3, idx % 4, make_data(rng, (3, 3, 5), dt)))
    yield ("scatter_nd", lambda d, i, u: oic.scatter_nd(d, i, u),
           lambda d, i, u: scatter_nd_naive(d, i, u),
           (d3, np.array([[[2, -1], [0, 0]], [[1, 3], [-3, 2]]], np.int64),
            make_data(rng, (2, 2, 5), dt)))
    yield ("tensor_scatter",
           lambda p, u, w: oic.tensor_scatter(p, u, w, axis=1, mode="circular"),
           lambda p, u, w: tensor_scatter_naive(p, u, w, 1, "circular"),
           (d3, make_data(rng, (3, 2, 5), dt), np.array([3, 0, 9], np.int64)))
    yield ("openvino_gather", lambda d, i: oic.openvino_gather(d, i, 2, batch_dims=1),
           lambda d, i: openvino_gather_naive(d, i, 2, 1),
           (d3, rng.integers(-7, 7, (3, 4)).astype(np.int32)))
    if dt in ("float32", "float16"):
        yield ("gather_grad", lambda s, i, g: oic.gather_grad(s, i, g, axis=1),
               lambda s, i, g: _add_at(tuple(s), (slice(None), i), g),
               (np.array([3, 4, 5]), rng.integers(-4, 4, (2, 2)).astype(np.int64),
                make_data(rng, (3, 2, 2, 5), dt)))
        yield ("gather_elements_grad",
               lambda g, s, i: oic.gather_elements_grad(g, s, i, axis=2),
               lambda g, s, i: _add_at(tuple(s), elements_index(i, 2), g),
               (make_data(rng, (3, 4, 6), dt), np.array([3, 4, 5]),
                rng.integers(-5, 5, (3, 4, 6)).astype(np.int64)))
        yield ("scatter_elements_add",
               lambda d, i, u: oic.scatter_elements(d, i, u, axis=2, reduction="add"),
               lambda d, i, u: _scatter_add(d, i, u, 2),
               (d3, rng.integers(-5, 5, (3, 4, 6)).astype(np.int64),
                make_data(rng, (3, 4, 6), dt)))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dt", LAYOUT_DTYPES)
def test_layouts_give_numpys_results(dt, layout):
    rng = rng_for("layouts", dt, layout)
    for name, call, numpy_expected, inputs in _layout_ops(rng, dt):
        expected = numpy_expected(*inputs)
        relaid = [_relaid(x, layout) for x in inputs]
        if layout != "big-endian":
            assert any(not x.flags.c_contiguous for x in relaid), name
        for x, y in zip(inputs, relaid):
            assert x.shape == y.shape and x.tolist() == y.tolist(), name
        snapshot = [x.copy() for x in relaid]
        got = call(*relaid)
        try:
            if "grad" in name or "add" in name:
                assert_values(got, expected)
            else:
                assert_same(got, expected)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from e
        for x, y in zip(relaid, snapshot):  # inputs untouched
            assert x.dtype == y.dtype and x.tolist() == y.tolist(), name


def test_bytes_strings_come_back_as_bytes():
    data = np.empty(3, dtype=object)
    data[:] = [b"a", b"\xff\xfe", b""]
    got = oic.gather(data, np.array([[1, -1], [0, 1]]))
    expected = np.empty((2, 2), dtype=object)
    expected[...] = [[b"\xff\xfe", b""], [b"a", b"\xff\xfe"]]
    assert got.dtype == object and got.shape == (2, 2)
    assert got.tolist() == expected.tolist()
    upd = np.empty(2, dtype=object)
    upd[:] = [b"x", b"y"]
    got = oic.scatter_elements(data, np.array([2, 2]), upd, reduction="add")
    assert got.tolist() == [b"a", b"\xff\xfe", b"xy"]


def test_outputs_own_their_memory_and_inputs_may_be_read_only_or_broadcast():
    """Even when the result equals the input (empty scatters, L = 0), the output is a fresh,
    writable array; read-only and zero-stride (broadcast) inputs are fine."""
    z = np.zeros((3, 4), np.int64)
    cases = [
        (lambda d: oic.gather(d, np.arange(3)), lambda d: np.take(d, np.arange(3), 0)),
        (lambda d: oic.gather_elements(d, z), lambda d: np.take_along_axis(d, z, 0)),
        (lambda d: oic.gather_nd(d, np.zeros((1,), np.int64)), lambda d: d[0]),
        (lambda d: oic.scatter(d, z[:0], np.zeros((0, 4))), lambda d: d),
        (lambda d: oic.scatter_elements(d, z[:0], np.zeros((0, 4))), lambda d: d),
        (lambda d: oic.scatter_elements(d, z[:0], np.zeros((0, 4)), reduction="add"),
         lambda d: d),
        (lambda d: oic.scatter_nd(d, np.zeros((0, 1), np.int64), np.zeros((0, 4))), lambda d: d),
        (lambda d: oic.tensor_scatter(d, np.zeros((3, 0)), axis=1), lambda d: d),
        (lambda d: oic.openvino_gather(d, np.arange(3), 0), lambda d: d),
    ]
    read_only = np.arange(12.0).reshape(3, 4)
    read_only.flags.writeable = False
    bcast = np.broadcast_to(np.arange(4.0), (3, 4))  # zero strides
    for d in (read_only, bcast):
        original = d.tolist()
        for call, numpy_expected in cases:
            got = call(d)
            assert_same(got, np.ascontiguousarray(numpy_expected(d)))
            assert got.flags.writeable and not np.shares_memory(got, d)
            got[...] = -1  # writing to the output leaves the input alone
        assert d.tolist() == original
