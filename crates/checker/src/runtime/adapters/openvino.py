"""onnx-idx-check's adapter for OpenVINO: a worker of the runtime protocol (version 1).

Needs the openvino package (pinned by onnx-idx-check: openvino==2026.4.1) and
onnx_idx_check_worker.py beside this file.

    python3 openvino.py [--device CPU] [--threads N] [--precision f32|default]

The model is read with `Core.read_model` (OpenVINO's ONNX frontend, or its IR frontend for an
IR case's `model.xml`, which finds `model.bin` beside it) and compiled for the device
with `INFERENCE_PRECISION_HINT` f32 (`--precision f32`, the default), so that a CPU with bfloat16
or float16 arithmetic does not run float models at lower precision (a setting, not a bug), or
with no precision hint at all (`--precision default`: the device's own, bf16 or f16 on CPUs that
have it, which a hunt also runs its cases in, for the other kernels it picks), and
`INFERENCE_NUM_THREADS` from the request, else `--threads`, else the plugin's default. Inputs are matched by name and else by
position (an IR v10 port may carry no tensor name), outputs by name and else by position. Tensors of the types numpy lacks cross the API as their bits: the
Python API's `Tensor.data` of a bf16 tensor is a float16 *view* of the same 16 bits (read back
with `.view(uint16)`, exact), f8 tensors are uint8 views, and i4/u4/u2/f4e2m1 tensors hold the
packed bytes, low bits first, as ONNX's raw_data. OpenVINO has no float8 fnuz, int2 or float6
element types. Strings go in and come out as bytes (`Tensor.bytes_data`, which drops a string's
trailing zero bytes on the way out).
"""

import sys

import onnx_idx_check_worker as worker

# ONNX type -> OpenVINO element type name, for the types numpy lacks.
OV_TYPES = {
    "bfloat16": "bf16", "float8e4m3fn": "f8e4m3", "float8e5m2": "f8e5m2",
    "float8e8m0": "f8e8m0", "int4": "i4", "uint4": "u4", "uint2": "u2", "float4e2m1": "f4e2m1",
}
ONNX_TYPES = {v: k for k, v in OV_TYPES.items()}


class Runtime:
    name = "openvino"
    threads = True
    options = {"device": "CPU", "threads": None, "precision": "f32"}

    def __init__(self, options):
        import numpy
        import openvino

        self.np, self.ov = numpy, openvino
        self.core = openvino.Core()
        self.device = options["device"]
        if options["precision"] not in ("f32", "default"):
            raise ValueError(f"--precision {options['precision']}: f32 or default")
        self.precision = options["precision"]

    def version(self):
        # "2026.4.1-22982-e213a147257-releases/2026/4": the release, without the build
        return self.ov.get_version().split("-")[0]

    def load(self, model, threads):
        config = {"INFERENCE_PRECISION_HINT": "f32"} if self.precision == "f32" else {}
        if threads is not None:
            config["INFERENCE_NUM_THREADS"] = threads
        # No max_ir_version hook: OpenVINO 2026.4 reads models of any IR version.
        return self.core.compile_model(self.core.read_model(model), self.device, config)

    def tensor(self, t):
        ov, np = self.ov, self.np
        if t.dtype == "string":
            value = ov.Tensor(ov.Type.string, ov.Shape(list(t.shape)))
            value.bytes_data = list(t.array.reshape(-1))
            return value
        if t.dtype in worker.BITS and t.dtype not in OV_TYPES:
            raise TypeError(f"OpenVINO has no {t.dtype} element type")
        if t.dtype in OV_TYPES:
            et = getattr(ov.Type, OV_TYPES[t.dtype])
        else:
            et = ov.Type(t.array.dtype)
        # Made with its shape, then filled: a tensor made from a rank-0 array has shape [1].
        value = ov.Tensor(et, ov.Shape(list(t.shape)))
        raw = t.raw()  # the bits, packed for the sub-byte types
        view = value.data.reshape(-1).view(np.uint8)
        if view.size != len(raw):
            raise worker.AdapterError(
                f"{t.dtype} input {t.name!r}: {len(raw)} bytes, OpenVINO holds {view.size}")
        view[:] = np.frombuffer(raw, dtype=np.uint8)
        return value

    def fetch(self, value):
        np = self.np
        et = value.element_type.get_type_name()
        shape = tuple(value.shape)
        if et == "string":
            data = np.asarray(value.bytes_data).reshape(-1)
            strings = np.empty(data.size, dtype=object)
            strings[:] = [bytes(s) for s in data]
            return strings.reshape(shape)
        if et in ONNX_TYPES:
            dtype = ONNX_TYPES[et]
            raw = value.data.reshape(-1).view(np.uint8).tobytes()
            if worker.BITS[dtype][0] >= 8:
                return worker.Bits(dtype, shape, np.frombuffer(raw, worker.BITS[dtype][1]))
            return worker.Bits(dtype, shape, raw)
        return value.data.copy()

    def run(self, compiled, inputs, outputs, threads):
        request = compiled.create_infer_request()
        names = [p.get_names() for p in compiled.inputs]
        for k, t in enumerate(inputs):
            if any(t.name in n for n in names):
                request.set_tensor(t.name, self.tensor(t))
            elif k >= len(names):
                # Compiling removed the input (an empty tensor folded into a constant): there
                # is nothing to feed.
                continue
            else:
                # An IR's Parameter whose port has no tensor name: the K-th input, as
                # onnx-idx-check binds input_K.pb to the K-th Parameter.
                request.set_input_tensor(k, self.tensor(t))
        request.infer()
        ports = list(compiled.outputs)
        values = []
        for k, port in enumerate(ports):
            wanted = outputs[k]["name"] if k < len(outputs) else None
            named = [p for p in ports if wanted in p.get_names()]
            values.append(self.fetch(request.get_tensor(named[0] if named else port)))
        return values


if __name__ == "__main__":
    sys.exit(worker.main(Runtime))
