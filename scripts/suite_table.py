#!/usr/bin/env python3
"""Tables of what a generated suite finds in runtimes, in Markdown.

Usage: python3 scripts/suite_table.py SUITE --run REPORT.json [DST] [--run REPORT.json [DST] ...]
       [--cases]

SUITE is a directory `onnx-idx-check generate` wrote (its MANIFEST.json gives per case the
operator, version, dtype, traits and whether the spec requires an error). For each runtime,
REPORT.json is either

- `onnx-idx-check run SUITE --runtime NAME --format json --output REPORT.json` on its own: the
  report names the runtime (`runtime.name`, `runtime.version`) and its `fault` fields say which
  cases the runtime refused, crashed on or timed out on (a valid case it refused that passes all
  the same, duplicate indices under reduction `none`, which a runtime may refuse, counts as
  passed, as the report says); or
- `onnx-idx-check run SUITE --actual DST --format json --output REPORT.json` followed by DST, the
  tree a scripts/*_outputs.py script wrote, with its sidecar DST/_runtime.json (the runtime's
  name and version, and per case ok, refused, crashed or timeout); DST may also name the sidecar.

A report of several runtimes (several `--runtime` flags in one run) is refused: give each runtime
its own run and report. Prints:

- per runtime, one row: valid cases passed, failed, errored, refused (a case the spec allows
  that the runtime refused), crashed or timed out; cases the spec requires an error for: refused
  as required, or an output produced anyway;
- failed cases by trait (only traits with a failure in some runtime);
- failed cases by diagnosis class (the first of `outputs[].diagnoses`; `(none)` when no class
  reproduces the wrong output);
- with --cases, the failed, errored and crashed cases per runtime with their diagnosis or message.

Needs only the standard library. Exit status 0, or 2 for an unreadable or inconsistent input.
"""

import argparse
import collections
import json
import pathlib
import sys

SIDECAR = "_runtime.json"

SUMMARY_COLUMNS = [
    ("passed", "passed"),
    ("failed", "failed"),
    ("errored", "errored"),
    ("refused", "refused"),
    ("crashed", "crashed / timeout (any case)"),
    ("violation_refused", "violations: refused as required"),
    ("violation_output", "violations: output anyway"),
]


class InputError(Exception):
    pass


def load_json(path, what):
    try:
        return json.loads(pathlib.Path(path).read_text())
    except (OSError, ValueError) as e:
        raise InputError(f"{what} {path}: {e}")


def primary_diagnosis(case):
    """The first diagnosis of the first wrong output of a case's report entry, or None."""
    for ds in case.get("data_sets") or []:
        for out in ds.get("outputs") or []:
            if out.get("status") == "failed":
                diagnoses = out.get("diagnoses") or []
                if diagnoses:
                    return diagnoses[0]
    return None


def first_reason(case):
    return " ".join(str(case.get("reason") or "").split())


class Run:
    """One runtime's results, each case put in exactly one class."""

    def __init__(self, manifest, report, sidecar):
        rt = sidecar.get("runtime") or {}
        self.name = rt.get("name") or "?"
        self.version = rt.get("version") or "?"
        self.klass = {}  # case -> one of the SUMMARY_COLUMNS keys
        self.failed = {}  # case -> primary diagnosis (None when none fits), failed cases only
        self.notes = {}  # case -> reason or runtime message, for --cases
        by_name = {c["name"]: c for c in report.get("cases", [])}
        records = sidecar.get("cases") or {}
        self.missing = []
        for name, entry in manifest["cases"].items():
            valid = entry.get("expected") == "passed"
            record = records.get(name, {"status": "ok"})
            status = record.get("status", "ok")
            case = by_name.get(name)
            if status in ("crashed", "timeout"):
                self.klass[name] = "crashed"
                self.notes[name] = f"{status}: {record.get('message', '')}"
                continue
            if status == "refused":
                self.klass[name] = "refused" if valid else "violation_refused"
                self.notes[name] = f"refused: {record.get('message', '')}"
                continue
            if case is None:
                self.missing.append(name)
                continue
            verdict = case.get("status")
            if not valid:
                # The gate passes a violation case the runtime wrote nothing for, and fails
                # whatever output it wrote.
                if verdict == "passed":
                    self.klass[name] = "violation_refused"
                else:
                    self.klass[name] = "violation_output"
                    if verdict == "failed":
                        self.failed[name] = primary_diagnosis(case)
                    self.notes[name] = first_reason(case)
                continue
            if verdict == "passed":
                self.klass[name] = "passed"
            elif verdict == "failed":
                self.klass[name] = "failed"
                self.failed[name] = primary_diagnosis(case)
                self.notes[name] = first_reason(case)
            else:  # errored, or skipped (a case onnx-idx-check cannot judge)
                self.klass[name] = "errored"
                self.notes[name] = f"{verdict}: {first_reason(case)}"

    def count(self, key):
        return sum(1 for k in self.klass.values() if k == key)


# A report's `fault` as the sidecar's status of the same thing (`wrote-nothing` and
# `nondeterministic` are judged from the case's verdict, as an output tree shows them).
FAULT_STATUS = {"crashed": "crashed", "timed-out": "timeout", "refused": "refused"}


def fault_of(case):
    """The runtime's fault that decided a case's verdict, and its message, or (None, None)."""
    for ds in case.get("data_sets") or []:
        if ds.get("fault"):
            return ds["fault"], first_reason(ds)
    if case.get("fault"):
        return case["fault"], first_reason(case)
    return None, None


def sidecar_of_report(report, report_path):
    """A `run --runtime NAME --format json` report's runtime and faults, in the sidecar's form."""
    if "runtimes" in report:
        raise InputError(
            f"report {report_path}: a report of several runtimes; run one `--runtime` per report"
        )
    rt = report.get("runtime")
    if not isinstance(rt, dict):
        raise InputError(
            f"report {report_path}: no `runtime` (a report of `run --actual DST`?); "
            "give its output tree too: --run REPORT DST"
        )
    records = {}
    for case in report.get("cases", []):
        fault, message = fault_of(case)
        if fault in FAULT_STATUS:
            records[case["name"]] = {"status": FAULT_STATUS[fault], "message": message}
    return {"runtime": rt, "cases": records}


def load_run(manifest, report_path, dst=None):
    """One runtime's run: its JSON report and, for a report of `run --actual DST`, DST (the
    output tree or its _runtime.json); without DST the report must be one of `run --runtime`."""
    report = load_json(report_path, "report")
    if "cases" not in report:
        raise InputError(f"report {report_path}: no `cases` (not an onnx-idx-check JSON report?)")
    if dst is None:
        return Run(manifest, report, sidecar_of_report(report, report_path))
    dst = pathlib.Path(dst)
    sidecar_path = dst / SIDECAR if dst.is_dir() else dst
    sidecar = load_json(sidecar_path, "sidecar")
    return Run(manifest, report, sidecar)


def md_table(header, rows):
    def esc(cell):
        return str(cell).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(esc(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render(manifest, runs, with_cases=False):
    out = []
    cases = manifest["cases"]
    valid = sum(1 for c in cases.values() if c.get("expected") == "passed")
    out.append(
        f"Suite: {len(cases)} cases ({valid} valid, {len(cases) - valid} the spec requires an "
        f"error for); {manifest.get('tool', 'onnx-idx-check')} "
        f"{manifest.get('tool_version', '?')}, "
        f"profile {manifest.get('profile', '?')}, seed {manifest.get('seed', '?')}."
    )
    out.append("")
    header = ["runtime"] + [title for _, title in SUMMARY_COLUMNS]
    rows = [[f"{r.name} {r.version}"] + [r.count(key) for key, _ in SUMMARY_COLUMNS] for r in runs]
    out.append(md_table(header, rows))

    names = [r.name for r in runs]
    by_trait = collections.defaultdict(lambda: [0] * len(runs))
    by_class = collections.defaultdict(lambda: [0] * len(runs))
    for i, r in enumerate(runs):
        for name, diagnosis in r.failed.items():
            for trait in cases[name].get("traits", []):
                by_trait[trait][i] += 1
            by_class[diagnosis or "(none)"][i] += 1

    out.append("")
    out.append("Failed cases by trait (a case counts under each of its traits):")
    out.append("")
    if by_trait:
        rows = sorted(by_trait.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
        out.append(md_table(["trait"] + names, [[t] + c for t, c in rows]))
    else:
        out.append("No failed case.")

    out.append("")
    out.append(
        "Failed cases by diagnosis class (the first class that reproduces the wrong output):"
    )
    out.append("")
    if by_class:
        rows = sorted(by_class.items(), key=lambda kv: (kv[0] == "(none)", -sum(kv[1]), kv[0]))
        out.append(md_table(["diagnosis"] + names, [[d] + c for d, c in rows]))
    else:
        out.append("No failed case.")

    if with_cases:
        for r in runs:
            out.append("")
            out.append(f"{r.name} {r.version}: cases not passed")
            out.append("")
            listed = [
                (name, klass)
                for name, klass in sorted(r.klass.items())
                if klass not in ("passed", "violation_refused")
            ]
            if not listed:
                out.append("None.")
                continue
            rows = []
            for name, klass in listed:
                diag = r.failed.get(name) or ""
                rows.append([name, klass, diag, r.notes.get(name, "")[:200]])
            out.append(md_table(["case", "class", "diagnosis", "reason"], rows))
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="suite_table",
        usage="%(prog)s SUITE --run REPORT [DST] [--run REPORT [DST] ...] [--cases]",
        description="Markdown tables of what a generated suite finds in runtimes.",
    )
    parser.add_argument("suite", metavar="SUITE", type=pathlib.Path, help="the generated suite")
    parser.add_argument(
        "--run",
        nargs="+",
        action="append",
        metavar=("REPORT", "DST"),
        required=True,
        help="a runtime's JSON report: of `run --runtime NAME` alone, or of `run --actual DST` "
        "followed by DST, its output tree (or its _runtime.json)",
    )
    parser.add_argument("--cases", action="store_true", help="also list every case not passed")
    args = parser.parse_args(argv)
    for run in args.run:
        if len(run) > 2:
            parser.error(
                f"--run takes a report and at most one output tree, not {len(run)}: {run}"
            )
    try:
        manifest_path = args.suite / "MANIFEST.json" if args.suite.is_dir() else args.suite
        manifest = load_json(manifest_path, "manifest")
        if not isinstance(manifest.get("cases"), dict):
            raise InputError(f"manifest {manifest_path}: no `cases` object")
        runs = [load_run(manifest, *run) for run in args.run]
    except InputError as e:
        print(f"suite_table: {e}", file=sys.stderr)
        return 2
    for r in runs:
        if r.missing:
            print(
                f"suite_table: {r.name}: {len(r.missing)} cases of the manifest are not in its "
                f"report (first: {r.missing[0]}); they are left out of its row",
                file=sys.stderr,
            )
    sys.stdout.write(render(manifest, runs, args.cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
