"""How print mode shows a turn, per ``--output-format``.

- ``text``: on a terminal, the answer streams in with colour, tool calls and their results
  as lines on stderr, a spinner naming the current step, thinking dimmed with
  ``--verbose``, a line when the conversation is compacted, the usage line at the end;
  piped, stdout gets the final answer only (what a script wants). A stderr that is not a
  terminal gets errors only, as ``claude -p`` writes nothing there on success (scripts
  treat stderr output as failure); ``--verbose`` brings the other lines back, uncoloured;
- ``json``: the ``result`` object only;
- ``stream-json``: Claude Code's lines (``cli/stream_json.py``);
- ``tether-json``: Tether's own events, every ``SessionUpdate`` as it is, for Tether's tools.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from tether.cli.driver import SessionFacts, TurnOutcome
from tether.cli.logs import current_notes
from tether.cli.result import TurnCounter, result_message, usage_line
from tether.cli.stream_json import StreamJsonEncoder, tool_result_text
from tether.cli.style import Spinner, Style, colour_wanted, is_terminal
from tether.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Compaction,
    ModeChange,
    Notice,
    Plan,
    RejectedBy,
    SessionUpdate,
    TaskUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
)

Write = Callable[[dict[str, Any]], None]


def json_lines(stream: TextIO) -> Write:
    """One JSON object per line, flushed at once (a program reads them as they come). A
    reader that went away gets nothing more (the turn still ends and is saved)."""
    closed = False

    def write(obj: dict[str, Any]) -> None:
        nonlocal closed
        if closed:
            return
        try:
            stream.write(json.dumps(obj, ensure_ascii=False) + "\n")
            stream.flush()
        except BrokenPipeError:
            closed = True
            quiet_stdout()

    return write


def quiet_stdout() -> None:
    """Point stdout at /dev/null: its reader is gone, and the interpreter's last flush must
    not fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class FrontEnd(Protocol):
    def start(self, facts: SessionFacts) -> None:
        """A turn starts."""
        ...

    def update(self, turn_id: str, update: SessionUpdate) -> None: ...

    def finish(self, outcome: TurnOutcome) -> None:
        """The turn ended."""
        ...

    async def aclose(self) -> None: ...


def explain(error: str, endpoint: str | None, chosen_by: str | None = None) -> str:
    """A turn's error as the user should read it: a connection failure names the URL and
    what chose it (``SessionFacts.endpoint_origin``)."""
    if not endpoint or "connection error" not in error:
        return error
    tried = "" if endpoint in error else f"tried {endpoint}; "
    if chosen_by is None:  # the provider's own URL: the way there is what fails
        return f"{error} ({tried}check the network and the proxy variables, e.g. HTTPS_PROXY)"
    return f"{error} ({tried}is the server running? the URL comes from {chosen_by})"


Answerer = str
"""Who answers the permission questions of a text-mode run: ``you`` (a terminal),
``nobody`` (no terminal to ask on: every question is a no), or the name of the MCP tool of
``--permission-prompt-tool``."""


def rejection(by: RejectedBy, answerer: Answerer) -> str:
    """Why a tool call did not run, as the tool line says it."""
    if by == "rule":
        return "denied by a permission rule"
    if by == "hook":
        return "blocked by a hook"
    if by == "mode":
        return "denied by the permission mode"
    if answerer == "you":
        return "rejected by you"
    if answerer == "nobody":
        return "denied: no terminal to ask on"
    return f"rejected by {answerer}"


NOBODY_HINT = (
    "[tether] no terminal to ask on, so questions are answered no: allow what the run needs "
    'with --allowedTools (e.g. "Edit" or "Bash(npm test:*)") or --permission-mode'
)


def talkative(err: TextIO, verbose: bool) -> bool:
    """Whether progress, notes and the usage line go to ``err``: on a terminal, or when
    asked for with ``--verbose``. Errors go there always."""
    return verbose or is_terminal(err)


class TextRenderer:
    def __init__(
        self,
        *,
        verbose: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
        answerer: Answerer = "you",
    ) -> None:
        self.verbose = verbose
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.live = is_terminal(self.out)
        """Stream the answer as it comes (a person watches); else print it at the end."""
        self.talk = talkative(self.err, verbose)
        """Progress lines, notes and the usage line on stderr (else errors only)."""
        self.answerer: Answerer = answerer
        self._hinted = False
        self.o = Style(colour_wanted(self.out))
        self.e = Style(colour_wanted(self.err))
        self.spinner = Spinner(self.err, self.e, enabled=is_terminal(self.err))
        self.counter = TurnCounter()
        self._titles: dict[str, str] = {}
        self._running: set[str] = set()
        self._at_line_start = True
        self._thinking = False
        self._facts: SessionFacts | None = None

    # -- writing ------------------------------------------------------------------------

    def _end_text_line(self) -> None:
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True
        if self._thinking:
            self.err.write("\n")
            self._thinking = False

    def line(self, text: str, *, error: bool = False) -> None:
        """A line on stderr (tool calls, notices), after whatever is on screen; only an
        ``error`` when stderr is not for chatter (``talk``)."""
        if not (self.talk or error):
            return
        self.spinner.hide()
        self._end_text_line()
        self.err.write(text + "\n")
        self.err.flush()

    def _step(self) -> None:
        if self._running:
            title = self._titles.get(next(iter(self._running)), "a tool")
            self.spinner.show(f"Running {title}")
        else:
            self.spinner.show("Thinking")

    # -- the turn -----------------------------------------------------------------------

    def start(self, facts: SessionFacts) -> None:
        if self._facts is None:
            for note in facts.notes:
                if current_notes().first(note):  # not said already as a log line
                    self.line(self.e.yellow(f"[tether] {note}"))
        self._facts = facts
        self.counter = TurnCounter()
        self._step()

    def update(self, turn_id: str, update: SessionUpdate) -> None:
        self.counter.update(update)
        if isinstance(update, AgentMessageChunk):
            if self._thinking:
                self._end_text_line()
            if self.live:
                self.spinner.hide()
                self.out.write(update.text)
                self.out.flush()
                self._at_line_start = update.text.endswith("\n")
        elif isinstance(update, AgentThoughtChunk):
            if self.verbose:
                self.spinner.hide()
                if not self._thinking:
                    self._end_text_line()
                    self.err.write(self.e.dim("✻ "))
                    self._thinking = True
                self.err.write(self.e.dim(update.text))
                self.err.flush()
        elif isinstance(update, ToolCall):
            self._titles[update.tool_call_id] = update.title
            self.line(f"{self.e.cyan('⏺')} {update.title}")
            self._step()
        elif isinstance(update, ToolCallUpdate):
            self._tool_update(update)
        else:
            self._other(update)

    def _tool_update(self, update: ToolCallUpdate) -> None:
        call_id = update.tool_call_id
        if update.status == "in_progress":
            self._running.add(call_id)
            self._step()
            return
        if update.status not in ("completed", "failed"):
            return
        self._running.discard(call_id)
        title = self._titles.get(call_id, call_id)
        mark = self.e.green("✓") if update.status == "completed" else self.e.red("✗")
        why = ""
        if update.rejected:
            why = f" {self.e.dim(f'({rejection(update.rejected, self.answerer)})')}"
        detail = ""
        if self.verbose and update.content:
            lines = tool_result_text(update.content).splitlines()[:20]
            detail = "".join("\n    " + self.e.dim(line) for line in lines)
        self.line(f"  {mark} {title}{why}{detail}")
        if update.rejected == "user" and self.answerer == "nobody" and not self._hinted:
            self._hinted = True
            self.line(self.e.yellow(NOBODY_HINT))
        self._step()

    def _other(self, update: SessionUpdate) -> None:
        e = self.e
        if isinstance(update, Plan):
            marks = {"completed": "☑", "in_progress": "▶", "pending": "☐"}
            self.line("\n".join(f"  {marks[p.status]} {p.content}" for p in update.entries))
        elif isinstance(update, Notice):
            paint = e.red if update.level == "error" else e.yellow
            self.line(paint(f"[tether] {update.message}"), error=update.level == "error")
        elif isinstance(update, Compaction) and update.trigger != "manual":
            what = {
                "summary": "summarised the conversation",
                "microcompact": "cleared old tool results",
                "tool_result_budget": "moved large tool results to files",
            }[update.strategy]
            self.line(
                e.yellow(
                    f"[tether] context compacted ({update.trigger}): {what}, "
                    f"{update.tokens_before} → {update.tokens_after} tokens"
                )
            )
        elif isinstance(update, TaskUpdate):
            self.line(e.dim(f"[task {update.task_id}] {update.status}: {update.description}"))
        elif isinstance(update, ModeChange):
            self.line(e.dim(f"[tether] permission mode: {update.mode}"))
        elif isinstance(update, TurnEnd) and update.error is not None:
            facts = self._facts
            endpoint, origin = (facts.endpoint, facts.endpoint_origin) if facts else (None, None)
            message = explain(update.error.message, endpoint, origin)
            self.line(e.red(f"[tether] error ({update.error.code}): {message}"), error=True)

    def finish(self, outcome: TurnOutcome) -> None:
        self.spinner.hide()
        self._end_text_line()
        stats = self.counter.stats
        if not self.live and stats.last_text:
            self.out.write(stats.last_text.rstrip("\n") + "\n")
            self.out.flush()
        if self.talk:
            session = self._facts.session_id if self._facts else "?"
            self.err.write(self.e.dim(usage_line(outcome, stats, session)) + "\n")
            self.err.flush()

    async def aclose(self) -> None:
        await self.spinner.stop()


class JsonResultRenderer:
    """``--output-format json``: the ``result`` object, nothing else."""

    def __init__(self, write: Write) -> None:
        self._write = write
        self.counter = TurnCounter()
        self._facts: SessionFacts | None = None

    def start(self, facts: SessionFacts) -> None:
        self._facts = facts
        self.counter = TurnCounter()

    def update(self, turn_id: str, update: SessionUpdate) -> None:
        self.counter.update(update)

    def finish(self, outcome: TurnOutcome) -> None:
        assert self._facts is not None
        message = result_message(outcome, self.counter.stats, self._facts.model)
        self._write({**message, "session_id": self._facts.session_id})

    async def aclose(self) -> None:
        return None


class StreamJsonRenderer:
    """``--output-format stream-json``."""

    def __init__(self, encoder: StreamJsonEncoder) -> None:
        self.encoder = encoder

    def start(self, facts: SessionFacts) -> None:
        self.encoder.begin_turn()
        self.encoder.init(facts)

    def update(self, turn_id: str, update: SessionUpdate) -> None:
        self.encoder.update(update)

    def finish(self, outcome: TurnOutcome) -> None:
        self.encoder.result(outcome)

    async def aclose(self) -> None:
        return None


class TetherJsonRenderer:
    """``--output-format tether-json``: ``system``/``init``, then every update as
    ``{"type": "update", "session_id", "turn_id", "update"}``, then the ``result``."""

    def __init__(self, write: Write) -> None:
        self._write = write
        self.counter = TurnCounter()
        self._facts: SessionFacts | None = None

    def start(self, facts: SessionFacts) -> None:
        self._facts = facts
        self.counter = TurnCounter()
        self._write(
            {
                "type": "system",
                "subtype": "init",
                "session_id": facts.session_id,
                "cwd": str(facts.cwd),
                "model": facts.model,
                "permissionMode": facts.mode,
                "tools": facts.tools,
            }
        )

    def update(self, turn_id: str, update: SessionUpdate) -> None:
        self.counter.update(update)
        assert self._facts is not None
        self._write(
            {
                "type": "update",
                "session_id": self._facts.session_id,
                "turn_id": turn_id,
                "update": update.to_wire(),
            }
        )

    def finish(self, outcome: TurnOutcome) -> None:
        assert self._facts is not None
        message = result_message(outcome, self.counter.stats, self._facts.model)
        self._write({**message, "session_id": self._facts.session_id})

    async def aclose(self) -> None:
        return None
