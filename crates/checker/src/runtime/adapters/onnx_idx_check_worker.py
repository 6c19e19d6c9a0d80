"""The common part of onnx-idx-check's bundled runtime adapters: a worker of the runtime
protocol, version 1 (docs/runtime-protocol.md). Standard library and numpy only.

An adapter script (onnxruntime.py, openvino.py, ...) sits in the same directory, imports this
module and calls `main(Runtime)` with a class that knows its runtime:

    class Runtime:
        name = "onnxruntime"            # the hello's "runtime"
        threads = True                  # whether it honours a request's "threads"
        memory_safe = False             # optional: True when bad input cannot damage its memory
        batches = True                  # optional: False when a model of several independent
                                        # subgraphs is not run as each would be alone
        options = {"threads": None}     # its --key value arguments, with their defaults
        def __init__(self, options):    # imports the runtime (after stdout moved), sets it up
        def version(self) -> str
        def load(self, model, threads)  # model: a path (str), or the model's bytes after an
                                        # IR-version rewrite; returns what `run` takes
        def run(self, loaded, inputs, outputs, threads) -> [value per output]
        def max_ir_version(self, error) -> int or None   # optional: see below

`inputs` are `Input`s (name, dtype, shape, array, ...), `outputs` the request's list of
{"name", "dtype"}. A value run returns is a numpy array (ml_dtypes arrays, such as bfloat16,
are recognised by their dtype's name) or `Bits(dtype, shape, data)` for a type numpy lacks,
with data either one bit pattern or code per element (as the .npy files of the protocol hold
them) or the packed bytes of ONNX's raw_data.

What this module does: moves the process's standard output to standard error before the
runtime is imported (protocol lines go to a private copy of it), writes the hello, then answers
one request per line of standard input until its end: loads the model (cached per model file and
thread count), reads the inputs' .npy files (strings from the .pb, which keeps every byte),
runs, writes each output as output_K.pb with a small TensorProto encoder, and replies done or
refused. A model the runtime refuses for its IR version (`max_ir_version` returns the highest it
accepts) is retried from bytes with ir_version rewritten to that.
"""

import collections
import json
import os
import re
import sys
import traceback

import numpy as np

PROTOCOL = 1
# Loaded models kept per (model file, thread count): the data sets and repeats of one case
# reuse theirs; a few are enough since the tool runs a case's requests one after another.
CACHE_SIZE = 4

# TensorProto.DataType, by the names the protocol uses (onnx.proto's enum, lower case).
DTYPES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "string": 8, "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13,
    "complex64": 14, "complex128": 15, "bfloat16": 16, "float8e4m3fn": 17,
    "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22,
    "float4e2m1": 23, "float8e8m0": 24, "uint2": 25, "int2": 26, "float6e2m3": 27,
    "float6e3m2": 28,
}
# The types numpy has, as the protocol's .npy files hold them.
NUMPY = {
    "float": "<f4", "uint8": "|u1", "int8": "|i1", "uint16": "<u2", "int16": "<i2",
    "int32": "<i4", "int64": "<i8", "bool": "|b1", "float16": "<f2", "double": "<f8",
    "uint32": "<u4", "uint64": "<u8", "complex64": "<c8", "complex128": "<c16",
}
# The types numpy lacks: bits per element in ONNX's raw_data, and the .npy's element type.
BITS = {
    "bfloat16": (16, "<u2"), "float8e4m3fn": (8, "|u1"), "float8e4m3fnuz": (8, "|u1"),
    "float8e5m2": (8, "|u1"), "float8e5m2fnuz": (8, "|u1"), "float8e8m0": (8, "|u1"),
    "uint4": (4, "|u1"), "int4": (4, "|i1"), "float4e2m1": (4, "|u1"),
    "uint2": (2, "|u1"), "int2": (2, "|i1"), "float6e2m3": (6, "|u1"), "float6e3m2": (6, "|u1"),
}
# ml_dtypes' names for the same types (onnx's numpy_helper and its reference evaluator use them).
ML_DTYPES = {
    "bfloat16": "bfloat16", "float8_e4m3fn": "float8e4m3fn", "float8_e4m3fnuz": "float8e4m3fnuz",
    "float8_e5m2": "float8e5m2", "float8_e5m2fnuz": "float8e5m2fnuz",
    "float8_e8m0fnu": "float8e8m0", "uint4": "uint4", "int4": "int4",
    "float4_e2m1fn": "float4e2m1", "uint2": "uint2", "int2": "int2",
    "float6_e2m3fn": "float6e2m3", "float6_e3m2fn": "float6e3m2",
}
NAME_OF = {np.dtype(v).str: k for k, v in NUMPY.items()}
ML_NAME_OF = {v: k for k, v in ML_DTYPES.items()}


class AdapterError(Exception):
    """A failure of the adapter itself, not of the runtime: replied as "adapter: ..."."""


def one_line(text):
    return " ".join(str(text).split())


def describe(error):
    """`ExceptionType: text` on one line."""
    text = one_line(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


# ---------------------------------------------------------------------------------------------
# Protocol buffers: just enough to write a TensorProto, read a string tensor and rewrite a
# model's ir_version.


def _varint(value):
    value &= (1 << 64) - 1  # negative int64s take ten bytes, two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data, pos):
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ValueError("varint too long")


def _fields(data):
    """(field number, wire type, value, start, end) of each top-level field; value is an int
    for varints and fixed-width fields, the payload bytes for length-delimited ones."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            value, pos = int.from_bytes(data[pos:pos + 8], "little"), pos + 8
        elif wire == 2:
            size, pos = _read_varint(data, pos)
            value, pos = bytes(data[pos:pos + size]), pos + size
        elif wire == 5:
            value, pos = int.from_bytes(data[pos:pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire} (field {number})")
        if pos > len(data):
            raise ValueError(f"truncated field {number}")
        yield number, wire, value, start, pos


def _key(number, wire):
    return _varint(number << 3 | wire)


def _len_field(number, payload):
    return _key(number, 2) + _varint(len(payload)) + payload


def ir_version(model_bytes):
    """ModelProto.ir_version (field 1), or None."""
    found = None
    for number, wire, value, _, _ in _fields(model_bytes):
        if number == 1 and wire == 0:
            found = value  # the last occurrence wins, as in protobuf
    return found


def set_ir_version(model_bytes, version):
    """The model with ir_version set to `version`, every other field's bytes untouched."""
    kept = [model_bytes[s:e] for n, w, _, s, e in _fields(model_bytes) if not (n == 1 and w == 0)]
    return _key(1, 0) + _varint(version) + b"".join(kept)


def read_string_tensor(pb_bytes):
    """(dims, [bytes]) of a TensorProto of strings."""
    dims, strings = [], []
    for number, wire, value, _, _ in _fields(pb_bytes):
        if number == 1 and wire == 0:
            dims.append(value - (1 << 64) if value >= 1 << 63 else value)
        elif number == 1 and wire == 2:
            pos = 0
            while pos < len(value):
                v, pos = _read_varint(value, pos)
                dims.append(v - (1 << 64) if v >= 1 << 63 else v)
        elif number == 6 and wire == 2:
            strings.append(value)
    return dims, strings


def pack_bits(codes, bits):
    """Codes (one per element, any integer type) packed LSB first as ONNX's raw_data holds them:
    two 4-bit codes a byte, four 2-bit codes a byte, four 6-bit codes in three bytes."""
    codes = np.asarray(codes).reshape(-1).astype(np.int64) & ((1 << bits) - 1)
    codes = codes.astype(np.uint8)
    if bits == 6:
        n = codes.size
        padded = np.zeros(-(-n // 4) * 4, dtype=np.uint8)
        padded[:n] = codes
        v0, v1, v2, v3 = (padded[i::4] for i in range(4))
        out = np.empty((v0.size, 3), dtype=np.uint8)
        out[:, 0] = v0 | ((v1 & 0x03) << 6)
        out[:, 1] = (v1 >> 2) | ((v2 & 0x0F) << 4)
        out[:, 2] = (v2 >> 4) | (v3 << 2)
        return out.reshape(-1)[: -(-6 * n // 8)].tobytes()
    per = 8 // bits
    padded = np.zeros(-(-codes.size // per) * per, dtype=np.uint8)
    padded[: codes.size] = codes
    groups = padded.reshape(-1, per)
    out = np.zeros(groups.shape[0], dtype=np.uint8)
    for i in range(per):
        out |= groups[:, i] << (i * bits)
    return out.tobytes()


def encode_tensor(name, dtype, dims, raw=None, strings=None):
    """A serialized TensorProto: dims (1, packed), data_type (2), string_data (6, strings),
    name (8), raw_data (9, everything else)."""
    out = bytearray()
    if dims:
        out += _len_field(1, b"".join(_varint(int(d)) for d in dims))
    out += _key(2, 0) + _varint(DTYPES[dtype])
    for s in strings or ():
        out += _len_field(6, s)
    if name:
        out += _len_field(8, name.encode("utf-8"))
    if strings is None:
        out += _len_field(9, raw)
    return bytes(out)


class Bits:
    """An output of a type numpy lacks: `data` is either one bit pattern or code per element
    (any integer array: uint16 for bfloat16, uint8 or int8 for the 8-bit and sub-byte types),
    or `bytes` already packed as ONNX's raw_data."""

    def __init__(self, dtype, shape, data):
        if dtype not in BITS:
            raise AdapterError(f"Bits of {dtype!r}: not a type numpy lacks")
        self.dtype, self.shape, self.data = dtype, tuple(int(d) for d in shape), data


def _count(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def tensor_bytes(value, name):
    """A serialized TensorProto for one value a runtime returned (see `Bits`)."""
    if isinstance(value, Bits):
        bits = BITS[value.dtype][0]
        n = _count(value.shape)
        if isinstance(value.data, (bytes, bytearray, memoryview)):
            raw = bytes(value.data)
            if len(raw) != -(-n * bits // 8):
                raise AdapterError(
                    f"{value.dtype} output {name!r}: {len(raw)} bytes for {n} elements")
        else:
            data = np.asarray(value.data).reshape(-1)
            if data.size != n:
                raise AdapterError(
                    f"{value.dtype} output {name!r}: {data.size} elements for shape "
                    f"{list(value.shape)}")
            if bits >= 8:
                raw = data.astype(np.dtype(BITS[value.dtype][1]).newbyteorder("<")).tobytes()
            else:
                raw = pack_bits(data, bits)
        return encode_tensor(name, value.dtype, value.shape, raw=raw)

    array = np.asarray(value)
    dt = array.dtype
    if dt.kind in "OUS":
        strings = [
            s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in array.reshape(-1)
        ]
        return encode_tensor(name, "string", array.shape, strings=strings)
    ml = ML_DTYPES.get(dt.name)
    if ml is not None:
        bits = BITS[ml][0]
        if bits == 16:
            codes = array.view(np.uint16)
        elif ml in ("int4", "int2", "uint4", "uint2"):
            codes = array.astype(np.int8 if ml.startswith("int") else np.uint8)
        else:  # the float codes sit in the byte's low bits
            codes = array.view(np.uint8)
        return tensor_bytes(Bits(ml, array.shape, codes), name)
    dtype = NAME_OF.get(dt.newbyteorder("<").str)
    if dtype is None:
        raise AdapterError(f"output {name!r}: no ONNX type for numpy dtype {dt}")
    raw = np.ascontiguousarray(array, dtype=np.dtype(NUMPY[dtype])).tobytes()
    return encode_tensor(name, dtype, array.shape, raw=raw)


# ---------------------------------------------------------------------------------------------
# Requests.


class Input:
    """One input of a request. `array` is the .npy's content: the numpy array for the types
    numpy has, the bit patterns or codes (one per element) for the others (see `BITS`), and for
    strings an object array of `bytes`, read from the .pb, which keeps every byte (a .npy of
    strings drops trailing zero bytes). `raw()` gives ONNX's raw_data bytes (packed sub-byte
    types); `pb`/`npy` are the paths."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.dtype = spec["dtype"]
        self.shape = tuple(int(d) for d in spec["shape"])
        self.pb = spec.get("pb")
        self.npy = spec.get("npy")
        if self.dtype not in DTYPES:
            raise AdapterError(f"input {self.name!r}: unknown dtype {self.dtype!r}")
        self.onnx_type = DTYPES[self.dtype]
        try:
            if self.dtype == "string" and self.pb:
                with open(self.pb, "rb") as f:
                    dims, strings = read_string_tensor(f.read())
                array = np.empty(len(strings), dtype=object)
                array[:] = strings
                self.array = array.reshape(self.shape)
            else:
                array = np.load(self.npy, allow_pickle=False)
                if self.dtype == "string":
                    strings = np.empty(array.size, dtype=object)
                    strings[:] = [s.encode("utf-8") if isinstance(s, str) else bytes(s)
                                  for s in array.reshape(-1)]
                    array = strings
                else:
                    want = NUMPY.get(self.dtype) or BITS[self.dtype][1]
                    array = array.astype(np.dtype(want), copy=False)
                self.array = np.ascontiguousarray(array).reshape(self.shape)
        except AdapterError:
            raise
        except Exception as e:
            raise AdapterError(f"input {self.name!r}: {describe(e)}") from e

    def raw(self):
        """The bytes of ONNX's raw_data for this tensor (not for strings)."""
        if self.dtype in BITS and BITS[self.dtype][0] < 8:
            return pack_bits(self.array, BITS[self.dtype][0])
        return self.array.tobytes()

    def ml_dtypes_array(self):
        """For bfloat16 and the float8 types: the bit patterns viewed as the ml_dtypes array of
        that type (which runtimes such as TVM and IREE take); `None` for the other types."""
        name = ML_NAME_OF.get(self.dtype)
        if name is None or BITS[self.dtype][0] < 8:
            return None
        import ml_dtypes

        return self.array.view(getattr(ml_dtypes, name))


class Models:
    """The loaded models, the last few, per (model file, its size and time, thread count)."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.cache = collections.OrderedDict()

    def get(self, path, threads):
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns, threads)
        if key in self.cache:
            self.cache.move_to_end(key)
            return self.cache[key]
        loaded = load_model(self.runtime, path, threads)
        self.cache[key] = loaded
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)
        return loaded


def load_model(runtime, path, threads):
    """runtime.load(path), and when the runtime refuses the model's IR version as too new, again
    from the model's bytes with ir_version lowered to the highest the runtime accepts."""
    try:
        return runtime.load(path, threads)
    except Exception as e:
        hook = getattr(runtime, "max_ir_version", None)
        limit = hook(e) if hook is not None else None
        if limit is None:
            raise
        with open(path, "rb") as f:
            data = f.read()
        current = ir_version(data)
        if current is None or current <= limit:
            raise
        print(f"adapter: {path}: IR version {current} lowered to {limit} for "
              f"{runtime.name}", file=sys.stderr)
        return runtime.load(set_ir_version(data, limit), threads)


class CompileCache:
    """Compiled models kept on disk between runs, for runtimes that pay seconds to compile one
    (IREE, TVM): a file per sha256 of what was compiled (the caller's key names the compiler's
    version and flags too), in `DIR/<runtime>-<version>/`.

    DIR: the adapter's `cache` option (`off` for none, `on` for the default), else
    $ONNX_IDX_CHECK_CACHE_DIR, else
    $XDG_CACHE_HOME/onnx-idx-check, else ~/.cache/onnx-idx-check. The directory is marked with a
    CACHEDIR.TAG naming this tool; only a directory with that tag is pruned, and only of files
    named as this class names them, least recently used first, when it holds more than LIMIT
    bytes. A cache that cannot be written is turned off for the process, said once on stderr.
    """

    LIMIT = 512 * 1024 * 1024
    TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# onnx-idx-check's compile cache\n"

    def __init__(self, runtime, version, option=None):
        import hashlib

        self.hashlib = hashlib
        self.dir = None
        if option == "off":
            return
        if option == "on":
            option = None
        base = option or os.environ.get("ONNX_IDX_CHECK_CACHE_DIR") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
            "onnx-idx-check")
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", f"{runtime}-{version}")
        path = os.path.join(base, safe)
        try:
            os.makedirs(path, exist_ok=True)
            tag = os.path.join(path, "CACHEDIR.TAG")
            if not os.path.exists(tag):
                with open(tag, "w", encoding="utf-8") as f:
                    f.write(self.TAG)
        except OSError as e:
            print(f"adapter: no compile cache ({describe(e)})", file=sys.stderr)
            return
        self.dir = path
        self.prune()

    @staticmethod
    def host():
        """The host's CPU as a compiler that targets it sees it, for keys: its model and flags."""
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                lines = [line for line in f if line.startswith(("model name", "flags"))]
            return "".join(sorted(set(lines)))
        except OSError:
            import platform

            return platform.processor() or platform.machine()

    def name(self, key, suffix):
        """The file name for `key` (bytes or str)."""
        data = key.encode("utf-8") if isinstance(key, str) else key
        return self.hashlib.sha256(data).hexdigest() + suffix

    def lookup(self, key, suffix):
        """The cached file's path for `key`, or None."""
        if self.dir is None:
            return None
        path = os.path.join(self.dir, self.name(key, suffix))
        try:
            os.utime(path)  # its last use, for pruning
        except OSError:
            return None
        return path

    def store(self, key, suffix, write):
        """`write(tmp_path)` writes the file; it is renamed into place. Its path, or None."""
        if self.dir is None:
            return None
        name = self.name(key, suffix)
        path = os.path.join(self.dir, name)
        # The suffix last: some writers choose the format by it (TVM's export_library).
        tmp = os.path.join(self.dir, f"{name[:-len(suffix)]}.{os.getpid()}.tmp{suffix}")
        try:
            write(tmp)
            os.replace(tmp, path)
            return path
        except Exception as e:
            print(f"adapter: compile cache off: {describe(e)}", file=sys.stderr)
            self.dir = None
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return None

    def prune(self):
        try:
            with open(os.path.join(self.dir, "CACHEDIR.TAG"), encoding="utf-8") as f:
                if f.read() != self.TAG:
                    return
            ours = re.compile(r"^[0-9a-f]{64}\.[a-z]+$")
            files = []
            for entry in os.scandir(self.dir):
                if ours.match(entry.name) and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    files.append((st.st_mtime, st.st_size, entry.path))
            total = sum(size for _, size, _ in files)
            if total <= self.LIMIT:
                return
            for _, size, path in sorted(files):
                if total <= self.LIMIT * 3 // 4:
                    break
                os.unlink(path)
                total -= size
        except OSError as e:
            print(f"adapter: pruning the compile cache: {describe(e)}", file=sys.stderr)


def write_outputs(values, outputs, output_dir):
    for k, value in enumerate(values):
        name = outputs[k]["name"] if k < len(outputs) else f"output_{k}"
        data = tensor_bytes(value, name)
        path = os.path.join(output_dir, f"output_{k}.pb")
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)


def handle(runtime, models, options, request):
    """The reply to one request."""
    rid = request.get("id")
    threads = None
    if getattr(runtime, "threads", False):
        threads = request.get("threads")
        if threads is None:
            threads = options.get("threads")
    try:
        loaded = models.get(request["model"], threads)
        inputs = [Input(spec) for spec in request["inputs"]]
        outputs = request.get("outputs", [])
        values = runtime.run(loaded, inputs, outputs, threads)
        try:
            write_outputs(list(values), outputs, request["output_dir"])
        except AdapterError:
            raise
        except Exception as e:
            raise AdapterError(f"writing outputs: {describe(e)}") from e
    except AdapterError as e:
        traceback.print_exc(file=sys.stderr)
        return {"id": rid, "status": "refused", "message": f"adapter: {one_line(e)}"}
    except Exception as e:
        return {"id": rid, "status": "refused", "message": describe(e)}
    return {"id": rid, "status": "done"}


def parse_options(defaults, argv):
    """--key value or --key=value, for the keys of `defaults` (dashes or underscores)."""
    options = dict(defaults)
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--"):
            raise ValueError(f"unexpected argument {arg!r}")
        key, eq, value = arg[2:].partition("=")
        if not eq:
            if i + 1 >= len(argv):
                raise ValueError(f"--{key} needs a value")
            i += 1
            value = argv[i]
        key = key.replace("-", "_")
        if key not in options:
            known = ", ".join("--" + k.replace("_", "-") for k in defaults) or "none"
            raise ValueError(f"unknown option --{key} (known: {known})")
        if key == "threads":
            value = int(value)
            if value < 1:
                raise ValueError("--threads must be at least 1")
        options[key] = value
        i += 1
    return options


def main(runtime_class, argv=None):
    """The worker: hello, then one reply per request line until the end of standard input."""
    # The protocol goes over a private copy of stdout; whatever the runtime (or Python code)
    # prints to stdout goes to stderr instead, so that it cannot garble a reply.
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(message):
        proto.write(json.dumps(message) + "\n")
        proto.flush()

    # The adapters are named after their runtimes' packages (onnxruntime.py, openvino.py,
    # tract.py): their own directory, sys.path[0], would shadow the package they import.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]

    argv = sys.argv[1:] if argv is None else argv
    try:
        options = parse_options(getattr(runtime_class, "options", {}), argv)
        runtime = runtime_class(options)
        hello = {
            "protocol": PROTOCOL,
            "runtime": runtime.name,
            "version": str(runtime.version()),
            "threads": bool(getattr(runtime, "threads", False)),
            "memory_safe": bool(getattr(runtime, "memory_safe", False)),
            "batches": bool(getattr(runtime, "batches", True)),
        }
    except BaseException as e:  # an import that fails may raise SystemExit, too
        if isinstance(e, KeyboardInterrupt):
            raise
        text = one_line(e) if isinstance(e, ImportError) else describe(e)
        send({"protocol": PROTOCOL, "error": text or type(e).__name__})
        return 1
    send(hello)

    models = Models(runtime)
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as e:
            send({"id": None, "status": "refused", "message": f"adapter: bad request: {one_line(e)}"})
            continue
        send(handle(runtime, models, options, request))
    return 0
