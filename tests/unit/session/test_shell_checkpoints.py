"""Rewind covers files changed by shell commands: snapshots before and after a command."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tether.session.checkpoints import Checkpoints, saved_checkpoints
from tether.session.file_snapshot import WorkspaceSnapshots
from tether.session.shell_checkpoints import ShellCheckpoints, shell_changes_files
from tether.transcript.records import ProgressRecord


def tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / "notes.md").write_text("# notes\n")
    (root / "logo.bin").write_bytes(b"\x89PNG\0\0")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text("generated\n")
    return root


def run(root: Path, command: str) -> None:
    subprocess.run(["sh", "-c", command], cwd=root, check=True)


class Recorded:
    def __init__(self) -> None:
        self.records: list[ProgressRecord] = []

    def __call__(self, record: ProgressRecord) -> None:
        self.records.append(record)


async def command(hooks: ShellCheckpoints, root: Path, line: str, call_id: str) -> None:
    inp: dict[str, Any] = {"command": line}
    await hooks.pre_tool_use("Bash", inp, call_id)
    run(root, line)
    await hooks.post_tool_use("Bash", inp, call_id, "", False)


async def test_a_command_s_changes_are_checkpointed_with_their_text_before(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path / "ws")
    checkpoints = Checkpoints()
    checkpoints.begin("t1", None)
    recorded = Recorded()
    hooks = ShellCheckpoints(WorkspaceSnapshots(root), checkpoints, "s1", recorded)
    line = (
        "echo changed > src/app.py; rm notes.md; echo new > added.txt; "
        "printf 'x\\0' >> logo.bin; echo again > build/out.txt"
    )
    await command(hooks, root, line, "call-1")
    turn = checkpoints.current
    assert turn is not None
    assert turn.before == {
        root / "src" / "app.py": "print('hello')\n",
        root / "notes.md": "# notes\n",
        root / "added.txt": None,
    }
    assert turn.missing == {root / "logo.bin": "it is a binary file"}
    # Recorded like the editor's checkpoints, so a resumed session can rewind them too.
    events = sorted((r.event, Path(r.data.path).name) for r in recorded.records)
    assert events == [
        ("checkpoint", "added.txt"),
        ("checkpoint", "app.py"),
        ("checkpoint", "notes.md"),
        ("checkpoint_missing", "logo.bin"),
    ]


async def test_the_first_text_of_a_turn_wins(tmp_path: Path) -> None:
    root = tree(tmp_path / "ws")
    checkpoints = Checkpoints()
    checkpoints.begin("t1", None)
    hooks = ShellCheckpoints(WorkspaceSnapshots(root), checkpoints, "s1", Recorded())
    await command(hooks, root, "echo one > notes.md", "a")
    await command(hooks, root, "echo two > notes.md", "b")
    checkpoints.begin("t2", None)
    await command(hooks, root, "echo three > notes.md", "c")
    plan = checkpoints.restore_plan("t1")
    assert plan is not None and plan.files == {root / "notes.md": "# notes\n"}
    later = checkpoints.restore_plan("t2")
    assert later is not None and later.files == {root / "notes.md": "two\n"}


async def test_files_too_big_or_past_the_cache_are_reported_not_guessed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.txt").write_text("b" * 5000)
    (root / "a.txt").write_text("a" * 100)
    (root / "z.txt").write_text("z" * 100)
    checkpoints = Checkpoints()
    checkpoints.begin("t1", None)
    # Room for one small compressed file only.
    snapshots = WorkspaceSnapshots(root, max_file_bytes=4096, max_cache_bytes=20)
    hooks = ShellCheckpoints(snapshots, checkpoints, "s1", Recorded())
    await command(hooks, root, "echo x > big.txt; echo x > a.txt; echo x > z.txt", "c")
    turn = checkpoints.current
    assert turn is not None
    assert turn.missing[root / "big.txt"] == "it is larger than 4 KiB"
    kept = [p.name for p in turn.before]
    full = [p.name for p, why in turn.missing.items() if "cache" in why]
    assert sorted(kept + full) == ["a.txt", "z.txt"] and len(kept) == 1


async def test_read_only_commands_and_other_tools_take_no_snapshot(tmp_path: Path) -> None:
    assert not shell_changes_files("Bash", {"command": "ls -la && cat notes.md"})
    assert not shell_changes_files("Read", {"file_path": "notes.md"})
    assert shell_changes_files("Bash", {"command": "make build"})


async def test_checkpoints_of_commands_survive_a_restart(tmp_path: Path) -> None:
    from tether.transcript.resume import ResumedSession

    root = tree(tmp_path / "ws")
    checkpoints = Checkpoints()
    checkpoints.begin("t1", None)
    recorded = Recorded()
    hooks = ShellCheckpoints(WorkspaceSnapshots(root), checkpoints, "s1", recorded)
    await command(hooks, root, "echo changed > notes.md; printf '\\0' > logo.bin", "c")

    class Loaded:
        progress = recorded.records

    resumed: Any = ResumedSession.__new__(ResumedSession)
    resumed.turn_parents = [("t1", None)]
    resumed.loaded = Loaded()
    rebuilt = saved_checkpoints(resumed)
    plan = rebuilt.restore_plan("t1")
    assert plan is not None
    assert plan.files == {root / "notes.md": "# notes\n"}
    assert plan.missing == {root / "logo.bin": "it is a binary file"}


@pytest.mark.parametrize("listing", ["rg", "python"])
async def test_ignored_files_are_not_watched(tmp_path: Path, listing: str) -> None:
    root = tree(tmp_path / "ws")
    snapshots = WorkspaceSnapshots(root)
    if listing == "python":
        snapshots._rg = None  # pyright: ignore[reportPrivateUsage]
    snapshot = await snapshots.take()
    assert snapshot is not None
    names = sorted(Path(p).relative_to(root).as_posix() for p in snapshot.files)
    assert names == [".gitignore", "logo.bin", "notes.md", "src/app.py"]


async def test_the_control_plane_is_not_the_command_s_to_undo(tmp_path: Path) -> None:
    root = tree(tmp_path / "ws")
    (root / ".tether").mkdir()
    (root / ".tether" / "settings.local.json").write_text("{}\n")
    checkpoints = Checkpoints()
    checkpoints.begin("t1", None)
    hooks = ShellCheckpoints(WorkspaceSnapshots(root), checkpoints, "s1", Recorded())
    # The daemon itself writes settings while a command waits (an "allow always" answer).
    line = "echo '{\"permissions\": {}}' > .tether/settings.local.json; echo x > notes.md"
    await command(hooks, root, line, "c")
    turn = checkpoints.current
    assert turn is not None and list(turn.before) == [root / "notes.md"]
