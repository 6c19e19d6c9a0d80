"""scripts/suite_table.py on a tiny hand-written manifest, report and sidecar (standard library
only: `python3 -m unittest discover -s scripts/tests`)."""

import contextlib
import io
import json
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import suite_table  # noqa: E402


def entry(expected, traits):
    return {"op": "Gather", "version": 13, "dtype": "float", "traits": traits, "expected": expected}


MANIFEST = {
    "schema_version": 1,
    "tool": "onnx-idx-check",
    "tool_version": "0.1.0",
    "seed": 0,
    "profile": "quick",
    "cases": {
        "t_pass": entry("passed", ["dtype:float"]),
        "t_negative": entry("passed", ["dtype:float", "negative-indices"]),
        "t_nodiag": entry("passed", ["dtype:float16", "reduction:add"]),
        "t_refused": entry("passed", ["dtype:string"]),
        "t_crash": entry("passed", ["dtype:float"]),
        "t_errored": entry("passed", ["dtype:float"]),
        "t_violation_refused": entry("errored", ["violation:index-past-end"]),
        "t_violation_output": entry("errored", ["violation:index-past-end"]),
    },
}


def case(name, status, diagnoses=None, reason=None):
    outputs = []
    if diagnoses is not None:
        outputs = [{"name": "y", "status": "failed", "diagnoses": diagnoses}]
    return {
        "name": name,
        "status": status,
        "reason": reason,
        "data_sets": [{"name": "test_data_set_0", "status": status, "outputs": outputs}],
    }


REPORT = {
    "schema_version": 1,
    "cases": [
        case("t_pass", "passed"),
        case("t_negative", "failed", ["negative-not-normalized", "oob-clamped"], "1 differs"),
        case("t_nodiag", "failed", [], "2 differ"),
        case("t_refused", "errored", reason="missing actual"),
        case("t_crash", "errored", reason="missing actual"),
        case("t_errored", "errored", reason="reference disputes expected output"),
        case("t_violation_refused", "passed"),
        case("t_violation_output", "failed", ["oob-clamped"], "output written anyway"),
    ],
}

SIDECAR = {
    "schema_version": 1,
    "runtime": {"name": "fakert", "version": "9.9"},
    "timeout_s": 60,
    "cases": {
        "t_pass": {"status": "ok"},
        "t_refused": {"status": "refused", "message": "no strings"},
        "t_crash": {"status": "crashed", "message": "worker killed by signal 11 (SIGSEGV)"},
        "t_violation_refused": {"status": "refused", "message": "index out of range"},
    },
}


class SuiteTableTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = pathlib.Path(self.tmp.name)
        self.suite = root / "suite"
        self.suite.mkdir()
        (self.suite / "MANIFEST.json").write_text(json.dumps(MANIFEST))
        self.report = root / "report.json"
        self.report.write_text(json.dumps(REPORT))
        self.dst = root / "out"
        self.dst.mkdir()
        (self.dst / "_runtime.json").write_text(json.dumps(SIDECAR))

    def tearDown(self):
        self.tmp.cleanup()

    def run_main(self, *extra):
        stdout, stderr = io.StringIO(), io.StringIO()
        argv = [str(self.suite), "--run", str(self.report), str(self.dst), *extra]
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = suite_table.main(argv)
        return code, stdout.getvalue(), stderr.getvalue()

    def test_each_case_in_one_class(self):
        run = suite_table.load_run(MANIFEST, self.report, self.dst)
        self.assertEqual(
            run.klass,
            {
                "t_pass": "passed",
                "t_negative": "failed",
                "t_nodiag": "failed",
                "t_refused": "refused",
                "t_crash": "crashed",
                "t_errored": "errored",
                "t_violation_refused": "violation_refused",
                "t_violation_output": "violation_output",
            },
        )
        self.assertEqual(
            run.failed,
            {
                "t_negative": "negative-not-normalized",
                "t_nodiag": None,
                "t_violation_output": "oob-clamped",
            },
        )

    def test_tables(self):
        code, out, err = self.run_main()
        self.assertEqual(code, 0)
        self.assertEqual(err, "")
        lines = out.splitlines()
        self.assertIn(
            "Suite: 8 cases (6 valid, 2 the spec requires an error for); onnx-idx-check 0.1.0, "
            "profile quick, seed 0.",
            lines,
        )
        self.assertIn("| fakert 9.9 | 1 | 2 | 1 | 1 | 1 | 1 | 1 |", lines)
        # by trait: only traits with a failure, most failures first
        self.assertIn("| dtype:float | 1 |", lines)
        self.assertIn("| negative-indices | 1 |", lines)
        self.assertIn("| violation:index-past-end | 1 |", lines)
        self.assertIn("| reduction:add | 1 |", lines)
        self.assertNotIn("| dtype:string | 0 |", lines)
        # by diagnosis: the first class only; (none) last
        self.assertIn("| negative-not-normalized | 1 |", lines)
        self.assertIn("| oob-clamped | 1 |", lines)
        self.assertEqual(lines[-1], "| (none) | 1 |")
        self.assertNotIn("cases not passed", out)

    def test_cases_listing(self):
        code, out, _ = self.run_main("--cases")
        self.assertEqual(code, 0)
        self.assertIn("fakert 9.9: cases not passed", out)
        row = "| t_crash | crashed |  | crashed: worker killed by signal 11 (SIGSEGV) |"
        self.assertIn(row, out)
        self.assertNotIn("| t_pass |", out)

    def test_case_missing_from_report_is_said(self):
        report = dict(REPORT, cases=[c for c in REPORT["cases"] if c["name"] != "t_pass"])
        self.report.write_text(json.dumps(report))
        code, out, err = self.run_main()
        self.assertEqual(code, 0)
        self.assertIn("1 cases of the manifest are not in its report (first: t_pass)", err)
        self.assertIn("| fakert 9.9 | 0 | 2 |", out)

    def test_bad_input_exits_2(self):
        self.report.write_text("{}")
        code, _, err = self.run_main()
        self.assertEqual(code, 2)
        self.assertIn("not an onnx-idx-check JSON report", err)


if __name__ == "__main__":
    unittest.main()
