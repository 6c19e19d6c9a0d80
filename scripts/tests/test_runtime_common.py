"""scripts/runtime_common.py with a fake runtime: a refusal, a crash and a hang each cost only
their case, and the sidecar tells them apart (standard library only; the one case whose outputs
are written needs onnx and numpy, and is skipped without them)."""

import json
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPTS = pathlib.Path(__file__).resolve().parent.parent

FAKE = textwrap.dedent(
    """
    import os, pathlib, sys, time
    sys.path.insert(0, {scripts!r})
    import runtime_common

    class Model:
        input_names = []
        output_names = ["y"]
        def run(self, feeds):
            import numpy
            return [numpy.array([1.0, 2.0], dtype=numpy.float32)]

    class Fake:
        name = "fake"
        def version(self):
            return "0.0"
        def load(self, path):
            kind = pathlib.Path(path).parent.name
            if kind.startswith("refuse"):
                raise RuntimeError("unsupported\\n  operator")
            if kind.startswith("crash"):
                os.abort()
            if kind.startswith("hang"):
                time.sleep(120)
            if kind.startswith("forkcrash"):
                # a helper that outlives the worker, holding its pipe open (as OpenVINO's do)
                if os.fork() == 0:
                    time.sleep(120)
                    os._exit(0)
                os.abort()
            print("noise on stdout")  # must not garble the protocol
            if kind.startswith("echo"):
                return Echo()
            return Model()

    class Echo:
        input_names = ["x"]
        output_names = ["y"]
        def run(self, feeds):
            return [feeds["x"]]

    sys.exit(runtime_common.main(Fake, "fake_outputs", __file__))
    """
)

try:
    import numpy  # noqa: F401
    import onnx  # noqa: F401

    HAVE_ONNX = True
except ImportError:
    HAVE_ONNX = False


class RuntimeCommonTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        self.script = self.root / "fake_outputs.py"
        self.script.write_text(FAKE.format(scripts=str(SCRIPTS)))
        self.src = self.root / "src"

    def tearDown(self):
        self.tmp.cleanup()

    def make_case(self, name):
        case = self.src / name
        (case / "test_data_set_0").mkdir(parents=True)
        (case / "model.onnx").write_bytes(b"")

    def run_script(self, *extra):
        dst = self.root / "dst"
        proc = subprocess.run(
            [sys.executable, str(self.script), str(self.src), str(dst), *extra],
            capture_output=True,
            text=True,
            timeout=300,
        )
        return proc, dst

    def test_refusal_crash_and_hang_each_cost_one_case(self):
        for name in ("crash_a", "forkcrash_a", "hang_b", "refuse_c"):
            self.make_case(name)
        proc, dst = self.run_script("--timeout", "2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        sidecar = json.loads((dst / "_runtime.json").read_text())
        self.assertEqual(sidecar["runtime"], {"name": "fake", "version": "0.0"})
        self.assertEqual(sidecar["timeout_s"], 2.0)
        cases = sidecar["cases"]
        self.assertEqual(cases["crash_a"]["status"], "crashed")
        self.assertIn("SIGABRT", cases["crash_a"]["message"])
        self.assertEqual(cases["forkcrash_a"]["status"], "crashed")
        self.assertEqual(cases["hang_b"]["status"], "timeout")
        self.assertEqual(
            cases["refuse_c"], {"status": "refused", "message": "unsupported operator"}
        )
        names = ("crash_", "forkcrash_", "hang_", "refuse_")
        lines = [line for line in proc.stderr.splitlines() if line.startswith(names)]
        self.assertEqual(
            lines,
            [
                "crash_a: crashed: worker killed by signal 6 (SIGABRT)",
                "forkcrash_a: crashed: worker killed by signal 6 (SIGABRT)",
                "hang_b: timeout: no result after 2 s; worker stopped",
                "refuse_c: model refused: unsupported operator",
            ],
        )
        self.assertIn(
            "fake_outputs: 4 cases, fake 0.0: 0 data sets written to", proc.stderr.splitlines()[-1]
        )
        self.assertEqual(list(dst.rglob("output_*.pb")), [])

    def test_outputs_written(self):
        if not HAVE_ONNX:
            self.skipTest("onnx and numpy not installed: the case that writes outputs is not run")
        self.make_case("ok_a")
        stale = self.root / "dst" / "ok_a" / "test_data_set_0"
        stale.mkdir(parents=True)
        (stale / "output_1.pb").write_bytes(b"stale")
        proc, dst = self.run_script()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        import onnx
        from onnx import numpy_helper

        written = sorted(p.name for p in stale.iterdir())
        self.assertEqual(written, ["output_0.pb"])
        tensor = onnx.load_tensor(str(stale / "output_0.pb"))
        self.assertEqual(tensor.name, "y")
        self.assertEqual(numpy_helper.to_array(tensor).tolist(), [1.0, 2.0])
        sidecar = json.loads((dst / "_runtime.json").read_text())
        self.assertEqual(sidecar["cases"]["ok_a"]["status"], "ok")

    def test_external_data_read_beside_the_input(self):
        if not HAVE_ONNX:
            self.skipTest("onnx and numpy not installed: the case that writes outputs is not run")
        import numpy as np
        import onnx
        from onnx import external_data_helper, numpy_helper

        self.make_case("echo_a")
        ds = self.src / "echo_a" / "test_data_set_0"
        tensor = numpy_helper.from_array(np.array([3.0, 4.0], dtype=np.float32), "x")
        external_data_helper.set_external_data(tensor, "input_0.bin")
        (ds / "input_0.bin").write_bytes(tensor.raw_data)
        tensor.ClearField("raw_data")
        tensor.data_location = onnx.TensorProto.EXTERNAL
        onnx.save_tensor(tensor, str(ds / "input_0.pb"))
        # run from elsewhere: the .bin is found beside the .pb, not in the working directory
        proc, dst = self.run_script()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = onnx.load_tensor(str(dst / "echo_a" / "test_data_set_0" / "output_0.pb"))
        self.assertEqual(numpy_helper.to_array(out).tolist(), [3.0, 4.0])

    def test_usage_error_exits_2(self):
        proc, _ = self.run_script()  # src does not exist
        self.assertEqual(proc.returncode, 2)
        self.assertIn("not a directory", proc.stderr)


if __name__ == "__main__":
    unittest.main()
