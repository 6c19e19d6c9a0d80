"""Shared fixtures of the Python package's tests."""

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# The repository's testdata/: ONNX's official node tests for these operators and the spec's
# worked examples, with their expected outputs (independent of the code under test).
TESTDATA = Path(__file__).resolve().parents[2] / "testdata"


@pytest.fixture
def testdata() -> Path:
    if not TESTDATA.is_dir():
        pytest.skip(f"the repository's testdata/ is not at {TESTDATA}")
    return TESTDATA
