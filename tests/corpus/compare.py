#!/usr/bin/env python3
"""Run onnx-idx-check over tests/corpus/cases and diff its statuses against expected.json.

Usage: python3 compare.py [--no-run]
Writes report.json (the tool's), stderr.txt, and diff.json (mismatches + reason audit).
"""
import os as _os
HERE = _os.path.dirname(_os.path.abspath(__file__))
TOOL_PATH = _os.path.join(HERE, '..', '..', 'target', 'release', 'onnx-idx-check')

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
TOOL = TOOL_PATH


def main():
    if '--no-run' not in sys.argv:
        p = subprocess.run([TOOL, 'run', os.path.join(ROOT, 'cases'), '--format', 'json', '--output',
                            os.path.join(ROOT, 'report.json')], capture_output=True, text=True)
        with open(os.path.join(ROOT, 'stderr.txt'), 'w') as f:
            f.write(p.stderr)
        with open(os.path.join(ROOT, 'stdout.txt'), 'w') as f:
            f.write(p.stdout)
        print('exit code', p.returncode, '| panicked in stderr:', 'panicked' in p.stderr + p.stdout)
    exp = json.load(open(os.path.join(ROOT, 'expected.json')))
    rep = json.load(open(os.path.join(ROOT, 'report.json')))
    act = {c['name']: c for c in rep['cases']}
    cats = {}
    mism = []
    for name, e in sorted(exp.items()):
        cat = name.split('__')[0]
        cs = cats.setdefault(cat, {'total': 0, 'match': 0})
        cs['total'] += 1
        a = act.get(name)
        if a is None:
            mism.append({'case': name, 'expected': e['status'], 'actual': 'MISSING', 'reason': None, 'why': e['why']})
            continue
        if a['status'] == e['status']:
            cs['match'] += 1
        else:
            mism.append({'case': name, 'expected': e['status'], 'actual': a['status'], 'reason': reason_of(a),
                         'why': e['why'], 'firm': e.get('firm', True)})
    extra = sorted(set(act) - set(exp))
    # reason audit: every non-pass needs a reason
    vague = []
    for name, a in act.items():
        if a['status'] != 'passed':
            r = reason_of(a)
            if not r or len(r) < 25:
                vague.append({'case': name, 'status': a['status'], 'reason': r})
    json.dump({'categories': cats, 'mismatches': mism, 'unexpected_cases': extra, 'short_reasons': vague},
              open(os.path.join(ROOT, 'diff.json'), 'w'), indent=1)
    for k, v in cats.items():
        print('%-10s %3d/%3d match' % (k, v['match'], v['total']))
    print('mismatches:', len(mism), '| cases the tool found that I did not write:', extra)
    for m in mism:
        print('\n* %s  expected=%s actual=%s\n  mine: %s\n  tool: %s' % (m['case'], m['expected'], m['actual'], m['why'], m['reason']))
    print('\nshort/missing reasons:', vague)


def reason_of(a):
    r = a.get('reason')
    if r:
        return r
    parts = []
    for ds in a.get('data_sets') or []:
        if ds.get('reason'):
            parts.append('%s: %s' % (ds['name'], ds['reason']))
        for o in ds.get('outputs') or []:
            if o.get('status') != 'passed':
                parts.append('%s/%s: %s mismatches, first %s' % (ds['name'], o.get('name'), o.get('mismatches'),
                                                                  (o.get('first_mismatches') or [])[:2]))
    return ' | '.join(parts) or None


if __name__ == '__main__':
    main()
