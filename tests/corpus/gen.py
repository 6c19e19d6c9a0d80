#!/usr/bin/env python3
"""Build the verification corpus in tests/corpus/cases, expected.json and ort_report.json.

Usage: python3 gen.py [--no-ort]
Verdicts come from lib.py (my reading of docs/semantics.md) and the per-case intent in
gen_*.py, never from onnx-idx-check. ORT (where it can run) cross-checks the numpy outputs.
"""
import json
import os
import shutil
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.filterwarnings('ignore')
import casekit  # noqa: E402
import gen_valid, gen_storage, gen_tampered, gen_violation, gen_malformed, gen_skipped, gen_deep, gen_extra, gen_robust  # noqa: E402

ROOT = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(ROOT, 'cases')


def ort_check(c):
    import onnxruntime as ort
    info = c.ort
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 3
        sess = ort.InferenceSession(c.model.SerializeToString(), so, providers=['CPUExecutionProvider'])
        got = sess.run(None, info['feeds'])
    except Exception as e:  # noqa: BLE001
        return {'result': 'ort_error', 'detail': str(e).splitlines()[0][:300]}
    diffs = []
    for k, (g, e) in enumerate(zip(got, info['expected'])):
        g = np.asarray(g)
        if g.shape != e.shape:
            diffs.append('output %d shape ort %s numpy %s' % (k, g.shape, e.shape))
            continue
        if e.dtype == object:
            ge = [x.encode() if isinstance(x, str) else x for x in g.reshape(-1)]
            if ge != list(e.reshape(-1)):
                diffs.append('output %d strings differ: ort %r numpy %r' % (k, ge[:6], list(e.reshape(-1))[:6]))
            continue
        if g.dtype != e.dtype:
            diffs.append('output %d dtype ort %s numpy %s' % (k, g.dtype, e.dtype))
            continue
        if e.dtype.kind == 'f':
            gn, en = np.isnan(g), np.isnan(e)
            if info['reduction']:
                with np.errstate(all='ignore'):
                    gf, ef = g.astype(np.float64), e.astype(np.float64)
                    ok = (gn & en) | (~gn & ~en & ((gf == ef) | (np.abs(gf - ef) <= 1e-7 + 1e-3 * np.abs(ef))))
            else:
                bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[e.dtype.itemsize]
                ok = (gn & en) | (g.view(bits) == e.view(bits))
            if not ok.all():
                pos = np.argwhere(~ok)[:4].tolist()
                diffs.append('output %d differs at %s: ort %s numpy %s' % (
                    k, pos, [g[tuple(p)] for p in pos], [e[tuple(p)] for p in pos]))
        elif not np.array_equal(g, e):
            pos = np.argwhere(g != e)[:4].tolist()
            diffs.append('output %d differs at %s: ort %s numpy %s' % (
                k, pos, [g[tuple(p)] for p in pos], [e[tuple(p)] for p in pos]))
    return {'result': 'disagree' if diffs else 'agree', 'detail': '; '.join(diffs)}


def main():
    for mod in (gen_valid, gen_storage, gen_tampered, gen_violation, gen_malformed, gen_skipped, gen_deep, gen_extra, gen_robust):
        mod.build()
    if os.path.exists(CASES):
        shutil.rmtree(CASES)
    os.makedirs(CASES)
    for stray in ('outside_init.bin',):
        pass
    with open(os.path.join(ROOT, 'abs_target.bin'), 'wb') as f:
        f.write(b'\0' * 24)
    for c in casekit.CASES:
        casekit.write_case(CASES, c)
    exp = {c.name: {'status': c.status, 'why': c.why, 'firm': c.firm} for c in casekit.CASES}
    with open(os.path.join(ROOT, 'expected.json'), 'w') as f:
        json.dump(exp, f, indent=1, sort_keys=True)
    counts = {}
    for c in casekit.CASES:
        cat = c.name.split('__')[0]
        counts.setdefault(cat, {}).setdefault(c.status, 0)
        counts[cat][c.status] += 1
    print('cases:', len(casekit.CASES), json.dumps(counts))
    if '--no-ort' not in sys.argv:
        rep = {}
        for c in casekit.CASES:
            if c.ort:
                rep[c.name] = ort_check(c)
        with open(os.path.join(ROOT, 'ort_report.json'), 'w') as f:
            json.dump(rep, f, indent=1, sort_keys=True)
        tally = {}
        for v in rep.values():
            tally[v['result']] = tally.get(v['result'], 0) + 1
        print('ORT cross-check:', tally)


if __name__ == '__main__':
    main()
