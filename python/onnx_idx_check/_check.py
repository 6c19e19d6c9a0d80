"""Whole runs from Python: ``check`` (what ``onnx-idx-check run`` does) and ``generate``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


class Report(dict):  # type: ignore[type-arg]
    """The JSON report of a run (``run --format json``, ``schema_version`` 1) as Python
    objects, with two more things ``run`` prints: whether the gate passed, and the mismatch
    tables of the failed cases."""

    passed: bool
    """Whether the run passes its gate: what makes ``run`` exit 0."""
    details: str
    """The failed cases' mismatch tables with provenance and diagnosis, as ``run`` prints
    them (empty when none failed)."""

    @property
    def cases(self) -> list[dict[str, Any]]:
        """``self["cases"]``: one entry per case, in order."""
        return self["cases"]  # type: ignore[no-any-return]


def _paths(paths: Union[PathLike, Sequence[PathLike]]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _listed(v: Union[None, str, Sequence[str]]) -> list[str]:
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


def check(
    paths: Union[PathLike, Sequence[PathLike]],
    actual: Optional[PathLike] = None,
    runtime: Optional[str] = None,
    *,
    runtime_cmd: Optional[str] = None,
    expectations: Optional[PathLike] = None,
    filter: Union[None, str, Sequence[str]] = None,  # noqa: A002 - run's option
    exclude: Union[None, str, Sequence[str]] = None,
    jobs: Optional[int] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    exact: bool = False,
    timeout: Optional[float] = None,
    repeat: Optional[int] = None,
    max_tensor_bytes: Optional[int] = None,
    fail_fast: bool = False,
    deny_skip: bool = False,
    min_cases: Optional[int] = None,
    require_ops: Union[None, str, Sequence[str]] = None,
) -> Report:
    """Runs the node-test cases under ``paths`` as ``onnx-idx-check run`` does, with its
    options, and returns the report.

    ``actual`` is a directory of a runtime's outputs to judge instead of the expected ones;
    ``runtime`` a runtime to run the cases on (``onnxruntime``, ``openvino``, ``tract``,
    ``onnx-reference``: the bundled adapters, run on this Python). Raises ``ValueError`` for
    an unusable option and :class:`CheckFailedToRun` when no verdict could be made (no case
    under the paths, a runtime that does not start).

    >>> import onnx_idx_check as oic
    >>> report = oic.check("testdata/onnx-node", filter="^test_gather_0$")  # doctest: +SKIP
    >>> report.passed, report["summary"]["passed"]  # doctest: +SKIP
    (True, 1)
    """
    if runtime is not None or runtime_cmd is not None:
        os.environ.setdefault("ONNX_IDX_CHECK_PYTHON", sys.executable)
    text, details, passed = _native.check(
        _paths(paths),
        actual=None if actual is None else os.fspath(actual),
        runtime=runtime,
        runtime_cmd=runtime_cmd,
        expectations=None if expectations is None else os.fspath(expectations),
        filter=_listed(filter),
        exclude=_listed(exclude),
        jobs=jobs,
        rtol=rtol,
        atol=atol,
        exact=exact,
        timeout=timeout,
        repeat=repeat,
        max_tensor_bytes=max_tensor_bytes,
        fail_fast=fail_fast,
        deny_skip=deny_skip,
        min_cases=min_cases,
        require_ops=_listed(require_ops),
    )
    report = Report(json.loads(text))
    report.passed = passed
    report.details = details
    return report


def generate(
    outdir: PathLike,
    profile: str = "quick",
    *,
    seed: int = 0,
    ops: Union[None, str, Sequence[str]] = None,
    max_tensor_bytes: Optional[int] = None,
) -> dict[str, Any]:
    """Writes a generated suite of node-test cases to ``outdir``, as ``onnx-idx-check
    generate`` does (``profile`` ``quick``, ``full`` or ``stress``), and returns its
    ``MANIFEST.json``. Raises :class:`CheckFailedToRun` when the command fails (its reason is
    on standard error).

    >>> import onnx_idx_check as oic
    >>> manifest = oic.generate("suite", ops="GatherElements")  # doctest: +SKIP
    >>> manifest["profile"]  # doctest: +SKIP
    'quick'
    """
    argv = ["onnx-idx-check", "generate", os.fspath(outdir), "--profile", profile]
    argv += ["--seed", str(seed)]
    for op in _listed(ops):
        argv += ["--ops", op]
    if max_tensor_bytes is not None:
        argv += ["--max-tensor-bytes", str(max_tensor_bytes)]
    sys.stdout.flush()
    sys.stderr.flush()
    code = _native.main(argv)
    if code != 0:
        raise _native.CheckFailedToRun(
            f"onnx-idx-check generate exited {code}: its reason is on standard error"
        )
    return json.loads((Path(outdir) / "MANIFEST.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]
