#!/usr/bin/env python3
"""Informational: what ORT does with each case I expect to be errored (violation*, skipped*)."""
import os as _os
HERE = _os.path.dirname(_os.path.abspath(__file__))
TOOL_PATH = _os.path.join(HERE, '..', '..', 'target', 'release', 'onnx-idx-check')

import glob, json, os, warnings
import numpy as np, onnx, onnxruntime as ort
from onnx import numpy_helper as NH
warnings.filterwarnings('ignore')
exp = json.load(open(_os.path.join(HERE, 'expected.json')))
out = {}
so = ort.SessionOptions(); so.log_severity_level = 4
for name, e in sorted(exp.items()):
    if not name.split('__')[0] in ('violation', 'xviolation'):
        continue
    d = os.path.join(_os.path.join(HERE, 'cases'), name)
    try:
        m = onnx.load(os.path.join(d, 'model.onnx'))
        ins = [NH.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(d + '/test_data_set_0/input_*.pb'))]
        sess = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'])
        feeds = {i.name: a for i, a in zip(sess.get_inputs(), ins)}
        sess.run(None, feeds)
        out[name] = 'ORT ACCEPTS'
    except Exception as ex:
        out[name] = 'ort rejects: ' + str(ex).splitlines()[0][:160]
json.dump(out, open(_os.path.join(HERE, 'ort_violations.json'), 'w'), indent=1)
acc = [k for k, v in out.items() if v == 'ORT ACCEPTS']
print(len(out), 'violation cases run through ORT;', len(acc), 'accepted by ORT:')
for k in acc:
    print('  ', k)
