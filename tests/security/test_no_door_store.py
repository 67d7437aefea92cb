"""A door committed through git's object store is undone after the command (``gitstore``).

The sandboxed command cannot write ``.githooks/pre-commit`` or ``.envrc`` in the work tree,
but it can write git's objects, refs and index: it stages or commits the door there, and
the user's own ``git checkout -- .``, ``reset --hard``, ``switch``, ``stash pop`` or
``reset --hard ORIG_HEAD`` would write it into the tree, where the next ``git commit`` runs
the hook. Each attack is run once without the sandbox, where the host must run the
payload; sandboxed, the host runs none of it, and the result says what was undone.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from tether.protocol.content import TextToolContent

from .conftest import MakeHarness, needs_bwrap, text_of
from .test_no_door import GIT_ID, PAYLOAD, Attack, githooks, host_runs_git, prepare, write

pytestmark = needs_bwrap

ID = "-c user.name=A -c user.email=a@example.com"
BLOB = "h=$({payload} | git hash-object -w --stdin)"
TREE = (
    "t=$( (git ls-tree HEAD; printf '040000 tree %s\\t.githooks\\n' $(printf"
    " '100755 blob %s\\tpre-commit\\n' $h | git mktree)) | git mktree)"
)
COMMIT = f"c=$(git {ID} commit-tree $t -p HEAD -m up)"
PLANT = f"{BLOB} && {TREE} && {COMMIT}"


def nested_repo(_ws: Path, _home: Path) -> None:
    """A repository inside the workspace's (a vendored library, say) with its own hooks."""
    lib = _ws / "lib"
    write(lib / "lib.py", "x = 1\n")
    for args in (["init", "-q"], ["config", "core.hooksPath", ".githooks"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=lib, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-qm", "lib"], cwd=lib, check=True)


STORE_ATTACKS = [
    Attack(
        "index-cacheinfo-checkout",
        f"{BLOB} && git update-index --add --cacheinfo 100755,$h,.githooks/pre-commit",
        githooks,
        extra=("checkout -- .",),
    ),
    Attack(
        "index-info-commit-reset-hard",
        f"{BLOB} && printf '100755 %s 0\\t.githooks/pre-commit\\n' $h"
        f" | git update-index --add --index-info && git {ID} commit -qm up",
        githooks,
        extra=("reset --hard",),
    ),
    Attack(
        "read-tree-checkout",
        f"{BLOB} && {TREE} && git read-tree $t",
        githooks,
        extra=("checkout -- .",),
    ),
    Attack(
        "commit-tree-reset-soft",
        f"{PLANT} && git reset -q --soft $c",
        githooks,
        extra=("reset --hard",),
    ),
    Attack(
        "new-branch-switch",
        f"{PLANT} && git branch feature $c",
        githooks,
        extra=("switch feature",),
    ),
    Attack(
        "stash-pop",
        f"{PLANT} && i=$(git {ID} commit-tree HEAD^{{{{tree}}}} -p HEAD -m i)"
        f" && s=$(git {ID} commit-tree $t -p HEAD -p $i -m WIP) && git stash store -m WIP $s",
        githooks,
        extra=("stash pop",),
    ),
    Attack(
        "orig-head",
        f"{PLANT} && git update-ref ORIG_HEAD $c",
        githooks,
        extra=("reset --hard ORIG_HEAD",),
    ),
    Attack(
        "buried-under-a-clean-commit",
        f"{PLANT} && d=$(git {ID} commit-tree HEAD^{{{{tree}}}} -p $c -m clean)"
        " && git reset -q --soft $d",
        githooks,
        extra=("reset --hard HEAD~1",),
    ),
    Attack(
        "reflog-entry",
        f"{PLANT} && o=$(git rev-parse HEAD) && git update-ref HEAD $c && git update-ref HEAD $o",
        githooks,
        extra=("reset --hard HEAD@{1}",),
    ),
    Attack(
        "replace-ref",
        f"{PLANT} && git replace HEAD $c",
        githooks,
        extra=("reset --hard",),
    ),
    Attack(
        "index-written-in-place",
        f"{BLOB} && cp .git/index /tmp/i && GIT_INDEX_FILE=/tmp/i git update-index --add"
        " --cacheinfo 100755,$h,.githooks/pre-commit && cat /tmp/i > .git/index",
        githooks,
        extra=("checkout -- .",),
    ),
    Attack(
        "nested-repository",
        f"cd lib && {PLANT} && git reset -q --soft $c",
        nested_repo,
        where=("lib",),
        extra=("reset --hard",),
    ),
    Attack(
        "annotated-tag-checkout",
        f"{PLANT} && git {ID} tag -a -m release v8 $c",
        githooks,
        extra=("checkout v8 -- .",),
    ),
    Attack(
        "tag-naming-a-tree",
        f"{BLOB} && {TREE} && git tag v7 $t",
        githooks,
        extra=("checkout v7 -- .",),
    ),
    Attack(
        "behind-a-ref-to-a-missing-object",
        "mkdir -p .git/refs/heads && echo 0123456789012345678901234567890123456789"
        f" > .git/refs/heads/broken && {PLANT} && git reset -q --soft $c",
        githooks,
        extra=("reset --hard",),
    ),
    Attack(
        "tag-checkout",
        f"{PLANT} && git tag v9 $c",
        githooks,
        extra=("checkout v9 -- .",),
    ),
]


@pytest.mark.parametrize("attack", STORE_ATTACKS, ids=[a.id for a in STORE_ATTACKS])
async def test_a_door_staged_or_committed_is_undone(
    make_harness: MakeHarness, workspace: Path, home: Path, tmp_path: Path, attack: Attack
) -> None:
    canary = tmp_path / "canary"
    command = attack.command.format(payload=PAYLOAD.format(canary=canary))
    prepare(workspace, home, attack)

    control = tmp_path / "control" / workspace.name
    shutil.copytree(workspace, control, symlinks=True)
    done = subprocess.run(["bash", "-c", command], cwd=control, capture_output=True, check=False)  # noqa: ASYNC221
    assert done.returncode == 0, done.stderr
    await asyncio.to_thread(host_runs_git, control, attack.where, attack.extra)
    assert canary.exists(), f"the attack {attack.id} does not fire even unsandboxed"
    canary.unlink()

    h = make_harness(mode="bypassPermissions")
    outcome = await h.call("Bash", command=command)
    out = text_of(outcome)
    await asyncio.to_thread(host_runs_git, workspace, attack.where, attack.extra)
    assert not canary.exists(), f"the host ran what {attack.id} committed:\n{out}"
    assert "undid" in out and ".githooks/pre-commit" in out, out
    shown = [d.text for d in outcome.display if isinstance(d, TextToolContent)]
    assert any("undid" in text for text in shown), outcome.display  # the user's tool card


async def test_the_agents_own_commits_and_approved_door_files_are_kept(
    make_harness: MakeHarness, workspace: Path, home: Path
) -> None:
    """``git add -A && git commit`` of ordinary files, and of a door file the user (or an
    approved file edit) wrote, goes through untouched."""
    prepare(workspace, home, Attack("legit", "true", githooks))
    h = make_harness(mode="bypassPermissions")
    (workspace / "src" / "new.py").write_text("x = 1\n")
    write(workspace / ".envrc", "export A=1\n")  # written on the host: the user's
    out = text_of(
        await h.call("Bash", command=f"git add -A && git {ID} commit -qm work && git log --stat -1")
    )
    assert "undid" not in out and "Exit" not in out, out
    assert "src/new.py" in out and ".envrc" in out, out
    shown = git_out(workspace, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(shown) == [".envrc", "src/new.py"], shown
    assert git_out(workspace, "status", "--porcelain") == ""
    out = text_of(
        await h.call("Bash", command=f"echo more >> src/new.py && git {ID} commit -qam more")
    )
    assert "undid" not in out, out
    assert git_out(workspace, "log", "-1", "--format=%s") == "more\n"


def git_out(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout
