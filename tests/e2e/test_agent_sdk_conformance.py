"""The same Agent SDK programs through Claude Code's own CLI and through Tether.

``tests/sdk/conformance.mjs`` (the TypeScript SDK from npm) and ``tests/sdk/conformance.py``
(the Python SDK from PyPI) each run every item of ``docs/agent-sdk.md``'s list in sequence:
an in-process MCP server, an external one, hook callbacks, ``canUseTool`` with
``updatedInput``/``updatedPermissions``, ``set_permission_mode``/``set_model``, ``interrupt``,
resume as a fork, partial messages, agents. Each program runs once against the CLI the
``claude-agent-sdk`` wheel bundles and once against Tether, on the same script of the same
fake Messages API, in fresh copies of the same workspace. Both runs must give the same
message kinds, the same callbacks, the same files on disk, and complete the script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest

from tether.testing.fake_anthropic import FakeAnthropicServer

ROOT = Path(__file__).parent.parent
FIXTURE = ROOT / "fixtures" / "workspaces" / "basic"
SDK_DIR = ROOT / "sdk"
CLAUDE = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
TETHER = Path(sys.executable).with_name("tether")
MCP_SERVER = f"{sys.executable} {ROOT / 'support' / 'mcp_server.py'}"
LONG_COMMAND = "python3 -c 'import time; time.sleep(30)'"
"""Interrupted after it starts (Claude Code refuses a bare ``sleep``)."""


SAFEGUARDS_REFUSED = "safeguards: Extra inputs are not permitted"
PRODUCT_NOTICE = "We're changing auto mode"
"""Claude Code's own notice about its auto mode's billing (a ``system/informational`` line
when a session leaves plan mode through a custom API address): no Tether counterpart."""


def use(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def say(text: str, expect: str | None = None) -> Any:
    blocks = [{"type": "text", "text": text}]
    return {"expect": {"contains": expect}, "blocks": blocks} if expect else blocks


def script(root: Path, items: list[str]) -> list[Any]:
    app = str(root / "src" / "app.py")
    turns: dict[str, list[Any]] = {
        "mcp": [
            [use("mcp__calc__rm")],
            [use("mcp__calc__add", a=2, b=40)],
            say("2 + 40 = 42", expect="42"),
        ],
        "mcp_external": [
            [use("mcp__ext__echo", text="hello from ext")],
            say("It echoed.", expect="REPLACED-BY-HOOK"),
        ],
        "hooks": [
            [use("Read", file_path=app)],
            [use("Bash", command="echo SECRET-TOKEN-123")],
            [use("Edit", file_path=app, old_string='"Bye', new_string='"Ciao')],
            [use("Bash", command="touch late.txt")],
            [use("Read", file_path=str(root / "missing.txt"))],
            say("Looked around.", expect="does not exist"),
        ],
        "permissions": [
            [use("Write", file_path=str(root / "new.txt"), content="original\n")],
            [use("Bash", command="touch one.txt")],
            [use("Bash", command="touch two.txt")],
            [use("Bash", command="touch three.txt")],
            say("Made them.", expect="not this one"),
        ],
        "modes": [
            [use("Read", file_path=app)],
            [use("ExitPlanMode", plan="Say Goodbye in the farewell.")],
            [use("Edit", file_path=app, old_string='"Bye', new_string='"Goodbye')],
            say("Tidied."),
        ],
        "interrupt": [
            [use("Bash", command=LONG_COMMAND)],
            say("Still here.", expect="are you there"),
        ],
        "prompts": [
            [use("Bash", command="touch folded.txt")],
            say("A summary.", expect="mind the farewell"),
        ],
        "resume": [say("Noted."), say("Plum.", expect="which word")],
        "partial": [say("Hello there.")],
        "agents": [
            [
                use(
                    "Agent",
                    description="review it",
                    prompt="Review src/app.py",
                    subagent_type="reviewer",
                    run_in_background=False,
                )
            ],
            [use("Write", file_path=str(root / "review.txt"), content="fine\n")],
            say("Looks fine."),
            say("Reviewed.", expect="Looks fine."),
        ],
    }
    return [turn for item in items for turn in turns[item]]


def shape(messages: list[dict[str, Any]]) -> list[str]:
    """Each message as its type (with subtype or event type) and its block types; a run of
    deltas counts once (chunking is not format)."""
    out: list[str] = []
    for m in messages:
        kind = m["type"]
        if kind == "system" and str(m.get("content", "")).startswith(PRODUCT_NOTICE):
            continue
        if kind == "system":
            entry = f"system/{m['subtype']}"
        elif kind == "stream_event":
            entry = f"stream_event/{m['event']['type']}"
            if entry.endswith("_delta") and out and out[-1] == entry:
                continue
        elif kind in ("assistant", "user"):
            content = m["message"]["content"]
            blocks = [b["type"] for b in content] if isinstance(content, list) else ["text"]
            entry = f"{kind}{blocks}"
        elif kind == "result":
            entry = f"result/{m['subtype']}"
        else:
            entry = kind
        out.append(entry)
    return out


def run(
    program: list[str], cli: Path, tmp: Path, name: str, items: list[str]
) -> tuple[dict[str, Any], Path, FakeAnthropicServer]:
    root = tmp / name / "ws"
    shutil.copytree(FIXTURE, root)
    env = {
        **os.environ,
        "HOME": str(tmp / name / "home"),
        "TETHER_DATA_DIR": str(tmp / name / "data"),
        "XDG_CONFIG_HOME": str(tmp / name / "config"),
        "ANTHROPIC_API_KEY": "dummy-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CLI": str(cli),
        "WORKSPACE": str(root),
        "MCP_SERVER": MCP_SERVER,
        "ITEMS": ",".join(items),
        "TETHER_NO_DAEMON": "1",
    }
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    with FakeAnthropicServer(script(root, items)) as api:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        done = subprocess.run(
            program, cwd=SDK_DIR, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{name}: {done.stderr[-3000:]}"
        report = json.loads(done.stdout.strip().splitlines()[-1])
    return report, root, api


PROGRAMS = {"ts": ["node", "conformance.mjs"], "py": [sys.executable, "conformance.py"]}
ALL = [
    "mcp",
    "mcp_external",
    "hooks",
    "permissions",
    "modes",
    "interrupt",
    "prompts",
    "resume",
    "partial",
    "agents",
]


def files(root: Path) -> dict[str, str]:
    """The workspace's files and their text (Claude Code's own ``.claude/`` aside)."""
    return {
        str(p.relative_to(root)): p.read_text(errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".claude" not in p.relative_to(root).parts
    }


@pytest.fixture
def claude_code() -> Path:
    if not CLAUDE.is_file():
        pytest.skip(f"claude-agent-sdk ships no Claude Code binary for this platform ({CLAUDE})")
    return CLAUDE


def node_program() -> list[str]:
    node = shutil.which("node")
    assert node, "Node.js is needed for the TypeScript SDK (Node 20 or later on PATH)"
    installed = SDK_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"
    assert installed.is_file(), f"the TypeScript SDK is not installed: bash {SDK_DIR}/ci-install.sh"
    return [node, "conformance.mjs"]


@pytest.mark.timeout(600)  # four programs of nine items each, on a shared machine
@pytest.mark.parametrize("sdk", ["typescript", "python"])
def test_same_program_same_behaviour(claude_code: Path, tmp_path: Path, sdk: str) -> None:
    program = node_program() if sdk == "typescript" else [sys.executable, "conformance.py"]
    # The two runs share nothing (own fake server, workspace, home): side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
        their_run = pool.submit(run, program, claude_code, tmp_path, "claude", ALL)
        our_run = pool.submit(run, program, TETHER, tmp_path, "tether", ALL)
        theirs, their_root, their_api = their_run.result()
        ours, our_root, our_api = our_run.result()
    # Claude Code may try a "safeguards" field the API refuses on a custom address; it
    # expects that refusal and sends the request again without it.
    assert [p for p in their_api.problems() if SAFEGUARDS_REFUSED not in p] == []
    our_api.assert_complete()
    for name in ALL:
        assert "error" not in theirs[name], f"Claude Code, {name}: {theirs[name]['error']}"
        assert "error" not in ours[name], f"Tether, {name}: {ours[name]['error']}"
        assert shape(ours[name]["messages"]) == shape(theirs[name]["messages"]), name
        assert ours[name]["callbacks"] == theirs[name]["callbacks"], name
    assert files(our_root) == files(their_root)

    # What each item is about, checked on Tether's side (the comparison above covers Claude
    # Code's). The in-process tool ran and its result reached the model:
    assert ours["mcp"]["callbacks"] == [[2, 40]]
    results = [_tool_results(r) for r in our_api.requests]
    assert ["42"] in results
    # What the PostToolUse hook gave is what the model read of the external tool.
    assert ["REPLACED-BY-HOOK"] in results and ["hello from ext"] not in results
    # The first turn's init line already lists the external server's tools.
    for report in (ours, theirs):
        init = next(m for m in report["mcp_external"]["messages"] if m.get("subtype") == "init")
        assert "mcp__ext__echo" in init["tools"]
    # The redacting PostToolUse hook: the model read what it gave, on both sides; the
    # command whose PreToolUse hook missed its timeout did not run.
    for api in (our_api, their_api):
        seen = [text for request in api.requests for text in _tool_results(request)]
        assert any("REDACTED-BY-HOOK" in text for text in seen)
        assert not any("SECRET-TOKEN-123" in text for text in seen)
    assert not (our_root / "late.txt").exists()
    # The program's updatedInput was written (its extra field dropped); its empty
    # updatedInput ran the call as asked, and its session rule spared the second question;
    # the project's deny rule was not loaded (settingSources: []); the PermissionRequest
    # hook's deny, first to answer, stopped the last command.
    assert (our_root / "new.txt").read_text() == "written as the program said\n"
    assert (our_root / "one.txt").exists() and (our_root / "two.txt").exists()
    assert not (our_root / "three.txt").exists()
    assert ours["permissions"]["callbacks"]["asked"][-1] == ["Bash", "touch three.txt"]
    # The agent ran on the model its definition names, as Claude Code runs it (its first
    # request is the first to hold its prompt).
    assert (
        _holding(our_api.requests, "Review src/app.py")["model"]
        == (_holding(their_api.requests, "Review src/app.py")["model"])
    )
    assert (our_root / "review.txt").exists()
    # The held prompt and the document reached the model with the prompt that queried; the
    # refused prompt never did.
    summarised = json.dumps(_holding(our_api.requests, "summarise the document")["messages"])
    assert "the secret is mango" in summarised and "The plan is to ship." in summarised
    assert "forbidden words" not in json.dumps(our_api.requests)
    assert '"Goodbye, ' in (our_root / "src" / "app.py").read_text()
    approved = _after(our_api.requests, "approved the plan")["messages"][-1]["content"][0]
    assert not approved.get("is_error")  # the approved plan with setMode is no failure
    assert ours["resume"]["forked"] and theirs["resume"]["forked"]
    resumed = _after(our_api.requests, "which word")
    assert "remember the word plum" in json.dumps(resumed["messages"])
    tidied = _after(our_api.requests, "tidy up the farewell")
    assert tidied["model"] == "claude-sonnet-5-5"


def _after(requests: list[dict[str, Any]], prompt: str) -> dict[str, Any]:
    """The first request whose last user message holds ``prompt``."""
    for request in requests:
        if prompt in json.dumps(request["messages"][-1]):
            return request
    raise AssertionError(f"no request with {prompt!r}")


def _holding(requests: list[dict[str, Any]], text: str) -> dict[str, Any]:
    """The first request holding ``text`` anywhere in its messages."""
    for request in requests:
        if text in json.dumps(request["messages"]):
            return request
    raise AssertionError(f"no request with {text!r}")


def _tool_results(request: dict[str, Any]) -> list[str]:
    content = request["messages"][-1]["content"]
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "tool_result":
            inner = block["content"]
            texts += [b["text"] for b in inner] if isinstance(inner, list) else [inner]
    return texts
