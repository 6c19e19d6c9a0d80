"""Fixed-width string arrays (numpy's ``<Un`` and ``|Sn``) through every kernel that takes strings.

A string output comes back in the form of the first string input: a ``<U`` input gives a ``<U``
output and a ``|S`` input a ``|S`` output, as wide as the widest fixed-width input (wider only
when a string ``add`` makes a longer string). Every expected value and dtype comes from numpy
itself (``np.take``, ``np.take_along_axis``, ``np.put_along_axis``, fancy indexing,
``np.result_type``), never from the package.
"""

import numpy as np
import pytest

import onnx_idx_check as oic

# The same strings as str and as ASCII bytes, so one expected computation serves both kinds.
WORDS = [["ab", "c", "def"], ["", "gh", "i"]]
KINDS = ["<U3", "S3"]


def data_of(kind):
    return np.array(WORDS, dtype=kind)


def assert_identical(got, expected):
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.tolist() == expected.tolist()


def _scatter_elements_expected(data, indices, updates, axis):
    out = data.astype(np.result_type(data, updates))
    np.put_along_axis(out, indices, updates, axis)
    return out


def _scatter_nd_expected(data, indices, updates):
    out = data.astype(np.result_type(data, updates))
    out[tuple(np.moveaxis(indices, -1, 0))] = updates
    return out


PERM = np.array([[1, 0, 1], [0, 1, 0]])  # a permutation of each column, for axis 0
ROWS = np.array([[0, 2], [1, 1]])


# (name, call of the package, numpy's expected value) for each kernel that takes strings.
CASES = [
    ("gather", lambda d: oic.gather(d, np.array([1, 0, 1])), lambda d: np.take(d, [1, 0, 1], 0)),
    (
        "gather_axis1_negative",
        lambda d: oic.gather(d, np.array([[-1, 0]]), axis=1),
        lambda d: np.take(d, [[-1, 0]], 1),
    ),
    (
        "gather_opset1",
        lambda d: oic.gather(d, np.array([1]), opset=1),
        lambda d: np.take(d, [1], 0),
    ),
    (
        "gather_empty_indices",
        lambda d: oic.gather(d, np.zeros((0,), np.int64)),
        lambda d: np.take(d, np.zeros((0,), np.int64), 0),
    ),
    (
        "gather_elements",
        lambda d: oic.gather_elements(d, ROWS, axis=1),
        lambda d: np.take_along_axis(d, ROWS, 1),
    ),
    (
        "gather_nd",
        lambda d: oic.gather_nd(d, np.array([[1, 1], [0, 2]])),
        lambda d: d[[1, 0], [1, 2]],
    ),
    (
        "gather_nd_batch_dims",
        lambda d: oic.gather_nd(d, np.array([[2], [0]]), batch_dims=1),
        lambda d: np.take_along_axis(d, np.array([[2], [0]]), 1).reshape(2),
    ),
    (
        "scatter",
        lambda d: oic.scatter(d, PERM, d[::-1]),
        lambda d: _scatter_elements_expected(d, PERM, d[::-1], 0),
    ),
    (
        "scatter_elements",
        lambda d: oic.scatter_elements(d, ROWS, d[:, :2][::-1], axis=1),
        lambda d: _scatter_elements_expected(d, ROWS, d[:, :2][::-1], 1),
    ),
    (
        "scatter_nd",
        lambda d: oic.scatter_nd(d, np.array([[1], [0]]), d[::-1]),
        lambda d: _scatter_nd_expected(d, np.array([[1], [0]]), d[::-1]),
    ),
    (
        "openvino_gather",
        lambda d: oic.openvino_gather(d, np.array([[2, -3]]), 1),
        lambda d: np.take(d, [[2, -3]], 1),
    ),
    (
        "openvino_gather_batch_dims",
        lambda d: oic.openvino_gather(d, np.array([[2], [0]]), 1, batch_dims=1),
        lambda d: np.take_along_axis(d, np.array([[2], [0]]), 1),
    ),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,call,expected", CASES, ids=[c[0] for c in CASES])
def test_fixed_width_strings_keep_their_dtype(kind, name, call, expected):
    data = data_of(kind)
    want = expected(data)
    assert want.dtype == np.dtype(kind), name  # numpy keeps the input's dtype
    assert_identical(call(data), want)
    assert data.tolist() == data_of(kind).tolist()  # the input is untouched


@pytest.mark.parametrize("kind", ["<U", "S"])
def test_fixed_width_strings_from_wider_updates_take_numpys_promoted_width(kind):
    data = np.array(["a", "b", "c"], dtype=f"{kind}1")
    updates = np.array(["xyzw"], dtype=f"{kind}4")
    got = oic.scatter_elements(data, np.array([1]), updates)
    expected = _scatter_elements_expected(data, np.array([1]), updates, 0)
    assert expected.dtype == np.dtype(f"{kind}4")
    assert_identical(got, expected)


@pytest.mark.parametrize("kind", ["<U", "S"])
def test_fixed_width_string_add_widens_to_the_longest_string(kind):
    data = np.array(["ab", "c"], dtype=f"{kind}2")
    updates = np.array(["de", "f"], dtype=f"{kind}2")
    got = oic.scatter_elements(data, np.array([0, 0]), updates, reduction="add")
    # Concatenation in row-major order of the indices: "ab" + "de" + "f".
    expected = np.array(["abdef", "c"], dtype=f"{kind}5")
    assert_identical(got, expected)


@pytest.mark.parametrize("kind", ["<U", "S"])
def test_fixed_width_strings_zero_filled_by_openvino_gather(kind):
    # Gather-8 leaves the block of an out-of-range index empty: "" in the input's dtype.
    data = np.array(["ab", "c"], dtype=f"{kind}2")
    got = oic.openvino_gather(data, np.array([1, 5]), 0)
    assert_identical(got, np.array(["c", ""], dtype=f"{kind}2"))


def test_fixed_width_unicode_strings_beyond_ascii_keep_their_dtype():
    data = np.array(["日本", "é", "\u00ff\u0100x"], dtype="<U3")
    got = oic.gather(data, np.array([2, 0, 1]))
    assert_identical(got, np.take(data, [2, 0, 1]))


def test_fixed_width_bytes_strings_that_are_not_utf8_stay_bytes():
    data = np.array([b"\xff\xfe", b"a"], dtype="S2")
    got = oic.gather(data, np.array([0, 0, 1]))
    assert_identical(got, np.take(data, [0, 0, 1]))
