"""The pytest plugin, run in a fresh pytest (pytester) on real case trees."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

GATHER_0 = "onnx-node/test_gather_0"


def _copy(testdata: Path, dest: Path, *names: str) -> Path:
    for n in names:
        shutil.copytree(testdata / n, dest / n)
    return dest


def _tamper(case: Path) -> None:
    """Changes one element of the expected output: the case must fail."""
    out = case / "test_data_set_0" / "output_0.pb"
    t = onnx.TensorProto()
    t.ParseFromString(out.read_bytes())
    a = numpy_helper.to_array(t).copy()
    a.flat[0] += 1
    out.write_bytes(numpy_helper.from_array(a, t.name).SerializeToString())


def test_every_case_of_testdata_is_an_item_and_passes(pytester, testdata):
    result = pytester.runpytest("--onnx-idx-check", str(testdata), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=107)


def test_items_are_named_for_their_cases_and_k_selects_by_name(pytester, testdata):
    result = pytester.runpytest(
        "--onnx-idx-check", str(testdata), "-k", "gather_elements", "--collect-only", "-q"
    )
    ids = [line for line in result.outlines if "::" in line]
    assert ids, result.outlines
    assert all("gather_elements" in i for i in ids), ids
    assert any(i.endswith("test_gather_elements_0/model.onnx::onnx-node/test_gather_elements_0") for i in ids), ids
    result = pytester.runpytest("--onnx-idx-check", str(testdata), "-k", "gather_elements")
    result.assert_outcomes(passed=len(ids))


def test_a_wrong_expected_output_fails_with_the_mismatch_table(pytester, testdata):
    tree = _copy(testdata, pytester.path / "cases", GATHER_0)
    _tamper(tree / GATHER_0)
    result = pytester.runpytest("--onnx-idx-check", str(tree))
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    # The human report's details: the case, the output, the first differing element, the rerun
    # command, and no Python traceback of the plugin.
    assert "FAIL onnx-node/test_gather_0" in text
    assert "output 'y'" in text, text
    assert "rerun: onnx-idx-check run" in text
    assert "pytest_plugin.py" not in text


def test_expectations_entries_are_xfail_with_their_reasons(pytester, testdata):
    tree = _copy(testdata, pytester.path / "cases", GATHER_0, "onnx-node/test_gather_1")
    _tamper(tree / GATHER_0)
    _tamper(tree / "onnx-node/test_gather_1")
    expectations = pytester.path / "expectations.toml"
    expectations.write_text(
        '[[expect]]\ncase = "onnx-node/test_gather_0"\nstatus = "failed"\n'
        'reason = "known: a tampered output"\n'
    )
    result = pytester.runpytest(
        "--onnx-idx-check",
        str(tree),
        "--onnx-idx-check-expectations",
        str(expectations),
        "-rxX",
    )
    result.assert_outcomes(failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*XFAIL*test_gather_0*known: a tampered output*"])


def test_an_entry_for_a_case_that_passes_is_reported_as_xpass_or_failure(pytester, testdata):
    tree = _copy(testdata, pytester.path / "cases", GATHER_0)
    expectations = pytester.path / "expectations.toml"
    expectations.write_text(
        '[[expect]]\ncase = "onnx-node/test_gather_0"\nstatus = "failed"\nreason = "stale"\n'
    )
    result = pytester.runpytest(
        "--onnx-idx-check", str(tree), "--onnx-idx-check-expectations", str(expectations)
    )
    outcomes = result.parseoutcomes()
    # The library decides whether a stale entry fails the gate; either way it is not a plain pass.
    assert outcomes.get("xpassed", 0) + outcomes.get("failed", 0) == 1, outcomes
    assert "passed" not in outcomes, outcomes


def test_a_case_the_spec_forbids_is_a_failure_naming_the_violation(pytester, testdata):
    tree = _copy(testdata, pytester.path / "cases", GATHER_0)
    inp = tree / GATHER_0 / "test_data_set_0" / "input_1.pb"
    t = onnx.TensorProto()
    t.ParseFromString(inp.read_bytes())
    idx = numpy_helper.to_array(t).copy()
    idx.flat[0] = 99
    inp.write_bytes(numpy_helper.from_array(idx, t.name).SerializeToString())
    result = pytester.runpytest("--onnx-idx-check", str(tree))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ERROR onnx-node/test_gather_0*99*out of range*"])


def test_only_the_cases_are_collected_without_test_paths(pytester, testdata):
    pytester.makepyfile(test_other="def test_other():\n    assert False\n")
    tree = _copy(testdata, pytester.path / "cases", GATHER_0)
    pytester.runpytest("--onnx-idx-check", str(tree)).assert_outcomes(passed=1)
    # With a test path given, both.
    result = pytester.runpytest("--onnx-idx-check", str(tree), "test_other.py")
    result.assert_outcomes(passed=1, failed=1)


def test_a_path_without_cases_is_a_usage_error(pytester):
    empty = pytester.mkdir("empty")
    result = pytester.runpytest("--onnx-idx-check", str(empty / "missing"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.outlines
    result.stderr.fnmatch_lines(["*--onnx-idx-check*missing*no such file*"])


def test_xdist_spreads_the_cases_over_workers(pytester, testdata):
    pytest.importorskip("xdist")
    result = pytester.runpytest_subprocess(
        "--onnx-idx-check", str(testdata), "-n", "2", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=107)


def test_the_runtime_option_judges_a_runtime(pytester, testdata):
    # The reference evaluator of the onnx package installed here: it gathers test_gather_0
    # right, so the case passes when judged through it.
    tree = _copy(testdata, pytester.path / "cases", GATHER_0)
    result = pytester.runpytest_subprocess(
        "--onnx-idx-check", str(tree), "--onnx-idx-check-runtime", "onnx-reference"
    )
    result.assert_outcomes(passed=1)
    # A runtime that cannot exist fails every item with the reason, not a crash.
    result = pytester.runpytest("--onnx-idx-check", str(tree), "--onnx-idx-check-runtime", "nope")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*nope*"])


def test_outputs_of_the_plugin_match_numpy_on_the_checked_case(testdata):
    # Guards the fixture itself: test_gather_0's expected output is np.take of its inputs.
    case = testdata / GATHER_0 / "test_data_set_0"
    arrays = []
    for name in ("input_0.pb", "input_1.pb", "output_0.pb"):
        t = onnx.TensorProto()
        t.ParseFromString((case / name).read_bytes())
        arrays.append(numpy_helper.to_array(t))
    np.testing.assert_array_equal(np.take(arrays[0], arrays[1], axis=0), arrays[2])
