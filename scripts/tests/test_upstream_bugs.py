"""scripts/upstream_bugs.py: the same bytes on every run, and --check catching a changed, a
missing and a foreign file (needs onnx and numpy; skipped without them)."""

import contextlib
import io
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

try:
    import upstream_bugs
except ImportError:  # onnx or numpy missing
    upstream_bugs = None


@unittest.skipIf(upstream_bugs is None, "needs onnx and numpy")
class UpstreamBugsTest(unittest.TestCase):
    def run_main(self, *args):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = upstream_bugs.main(list(args))
        return code, err.getvalue()

    def test_writes_the_same_bytes_twice_and_check_sees_every_change(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "cases"
            self.assertEqual(self.run_main("--out", str(out))[0], 0)
            first = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
            self.assertEqual(self.run_main("--out", str(out))[0], 0)
            self.assertEqual(first, {p: p.read_bytes() for p in out.rglob("*") if p.is_file()})
            self.assertEqual(self.run_main("--check", "--out", str(out))[0], 0)

            output = out / "tvm-19531-gather-negative-input/test_data_set_0/output_0.pb"
            output.write_bytes(output.read_bytes()[:-1] + b"\x00")
            (out / "tvm-19531-gather-negative-const/model.onnx").unlink()
            (out / "stray.txt").write_text("x")
            code, err = self.run_main("--check", "--out", str(out))
            self.assertEqual(code, 1)
            self.assertIn("differs: tvm-19531-gather-negative-input/test_data_set_0/output_0.pb", err)
            self.assertIn("missing: tvm-19531-gather-negative-const/model.onnx", err)
            self.assertIn("not written by this script: stray.txt", err)

            # Writing again repairs all three.
            self.assertEqual(self.run_main("--out", str(out))[0], 0)
            self.assertEqual(self.run_main("--check", "--out", str(out))[0], 0)

    def test_the_constant_form_has_the_indices_as_an_initializer(self):
        import onnx

        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp)
            self.run_main("--out", str(out))
            const = onnx.load(str(out / "tinygrad-14185-gather-2d-const/model.onnx"))
            given = onnx.load(str(out / "tinygrad-14185-gather-2d-input/model.onnx"))
            self.assertEqual([t.name for t in const.graph.initializer], ["indices"])
            self.assertEqual([i.name for i in const.graph.input], ["data"])
            self.assertEqual([i.name for i in given.graph.input], ["data", "indices"])
            self.assertTrue((out / "tinygrad-14185-gather-2d-input/test_data_set_0/input_1.pb").is_file())
            self.assertFalse((out / "tinygrad-14185-gather-2d-const/test_data_set_0/input_1.pb").exists())


if __name__ == "__main__":
    unittest.main()
