"""onnx-idx-check's adapter for tinygrad: a worker of the runtime protocol (version 1).

Needs the tinygrad package (pinned by onnx-idx-check: tinygrad==0.14.0) and
onnx_idx_check_worker.py beside this file; on its CPU device (the default), the `clang` program
(Debian's clang package), with which tinygrad compiles its kernels: the worker says so and does
not start when clang is not on PATH. tinygrad reads ONNX files with its own parser: the onnx
package is not needed. No thread count (`threads: false` in the hello).

    python3 tinygrad.py [--device CPU]

`--device` is tinygrad's `DEV` (`CPU`, the default, compiles with clang; `CPU:LLVM` with the LLVM
library instead, no clang needed); it is set in the environment before tinygrad is imported, as
tinygrad reads it then. The model goes the way tinygrad's ONNX runner is documented:
`tinygrad.nn.onnx.OnnxRunner(path)`, called with a dict of the inputs by name, each a numpy array
or, for bfloat16, a `Tensor` bitcast from the 16 bits; its outputs (tinygrad `Tensor`s) are
realized with `.numpy()` (bfloat16 ones bitcast back to their bits). Kernels compiled once are
kept in tinygrad's own disk cache. tinygrad has no string, float8 (as ONNX spells them), float6
or sub-byte tensors from numpy: such inputs are refused with that message. Compiled kernels do
not check indices (`memory_safe: false`).
"""

import os
import shutil
import sys

import onnx_idx_check_worker as worker


class Runtime:
    name = "tinygrad"
    threads = False
    options = {"device": "CPU"}

    def __init__(self, options):
        device = options["device"]
        # DEV=CPU picks the clang renderer first; CPU:LLVM and the others compile without it.
        if device.split(":")[0].upper() == "CPU" and device.upper() in ("CPU", "CPU:CLANG"):
            cc = os.environ.get("CC") or "clang"
            if shutil.which(cc) is None:
                raise RuntimeError(
                    f"tinygrad's {device} device compiles its kernels with {cc}, which is not on "
                    f"PATH (Debian: apt-get install clang; or --device CPU:LLVM)")
        os.environ["DEV"] = device
        import numpy
        import tinygrad
        from tinygrad import Tensor, dtypes
        from tinygrad.nn.onnx import OnnxRunner

        self.np, self.tinygrad, self.Tensor, self.dtypes = numpy, tinygrad, Tensor, dtypes
        self.runner = OnnxRunner

    def version(self):
        from importlib import metadata

        return metadata.version("tinygrad")

    def load(self, model, threads):
        # No max_ir_version hook: tinygrad's own parser does not look at the IR version.
        return self.runner(model)

    def value(self, t):
        if t.dtype == "bfloat16":
            return self.Tensor(t.array).bitcast(self.dtypes.bfloat16)
        if t.dtype == "string" or t.dtype in worker.BITS:
            raise TypeError(f"tinygrad takes no {t.dtype} tensors from numpy")
        return t.array

    def fetch(self, value):
        if not isinstance(value, self.Tensor):
            return self.np.asarray(value)
        if value.dtype == self.dtypes.bfloat16:
            return worker.Bits("bfloat16", value.shape, value.bitcast(self.dtypes.uint16).numpy())
        return value.numpy()

    def run(self, runner, inputs, outputs, threads):
        results = runner({t.name: self.value(t) for t in inputs})
        names = list(runner.graph_outputs)
        return [self.fetch(results[n]) for n in names]


if __name__ == "__main__":
    sys.exit(worker.main(Runtime))
