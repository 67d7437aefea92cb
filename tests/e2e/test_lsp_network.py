"""Network by host through the front doors: a sandboxed command's undecided host is an
editor question while the connection waits ("always" saves the rule, the command gets its
answer, the next command is not asked); ``tether -p`` without a terminal denies it and
says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_registry import FakeRegistry

from .conftest import running_daemon

pytestmark = pytest.mark.needs_sandbox


def _curl(url: str) -> list[Any]:
    use = {"type": "tool_use", "name": "Bash", "input": {"command": f"curl -sS {url}"}}
    return [[use], [{"type": "text", "text": "ok"}]]


async def test_an_undecided_host_is_asked_in_the_editor_and_always_is_kept(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    (workspace / ".tether").mkdir()
    settings = {"permissions": {"allow": ["Bash(curl:*)"]}}
    (workspace / ".tether" / "settings.json").write_text(json.dumps(settings))
    with FakeRegistry() as registry:
        url = f"http://registry.test:{registry.port}/hello"
        api = fake_api(_curl(url) + _curl(url))
        env = {**daemon_env, "TETHER_PROXY_RESOLVE": "registry.test=127.0.0.1"}
        async with running_daemon([workspace], env, api) as editor:
            editor.answers.append("allow_always")
            session = await editor.new_session()
            await editor.prompt(session, "fetch it")
            (request,) = editor.permission_requests
            assert request["toolCall"]["rawInput"]["host"] == "registry.test"
            options = [(o["kind"], o["name"]) for o in request["options"]]
            assert ("allow_always", "Always allow Network(domain:registry.test)") in options
            editor.default_answer = "reject_once"  # would refuse it, if it were asked again
            await editor.prompt(session, "again")
            assert len(editor.permission_requests) == 1
        saved = json.loads((workspace / ".tether" / "settings.local.json").read_text())
        assert saved["permissions"]["allow"] == ["Network(domain:registry.test)"]
        assert registry.hosts() == [f"registry.test:{registry.port}"] * 2
        results = [json.dumps(r["messages"][-1]) for r in api.requests if r["messages"]]
        assert [("hello from the registry" in r) for r in results] == [False, True, False, True]


def test_print_mode_without_a_terminal_denies_and_says_so(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    with FakeRegistry() as registry:
        url = f"http://registry.test:{registry.port}/hello"
        script = [
            *_curl(url)[:1],
            {
                "expect": {"contains": "deny network-outbound"},
                "blocks": [{"type": "text", "text": "ok"}],
            },
        ]
        with FakeAnthropicServer(script) as api:
            env = {
                **os.environ,
                **daemon_env,
                "ANTHROPIC_BASE_URL": api.base_url,
                "TETHER_PROXY_RESOLVE": "registry.test=127.0.0.1",
            }
            done = subprocess.run(
                [sys.executable, "-m", "tether", "-p", "--verbose", "--allowedTools", "Bash", "go"],
                cwd=workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=60,
            )
            result = json.dumps(api.requests[-1]["messages"][-1])
        assert done.returncode == 0, done.stderr
        assert registry.log == []
    where = f"registry.test:{registry.port}"
    assert f"deny network-outbound {where} (denied: no terminal to ask on)" in result
    assert f"no terminal to ask on, so network access to {where} is denied" in done.stderr
    assert '--allowedTools "Network(domain:registry.test)"' in done.stderr
