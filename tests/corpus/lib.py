"""Shared pieces of the independent verification corpus for onnx-idx-check.

Everything here is written from docs/semantics.md only: dtype tables, TensorProto
construction (raw / typed storage), and numpy reference kernels with the spec checks of
decisions D1-D9. Nothing here runs onnx-idx-check.
"""
import numpy as np
import ml_dtypes
import onnx
from onnx import helper as H, TensorProto as TP

BF16 = np.dtype(ml_dtypes.bfloat16)

DTYPES = {
    'bool': (TP.BOOL, np.dtype(np.bool_)),
    'int8': (TP.INT8, np.dtype(np.int8)),
    'int16': (TP.INT16, np.dtype(np.int16)),
    'int32': (TP.INT32, np.dtype(np.int32)),
    'int64': (TP.INT64, np.dtype(np.int64)),
    'uint8': (TP.UINT8, np.dtype(np.uint8)),
    'uint16': (TP.UINT16, np.dtype(np.uint16)),
    'uint32': (TP.UINT32, np.dtype(np.uint32)),
    'uint64': (TP.UINT64, np.dtype(np.uint64)),
    'float16': (TP.FLOAT16, np.dtype(np.float16)),
    'float': (TP.FLOAT, np.dtype(np.float32)),
    'double': (TP.DOUBLE, np.dtype(np.float64)),
    'string': (TP.STRING, np.dtype(object)),
    'complex64': (TP.COMPLEX64, np.dtype(np.complex64)),
    'complex128': (TP.COMPLEX128, np.dtype(np.complex128)),
    'bfloat16': (TP.BFLOAT16, BF16),
}
CLASSIC15 = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
             'float16', 'float', 'double', 'string', 'complex64', 'complex128']
INTS = ['int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64']
FLOATS = ['float16', 'float', 'double', 'bfloat16']
COMPLEX = ['complex64', 'complex128']


def npdt(dt):
    return DTYPES[dt][1]


def arr(values, dt, shape=None):
    """numpy array of logical dtype dt (strings: object array of bytes)."""
    if dt == 'string':
        vals = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
        a = np.empty(len(vals), dtype=object)
        a[:] = vals
    elif isinstance(values, np.ndarray):
        a = values.astype(npdt(dt))
    else:
        a = np.array(values, dtype=npdt(dt))
    if shape is not None:
        a = a.reshape(shape)
    return a


# ----------------------------------------------------------------------------------------------
# TensorProto construction
def tensor(a, dt, name='', form='raw'):
    """TensorProto of numpy array a (logical dtype dt). form: 'raw' or 'typed'. Zero-size tensors
    get no data field at all."""
    a = np.asarray(a)
    t = TP()
    t.name = name
    t.data_type = DTYPES[dt][0]
    t.dims.extend(int(d) for d in a.shape)
    if a.size == 0:
        return t
    flat = a.reshape(-1)
    if dt == 'string':
        form = 'typed'
    if form == 'raw':
        if dt == 'bool':
            b = flat.astype(np.uint8).tobytes()
        elif dt == 'bfloat16':
            b = flat.view(np.uint16).astype('<u2').tobytes()
        else:
            b = flat.astype(flat.dtype.newbyteorder('<')).tobytes()
        t.raw_data = b
        return t
    if dt in ('float', 'complex64'):
        t.float_data.extend(flat.astype(npdt(dt)).view(np.float32).tolist())
    elif dt in ('double', 'complex128'):
        t.double_data.extend(flat.astype(npdt(dt)).view(np.float64).tolist())
    elif dt in ('int8', 'int16', 'int32', 'uint8', 'uint16', 'bool'):
        t.int32_data.extend(int(x) for x in flat.astype(np.int64).tolist())
    elif dt in ('float16', 'bfloat16'):
        t.int32_data.extend(int(x) for x in flat.view(np.uint16).tolist())
    elif dt == 'int64':
        t.int64_data.extend(int(x) for x in flat.tolist())
    elif dt in ('uint32', 'uint64'):
        t.uint64_data.extend(int(x) for x in flat.tolist())
    elif dt == 'string':
        t.string_data.extend(flat.tolist())
    else:
        raise ValueError(dt)
    return t


def vi(name, dt, shape):
    et = DTYPES[dt][0] if isinstance(dt, str) else dt
    return H.make_tensor_value_info(name, et, None if shape is None else list(shape))


def make_model(nodes, inputs, outputs, inits=(), opsets=(('', 13),), ir=None):
    g = H.make_graph(nodes, 'corpus_graph', inputs, outputs, initializer=list(inits))
    ops = [H.make_opsetid(d, v) for d, v in opsets]
    m = H.make_model(g, opset_imports=ops, producer_name='corpus-gen')
    if ir is None:
        default = [v for d, v in opsets if d in ('', 'ai.onnx')]
        ir = H.find_min_ir_version_for([H.make_opsetid('', min(max(default[0], 1), 25))]) if default else 8
        if inits:
            ir = max(ir, 4)
    m.ir_version = ir
    return m


# ----------------------------------------------------------------------------------------------
# Reference semantics (docs/semantics.md sections 2-3, D1-D8)
class SpecError(Exception):
    """The case must be errored."""


class Unsupported(Exception):
    """The case must be skipped."""


SINCE = {'Gather': [1, 11, 13], 'GatherElements': [11, 13], 'ScatterElements': [11, 13, 16, 18],
         'Scatter': [9]}


def kernel_version(op, opset):
    if op == 'Scatter' and opset >= 11:
        raise SpecError('Scatter is deprecated at opset %d (>= 11) (D5)' % opset)
    vs = [v for v in SINCE[op] if v <= opset]
    if not vs:
        raise SpecError('%s does not exist at opset %d (D1)' % (op, opset))
    return max(vs)


def allowed_T(op, kv):
    s = set(CLASSIC15)
    if op != 'Scatter' and kv >= 13:
        s.add('bfloat16')
    return s


def spec_check(op, opset, dts, attrs):
    """dts: logical dtypes of the inputs; attrs: dict. Returns kernel version; raises."""
    kv = kernel_version(op, opset)
    n_in = {'Gather': 2, 'GatherElements': 2, 'ScatterElements': 3, 'Scatter': 3}[op]
    if len(dts) != n_in:
        raise SpecError('%s takes %d inputs, got %d' % (op, n_in, len(dts)))
    if dts[0] not in allowed_T(op, kv):
        raise SpecError('data dtype %s not allowed by %s-%d (D4)' % (dts[0], op, kv))
    if dts[1] not in ('int32', 'int64'):
        raise SpecError('indices dtype %s not allowed (D4)' % dts[1])
    if n_in == 3 and dts[2] != dts[0]:
        raise SpecError('updates dtype %s differs from data dtype %s (D4)' % (dts[2], dts[0]))
    known = {'axis'}
    if op == 'ScatterElements' and kv >= 16:
        known.add('reduction')
    for k, v in attrs.items():
        if k not in known:
            raise SpecError('attribute %r not defined by %s-%d (D5)' % (k, op, kv))
        if k == 'axis' and not isinstance(v, int):
            raise SpecError('axis must be an int attribute')
        if k == 'reduction':
            if not isinstance(v, str):
                raise SpecError('reduction must be a string attribute')
            ok = {'none', 'add', 'mul'} | ({'max', 'min'} if kv >= 18 else set())
            if v not in ok:
                raise SpecError('reduction %r not allowed by %s-%d (D5)' % (v, op, kv))
    red = attrs.get('reduction', 'none')
    if red != 'none':
        dt = dts[0]
        if dt == 'string' and red != 'add':
            raise Unsupported('string reduction %s (D8)' % red)
        if dt == 'bool' and red in ('max', 'min'):
            raise Unsupported('bool reduction %s (D8)' % red)
        if dt in COMPLEX and red in ('max', 'min'):
            raise Unsupported('complex reduction %s (D8)' % red)
    return kv


def norm_axis(axis, r):
    if not -r <= axis < r:
        raise SpecError('axis %d out of range for rank %d' % (axis, r))
    return axis + r if axis < 0 else axis


def norm_index(k, s, allow_neg):
    k = int(k)
    if k < 0:
        if not allow_neg:
            raise SpecError('negative index %d before opset 11 (D2)' % k)
        k += s
    if not 0 <= k < s:
        raise SpecError('index out of range (D3)')
    return k


def ref_gather(data, idx, axis=0, allow_neg=True):
    if data.ndim < 1:
        raise SpecError('Gather data must have rank >= 1')
    a = norm_axis(axis, data.ndim)
    s = data.shape[a]
    flat = [norm_index(k, s, allow_neg) for k in idx.reshape(-1).tolist()]
    nidx = np.array(flat, dtype=np.int64).reshape(idx.shape)
    out = np.take(data, nidx, axis=a)
    if not isinstance(out, np.ndarray):
        o = np.empty((), dtype=data.dtype)
        o[()] = out
        out = o
    return out


def _elem_shape_check(data, idx, axis):
    r = data.ndim
    if r < 1:
        raise SpecError('rank(data) must be >= 1')
    if idx.ndim != r:
        raise SpecError('rank mismatch (D6)')
    a = norm_axis(axis, r)
    for d in range(r):
        if d != a and idx.shape[d] > data.shape[d]:
            raise SpecError('indices dim %d > data dim (D6)' % d)
    return a


def ref_gather_elements(data, idx, axis=0):
    a = _elem_shape_check(data, idx, axis)
    s = data.shape[a]
    out = np.empty(idx.shape, dtype=data.dtype)
    for pos in np.ndindex(*idx.shape):
        k = norm_index(idx[pos], s, True)
        src = list(pos)
        src[a] = k
        out[pos] = data[tuple(src)]
    return out


def wrap_int(v, dt):
    bits = npdt(dt).itemsize * 8
    if dt.startswith('u'):
        return v % (1 << bits)
    return (v + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))


def combine(dt, red, cur, upd):
    if red == 'none':
        return upd
    if dt in INTS:
        a, b = int(cur), int(upd)
        r = {'add': a + b, 'mul': a * b, 'max': max(a, b), 'min': min(a, b)}[red]
        return npdt(dt).type(wrap_int(r, dt))
    if dt == 'bool':
        return {'add': bool(cur) or bool(upd), 'mul': bool(cur) and bool(upd)}[red]
    if dt == 'string':
        assert red == 'add'
        return cur + upd
    if dt in COMPLEX:
        c = npdt(dt).type
        return c(c(cur) + c(upd)) if red == 'add' else c(c(cur) * c(upd))
    work = np.float64 if dt == 'double' else np.float32
    a, b = work(cur), work(upd)
    with np.errstate(all='ignore'):
        if red == 'add':
            r = a + b
        elif red == 'mul':
            r = a * b
        elif np.isnan(a) or np.isnan(b):
            r = work(np.nan)
        elif red == 'max':
            r = a if a >= b else b
        else:
            r = a if a <= b else b
    return npdt(dt).type(r)


def ref_scatter_elements(data, idx, upd, axis=0, reduction='none', allow_neg=True, dt=None):
    a = _elem_shape_check(data, idx, axis)
    if upd.shape != idx.shape:
        raise SpecError('updates shape != indices shape (D6)')
    s = data.shape[a]
    norm = {}
    for pos in np.ndindex(*idx.shape):   # validate everything first (D3)
        norm[pos] = norm_index(idx[pos], s, allow_neg)
    out = data.copy()
    for pos in np.ndindex(*idx.shape):
        t = list(pos)
        t[a] = norm[pos]
        t = tuple(t)
        out[t] = combine(dt, reduction, out[t], upd[pos])
    return out


def evaluate(op, opset, arrays, dts, attrs):
    """Full expected behaviour of a single node. Returns (output array, is_reduction)."""
    kv = spec_check(op, opset, dts, attrs)
    axis = attrs.get('axis', 0)
    if op == 'Gather':
        return ref_gather(arrays[0], arrays[1], axis, allow_neg=kv >= 11), False
    if op == 'GatherElements':
        return ref_gather_elements(arrays[0], arrays[1], axis), False
    if op == 'Scatter':
        return ref_scatter_elements(arrays[0], arrays[1], arrays[2], axis, 'none', allow_neg=False,
                                    dt=dts[0]), False
    red = attrs.get('reduction', 'none')
    return ref_scatter_elements(arrays[0], arrays[1], arrays[2], axis, red, True, dts[0]), red != 'none'
