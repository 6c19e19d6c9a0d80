"""The bundled adapters of the runtimes that compile a model before running it (tvm.py, iree.py,
tinygrad.py in crates/checker/src/runtime/adapters/) speaking the runtime protocol, driven the way
test_adapters.py drives the others (its RealAdapter: hello, a few testdata/ cases whose outputs
must equal the case's, refusals with the runtime's own message, element types through an
Identity model). Each class is skipped, with the reason, when its runtime's package is not
importable by this Python (tinygrad's also when clang, which its CPU device compiles with, is
not on PATH). The expected refusals are what the pinned versions do (scripts/requirements-
{tvm,iree,tinygrad}.txt), found by running them."""

import importlib.util
import os
import pathlib
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_adapters import (  # noqa: E402
    COMMON_CASES,
    NUMERIC,
    Adapter,
    RealAdapter,
    copy_adapter,
)

class TvmAdapterTest(RealAdapter, unittest.TestCase):
    script, module, runtime, hello_threads = "tvm.py", "tvm", "tvm", False
    # testdata/'s models write an INT attribute of 0 (`axis`) out: TVM's reader refuses one
    # whose `i` is left out, as proto3 writers leave it ("Cannot parse attribute"). Each of
    # COMMON_CASES runs.
    cases = COMMON_CASES
    refused = {
        "test_tensorscatter": "not supported for frontend ONNX: TensorScatter",
    }
    identity_done = NUMERIC + ["int64", "bfloat16", "float8e4m3fn", "float8e4m3fnuz",
                               "float8e5m2", "float8e5m2fnuz", "float8e8m0"]
    identity_refused = ["complex64", "string", "int4", "uint2", "float6e2m3"]


class IreeAdapterTest(RealAdapter, unittest.TestCase):
    script, module, runtime, hello_threads = "iree.py", "iree.runtime", "iree", False
    cases = COMMON_CASES + ["gather_bfloat16_opset13"]
    refused = {
        # torch-mlir's ONNX conversion has no ScatterElements with reduction max.
        "test_scatter_elements_with_reduction_max": "failed to legalize operation 'torch.operator'",
        "gather_string_opset13": "conversion of dtype '!torch.str'",
    }
    # Each case compiles for seconds: a few types, not all of them.
    identity_done = ["float", "int64", "bool", "float16", "uint64", "complex64", "bfloat16",
                     "float8e4m3fn"]
    identity_refused = ["string", "int4", "float8e8m0", "float6e2m3"]

    @classmethod
    def setUpClass(cls):
        if importlib.util.find_spec("iree") is None:
            raise unittest.SkipTest(
                f"the iree packages (iree-base-compiler, iree-base-runtime) are not importable "
                f"by {sys.executable}: the {cls.script} adapter is not run")
        super().setUpClass()


class TinygradAdapterTest(RealAdapter, unittest.TestCase):
    script, module, runtime, hello_threads = "tinygrad.py", "tinygrad", "tinygrad", False
    # As for TVM: tinygrad's reader fails (KeyError: 'i') on an INT attribute whose `i` is left
    # out, which testdata/'s models no longer do.
    cases = COMMON_CASES + ["test_tensorscatter", "test_tensorscatter_circular"]
    refused = {
        "gather_grad_axis1_double_opset13": "op='GatherGrad' is not supported",
    }
    identity_done = NUMERIC + ["int64", "bfloat16"]
    identity_refused = ["complex64", "string", "float8e4m3fn", "int4", "float6e2m3"]

    @classmethod
    def setUpClass(cls):
        if importlib.util.find_spec(cls.module) is not None and shutil.which("clang") is None:
            raise unittest.SkipTest(
                "clang is not on PATH (Debian: apt-get install clang): tinygrad's CPU device "
                f"cannot compile, the {cls.script} adapter is not run")
        super().setUpClass()

    def test_says_when_clang_is_missing(self):
        """With a PATH that has no clang, the worker does not start and its error hello names
        clang and how to install it."""
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            (root / "adapter").mkdir()
            (root / "bin").mkdir()
            python = root / "bin" / "python3"
            python.symlink_to(sys.executable)
            env = dict(os.environ, PATH=str(root / "bin"))
            env.pop("CC", None)
            adapter = Adapter(copy_adapter(root / "adapter", self.script), env=env)
            try:
                hello = adapter.hello()
            finally:
                adapter.close()
                adapter.stderr.close()
        self.assertEqual(hello["protocol"], 1)
        self.assertIn("clang, which is not on PATH", hello["error"])
        self.assertIn("apt-get install clang", hello["error"])


if __name__ == "__main__":
    unittest.main()
