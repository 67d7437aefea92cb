"""Every print-mode flag doing what it says, checked where it shows: in the requests the
fake Messages API received, in the files, in the output. The command runs in-process
(``tether.cli.main.main``) on the real engine, the real Anthropic SDK and real MCP servers."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether.testing.fake_anthropic import FakeAnthropicServer

PERMISSION_MCP = Path(__file__).resolve().parents[1] / "support" / "permission_mcp.py"
MCP_SERVERS = {"perm": {"command": sys.executable, "args": [str(PERMISSION_MCP)]}}
Run = Callable[..., tuple[int, str, str]]


def use(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def result_of(out: str) -> dict[str, Any]:
    return json.loads(out.strip().splitlines()[-1])


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request.get("tools", [])]


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in request["system"])


def last_tool_result(request: dict[str, Any]) -> dict[str, Any]:
    for message in reversed(request["messages"]):
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                return block
    raise AssertionError("no tool_result in the request")


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_system_prompt_flags(print_mode: Run) -> None:
    with FakeAnthropicServer([say("ok"), say("ok")]) as api:
        code, _, err = print_mode(api, "-p", "hi", "--system-prompt", "You are a terse reviewer.")
        assert code == 0, err
        code, _, err = print_mode(
            api, "-p", "hi", "--append-system-prompt", "Always answer in French."
        )
        assert code == 0, err
        api.assert_complete()
    replaced, appended = (system_text(r) for r in api.requests)
    assert "You are a terse reviewer." in replaced
    assert "You are a terse reviewer." not in appended
    assert appended.rstrip().endswith("Always answer in French.")
    # The appended text comes on top of the usual prompt, which the replacement dropped.
    identity = appended.split("\n", 1)[0]
    assert identity not in replaced


@pytest.mark.parametrize(
    ("alias", "model"),
    [("sonnet", "claude-sonnet-5-5"), ("opus", "claude-opus-5-5"), ("haiku", "claude-haiku-5-5")],
)
def test_model_aliases(print_mode: Run, alias: str, model: str) -> None:
    with FakeAnthropicServer([say("ok")]) as api:
        code, out, err = print_mode(api, "-p", "hi", "--model", alias, "--output-format", "json")
        api.assert_complete()
    assert code == 0, err
    assert api.requests[0]["model"] == model
    assert model in result_of(out)["modelUsage"]


def test_fallback_model_takes_over_when_overloaded(print_mode: Run) -> None:
    overloaded = [{"fault": "529"}] * 5
    with FakeAnthropicServer([*overloaded, say("from the fallback")]) as api:
        code, out, err = print_mode(
            api,
            "-p",
            "hi",
            "--model",
            "opus",
            "--fallback-model",
            "haiku",
            "--output-format",
            "json",
        )
        api.assert_complete()
    assert code == 0, err
    models = [r["model"] for r in api.requests]
    assert models == ["claude-opus-5-5"] * 5 + ["claude-haiku-5-5"]
    assert result_of(out)["result"] == "from the fallback"
    assert "using claude-haiku-5-5" in err


def test_max_turns(print_mode: Run) -> None:
    with FakeAnthropicServer([[use("Glob", pattern="*.md")]]) as api:
        code, out, _ = print_mode(api, "-p", "look", "--max-turns", "1", "--output-format", "json")
        api.assert_complete()
    result = result_of(out)
    assert code == 1
    assert (result["subtype"], result["is_error"], result["num_turns"]) == (
        "error_max_turns",
        True,
        1,
    )


def test_max_budget(print_mode: Run) -> None:
    costly = {"blocks": [use("Glob", pattern="*.md")], "usage": {"input_tokens": 50_000}}
    with FakeAnthropicServer([costly]) as api:
        code, out, _ = print_mode(
            api, "-p", "look", "--max-budget-usd", "0.01", "--output-format", "json"
        )
        api.assert_complete()
    result = result_of(out)
    assert code == 1 and result["subtype"] == "error_max_budget_usd"
    assert result["total_cost_usd"] > 0.01


@pytest.mark.parametrize(
    ("mode", "edited"),
    [("default", False), ("plan", False), ("dontAsk", False), ("acceptEdits", True)],
)
def test_permission_modes(print_mode: Run, workspace: Path, mode: str, edited: bool) -> None:
    app = workspace / "src" / "app.py"
    script = [
        [use("Read", file_path=str(app))],
        [use("Edit", file_path=str(app), old_string="Bye, ", new_string="Goodbye, ")],
        say("done"),
    ]
    with FakeAnthropicServer(script) as api:
        code, _, err = print_mode(api, "-p", "edit", "--permission-mode", mode)
        api.assert_complete()
    assert code == 0, err
    assert ("Goodbye, " in app.read_text()) is edited
    if not edited:
        assert last_tool_result(api.requests[-1])["is_error"]


def test_bypass_permissions_runs_commands(print_mode: Run, workspace: Path) -> None:
    with FakeAnthropicServer([[use("Bash", command="touch made.txt")], say("done")]) as api:
        code, _, err = print_mode(api, "-p", "go", "--permission-mode", "bypassPermissions")
        api.assert_complete()
    assert code == 0, err
    assert (workspace / "made.txt").exists()


def test_allowed_and_disallowed_tools(print_mode: Run, workspace: Path) -> None:
    script = [[use("Bash", command="touch made.txt")], say("done")]
    with FakeAnthropicServer(script) as api:
        code, _, err = print_mode(api, "-p", "go", "--allowedTools", "Bash(touch:*)")
        assert code == 0, err
        assert (workspace / "made.txt").exists()
        api.assert_complete()
    with FakeAnthropicServer([say("no shell for me")]) as api:
        code, _, err = print_mode(
            api, "-p", "go", "--disallowedTools", "Bash", "--disallowed-tools", "Grep"
        )
        api.assert_complete()
    assert code == 0, err
    offered = tool_names(api.requests[0])
    assert "Bash" not in offered and "Grep" not in offered and "Read" in offered


def test_tools_chooses_the_builtin_set(print_mode: Run) -> None:
    with FakeAnthropicServer([say("ok"), say("ok")]) as api:
        print_mode(api, "-p", "hi", "--tools", "Read,Glob")
        print_mode(api, "-p", "hi", "--tools", "")
        api.assert_complete()
    assert sorted(tool_names(api.requests[0])) == ["Glob", "Read"]
    assert tool_names(api.requests[1]) == []


def test_mcp_config_file_and_json(print_mode: Run, workspace: Path) -> None:
    (workspace / "servers.json").write_text(json.dumps({"mcpServers": MCP_SERVERS}))
    inline = json.dumps({"mcpServers": {"again": MCP_SERVERS["perm"]}})
    script = [[use("mcp__perm__echo", text="ping")], say("done")]
    with FakeAnthropicServer(script) as api:
        code, _, err = print_mode(api, "-p", "echo", "--mcp-config", "servers.json", inline)
        api.assert_complete()
    assert code == 0, err
    offered = tool_names(api.requests[0])
    assert "mcp__perm__echo" in offered and "mcp__again__echo" in offered
    assert result_text(last_tool_result(api.requests[1])) == "ping"


def test_strict_mcp_config_ignores_other_servers(print_mode: Run) -> None:
    settings = json.dumps({"mcpServers": {"other": MCP_SERVERS["perm"]}})
    given = json.dumps({"mcpServers": MCP_SERVERS})
    with FakeAnthropicServer([say("ok"), say("ok")]) as api:
        print_mode(api, "-p", "hi", "--settings", settings, "--mcp-config", given)
        print_mode(
            api, "-p", "hi", "--settings", settings, "--mcp-config", given, "--strict-mcp-config"
        )
        api.assert_complete()
    loose, strict = (tool_names(r) for r in api.requests)
    assert "mcp__other__echo" in loose and "mcp__perm__echo" in loose
    assert "mcp__other__echo" not in strict and "mcp__perm__echo" in strict


def test_add_dir_opens_another_directory(print_mode: Run, tmp_path: Path) -> None:
    extra = tmp_path / "notes"
    extra.mkdir()
    (extra / "todo.txt").write_text("buy milk\n")
    script = [[use("Read", file_path=str(extra / "todo.txt"))], say("done")]
    with FakeAnthropicServer(script * 2) as api:
        print_mode(api, "-p", "read it")
        print_mode(api, "-p", "read it", "--add-dir", str(extra))
        api.assert_complete()
    refused, allowed = last_tool_result(api.requests[1]), last_tool_result(api.requests[3])
    assert refused.get("is_error") and "buy milk" not in result_text(refused)
    assert "buy milk" in result_text(allowed)


def test_settings_from_json_and_file(print_mode: Run, workspace: Path, tmp_path: Path) -> None:
    rules = {"permissions": {"allow": ["Bash(touch:*)"]}}
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps(rules))
    script = [[use("Bash", command="touch one.txt")], say("done")]
    with FakeAnthropicServer([*script, [use("Bash", command="touch two.txt")], say("done")]) as api:
        print_mode(api, "-p", "go", "--settings", json.dumps(rules))
        print_mode(api, "-p", "go", "--settings", str(settings_file))
        api.assert_complete()
    assert (workspace / "one.txt").exists() and (workspace / "two.txt").exists()


def test_permission_prompt_tool(print_mode: Run, workspace: Path) -> None:
    app = workspace / "src" / "app.py"
    script = [
        [use("Read", file_path=str(app))],
        [use("Edit", file_path=str(app), old_string="Bye, ", new_string="Goodbye, ")],
        [use("Bash", command="touch made.txt")],
        {"expect": {"contains": "refuses shell"}, "blocks": say("done")},
    ]
    with FakeAnthropicServer(script) as api:
        code, _, err = print_mode(
            api,
            "-p",
            "edit and touch",
            "--mcp-config",
            json.dumps({"mcpServers": MCP_SERVERS}),
            "--permission-prompt-tool",
            "mcp__perm__approve",
        )
        api.assert_complete()
    assert code == 0, err
    assert "Goodbye, " in app.read_text()
    assert not (workspace / "made.txt").exists()


def test_continue_resume_and_session_id(print_mode: Run) -> None:
    session = str(uuid.uuid4())
    script = [
        say("first"),
        {"expect": {"contains": "second"}, "blocks": say("two")},
        {"expect": {"contains": "third"}, "blocks": say("three")},
    ]
    with FakeAnthropicServer(script) as api:
        code, out, err = print_mode(
            api, "-p", "first", "--session-id", session, "--output-format", "json"
        )
        assert code == 0, err and result_of(out)["session_id"] == session
        code, out, err = print_mode(api, "-p", "second", "-c", "--output-format", "json")
        assert code == 0, err
        assert result_of(out)["session_id"] == session
        code, out, err = print_mode(
            api, "-p", "third", "--resume", session, "--output-format", "json"
        )
        assert code == 0, err
        api.assert_complete()
    assert result_of(out)["session_id"] == session
    assert [len(r["messages"]) for r in api.requests] == [1, 3, 5]
    with FakeAnthropicServer([]) as api:
        code, _, err = print_mode(api, "-p", "again", "--session-id", session)
    assert code == 2 and f"a session with ID {session} exists already" in err


def test_stream_json_input_runs_each_prompt(print_mode: Run) -> None:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "one"}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "two"}]}},
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    with FakeAnthropicServer([say("first answer"), say("second answer")]) as api:
        code, out, err = print_mode(
            api, "--input-format", "stream-json", "--output-format", "stream-json", stdin=stdin
        )
        api.assert_complete()
    assert code == 0, err
    results = [json.loads(line) for line in out.splitlines() if '"result"' in line]
    results = [r for r in results if r["type"] == "result"]
    assert [r["result"] for r in results] == ["first answer", "second answer"]


def test_output_formats(print_mode: Run) -> None:
    with FakeAnthropicServer([say("plain"), say("as json"), say("tether events")]) as api:
        _, text, _ = print_mode(api, "-p", "hi")
        _, as_json, _ = print_mode(api, "-p", "hi", "--output-format", "json")
        _, events, _ = print_mode(api, "-p", "hi", "--output-format", "tether-json")
        api.assert_complete()
    assert text == "plain\n"
    assert len(as_json.splitlines()) == 1 and json.loads(as_json)["result"] == "as json"
    kinds = [json.loads(line)["type"] for line in events.splitlines()]
    assert kinds[0] == "system" and kinds[-1] == "result" and "update" in kinds
    updates = [
        json.loads(line)["update"]["kind"] for line in events.splitlines() if '"update"' in line
    ]
    assert "agent_message_chunk" in updates and "turn_end" in updates


def test_verbose_shows_tool_output(print_mode: Run) -> None:
    script = [[use("Bash", command="echo visible-output")], say("done")] * 2
    with FakeAnthropicServer(script) as api:
        _, _, quiet = print_mode(api, "-p", "go", "--allowedTools", "Bash(echo:*)")
        _, _, loud = print_mode(api, "-p", "go", "--allowedTools", "Bash(echo:*)", "--verbose")
        api.assert_complete()
    # stderr is not a terminal here: nothing on it without --verbose (as claude -p); with it,
    # the tool lines and their output (on a terminal the lines come without the output).
    assert quiet == ""
    assert "✓ echo visible-output" in loud and "    visible-output" in loud


def test_a_line_when_automatic_compaction_runs(print_mode: Run, workspace: Path) -> None:
    big = workspace / "big.txt"
    big.write_text("".join(f"line {i}: {'padding ' * 12}\n" for i in range(1500)))
    context = {"autoCompactThreshold": 20_000, "toolResultMaxChars": 1_000_000}
    script = [
        {"blocks": [use("Read", file_path=str(big))], "usage": {"input_tokens": 60_000}},
        say("<summary>The user asked to study big.txt; it was read.</summary>"),
        say("It is a long list of padded lines."),
    ]
    with FakeAnthropicServer(script) as api:
        code, out, err = print_mode(  # --verbose: the line on a stderr that is no terminal
            api, "-p", "study big.txt", "--settings", json.dumps({"context": context}), "--verbose"
        )
        api.assert_complete()
    assert code == 0, err
    assert out == "It is a long list of padded lines.\n"
    assert "[tether] context compacted (auto): summarised the conversation, " in err
