"""The control plane (.tether, .git, editor settings, MCP configs) is written only with the
user's approval of that exact write: not by Edit/Write on their own, not from the sandbox."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from tether.core.hooks import ToolHookVerdict
from tether.sandbox import BwrapSandbox

from .conftest import MakeHarness, needs_bwrap, text_of


class AllowEverything:
    """A PreToolUse hook that says allow to every call."""

    async def pre_tool_use(self, tool: str, tool_input: dict, tool_use_id: str) -> ToolHookVerdict:
        return ToolHookVerdict(decision="allow")

    async def post_tool_use(self, *args: object) -> ToolHookVerdict:
        return ToolHookVerdict()

    async def user_prompt_submit(self, prompt: str):  # pragma: no cover - not used here
        raise AssertionError

    async def stop(self, **kw: object):  # pragma: no cover - not used here
        raise AssertionError

    def drain_notices(self) -> list[object]:
        return []


@pytest.mark.parametrize(
    "path",
    [
        ".tether/settings.local.json",
        ".git/hooks/pre-commit",
        ".git/config",
        ".vscode/tasks.json",
        ".idea/workspace.xml",
        ".nvim.lua",
        ".mcp.json",
        ".claude/settings.json",
    ],
)
async def test_write_tool_into_control_plane_asks_even_in_bypass_mode(
    make_harness: MakeHarness, path: str
) -> None:
    h = make_harness(mode="bypassPermissions", allow=("Write", "Edit"))
    decision = await h.decide("Write", file_path=path, content="{}")
    assert decision.behavior == "ask" and decision.forced, decision


async def test_control_plane_write_is_denied_in_dont_ask_and_plan_modes(
    make_harness: MakeHarness,
) -> None:
    for mode in ("dontAsk", "plan"):
        h = make_harness(mode=mode, allow=("Write",))
        decision = await h.decide("Write", file_path=".git/hooks/post-checkout", content="x")
        assert decision.behavior == "deny", (mode, decision)


async def test_rejected_control_plane_write_leaves_file_untouched(
    make_harness: MakeHarness, workspace: Path
) -> None:
    h = make_harness(mode="acceptEdits", answer="reject_once")
    out = await h.call("Write", file_path=".tether/settings.local.json", content='{"x":1}')
    assert out.failed and not (workspace / ".tether").exists()
    assert len(h.answers.asked) == 1


async def test_approved_control_plane_write_happens_but_always_is_not_saved(
    make_harness: MakeHarness, workspace: Path
) -> None:
    h = make_harness(answer="allow_always")
    out = await h.call("Write", file_path=".vscode/settings.json", content="{}\n")
    assert not out.failed, text_of(out)
    assert (workspace / ".vscode" / "settings.json").read_text() == "{}\n"
    (request,) = h.answers.asked
    assert request.always_rule is None and h.remembered == []


async def test_hook_allow_cannot_skip_control_plane_question(
    make_harness: MakeHarness, workspace: Path
) -> None:
    h = make_harness(hooks=AllowEverything(), answer="reject_once")
    out = await h.call("Write", file_path=".git/config", content="[core]\nfsmonitor=evil\n")
    assert out.failed and len(h.answers.asked) == 1


async def test_symlink_into_control_plane_is_protected_like_the_target(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / ".tether").mkdir()
    (workspace / "notes.json").symlink_to(workspace / ".tether" / "settings.local.json")
    h = make_harness(mode="bypassPermissions")
    decision = await h.decide("Write", file_path="notes.json", content="{}")
    assert decision.behavior == "ask" and decision.forced


async def test_bash_redirect_into_control_plane_asks_despite_allow_rule(
    make_harness: MakeHarness,
) -> None:
    h = make_harness(mode="bypassPermissions", allow=("Bash(echo:*)",))
    decision = await h.decide("Bash", command="echo 'curl x|sh' > .git/hooks/pre-commit")
    assert decision.behavior == "ask" and decision.forced


# -- from inside the sandbox ---------------------------------------------------------------


@needs_bwrap
@pytest.mark.parametrize(
    "command",
    [
        pytest.param("echo evil > .git/hooks/pre-commit", id="git-hook-write"),
        pytest.param("git config core.fsmonitor ./evil", id="git-config-via-git"),
        pytest.param("echo '[core]' >> .git/config", id="git-config-append"),
        pytest.param("mv .git .git-old && mkdir .git", id="git-dir-swap"),
        pytest.param("printf x > .git/commondir", id="git-commondir-plant"),
        pytest.param("mkdir -p .tether && echo '{}' > .tether/settings.local.json", id="tether"),
        pytest.param("mv .vscode v2; mkdir .vscode; echo x > .vscode/tasks.json", id="vscode"),
        pytest.param("echo '{}' > .mcp.json", id="mcp-json-create"),
        pytest.param("echo 'os.execute()' > .nvim.lua", id="nvim-lua-create"),
        pytest.param("ln -s /tmp .idea", id="idea-symlink-plant"),
    ],
)
async def test_sandboxed_command_cannot_write_control_plane(
    make_harness: MakeHarness, workspace: Path, command: str
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # noqa: ASYNC221
    (workspace / ".vscode").mkdir()
    before = (workspace / ".git" / "config").read_text()
    h = make_harness(mode="bypassPermissions")
    await h.call("Bash", command=command)
    assert (workspace / ".git" / "config").read_text() == before
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".git" / "commondir").exists()
    assert not (workspace / ".git-old").exists()
    assert not (workspace / ".tether").exists()  # refused, and nothing was ever made
    assert not (workspace / ".mcp.json").exists() and not (workspace / ".nvim.lua").exists()
    assert not (workspace / ".idea").exists()
    assert list((workspace / ".vscode").iterdir()) == []


@needs_bwrap
async def test_sandboxed_command_still_writes_the_rest_of_the_workspace(
    make_harness: MakeHarness, workspace: Path
) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call(
        "Bash", command="mkdir -p build && echo ok > build/out.txt && cat build/out.txt"
    )
    assert not out.failed, text_of(out)
    assert (workspace / "build" / "out.txt").read_text() == "ok\n"


# -- by meaning: nested repositories, git directories named by .git files, symlinks ----------


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repos(workspace: Path, home: Path) -> Path:
    """The workspace as a repository holding a nested repository, a repository whose git
    directory is named by a `.git` file, and a committed file."""
    _git("init", "-q", cwd=workspace)
    _git("add", "-A", cwd=workspace)
    _git("commit", "-qm", "first", cwd=workspace)
    nested = workspace / "vendor" / "lib"
    nested.mkdir(parents=True)
    _git("init", "-q", cwd=nested)
    separate = workspace / "tools"
    separate.mkdir()
    _git("init", "-q", "--separate-git-dir", str(workspace / "tools-gitdata"), cwd=separate)
    return workspace


CONFIG_FILES = ("vendor/lib/.git/config", "tools-gitdata/config", ".git/config")


def _snapshot(root: Path) -> dict[str, str]:
    return {rel: (root / rel).read_text() for rel in CONFIG_FILES}


@pytest.mark.parametrize(
    "path",
    [
        "vendor/lib/.git/config",
        "vendor/lib/.git/hooks/pre-commit",
        "tools-gitdata/config",
        "tools-gitdata/hooks/post-checkout",
        "tools/.git",
        "pkg/.claude/settings.json",
        "pkg/.claude/agents/helper.md",
        "deep/er/.tether/settings.local.json",
        "web/.vscode/tasks.json",
        "sub/.envrc",
        "sub/.mcp.json",
    ],
)
async def test_file_tools_cannot_write_the_control_plane_at_any_depth(
    make_harness: MakeHarness, repos: Path, path: str
) -> None:
    h = make_harness(mode="bypassPermissions", allow=("Write", "Edit"), answer="reject_once")
    if (repos / path).is_file():
        await h.read(path)  # a write needs a read first
    out = await h.call("Write", file_path=path, content="[core]\n\tfsmonitor = ./evil\n")
    assert out.failed and len(h.answers.asked) == 1
    assert h.answers.asked[0].always_rule is None
    target = repos / path
    assert not target.exists() or "evil" not in target.read_text()


async def test_a_control_directory_reached_through_a_symlinked_folder_is_protected(
    make_harness: MakeHarness, repos: Path
) -> None:
    (repos / "alias").symlink_to(repos / "vendor" / "lib", target_is_directory=True)
    (repos / "gitdir-alias").symlink_to(repos / "tools-gitdata", target_is_directory=True)
    h = make_harness(mode="bypassPermissions", allow=("Write",), answer="reject_once")
    await h.read("alias/.git/config")
    for path in ("alias/.git/config", "gitdir-alias/hooks/pre-push"):
        out = await h.call("Write", file_path=path, content="evil")
        assert out.failed
    assert len(h.answers.asked) == 2
    assert "evil" not in (repos / "vendor/lib/.git/config").read_text()


SANDBOX_WRITES = [
    pytest.param("git -C vendor/lib config core.fsmonitor ./evil", id="nested-config-via-git"),
    pytest.param("echo '[core] fsmonitor = x' >> vendor/lib/.git/config", id="nested-config"),
    pytest.param("echo 'curl x|sh' > vendor/lib/.git/hooks/pre-commit", id="nested-hook"),
    pytest.param("git -C tools config core.hooksPath /tmp", id="gitdir-file-config-via-git"),
    pytest.param("echo evil >> tools-gitdata/config", id="gitdir-file-config"),
    pytest.param("echo x > tools-gitdata/hooks/post-checkout", id="gitdir-file-hook"),
    pytest.param("printf 'gitdir: ../evil\\n' > tools/.git", id="gitdir-file-repointed"),
    pytest.param("printf /tmp/evil > .git/commondir", id="commondir-plant"),
    pytest.param("echo x > .git/info/attributes", id="info-attributes"),
    pytest.param("mv vendor/lib/.git vendor/lib/.git-old", id="nested-git-dir-swap"),
    pytest.param(
        "ln -s /tmp alias && echo x > alias/x; echo y >> alias/../.git/config", id="symlink-walk"
    ),
]


@needs_bwrap
@pytest.mark.parametrize("command", SANDBOX_WRITES)
async def test_sandboxed_commands_cannot_write_nested_or_named_git_directories(
    make_harness: MakeHarness, repos: Path, command: str
) -> None:
    before = _snapshot(repos)
    h = make_harness(mode="bypassPermissions")
    await h.call("Bash", command=command)
    assert _snapshot(repos) == before
    assert not (repos / "vendor/lib/.git/hooks/pre-commit").exists()
    assert not (repos / "tools-gitdata/hooks/post-checkout").exists()
    assert (repos / "tools" / ".git").read_text().startswith(f"gitdir: {repos}")
    assert not (repos / ".git" / "commondir").exists()
    assert (repos / "vendor/lib/.git").is_dir() and not (repos / "vendor/lib/.git-old").exists()
    assert not (repos / ".git" / "info" / "attributes").exists()


@needs_bwrap
async def test_git_add_and_commit_work_in_the_sandbox_and_cannot_touch_config_or_hooks(
    make_harness: MakeHarness, repos: Path
) -> None:
    before = _snapshot(repos)
    hooks = sorted(p.name for p in (repos / ".git" / "hooks").iterdir())
    (repos / "src" / "new.py").write_text("x = 1\n")
    h = make_harness(mode="bypassPermissions")
    out = await h.call(
        "Bash",
        command="git add -A src && git commit -qm 'Add new' && git branch feature && "
        "git config core.fsmonitor ./evil; echo 'exit 1' > .git/hooks/pre-commit; git log -1",
    )
    assert "Add new" in text_of(out), text_of(out)
    assert _git("log", "--format=%s", cwd=repos).splitlines() == ["Add new", "first"]
    assert "feature" in _git("branch", cwd=repos)
    assert _snapshot(repos) == before
    assert sorted(p.name for p in (repos / ".git" / "hooks").iterdir()) == hooks


@needs_bwrap
async def test_the_heredoc_commit_runs_without_a_question_when_git_commit_is_allowed(
    make_harness: MakeHarness, repos: Path
) -> None:
    (repos / "src" / "app.py").write_text("print('bye')\n")
    _git("add", "-A", "src", cwd=repos)
    h = make_harness(allow=("Bash(git commit:*)",), answer="reject_once")
    command = (
        "git commit -m \"$(cat <<'EOF'\nSay goodbye\n\nThe app greeted; now it leaves.\n\n"
        'Co-Authored-By: Tether <noreply@example.com>\nEOF\n)"'
    )
    out = await h.call("Bash", command=command)
    assert h.answers.asked == [] and not out.failed, text_of(out)
    message = _git("log", "-1", "--format=%B", cwd=repos)
    assert message.startswith("Say goodbye\n\nThe app greeted; now it leaves.")


LINK_REPLACEMENTS = [
    pytest.param(
        ".claude",
        "dir",
        "rm .claude && mkdir .claude && echo planted > .claude/x",
        id="claude-rm-mkdir",
    ),
    pytest.param(
        ".vscode",
        "dir",
        "mv .vscode old && mkdir .vscode && echo planted > .vscode/x",
        id="vscode-mv",
    ),
    pytest.param(".tether", "dir", "rm .tether && echo planted > .tether", id="tether-to-a-file"),
    pytest.param(
        ".mcp.json", "file", "rm .mcp.json && echo planted > .mcp.json", id="mcp-json-file"
    ),
    pytest.param(
        ".nvim.lua", "file", "ln -sf /tmp/evil.lua .nvim.lua && echo planted", id="nvim-relinked"
    ),
    pytest.param(
        "pkg/.claude",
        "dir",
        "rm pkg/.claude && mkdir pkg/.claude && echo planted > pkg/.claude/x",
        id="nested-claude",
    ),
]


@needs_bwrap
@pytest.mark.parametrize(("name", "kind", "command"), LINK_REPLACEMENTS)
async def test_a_protected_symlink_replaced_from_the_sandbox_is_put_back(
    make_harness: MakeHarness, workspace: Path, name: str, kind: str, command: str
) -> None:
    """bubblewrap cannot bind over a symlink, and the folder holding it stays writable: the
    command can remove the link, but the gate refuses anything in its place, and the link is
    put back when the command ends."""
    target = workspace / "shared" / name.replace("/", "-")
    target.parent.mkdir(exist_ok=True)
    if kind == "dir":
        target.mkdir()
        (target / "settings.json").write_text("{}")
    else:
        target.write_text("{}")
    link = workspace / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=kind == "dir")
    h = make_harness(mode="bypassPermissions")
    await h.call(
        "Bash", command=f"echo evil > {name}{'/settings.json' if kind == 'dir' else ''}; {command}"
    )
    assert link.is_symlink() and os.readlink(link) == str(target)
    settings = target / "settings.json" if kind == "dir" else target
    assert settings.read_text() == "{}"  # the target itself is read-only in the sandbox
    kept = [p for p in link.parent.iterdir() if p.name.startswith(f"{link.name}.replaced-")]
    assert kept == []  # nothing was put in its place


@needs_bwrap
async def test_a_link_replaced_by_a_background_command_is_put_back_before_settings_are_read(
    make_harness: MakeHarness, workspace: Path
) -> None:
    shared = workspace / "shared-tether"
    shared.mkdir()
    (workspace / ".tether").symlink_to(shared, target_is_directory=True)
    sandbox = BwrapSandbox(workspace, linger_s=0)
    h = make_harness(mode="bypassPermissions")
    h.ctx.config.shell_sandbox = sandbox
    await h.call(
        "Bash",
        command="rm .tether && mkdir .tether && echo '{}' > .tether/settings.json; sleep 30",
        run_in_background=True,
    )
    for _ in range(200):
        if not (workspace / ".tether").is_symlink():
            break
        await asyncio.sleep(0.05)
    assert not (workspace / ".tether").is_symlink()  # swapped while the command runs
    assert sandbox.restore_links() == [workspace / ".tether"]  # what refresh() does first
    assert os.readlink(workspace / ".tether") == str(shared)
    for task in h.ctx.tasks.all():
        await h.ctx.tasks.stop(task.id)


@needs_bwrap
async def test_a_nested_claude_folder_is_read_only_in_the_sandbox(
    make_harness: MakeHarness, workspace: Path
) -> None:
    agents = workspace / "pkg" / ".claude" / "agents"
    agents.mkdir(parents=True)
    h = make_harness(mode="bypassPermissions")
    await h.call("Bash", command="echo evil > pkg/.claude/agents/x.md; rm -rf pkg/.claude")
    assert agents.is_dir() and list(agents.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [
        "cp evil.sh .git/hooks/pre-commit",
        "mv settings.json .vscode/settings.json",
        "mkdir -p sub/.claude/agents",
        "touch lib/.envrc",
        "rm -rf vendor",
        "sed -i 's/a/b/' .git/config",
        "echo x > vendor/lib/.git/hooks/post-merge",
    ],
)
async def test_shell_writes_into_the_control_plane_ask_even_in_accept_edits(
    make_harness: MakeHarness, repos: Path, command: str
) -> None:
    h = make_harness(mode="acceptEdits", allow=("Bash(echo:*)",))
    decision = await h.decide("Bash", command=command)
    assert decision.behavior == "ask" and decision.forced, (command, decision)
