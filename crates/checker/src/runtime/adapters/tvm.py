"""onnx-idx-check's adapter for Apache TVM: a worker of the runtime protocol (version 1).

Needs the apache-tvm package (pinned by onnx-idx-check: apache-tvm==0.27.0.post1), the onnx
package its ONNX frontend reads models with (onnx==1.23.2) and onnx_idx_check_worker.py beside
this file. No options; TVM's thread pool is sized once, when TVM is imported (`TVM_NUM_THREADS`),
so a request's thread count is not honoured (`threads: false` in the hello).

    python3 tvm.py

The model goes the way TVM's own ONNX frontend tests take it: `onnx.load`, then
`tvm.relax.frontend.onnx.from_onnx` with the shapes of the data set's inputs (`shape_dict`, so
that a model's symbolic dimensions are bound and the kernels are built for static shapes),
`relax.transform.DecomposeOpsForInference` and `relax.transform.LegalizeOps`, then
`tvm.compile(mod, target="llvm")` (the default Relax pipeline, opt_level 3) and a
`relax.VirtualMachine` on `tvm.cpu()`. The inputs go to the VM's `main` as `tvm.runtime.tensor`s
in the graph's input order. The compiled module is kept per model and input shapes, so the data
sets and repeats of a case compile once. bfloat16 and float8 inputs go in as ml_dtypes arrays
of their bits; TVM's Python API takes no string, float6 or sub-byte tensors from numpy: such
inputs are refused with that message. Compiled kernels
do not check indices (`memory_safe: false`).
"""

import sys

import onnx_idx_check_worker as worker

# Compiled modules kept per model; one per distinct set of input shapes.
SHAPES_PER_MODEL = 4


class Runtime:
    name = "tvm"
    threads = False
    options = {}

    def __init__(self, options):
        import onnx
        import tvm
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx

        self.onnx, self.tvm, self.relax, self.from_onnx = onnx, tvm, relax, from_onnx
        self.device = tvm.cpu()

    def version(self):
        return self.tvm.__version__

    def load(self, model, threads):
        # No max_ir_version hook: the frontend reads models of any IR version from 3 on.
        proto = self.onnx.load(model)
        inits = {t.name for t in proto.graph.initializer}
        names = [i.name for i in proto.graph.input if i.name not in inits]
        return {"proto": proto, "names": names, "compiled": {}}

    def compile(self, loaded, shapes):
        tvm, relax = self.tvm, self.relax
        mod = self.from_onnx(loaded["proto"], shape_dict=shapes, keep_params_in_input=False)
        mod = relax.transform.DecomposeOpsForInference()(mod)
        mod = relax.transform.LegalizeOps()(mod)
        with tvm.transform.PassContext(opt_level=3):
            executable = tvm.compile(mod, target="llvm")
        return relax.VirtualMachine(executable, self.device)

    def tensor(self, t):
        array = t.ml_dtypes_array() if t.dtype in worker.BITS else t.array
        if t.dtype == "string" or array is None:
            raise TypeError(f"TVM's Python API takes no {t.dtype} tensors from numpy")
        return self.tvm.runtime.tensor(array, self.device)

    def run(self, loaded, inputs, outputs, threads):
        feeds = {t.name: t for t in inputs}
        if sorted(feeds) != sorted(loaded["names"]):
            raise ValueError(f"inputs {sorted(feeds)} for the model's inputs {loaded['names']}")
        ordered = [feeds[n] for n in loaded["names"]]
        shapes = {t.name: list(t.shape) for t in ordered}
        key = tuple((t.name, t.shape) for t in ordered)
        compiled = loaded["compiled"]
        if key not in compiled:
            compiled[key] = self.compile(loaded, shapes)
            while len(compiled) > SHAPES_PER_MODEL:
                compiled.pop(next(iter(compiled)))
        vm = compiled[key]
        result = vm["main"](*[self.tensor(t) for t in ordered])
        # One output is a tensor; several are a tuple of them (a TVM FFI Array).
        values = [result] if hasattr(result, "numpy") else list(result)
        return [v.numpy() for v in values]


if __name__ == "__main__":
    sys.exit(worker.main(Runtime))
