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
setting, not a bug); float64 stays whatever the plugin makes of it. bfloat16 inputs and outputs
cross the Python API as float32 (converted inside the graph, exactly), since the API itself
hands bfloat16 over as float16.

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
        # "2026.4.1-22982-e213a147257-releases/2026/4": the release, without the build
        return self.ov.get_version().split("-")[0]

    def load(self, path):
        ov = self.ov
        model = self.core.read_model(path)
        # numpy has no bfloat16, and OpenVINO's Python API hands a bfloat16 tensor over as
        # float16 values (losing every value float16 cannot hold: above 65504, subnormals).
        # So bfloat16 inputs and outputs cross the API as float32, converted inside the graph,
        # which is exact both ways, and the kernel under test still runs on bfloat16.
        ppp = ov.preprocess.PrePostProcessor(model)
        bf16_in = []
        for k, port in enumerate(model.inputs):
            if port.get_element_type() == ov.Type.bf16:
                ppp.input(k).tensor().set_element_type(ov.Type.f32)
                bf16_in.append(k)
        bf16_out = []
        for k, port in enumerate(model.outputs):
            if port.get_element_type() == ov.Type.bf16:
                ppp.output(k).tensor().set_element_type(ov.Type.f32)
                bf16_out.append(k)
        if bf16_in or bf16_out:
            model = ppp.build()
        compiled = self.core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        return Compiled(compiled, bf16_in, bf16_out)


class Compiled:
    def __init__(self, compiled, bf16_in, bf16_out):
        self.compiled = compiled
        self.bf16_in = set(bf16_in)
        self.bf16_out = set(bf16_out)
        self.input_names = [i.get_any_name() for i in compiled.inputs]
        self.output_names = [o.get_any_name() for o in compiled.outputs]

    def run(self, feeds):
        import ml_dtypes
        import numpy as np

        feeds = {
            name: (value.astype(np.float32) if k in self.bf16_in else value)
            for k, (name, value) in enumerate(feeds.items())
        }
        request = self.compiled.create_infer_request()
        # share_outputs=False: the arrays are copies, not views of the request's buffers.
        results = request.infer(feeds, share_inputs=False, share_outputs=False)
        outs = [results[out] for out in self.compiled.outputs]
        return [
            (out.astype(ml_dtypes.bfloat16) if k in self.bf16_out else out)
            for k, out in enumerate(outs)
        ]


if __name__ == "__main__":
    sys.exit(runtime_common.main(OpenVINO, "openvino_outputs", __file__, "OpenVINO"))
