#!/usr/bin/env python3
"""Run every ONNX test case under SRC with onnxruntime and write its outputs for `--actual`.

Usage: python3 scripts/ort_outputs.py SRC DST [--timeout SECONDS]

A case is a directory holding model.onnx, as onnx-idx-check finds them. For each of its
test_data_set_N folders the inputs input_K.pb are fed, in order, to the model's inputs, and the
outputs are written to DST/<case path relative to SRC>/test_data_set_N/output_K.pb, the tree
`onnx-idx-check run SRC --actual DST` reads. A model or data set that onnxruntime refuses gets no
output file; the refusal is printed on stderr and the gate reports the case (an error, or a pass
where the spec itself requires an error). Each case runs in a worker process with a time limit
(--timeout, 60 s by default): a case that crashes or hangs onnxruntime gets no output file either,
and DST/_runtime.json records per case whether it ran, was refused, crashed or timed out (see
scripts/runtime_common.py). The exit status is 0 whenever the script ran, whatever onnxruntime
refused, 1 when onnxruntime cannot be imported, and 2 on a usage error.

Needs the packages of scripts/requirements-ort.txt.
"""

import sys

import runtime_common


class Onnxruntime:
    name = "onnxruntime"

    def __init__(self):
        import onnxruntime

        self.ort = onnxruntime
        # Warnings from graph optimisation are not refusals; keep stderr for those.
        onnxruntime.set_default_logger_severity(3)

    def version(self):
        return self.ort.__version__

    def load(self, path):
        return Session(self.ort.InferenceSession(path, providers=["CPUExecutionProvider"]))


class Session:
    def __init__(self, sess):
        self.sess = sess
        self.input_names = [i.name for i in sess.get_inputs()]
        self.output_names = [o.name for o in sess.get_outputs()]

    def run(self, feeds):
        return self.sess.run(None, feeds)


if __name__ == "__main__":
    sys.exit(runtime_common.main(Onnxruntime, "ort_outputs", __file__))
