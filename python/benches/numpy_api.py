#!/usr/bin/env python3
"""The numpy API's speed beside `onnx-idx-check bench` and ONNX's reference evaluator.

usage: numpy_api.py WORKDIR --ours BINARY [--rounds N] [--iters N] [--only W1,W3] [--reference W3,W5,W6]
                    [--json FILE]

WORKDIR holds the workloads W1..W9 that ../shared/tools/perf/make_workloads.py writes (ordinary
node-test cases). For each workload, in one process and interleaved round by round:
  numpy-api   onnx_idx_check.evaluate() on the case's inputs as numpy arrays, with the node's
              attributes and the model's opset: what a Python user calls, conversions in and
              out included (inputs are read in place where numpy's layout allows; the output
              is handed to numpy without a copy). Timed as `bench` times the kernel: each
              round warms up as `bench` does (2 calls and 0.2 s at least), then takes the
              median of --iters calls in a row, each output freed outside the timing; the
              figure is the median of the rounds.
  reference   onnx.reference.ReferenceEvaluator(model).run() with onnx's own kernels, on the
              workloads of --reference (default W3, W5, W6); fewer rounds, it is slow.
  bench       `BINARY bench CASE --iters 5 --format json` -> median_ns: the kernel alone on
              tensors already loaded, as the command line measures it. Run between rounds.
Every output is checked against the case's expected output. Prints the table and the ratios
numpy-api / bench (target <= 1.2) and reference / numpy-api (target >= 10).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import onnx_idx_check as oic


def load_case(d):
    model = onnx.load(os.path.join(d, "model.onnx"))
    ds = os.path.join(d, "test_data_set_0")
    ins = [
        numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, f"input_{k}.pb")))
        for k in range(len(model.graph.input))
    ]
    expected = numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, "output_0.pb")))
    return model, ins, expected


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def timed(f) -> float:
    t = time.perf_counter()
    out = f()
    elapsed = time.perf_counter() - t
    del out  # freeing the output is not part of the work, as in `bench`
    return elapsed


def warm(f, runs: int = 2, seconds: float = 0.2) -> None:
    """Untimed calls first, as `bench` makes them (--warmup 2, --warmup-ms 200): at least `runs`,
    and more until `seconds` have passed. Right after another process (the `bench` of the round
    before) a memory-bound call runs slowly for tens of milliseconds: W9 at 3.7 ms against 1.7."""
    start = time.perf_counter()
    done = 0
    while done < runs or time.perf_counter() - start < seconds:
        del_out = f()
        del del_out
        done += 1


def timed_median(f, iters: int) -> float:
    warm(f)
    return statistics.median(timed(f) for _ in range(iters))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdir")
    ap.add_argument("--ours", required=True, help="the onnx-idx-check binary (for `bench`)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=5, help="calls in a row per round (bench's --iters)")
    ap.add_argument("--only", default="")
    ap.add_argument("--reference", default="W3,W5,W6")
    ap.add_argument("--reference-rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    with open(os.path.join(args.workdir, "workloads.json")) as f:
        workloads = json.load(f)
    only = {w for w in args.only.split(",") if w}
    with_ref = {w for w in args.reference.split(",") if w}
    rows = []
    for w in workloads.values():
        wid = w["id"]
        if only and wid not in only:
            continue
        d = os.path.join(args.workdir, w["dir"])
        model, ins, expected = load_case(d)
        node = model.graph.node[0]
        opset = {o.domain: o.version for o in model.opset_import}[node.domain]
        attrs = [(a.name, a.SerializeToString()) for a in node.attribute]

        def api():
            return oic.evaluate(node.domain, node.op_type, opset, ins, attrs)[0]

        got = api()
        assert got.dtype == expected.dtype and np.array_equal(got, expected), f"{wid}: numpy API output differs"
        ref = ReferenceEvaluator(model) if wid in with_ref else None
        feeds = {vi.name: a for vi, a in zip(model.graph.input, ins)}
        ref_ok = None
        ref_error = None

        def reference():
            try:
                return ref.run(None, feeds)[0]
            except Exception as e:  # noqa: BLE001 - onnx's kernels fail on some workloads
                return e

        if ref is not None:
            r = reference()
            if isinstance(r, Exception):
                # Timed anyway: the evaluator does its work before it fails (W3: its
                # GatherElements cannot reshape its result once the axis is 64 or longer).
                ref_error = f"{type(r).__name__}: {r}"
            else:
                ref_ok = bool(np.array_equal(r, expected))
        api_t, ref_t, bench_t = [], [], []
        for rnd in range(args.rounds):
            api_t.append(timed_median(api, args.iters))
            if ref is not None and rnd < args.reference_rounds:
                ref_t.append(timed(reference))
            if rnd % 2 == 0:
                out = subprocess.run(
                    [args.ours, "bench", d, "--iters", str(args.iters), "--format", "json"],
                    capture_output=True, text=True, check=True,
                )
                bench_t.append(json.loads(out.stdout)["median_ns"] / 1e9)
        row = {
            "id": wid,
            "name": w["name"],
            "numpy_api_s": statistics.median(api_t),
            "bench_s": statistics.median(bench_t),
            "reference_s": statistics.median(ref_t) if ref_t else None,
            "reference_correct": ref_ok,
            "reference_error": ref_error,
            "loadavg": os.getloadavg()[0],
        }
        row["api_over_bench"] = row["numpy_api_s"] / row["bench_s"]
        if row["reference_s"]:
            row["reference_over_api"] = row["reference_s"] / row["numpy_api_s"]
        rows.append(row)
        print(
            f"{wid:3} {w['name']:24} numpy-api {row['numpy_api_s']*1e3:9.2f} ms  bench {row['bench_s']*1e3:9.2f} ms"
            f"  api/bench {row['api_over_bench']:5.2f}"
            + (
                f"  reference {row['reference_s']*1e3:10.1f} ms ({row['reference_s']/row['numpy_api_s']:6.1f}x"
                f"{'' if ref_ok else ', raised ' + ref_error if ref_error else ', WRONG output'})"
                if row["reference_s"]
                else ""
            ),
            flush=True,
        )
    doc = {"cpu": cpu_name(), "python": sys.version.split()[0], "version": oic.__version__, "rows": rows}
    print(f"CPU: {doc['cpu']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
