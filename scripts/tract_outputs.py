#!/usr/bin/env python3
"""Run every ONNX test case under SRC with tract (the `tract` package on PyPI, tract's own Python
bindings) and write its outputs for `--actual`.

Usage: python3 scripts/tract_outputs.py SRC DST [--timeout SECONDS]

The same contract as scripts/ort_outputs.py (see its docstring and scripts/runtime_common.py):
DST/<case>/test_data_set_N/output_K.pb for every case under SRC, no output file and one line on
stderr for what tract refuses, a crash or a hang costs only its case, DST/_runtime.json says
which, and the exit status is 0 whenever the script ran.

The model goes the way tract's README shows: `tract.onnx().load(path).into_model()
.into_runnable()`, the inputs as numpy arrays in the model's input order. The bindings have no
string or bfloat16 tensors: such cases are refused by the bindings, not by tract's kernels.

Needs the packages of scripts/requirements-tract.txt.
"""

import os
import sys

import runtime_common


class Tract:
    name = "tract"

    def __init__(self):
        # tract's errors and panics carry a backtrace when RUST_BACKTRACE asks for one: dozens
        # of lines per refused case on stderr, where one line each is the contract.
        os.environ["RUST_BACKTRACE"] = "0"
        os.environ["RUST_LIB_BACKTRACE"] = "0"
        import tract

        self.tract = tract
        self.onnx = tract.onnx()

    def version(self):
        return self.tract.version()

    def load(self, path):
        model = self.onnx.load(path)
        names = [model.input_name(i) for i in range(model.input_count())]
        outputs = [model.output_name(i) for i in range(model.output_count())]
        return Runnable(model.into_model().into_runnable(), names, outputs)


class Runnable:
    def __init__(self, runnable, input_names, output_names):
        self.runnable = runnable
        self.input_names = input_names
        self.output_names = output_names

    def run(self, feeds):
        if len(feeds) != len(self.input_names):
            raise ValueError(f"{len(feeds)} inputs for {len(self.input_names)} model inputs")
        outs = self.runnable.run([feeds[name] for name in self.input_names])
        return [t.to_numpy() for t in outs]


if __name__ == "__main__":
    sys.exit(runtime_common.main(Tract, "tract_outputs", __file__))
