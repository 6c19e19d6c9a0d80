"""The generated suite's expected outputs (`quick`, or $ONNX_IDX_CHECK_NUMPY_PROFILE) against
numpy expressions written here from the operator specs (ONNX's, OpenVINO's Gather-8,
onnxruntime's contrib GatherGrad and GatherElementsGrad), so that a wrong kernel cannot vouch
for itself: onnx-idx-check only writes the suite, and neither its kernels nor
fuzz/src/reference.rs are used for a value here.

Needs onnx and numpy (scripts/requirements-onnx-reference.txt) and the built binary
($ONNX_IDX_CHECK_BIN, else target/release or target/debug); a missing one fails rather than
skips, as .ci/run provides all three."""

import collections
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import numpy as np
import onnx
from onnx import external_data_helper, helper, numpy_helper

REPO = pathlib.Path(__file__).resolve().parent.parent.parent

# Of the 1,699 valid cases of seed 0 all are checked (LEFT_OUT below is empty); the floor is a
# little under that, room for a few cases left out by name if a new one is beyond numpy.
MIN_CHECKED_FRACTION = 0.98


def binary():
    """The onnx-idx-check that writes the suite; its absence fails the test (CI builds it)."""
    if os.environ.get("ONNX_IDX_CHECK_BIN"):
        path = pathlib.Path(os.environ["ONNX_IDX_CHECK_BIN"])
        if not path.is_file():
            raise AssertionError(f"ONNX_IDX_CHECK_BIN={path} is not a file")
        return path
    for profile in ("release", "debug"):
        path = REPO / "target" / profile / "onnx-idx-check"
        if path.is_file():
            return path
    raise AssertionError(
        f"no onnx-idx-check under {REPO / 'target'}: run `cargo build --release` first "
        "(or set ONNX_IDX_CHECK_BIN)"
    )


def read_tensor(path):
    """A TensorProto file as an array; external data is read beside it, as the suite writes it
    (`location` relative to the data set's directory, not to the working directory)."""
    tensor = onnx.load_tensor(str(path))
    if external_data_helper.uses_external_data(tensor):
        external_data_helper.load_external_data_for_tensor(tensor, str(path.parent))
    return numpy_helper.to_array(tensor)


def numbered(directory, prefix):
    """`prefix_K.pb` of `directory` in numeric order (input_10 after input_9)."""
    found = [(int(m.group(1)), p) for p in directory.iterdir()
             if (m := re.fullmatch(prefix + r"_(\d+)\.pb", p.name))]
    return [p for _, p in sorted(found)]


# ---------------------------------------------------------------------------------------------
# The operators, from their specs. Indices are normalised here as the specs state it, rather
# than left to numpy's negative indexing (which agrees on [-s, s-1] but would hide the rule).


def normalised(indices, size):
    """Indices as int64 with a negative one counted from the back (ONNX's [-s, s-1])."""
    idx = np.asarray(indices).astype(np.int64)
    return np.where(idx < 0, idx + size, idx)


# The reduction attribute's ufuncs, applied one update at a time (scatter_in_order), so each
# step is in the element type as in the spec's sequential loop: numpy's float16 and ml_dtypes'
# bfloat16 compute one operation in float32 and round it back, which is exactly rounded for + and
# * (float32 has at least 2p+2 bits), so the rounding-chain cases are reproduced bit for bit;
# bool add is OR and mul AND, integers wrap, strings (object arrays of str) concatenate with
# Python's +. np.maximum and np.minimum propagate a NaN on either side (the project's rule; the
# spec is silent), keeping the NaN's own bits, which the *_nan cases check.
REDUCTIONS = {"none": None, "add": np.add, "mul": np.multiply, "max": np.maximum,
              "min": np.minimum}


def scatter_in_order(out, targets, values, reduction):
    """Write or combine each value at its target (an index tuple, possibly a slice's), one at a
    time in the given order: with `none`, a later duplicate overwrites an earlier one."""
    ufunc = REDUCTIONS[reduction]
    for target, value in zip(targets, values):
        if ufunc is None:
            out[target] = value
        else:
            ufunc.at(out, target, value)
    return out


def element_targets(indices, axis, size):
    """For GatherElements/ScatterElements and the gradient: the data position each index
    position names, i.e. the position itself with its `axis` coordinate replaced by the index,
    as one index array per dim (row-major order of the index positions)."""
    grid = list(np.indices(indices.shape))
    grid[axis] = normalised(indices, size)
    return tuple(g.reshape(-1) for g in grid)


def gather(data, indices, axis=0):
    """Gather-1/11/13: out[p..., i..., q...] = data[p..., indices[i...], q...]."""
    axis %= data.ndim
    # np.asarray with the data's dtype: rank-0 indices into 1-D data give an element, and a
    # string element would otherwise become a '<U' array rather than an object one.
    return np.asarray(np.take(data, normalised(indices, data.shape[axis]), axis=axis), data.dtype)


def gather_elements(data, indices, axis=0):
    """GatherElements-11/13: out[pos] = data[pos with axis coord = indices[pos]]. Off the axis
    the indices may be shorter than the data, so the data is cut to their extent first
    (take_along_axis wants the two to broadcast)."""
    axis %= data.ndim
    window = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape))
    return np.take_along_axis(data[window], normalised(indices, data.shape[axis]), axis=axis)


def gather_nd(data, indices, batch_dims=0):
    """GatherND-11/12/13: out[b..., i...] = data[b..., *indices[b..., i..., :]], where the
    last dim of indices holds k coordinates and the first batch_dims dims are shared."""
    b, k = batch_dims, indices.shape[-1]
    batches = int(np.prod(indices.shape[:b], dtype=np.int64))
    tuples = int(np.prod(indices.shape[b:-1], dtype=np.int64))
    flat = data.reshape((batches,) + data.shape[b:])
    idx = indices.reshape(batches, tuples, k)
    coords = tuple(normalised(idx[..., j], data.shape[b + j]) for j in range(k))
    picked = flat[(np.arange(batches)[:, None],) + coords]
    return picked.reshape(indices.shape[:-1] + data.shape[b + k:])


def scatter_elements(data, indices, updates, axis=0, reduction="none"):
    """ScatterElements-11/13/16/18 and Scatter-9: a copy of data, then for each index position
    in row-major order, out[pos with axis coord = indices[pos]] = (or op=) updates[pos]."""
    axis %= data.ndim
    targets = zip(*element_targets(indices, axis, data.shape[axis]))
    return scatter_in_order(data.copy(), targets, updates.reshape(-1), reduction)


def scatter_nd(data, indices, updates, reduction="none"):
    """ScatterND-11/13/16/18: a copy of data, then for each k-tuple of indices in row-major
    order, out[tuple] (a slice when k < rank; the whole tensor when k == 0) = (or op=) the
    matching slice of updates."""
    k = indices.shape[-1]
    n = int(np.prod(indices.shape[:-1], dtype=np.int64))
    idx = indices.reshape(n, k)
    coords = [normalised(idx[:, j], data.shape[j]) for j in range(k)]
    targets = [tuple(int(c[i]) for c in coords) for i in range(n)]
    return scatter_in_order(data.copy(), targets, updates.reshape((n,) + data.shape[k:]),
                            reduction)


def tensor_scatter(past_cache, update, write_indices=None, axis=-2, mode="linear"):
    """TensorScatter-24: for batch b and j < sequence_length, present[b, ..., w_b + j, ...] =
    update[b, ..., j, ...] along `axis`, the position taken mod max_sequence_length in mode
    circular; write_indices absent means zeros."""
    axis %= past_cache.ndim
    out = past_cache.copy()
    batch, length, capacity = past_cache.shape[0], update.shape[axis], past_cache.shape[axis]
    middle = (slice(None),) * (axis - 1)
    for b in range(batch):
        start = 0 if write_indices is None else int(write_indices[b])
        for j in range(length):
            pos = start + j
            if mode == "circular":
                pos %= capacity
            out[(b,) + middle + (pos,)] = update[(b,) + middle + (j,)]
    return out


def openvino_gather(data, indices, axis, batch_dims=0):
    """OpenVINO Gather-8: out[p_0..p_{axis-1}, i_b..., q...] = data[p..., k, q...] with
    k = indices[p_0..p_{b-1}, i_b...]; a negative k counts from the back, and a k still outside
    [0, s) yields a block of zeros (false, empty string) rather than an error."""
    axis = int(np.asarray(axis).reshape(-1)[0])
    axis %= data.ndim
    b = batch_dims % indices.ndim if batch_dims < 0 else batch_dims
    size = data.shape[axis]
    if np.issubdtype(indices.dtype, np.unsignedinteger):
        # in uint64: a huge unsigned index cast to int64 first would turn negative and wrap back
        valid = indices < size
        k = np.where(valid, indices, 0).astype(np.int64)
    else:
        k = indices.astype(np.int64)
        k = np.where(k < 0, k + size, k)
        valid = (k >= 0) & (k < size)
        k = np.where(valid, k, 0)
    zero = "" if data.dtype == object else np.zeros((), data.dtype)
    out = np.empty(data.shape[:axis] + indices.shape[b:] + data.shape[axis + 1:], data.dtype)
    for p in np.ndindex(data.shape[:axis]):
        # np.array, not np.take's result as is: a rank-0 index into a 1-D block gives a scalar
        block = np.array(np.take(data[p], k[p[:b]], axis=0), dtype=data.dtype)
        block[~valid[p[:b]]] = zero
        out[p + (Ellipsis,)] = block  # element-wise: an object block of rank 0 is no element
    return out


def gather_grad(shape, indices, dy, axis=0):
    """com.microsoft GatherGrad: dX = zeros(shape), then dY's slice for each index added at the
    position Gather read it from along `axis`, duplicates accumulating in row-major order."""
    dx = np.zeros(tuple(int(s) for s in shape), dy.dtype)
    axis %= dx.ndim
    np.add.at(dx, (slice(None),) * axis + (normalised(indices, dx.shape[axis]),), dy)
    return dx


def gather_elements_grad(dy, shape, indices, axis=0):
    """com.microsoft GatherElementsGrad: dX = zeros(shape), then each element of dY added at
    the position GatherElements read it from, duplicates accumulating in row-major order."""
    dx = np.zeros(tuple(int(s) for s in shape), dy.dtype)
    axis %= dx.ndim
    np.add.at(dx, element_targets(indices, axis, dx.shape[axis]), dy.reshape(-1))
    return dx


# (domain, op_type) -> the expression; it takes the node's inputs in order (None for an omitted
# optional one) and its attributes by name, so each op's defaults are its Python defaults.
OPERATORS = {
    ("", "Gather"): gather,
    ("", "GatherElements"): gather_elements,
    ("", "GatherND"): gather_nd,
    ("", "Scatter"): scatter_elements,
    ("", "ScatterElements"): scatter_elements,
    ("", "ScatterND"): scatter_nd,
    ("", "TensorScatter"): tensor_scatter,
    ("org.openvinotoolkit", "Gather"): openvino_gather,
    ("com.microsoft", "GatherGrad"): gather_grad,
    ("com.microsoft", "GatherElementsGrad"): gather_elements_grad,
}


# ---------------------------------------------------------------------------------------------
# Comparing.


def show(value):
    """An element for a mismatch message, with its bits for a float (NaN payloads, -0.0)."""
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind == "U" or arr.itemsize not in (1, 2, 4, 8):
        return repr(value)
    bits = int(arr.reshape(1).view(np.dtype(f"u{arr.itemsize}"))[0])
    return f"{value!r} (bits 0x{bits:0{2 * arr.itemsize}x})"


def first_difference(expected, actual):
    """None when `actual` equals `expected` exactly: same dtype and shape, the same bytes per
    element (so NaN payloads, -0.0 and subnormals count; complex too), strings as the same
    bytes; otherwise a message with the first differing position and both values."""
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return (f"dtype/shape: expected {expected.dtype}{list(expected.shape)}, "
                f"got {actual.dtype}{list(actual.shape)}")
    e, a = expected.reshape(-1), actual.reshape(-1)
    if expected.dtype == object:
        differs = [x != y or type(x) is not type(y) for x, y in zip(e, a)]
    else:
        size = expected.dtype.itemsize
        eb = np.ascontiguousarray(e).view(np.uint8).reshape(e.size, size)
        ab = np.ascontiguousarray(a).view(np.uint8).reshape(a.size, size)
        differs = (eb != ab).any(axis=1)
    wrong = np.flatnonzero(differs)
    if wrong.size == 0:
        return None
    i = int(wrong[0])
    pos = tuple(int(c) for c in np.unravel_index(i, expected.shape))
    return (f"{wrong.size} of {e.size} elements differ; first at {list(pos)}: numpy says "
            f"{show(e[i])}, the suite says {show(a[i])}")


def check_case(case_dir):
    """Every data set of one case against the numpy expression of its node: None when all
    outputs match, else the first mismatch."""
    model = onnx.load(str(case_dir / "model.onnx"))
    (node,) = model.graph.node
    expression = OPERATORS[(node.domain, node.op_type)]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
    initialized = {t.name for t in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in initialized]
    data_sets = sorted(case_dir.glob("test_data_set_*"))
    if not data_sets:
        return "no data set"
    for data_set in data_sets:
        feeds = dict(zip(graph_inputs, map(read_tensor, numbered(data_set, "input"))))
        with np.errstate(all="ignore"):  # wrapping integers, inf - inf: the spec's values
            want = expression(*(feeds[name] if name else None for name in node.input), **attrs)
        outputs = numbered(data_set, "output")
        if len(outputs) != 1:
            return f"{data_set.name}: {len(outputs)} output files, not 1"
        diff = first_difference(np.asarray(want), read_tensor(outputs[0]))
        if diff:
            return f"{data_set.name}/{outputs[0].name}: {diff}"
    return None


# Valid cases numpy cannot reproduce faithfully, by name, with the reason: printed, not skipped.
# None so far: every combination of the quick suite (bfloat16 and float16 reduction chains,
# complex mul, NaN payloads under max and min, int8 wrap, string add) is reproduced exactly.
LEFT_OUT = {}


# The profile to check: quick in CI; ONNX_IDX_CHECK_NUMPY_PROFILE=full (or stress) checks that one
# (minutes, and for stress about 1 GB of disk).
PROFILE = os.environ.get("ONNX_IDX_CHECK_NUMPY_PROFILE", "quick")


class GeneratedSuiteNumpyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.suite = pathlib.Path(cls.tmp.name) / "suite"
        proc = subprocess.run([str(binary()), "generate", str(cls.suite), "--profile", PROFILE],
                              capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            cls.tmp.cleanup()
            raise AssertionError(f"onnx-idx-check generate failed:\n{proc.stderr}")
        cls.manifest = json.loads((cls.suite / "MANIFEST.json").read_text())

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_valid_case_matches_numpy(self):
        """Each case the manifest expects to pass, bit for bit; the counts per operator
        version and the cases left out are printed, as unittest shows no numbers of its own."""
        started = time.monotonic()
        checked, left_out, mismatches = collections.Counter(), [], []
        valid = {name: e for name, e in self.manifest["cases"].items() if e["expected"] == "passed"}
        for name, entry in sorted(valid.items()):
            domain = entry["domain"] + "." if entry["domain"] else ""
            op = f"{domain}{entry['op']}@{entry['version']}"
            if name in LEFT_OUT:
                left_out.append((name, LEFT_OUT[name]))
                continue
            diff = check_case(self.suite / name)
            if diff:
                mismatches.append(f"{name}: {diff}")
            checked[op] += 1
        total = sum(checked.values())
        print(f"\nnumpy check of the generated {PROFILE} suite: {total} of {len(valid)} valid cases "
              f"checked, {len(left_out)} left out, {time.monotonic() - started:.1f} s")
        for op, n in sorted(checked.items()):
            print(f"  {op}: {n}")
        for name, reason in left_out:
            print(f"  left out {name}: {reason}")
        self.assertEqual(mismatches, [], f"{len(mismatches)} cases differ from numpy")
        self.assertEqual(sorted(set(LEFT_OUT) - set(valid)), [], "LEFT_OUT names no valid case")
        self.assertGreaterEqual(total, MIN_CHECKED_FRACTION * len(valid))

    def test_a_changed_output_is_reported(self):
        """The check can fail: one element of a copied case's expected output changed (and
        only its sign bit: -0.0 against 0.0 must count) is named with its position."""
        name = "test_gather_13_float_basic"
        case = pathlib.Path(self.tmp.name) / "changed" / name
        shutil.copytree(self.suite / name, case)
        self.assertIsNone(check_case(case))
        path = case / "test_data_set_0" / "output_0.pb"
        tensor = onnx.load_tensor(str(path))
        values = numpy_helper.to_array(tensor).copy()
        flat = values.reshape(-1)
        flat[-1] = -flat[-1]  # the sign bit alone, even of a zero or a NaN
        onnx.save_tensor(numpy_helper.from_array(values, tensor.name), str(path))
        diff = check_case(case)
        self.assertIsNotNone(diff)
        last = [int(c) for c in np.unravel_index(flat.size - 1, values.shape)]
        self.assertIn(f"1 of {flat.size} elements differ; first at {last}", diff)


if __name__ == "__main__":
    unittest.main()
