"""onnx-idx-check's adapter for tract (the `tract` package on PyPI, tract's own Python bindings):
a worker of the runtime protocol (version 1).

Needs the tract package (pinned by onnx-idx-check: tract==0.23.9) and onnx_idx_check_worker.py
beside this file. No options; tract's thread count is not settable from its bindings
(`threads: false` in the hello).

    python3 tract.py

The model goes the way tract's README shows: `tract.onnx().load(path).into_model()
.into_runnable()`, the inputs as numpy arrays in the model's input order. The bindings have no
string tensors (refused here with that message), and tract itself knows no bfloat16, float8,
complex or sub-byte types (it refuses such models when loading them). RUST_BACKTRACE is set to 0
before tract is imported: its errors would otherwise carry dozens of lines of backtrace.
"""

import os
import sys

import onnx_idx_check_worker as worker


class Runtime:
    name = "tract"
    threads = False
    # Rust: an index out of range panics (and aborts the worker) instead of reading past a buffer.
    memory_safe = True
    options = {}

    def __init__(self, options):
        os.environ["RUST_BACKTRACE"] = "0"
        os.environ["RUST_LIB_BACKTRACE"] = "0"
        import tract

        self.tract = tract
        self.onnx = tract.onnx()

    def version(self):
        return self.tract.version()

    def load(self, model, threads):
        model = self.onnx.load(model)
        names = [model.input_name(i) for i in range(model.input_count())]
        return model.into_model().into_runnable(), names

    def run(self, loaded, inputs, outputs, threads):
        runnable, names = loaded
        feeds = {t.name: t for t in inputs}
        if sorted(feeds) != sorted(names):
            raise ValueError(f"inputs {sorted(feeds)} for the model's inputs {names}")
        for t in inputs:
            if t.dtype == "string":
                raise TypeError("tract's Python bindings take no string tensors")
        return [out.to_numpy() for out in runnable.run([feeds[n].array for n in names])]


if __name__ == "__main__":
    sys.exit(worker.main(Runtime))
