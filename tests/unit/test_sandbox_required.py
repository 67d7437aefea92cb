"""A security test that needs the sandbox fails, not skips, where CI requires the sandbox
or bubblewrap is installed but does not work (``tests/conftest.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).parents[1] / "conftest.py"
TEST = """
import pytest

@pytest.mark.needs_sandbox
def test_needs_it():
    pass
"""


@pytest.mark.parametrize(("required", "outcome"), [("1", "errors"), ("0", "skipped")])
def test_a_missing_sandbox_fails_where_it_is_required(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, required: str, outcome: str
) -> None:
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(TEST)
    monkeypatch.setenv("PATH", str(pytester.path / "no-bin"))  # no bwrap to be found
    monkeypatch.setenv("TETHER_REQUIRE_SANDBOX", required)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(**{outcome: 1})
    if outcome == "errors":
        result.stdout.fnmatch_lines(["*bubblewrap (bwrap) is not installed*"])
    assert sys.executable  # the subprocess runs this interpreter whatever PATH says
