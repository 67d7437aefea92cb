"""The pure parts of the plain-LSP front door: instruction comments, step names, the end
message, code actions and the Markdown conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePath

import pytest
from lsprotocol import types

from tether.engine.transitions import Terminal
from tether.engine.turns import TurnResult
from tether.lsp import actions, instructions
from tether.lsp.markdown_log import MarkdownLog
from tether.lsp.steps import StepNamer, describe
from tether.lsp.summary import TurnDigest, ending, first_sentence
from tether.protocol.updates import (
    AgentMessageChunk,
    Notice,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    TurnError,
    Usage,
)


@pytest.mark.parametrize(
    ("line", "language", "name", "text", "whole"),
    [
        ("# tether: make this async", "python", "a.py", "make this async", True),
        ("    x = f()  # Tether: cache it", None, "a.py", "cache it", False),
        ("// tether: handle an empty list", "go", "a.go", "handle an empty list", True),
        ("total := sum(rows) // tether: guard", None, "a.go", "guard", False),
        ("-- tether: use ipairs", "lua", "a.lua", "use ipairs", True),
        (
            "<!-- tether: add a table of contents -->",
            "markdown",
            "a.md",
            "add a table of contents",
            True,
        ),
        ("/* tether: round corners */", "css", "a.css", "round corners", True),
        (";; tether: use a hash table", None, "init.el", "use a hash table", True),
    ],
)
def test_instruction_comments(
    line: str, language: str | None, name: str, text: str, whole: bool
) -> None:
    found = instructions.find(line, 3, instructions.syntaxes(language, PurePath(name)))
    assert found is not None
    assert (found.line, found.text, found.whole_line) == (3, text, whole)
    assert found.comment in line


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("# tether:", "a.py"),  # nothing asked
        ("# a tether: rope", "a.py"),  # not at the comment's start
        ("print('# tether: no')", "a.lua"),  # not this file's comment syntax
        ("url = 'https://tether.dev'", "a.py"),
    ],
)
def test_lines_that_are_not_instructions(line: str, name: str) -> None:
    assert instructions.find(line, 0, instructions.syntaxes(None, PurePath(name))) is None


def call(kind: str, title: str, **raw: object) -> ToolCall:
    return ToolCall(tool_call_id=title, title=title, tool_kind=kind, raw_input=dict(raw))  # type: ignore[arg-type]


def test_steps_in_words() -> None:
    assert describe(call("edit", "Edit", file_path="/w/src/ops.py")) == "Editing ops.py"
    assert describe(call("execute", "Bash", command="python -m pytest -q")) == "Running the tests"
    assert describe(call("execute", "Bash", command="npm run test -- x")) == "Running the tests"
    assert describe(call("execute", "Bash", command="ls -la")) == "Running ls -la"
    assert describe(call("search", "Grep", pattern="TODO")) == "Searching for TODO"
    assert describe(call("fetch", "Fetch", url="https://docs.python.org/3/")) == (
        "Fetching docs.python.org"
    )
    assert describe(call("other", "TodoWrite", todos=[])) == "Updating the plan"


def test_reads_asked_together_are_one_step() -> None:
    namer = StepNamer()
    names = [
        namer.name(call("read", "a", file_path="a.py")),
        namer.name(call("read", "b", file_path="b.py")),
        namer.name(call("read", "c", file_path="c.py")),
        namer.name(AgentMessageChunk(text="now")),
        namer.name(call("read", "d", file_path="d.py")),
    ]
    assert names == ["Reading a.py", "Reading 2 files", "Reading 3 files", None, "Reading d.py"]


def test_a_wait_for_the_model_server_is_a_step_other_notices_are_not() -> None:
    namer = StepNamer()
    wait = Notice(message="waiting for http://127.0.0.1:1/v1 (10 s, up to 300 s)…", progress=True)
    assert namer.name(wait) == "Waiting for http://127.0.0.1:1/v1 (10 s, up to 300 s)…"
    assert namer.name(Notice(level="warning", message="retry 1 in 2 s")) is None


def result(stop: str, error: TurnError | None = None) -> TurnResult:
    reasons = {"end_turn": "completed", "cancelled": "aborted", "error": "model_error"}
    terminal = Terminal(reasons[stop], error.message if error else "")  # type: ignore[arg-type]
    return TurnResult("t1", terminal, Usage())


def test_the_end_message() -> None:
    digest = TurnDigest()
    digest.feed(AgentMessageChunk(text="Looking."))
    digest.feed(call("edit", "Edit ops.py", file_path="/w/ops.py"))
    digest.feed(ToolCallUpdate(tool_call_id="Edit ops.py", status="completed"))
    digest.feed(AgentMessageChunk(text="Fixed mean() in ops.py. It divided "))
    digest.feed(AgentMessageChunk(text="by zero."))
    done = ending(result("end_turn"), digest)
    assert done.type == types.MessageType.Info
    assert done.message == "Tether: fixed mean() in ops.py — 1 file changed"
    stopped = ending(result("cancelled"), TurnDigest())
    assert stopped.type == types.MessageType.Warning
    assert stopped.message == "Tether: stopped — no files changed"
    failed = ending(result("error", TurnError(code="model_error", message="overloaded")), digest)
    assert failed.type == types.MessageType.Error
    assert "overloaded" in failed.message and "ANTHROPIC_API_KEY" in failed.message


def test_first_sentence() -> None:
    assert first_sentence("I renamed it. Then more.") == "I renamed it"
    assert first_sentence("## Done\nrest") == "done"
    assert first_sentence("HTTP works") == "HTTP works"
    assert len(first_sentence("word " * 100)) == 120


def params(start: tuple[int, int], end: tuple[int, int], only: list[str] | None = None):  # type: ignore[no-untyped-def]
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri="file:///w/a.py"),
        range=types.Range(types.Position(*start), types.Position(*end)),
        context=types.CodeActionContext(
            diagnostics=[],
            only=[types.CodeActionKind(k) for k in only] if only else None,
        ),
    )


def test_a_whole_line_selection_ends_before_the_next_line() -> None:
    lines = ["x = 1", "# tether: do it", "y = 2"]
    found = actions.code_actions(
        params((0, 0), (1, 0)), lines, "python", PurePath("/w/a.py"), literals=True
    )
    # Lines 0..0 are selected: the instruction on line 1 is not.
    assert [a.title for a in found] == [
        "Tether: explain",
        "Tether: refactor…",
        "Tether: write tests",
    ]


async def test_the_markdown_conversation(tmp_path: Path) -> None:
    path = tmp_path / "conversations" / "s1.md"
    log = MarkdownLog(path, "ws (/w)")
    log.ask("fix it", "Fix this problem\nin two lines")
    log.update(AgentMessageChunk(text="Looking at "))
    log.update(AgentMessageChunk(text="it."))
    log.update(call("edit", "Edit a.py", file_path="/w/a.py"))
    log.update(ToolCallUpdate(tool_call_id="Edit a.py", status="completed"))
    log.update(call("execute", "Bash", command="rm -rf /"))
    log.update(ToolCallUpdate(tool_call_id="Bash", status="failed", rejected="user"))
    log.update(TurnEnd(stop_reason="end_turn"))
    await log.close()
    text = path.read_text()
    assert text.startswith("# Tether — ws (/w)\n")
    assert "## fix it — " in text and "> Fix this problem\n> in two lines" in text
    assert "\nLooking at it.\n" in text
    assert "- ✓ `Edit a.py`" in text and "- ✗ `Bash` (rejected by the user)" in text
    assert text.rstrip().endswith("*Turn done.*")
    assert path.stat().st_mode & 0o777 == 0o600
    await asyncio.sleep(0)
