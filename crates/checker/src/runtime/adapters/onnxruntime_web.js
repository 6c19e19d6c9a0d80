#!/usr/bin/env node
/*
 * onnx-idx-check's adapter for onnxruntime-web: a worker of the runtime protocol (version 1,
 * docs/runtime-protocol.md), written in JavaScript for Node. Self-contained: it needs Node (18 or
 * later, for BigInt64Array and the `wasm` backend) and the onnxruntime-web package (pinned by
 * onnx-idx-check: onnxruntime-web@1.30.0), nothing else.
 *
 *     node onnxruntime_web.js [--module-dir DIR] [--threads N]
 *                             [--optimization all|extended|basic|disabled]
 *
 * Where onnxruntime-web is looked for: `--module-dir DIR` (a directory holding
 * node_modules/onnxruntime-web, or the package itself), then $ONNX_IDX_CHECK_NODE_MODULES (the
 * same), then Node's own resolution from this file's directory (its node_modules and $NODE_PATH),
 * then the current directory's node_modules. Install it with
 *
 *     mkdir -p DIR && cd DIR && npm install onnxruntime-web@1.30.0
 *
 * Models run on the WebAssembly backend (`executionProviders: ['wasm']`), one InferenceSession
 * per model file (the last few kept). Its thread count is the process's (`env.wasm.numThreads`,
 * fixed once the WebAssembly module is up): `--threads`, else 1, and the hello says `threads:
 * false`. Inputs are read from the data set's .pb files with a small TensorProto reader (the
 * .npy is used for what it does not read: external data, 4-bit types outside raw_data); outputs
 * are written as output_K.pb. Element types onnxruntime-web's Tensor lacks (bfloat16, float8,
 * complex, 2-bit, 6-bit) are refused with a message naming them. A trap of the WebAssembly code
 * (memory access out of bounds, an abort) leaves the module unusable: the worker says so on
 * stderr and exits without a reply, which the tool judges CRASHED and replaces the worker.
 * A model whose IR version the runtime does not support yet is retried with the highest it does.
 */

'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

const PROTOCOL = 1;
const PACKAGE = 'onnxruntime-web';
const PINNED = '1.30.0';
// Sessions kept per model file: a case's data sets and repeats reuse theirs.
const CACHE_SIZE = 4;
// The exit status of a worker whose WebAssembly module trapped.
const TRAPPED = 70;

// ---------------------------------------------------------------------------------------------
// Standard output carries the protocol only: whatever the runtime (or Emscripten's glue) prints
// goes to stderr instead, so that it cannot garble a reply.

function sendLine(message) {
  // Node may have made fd 1 non-blocking (a pipe): a full pipe is waited for, not an error.
  const bytes = Buffer.from(JSON.stringify(message) + '\n', 'utf8');
  let written = 0;
  while (written < bytes.length) {
    try {
      written += fs.writeSync(1, bytes, written, bytes.length - written);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

function toStderr(...args) {
  process.stderr.write(args.map((a) => (typeof a === 'string' ? a : require('util').inspect(a))).join(' ') + '\n');
}

console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;
process.stdout.write = (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback);

function oneLine(text) {
  return String(text).split(/\s+/).filter((s) => s).join(' ');
}

/** `Type: text` on one line. */
function describe(error) {
  if (!(error instanceof Error)) return oneLine(error);
  const text = oneLine(error.message);
  const type = error.name || error.constructor.name;
  return text ? `${type}: ${text}` : type;
}

/** A failure of the adapter itself, not of the runtime: replied as "adapter: ...". */
class AdapterError extends Error {}

/** An element type onnxruntime-web's API has no tensor for: refused, naming it. */
class Unsupported extends Error {}

// ---------------------------------------------------------------------------------------------
// Element types.

// TensorProto.DataType, by the names the protocol uses (onnx.proto's enum, lower case).
const DTYPES = {
  float: 1, uint8: 2, int8: 3, uint16: 4, int16: 5, int32: 6, int64: 7, string: 8, bool: 9,
  float16: 10, double: 11, uint32: 12, uint64: 13, complex64: 14, complex128: 15, bfloat16: 16,
  float8e4m3fn: 17, float8e4m3fnuz: 18, float8e5m2: 19, float8e5m2fnuz: 20, uint4: 21, int4: 22,
  float4e2m1: 23, float8e8m0: 24, uint2: 25, int2: 26, float6e2m3: 27, float6e3m2: 28,
};
const NAME_OF_CODE = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v, k]));

// The types onnxruntime-web's Tensor has: its name for each and the typed array holding the data
// (4-bit types: packed two a byte, low nibble first, as ONNX's raw_data holds them).
const ORT = {
  float: ['float32', Float32Array], double: ['float64', Float64Array],
  // float16: its bits, in a Float16Array where Node has one (onnxruntime-web then expects it).
  float16: ['float16', globalThis.Float16Array || Uint16Array], int8: ['int8', Int8Array], uint8: ['uint8', Uint8Array],
  int16: ['int16', Int16Array], uint16: ['uint16', Uint16Array], int32: ['int32', Int32Array],
  uint32: ['uint32', Uint32Array], int64: ['int64', BigInt64Array],
  uint64: ['uint64', BigUint64Array], bool: ['bool', Uint8Array], int4: ['int4', Uint8Array],
  uint4: ['uint4', Uint8Array],
};
const ONNX_OF_ORT = Object.fromEntries(Object.entries(ORT).map(([onnx, [ort]]) => [ort, onnx]));
ONNX_OF_ORT.string = 'string';

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function count(shape) {
  return shape.reduce((n, d) => n * d, 1);
}

/** Bytes of raw_data for `n` elements of an ONNX type onnxruntime-web has. */
function rawSize(dtype, n) {
  if (dtype === 'int4' || dtype === 'uint4') return Math.ceil(n / 2);
  return n * ORT[dtype][1].BYTES_PER_ELEMENT;
}

// ---------------------------------------------------------------------------------------------
// Protocol buffers: just enough to read a TensorProto, write one, and rewrite a model's
// ir_version.

function readVarint(buf, pos) {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new AdapterError('truncated varint');
    const byte = buf[pos++];
    result |= BigInt(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return [result, pos];
    shift += 7n;
    if (shift >= 70n) throw new AdapterError('varint too long');
  }
}

/** Each top-level field: {number, wire, value, start, end}; value is a BigInt for varints, the
 * payload bytes (a Buffer) otherwise. */
function* fields(buf) {
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    let key;
    [key, pos] = readVarint(buf, pos);
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    let value;
    if (wire === 0) {
      [value, pos] = readVarint(buf, pos);
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      value = buf.subarray(pos, pos + size);
      pos += size;
    } else if (wire === 2) {
      let size;
      [size, pos] = readVarint(buf, pos);
      if (size > BigInt(buf.length - pos)) throw new AdapterError(`truncated field ${number}`);
      value = buf.subarray(pos, pos + Number(size));
      pos += Number(size);
    } else {
      throw new AdapterError(`unsupported wire type ${wire} (field ${number})`);
    }
    if (pos > buf.length) throw new AdapterError(`truncated field ${number}`);
    yield { number, wire, value, start, end: pos };
  }
}

function signed64(v) {
  return BigInt.asIntN(64, v);
}

/** The values of a repeated varint field, packed or not. */
function pushVarints(out, field) {
  if (field.wire === 0) {
    out.push(field.value);
  } else if (field.wire === 2) {
    let pos = 0;
    while (pos < field.value.length) {
      let v;
      [v, pos] = readVarint(field.value, pos);
      out.push(v);
    }
  } else {
    throw new AdapterError(`field ${field.number}: wire type ${field.wire} for varints`);
  }
}

/** The payloads of a repeated fixed-width field (`size` bytes each), packed or not. */
function pushFixed(out, field, size) {
  if (field.wire === 2) {
    if (field.value.length % size) throw new AdapterError(`field ${field.number}: ragged packed data`);
    for (let p = 0; p < field.value.length; p += size) out.push(field.value.subarray(p, p + size));
  } else if (field.wire === (size === 8 ? 1 : 5)) {
    out.push(field.value);
  } else {
    throw new AdapterError(`field ${field.number}: wire type ${field.wire} for fixed${size * 8}`);
  }
}

/** The fields of a TensorProto that matter here. */
function decodeTensor(buf) {
  const t = {
    dims: [], dataType: 0, raw: null, floats: [], int32s: [], strings: [], int64s: [],
    doubles: [], uint64s: [], external: false, segment: false,
  };
  for (const f of fields(buf)) {
    switch (f.number) {
      case 1: { const d = []; pushVarints(d, f); t.dims.push(...d.map(signed64)); break; }
      case 2: if (f.wire === 0) t.dataType = Number(f.value); break;
      case 3: t.segment = true; break;
      case 4: pushFixed(t.floats, f, 4); break;
      case 5: pushVarints(t.int32s, f); break;
      case 6: if (f.wire === 2) t.strings.push(f.value); break;
      case 7: pushVarints(t.int64s, f); break;
      case 9: if (f.wire === 2) t.raw = f.value; break;
      case 10: pushFixed(t.doubles, f, 8); break;
      case 11: pushVarints(t.uint64s, f); break;
      case 13: t.external = true; break;
      case 14: if (f.wire === 0 && f.value === 1n) t.external = true; break;
      default: break;
    }
  }
  return t;
}

function varintBytes(value) {
  let v = BigInt.asUintN(64, BigInt(value)); // negative int64s take ten bytes, two's complement
  const out = [];
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) {
      out.push(byte | 0x80);
    } else {
      out.push(byte);
      return Buffer.from(out);
    }
  }
}

function keyBytes(number, wire) {
  return varintBytes((number << 3) | wire);
}

function lenField(number, payload) {
  return Buffer.concat([keyBytes(number, 2), varintBytes(payload.length), payload]);
}

/** A serialized TensorProto: dims (1, packed), data_type (2), string_data (6, strings),
 * name (8), raw_data (9, everything else). */
function encodeTensor(name, dtype, dims, raw, strings) {
  const parts = [];
  if (dims.length) parts.push(lenField(1, Buffer.concat(dims.map(varintBytes))));
  parts.push(keyBytes(2, 0), varintBytes(DTYPES[dtype]));
  for (const s of strings || []) parts.push(lenField(6, s));
  if (name) parts.push(lenField(8, Buffer.from(name, 'utf8')));
  if (!strings) parts.push(lenField(9, raw));
  return Buffer.concat(parts);
}

/** ModelProto.ir_version (field 1), or null; the last occurrence wins, as in protobuf. */
function irVersion(model) {
  let found = null;
  for (const f of fields(model)) if (f.number === 1 && f.wire === 0) found = f.value;
  return found === null ? null : Number(found);
}

/** The model with ir_version set to `version`, every other field's bytes untouched. */
function setIrVersion(model, version) {
  const kept = [];
  for (const f of fields(model)) {
    if (!(f.number === 1 && f.wire === 0)) kept.push(model.subarray(f.start, f.end));
  }
  return new Uint8Array(Buffer.concat([keyBytes(1, 0), varintBytes(version), ...kept]));
}

// ---------------------------------------------------------------------------------------------
// .npy files (the fallback for what the TensorProto reader leaves): numeric types only.

const NPY = {
  '<f4': 'float', '<f8': 'double', '<f2': 'float16', '|i1': 'int8', '|u1': 'uint8',
  '<i2': 'int16', '<u2': 'uint16', '<i4': 'int32', '<u4': 'uint32', '<i8': 'int64',
  '<u8': 'uint64', '|b1': 'bool',
};

/** {descr, shape, data (a Buffer)} of a little-endian, C-ordered .npy file. */
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') {
    throw new AdapterError(`${file}: not a .npy file`);
  }
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']*)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header)) {
    throw new AdapterError(`${file}: unsupported .npy header ${oneLine(header)}`);
  }
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  return { descr: descr[1], shape: dims, data: buf.subarray(start + headerLen) };
}

// ---------------------------------------------------------------------------------------------
// Inputs.

/** A copy of `bytes` as a typed array of `Type` (copied: a Buffer's offset may be unaligned). */
function typedFrom(Type, bytes) {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Type(copy.buffer, 0, bytes.length / Type.BYTES_PER_ELEMENT);
}

/** Codes one a byte, packed two a byte, low nibble first. */
function pack4(codes) {
  const out = new Uint8Array(Math.ceil(codes.length / 2));
  for (let i = 0; i < codes.length; i++) out[i >> 1] |= (codes[i] & 0x0f) << ((i & 1) * 4);
  return out;
}

/** The typed data of a TensorProto's typed fields (no raw_data), or null when it is not read
 * here. */
function typedFields(t, dtype, n) {
  const [, Type] = ORT[dtype];
  let values;
  switch (dtype) {
    case 'float':
      values = t.floats.map((b) => b.readFloatLE(0));
      break;
    case 'double':
      values = t.doubles.map((b) => b.readDoubleLE(0));
      break;
    case 'int64':
      values = t.int64s.map(signed64);
      break;
    case 'uint32':
      values = t.uint64s.map(Number);
      break;
    case 'uint64':
      values = t.uint64s;
      break;
    case 'int4': case 'uint4':
      return null; // how int32_data packs them varies between writers: the .npy says
    default: // int32_data holds the narrower integers, bool and float16's bits
      values = t.int32s.map((v) => Number(BigInt.asIntN(32, v)));
      break;
  }
  if (values.length !== n) {
    throw new AdapterError(`${values.length} values for ${n} elements`);
  }
  if (dtype === 'float16') { // bits, not numbers, even where Type is a Float16Array
    const bits = Uint16Array.from(values);
    return new Type(bits.buffer, 0, n);
  }
  return Type.from(values);
}

/** The onnxruntime-web Tensor of one request input. */
function readInput(ort, spec) {
  const { name, dtype } = spec;
  const shape = (spec.shape || []).map(Number);
  const n = count(shape);
  if (!(dtype in DTYPES)) throw new AdapterError(`input '${name}': unknown dtype '${dtype}'`);
  if (dtype === 'string') {
    if (!spec.pb) throw new AdapterError(`input '${name}': a string tensor needs its .pb`);
    const t = decodeTensor(fs.readFileSync(spec.pb));
    if (t.strings.length !== n) {
      throw new AdapterError(`input '${name}': ${t.strings.length} strings for shape [${shape}]`);
    }
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const strings = t.strings.map((s, i) => {
      try {
        return decoder.decode(s);
      } catch (e) {
        throw new Unsupported(`onnxruntime-web takes strings as JavaScript strings only: input `
          + `'${name}' holds bytes that are not UTF-8 (element ${i})`);
      }
    });
    return new ort.Tensor('string', strings, shape);
  }
  if (!(dtype in ORT)) {
    throw new Unsupported(`onnxruntime-web has no tensor type for ${dtype} (input '${name}')`);
  }
  const [ortType, Type] = ORT[dtype];
  let data = null;
  if (spec.pb) {
    const t = decodeTensor(fs.readFileSync(spec.pb));
    if (t.dataType !== DTYPES[dtype]) {
      throw new AdapterError(`input '${name}': ${spec.pb} holds ${NAME_OF_CODE[t.dataType] || t.dataType}, `
        + `the request says ${dtype}`);
    }
    if (t.dims.length !== shape.length || t.dims.some((d, i) => Number(d) !== shape[i])) {
      throw new AdapterError(`input '${name}': ${spec.pb} has dims [${t.dims}], the request says [${shape}]`);
    }
    if (!t.external && !t.segment) {
      if (t.raw !== null) {
        if (t.raw.length !== rawSize(dtype, n)) {
          throw new AdapterError(`input '${name}': ${t.raw.length} bytes of raw_data for ${n} ${dtype}s`);
        }
        data = typedFrom(Type, t.raw);
      } else {
        try {
          data = typedFields(t, dtype, n);
        } catch (e) {
          throw new AdapterError(`input '${name}': ${spec.pb}: ${e.message}`);
        }
      }
    }
  }
  if (data === null) {
    if (!spec.npy) throw new AdapterError(`input '${name}': neither its .pb nor a .npy is readable here`);
    const npy = readNpy(spec.npy);
    const stored = NPY[npy.descr];
    const codes = dtype === 'int4' || dtype === 'uint4';
    if (codes ? npy.descr !== (dtype === 'int4' ? '|i1' : '|u1') : stored !== dtype) {
      throw new AdapterError(`input '${name}': ${spec.npy} holds ${npy.descr} for ${dtype}`);
    }
    if (count(npy.shape) !== n) {
      throw new AdapterError(`input '${name}': ${spec.npy} has shape [${npy.shape}], the request says [${shape}]`);
    }
    data = codes ? pack4(npy.data) : typedFrom(Type, npy.data);
  }
  if (!LITTLE_ENDIAN && Type.BYTES_PER_ELEMENT > 1) {
    throw new AdapterError('a big-endian machine: ONNX data is little-endian');
  }
  return new ort.Tensor(ortType, data, shape);
}

// ---------------------------------------------------------------------------------------------
// Outputs.

/** A serialized TensorProto of one onnxruntime-web output. */
function outputBytes(tensor, name) {
  const dims = Array.from(tensor.dims, Number);
  if (tensor.type === 'string') {
    return encodeTensor(name, 'string', dims, null, tensor.data.map((s) => Buffer.from(s, 'utf8')));
  }
  const dtype = ONNX_OF_ORT[tensor.type];
  if (!dtype) throw new AdapterError(`output '${name}': no ONNX type for onnxruntime-web's '${tensor.type}'`);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (raw.length !== rawSize(dtype, count(dims))) {
    throw new AdapterError(`output '${name}': ${raw.length} bytes for ${dtype} of shape [${dims}]`);
  }
  return encodeTensor(name, dtype, dims, raw, null);
}

function writeOutputs(results, names, outputs, outputDir) {
  names.forEach((sessionName, k) => {
    const name = k < outputs.length ? outputs[k].name : sessionName;
    const tensor = results[sessionName];
    if (!tensor) return; // judged "wrote nothing" by the tool
    const file = path.join(outputDir, `output_${k}.pb`);
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, outputBytes(tensor, name));
    fs.renameSync(tmp, file);
  });
}

// ---------------------------------------------------------------------------------------------
// The runtime.

/** The name in a directory's package.json, or null. */
function packageName(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name;
  } catch (e) {
    return null;
  }
}

/** onnxruntime-web, from the first place that has it (see the header). */
function loadOrt(options) {
  const places = [];
  if (options.module_dir) places.push(path.resolve(options.module_dir));
  if (process.env.ONNX_IDX_CHECK_NODE_MODULES) places.push(path.resolve(process.env.ONNX_IDX_CHECK_NODE_MODULES));
  const tried = [];
  for (const dir of places) {
    for (const candidate of [path.join(dir, 'node_modules', PACKAGE), dir]) {
      if (packageName(candidate) === PACKAGE) {
        // eslint-disable-next-line import/no-dynamic-require
        return { ort: require(candidate), dir: candidate };
      }
    }
    tried.push(dir);
  }
  for (const from of [__dirname, process.cwd()]) {
    try {
      const resolved = require.resolve(PACKAGE, { paths: [from] });
      return { ort: require(resolved), dir: path.dirname(resolved) };
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') throw e;
      tried.push(from === __dirname ? `${from} (and NODE_PATH=${process.env.NODE_PATH || ''})` : from);
    }
  }
  throw new Error(`Cannot find the npm package '${PACKAGE}' (looked in ${tried.join(', ')}): `
    + `install it with 'npm install ${PACKAGE}@${PINNED}' in a directory DIR and pass `
    + `'--module-dir DIR' to this worker, or set ONNX_IDX_CHECK_NODE_MODULES=DIR or NODE_PATH=DIR/node_modules`);
}

const LEVELS = ['all', 'extended', 'basic', 'disabled'];
const IR_LIMIT = /max supported IR version: (\d+)/;

class Runtime {
  constructor(options) {
    const { ort } = loadOrt(options);
    this.ort = ort;
    if (!LEVELS.includes(options.optimization)) {
      throw new Error(`--optimization ${options.optimization}: one of ${LEVELS.join(', ')}`);
    }
    this.level = options.optimization;
    ort.env.logLevel = 'error';
    ort.env.wasm.numThreads = options.threads;
    this.sessions = new Map();
  }

  version() {
    return (this.ort.env.versions && this.ort.env.versions.web) || 'unknown';
  }

  sessionOptions() {
    return { executionProviders: ['wasm'], graphOptimizationLevel: this.level, logSeverityLevel: 3 };
  }

  /** The session of a model file, from the cache when the file has not changed. */
  async session(model) {
    const st = fs.statSync(model);
    const key = `${model}\0${st.size}\0${st.mtimeMs}`;
    if (this.sessions.has(key)) {
      const s = this.sessions.get(key);
      this.sessions.delete(key);
      this.sessions.set(key, s); // the most recent last
      return s;
    }
    const s = await this.create(model);
    this.sessions.set(key, s);
    while (this.sessions.size > CACHE_SIZE) {
      const [oldest, old] = this.sessions.entries().next().value;
      this.sessions.delete(oldest);
      await old.release().catch(() => {});
    }
    return s;
  }

  /** A session of the model, and when the runtime refuses its IR version as too new, of the
   * model's bytes with ir_version lowered to the highest it accepts. */
  async create(model) {
    try {
      return await this.ort.InferenceSession.create(model, this.sessionOptions());
    } catch (e) {
      const m = IR_LIMIT.exec(String(e && e.message));
      if (!m) throw e;
      const bytes = fs.readFileSync(model);
      const current = irVersion(bytes);
      const limit = Number(m[1]);
      if (current === null || current <= limit) throw e;
      process.stderr.write(`adapter: ${model}: IR version ${current} lowered to ${limit} for onnxruntime-web\n`);
      return this.ort.InferenceSession.create(setIrVersion(bytes, limit), this.sessionOptions());
    }
  }

  async run(request) {
    const session = await this.session(request.model);
    const feeds = {};
    for (const spec of request.inputs || []) feeds[spec.name] = readInput(this.ort, spec);
    const results = await session.run(feeds);
    return { results, names: session.outputNames };
  }
}

/** Whether an error is a trap of the WebAssembly code (after which its memory may be damaged
 * and Emscripten refuses further calls). */
function trapped(error) {
  return error instanceof WebAssembly.RuntimeError
    || (error instanceof Error && /^Aborted\(/.test(error.message));
}

async function handle(runtime, request) {
  const id = request.id === undefined ? null : request.id;
  try {
    const { results, names } = await runtime.run(request);
    try {
      writeOutputs(results, names, request.outputs || [], request.output_dir);
    } catch (e) {
      if (e instanceof AdapterError) throw e;
      throw new AdapterError(`writing outputs: ${describe(e)}`);
    }
  } catch (e) {
    if (trapped(e)) {
      process.stderr.write(`adapter: the WebAssembly module trapped on request ${id} `
        + `(${request.case}/${request.data_set}): ${describe(e)}\n${e.stack || ''}\n`);
      process.exit(TRAPPED);
    }
    if (e instanceof AdapterError) {
      process.stderr.write(`${e.stack}\n`);
      return { id, status: 'refused', message: `adapter: ${oneLine(e.message)}` };
    }
    if (e instanceof Unsupported) return { id, status: 'refused', message: oneLine(e.message) };
    return { id, status: 'refused', message: describe(e) };
  }
  return { id, status: 'done' };
}

/** --key value or --key=value, for the keys of `defaults` (dashes or underscores). */
function parseOptions(defaults, argv) {
  const options = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument '${arg}'`);
    let [key, ...rest] = arg.slice(2).split('=');
    let value = rest.join('=');
    if (!rest.length) {
      if (i + 1 >= argv.length) throw new Error(`--${key} needs a value`);
      value = argv[++i];
    }
    key = key.replace(/-/g, '_');
    if (!(key in options)) {
      const known = Object.keys(defaults).map((k) => `--${k.replace(/_/g, '-')}`).join(', ');
      throw new Error(`unknown option --${key} (known: ${known})`);
    }
    if (key === 'threads') {
      value = Number(value);
      if (!Number.isInteger(value) || value < 1) throw new Error('--threads must be a whole number, at least 1');
    }
    options[key] = value;
  }
  return options;
}

async function main() {
  let runtime;
  try {
    const options = parseOptions({ module_dir: null, threads: 1, optimization: 'all' }, process.argv.slice(2));
    runtime = new Runtime(options);
  } catch (e) {
    sendLine({ protocol: PROTOCOL, error: describe(e) });
    process.exit(1);
  }
  // `memory_safe` stays false: an index out of range may read or write out of bounds inside the
  // module's linear memory, which later requests share.
  sendLine({ protocol: PROTOCOL, runtime: 'onnxruntime-web', version: runtime.version(), threads: false, batches: true });

  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let request;
    try {
      request = JSON.parse(line);
      if (request === null || typeof request !== 'object' || Array.isArray(request)) {
        throw new Error('a request is a JSON object');
      }
    } catch (e) {
      sendLine({ id: null, status: 'refused', message: `adapter: bad request: ${oneLine(e.message)}` });
      continue;
    }
    sendLine(await handle(runtime, request));
  }
  // The WebAssembly threads (with --threads) would keep Node alive after the end of input.
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`adapter: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
