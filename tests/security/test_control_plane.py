"""The control plane (.tether, .git, editor settings, MCP configs) is written only with the
user's approval of that exact write: not by Edit/Write on their own, not from the sandbox."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tether.core.hooks import ToolHookVerdict

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
    assert not (workspace / ".tether").exists()  # the stand-in is gone again
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
