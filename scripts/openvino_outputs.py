#!/usr/bin/env python3
"""Run every ONNX test case under SRC with OpenVINO (CPU plugin) and write its outputs for
`--actual`.

Usage: python3 scripts/openvino_outputs.py SRC DST [--timeout SECONDS]

The same contract as scripts/ort_outputs.py (see its docstring and scripts/runtime_common.py):
DST/<case>/test_data_set_N/output_K.pb for every case under SRC, no output file and one line on
stderr for what OpenVINO refuses, a crash or a hang costs only its case, DST/_runtime.json says
which, and the exit status is 0 whenever the script ran.

The model is read with `Core.read_model` (OpenVINO's ONNX frontend) and compiled for "CPU" with
the plugin's defaults except `INFERENCE_PRECISION_HINT` f32, so that a machine whose CPU has
bfloat16 or float16 arithmetic does not run float models at lower precision (which would be a
setting, not a bug); float64 stays whatever the plugin makes of it.

Needs the packages of scripts/requirements-openvino.txt.
"""

import sys

import runtime_common


class OpenVINO:
    name = "openvino"

    def __init__(self):
        import openvino

        self.ov = openvino
        self.core = openvino.Core()

    def version(self):
        return self.ov.get_version()

    def load(self, path):
        model = self.core.read_model(path)
        compiled = self.core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        return Compiled(compiled)


class Compiled:
    def __init__(self, compiled):
        self.compiled = compiled
        self.input_names = [i.get_any_name() for i in compiled.inputs]
        self.output_names = [o.get_any_name() for o in compiled.outputs]

    def run(self, feeds):
        request = self.compiled.create_infer_request()
        # share_outputs=False: the arrays are copies, not views of the request's buffers.
        results = request.infer(feeds, share_inputs=False, share_outputs=False)
        return [results[out] for out in self.compiled.outputs]


if __name__ == "__main__":
    sys.exit(runtime_common.main(OpenVINO, "openvino_outputs", __file__, "OpenVINO"))
