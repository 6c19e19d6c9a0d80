"""Case container, writer and the single-node case builder."""
import os
import shutil
import numpy as np
import onnx
from onnx import helper as H, TensorProto as TP
from lib import (tensor, vi, make_model, evaluate, SpecError, Unsupported, DTYPES, COMPLEX, npdt)

OPNAME = {'Gather': 'gather', 'GatherElements': 'gather_elements',
          'ScatterElements': 'scatter_elements', 'Scatter': 'scatter'}
MISSING = object()


class Case:
    def __init__(self, name, status, why, model, datasets, extras=(), ort=None, firm=True):
        assert status in ('passed', 'failed', 'errored', 'skipped'), status
        self.name, self.status, self.why = name, status, why
        self.model, self.datasets, self.extras = model, datasets, list(extras)
        self.ort, self.firm = ort, firm


CASES = []
NAMES = set()


def add(case):
    assert case.name not in NAMES, case.name
    NAMES.add(case.name)
    CASES.append(case)
    return case


def _bytes(x):
    if isinstance(x, (bytes, bytearray)):
        return bytes(x)
    return x.SerializeToString()


def write_case(root, c):
    d = os.path.join(root, c.name)
    if os.path.lexists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    with open(os.path.join(d, 'model.onnx'), 'wb') as f:
        f.write(_bytes(c.model))
    for n, ds in enumerate(c.datasets):
        dd = os.path.join(d, 'test_data_set_%d' % n)
        os.makedirs(dd)
        for kind in ('inputs', 'outputs'):
            for k, item in enumerate(ds[kind]):
                if item is MISSING:
                    continue
                fn = os.path.join(dd, '%s_%d.pb' % (kind[:-1], k))
                with open(fn, 'wb') as f:
                    f.write(_bytes(item))
    for ex in c.extras:
        kind, rel = ex[0], ex[1]
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if kind == 'file':
            with open(p, 'wb') as f:
                f.write(ex[2])
        elif kind == 'symlink':
            os.symlink(ex[2], p)
        elif kind == 'hardlink':
            os.link(os.path.join(d, ex[2]) if not os.path.isabs(ex[2]) else ex[2], p)
        elif kind == 'dir':
            os.makedirs(p, exist_ok=True)
        else:
            raise ValueError(kind)


class Feed:
    def __init__(self, name, a, dt, how='input', form='raw'):
        self.name, self.a, self.dt, self.how, self.form = name, a, dt, how, form


def feed_nodes(feeds):
    """Returns (graph inputs vi, input tensors, initializers, constant nodes)."""
    gin, itens, inits, nodes = [], [], [], []
    for f in feeds:
        if f.how == 'input':
            gin.append(vi(f.name, f.dt, f.a.shape))
            itens.append(tensor(f.a, f.dt, f.name, f.form))
        elif f.how == 'init':
            inits.append(tensor(f.a, f.dt, f.name, f.form))
        elif f.how == 'const':
            nodes.append(H.make_node('Constant', [], [f.name], value=tensor(f.a, f.dt, '', f.form)))
        elif f.how == 'const_ints':
            n = H.make_node('Constant', [], [f.name])
            n.attribute.append(H.make_attribute('value_ints', [int(x) for x in f.a.reshape(-1)],
                                                attr_type=onnx.AttributeProto.INTS))
            nodes.append(n)
        elif f.how == 'const_int':
            nodes.append(H.make_node('Constant', [], [f.name], value_int=int(f.a)))
        elif f.how == 'const_floats':
            nodes.append(H.make_node('Constant', [], [f.name], value_floats=[float(x) for x in f.a.reshape(-1)]))
        elif f.how == 'const_float':
            nodes.append(H.make_node('Constant', [], [f.name], value_float=float(f.a)))
        else:
            raise ValueError(f.how)
    return gin, itens, inits, nodes


def ort_feeds_ok(feeds):
    for f in feeds:
        if f.dt in ('bfloat16',) or f.dt in COMPLEX:
            return False
        if f.dt == 'string':
            try:
                [x.decode('utf-8') for x in f.a.reshape(-1)]
            except UnicodeDecodeError:
                return False
    return True


def ort_array(f):
    if f.dt == 'string':
        a = np.empty(f.a.shape, dtype=object)
        for i in np.ndindex(*f.a.shape):
            a[i] = f.a[i].decode('utf-8')
        return a
    return f.a


def node_case(cat, op, opset, what, feeds, attrs=None, *, expect=None, why=None, tamper=None,
              identity_after=0, out_form='raw', domain='', opsets=None, compute=True, firm=True,
              extra_datasets=(), ir=None, name=None, ort=True, node_inputs=None, out_dt=None, ref=None):
    """Single-node case. The verdict comes from lib.evaluate (my own model of docs/semantics.md);
    `expect` must agree with it (a guard against construction mistakes) unless compute=False.
    tamper(out_array, dt) -> (tensor_proto, status, why) changes the expected output file."""
    attrs = dict(attrs or {})
    arrays = [f.a for f in feeds]
    dts = [f.dt for f in feeds]
    dt0 = dts[0] if dts else 'float'
    out, red = None, False
    if compute:
        try:
            out, red = (ref(arrays, dts, attrs) if ref is not None else evaluate(op, opset, arrays, dts, attrs))
            status, cwhy = 'passed', 'computed by numpy reference'
        except SpecError as e:
            status, cwhy = 'errored', str(e)
        except Unsupported as e:
            status, cwhy = 'skipped', str(e)
        if expect is not None and expect != status:
            raise AssertionError('%s: intended %s but model says %s (%s)' % (what, expect, status, cwhy))
    else:
        status, cwhy = expect, why
    why = why or cwhy
    gin, itens, inits, nodes = feed_nodes(feeds)
    names = node_inputs if node_inputs is not None else [f.name for f in feeds]
    ydt = out_dt or dt0
    yname = 'y' if not identity_after else 'y0'
    nodes.append(H.make_node(op, names, [yname], domain=domain, **attrs))
    for i in range(identity_after):
        nxt = 'y' if i == identity_after - 1 else 'y%d' % (i + 1)
        nodes.append(H.make_node('Identity', [yname], [nxt]))
        yname = nxt
    gout = [vi('y', ydt, None if out is None else out.shape)]
    model = make_model(nodes, gin, gout, inits, opsets or (('', opset),), ir=ir)
    if out is not None:
        otens = tensor(out, ydt, 'y', out_form)
    else:
        otens = tensor(arrays[0] if arrays else np.zeros(1, np.float32), ydt, 'y')
    if tamper is not None:
        otens, status, why = tamper(out, ydt)
    datasets = [{'inputs': itens, 'outputs': [otens]}]
    datasets += list(extra_datasets)
    nm = name or '%s__%s_v%d_%s' % (cat, OPNAME.get(op, op.lower()), opset, what)
    ortinfo = None
    if ort and status == 'passed' and out is not None and ort_feeds_ok(feeds) and ydt not in COMPLEX \
            and ydt != 'bfloat16' and not extra_datasets:
        ortinfo = {'feeds': {f.name: ort_array(f) for f in feeds if f.how == 'input'},
                   'expected': [out], 'reduction': red, 'dt': ydt}
    return add(Case(nm, status, why, model, datasets, ort=ortinfo, firm=firm))
