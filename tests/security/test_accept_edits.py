"""acceptEdits allows the file commands (mkdir, touch, mv, cp, rm, rmdir, sed -i) whose
every path is inside the workspace and outside the control plane, as it allows Edit and
Write there; anything else they name is a question. Checked on disk."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import MakeHarness, text_of


@pytest.fixture
def tree(workspace: Path) -> Path:
    (workspace / "notes.txt").write_text("alpha\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("obj")
    (workspace / "empty").mkdir()
    return workspace


INSIDE: list[tuple[str, Callable[[Path], bool]]] = [
    (
        "mkdir -p dist/assets && touch dist/assets/.keep",
        lambda w: (w / "dist/assets/.keep").is_file(),
    ),
    (
        "mv notes.txt notes.md",
        lambda w: (w / "notes.md").is_file() and not (w / "notes.txt").exists(),
    ),
    ("cp notes.txt src/", lambda w: (w / "src/notes.txt").read_text() == "alpha\n"),
    ("rm -rf build", lambda w: not (w / "build").exists()),
    ("rmdir empty", lambda w: not (w / "empty").exists()),
    ("sed -i 's/alpha/beta/' notes.txt", lambda w: (w / "notes.txt").read_text() == "beta\n"),
    ("rm -f build/*.o && ls build", lambda w: list((w / "build").iterdir()) == []),
    ("cd src && touch made.py && mv made.py moved.py", lambda w: (w / "src/moved.py").is_file()),
]


@pytest.mark.parametrize(("command", "done"), INSIDE, ids=[c for c, _ in INSIDE])
async def test_file_commands_inside_the_workspace_run_unasked(
    make_harness: MakeHarness, tree: Path, command: str, done: Callable[[Path], bool]
) -> None:
    h = make_harness(mode="acceptEdits", answer="reject_once")
    out = await h.call("Bash", command=command)
    assert h.answers.asked == [] and not out.failed, text_of(out)
    assert done(tree)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("mkdir ../outside/planted", id="mkdir-outside"),
        pytest.param("touch ~/.bashrc_tether", id="touch-home"),
        pytest.param("cp ../outside/secret.txt stolen.txt", id="cp-from-outside"),
        pytest.param("mv notes.txt ../outside/", id="mv-out"),
        pytest.param("rm -rf .", id="rm-the-workspace"),
        pytest.param("rm -rf ../outside", id="rm-outside"),
        pytest.param("sed -i 's/a/b/' ../outside/secret.txt", id="sed-outside"),
        pytest.param("sed -i -e 's/alpha/x/w ../outside/w' notes.txt", id="sed-w-flag"),
        pytest.param("rm -rf link/", id="rm-through-a-symlink"),
        pytest.param("touch link/planted", id="touch-through-a-symlink"),
        pytest.param('rm -rf "$TARGET"', id="rm-a-path-decided-at-run-time"),
    ],
)
async def test_file_commands_reaching_outside_ask(
    make_harness: MakeHarness, tree: Path, outside: Path, command: str
) -> None:
    (tree / "link").symlink_to(outside, target_is_directory=True)
    before = sorted(p.name for p in outside.iterdir())
    h = make_harness(mode="acceptEdits", answer="reject_once")
    out = await h.call("Bash", command=command)
    assert len(h.answers.asked) == 1 and out.failed
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "secret.txt").read_text() == "TOP SECRET\n"
    assert (tree / "notes.txt").read_text() == "alpha\n" and (tree / "src").is_dir()


async def test_default_mode_still_asks_for_file_commands(
    make_harness: MakeHarness, tree: Path
) -> None:
    h = make_harness(answer="reject_once")
    await h.call("Bash", command="rm -rf build")
    assert len(h.answers.asked) == 1 and (tree / "build" / "out.o").exists()


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


async def test_globs_are_checked_against_what_they_could_match(
    make_harness: MakeHarness, tree: Path, outside: Path
) -> None:
    git_init(tree)
    h = make_harness(mode="acceptEdits", answer="reject_once")
    out = await h.call("Bash", command="cd build && rm -f *.o")
    assert h.answers.asked == [] and not out.failed, text_of(out)
    assert list((tree / "build").iterdir()) == []
    for command in ("rm -rf .*", "rm -rf ../outside/*", "cd src && rm -rf ../*"):
        decision = await h.decide("Bash", command=command)
        assert decision.behavior == "ask", command
    assert (tree / ".git").is_dir() and (outside / "secret.txt").exists()
