"""Print mode's command line: every flag is read into ``PrintOptions``, and every bad
command line is one line naming the problem, before anything starts."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tether.cli.flags import PrintOptions, UsageError, print_options, print_parser
from tether.cli.main import main
from tether.settings.load import SettingSources


def parse(tmp_path: Path, *argv: str) -> PrintOptions:
    return print_options(print_parser().parse_args(["--cwd", str(tmp_path), *argv]))


def refused(tmp_path: Path, *argv: str) -> str:
    with pytest.raises(UsageError) as e:
        parse(tmp_path, *argv)
    message = str(e.value)
    assert "\n" not in message
    return message


def test_defaults(tmp_path: Path) -> None:
    options = parse(tmp_path, "-p", "hello")
    assert options.prompt == "hello"
    assert options.cwd == tmp_path.resolve()
    assert (options.input_format, options.output_format) == ("text", "text")
    assert options.mode is None and options.model is None and options.builtin_tools is None
    assert not options.partial and not options.verbose and options.setting_sources.user


def test_formats_and_session_choice(tmp_path: Path) -> None:
    options = parse(
        tmp_path,
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--include-partial-messages",
        "--verbose",
        "-r",
        "abc",
    )
    assert options.input_format == "stream-json" and options.output_format == "stream-json"
    assert options.partial and options.verbose and options.resume == "abc"
    assert parse(tmp_path, "-c", "-p", "x").continue_latest
    assert parse(tmp_path, "--continue", "-p", "x").continue_latest
    assert parse(tmp_path, "--resume", "s1").resume == "s1"
    assert parse(tmp_path, "--resume=s2").resume == "s2"
    session = str(uuid.uuid4())
    assert parse(tmp_path, "--session-id", session, "-p", "x").session_id == session
    assert parse(tmp_path, "--output-format", "tether-json", "x").output_format == "tether-json"
    assert parse(tmp_path, "--output-format", "json", "x").output_format == "json"


def test_model_limits_and_prompts(tmp_path: Path) -> None:
    prompt_file = tmp_path / "system.md"
    prompt_file.write_text("You review code.")
    options = parse(
        tmp_path,
        "--model",
        "opus",
        "--fallback-model",
        "haiku",
        "--max-turns",
        "3",
        "--max-budget-usd",
        "0.5",
        "--system-prompt-file",
        str(prompt_file),
        "--append-system-prompt",
        "Be brief.",
    )
    assert (options.model, options.fallback_model) == ("opus", "haiku")
    assert (options.max_turns, options.max_budget_usd) == (3, 0.5)
    assert options.system_prompt == "You review code."
    assert options.append_system_prompt == "Be brief."
    assert parse(tmp_path, "--system-prompt", "Terse.").system_prompt == "Terse."


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"])
def test_every_permission_mode(tmp_path: Path, mode: str) -> None:
    assert parse(tmp_path, "--permission-mode", mode).mode == mode


def test_skip_permissions_is_bypass(tmp_path: Path) -> None:
    assert parse(tmp_path, "--dangerously-skip-permissions").mode == "bypassPermissions"


def test_tool_lists(tmp_path: Path) -> None:
    options = parse(
        tmp_path,
        "--allowedTools",
        "Bash(git log:*) Read",
        "--allowed-tools",
        "Edit,Write",
        "--disallowedTools",
        "WebFetch",
        "--disallowed-tools",
        "Bash(rm:*)",
        "--tools",
        "Read,Grep",
    )
    assert options.allow == ["Bash(git log:*)", "Read", "Edit", "Write"]
    assert options.deny == ["WebFetch", "Bash(rm:*)"]
    assert options.builtin_tools == ["Read", "Grep"]
    assert parse(tmp_path, "--tools", "").builtin_tools == []
    assert parse(tmp_path, "--tools", "default").builtin_tools is None


def test_mcp_config_from_files_and_json(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"mcpServers": {"files": {"command": "files-server"}}}))
    inline = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})
    options = parse(tmp_path, "--mcp-config", "one.json", inline, "--strict-mcp-config")
    assert options.mcp_servers == {
        "files": {"command": "files-server"},
        "calc": {"type": "sdk", "name": "calc"},
    }
    assert options.strict_mcp


def test_settings_add_dir_and_sources(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}}))
    options = parse(
        tmp_path,
        "--settings",
        str(settings),
        "--add-dir",
        str(extra),
        "--setting-sources",
        "project",
    )
    assert options.settings == {
        "permissions": {"allow": ["Bash(ls:*)"], "additionalDirectories": [str(extra)]}
    }
    assert options.setting_sources == SettingSources(user=False, project=True, local=False)
    # A folder that does not exist is passed over with a note (as Claude Code does).
    missing = parse(tmp_path, "--add-dir", "no/such/dir", "--add-dir", str(extra))
    assert missing.settings["permissions"]["additionalDirectories"] == [str(extra)]
    assert "--add-dir no/such/dir: no such directory; left out" in missing.notes
    assert parse(tmp_path, "--setting-sources=").setting_sources == SettingSources(
        False, False, False
    )
    with pytest.raises(UsageError, match="unknown setting source policy"):
        parse(tmp_path, "--setting-sources", "user,policy")
    inline = parse(tmp_path, "--settings", '{"model": "haiku"}')
    assert inline.settings == {"model": "haiku"}


def test_permission_prompt_tools(tmp_path: Path) -> None:
    options = parse(
        tmp_path,
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--permission-prompt-tool",
        "stdio",
    )
    assert options.permission_prompt_tool == "stdio"
    assert parse(tmp_path, "--permission-prompt-tool", "mcp__perm__approve").permission_prompt_tool


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--frobnicate"], "unknown option --frobnicate"),
        (["--output-format", "yaml"], "invalid choice: 'yaml'"),
        (["--permission-mode", "auto"], "invalid choice: 'auto'"),
        (["--input-format", "stream-json"], "needs --output-format stream-json"),
        (["--include-partial-messages"], "--include-partial-messages needs"),
        (["-c", "-r", "abc"], "exclude each other"),
        (["-r"], "--resume needs a session id"),
        (["--session-id", "not-a-uuid"], "not a valid UUID"),
        (["--max-turns", "0"], "--max-turns must be 1 or more"),
        (["--max-turns", "many"], "invalid int value"),
        (["--max-budget-usd", "-1"], "must be more than 0"),
        (["--permission-prompt-tool", "stdio"], "needs --input-format stream-json"),
        (["--permission-prompt-tool", "approve"], "expected stdio or an MCP tool"),
        (["--mcp-config", "missing.json"], "--mcp-config missing.json: cannot read the file"),
        (["--mcp-config", "{nope"], "not valid JSON"),
        (["--mcp-config", '{"servers": {}}'], 'expected {"mcpServers"'),
        (["--settings", "[1, 2]"], "must be a JSON object"),
        (["--settings", "nowhere.json"], "cannot read the file"),
        (["--system-prompt-file", "absent.md"], "cannot read the file"),
    ],
)
def test_bad_command_lines(tmp_path: Path, argv: list[str], expected: str) -> None:
    assert expected in refused(tmp_path, *argv)


def test_session_id_with_resume_is_refused(tmp_path: Path) -> None:
    message = refused(tmp_path, "--session-id", str(uuid.uuid4()), "-r", "abc")
    assert "goes with --resume only to name a fork (--fork-session)" in message


def test_main_prints_one_line_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-p", "hi", "--no-such-flag"]) == 2
    err = capsys.readouterr().err
    assert err == "tether: unknown option --no-such-flag (see tether --help)\n"


def test_main_refuses_a_prompt_without_print(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fix the tests"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown command 'fix the tests'" in err and "tether -p" in err


def test_run_takes_the_same_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--bogus"]) == 2
    assert capsys.readouterr().err == "tether: unknown option --bogus (see tether --help)\n"
