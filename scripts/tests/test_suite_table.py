"""scripts/suite_table.py on a tiny hand-written manifest, report and sidecar, and on a
hand-written report of `run --runtime` alone (standard library only: `python3 -m unittest
discover -s scripts/tests`)."""

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


def case(name, status, diagnoses=None, reason=None, fault=None):
    outputs = []
    if diagnoses is not None:
        outputs = [{"name": "y", "status": "failed", "diagnoses": diagnoses}]
    data_set = {"name": "test_data_set_0", "status": status, "fault": fault, "outputs": outputs}
    if reason is not None:
        data_set["reason"] = reason
    return {
        "name": name,
        "status": status,
        "reason": None if reason is None else f"test_data_set_0: {reason}",
        "fault": fault,
        "data_sets": [data_set],
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


# The same cases and three more, as `run SUITE --runtime fakert --format json` reports them: the
# runtime's faults are in the report, with no output tree or sidecar.
RUNTIME_MANIFEST = dict(
    MANIFEST,
    cases=dict(
        MANIFEST["cases"],
        t_timeout=entry("passed", ["dtype:float", "rank:3"]),
        t_nothing=entry("passed", ["dtype:float"]),
        t_violation_crash=entry("errored", ["violation:index-past-end"]),
    ),
)

RUNTIME_REPORT = {
    "schema_version": 1,
    "tool": {"name": "onnx-idx-check", "version": "0.1.0"},
    "runtime": {"name": "fakert", "version": "9.9", "command": "python fakert.py"},
    "summary": {"total": 11, "faults": {"refused": 1, "crashed": 2, "timed-out": 1}},
    "cases": [
        case("t_pass", "passed"),
        case("t_negative", "failed", ["negative-not-normalized", "oob-clamped"], "1 differs"),
        case("t_nodiag", "failed", [], "2 differ"),
        case("t_refused", "errored", reason="runtime fakert refused: no strings", fault="refused"),
        case(
            "t_crash",
            "errored",
            reason="runtime fakert crashed: killed by signal 11 (SIGSEGV)",
            fault="crashed",
        ),
        case("t_errored", "errored", reason="reference disputes expected output"),
        # Refusing a case the spec requires an error for passes: no fault.
        case("t_violation_refused", "passed"),
        case("t_violation_output", "failed", ["oob-clamped"], "output written anyway"),
        case(
            "t_timeout",
            "errored",
            reason="runtime fakert did not answer within 60 s",
            fault="timed-out",
        ),
        case(
            "t_nothing",
            "errored",
            reason="output 'y': runtime fakert wrote no output_0.pb",
            fault="wrote-nothing",
        ),
        case(
            "t_violation_crash",
            "errored",
            reason="runtime fakert crashed: killed by signal 6 (SIGABRT)",
            fault="crashed",
        ),
    ],
}


class RuntimeReportTest(unittest.TestCase):
    """`--run REPORT` alone, REPORT written by `run --runtime NAME --format json`."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        self.suite = self.root / "suite"
        self.suite.mkdir()
        (self.suite / "MANIFEST.json").write_text(json.dumps(RUNTIME_MANIFEST))
        self.report = self.root / "report-fakert.json"
        self.report.write_text(json.dumps(RUNTIME_REPORT))

    def tearDown(self):
        self.tmp.cleanup()

    def run_main(self, *runs, extra=()):
        stdout, stderr = io.StringIO(), io.StringIO()
        argv = [str(self.suite)]
        for run in runs or ([str(self.report)],):
            argv += ["--run", *run]
        argv += list(extra)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = suite_table.main(argv)
        return code, stdout.getvalue(), stderr.getvalue()

    def test_each_case_in_one_class_from_the_faults(self):
        run = suite_table.load_run(RUNTIME_MANIFEST, self.report)
        self.assertEqual((run.name, run.version), ("fakert", "9.9"))
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
                "t_timeout": "crashed",
                "t_nothing": "errored",
                "t_violation_crash": "crashed",
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
        self.assertEqual(run.missing, [])

    def test_tables(self):
        code, out, err = self.run_main()
        self.assertEqual(code, 0)
        self.assertEqual(err, "")
        lines = out.splitlines()
        self.assertIn(
            "Suite: 11 cases (8 valid, 3 the spec requires an error for); onnx-idx-check 0.1.0, "
            "profile quick, seed 0.",
            lines,
        )
        # passed, failed, errored (t_errored, t_nothing), refused, crashed or timed out
        # (t_crash, t_timeout, t_violation_crash), violations refused, violations with an output
        self.assertIn("| fakert 9.9 | 1 | 2 | 2 | 1 | 3 | 1 | 1 |", lines)
        self.assertIn("| dtype:float | 1 |", lines)
        self.assertIn("| violation:index-past-end | 1 |", lines)
        self.assertNotIn("| rank:3 | 0 |", lines)
        self.assertIn("| negative-not-normalized | 1 |", lines)
        self.assertEqual(lines[-1], "| (none) | 1 |")

    def test_cases_listing_gives_the_runtime_message(self):
        code, out, _ = self.run_main(extra=["--cases"])
        self.assertEqual(code, 0)
        self.assertIn("fakert 9.9: cases not passed", out)
        lines = out.splitlines()
        self.assertIn(
            "| t_crash | crashed |  | crashed: runtime fakert crashed: killed by signal 11 "
            "(SIGSEGV) |",
            lines,
        )
        self.assertIn(
            "| t_timeout | crashed |  | timeout: runtime fakert did not answer within 60 s |",
            lines,
        )
        self.assertIn(
            "| t_refused | refused |  | refused: runtime fakert refused: no strings |", lines
        )
        self.assertIn(
            "| t_nothing | errored |  | errored: test_data_set_0: output 'y': runtime fakert "
            "wrote no output_0.pb |",
            lines,
        )
        self.assertNotIn("| t_violation_refused |", out)

    def test_beside_a_run_with_an_output_tree(self):
        old_report = self.root / "report-old.json"
        # The old form's cases: those of MANIFEST; the three others are missing from its report.
        old_report.write_text(json.dumps(REPORT))
        dst = self.root / "out"
        dst.mkdir()
        (dst / "_runtime.json").write_text(
            json.dumps(dict(SIDECAR, runtime={"name": "oldrt", "version": "1.0"}))
        )
        code, out, err = self.run_main([str(self.report)], [str(old_report), str(dst)])
        self.assertEqual(code, 0)
        lines = out.splitlines()
        self.assertIn(
            "| runtime | passed | failed | errored | refused | crashed / timeout (any case) "
            "| violations: refused as required | violations: output anyway |",
            lines,
        )
        self.assertIn("| fakert 9.9 | 1 | 2 | 2 | 1 | 3 | 1 | 1 |", lines)
        self.assertIn("| oldrt 1.0 | 1 | 2 | 1 | 1 | 1 | 1 | 1 |", lines)
        self.assertIn("| trait | fakert | oldrt |", lines)
        self.assertIn("| dtype:float | 1 | 1 |", lines)
        self.assertIn(
            "suite_table: oldrt: 3 cases of the manifest are not in its report (first: t_timeout)",
            err,
        )

    def test_report_of_actual_without_its_tree_exits_2(self):
        self.report.write_text(json.dumps(REPORT))
        code, out, err = self.run_main()
        self.assertEqual(code, 2)
        self.assertEqual(out, "")
        self.assertIn("no `runtime` (a report of `run --actual DST`?)", err)
        self.assertIn("--run REPORT DST", err)

    def test_report_of_several_runtimes_exits_2(self):
        self.report.write_text(
            json.dumps(
                {
                    "schema_version": 1,
                    "cases": [],
                    "runtimes": [{"name": "a", "report": RUNTIME_REPORT}],
                }
            )
        )
        code, _, err = self.run_main()
        self.assertEqual(code, 2)
        self.assertIn("a report of several runtimes; run one `--runtime` per report", err)

    def test_three_arguments_to_run_are_a_usage_error(self):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exit_:
            suite_table.main([str(self.suite), "--run", str(self.report), "a", "b"])
        self.assertEqual(exit_.exception.code, 2)
        self.assertIn("--run takes a report and at most one output tree, not 3", stderr.getvalue())


if __name__ == "__main__":
    unittest.main()
