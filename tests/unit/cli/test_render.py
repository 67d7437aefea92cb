"""The text renderer line by line: what a terminal gets (colour, live text) and what a pipe
gets (plain lines, the answer at the end), for every kind of update."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tether.cli.driver import SessionFacts, TurnOutcome
from tether.cli.render import NOBODY_HINT, TextRenderer, explain, rejection
from tether.cli.style import Style, colour_wanted
from tether.protocol.content import TextToolContent
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
    endpoint_origin="ANTHROPIC_BASE_URL",
)
DONE = TurnOutcome("end_turn", "completed", None, Usage(input_tokens=10, output_tokens=2))


def renderer(
    tty: bool, verbose: bool = False, answerer: str = "you"
) -> tuple[TextRenderer, io.StringIO, io.StringIO]:
    out, err = (Tty(), Tty()) if tty else (io.StringIO(), io.StringIO())
    shown = TextRenderer(verbose=verbose, out=out, err=err, answerer=answerer)
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
    assert "\x1b[31m✗\x1b[0m Read a.py \x1b[2m(denied by a permission rule)\x1b[0m" in text
    assert "▶ fix it" in text
    assert "\x1b[33m[tether] retrying\x1b[0m" in text
    assert "context compacted (auto): summarised the conversation, 120000 → 8000 tokens" in text
    assert "(manual)" not in text  # the user asked for that one
    assert "[task t1] running: npm test" in text and "permission mode: acceptEdits" in text
    assert "end_turn · 2 model request(s) · 10 in / 2 out tokens" in text


def test_piped_with_verbose() -> None:
    shown, out, err = renderer(tty=False, verbose=True)
    play(shown)
    assert out.getvalue() == "The answer.\n"
    text = err.getvalue()
    assert "\x1b" not in text + out.getvalue()
    assert "⏺ Read a.py" in text and "context compacted (auto)" in text
    assert "[tether] settings: unknown key" in text and "end_turn · 2 model request(s)" in text


def test_a_stderr_that_is_no_terminal_stays_empty_on_success() -> None:
    # As claude -p: scripts treat anything on stderr as a failure.
    shown, out, err = renderer(tty=False)
    play(shown)
    assert out.getvalue() == "The answer.\n"
    assert err.getvalue() == ""


def test_errors_reach_a_stderr_that_is_no_terminal() -> None:
    shown, _, err = renderer(tty=False)
    shown.start(FACTS)
    shown.update("turn", Notice(level="warning", message="retrying"))
    shown.update("turn", Notice(level="error", message="hook crashed"))
    error = TurnError(code="model_error", message="Anthropic API: overloaded")
    shown.update("turn", TurnEnd(stop_reason="error", error=error))
    shown.finish(TurnOutcome("error", "model_error", "overloaded", Usage()))
    assert err.getvalue().splitlines() == [
        "[tether] hook crashed",
        "[tether] error (model_error): Anthropic API: overloaded",
    ]


@pytest.mark.parametrize(
    ("by", "answerer", "said"),
    [
        ("user", "you", "rejected by you"),
        ("user", "nobody", "denied: no terminal to ask on"),
        ("user", "mcp__perm__ask", "rejected by mcp__perm__ask"),
        ("rule", "nobody", "denied by a permission rule"),
        ("hook", "you", "blocked by a hook"),
        ("mode", "you", "denied by the permission mode"),
    ],
)
def test_a_rejection_says_who_said_no(by: str, answerer: str, said: str) -> None:
    assert rejection(by, answerer) == said  # type: ignore[arg-type]


def test_no_terminal_to_ask_on_is_said_once_with_the_way_out() -> None:
    shown, _, err = renderer(tty=False, verbose=True, answerer="nobody")
    shown.start(FACTS)
    for n in (1, 2):
        shown.update(
            "turn",
            ToolCall(
                tool_call_id=f"b{n}", title=f"touch {n}", tool_kind="execute", tool_name="Bash"
            ),
        )
        shown.update("turn", ToolCallUpdate(tool_call_id=f"b{n}", status="failed", rejected="user"))
    text = err.getvalue()
    assert "✗ touch 1 (denied: no terminal to ask on)" in text
    assert "✗ touch 2 (denied: no terminal to ask on)" in text
    assert "rejected by user" not in text and "rejected by you" not in text
    assert text.count(NOBODY_HINT) == 1 and "--allowedTools" in NOBODY_HINT


def test_tool_output_only_with_verbose_on_a_terminal() -> None:
    for verbose in (False, True):
        shown, _, err = renderer(tty=True, verbose=verbose)
        shown.start(FACTS)
        call = ToolCall(tool_call_id="b", title="echo hi", tool_kind="execute", tool_name="Bash")
        shown.update("turn", call)
        output = [TextToolContent(text="hi-output")]
        shown.update("turn", ToolCallUpdate(tool_call_id="b", status="completed", content=output))
        assert "echo hi" in err.getvalue()
        assert ("hi-output" in err.getvalue()) is verbose


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
        "(tried http://127.0.0.1:9; is the server running? the URL comes from ANTHROPIC_BASE_URL)"
        in err.getvalue()
    )
    assert explain("Anthropic API error 400: bad", "http://x") == "Anthropic API error 400: bad"


def test_an_unreachable_url_names_the_setting_that_chose_it() -> None:
    settings = "model in /home/u/.config/tether/settings.json"
    error = "model server at http://127.0.0.1:9/v1: connection error (ConnectError: refused)"
    said = explain(error, "http://127.0.0.1:9/v1", settings)
    assert said == f"{error} (is the server running? the URL comes from {settings})"
    assert "ANTHROPIC_BASE_URL" not in said
    default = explain("Anthropic API: connection error (x)", "https://api.anthropic.com")
    assert "tried https://api.anthropic.com; check the network" in default


def test_style_is_plain_when_off() -> None:
    assert Style(False).red("x") == "x" and Style(True).red("x") == "\x1b[31mx\x1b[0m"
