"""Every test runs print mode in-process unless it asks for the warm daemon: a test that
wants the daemon sets ``TETHER_NO_DAEMON=0`` and a runtime directory of its own (and stops
the daemon it started), so no daemon outlives the test that started it.

That is checked at the end of the run: a daemon started by this run (its environment carries
this run's mark, or names this run's temporary directory) still alive then fails the run,
and is stopped.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

RUN_MARK = "TETHER_TEST_RUN"
"""Set for the whole run: every process the tests start inherits it, daemons included."""
_run: dict[str, str] = {}


def pytest_configure(config: pytest.Config) -> None:
    _run["mark"] = os.environ.setdefault(RUN_MARK, uuid.uuid4().hex)
    config.addinivalue_line(
        "markers",
        "needs_sandbox: needs the shell sandbox (bubblewrap and the gate); fails instead of "
        "skipping under TETHER_REQUIRE_SANDBOX=1 or when bubblewrap is installed",
    )


@pytest.fixture(autouse=True)
def _print_mode_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_NO_DAEMON", "1")


@pytest.fixture(scope="session", autouse=True)
def _temporary_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Where this run's temporary directories are: a daemon whose environment names it
    (tests that build an environment from nothing) is this run's too."""
    _run["basetemp"] = str(tmp_path_factory.getbasetemp())
    yield


def _daemons() -> dict[int, str]:
    """This user's ``tether daemon run`` processes started by this run: pid -> what tells."""
    found: dict[int, str] = {}
    mark = _run.get("mark", "")
    basetemp = _run.get("basetemp")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"daemon" not in argv or b"run" not in argv:
                continue
            if not any(a.endswith(b"tether") for a in argv):
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or not ours to read
        variables = dict(v.decode(errors="replace").partition("=")[::2] for v in environ if v)
        ours = [v for v in variables.values() if basetemp and basetemp + "/" in v]
        if variables.get(RUN_MARK) == mark or ours:
            test = variables.get("PYTEST_CURRENT_TEST")
            where = f"its environment names {ours[0]}" if ours else "no test named"
            found[int(entry.name)] = f"started during {test}" if test else where
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not Path("/proc").is_dir():
        return
    deadline = time.monotonic() + 10  # one told to stop may still be saving its sessions
    left = _daemons()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _daemons()
    if not left:
        return
    for pid in left:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"  pid {pid}, {why}" for pid, why in sorted(left.items())]
    message = "daemons started by the tests were still running at the end (stopped now):"
    if reporter is not None:
        reporter.write("\n")
        reporter.write_line("\n".join([message, *lines]), red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


REQUIRE_SANDBOX = os.environ.get("TETHER_REQUIRE_SANDBOX") == "1"
"""Set by CI (``.ci/run``): a security test whose facility does not work fails there."""


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_sandbox") is None:
        return
    from tether.sandbox import probe

    status = probe()
    if status.available:
        return
    why = f"the shell sandbox cannot run here: {status.problem}"
    if REQUIRE_SANDBOX or shutil.which("bwrap") is not None:
        pytest.fail(f"{why} (installed or required, so this is a failure, not a skip)")
    pytest.skip(why)
