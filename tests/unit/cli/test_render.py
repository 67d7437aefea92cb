"""The text renderer line by line: what a terminal gets (colour, live text) and what a pipe
gets (plain lines, the answer at the end), for every kind of update."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tether.cli.driver import SessionFacts, TurnOutcome
from tether.cli.render import TextRenderer, explain
from tether.cli.style import Style, colour_wanted
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Compaction,
    ModeChange,
    Notice,
    Plan,
    PlanEntry,
    TaskUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    TurnError,
    Usage,
    UsageUpdate,
)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


FACTS = SessionFacts(
    session_id="s-9",
    cwd=Path("/w"),
    model="claude-sonnet-5-5",
    mode="default",
    tools=[],
    mcp_servers=[],
    slash_commands=[],
    notes=["settings: unknown key"],
    endpoint="http://127.0.0.1:9",
)
DONE = TurnOutcome("end_turn", "completed", None, Usage(input_tokens=10, output_tokens=2))


def renderer(tty: bool, verbose: bool = False) -> tuple[TextRenderer, io.StringIO, io.StringIO]:
    out, err = (Tty(), Tty()) if tty else (io.StringIO(), io.StringIO())
    shown = TextRenderer(verbose=verbose, out=out, err=err)
    shown.spinner.enabled = False  # it needs a running loop; the pty test covers it
    return shown, out, err


def play(shown: TextRenderer) -> None:
    shown.start(FACTS)
    for update in [
        AgentThoughtChunk(text="pondering"),
        AgentMessageChunk(text="Let me look."),
        ToolCall(tool_call_id="c1", title="Read a.py", tool_kind="read", tool_name="Read"),
        ToolCallUpdate(tool_call_id="c1", status="in_progress"),
        UsageUpdate(input_tokens=5, output_tokens=1),
        ToolCallUpdate(tool_call_id="c1", status="failed", rejected="rule"),
        Plan(entries=[PlanEntry(content="fix it", status="in_progress")]),
        Notice(level="warning", message="retrying"),
        Compaction(trigger="auto", tokens_before=120_000, tokens_after=8_000),
        Compaction(trigger="manual", tokens_before=9, tokens_after=1),
        TaskUpdate(task_id="t1", status="running", description="npm test"),
        ModeChange(mode="acceptEdits"),
        AgentMessageChunk(text="The answer."),
        UsageUpdate(input_tokens=10, output_tokens=2),
    ]:
        shown.update("turn", update)
    shown.finish(DONE)


def test_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    shown, out, err = renderer(tty=True, verbose=True)
    play(shown)
    assert out.getvalue() == "Let me look.\nThe answer.\n"
    text = err.getvalue()
    assert "\x1b[33m[tether] settings: unknown key\x1b[0m" in text
    assert "\x1b[2m✻ \x1b[0m\x1b[2mpondering\x1b[0m" in text
    assert "\x1b[36m⏺\x1b[0m Read a.py" in text
    assert "\x1b[31m✗\x1b[0m Read a.py \x1b[2m(rejected by rule)\x1b[0m" in text
    assert "▶ fix it" in text
    assert "\x1b[33m[tether] retrying\x1b[0m" in text
    assert "context compacted (auto): summarised the conversation, 120000 → 8000 tokens" in text
    assert "(manual)" not in text  # the user asked for that one
    assert "[task t1] running: npm test" in text and "permission mode: acceptEdits" in text
    assert "end_turn · 2 model request(s) · 10 in / 2 out tokens" in text


def test_piped() -> None:
    shown, out, err = renderer(tty=False)
    play(shown)
    assert out.getvalue() == "The answer.\n"
    text = err.getvalue()
    assert "\x1b" not in text + out.getvalue()
    assert "pondering" not in text  # thinking only with --verbose
    assert "⏺ Read a.py" in text and "context compacted (auto)" in text


def test_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(Tty())
    shown, out, err = renderer(tty=True)
    play(shown)
    assert "\x1b[" not in out.getvalue() + err.getvalue()
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not colour_wanted(Tty())


def test_errors_name_what_to_check() -> None:
    shown, _, err = renderer(tty=False)
    shown.start(FACTS)
    error = TurnError(code="model_error", message="Anthropic API: connection error (ConnectError)")
    shown.update("turn", TurnEnd(stop_reason="error", error=error))
    assert (
        "(tried http://127.0.0.1:9; check ANTHROPIC_BASE_URL or the --model URL)" in err.getvalue()
    )
    assert explain("Anthropic API error 400: bad", "http://x") == "Anthropic API error 400: bad"


def test_style_is_plain_when_off() -> None:
    assert Style(False).red("x") == "x" and Style(True).red("x") == "\x1b[31mx\x1b[0m"
