"""onnx-idx-check's adapter for Apache TVM: a worker of the runtime protocol (version 1).

Needs the apache-tvm package (pinned by onnx-idx-check: apache-tvm==0.27.0.post1), the onnx
package its ONNX frontend reads models with (onnx==1.23.2) and onnx_idx_check_worker.py beside
this file. TVM's thread pool is sized once, when TVM is imported (`TVM_NUM_THREADS`), so a
request's thread count is not honoured (`threads: false` in the hello).

    python3 tvm.py [--cache on|DIR]

The model goes the way TVM's own ONNX frontend tests take it: `onnx.load`, then
`tvm.relax.frontend.onnx.from_onnx` with the shapes of the data set's inputs (`shape_dict`, so
that a model's symbolic dimensions are bound and the kernels are built for static shapes),
`relax.transform.DecomposeOpsForInference` and `relax.transform.LegalizeOps`, then
`tvm.compile(mod, target="llvm")` (the default Relax pipeline, opt_level 3) and a
`relax.VirtualMachine` on `tvm.cpu()`. The inputs go to the VM's `main` as `tvm.runtime.tensor`s
in the graph's input order. The compiled module is kept per model and input shapes, so the data
sets and repeats of a case compile once. With `--cache on` (or a directory) they are also kept
on disk between runs as shared libraries, keyed by the sha256 of the model's bytes, the input
shapes, TVM's version, the target and the host's CPU (`CompileCache` in onnx_idx_check_worker.py
says where, and how it is pruned). Off by default: `export_library` links with a C++ compiler
and costs about what compiling does, so it pays for a suite run again, not for a hunt's models
that are each new; without a C++ compiler the cache turns itself off. bfloat16 and float8 inputs go in as ml_dtypes arrays
of their bits; TVM's Python API takes no string, float6 or sub-byte tensors from numpy: such
inputs are refused with that message. Compiled kernels
do not check indices (`memory_safe: false`).
"""

import sys

import onnx_idx_check_worker as worker

TARGET = "llvm"
# Compiled modules kept per model; one per distinct set of input shapes.
SHAPES_PER_MODEL = 4


class Runtime:
    name = "tvm"
    threads = False
    options = {"cache": "off"}

    def __init__(self, options):
        import onnx
        import tvm
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx

        self.onnx, self.tvm, self.relax, self.from_onnx = onnx, tvm, relax, from_onnx
        self.device = tvm.cpu()
        self.cache = worker.CompileCache(self.name, self.version(), options.get("cache"))

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
        proto = loaded["proto"]
        key = "\0".join([self.version(), TARGET, self.cache.host(), repr(sorted(shapes.items()))])
        key = key.encode("utf-8") + b"\0" + proto.SerializeToString(deterministic=True)
        cached = self.cache.lookup(key, ".so")
        if cached is not None:
            return relax.VirtualMachine(tvm.runtime.load_module(cached), self.device)
        mod = self.from_onnx(proto, shape_dict=shapes, keep_params_in_input=False)
        mod = relax.transform.DecomposeOpsForInference()(mod)
        mod = relax.transform.LegalizeOps()(mod)
        with tvm.transform.PassContext(opt_level=3):
            executable = tvm.compile(mod, target=TARGET)
        self.cache.store(key, ".so", executable.export_library)
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
