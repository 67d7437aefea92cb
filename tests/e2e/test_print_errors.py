"""Errors a user can act on: each names the cause and the fix, nothing is counted that did not
happen, and a run that could not start leaves no session behind."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from tether.testing.fake_anthropic import FakeAnthropicServer

Run = Callable[..., tuple[int, str, str]]


def sessions(data: Path) -> list[Path]:
    return sorted((data / "sessions").rglob("*.jsonl")) if (data / "sessions").exists() else []


@pytest.fixture
def data(daemon_env: dict[str, str]) -> Path:
    return Path(daemon_env["TETHER_DATA_DIR"])


def test_bad_model_name(print_mode: Run, data: Path) -> None:
    with FakeAnthropicServer([]) as api:
        code, out, err = print_mode(api, "-p", "hi", "--model", "gpt-4o")
        assert api.requests == []
    assert code == 2 and out == ""
    assert err.strip() == (
        "tether: unknown model 'gpt-4o': use an alias (sonnet, opus, haiku), a Claude model id "
        "(claude-...), anthropic:<model>, openai:<model>@<base-url>, ollama:<model> or "
        "scripted:<script.json>"
    )
    assert sessions(data) == []


def test_bad_fallback_model_name(print_mode: Run, data: Path) -> None:
    with FakeAnthropicServer([]) as api:
        code, _, err = print_mode(api, "-p", "hi", "--fallback-model", "llama")
    assert code == 2 and "unknown model 'llama'" in err
    assert sessions(data) == []


def test_no_key_says_which_variable(
    print_mode: Run, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with FakeAnthropicServer([]) as api:
        code, _, err = print_mode(api, "-p", "hi", "--model", "sonnet")
        assert api.requests == []
        gateway = api.base_url
    assert code == 2
    # A gateway's URL alone does not authenticate (as in Claude Code): the token it wants,
    # any value if none, goes with it.
    assert f"no API key for claude-sonnet-5-5 at ANTHROPIC_BASE_URL {gateway}: set " in err
    assert "ANTHROPIC_AUTH_TOKEN (or ANTHROPIC_API_KEY)" in err and "any value" in err
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    code, _, err = print_mode(None, "-p", "hi", "--model", "sonnet")
    assert code == 2
    assert (
        "no API key for claude-sonnet-5-5: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)" in err
    )
    assert sessions(data) == []


def test_no_model_and_no_key(print_mode: Run, data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    code, _, err = print_mode(None, "-p", "hi")
    assert code == 2 and "No model is configured. Set ANTHROPIC_API_KEY, or pass --model" in err
    assert sessions(data) == []


def test_connection_failure_names_the_url(print_mode: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    code, out, err = print_mode(None, "-p", "hi", "--model", "sonnet", "--verbose")
    assert code == 1 and out == ""
    assert "connection error" in err and f"(tried {url}; is the server running?" in err
    assert "the URL comes from ANTHROPIC_BASE_URL" in err
    # No request ever reached a model: none is counted (the usage line, with --verbose).
    assert "· 0 model request(s) ·" in err


def test_empty_prompt_is_refused(print_mode: Run, data: Path) -> None:
    for argv, stdin in ((["-p"], ""), (["-p"], "  \n\n"), (["-p", ""], ""), (["run", "-"], "\n")):
        code, _, err = print_mode(None, *argv, stdin=stdin)
        assert code == 2
        assert err.startswith(
            "tether: no prompt: give it as an argument (tether -p 'fix the tests')"
        )
    assert sessions(data) == []


def test_unknown_session(print_mode: Run, data: Path) -> None:
    with FakeAnthropicServer([]) as api:
        code, _, err = print_mode(api, "-p", "hi", "--resume", "nope")
    assert code == 2 and "No conversation found with session ID: nope" in err
    assert sessions(data) == []
    with FakeAnthropicServer([]) as api:
        code, _, err = print_mode(api, "-p", "hi", "--continue")
    assert code == 2 and "No conversation found to continue in" in err


def test_model_errors_end_the_turn_as_an_error_result(print_mode: Run) -> None:
    failing = [{"fault": "500"}] * 5
    with FakeAnthropicServer(failing) as api:
        code, out, _ = print_mode(api, "-p", "hi", "--model", "sonnet", "--output-format", "json")
        api.assert_complete()
    result = json.loads(out)
    assert code == 1 and result["is_error"] and result["subtype"] == "error_during_execution"
    assert result["num_turns"] == 0 and "500" in result["errors"][0]
