"""Shared fixtures: where the fixtures, the installed package and the
profeed command are (tests/python_test.sh sets them)."""

import os
import pathlib

import pytest

FIXTURES = pathlib.Path(os.environ["PROFEED_FIXTURES"])
BUILD = pathlib.Path(os.environ["PROFEED_TEST_BUILD"])


@pytest.fixture
def fixtures() -> pathlib.Path:
    return FIXTURES


def profeed_command() -> str:
    """The profeed command from the same installation as the package."""
    root = pathlib.Path(os.environ["PROFEED_TEST_ROOT"])
    found = sorted(root.rglob("bin/profeed"))
    assert found, f"no bin/profeed under {root}"
    return str(found[0])
