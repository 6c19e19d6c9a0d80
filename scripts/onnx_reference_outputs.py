#!/usr/bin/env python3
"""Run every ONNX test case under SRC with ONNX's reference evaluator
(`onnx.reference.ReferenceEvaluator`) and write its outputs for `--actual`.

Usage: python3 scripts/onnx_reference_outputs.py SRC DST [--timeout SECONDS]

The same contract as scripts/ort_outputs.py (see its docstring and scripts/runtime_common.py):
DST/<case>/test_data_set_N/output_K.pb for every case under SRC, no output file and one line on
stderr for what the evaluator refuses, a crash or a hang costs only its case, DST/_runtime.json
says which, and the exit status is 0 whenever the script ran.

Needs the packages of scripts/requirements-onnx-reference.txt.
"""

import sys

import runtime_common


class OnnxReference:
    name = "onnx-reference"

    def __init__(self):
        import onnx
        from onnx.reference import ReferenceEvaluator

        self.onnx = onnx
        self.evaluator = ReferenceEvaluator

    def version(self):
        return self.onnx.__version__

    def load(self, path):
        return Evaluator(self.evaluator(path))


class Evaluator:
    def __init__(self, sess):
        self.sess = sess
        self.input_names = list(sess.input_names)
        self.output_names = list(sess.output_names)

    def run(self, feeds):
        return self.sess.run(None, feeds)


if __name__ == "__main__":
    label = "ONNX's reference evaluator"
    sys.exit(runtime_common.main(OnnxReference, "onnx_reference_outputs", __file__, label))
