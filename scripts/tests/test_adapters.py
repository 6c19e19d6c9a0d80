"""The bundled runtime adapters (crates/checker/src/runtime/adapters/*.py) speaking the runtime protocol
(docs/runtime-protocol.md), with this file playing onnx-idx-check's side: it copies an adapter
and onnx_idx_check_worker.py alone into a fresh directory, starts it, reads the hello, sends
requests built from cases in testdata/ (the .npy inputs written from the data set's input_K.pb
as the protocol's table says), and compares the output_K.pb written back with the case's.

The common part runs with a fake runtime (hello, error hello, done, refused, adapter bugs, a
runtime that prints to stdout, the TensorProto encoder for every element type, the ir_version
rewrite, the model cache); each real adapter runs a few cases and is skipped, with the reason,
when its runtime's package is not importable here. Needs onnx and numpy."""

import importlib.util
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
ADAPTERS = REPO / "crates" / "checker" / "src" / "runtime" / "adapters"
TESTDATA = REPO / "testdata"
WORKER = "onnx_idx_check_worker.py"
STARTUP_TIMEOUT_S = 300.0
REQUEST_TIMEOUT_S = 120.0

sys.path.insert(0, str(ADAPTERS))
import onnx_idx_check_worker as worker  # noqa: E402

sys.path.remove(str(ADAPTERS))

# The protocol's .npy element type of the types numpy lacks.
NPY_BITS = {
    "bfloat16": np.uint16, "float8e4m3fn": np.uint8, "float8e4m3fnuz": np.uint8,
    "float8e5m2": np.uint8, "float8e5m2fnuz": np.uint8, "float8e8m0": np.uint8,
    "int4": np.int8, "int2": np.int8, "uint4": np.uint8, "uint2": np.uint8,
    "float4e2m1": np.uint8, "float6e2m3": np.uint8, "float6e3m2": np.uint8,
}
DTYPE_NAME = {v: k for k, v in worker.DTYPES.items()}


# ---------------------------------------------------------------------------------------------
# The tool's side of the protocol.


def write_npy(array, dtype, path):
    """`array` (from numpy_helper.to_array) as the protocol's .npy of element type `dtype`."""
    if dtype == "string":
        items = [s if isinstance(s, bytes) else str(s).encode() for s in array.reshape(-1)]
        try:
            out = np.array([s.decode("utf-8") for s in items], dtype=str)
        except UnicodeDecodeError:
            out = np.array(items, dtype=bytes)
        out = out.reshape(array.shape)
    elif dtype in NPY_BITS:
        if dtype in ("int4", "int2", "uint4", "uint2"):
            out = array.astype(NPY_BITS[dtype])
        else:
            out = array.view(NPY_BITS[dtype])
    else:
        out = array
    np.save(path, out, allow_pickle=False)


class Adapter:
    """One adapter process: the tool's end of the pipes, read with a time limit."""

    def __init__(self, script, *args, env=None):
        self.stderr = tempfile.TemporaryFile()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=dict(env or os.environ, ONNX_IDX_CHECK_PROTOCOL="1"),
            start_new_session=True,
        )
        self.buffer = b""
        self.lines = []  # every line read from stdout, for the stdout-hygiene checks

    def line(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line within {timeout} s; stderr: {self.log()}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise AssertionError(
                        f"adapter ended (status {self.proc.wait()}); stderr: {self.log()}")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        self.lines.append(line)
        return json.loads(line)

    def hello(self):
        hello = self.line(STARTUP_TIMEOUT_S)
        self.startup_s = time.monotonic() - self.started
        return hello

    def request(self, request, timeout=REQUEST_TIMEOUT_S):
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        reply = self.line(timeout)
        assert reply.get("id") == request.get("id"), (reply, request)
        return reply

    def log(self):
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def close(self):
        """End of input: the worker exits; its status."""
        try:
            self.proc.stdin.close()
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
            self.proc.stdout.close()


def string_tensor(name, array):
    """A TensorProto of strings with exactly these bytes (helper.make_tensor goes through numpy,
    which drops trailing zero bytes)."""
    t = TensorProto(name=name, data_type=TensorProto.STRING, dims=list(array.shape))
    t.string_data.extend(bytes(s) for s in array.reshape(-1))
    return t


def to_array(tensor, base_dir=None):
    """numpy_helper.to_array, but strings as an object array of their bytes (to_array decodes
    them as UTF-8, and fails on other bytes)."""
    if tensor.data_type == TensorProto.STRING:
        out = np.empty(len(tensor.string_data), dtype=object)
        out[:] = list(tensor.string_data)
        return out.reshape(list(tensor.dims))
    return numpy_helper.to_array(tensor, base_dir=base_dir)


def graph_io(model_path):
    model = onnx.load(str(model_path), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in inits]
    return inputs, list(model.graph.output)


def elem_name(value_info):
    return DTYPE_NAME.get(value_info.type.tensor_type.elem_type, "undefined")


def build_request(case, rid, work, data_set="test_data_set_0", threads=None):
    """The request the tool sends for one data set of `case`, with its .npy files under `work`."""
    case = pathlib.Path(case)
    ds = case / data_set
    inputs, outputs = graph_io(case / "model.onnx")
    req_dir = pathlib.Path(work) / str(rid)
    (req_dir / "out").mkdir(parents=True)
    specs = []
    for k, vi in enumerate(inputs):
        pb = ds / f"input_{k}.pb"
        if not pb.exists():
            break
        tensor = onnx.load_tensor(str(pb))
        array = to_array(tensor, base_dir=str(ds))
        dtype = DTYPE_NAME[tensor.data_type]
        npy = req_dir / f"input_{k}.npy"
        write_npy(array, dtype, npy)
        specs.append({"name": vi.name, "pb": str(pb.resolve()), "npy": str(npy),
                      "dtype": dtype, "shape": list(tensor.dims)})
    return {
        "id": rid, "case": case.name, "data_set": data_set,
        "model": str((case / "model.onnx").resolve()),
        "inputs": specs,
        "outputs": [{"name": o.name, "dtype": elem_name(o)} for o in outputs],
        "output_dir": str(req_dir / "out"),
        "threads": threads,
    }


def same_tensor(actual_pb, expected_pb):
    """None when the two TensorProto files hold the same type, shape and bits; else why not."""
    a, e = onnx.load_tensor(str(actual_pb)), onnx.load_tensor(str(expected_pb))
    if a.data_type != e.data_type:
        return f"type {DTYPE_NAME.get(a.data_type)} != {DTYPE_NAME.get(e.data_type)}"
    if list(a.dims) != list(e.dims):
        return f"shape {list(a.dims)} != {list(e.dims)}"
    av = to_array(a)
    ev = to_array(e, base_dir=str(pathlib.Path(expected_pb).parent))
    if a.data_type == TensorProto.STRING:
        same = av.tolist() == ev.tolist()
    elif av.dtype.kind == "f" or av.dtype.kind == "c":
        same = np.array_equal(av, ev, equal_nan=True)
    else:
        same = av.tobytes() == ev.tobytes()
    return None if same else f"values {av.reshape(-1)[:8]} != {ev.reshape(-1)[:8]}"


def copy_adapter(directory, *names):
    """The adapter scripts `names` and the common module, alone in `directory`."""
    for name in (WORKER,) + names:
        shutil.copy(ADAPTERS / name, directory)
    return pathlib.Path(directory) / names[0]


# ---------------------------------------------------------------------------------------------
# The common part, with a fake runtime.

FAKE = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import onnx_idx_check_worker as worker

    class Runtime:
        name = "fake"
        threads = True
        options = {"threads": None, "mode": "ok"}

        def __init__(self, options):
            if options["mode"] == "noimport":
                import no_such_runtime_module  # noqa: F401
            if options["mode"] == "broken":
                raise RuntimeError("no device\\n  found")
            print("noise from the runtime's import")  # Python's stdout
            os.write(1, b"noise from C on fd 1\\n")
            self.loads = 0

        def version(self):
            return "0.1"

        def max_ir_version(self, error):
            text = str(error)
            return 9 if "max supported IR version: 9" in text else None

        def load(self, model, threads):
            data = open(model, "rb").read() if isinstance(model, str) else model
            ir = worker.ir_version(data)
            if ir > 9:
                raise RuntimeError(f"Unsupported model IR version: {ir}, max supported IR version: 9")
            self.loads += 1
            kind = os.path.basename(model)[:-5] if isinstance(model, str) else "bytes"
            return {"kind": kind, "ir": ir, "load": self.loads}

        def run(self, loaded, inputs, outputs, threads):
            print("noise from run")
            os.write(1, b"more noise\\n")
            kind = loaded["kind"]
            if kind == "refuse":
                raise ValueError("index 7 out of\\n   bounds [0, 5)")
            if kind == "unencodable":
                return [np.array([object()], dtype=object)]
            if kind in ("info", "bytes"):
                return [np.array([-1 if threads is None else threads, loaded["ir"],
                                  loaded["load"]], dtype=np.int64)]
            if kind == "echo":
                return [worker.Bits(t.dtype, t.shape, t.array) if t.dtype in worker.BITS
                        else t.array for t in inputs]
            if kind == "packed":
                return [worker.Bits(t.dtype, t.shape, t.raw()) for t in inputs]
            raise AssertionError(kind)

    if __name__ == "__main__":
        sys.exit(worker.main(Runtime))
    """
)


def sample_arrays():
    """One small array per ONNX element type, as numpy_helper.to_array returns them (ml_dtypes
    for the types numpy lacks), with the values that catch byte-order and packing mistakes."""
    import ml_dtypes

    floats = np.array([[0.0, -1.5, 3.0], [448.0, -0.25, 2.0 ** -6]], dtype=np.float32)
    out = {
        "float": np.array([[1.5, -0.0], [np.inf, np.nan]], dtype=np.float32),
        "double": np.array([1e300, -2.5], dtype=np.float64),
        "float16": np.array([65504, 6e-8, -1], dtype=np.float16),
        "uint8": np.array([0, 255], dtype=np.uint8), "int8": np.array([-128, 127], dtype=np.int8),
        "uint16": np.array([65535, 1], dtype=np.uint16),
        "int16": np.array([-32768, 1], dtype=np.int16),
        "int32": np.array([-2 ** 31, 7], dtype=np.int32),
        "int64": np.array([[-2 ** 63], [2 ** 63 - 1]], dtype=np.int64),
        "uint32": np.array([2 ** 32 - 1], dtype=np.uint32),
        "uint64": np.array([2 ** 64 - 1, 0], dtype=np.uint64),
        "bool": np.array([True, False, True]),
        "complex64": np.array([1 + 2j, -3j], dtype=np.complex64),
        "complex128": np.array([1e200 + 2j], dtype=np.complex128),
        "string": np.array([b"", "gr\u00f6\u00dfe \u2192".encode(), b"tail\x00", b"\xff\xfe"],
                           dtype=object).reshape(2, 2),
        "bfloat16": np.array([1e38, -1.0, 1e-40], dtype=ml_dtypes.bfloat16),
        "float8e4m3fn": floats.astype(ml_dtypes.float8_e4m3fn),
        "float8e4m3fnuz": floats.astype(ml_dtypes.float8_e4m3fnuz),
        "float8e5m2": floats.astype(ml_dtypes.float8_e5m2),
        "float8e5m2fnuz": floats.astype(ml_dtypes.float8_e5m2fnuz),
        "float8e8m0": np.array([1.0, 2.0 ** -127, 2.0 ** 100], dtype=ml_dtypes.float8_e8m0fnu),
        "int4": np.array([-8, 7, 0, -1, 3], dtype=ml_dtypes.int4),
        "uint4": np.array([[15, 0, 1], [9, 4, 2]], dtype=ml_dtypes.uint4),
        "float4e2m1": np.array([-6.0, 0.5, 1.5], dtype=ml_dtypes.float4_e2m1fn),
        "int2": np.array([-2, 1, 0, -1, 1], dtype=ml_dtypes.int2),
        "uint2": np.array([3, 0, 1, 2, 3, 1, 2], dtype=ml_dtypes.uint2),
        "float6e2m3": np.array([-7.5, 0.125, 1.0, 6.0, -0.0], dtype=ml_dtypes.float6_e2m3fn),
        "float6e3m2": np.array([28.0, -0.25, 0.0625], dtype=ml_dtypes.float6_e3m2fn),
        "rank0": np.array(2.5, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=ml_dtypes.int4),
    }
    assert set(worker.DTYPES) <= set(out), set(worker.DTYPES) - set(out)
    return out


def tensor_of(key, array):
    """The TensorProto onnx itself makes of `array`."""
    if key == "string":
        return string_tensor("x", array)
    return numpy_helper.from_array(array, "x")


class EncoderTest(unittest.TestCase):
    """onnx_idx_check_worker's TensorProto encoder and protobuf helpers, in this process."""

    def assert_round_trip(self, key, array, value):
        decoded = onnx.TensorProto.FromString(worker.tensor_bytes(value, "y"))
        expected = tensor_of(key, array)
        self.assertEqual(decoded.name, "y")
        self.assertEqual(decoded.data_type, expected.data_type, key)
        self.assertEqual(list(decoded.dims), list(array.shape), key)
        got = to_array(decoded)
        if key == "string":
            self.assertEqual(list(got.reshape(-1)), list(array.reshape(-1)))
        else:
            self.assertEqual(got.dtype, array.dtype, key)
            self.assertEqual(got.tobytes(), array.tobytes(), key)

    def test_every_type_round_trips_through_numpy_helper(self):
        for key, array in sample_arrays().items():
            with self.subTest(key):
                # as the runtime returns it (numpy or ml_dtypes array)
                self.assert_round_trip(key, array, array)
                name = DTYPE_NAME[tensor_of(key, array).data_type]
                if name in worker.BITS:
                    # as Bits of one code per element, and of the packed raw_data
                    codes = (array.astype(NPY_BITS[name]) if name in ("int4", "int2", "uint4", "uint2")
                             else array.view(NPY_BITS[name]))
                    self.assert_round_trip(key, array, worker.Bits(name, array.shape, codes))
                    raw = tensor_of(key, array).raw_data
                    self.assert_round_trip(key, array, worker.Bits(name, array.shape, raw))

    def test_packing_matches_onnx(self):
        rng = np.random.default_rng(0)
        for bits, name in ((4, "uint4"), (2, "uint2"), (6, "float6e2m3")):
            for n in range(0, 11):
                codes = rng.integers(0, 1 << bits, n).astype(np.uint8)
                import ml_dtypes
                ml = {"uint4": ml_dtypes.uint4, "uint2": ml_dtypes.uint2,
                      "float6e2m3": ml_dtypes.float6_e2m3fn}[name]
                array = codes.view(ml) if bits == 6 else codes.astype(ml)
                self.assertEqual(worker.pack_bits(codes, bits),
                                 numpy_helper.from_array(array).raw_data, (name, n))

    def test_big_endian_and_strided_arrays(self):
        array = np.arange(12, dtype=">i4").reshape(3, 4)[:, ::2]
        decoded = onnx.TensorProto.FromString(worker.tensor_bytes(array, "y"))
        self.assertEqual(numpy_helper.to_array(decoded).tolist(), array.tolist())
        self.assertEqual(decoded.data_type, TensorProto.INT32)

    def test_ir_version_rewrite(self):
        model = onnx.load(str(TESTDATA / "onnx-node" / "test_gather_0" / "model.onnx"))
        model.ir_version = 300
        data = model.SerializeToString()
        self.assertEqual(worker.ir_version(data), 300)
        lowered = worker.set_ir_version(data, 13)
        self.assertEqual(worker.ir_version(lowered), 13)
        back = onnx.load_from_string(lowered)
        self.assertEqual(back.ir_version, 13)
        model.ir_version = 13
        self.assertEqual(back, model)
        self.assertIsNone(worker.ir_version(b""))

    def test_string_tensor_reader(self):
        strings = np.array([b"a\x00", b""], dtype=object).reshape(2, 1)
        for packed in (True, False):
            data = string_tensor("s", strings).SerializeToString()
            if not packed:  # dims as separate varints, as proto2 writes them
                data = b"\x08\x02\x08\x01" b"\x10\x08" b"\x32\x02a\x00" b"\x32\x00"
            self.assertEqual(worker.read_string_tensor(data), ([2, 1], [b"a\x00", b""]))


class WorkerTest(unittest.TestCase):
    """The common part as a process, with the fake runtime."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        (self.root / "adapter").mkdir()
        shutil.copy(ADAPTERS / WORKER, self.root / "adapter")
        self.script = self.root / "adapter" / "fake.py"
        self.script.write_text(FAKE)
        self.models = self.root / "models"
        self.models.mkdir()
        self.adapters = []
        self.next_id = 0

    def tearDown(self):
        for a in self.adapters:
            if a.proc.returncode is None:
                a.close()
            a.stderr.close()
        self.tmp.cleanup()

    def start(self, *args):
        a = Adapter(self.script, *args)
        self.adapters.append(a)
        return a

    def model(self, kind, ir=8):
        path = self.models / f"{kind}.onnx"
        if not path.exists():
            m = helper.make_model(helper.make_graph([], "g", [], []))
            m.ir_version = ir
            onnx.save(m, str(path))
        return path

    def request(self, kind, inputs=(), threads=None, ir=8):
        """A request on model `kind` with `inputs`: [(dtype, ml/numpy array)]."""
        self.next_id += 1
        d = self.root / "req" / str(self.next_id)
        (d / "out").mkdir(parents=True)
        specs = []
        for k, (dtype, array) in enumerate(inputs):
            npy = d / f"input_{k}.npy"
            write_npy(array, dtype, npy)
            pb = d / f"input_{k}.pb"
            onnx.save_tensor(tensor_of(dtype, array), str(pb))
            specs.append({"name": f"x{k}", "pb": str(pb), "npy": str(npy), "dtype": dtype,
                          "shape": list(array.shape)})
        return {"id": self.next_id, "case": kind, "data_set": "test_data_set_0",
                "model": str(self.model(kind, ir)), "inputs": specs,
                "outputs": [{"name": f"y{k}", "dtype": s["dtype"]} for k, s in enumerate(specs)],
                "output_dir": str(d / "out"), "threads": threads}

    def output(self, request, k=0):
        tensor = onnx.load_tensor(os.path.join(request["output_dir"], f"output_{k}.pb"))
        return tensor, to_array(tensor)

    def test_hello_and_clean_exit(self):
        a = self.start()
        self.assertEqual(a.hello(),
                         {"protocol": 1, "runtime": "fake", "version": "0.1", "threads": True,
                          "memory_safe": False, "batches": True})
        self.assertEqual(a.close(), 0)

    def test_error_hello_when_the_runtime_cannot_be_imported(self):
        a = self.start("--mode", "noimport")
        self.assertEqual(a.hello(),
                         {"protocol": 1, "error": "No module named 'no_such_runtime_module'"})
        self.assertEqual(a.proc.wait(timeout=30), 1)

    def test_error_hello_when_setup_fails_or_an_option_is_unknown(self):
        a = self.start("--mode=broken")
        self.assertEqual(a.hello(), {"protocol": 1, "error": "RuntimeError: no device found"})
        self.assertEqual(a.proc.wait(timeout=30), 1)
        b = self.start("--device", "GPU")
        self.assertIn("unknown option --device", b.hello()["error"])
        self.assertEqual(b.proc.wait(timeout=30), 1)

    def test_refused_done_and_adapter_errors(self):
        a = self.start()
        a.hello()
        req = self.request("refuse")
        self.assertEqual(a.request(req), {"id": req["id"], "status": "refused",
                                          "message": "ValueError: index 7 out of bounds [0, 5)"})
        req = self.request("unencodable")
        reply = a.request(req)
        self.assertEqual(reply["status"], "refused")
        self.assertTrue(reply["message"].startswith("adapter: "), reply)
        self.assertEqual(os.listdir(req["output_dir"]), [])
        req = self.request("echo", [("float", np.array([1.0], dtype=np.float32))])
        pathlib.Path(req["inputs"][0]["npy"]).write_bytes(b"not a npy file")
        reply = a.request(req)
        self.assertEqual(reply["status"], "refused")
        self.assertTrue(reply["message"].startswith("adapter: input 'x0': "), reply)
        a.proc.stdin.write(b"{not json\n")
        a.proc.stdin.flush()
        reply = a.line(30)
        self.assertEqual((reply["id"], reply["status"]), (None, "refused"))
        self.assertTrue(reply["message"].startswith("adapter: bad request"))
        req = self.request("echo", [("int64", np.array([3, 1], dtype=np.int64))])
        self.assertEqual(a.request(req), {"id": req["id"], "status": "done"})
        tensor, value = self.output(req)
        self.assertEqual((tensor.name, value.tolist()), ("y0", [3, 1]))
        self.assertEqual(a.close(), 0)

    def test_stdout_noise_goes_to_stderr(self):
        a = self.start()
        a.hello()
        for _ in range(3):
            self.assertEqual(a.request(self.request("info"))["status"], "done")
        self.assertEqual(a.close(), 0)
        self.assertTrue(all(json.loads(line) for line in a.lines))
        self.assertEqual(len(a.lines), 4)
        for noise in ("noise from the runtime's import", "noise from C on fd 1",
                      "noise from run", "more noise"):
            self.assertIn(noise, a.log())

    def test_every_type_fed_and_written_back(self):
        a = self.start()
        a.hello()
        samples = [(DTYPE_NAME[tensor_of(k, v).data_type], v) for k, v in sample_arrays().items()]
        for kind in ("echo", "packed"):
            inputs = [s for s in samples if kind == "echo" or s[0] in worker.BITS]
            req = self.request(kind, inputs)
            self.assertEqual(a.request(req)["status"], "done", a.log())
            for k, (dtype, array) in enumerate(inputs):
                with self.subTest(kind=kind, k=k, dtype=dtype):
                    tensor, value = self.output(req, k)
                    self.assertEqual(DTYPE_NAME[tensor.data_type], dtype)
                    self.assertEqual(list(tensor.dims), list(array.shape))
                    if dtype == "string":  # read from the .pb: even "tail\x00" keeps its zero
                        self.assertEqual(list(value.reshape(-1)), list(array.reshape(-1)))
                    else:
                        self.assertEqual(value.dtype, array.dtype)
                        self.assertEqual(value.tobytes(), array.tobytes())
        self.assertEqual(a.close(), 0)

    def test_threads_cache_and_ir_version_rewrite(self):
        a = self.start("--threads", "3")
        a.hello()

        def info(kind, threads=None, ir=8):
            req = self.request(kind, threads=threads, ir=ir)
            self.assertEqual(a.request(req)["status"], "done", a.log())
            return self.output(req)[1].tolist()

        # [threads, ir_version loaded, number of loads so far]
        self.assertEqual(info("info"), [3, 8, 1])
        self.assertEqual(info("info"), [3, 8, 1])  # cached
        self.assertEqual(info("info", threads=2), [2, 8, 2])
        self.assertEqual(info("info", threads=None), [3, 8, 1])  # still cached
        # too new for the fake (its limit is 9): retried from bytes with ir_version 9
        self.assertEqual(info("bytes", ir=12), [3, 9, 3])
        self.assertIn("IR version 12 lowered to 9", a.log())
        self.assertEqual(a.close(), 0)


# ---------------------------------------------------------------------------------------------
# The real adapters on testdata cases.


def case_dir(name):
    for folder in ("onnx-node", "spec-examples"):
        if (TESTDATA / folder / name).is_dir():
            return TESTDATA / folder / name
    raise AssertionError(f"no testdata case {name}")


class CompileCacheTest(unittest.TestCase):
    """worker.CompileCache: a file per key, renamed into place; `off`; pruning least recently
    used files of its own names only, and only in a directory with its CACHEDIR.TAG."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, data):
        def writer(path):
            with open(path, "wb") as f:
                f.write(data)
        return writer

    def test_store_then_lookup_and_off(self):
        cache = worker.CompileCache("rt", "1.0 (x/y)", self.dir)
        self.assertIsNone(cache.lookup("model a", ".vmfb"))
        path = cache.store("model a", ".vmfb", self.write(b"compiled a"))
        self.assertEqual(pathlib.Path(path).read_bytes(), b"compiled a")
        self.assertEqual(cache.lookup("model a", ".vmfb"), path)
        self.assertIsNone(cache.lookup("model b", ".vmfb"))
        # The runtime's name and version make its own directory, in file-name characters.
        self.assertEqual(os.path.basename(os.path.dirname(path)), "rt-1.0__x_y_")
        # Nothing but the file and the tag: the temporary file was renamed.
        self.assertEqual(sorted(os.listdir(os.path.dirname(path))),
                         sorted(["CACHEDIR.TAG", os.path.basename(path)]))
        off = worker.CompileCache("rt", "1.0", "off")
        self.assertIsNone(off.store("model a", ".vmfb", self.write(b"x")))
        self.assertIsNone(off.lookup("model a", ".vmfb"))

    def test_a_writer_that_fails_turns_the_cache_off_and_leaves_nothing(self):
        cache = worker.CompileCache("rt", "1", self.dir)

        def fails(path):
            with open(path, "wb") as f:
                f.write(b"half")
            raise RuntimeError("no C++ compiler")
        self.assertIsNone(cache.store("k", ".so", fails))
        self.assertIsNone(cache.lookup("k", ".so"))
        self.assertEqual(os.listdir(os.path.join(self.dir, "rt-1")), ["CACHEDIR.TAG"])

    def test_pruning_removes_the_least_recently_used_of_its_own_files(self):
        sub = os.path.join(self.dir, "rt-1")
        cache = worker.CompileCache("rt", "1", self.dir)
        cache.LIMIT = 1000
        paths = []
        for k in range(5):
            paths.append(cache.store(f"k{k}", ".vmfb", self.write(b"x" * 300)))
            os.utime(paths[-1], (1000 + k, 1000 + k))
        mine = os.path.join(sub, "notes.txt")
        pathlib.Path(mine).write_bytes(b"y" * 5000)
        cache.prune()
        # 1,500 bytes of cache files over a limit of 1,000: the oldest go until 750 are left.
        self.assertEqual([os.path.exists(p) for p in paths], [False, False, False, True, True])
        self.assertTrue(os.path.exists(mine))
        # Without its tag the directory is not pruned at all.
        os.unlink(os.path.join(sub, "CACHEDIR.TAG"))
        for k in range(5, 10):
            cache.store(f"k{k}", ".vmfb", self.write(b"x" * 300))
        cache.prune()
        self.assertEqual(len([n for n in os.listdir(sub) if n.endswith(".vmfb")]), 7)


class RealAdapter:
    """Mixed into one TestCase per runtime: `script`, `module` (its package), `args`,
    `hello_threads`, `cases` (expected to match), `refused` (case -> text in the message)."""

    args = ()
    refused = {}
    memory_safe = False
    identity_done, identity_refused = [], []

    @classmethod
    def setUpClass(cls):
        if importlib.util.find_spec(cls.module) is None:
            raise unittest.SkipTest(
                f"the {cls.module} package is not importable by {sys.executable}: "
                f"the {cls.script} adapter is not run")
        cls.tmp = tempfile.TemporaryDirectory()
        root = pathlib.Path(cls.tmp.name)
        (root / "adapter").mkdir()
        cls.adapter = Adapter(copy_adapter(root / "adapter", cls.script), *cls.args)
        cls.hello = cls.adapter.hello()
        cls.work = root / "work"
        cls.next_id = 0

    @classmethod
    def tearDownClass(cls):
        cls.adapter.close()
        cls.adapter.stderr.close()
        cls.tmp.cleanup()

    def send(self, case, threads=None):
        type(self).next_id += 1
        req = build_request(case_dir(case), self.next_id, self.work, threads=threads)
        return req, self.adapter.request(req)

    def test_hello(self):
        self.assertEqual(self.hello["protocol"], 1)
        self.assertEqual(self.hello["runtime"], self.runtime)
        self.assertEqual(self.hello["threads"], self.hello_threads)
        self.assertIs(self.hello["memory_safe"], self.memory_safe)
        self.assertRegex(self.hello["version"], r"^\d+\.\d+")

    def test_cases(self):
        for case in self.cases:
            for threads in ((None, 1, 2) if self.hello_threads else (None,)):
                with self.subTest(case=case, threads=threads):
                    req, reply = self.send(case, threads)
                    self.assertEqual(reply["status"], "done", (reply, self.adapter.log()[-2000:]))
                    for k in range(len(req["outputs"])):
                        why = same_tensor(
                            pathlib.Path(req["output_dir"]) / f"output_{k}.pb",
                            case_dir(case) / "test_data_set_0" / f"output_{k}.pb")
                        self.assertIsNone(why, f"{case} output_{k}")

    def test_refusals(self):
        for case, text in self.refused.items():
            with self.subTest(case=case):
                req, reply = self.send(case)
                self.assertEqual(reply["status"], "refused", reply)
                self.assertIn(text, reply["message"])
                self.assertNotIn("\n", reply["message"])
                self.assertFalse(reply["message"].startswith("adapter:"), reply)

    def test_types_through_identity(self):
        """Every element type the runtime takes, fed and read back through an Identity model
        (the indexing cases of testdata/ cover few types); the others are refused by the
        runtime, never by the adapter."""
        samples = {k: v for k, v in sample_arrays().items() if k in worker.DTYPES}
        with tempfile.TemporaryDirectory() as tmp:
            for dtype, array in samples.items():
                if dtype not in self.identity_done and dtype not in self.identity_refused:
                    continue
                with self.subTest(dtype=dtype):
                    case = identity_case(pathlib.Path(tmp), dtype, array)
                    type(self).next_id += 1
                    req = build_request(case, self.next_id, self.work)
                    reply = self.adapter.request(req)
                    if dtype in self.identity_refused:
                        self.assertEqual(reply["status"], "refused", reply)
                        self.assertFalse(reply["message"].startswith("adapter:"), reply)
                        continue
                    self.assertEqual(reply["status"], "done", (reply, self.adapter.log()[-2000:]))
                    self.assertIsNone(same_tensor(
                        pathlib.Path(req["output_dir"]) / "output_0.pb",
                        case / "test_data_set_0" / "output_0.pb"))

    def test_stdout_carried_only_protocol_lines(self):
        self.send(self.cases[0])
        self.assertTrue(all(isinstance(json.loads(line), dict) for line in self.adapter.lines))


def identity_case(root, dtype, array):
    """A case of one Identity node (opset 25, IR 11) on `array`, its output the input."""
    tensor = tensor_of(dtype, array)
    case = root / f"identity_{dtype}"
    (case / "test_data_set_0").mkdir(parents=True)
    shape = list(array.shape)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", tensor.data_type, shape)],
        [helper.make_tensor_value_info("y", tensor.data_type, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    onnx.save(model, str(case / "model.onnx"))
    onnx.save_tensor(tensor, str(case / "test_data_set_0" / "input_0.pb"))
    tensor.name = "y"
    onnx.save_tensor(tensor, str(case / "test_data_set_0" / "output_0.pb"))
    return case


NUMERIC = ["float", "double", "float16", "bool", "int8", "int16", "int32", "uint8", "uint16",
           "uint32", "uint64"]

COMMON_CASES = [
    "test_gather_0", "test_gather_negative_indices", "test_gather_elements_1",
    "test_gathernd_example_int32_batch_dim1", "test_scatter_elements_with_duplicate_indices",
    "test_scatternd_max", "gather_scalar_index_rank0_output_opset13",
    "gather_elements_float16_opset13", "gather_elements_bool_opset13",
]


class OnnxruntimeAdapterTest(RealAdapter, unittest.TestCase):
    script, module, runtime, hello_threads = "onnxruntime.py", "onnxruntime", "onnxruntime", True
    cases = COMMON_CASES + ["gather_bfloat16_opset13", "gather_string_opset13",
                            "scatter_elements_string_opset13", "test_tensorscatter"]
    refused = {"gather_grad_axis0_opset13": "is not a registered function/op"}
    identity_done = NUMERIC + ["int64", "bfloat16", "float8e4m3fn", "float8e4m3fnuz",
                               "float8e5m2", "float8e5m2fnuz"]
    # No Identity kernel for the sub-byte types and float8e8m0, no complex, no float6 at all;
    # strings that are not UTF-8 cannot be fed from Python.
    identity_refused = ["int4", "uint4", "int2", "uint2", "float4e2m1", "float8e8m0",
                        "complex64", "float6e2m3", "string"]

    def test_ir_version_too_new_is_lowered(self):
        with tempfile.TemporaryDirectory() as tmp:
            case = pathlib.Path(tmp) / "test_gather_ir99"
            shutil.copytree(case_dir("test_gather_0"), case)
            model = onnx.load(str(case / "model.onnx"))
            model.ir_version = 99
            onnx.save(model, str(case / "model.onnx"))
            type(self).next_id += 1
            req = build_request(case, self.next_id, self.work)
            reply = self.adapter.request(req)
            self.assertEqual(reply["status"], "done", (reply, self.adapter.log()[-2000:]))
            self.assertIsNone(same_tensor(pathlib.Path(req["output_dir"]) / "output_0.pb",
                                          case / "test_data_set_0" / "output_0.pb"))
            self.assertIn("IR version 99 lowered to", self.adapter.log())


class OpenvinoAdapterTest(RealAdapter, unittest.TestCase):
    script, module, runtime, hello_threads = "openvino.py", "openvino", "openvino", True
    cases = COMMON_CASES + ["gather_bfloat16_opset13", "gather_string_opset13"]
    refused = {
        # Its ONNX frontend has no conversion rule for its own Gather-8 domain
        # (see docs/results/2026-11.md).
        "openvino_gather8_example1_opset13": "org.openvinotoolkit.Gather",
        # Strings go in (Gather runs on them) but the CPU plugin's ScatterElements takes none.
        "scatter_elements_string_opset13": "does not support string",
    }
    # int64 is left out: the CPU plugin runs it as int32 (2**63 - 1 comes back as -1). Strings
    # are too: a second run of an Identity on strings aborts OpenVINO ("free(): invalid
    # pointer"); gather_string_opset13 covers them.
    identity_done = NUMERIC + ["bfloat16", "float8e4m3fn", "float8e5m2", "float8e8m0", "int4",
                               "uint4", "float4e2m1"]
    identity_refused = ["float8e4m3fnuz", "float8e5m2fnuz", "int2", "float6e3m2", "complex64"]


class TractAdapterTest(RealAdapter, unittest.TestCase):
    script, module, runtime, hello_threads = "tract.py", "tract", "tract", False
    memory_safe = True
    cases = COMMON_CASES
    refused = {"gather_string_opset13": "tract's Python bindings take no string tensors",
               "gather_bfloat16_opset13": "Bfloat16"}
    identity_done = NUMERIC + ["int64"]
    identity_refused = ["bfloat16", "float8e4m3fn", "int4", "uint2", "float6e2m3", "complex128",
                        "string"]


class OnnxReferenceAdapterTest(RealAdapter, unittest.TestCase):
    script, module, runtime, hello_threads = "onnx_reference.py", "onnx", "onnx-reference", False
    memory_safe = True
    cases = COMMON_CASES + ["gather_bfloat16_opset13", "gather_string_opset13",
                            "scatter_elements_string_opset13", "test_tensorscatter"]
    identity_done = list(worker.DTYPES)
    identity_refused = []


if __name__ == "__main__":
    unittest.main()
