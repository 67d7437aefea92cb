"""Reads outside the workspace through the shell. A read-only command is checked like the
Read tool: any path outside the workspace asks (and a rejection keeps the secret from the
model); when a rule lets the command run anyway, the sandbox hides the home directory and
the sensitive locations, so the secret still never comes back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.sandbox import BwrapSandbox
from tether.settings.model import SandboxSettings

from .conftest import SECRET, MakeHarness, needs_bwrap, text_of


@pytest.fixture
def traps(workspace: Path, outside: Path) -> None:
    """Ways back out from inside: a symlinked folder and a hard link."""
    (workspace / "src" / "vendor").symlink_to(outside, target_is_directory=True)
    os.link(outside / "secret.txt", workspace / "hardlink.txt")


READ_ATTACKS = [
    pytest.param("cat ~/.ssh/id_rsa", id="cat-home-key"),
    pytest.param("head -c 500 ~/.aws/credentials", id="head-cloud-credentials"),
    pytest.param("git diff --no-index ~/.netrc src/app.py", id="git-diff-no-index"),
    pytest.param("git diff ../outside/secret.txt /dev/null", id="git-diff-implicit-no-index"),
    pytest.param("diff ../outside/secret.txt src/app.py", id="diff-a-file-outside"),
    pytest.param("cd .. && cat outside/secret.txt", id="cd-out-then-relative-read"),
    pytest.param("cd src && cat ../../outside/secret.txt", id="cd-in-then-dotdot"),
    pytest.param("cat < ../outside/secret.txt", id="input-redirection"),
    pytest.param("cat ../outside/*", id="glob-outside"),
    pytest.param("cat src/vendor/secret.txt", id="symlinked-folder"),
    pytest.param("cat hardlink.txt", id="hard-link-to-a-file-outside"),
    pytest.param("grep -h '' --file=../outside/secret.txt src/app.py", id="grep-pattern-file"),
    pytest.param("wc --files0-from=../outside/list src/app.py", id="wc-files0-from"),
    pytest.param("sed -n p ~/.bash_history", id="sed-print-history"),
    pytest.param("awk 1 ~/.config/gh/hosts.yml", id="awk-token-file"),
    pytest.param("jq -R . ~/.docker/config.json", id="jq-registry-auth"),
    pytest.param("find ~/.ssh -type f", id="find-in-home"),
    pytest.param("ls -la ~/.aws", id="ls-credentials-dir"),
    pytest.param("echo $(cat ~/.netrc)", id="read-inside-a-substitution"),
    pytest.param("cat <(cat ~/.netrc)", id="read-inside-process-substitution"),
]


@pytest.mark.parametrize("command", READ_ATTACKS)
async def test_reading_outside_the_workspace_asks_and_a_rejection_keeps_the_secret(
    make_harness: MakeHarness, home: Path, traps: None, command: str
) -> None:
    h = make_harness(mode="acceptEdits", allow=("Bash(echo:*)",), answer="reject_once")
    out = await h.call("Bash", command=command)
    assert len(h.answers.asked) == 1, command
    assert out.failed and SECRET not in text_of(out) and "TOP SECRET" not in text_of(out)


async def test_reads_inside_the_workspace_still_run_unasked(
    make_harness: MakeHarness, workspace: Path
) -> None:
    h = make_harness(answer="reject_once")
    out = await h.call("Bash", command="cat src/app.py && cd src && grep -n print app.py")
    assert h.answers.asked == [] and "print('hi')" in text_of(out)


async def test_a_read_rule_allows_that_path_and_only_that_path(
    make_harness: MakeHarness, outside: Path
) -> None:
    # No sandbox (the user turned it off): the rule alone decides what the command reads.
    h = make_harness(allow=(f"Read(/{outside}/**)",), answer="reject_once", sandbox=False)
    out = await h.call("Bash", command=f"cat {outside}/secret.txt")
    assert h.answers.asked == [] and "TOP SECRET" in text_of(out)
    await h.call("Bash", command=f"cat {outside}/../home/.netrc")
    assert len(h.answers.asked) == 1


async def test_read_deny_rules_apply_to_shell_paths(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key").write_text("INNER SECRET")
    h = make_harness(mode="bypassPermissions", allow=("Bash(cat:*)",), deny=("Read(./secrets/**)",))
    out = await h.call("Bash", command="cat src/../secrets/key")
    assert out.failed and "INNER SECRET" not in text_of(out)
    assert (await h.decide("Bash", command="grep -r x secrets")).behavior == "deny"


# -- the sandbox, when a rule or the mode lets the command run ------------------------------


SANDBOX_READS = [
    pytest.param("cat ~/.ssh/id_rsa", id="ssh-key"),
    pytest.param("cat ~/.aws/credentials ~/.netrc", id="credentials"),
    pytest.param("cat ~/.bash_history; cat ~/notes.txt", id="history-and-notes"),
    pytest.param("grep -rh TETHER ~ 2>/dev/null", id="grep-the-whole-home"),
    pytest.param("tar -cf - -C ~ . 2>/dev/null | strings", id="archive-the-home"),
    pytest.param("cat ~/.config/gh/hosts.yml ~/.docker/config.json", id="tokens"),
]


@needs_bwrap
@pytest.mark.parametrize("command", SANDBOX_READS)
async def test_the_sandbox_hides_the_home_directory(
    make_harness: MakeHarness, home: Path, command: str
) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command=command)
    assert SECRET not in text_of(out), text_of(out)


@needs_bwrap
async def test_the_sandbox_hides_system_secrets_even_as_root(make_harness: MakeHarness) -> None:
    shadow = Path("/etc/shadow")
    if not os.access(shadow, os.R_OK):
        pytest.skip("/etc/shadow is not readable here in the first place")
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command="cat /etc/shadow; echo end")
    assert "root:" not in text_of(out) and "end" in text_of(out)


@needs_bwrap
async def test_toolchains_and_git_identity_in_the_home_stay_usable(
    make_harness: MakeHarness, home: Path
) -> None:
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "bin" / "tool").write_text("#!/bin/sh\necho tool-ran\n")
    (home / ".cargo" / "bin" / "tool").chmod(0o755)
    (home / ".cargo" / "credentials.toml").write_text(SECRET)
    h = make_harness(mode="bypassPermissions")
    out = await h.call(
        "Bash", command="~/.cargo/bin/tool; git config user.email; cat ~/.cargo/credentials.toml"
    )
    assert "tool-ran" in text_of(out) and "tester@example.com" in text_of(out)
    assert SECRET not in text_of(out)


@needs_bwrap
async def test_settings_open_what_the_user_names_and_nothing_else(
    make_harness: MakeHarness, workspace: Path, home: Path
) -> None:
    h = make_harness(mode="bypassPermissions")
    settings = SandboxSettings(readable_paths=["~/notes.txt"])
    h.ctx.config.shell_sandbox = BwrapSandbox(workspace, settings, linger_s=0)
    out = await h.call("Bash", command="cat ~/notes.txt; cat ~/.ssh/id_rsa")
    assert f"{SECRET} in notes.txt" in text_of(out) and f"{SECRET} in .ssh" not in text_of(out)
    open_home = SandboxSettings(hide_home=False)
    h.ctx.config.shell_sandbox = BwrapSandbox(workspace, open_home, linger_s=0)
    out = await h.call("Bash", command="cat ~/notes.txt; cat ~/.ssh/id_rsa ~/.netrc")
    assert f"{SECRET} in notes.txt" in text_of(out)
    assert f"{SECRET} in .ssh" not in text_of(out) and f"{SECRET} in .netrc" not in text_of(out)


@needs_bwrap
async def test_extra_hidden_paths_from_settings(
    make_harness: MakeHarness, workspace: Path, outside: Path
) -> None:
    h = make_harness(mode="bypassPermissions")
    settings = SandboxSettings(hidden_paths=[str(outside)])
    h.ctx.config.shell_sandbox = BwrapSandbox(workspace, settings, linger_s=0)
    out = await h.call("Bash", command=f"cat {outside}/secret.txt; ls -A {outside} | wc -l")
    assert "TOP SECRET" not in text_of(out) and text_of(out).strip().endswith("0")


@needs_bwrap
@pytest.mark.parametrize(
    "move",
    [
        pytest.param("mv config c2", id="rename"),
        pytest.param("mkdir deeper && mv config deeper/", id="into-another"),
        pytest.param("mv config/secrets.yml secrets.yml", id="the-file"),
    ],
)
async def test_a_hidden_file_in_the_workspace_stays_hidden_when_its_folder_is_moved(
    make_harness: MakeHarness, workspace: Path, move: str
) -> None:
    """Hidden by its path: the folder holding it, or the file, stays where it is (else the
    next command would read it under the new name)."""
    (workspace / "config").mkdir()
    (workspace / "config" / "secrets.yml").write_text("token: HUNTER2\n")
    h = make_harness(mode="bypassPermissions")
    settings = SandboxSettings(hidden_paths=["config/secrets.yml"])
    h.ctx.config.shell_sandbox = BwrapSandbox(workspace, settings, linger_s=0)
    moved = await h.call("Bash", command=f"{move}; echo done")
    if "secrets.yml" not in move:  # the file itself is a mount point inside: busy
        assert "hidden from commands" in text_of(moved), text_of(moved)
    found = await h.call("Bash", command="grep -rh token . 2>/dev/null; echo searched")
    assert "HUNTER2" not in text_of(found) and "searched" in text_of(found)
    assert (workspace / "config" / "secrets.yml").read_text() == "token: HUNTER2\n"


@needs_bwrap
async def test_a_workspace_inside_the_home_is_usable_and_its_neighbours_are_not(
    make_harness: MakeHarness, home: Path
) -> None:
    project = home / "proj"
    project.mkdir()
    (project / "README.md").write_text("project readme\n")
    h = make_harness(mode="bypassPermissions")
    h.ctx.cwd = project
    h.ctx.config.shell_sandbox = BwrapSandbox(project, linger_s=0)
    out = await h.call(
        "Bash", command="cat README.md && echo new > made.txt && cat ~/.ssh/id_rsa ~/notes.txt"
    )
    assert "project readme" in text_of(out) and (project / "made.txt").read_text() == "new\n"
    assert SECRET not in text_of(out)


@needs_bwrap
async def test_additional_directories_of_the_file_tools_are_readable_by_commands(
    make_harness: MakeHarness, workspace: Path, home: Path
) -> None:
    shared = home / "shared-lib"
    shared.mkdir()
    (shared / "lib.txt").write_text("shared code\n")
    h = make_harness(mode="bypassPermissions")
    h.ctx.config.additional_dirs = [shared]
    h.ctx.config.shell_sandbox = BwrapSandbox(workspace, linger_s=0, also_readable=[shared])
    out = await h.call("Bash", command=f"cat {shared}/lib.txt; cat ~/.ssh/id_rsa")
    assert "shared code" in text_of(out) and SECRET not in text_of(out)
    assert (await h.decide("Bash", command=f"cat {shared}/lib.txt")).reason == "read-only command"
