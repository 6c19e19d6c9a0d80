"""The onnxruntime-web adapter (crates/checker/src/runtime/adapters/onnxruntime_web.js), a worker
of the runtime protocol (docs/runtime-protocol.md) written in JavaScript for Node, with this file
playing onnx-idx-check's side: it copies the script alone into a fresh directory, starts it with
`node`, reads the hello, sends requests built from cases in testdata/ and from small models made
here, and compares the output_K.pb written back with the expected tensors (the case's
output_K.pb, or numpy's).

Needs onnx, numpy, Node and the onnxruntime-web package, looked for where the worker looks
($ONNX_IDX_CHECK_NODE_MODULES, a directory where `npm install onnxruntime-web@1.30.0` ran, or
NODE_PATH); without the package the tests of the real runtime are skipped, saying so, and the
worker's own behaviour (stdout, refusals, traps) still runs with a stand-in package."""

import json
import os
import pathlib
import select
import shutil
import subprocess
import tempfile
import time
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = REPO / "crates" / "checker" / "src" / "runtime" / "adapters" / "onnxruntime_web.js"
TESTDATA = REPO / "testdata"
PINNED = "1.30.0"
STARTUP_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 60.0

# TensorProto.DataType by the protocol's names, for the types these tests use.
DTYPE_NAME = {
    TensorProto.FLOAT: "float", TensorProto.UINT8: "uint8", TensorProto.INT8: "int8",
    TensorProto.UINT16: "uint16", TensorProto.INT16: "int16", TensorProto.INT32: "int32",
    TensorProto.INT64: "int64", TensorProto.STRING: "string", TensorProto.BOOL: "bool",
    TensorProto.FLOAT16: "float16", TensorProto.DOUBLE: "double", TensorProto.UINT32: "uint32",
    TensorProto.UINT64: "uint64", TensorProto.BFLOAT16: "bfloat16",
}


def case_dir(name):
    for group in ("onnx-node", "spec-examples"):
        if (TESTDATA / group / name).is_dir():
            return TESTDATA / group / name
    raise FileNotFoundError(name)


class Worker:
    """One worker process: the tool's end of its pipes, read with a time limit."""

    def __init__(self, script, *args, env=None, cwd=None):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            ["node", str(script), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.stderr, cwd=cwd, start_new_session=True,
            env=dict(env if env is not None else os.environ, ONNX_IDX_CHECK_PROTOCOL="1"))
        self.buffer = b""
        self.lines = []

    def line(self, timeout=REQUEST_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line within {timeout} s; stderr: {self.log()}")
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise AssertionError(f"worker ended ({self.proc.wait()}); stderr: {self.log()}")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        self.lines.append(line)
        return json.loads(line)

    def send_raw(self, text):
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()
        return self.line()

    def log(self):
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def close(self):
        try:
            self.proc.stdin.close()
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
            self.proc.stdout.close()
            self.stderr.close()


def save_case(root, name, nodes, inputs, outputs, feeds, opset=17, ir_version=8, domain=""):
    """A case directory: the model, test_data_set_0/input_K.pb from `feeds` (TensorProtos)."""
    case = pathlib.Path(root) / name
    (case / "test_data_set_0").mkdir(parents=True)
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])
    model.ir_version = ir_version
    onnx.save(model, str(case / "model.onnx"))
    for k, tensor in enumerate(feeds):
        onnx.save_tensor(tensor, str(case / "test_data_set_0" / f"input_{k}.pb"))
    return case


def read_tensor(path):
    """(type name, dims, values) of a TensorProto file; strings as a list of bytes."""
    t = onnx.load_tensor(str(path))
    if t.data_type == TensorProto.STRING:
        return "string", list(t.dims), list(t.string_data)
    return DTYPE_NAME[t.data_type], list(t.dims), numpy_helper.to_array(t)


def find_package():
    """Why onnxruntime-web cannot run here, or None."""
    if shutil.which("node") is None:
        return "node not found (apt-get install nodejs npm)"
    places = [os.environ.get("ONNX_IDX_CHECK_NODE_MODULES", "")]
    places += os.environ.get("NODE_PATH", "").split(os.pathsep)
    for place in filter(None, places):
        for candidate in (pathlib.Path(place) / "node_modules" / "onnxruntime-web",
                          pathlib.Path(place) / "onnxruntime-web", pathlib.Path(place)):
            if (candidate / "package.json").is_file() and candidate.name == "onnxruntime-web":
                return None
    return (f"onnxruntime-web not found: npm install --prefix DIR onnxruntime-web@{PINNED}, "
            f"then ONNX_IDX_CHECK_NODE_MODULES=DIR")


MISSING = find_package()


@unittest.skipIf(MISSING, MISSING)
class OnnxruntimeWebTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = pathlib.Path(cls.tmp.name)
        (root / "adapter").mkdir()
        cls.script = pathlib.Path(shutil.copy(SCRIPT, root / "adapter"))
        cls.work = root / "work"
        cls.cases = root / "cases"
        cls.next_id = 0
        cls.worker = Worker(cls.script, cwd=str(root))
        cls.hello = cls.worker.line(STARTUP_TIMEOUT_S)

    @classmethod
    def tearDownClass(cls):
        cls.worker.close()
        cls.tmp.cleanup()

    def request(self, case, use_pb=True):
        """The request the tool sends for test_data_set_0 of `case` (each input's .npy written
        from its .pb with numpy_helper; `use_pb=False` leaves out the .pb), and the reply."""
        type(self).next_id += 1
        rid = self.next_id
        out = self.work / str(rid) / "out"
        out.mkdir(parents=True)
        model = onnx.load(str(case / "model.onnx"))
        inits = {t.name for t in model.graph.initializer}
        inputs = [v for v in model.graph.input if v.name not in inits]
        specs = []
        for k, vi in enumerate(inputs):
            pb = case / "test_data_set_0" / f"input_{k}.pb"
            t = onnx.load_tensor(str(pb))
            npy = self.work / str(rid) / f"input_{k}.npy"
            if t.data_type != TensorProto.STRING:
                np.save(npy, numpy_helper.to_array(t), allow_pickle=False)
            specs.append({"name": vi.name, "pb": str(pb) if use_pb else None, "npy": str(npy),
                          "dtype": DTYPE_NAME[t.data_type], "shape": list(t.dims)})
        req = {"id": rid, "case": case.name, "data_set": "test_data_set_0",
               "model": str(case / "model.onnx"), "inputs": specs,
               "outputs": [{"name": o.name,
                            "dtype": DTYPE_NAME.get(o.type.tensor_type.elem_type)}
                           for o in model.graph.output],
               "output_dir": str(out), "threads": None}
        reply = self.worker.send_raw(json.dumps(req))
        self.assertEqual(reply["id"], rid)
        return out, reply

    def assert_done(self, case, expected, use_pb=True):
        """`case` runs and writes output_0.pb equal to `expected`: (type, dims, values)."""
        out, reply = self.request(case, use_pb)
        self.assertEqual(reply["status"], "done", (reply, self.worker.log()[-2000:]))
        dtype, dims, values = read_tensor(out / "output_0.pb")
        self.assertEqual((dtype, dims), expected[:2])
        if dtype == "string":
            self.assertEqual(values, expected[2])
        else:
            np.testing.assert_array_equal(values, expected[2])

    def assert_refused(self, case, text):
        _, reply = self.request(case)
        self.assertEqual(reply["status"], "refused", reply)
        self.assertIn(text, reply["message"])
        self.assertNotIn("\n", reply["message"])
        return reply["message"]

    def test_hello(self):
        self.assertEqual(self.hello, {"protocol": 1, "runtime": "onnxruntime-web",
                                      "version": PINNED, "threads": False, "batches": True})

    def test_cases_of_testdata(self):
        """ONNX's and the spec's cases, their expected outputs the case's output_0.pb."""
        for name in ["test_gather_0", "test_gather_negative_indices", "test_gather_elements_1",
                     "test_gathernd_example_int32_batch_dim1", "test_scatternd_max",
                     "test_scatter_elements_with_duplicate_indices", "gather_string_opset13",
                     "scatter_elements_string_opset13", "gather_elements_float16_opset13",
                     "gather_elements_bool_opset13", "gather_scalar_index_rank0_output_opset13",
                     "test_tensorscatter"]:
            with self.subTest(case=name):
                case = case_dir(name)
                self.assert_done(case, read_tensor(case / "test_data_set_0" / "output_0.pb"))

    def test_refusals(self):
        self.assert_refused(case_dir("gather_grad_axis0_opset13"), "is not a registered")
        # onnxruntime-web has no bfloat16: it cannot even describe such a model's inputs.
        self.assert_refused(case_dir("gather_bfloat16_opset13"), "unsupported data type: 16")

    def test_int64_indices_are_not_read_as_int32(self):
        """microsoft/onnxruntime#16855 (WebGPU's Gather reads int64 indices' low 32 bits): on
        the wasm backend 2**32 + 1 is out of range for a dimension of 5, not index 1."""
        case = save_case(
            self.cases, "gather_int64_past_int32",
            [helper.make_node("Gather", ["data", "indices"], ["y"], axis=0)],
            [helper.make_tensor_value_info("data", TensorProto.FLOAT, [5]),
             helper.make_tensor_value_info("indices", TensorProto.INT64, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
            [numpy_helper.from_array(np.arange(10, 15, dtype=np.float32)),
             numpy_helper.from_array(np.array([2 ** 32 + 1], dtype=np.int64))])
        self.assert_refused(case, "idx=4294967297")

    def test_gather_nd_rank5_batch_dims2(self):
        """microsoft/onnxruntime#32731's model (WebGPU fails to compile GatherND for data of
        rank 5): float16 [1,1,4,4,8], int64 indices [1,1,8,2], batch_dims=2."""
        rng = np.random.default_rng(32731)
        data = rng.standard_normal((1, 1, 4, 4, 8)).astype(np.float16)
        indices = rng.integers(0, 4, (1, 1, 8, 2)).astype(np.int64)
        expected = np.stack([data[0, 0, i, j] for i, j in indices[0, 0]]).reshape(1, 1, 8, 8)
        case = save_case(
            self.cases, "gather_nd_rank5",
            [helper.make_node("GatherND", ["data", "indices"], ["y"], batch_dims=2)],
            [helper.make_tensor_value_info("data", TensorProto.FLOAT16, [1, 1, 4, 4, 8]),
             helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 1, 8, 2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 1, 8, 8])],
            [numpy_helper.from_array(data), numpy_helper.from_array(indices)])
        self.assert_done(case, ("float16", [1, 1, 8, 8], expected))

    def identity(self, name, tensor, out_type=None):
        dims = list(tensor.dims)
        return save_case(
            self.cases, name, [helper.make_node("Identity", ["x"], ["y"])],
            [helper.make_tensor_value_info("x", tensor.data_type, dims)],
            [helper.make_tensor_value_info("y", out_type or tensor.data_type, dims)], [tensor],
            opset=21, ir_version=10)

    def test_tensor_reader_typed_fields(self):
        """Inputs whose .pb holds the typed fields (float_data, int32_data, int64_data,
        double_data, uint64_data), not raw_data, read as onnx means them."""
        samples = {
            TensorProto.FLOAT: [1.5, -0.0, 3e38], TensorProto.DOUBLE: [1e300, -2.5],
            TensorProto.INT64: [-2 ** 63, 2 ** 63 - 1, -1], TensorProto.INT32: [-2 ** 31, 7],
            TensorProto.INT8: [-128, 127], TensorProto.UINT16: [65535, 0],
            TensorProto.BOOL: [True, False, True], TensorProto.UINT32: [2 ** 32 - 1, 3],
            TensorProto.UINT64: [2 ** 64 - 1, 5],
        }
        for data_type, values in samples.items():
            name = DTYPE_NAME[data_type]
            with self.subTest(dtype=name):
                tensor = helper.make_tensor("x", data_type, [len(values)], values, raw=False)
                self.assertFalse(tensor.HasField("raw_data"))
                expected = numpy_helper.to_array(tensor)
                self.assert_done(self.identity(f"typed_{name}", tensor),
                                 (name, [len(values)], expected))
        # float16's bits in int32_data
        bits = np.array([0x7BFF, 0x0001, 0xBC00], dtype=np.uint16)
        tensor = TensorProto(name="x", data_type=TensorProto.FLOAT16, dims=[3])
        tensor.int32_data.extend(int(b) for b in bits)
        self.assert_done(self.identity("typed_float16", tensor),
                         ("float16", [3], bits.view(np.float16)))

    def test_npy_when_there_is_no_pb(self):
        case = case_dir("test_gathernd_example_float32")
        self.assert_done(case, read_tensor(case / "test_data_set_0" / "output_0.pb"),
                         use_pb=False)

    def test_strings_that_are_not_utf8_are_refused(self):
        tensor = TensorProto(name="x", data_type=TensorProto.STRING, dims=[2])
        tensor.string_data.extend([b"ok", b"\xff\xfe"])
        message = self.assert_refused(self.identity("string_not_utf8", tensor), "not UTF-8")
        self.assertFalse(message.startswith("adapter:"), message)

    def test_ir_version_too_new_is_lowered(self):
        case = self.cases / "gather_ir99"
        shutil.copytree(case_dir("test_gather_0"), case)
        model = onnx.load(str(case / "model.onnx"))
        model.ir_version = 99
        onnx.save(model, str(case / "model.onnx"))
        self.assert_done(case, read_tensor(case / "test_data_set_0" / "output_0.pb"))
        self.assertIn("IR version 99 lowered to", self.worker.log())

    def test_bad_request_and_stdout(self):
        reply = self.worker.send_raw("not json")
        self.assertEqual((reply["id"], reply["status"]), (None, "refused"))
        self.assertTrue(reply["message"].startswith("adapter: bad request"), reply)
        self.assertTrue(all(isinstance(json.loads(line), dict) for line in self.worker.lines))


# A stand-in for onnxruntime-web that prints to stdout and whose sessions trap as WebAssembly
# code does (a RuntimeError) or raise an ordinary error, by the model file's name.
FAKE_PACKAGE = """
console.log('noise from console.log');
process.stdout.write('noise from process.stdout\\n');
class Tensor { constructor(type, data, dims) { Object.assign(this, {type, data, dims}); } }
module.exports = {
  env: {versions: {web: '0.0-fake'}, wasm: {}},
  Tensor,
  InferenceSession: {
    async create(model) {
      const kind = require('path').basename(String(model), '.onnx');
      return {
        outputNames: ['y'],
        async release() {},
        async run(feeds) {
          console.log('noise from run');
          if (kind === 'trap') throw new WebAssembly.RuntimeError('memory access out of bounds');
          if (kind === 'refuse') throw new Error('index 7 out of\\n bounds');
          return {y: new Tensor('float32', new Float32Array([1.5, -2]), [2])};
        },
      };
    },
  },
};
"""


@unittest.skipIf(shutil.which("node") is None, "node not found (apt-get install nodejs npm)")
class FakePackageTest(unittest.TestCase):
    """The worker's own behaviour, with a stand-in package: noise on stdout goes to stderr, a
    runtime error is a one-line refusal, and a trap ends the worker without a reply."""

    def test_noise_refusal_and_trap(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            package = root / "node_modules" / "onnxruntime-web"
            package.mkdir(parents=True)
            (package / "package.json").write_text('{"name": "onnxruntime-web", "main": "index.js"}')
            (package / "index.js").write_text(FAKE_PACKAGE)
            for kind in ("ok", "refuse", "trap"):
                (root / f"{kind}.onnx").write_bytes(b"")
            script = shutil.copy(SCRIPT, root)
            worker = Worker(script, "--module-dir", tmp, cwd=tmp)
            try:
                self.assertEqual(worker.line(STARTUP_TIMEOUT_S)["version"], "0.0-fake")

                def request(rid, kind):
                    out = root / str(rid)
                    out.mkdir()
                    return out, worker.send_raw(json.dumps({
                        "id": rid, "model": str(root / f"{kind}.onnx"), "inputs": [],
                        "outputs": [{"name": "y", "dtype": "float"}], "output_dir": str(out),
                        "threads": None}))

                out, reply = request(1, "ok")
                self.assertEqual(reply, {"id": 1, "status": "done"})
                self.assertEqual(read_tensor(out / "output_0.pb")[:2], ("float", [2]))
                np.testing.assert_array_equal(read_tensor(out / "output_0.pb")[2], [1.5, -2])
                _, reply = request(2, "refuse")
                self.assertEqual(reply, {"id": 2, "status": "refused",
                                         "message": "Error: index 7 out of bounds"})
                with self.assertRaisesRegex(AssertionError, "worker ended"):
                    request(3, "trap")
                status = worker.proc.wait(timeout=30)
                log = worker.log()
            finally:
                worker.close()
        self.assertEqual(status, 70)
        self.assertIn("the WebAssembly module trapped on request 3", log)
        self.assertIn("noise from console.log", log)
        self.assertIn("noise from process.stdout", log)
        self.assertIn("noise from run", log)
        self.assertEqual(len(worker.lines), 3)  # the hello and two replies, nothing else


@unittest.skipIf(shutil.which("node") is None, "node not found (apt-get install nodejs npm)")
class MissingPackageTest(unittest.TestCase):
    def test_error_hello_names_the_package_and_how_to_install_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = shutil.copy(SCRIPT, tmp)
            env = {k: v for k, v in os.environ.items()
                   if k not in ("NODE_PATH", "ONNX_IDX_CHECK_NODE_MODULES")}
            worker = Worker(script, "--module-dir", tmp, env=env, cwd=tmp)
            try:
                hello = worker.line(STARTUP_TIMEOUT_S)
            finally:
                status = worker.close()
        self.assertEqual(hello["protocol"], 1)
        self.assertIn("'onnxruntime-web'", hello["error"])
        self.assertIn(f"npm install onnxruntime-web@{PINNED}", hello["error"])
        self.assertIn(tmp, hello["error"])
        self.assertNotEqual(status, 0)


if __name__ == "__main__":
    unittest.main()
