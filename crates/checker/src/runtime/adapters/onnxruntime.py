"""onnx-idx-check's adapter for onnxruntime: a worker of the runtime protocol (version 1).

Needs the onnxruntime package (pinned by onnx-idx-check: onnxruntime==1.31.1) and
onnx_idx_check_worker.py beside this file.

    python3 onnxruntime.py [--providers P1,P2] [--threads N] [--log-severity S]
                           [--optimization all|extended|basic|disabled]

One InferenceSession per model and thread count (`--providers`, CPUExecutionProvider by
default; intra-op threads from the request, else `--threads`, else onnxruntime's default).
`--optimization` is the session's graph optimization level (`SessionOptions.
graph_optimization_level`: ORT_ENABLE_ALL, ORT_ENABLE_EXTENDED, ORT_ENABLE_BASIC,
ORT_DISABLE_ALL); `all`, onnxruntime's own default, by default. A hunt runs its cases in turn with
`all` and `disabled`: constant folding and fusions take other code paths than the kernels alone.
Inputs of the types numpy lacks (bfloat16, float8, 4-bit, ...) go in as OrtValues holding their
bit patterns; such outputs come back as the bits of the OrtValue's buffer. Strings go in as
numpy arrays of str (the Python binding takes no other; a string that is not UTF-8 is refused
by it). A model whose IR version onnxruntime does not support yet is retried with the highest
it does ("max supported IR version: N" in its message). The logger is set to errors only
(severity 3) so that graph-optimisation warnings stay off stderr.
"""

import ctypes
import re
import sys

import onnx_idx_check_worker as worker

IR_LIMIT = re.compile(r"max supported IR version: (\d+)")

# --optimization -> the GraphOptimizationLevel member.
LEVELS = {
    "all": "ORT_ENABLE_ALL", "extended": "ORT_ENABLE_EXTENDED", "basic": "ORT_ENABLE_BASIC",
    "disabled": "ORT_DISABLE_ALL",
}


class Runtime:
    name = "onnxruntime"
    threads = True
    options = {"providers": "CPUExecutionProvider", "threads": None, "log_severity": "3",
               "optimization": "all"}

    def __init__(self, options):
        import numpy
        import onnxruntime

        self.np, self.ort = numpy, onnxruntime
        self.providers = [p for p in options["providers"].split(",") if p]
        self.severity = int(options["log_severity"])
        level = options["optimization"]
        if level not in LEVELS:
            raise ValueError(f"--optimization {level}: one of {', '.join(LEVELS)}")
        self.level = getattr(onnxruntime.GraphOptimizationLevel, LEVELS[level])
        onnxruntime.set_default_logger_severity(self.severity)

    def version(self):
        return self.ort.__version__

    def max_ir_version(self, error):
        m = IR_LIMIT.search(str(error))
        return int(m.group(1)) if m else None

    def load(self, model, threads):
        so = self.ort.SessionOptions()
        so.log_severity_level = self.severity
        so.graph_optimization_level = self.level
        if threads is not None:
            so.intra_op_num_threads = threads
        return self.ort.InferenceSession(model, sess_options=so, providers=self.providers)

    def feed(self, t):
        np, OrtValue = self.np, self.ort.OrtValue
        if t.dtype == "string":
            try:
                strings = [s.decode("utf-8") for s in t.array.reshape(-1)]
            except UnicodeDecodeError as e:
                raise TypeError(f"onnxruntime's Python binding takes strings as str only: "
                                f"input {t.name!r} holds bytes that are not UTF-8 ({e})") from e
            return np.array(strings, dtype=object).reshape(t.shape)
        if t.dtype not in worker.BITS:
            return OrtValue.ortvalue_from_numpy(t.array)
        if worker.BITS[t.dtype][0] >= 8:  # the bits, reinterpreted in place
            return OrtValue.ortvalue_from_numpy_with_onnx_type(t.array, t.onnx_type)
        value = OrtValue.ortvalue_from_shape_and_type(list(t.shape), t.onnx_type)
        raw = t.raw()  # sub-byte types: packed, two (or four) a byte
        if len(raw) != value.tensor_size_in_bytes():
            raise worker.AdapterError(
                f"{t.dtype} input {t.name!r}: {len(raw)} bytes, onnxruntime holds "
                f"{value.tensor_size_in_bytes()}")
        if raw:
            ctypes.memmove(value.data_ptr(), raw, len(raw))
        return value

    def fetch(self, value):
        dtype = value.data_type()[len("tensor("):-1]  # "tensor(bfloat16)"
        if dtype not in worker.BITS:
            return value.numpy()
        size = value.tensor_size_in_bytes()
        raw = ctypes.string_at(value.data_ptr(), size) if size else b""
        return worker.Bits(dtype, value.shape(), raw if worker.BITS[dtype][0] < 8 else
                           self.np.frombuffer(raw, dtype=worker.BITS[dtype][1]))

    def run(self, sess, inputs, outputs, threads):
        feeds = {t.name: self.feed(t) for t in inputs}
        if any(t.dtype == "string" for t in inputs):
            # Strings cannot be OrtValues in Python: the plain API, which takes both.
            return sess.run(None, feeds)
        names = [o.name for o in sess.get_outputs()]
        return [self.fetch(v) for v in sess.run_with_ort_values(names, feeds)]


if __name__ == "__main__":
    sys.exit(worker.main(Runtime))
