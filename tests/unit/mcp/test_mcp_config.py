"""MCP configuration: Claude Code's format, env expansion, sources and their precedence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.mcp.config import RemoteServer, StdioServer, expand_vars, load_config, parse_server


def test_stdio_is_the_default_and_vars_expand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "s3cret")
    monkeypatch.delenv("UNSET_VAR", raising=False)
    server = parse_server(
        "files",
        {
            "command": "npx",
            "args": ["-y", "${PKG:-@acme/files}"],
            "env": {"TOKEN": "${TOKEN}", "EMPTY": "${UNSET_VAR}"},
        },
    )
    assert isinstance(server.config, StdioServer)
    assert server.config.args == ["-y", "@acme/files"]
    assert server.config.env == {"TOKEN": "s3cret", "EMPTY": ""}
    assert server.transport == "stdio"


def test_remote_servers_and_the_acp_pair_lists() -> None:
    http = parse_server(
        "search",
        {
            "type": "streamable-http",
            "url": "https://x/mcp",
            "headers": [{"name": "K", "value": "v"}],
        },
    )
    assert isinstance(http.config, RemoteServer)
    assert (http.transport, http.config.headers) == ("http", {"K": "v"})
    assert parse_server("old", {"type": "sse", "url": "https://x/sse"}).transport == "sse"
    assert parse_server("bare", {"url": "https://x/mcp"}).transport == "http"
    acp = parse_server("a", {"command": "srv", "env": [{"name": "A", "value": "1"}]})
    assert isinstance(acp.config, StdioServer) and acp.config.env == {"A": "1"}


@pytest.mark.parametrize(
    ("name", "raw", "problem"),
    [
        ("bad name", {"command": "x"}, "letters, digits"),
        ("x", {"type": "ws", "url": "u"}, "unknown type"),
        ("x", {"type": "stdio"}, "command"),
        ("x", "npx server", "expected an object"),
    ],
)
def test_bad_entries_say_why(name: str, raw: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_server(name, raw)


def test_sources_precedence_and_the_trust_gate(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "shared": {"command": "from-mcp-json"},
                    "only-file": {"command": "a"},
                    "broken": {"type": "stdio"},
                }
            }
        )
    )
    settings = {"shared": {"command": "from-settings"}}
    config = load_config(tmp_path, settings)
    by_name = {s.name: s for s in config.servers}
    assert set(by_name) == {"shared", "only-file"}
    shared = by_name["shared"].config
    assert isinstance(shared, StdioServer) and shared.command == "from-settings"
    assert "broken" in config.problems
    untrusted = load_config(tmp_path, settings, project_file=False)
    assert [s.name for s in untrusted.servers] == ["shared"]


def test_an_unreadable_mcp_json_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{not json")
    config = load_config(tmp_path, {"ok": {"command": "x"}})
    assert [s.name for s in config.servers] == ["ok"]
    assert "cannot read" in config.problems[".mcp.json"]


def test_expand_vars_uses_the_given_environment() -> None:
    assert expand_vars("${A}-${B:-dflt}-${C:-}", {"A": "1"}) == "1-dflt-"
