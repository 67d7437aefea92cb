"""The first "always" answer writes ``.tether/settings.local.json``; inside a git work tree
the daemon adds ``.tether/*.local.*`` to the repository's ``info/exclude`` so the user's own
rules never show up in ``git status`` (real git, real files)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tether.settings.git_exclude import exclude_local_files
from tether.settings.load import add_local_rule

GIT = shutil.which("git")


def git(cwd: Path, *args: str) -> str:
    if GIT is None:
        pytest.fail("git is not installed")
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run([GIT, *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    (path / "app.py").write_text("print('hi')\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "start")
    return path


def test_first_rule_leaves_git_status_clean(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    add_local_rule(root, "allow", "Bash(make test:*)")
    assert (root / ".tether" / "settings.local.json").is_file()
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    exclude = (root / ".git" / "info" / "exclude").read_text()
    assert exclude.splitlines()[-1] == ".tether/*.local.*"
    # Later rules do not add the line again; other .tether files still show.
    add_local_rule(root, "deny", "Bash(rm:*)")
    assert (root / ".git" / "info" / "exclude").read_text() == exclude
    (root / ".tether" / "settings.json").write_text("{}\n")
    assert (
        git(root, "status", "--porcelain", "--untracked-files=all") == "?? .tether/settings.json\n"
    )


def test_workspace_in_a_subfolder_and_a_linked_worktree(tmp_path: Path) -> None:
    main = repo(tmp_path / "main")
    (main / "pkg").mkdir()
    add_local_rule(main / "pkg", "allow", "Bash(ls:*)")
    assert git(main, "status", "--porcelain", "--untracked-files=all") == ""
    assert "pkg/.tether/*.local.*" in (main / ".git" / "info" / "exclude").read_text()

    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked))
    add_local_rule(linked, "allow", "Bash(ls:*)")
    # A linked worktree's .git is a file; the exclude it reads is the main repository's.
    assert (linked / ".git").is_file()
    assert git(linked, "status", "--porcelain", "--untracked-files=all") == ""
    assert ".tether/*.local.*" in (main / ".git" / "info" / "exclude").read_text().splitlines()


def test_an_exclude_without_final_newline_and_no_repository(tmp_path: Path) -> None:
    root = repo(tmp_path / "ws")
    exclude = root / ".git" / "info" / "exclude"
    exclude.write_text("*.swp")  # the user's own line, no newline after it
    (root / ".tether").mkdir()
    assert exclude_local_files(root / ".tether") == exclude
    assert exclude.read_text().splitlines()[0] == "*.swp"
    assert exclude.read_text().splitlines()[-1] == ".tether/*.local.*"
    assert exclude_local_files(root / ".tether") is None  # already there

    plain = tmp_path / "plain" / ".tether"
    plain.mkdir(parents=True)
    assert exclude_local_files(plain) is None
    assert not (tmp_path / "plain" / ".git").exists()


@pytest.mark.parametrize(
    "folder", ["a[b]c", "star*q?", "back\\slash", "#hash", "!bang", "sp ace ", "[ab]"]
)
def test_a_workspace_path_with_pattern_characters_is_quoted(tmp_path: Path, folder: str) -> None:
    """The line names exactly this workspace's files (gitignore(5) quoting): git ignores
    them, and a sibling folder the unquoted pattern would match still shows."""
    top = repo(tmp_path / "ws")
    root = top / folder
    sibling = top / "ab" if folder == "[ab]" else top / f"x{folder}"
    for where in (root, sibling):
        (where / ".tether").mkdir(parents=True)
        (where / ".tether" / "settings.local.json").write_text("{}\n")
    (top / "b").mkdir()
    (top / "b" / ".tether").mkdir()
    (top / "b" / ".tether" / "settings.local.json").write_text("{}\n")
    assert exclude_local_files(root / ".tether") is not None
    status = git(top, "status", "--porcelain", "--untracked-files=all", "-z").split("\0")
    assert f"?? {folder}/.tether/settings.local.json" not in status
    assert f"?? {sibling.name}/.tether/settings.local.json" in status
    assert "?? b/.tether/settings.local.json" in status
