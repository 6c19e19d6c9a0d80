"""The console script, ``check()`` and ``generate()``: the command line's jobs from Python."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
import pytest

import onnx_idx_check as oic


def _script() -> str:
    exe = shutil.which("onnx-idx-check", path=sysconfig.get_path("scripts"))
    assert exe, "pip install put no onnx-idx-check script beside this Python"
    return exe


def test_the_console_script_runs_testdata_and_exits_0(testdata):
    done = subprocess.run([_script(), "run", str(testdata)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "107 cases: 107 passed" in done.stdout


def test_the_console_script_reports_usage_errors_as_the_binary_does(tmp_path):
    done = subprocess.run([_script(), "run", str(tmp_path / "missing")], capture_output=True)
    assert done.returncode == 2
    done = subprocess.run([_script(), "--version"], capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout.startswith("onnx-idx-check "), done.stdout
    assert oic.__version__ in done.stdout


def test_the_console_script_dies_on_ctrl_c_like_the_binary(testdata):
    # A runtime that never says hello keeps `run` waiting (60 s by default). Python would hold
    # SIGINT until the Rust code returns; the script restores the default, so Ctrl-C ends it.
    p = subprocess.Popen(
        [_script(), "run", str(testdata), "--runtime-cmd", "sleep 30"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(timeout=20)
    finally:
        p.kill()
    assert rc == -signal.SIGINT


def test_check_returns_the_json_report_as_python_objects(testdata):
    report = oic.check(testdata, filter="^onnx-node/test_gather_0$")
    assert report.passed
    assert report["schema_version"] == 1
    assert report["summary"]["passed"] == report["summary"]["total"] == 1
    assert report.cases[0]["name"] == "onnx-node/test_gather_0"
    assert report.details == ""
    # The same document `run --format json` writes.
    done = subprocess.run(
        [_script(), "run", str(testdata), "--filter", "^onnx-node/test_gather_0$", "--format", "json"],
        capture_output=True,
        text=True,
    )
    cli = json.loads(done.stdout)
    for doc in (cli, report):
        for c in doc["cases"]:
            c.pop("duration_ms"), c.pop("duration_ns")
        doc.pop("duration_ms", None), doc.pop("duration_ns", None)
    assert cli["cases"] == report["cases"]
    assert cli["summary"]["total"] == report["summary"]["total"]


def test_check_judges_a_runtimes_saved_outputs(testdata, tmp_path):
    pytest.importorskip("onnx")
    from onnx import TensorProto, numpy_helper

    name = "onnx-node/test_gather_0"
    src = testdata / name / "test_data_set_0" / "output_0.pb"
    t = TensorProto()
    t.ParseFromString(src.read_bytes())
    wrong = numpy_helper.to_array(t).copy()
    wrong.flat[0] += 1
    actual = tmp_path / "actual" / name / "test_data_set_0"
    actual.mkdir(parents=True)
    (actual / "output_0.pb").write_bytes(numpy_helper.from_array(wrong, t.name).SerializeToString())
    report = oic.check(testdata, actual=tmp_path / "actual", filter=f"^{name}$")
    assert not report.passed
    assert report.cases[0]["status"] == "failed"
    assert "rerun: onnx-idx-check run" in report.details


def test_check_refuses_bad_options_and_paths_without_cases(testdata, tmp_path):
    with pytest.raises(ValueError, match="--filter"):
        oic.check(testdata, filter="(")
    with pytest.raises(oic.CheckFailedToRun):
        oic.check(tmp_path)


def test_spec_errors_carry_the_message_run_prints_for_the_same_case(testdata, tmp_path):
    pytest.importorskip("onnx")
    from onnx import TensorProto, numpy_helper

    name = "test_gather_elements_0"
    case = tmp_path / name
    shutil.copytree(testdata / "onnx-node" / name, case)
    ds = case / "test_data_set_0"
    arrays = []
    for k in (0, 1):
        t = TensorProto()
        t.ParseFromString((ds / f"input_{k}.pb").read_bytes())
        arrays.append((numpy_helper.to_array(t).copy(), t.name))
    (data, _), (indices, iname) = arrays
    indices.flat[0] = 7
    (ds / "input_1.pb").write_bytes(numpy_helper.from_array(indices, iname).SerializeToString())
    report = oic.check(case)
    assert report.cases[0]["status"] == "errored"
    with pytest.raises(oic.SpecError) as e:
        oic.gather_elements(data, indices, axis=1)
    assert str(e.value) in report.cases[0]["reason"]


def test_generate_writes_a_suite_that_check_passes(tmp_path):
    manifest = oic.generate(tmp_path / "suite", ops="GatherElements", seed=3)
    assert manifest["profile"] == "quick" and manifest["seed"] == 3
    assert manifest["ops"] == ["GatherElements"]
    report = oic.check(
        tmp_path / "suite", expectations=tmp_path / "suite" / "expectations.toml"
    )
    assert report.passed, report.details
    assert report["summary"]["total"] > 20


def test_generate_failures_raise(tmp_path):
    with pytest.raises(oic.CheckFailedToRun, match="exited 2"):
        oic.generate(tmp_path / "suite", ops="NoSuchOp")


def test_outputs_are_writable_arrays_that_own_their_memory():
    y = oic.gather(np.arange(6.0), np.array([5, 0]))
    y[0] = -1  # the words handed over from Rust are the array's own
    assert y.flags.writeable and y.flags.c_contiguous
    np.testing.assert_array_equal(y, [-1, 0])
