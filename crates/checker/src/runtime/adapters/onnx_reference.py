"""onnx-idx-check's adapter for ONNX's reference evaluator (`onnx.reference.ReferenceEvaluator`):
a worker of the runtime protocol (version 1).

Needs the onnx package (pinned by onnx-idx-check: onnx==1.23.2, which brings numpy and
ml_dtypes) and onnx_idx_check_worker.py beside this file. No options; the evaluator runs in one
thread (`threads: false` in the hello).

    python3 onnx_reference.py

Inputs are read from the data set's input_K.pb with `onnx.numpy_helper.to_array` (external data
beside the .pb included), so bfloat16, float8 and the sub-byte types arrive as the ml_dtypes
arrays the evaluator expects (strings as str, or as bytes when they are not UTF-8, which
to_array would fail on); its outputs are written back from whatever numpy or ml_dtypes
arrays it returns.
"""

import os
import sys

import onnx_idx_check_worker as worker


class Runtime:
    name = "onnx-reference"
    threads = False
    # Python and numpy: an index out of range raises or wraps, it never reads past a buffer.
    memory_safe = True
    options = {}

    def __init__(self, options):
        import onnx
        from onnx import numpy_helper
        from onnx.reference import ReferenceEvaluator

        self.onnx, self.numpy_helper, self.evaluator = onnx, numpy_helper, ReferenceEvaluator

    def version(self):
        return self.onnx.__version__

    def load(self, model, threads):
        return self.evaluator(model)

    def run(self, sess, inputs, outputs, threads):
        feeds = {}
        for t in inputs:
            if t.dtype == "string":  # as to_array gives them (str), but bytes that are not UTF-8
                feeds[t.name] = t.array.copy()
                for i, s in enumerate(t.array.reshape(-1)):
                    try:
                        feeds[t.name].reshape(-1)[i] = s.decode("utf-8")
                    except UnicodeDecodeError:
                        pass
                continue
            try:
                tensor = self.onnx.load_tensor(t.pb)
                feeds[t.name] = self.numpy_helper.to_array(tensor, base_dir=os.path.dirname(t.pb))
            except Exception as e:
                raise worker.AdapterError(f"input {t.name!r}: {worker.describe(e)}") from e
        return sess.run(None, feeds)


if __name__ == "__main__":
    sys.exit(worker.main(Runtime))
