"""The sandbox leaves no trace: over the whole shell corpus, the host changes exactly as
much as the command itself changed, and a read-only line changes nothing.

Each line runs for real in the sandbox (for at most a second, with what it started in the
background: test runners and package managers are cut short, which changes nothing for the
property; a job left writing would be counted against the next line), in a small project that is a git repository
missing every other protected name. The command's own view is recorded by snapshots taken
inside the sandbox right before and after it (names, types, sizes, modification times of
the workspace, recursively, and of the folder around it); the host takes the same
snapshot before the sandbox starts and after it ends. The host's must equal the command's:
anything the sandbox's own machinery created, even for a moment it could see, shows up as
a difference at one end. Lines run in batches (one sandbox per batch, each line in its
own shell), with and without the sandbox prepared while the model thinks; when prepared,
preparing it must leave no trace either.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.sandbox import BwrapSandbox

from .conftest import MakeHarness, needs_bwrap, text_of
from .test_prepared_sandbox import WHERE, settled

pytestmark = needs_bwrap

CORPUS = Path(__file__).with_name("shell_corpus.jsonl")
LINES: list[dict[str, Any]] = [
    json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line
]
BATCH = 40
PYTHON = os.path.realpath(sys.executable)
SNAPSHOT = """
import hashlib, json, os, subprocess, sys

def snapshot(root):
    around = os.path.dirname(root)
    out = {}
    def note(path):
        st = os.lstat(path)
        kind = "l" if os.path.islink(path) else "d" if os.path.isdir(path) else "f"
        out[os.path.relpath(path, around)] = [kind, 0 if kind == "d" else st.st_size, st.st_mtime_ns]
    for name in os.listdir(around):
        note(os.path.join(around, name))
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            note(os.path.join(top, name))
    return out

def report(before, after):
    text = json.dumps(after, sort_keys=True)
    print("SNAP", hashlib.sha256(text.encode()).hexdigest())
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            print("DIFF", key, before.get(key), "->", after.get(key))

root = sys.argv[1]
if len(sys.argv) == 2:
    print(json.dumps(snapshot(root), sort_keys=True))
    sys.exit()
before = snapshot(root)
report(before, before)
for line in json.loads(sys.argv[2]):
    subprocess.run(
        ["timeout", "-k", "1", "1", "bash", "-c", line + "\\nwait"], cwd=root,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    after = snapshot(root)
    report(before, after)
    before = after
"""
"""With only the workspace (``argv[1]``): its snapshot (and the folder around it's) as JSON.
With lines (``argv[2]``, JSON): runs each in its own shell in the workspace, for at most a
second, printing the hash of the snapshot before the first and after each, with what
changed."""
MARK = "SNAP "


@pytest.fixture
def workspace() -> Iterator[Path]:
    """Outside ``/tmp``: inside the sandbox ``/tmp`` is private, so the folder around a
    workspace there would look empty."""
    base = Path(tempfile.mkdtemp(prefix="tether-corpus-", dir="/var/tmp"))
    (base / "ws").mkdir()
    yield Path(os.path.realpath(base / "ws"))
    shutil.rmtree(base, ignore_errors=True)


def snapshot(root: Path) -> str:
    done = subprocess.run(
        [PYTHON, "-c", SNAPSHOT, str(root)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def project(root: Path) -> None:
    """A small project the corpus's commands find things in."""
    files = {
        "src/app.py": "def main():\n    print('hi')\n",
        "src/util.ts": "export const x = 1;\n",
        "tests/test_app.py": "def test_x():\n    assert True\n",
        "README.md": "# Demo\nTODO: more\n",
        "package.json": '{"name": "demo", "scripts": {"test": "echo ok"}}\n',
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "Makefile": "all:\n\techo built\n",
        ".env.example": "KEY=value\n",
        "list.txt": "a\nb\n",
        "logs/app.log": "started\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root.parent / "outside").mkdir(exist_ok=True)
    (root.parent / "outside" / "notes.txt").write_text("beside the workspace\n")
    ident = ["-c", "user.name=T", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "-A"], [*ident, "commit", "-qm", "first"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def batch_script(root: Path, lines: list[str]) -> str:
    return shlex.join([PYTHON, "-c", SNAPSHOT, str(root), json.dumps(lines)])


def inside_snapshots(output: str) -> list[tuple[str, list[str]]]:
    """The hash of each snapshot taken inside, with what changed since the one before."""
    out: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        if line.startswith(MARK):
            out.append((line.removeprefix(MARK), []))
        elif line.startswith("DIFF ") and out:
            out[-1][1].append(line.removeprefix("DIFF "))
    return out


def differences(a: str, b: str) -> list[str]:
    left, right = json.loads(a), json.loads(b)
    keys = sorted(set(left) | set(right))
    return [f"{k}: {left.get(k)} -> {right.get(k)}" for k in keys if left.get(k) != right.get(k)]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("prepared", [False, True], ids=["fresh", "prepared"])
async def test_every_corpus_line_changes_the_host_exactly_as_it_changed_it(
    make_harness: MakeHarness, workspace: Path, prepared: bool
) -> None:
    project(workspace)
    h = make_harness(mode="bypassPermissions")
    # The host's sockets come and go with other programs: a fixed list keeps the layout, so
    # the prepared sandbox is the one used.
    sandbox = BwrapSandbox(workspace, linger_s=60 if prepared else 0, sockets=lambda: [])
    h.ctx.config.shell_sandbox = sandbox
    commands = [entry["command"] for entry in LINES]
    checked = 0
    wrong: list[str] = []
    try:
        for start in range(0, len(commands), BATCH):
            lines = commands[start : start + BATCH]
            if prepared and start:
                ended = await asyncio.to_thread(snapshot, workspace)
                assert len(await settled(1)) == 1
                ready = await asyncio.to_thread(snapshot, workspace)
                assert differences(ended, ready) == [], "preparing a sandbox left a trace"
            host_before = await asyncio.to_thread(snapshot, workspace)
            script = batch_script(workspace, lines)
            out = await h.call("Bash", command=f"{WHERE}\n{script}", timeout=600_000)
            host_after = await asyncio.to_thread(snapshot, workspace)
            text = text_of(out)
            if prepared and start:
                assert "PREPARED" in text.splitlines(), text[:2000]
            seen = inside_snapshots(text)
            assert len(seen) == len(lines) + 1, text[-3000:]
            assert digest(host_before) == seen[0][0], (
                "the sandbox changed the host as it started",
                text[:3000],
            )
            assert digest(host_after) == seen[-1][0], "the sandbox changed the host as it ended"
            for i, line in enumerate(lines):
                entry = LINES[start + i]
                changed = seen[i + 1][1]
                if entry["read_only"] and changed:
                    wrong.append(f"read-only line {line!r} changed {changed}")
                checked += 1
    finally:
        sandbox.close()
    assert wrong == []
    assert checked == len(commands) >= 474


@pytest.mark.parametrize("prepared", [False, True], ids=["fresh", "prepared"])
async def test_the_agents_commit_holds_exactly_the_files_it_changed(
    make_harness: MakeHarness, workspace: Path, prepared: bool
) -> None:
    project(workspace)
    h = make_harness(mode="bypassPermissions", linger_s=60 if prepared else 0)
    try:
        out = await h.call("Bash", command="ls -A; git status --porcelain")
        assert text_of(out).split() == sorted(p.name for p in workspace.iterdir()), text_of(out)
        edit = (
            "printf 'def main():\\n    print(\"bye\")\\n' > src/app.py && echo 'y = 2' > src/new.py"
        )
        out = await h.call("Bash", command=f"{edit} && git add -A && git commit -qm change")
        assert not out.failed, text_of(out)
        show = subprocess.run(  # noqa: ASYNC221
            ["git", "show", "--name-status", "--format=", "HEAD"],
            cwd=workspace,
            capture_output=True,
            text=True,
            check=True,
        )
        assert show.stdout.split() == ["M", "src/app.py", "A", "src/new.py"], show.stdout
        status = subprocess.run(  # noqa: ASYNC221
            ["git", "status", "--porcelain", "--ignored"],
            cwd=workspace,
            capture_output=True,
            text=True,
            check=True,
        )
        assert status.stdout == "", status.stdout  # nothing left behind, nothing missing
    finally:
        sandbox = h.ctx.config.shell_sandbox
        assert isinstance(sandbox, BwrapSandbox)
        sandbox.close()
