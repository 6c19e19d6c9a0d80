"""onnx-idx-check's adapter for IREE: a worker of the runtime protocol (version 1).

Needs the iree-base-compiler and iree-base-runtime packages (pinned by onnx-idx-check: 3.13.0
both), the onnx package IREE's ONNX importer reads models with (onnx==1.23.2) and
onnx_idx_check_worker.py beside this file. The local-task driver sizes its thread pool itself,
so a request's thread count is not honoured (`threads: false` in the hello).

    python3 iree.py [--cache DIR|off] [--f64 demote|keep]

Compiling is most of the time a case takes, so compiled modules are kept on disk between runs,
keyed by the sha256 of the imported module's text, the compile flags, the compiler's version and
the host's CPU (`CompileCache` in onnx_idx_check_worker.py says where, and how it is pruned); `--cache off`
compiles every model.

The model goes the way `iree-import-onnx` takes it: `onnx.load`, ONNX's shape inference with data
propagation, then `iree.compiler.extras.onnx_importer` (`ModelInfo`, `NodeImporter.
define_function`, `import_all`) into the torch dialect's `torch.operator "onnx.*"` ops, which
`iree.compiler.compile_str` compiles for the `llvm-cpu` backend (the host's CPU) into a VM
flatbuffer. The runtime loads it (`VmModule.copy_buffer`) into a `SystemContext` on the
`local-task` driver and calls the graph's function with the inputs as numpy arrays, in the
graph's input order (bfloat16 and float8 as ml_dtypes arrays of their bits). A compiler error
is refused with its first `error:` line, without its source location (the compiler's whole
report goes to standard error). IREE's integers are signless: an unsigned output it returns as
the signed type of the same width is read as the unsigned type the request names, bit for bit.
IREE's Python runtime takes no string or sub-byte tensors from
numpy: such inputs are refused with that message. Compiled kernels do not check indices
(`memory_safe: false`).

`--f64 demote` (the default, as `iree-compile`'s) compiles with IREE's demotion of float64 to
float32 (`--iree-input-demote-f64-to-f32`): in IREE 3.13 a float64 model's function still takes
and returns float64 buffers of float32 sizes, so its gathers are refused ("buffer view byte
length 32 exceeds backing buffer byte length 16") and its scatters return other bits. `--f64
keep` turns the demotion off and computes in float64.
"""

import sys

import onnx_idx_check_worker as worker

COMPILE_FLAGS = ["--iree-llvmcpu-target-cpu=host"]


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


class Runtime:
    name = "iree"
    threads = False
    options = {"cache": None, "f64": "demote"}

    def __init__(self, options):
        import numpy
        import onnx
        import iree.compiler
        import iree.runtime
        from iree.compiler import ir
        from iree.compiler.extras import onnx_importer

        self.np, self.onnx, self.ir, self.importer = numpy, onnx, ir, onnx_importer
        self.compiler, self.rt = iree.compiler, iree.runtime
        self.config = iree.runtime.Config("local-task")
        self.cache = worker.CompileCache(self.name, self.version(), options.get("cache"))
        f64 = options.get("f64", "demote")
        if f64 not in ("demote", "keep"):
            raise ValueError(f"--f64 {f64}: demote or keep")
        self.flags = COMPILE_FLAGS + (
            ["--iree-input-demote-f64-to-f32=false"] if f64 == "keep" else [])

    def version(self):
        # The packages' versions (3.13.0); iree.runtime.version.VERSION is the build's
        # (3.13.0rc20261016). The compiler's is named too when the two packages differ.
        from importlib import metadata

        runtime = metadata.version("iree-base-runtime")
        compiler = metadata.version("iree-base-compiler")
        return runtime if runtime == compiler else f"{runtime} (compiler {compiler})"

    def load(self, model, threads):
        onnx = self.onnx
        # No max_ir_version hook: the importer reads models of any IR version.
        proto = onnx.shape_inference.infer_shapes(onnx.load(model), data_prop=True)
        inits = {t.name for t in proto.graph.initializer}
        names = [i.name for i in proto.graph.input if i.name not in inits]

        context = self.ir.Context()
        info = self.importer.ModelInfo(proto)
        module = info.create_module(context=context).operation
        self.importer.NodeImporter.define_function(info.main_graph, module).import_all()
        module.verify()
        asm = module.get_asm()
        key = "\0".join([self.version(), " ".join(self.flags), self.cache.host(), asm])
        cached = self.cache.lookup(key, ".vmfb")
        if cached is not None:
            with open(cached, "rb") as f:
                vmfb = f.read()
        else:
            vmfb = self.compile(asm)
            self.cache.store(key, ".vmfb", lambda path: write_bytes(path, vmfb))
        system = self.rt.SystemContext(config=self.config)
        vm_module = self.rt.VmModule.copy_buffer(system.instance, vmfb)
        system.add_vm_module(vm_module)
        functions = [n for n in vm_module.function_names
                     if not n.startswith("__") and not n.endswith("$async")]
        if len(functions) != 1:
            raise worker.AdapterError(f"the compiled module exports {functions}, not one function")
        return names, system.modules[vm_module.name][functions[0]], system

    def compile(self, asm):
        try:
            return self.compiler.compile_str(
                asm, target_backends=["llvm-cpu"], extra_args=self.flags)
        except self.compiler.CompilerToolError as e:
            text = str(e)
            print(text, file=sys.stderr)
            errors = [line.split(" loc(")[0].strip() for line in text.splitlines()
                      if "error:" in line]
            raise RuntimeError(
                "iree-compile: " + (errors[0] if errors else worker.one_line(text[:500])))

    def array(self, t):
        array = t.ml_dtypes_array() if t.dtype in worker.BITS else t.array
        if t.dtype == "string" or array is None:
            raise TypeError(f"IREE's Python runtime takes no {t.dtype} tensors from numpy")
        return array

    def run(self, loaded, inputs, outputs, threads):
        names, function, _ = loaded
        feeds = {t.name: t for t in inputs}
        if sorted(feeds) != sorted(names):
            raise ValueError(f"inputs {sorted(feeds)} for the model's inputs {names}")
        result = function(*[self.array(feeds[n]) for n in names])
        values = list(result) if isinstance(result, (list, tuple)) else [result]
        values = [v.to_host() if hasattr(v, "to_host") else self.np.asarray(v) for v in values]
        return [self.declared(v, outputs[k]["dtype"] if k < len(outputs) else None)
                for k, v in enumerate(values)]

    def declared(self, value, dtype):
        # IREE's integers are signless: an unsigned output comes back as the signed type of its
        # width, holding the same bits. Read as the model declares it.
        unsigned = {"uint8": "|u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8"}
        np = self.np
        if (dtype in unsigned and value.dtype.kind == "i"
                and value.dtype.itemsize == np.dtype(unsigned[dtype]).itemsize):
            return value.view(unsigned[dtype])
        return value


if __name__ == "__main__":
    sys.exit(worker.main(Runtime))
