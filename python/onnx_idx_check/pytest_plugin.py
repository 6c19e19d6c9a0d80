"""The pytest plugin: ``pytest --onnx-idx-check PATH`` runs every node-test case under PATH as a
test item.

A case that fails shows the mismatch table with provenance and diagnosis that ``onnx-idx-check
run`` prints; a case an expectations file lists (``--onnx-idx-check-expectations FILE``) is an
expected failure with the entry's reason; ``-k`` selects by case name; items are independent,
so pytest-xdist spreads them over workers.

With ``--onnx-idx-check`` and no test paths of its own, pytest collects only the cases (not the
Python tests of the current directory).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from ._check import check
from ._native import CheckFailedToRun


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("onnx-idx-check", "ONNX node-test cases (onnx-idx-check)")
    group.addoption(
        "--onnx-idx-check",
        action="append",
        default=[],
        metavar="PATH",
        dest="onnx_idx_check_paths",
        help="run every ONNX node-test case under PATH (a case directory or a tree of them) as "
        "a test; repeatable",
    )
    group.addoption(
        "--onnx-idx-check-runtime",
        metavar="NAME",
        dest="onnx_idx_check_runtime",
        help="run the cases on this runtime (onnxruntime, openvino, tract, tvm, iree, tinygrad, "
        "onnxruntime-web, onnx-reference) and judge its outputs, as `onnx-idx-check run --runtime NAME`",
    )
    group.addoption(
        "--onnx-idx-check-actual",
        metavar="DIR",
        dest="onnx_idx_check_actual",
        help="judge a runtime's outputs saved under DIR, as `onnx-idx-check run --actual DIR`",
    )
    group.addoption(
        "--onnx-idx-check-expectations",
        metavar="FILE",
        dest="onnx_idx_check_expectations",
        help="the expectations file: the cases it lists are expected failures (xfail) with "
        "its reasons",
    )


def _paths(config: pytest.Config) -> list[str]:
    return list(config.getoption("onnx_idx_check_paths") or [])


def _roots(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in _paths(config)]


def pytest_configure(config: pytest.Config) -> None:
    # The case trees become collection arguments, so that pytest walks them and reports what it
    # collected as for any test file. With no test paths of its own, pytest collects only the
    # cases (not the Python tests under the current directory).
    roots = _paths(config)
    if not roots:
        return
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = []
    # pytest-xdist hands a worker the controller's arguments, these included.
    have = {Path(a.split("::")[0]).resolve() for a in config.args}
    for root in roots:
        if not Path(root).exists():
            raise pytest.UsageError(f"--onnx-idx-check {root}: no such file or directory")
        if Path(root).resolve() not in have:
            config.args.append(root)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
    # A case holds model.onnx or an OpenVINO IR's model.xml; a directory with both is one case,
    # read as ONNX (as `run` does), so its model.xml is not collected again.
    if file_path.name not in ("model.onnx", "model.xml"):
        return None
    if file_path.name == "model.xml" and (file_path.parent / "model.onnx").exists():
        return None
    case_dir = file_path.parent.resolve()
    roots = [r for r in _roots(parent.config) if r == case_dir or r in case_dir.parents]
    if not roots:
        return None
    # The case's name as `run` gives it: relative to the PATH it was found under, or the
    # directory's own name when PATH is the case.
    root = max(roots, key=lambda r: len(r.parts))
    name = case_dir.name if root == case_dir else case_dir.relative_to(root).as_posix()
    return CaseFile.from_parent(parent, path=file_path, case=name, root=str(root))


class CaseFailed(Exception):
    """A case did not pass: the report's text for it."""


class CaseFile(pytest.File):
    """A case's ``model.onnx`` (or IR ``model.xml``): one item, the case."""

    def __init__(self, *, case: str, root: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.root = root

    def collect(self) -> Iterator[pytest.Item]:
        yield CaseItem.from_parent(self, name=self.case, root=self.root)


class CaseItem(pytest.Item):
    """One node-test case, judged as ``onnx-idx-check run`` judges it."""

    def __init__(self, *, root: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root

    def runtest(self) -> None:
        opt = self.config.getoption
        try:
            report = check(
                self.root,
                filter=f"^{re.escape(self.name)}$",
                runtime=opt("onnx_idx_check_runtime"),
                actual=opt("onnx_idx_check_actual"),
                expectations=opt("onnx_idx_check_expectations"),
                jobs=1,
            )
        except (ValueError, CheckFailedToRun) as e:
            # No verdict at all (a runtime that does not start, an unreadable expectations
            # file): the reason, without the plugin's traceback.
            raise CaseFailed(f"onnx-idx-check could not check {self.name}: {e}") from e
        (case,) = report.cases
        label = case["label"]
        expectation = case.get("expectation") or {}
        if label == "PASS":
            return
        if label == "SKIP":
            pytest.skip(case.get("reason") or "skipped")
        if label == "XFAIL":
            pytest.xfail(f"{expectation.get('reason')} (entry {expectation.get('entry')!r})")
        if label == "XPASS" and not expectation.get("fails_gate"):
            # Reported as pytest's own XPASS.
            self.add_marker(pytest.mark.xfail(reason=expectation.get("reason"), strict=False))
            return
        lines = [f"{label} {case['name']}: {case.get('reason') or ''}".rstrip()]
        if case.get("fault"):
            lines.append(f"    the runtime {case['fault']}")
        if expectation:
            lines.append(
                f"    expectations entry {expectation.get('entry')!r} ({expectation.get('outcome')}): "
                f"{expectation.get('reason')}"
            )
        if report.details:
            lines.append(report.details.rstrip())
        raise CaseFailed("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, Optional[int], str]:
        return self.path, None, f"onnx-idx-check case {self.name}"
