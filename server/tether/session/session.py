"""The session core: one conversation, whichever front door drives it.

A ``Session`` owns a conversation — the engine (messages, transcript writer, mode, queued
prompts, background tasks), the per-turn checkpoints and the editor the tools write
through — and offers what every front door needs: ``prompt``, ``cancel``, ``rewind``,
``compact``, ``set_mode``, ``set_model``, ``history``. The LSP hub, the ACP agent, the CLI
and the warm daemon translate their wire to these calls and follow ``events``; none of
them touches the engine's lists or the transcript writer.

Sessions are made by ``Workspace.new_session`` / ``load_session``, which assemble the engine
from the workspace's settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.core.environ import Caller
from tether.editor.port import Editor
from tether.engine.engine import QueryEngine
from tether.engine.turns import TurnResult, TurnStream
from tether.errors import ModelError, SessionError
from tether.protocol.content import ContentBlock, TextContent
from tether.protocol.updates import Compaction, Mode, SessionUpdate, TurnEnd, Usage
from tether.providers.base import Provider
from tether.session.change_model import Outcome, Selection
from tether.session.changes import ChangeSet
from tether.session.checkpoints import CheckpointingEditor, Checkpoints, Restored
from tether.session.events import SessionEvents
from tether.session.history import History, read_history
from tether.session.rewind import Rewound, rewind_conversation
from tether.session.router import EditorRouter
from tether.session.undo import undo_hunks
from tether.skills import commands
from tether.skills.expand import McpPrompts
from tether.skills.session_prompt import command_turn, expand_for_session
from tether.tasks.registry import Task

log = logging.getLogger(__name__)

COMPACT_COMMAND = "/compact"
PUBLISH_SLICE_S = 0.002
"""Updates that are ready are published in steps of at most about this long: the event
loop runs the editor's messages between two steps (``lsp/editor_first.py``)."""


@dataclass(frozen=True)
class SessionHooks:
    """What a session needs from the workspace that made it."""

    ready: Callable[[], Awaitable[list[str]]]
    """Waits (bounded) for the workspace's MCP servers; returns problems to show."""
    provider_for: Callable[[str], Provider]
    """Makes the provider for another model (``set_model``)."""
    close: Callable[[], Awaitable[None]]
    """Lets the workspace release what it holds for this session."""
    mcp_prompts: Callable[[], McpPrompts | None] = lambda: None
    """The workspace's MCP prompts and resources, for prompt expansion."""
    use_caller: Callable[[Caller | None], Awaitable[None]] | None = None
    """Makes the session work for another caller (its owner sent a new environment)."""
    model_set: Callable[[str], None] = lambda _spec: None
    """Hears of ``set_model`` (the model a new caller's provider is made for)."""


class Session:
    def __init__(
        self,
        *,
        engine: QueryEngine,
        editor: CheckpointingEditor,
        router: EditorRouter,
        checkpoints: Checkpoints,
        changes: ChangeSet,
        events: SessionEvents,
        hooks: SessionHooks,
        auto_wake: bool = True,
        repaired: Sequence[str] = (),
    ) -> None:
        self.engine = engine
        self.editor = editor
        self._router = router
        self.checkpoints = checkpoints
        self.changes = changes
        """Every ended turn's changes as hunks (undone through ``undo_changes``)."""
        self.events = events
        self._hooks = hooks
        self.auto_wake = auto_wake
        """Answer finished background tasks with a turn of their own while idle (editors
        and the terminal do; ACP clients only expect updates while they prompt)."""
        self.repaired = list(repaired)
        """What loading the transcript repaired (interrupted calls, torn lines)."""
        self._ready = False
        self._drivers: set[asyncio.Task[TurnResult]] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._closed = False
        self._line: list[_Place] = []
        """Prompts not answered yet, in the order they came."""
        self._line_moved = asyncio.Event()

    # -- facts ----------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.engine.session_id

    @property
    def cwd(self) -> Path:
        return self.engine.cwd

    @property
    def busy(self) -> bool:
        return self.engine.busy

    @property
    def title(self) -> str | None:
        return self.engine.title

    @property
    def turns(self) -> int:
        """Turns that still count: rewound turns do not."""
        return self.engine.turns

    @property
    def mode(self) -> Mode:
        return self.engine.state.mode

    @property
    def model(self) -> str:
        return self.engine.provider.model

    @property
    def usage(self) -> Usage:
        """Token and cost totals of the whole session (kept across restarts)."""
        return self.engine.meter.session

    @property
    def rewindable_turns(self) -> list[str]:
        """Turns ``rewind`` can undo (their checkpoints are known), oldest first."""
        return [t.turn_id for t in self.checkpoints.turns]

    @property
    def tasks_running(self) -> bool:
        return bool(self.engine.tasks.running())

    def tasks(self) -> list[Task]:
        return self.engine.tasks.all()

    # -- turns ----------------------------------------------------------------------

    def attach(self, editor: Editor) -> Callable[[], None]:
        """Another client follows this session: its editor can answer questions (and
        drives the turns it starts). Returns the function that detaches it."""
        return self._router.attach(editor)

    async def prompt(
        self,
        blocks: Sequence[ContentBlock],
        *,
        turn_id: str | None = None,
        via: Editor | None = None,
    ) -> TurnResult:
        """Run a turn for the prompt and return when it ends; its updates go to ``events``.
        A prompt sent while a turn runs is never interleaved with it: it is injected at
        the running turn's next boundary, and this returns when that turn ends. One that
        came after the running turn's last boundary runs as a turn of its own, after the
        prompts sent before it. ``via`` is the editor of the client that sent it (several
        clients may follow a session)."""
        if self._closed:
            raise SessionError(f"session {self.session_id} is closed")
        place = _Place()
        self._line.append(place)  # arrival order, before anything can yield
        try:
            return await self._prompt_in_line(place, list(blocks), turn_id, via)
        finally:
            self._line.remove(place)
            self._moved()

    async def _prompt_in_line(
        self,
        place: _Place,
        blocks: list[ContentBlock],
        turn_id: str | None,
        via: Editor | None,
    ) -> TurnResult:
        if not self.busy:
            await self._first_prompt()  # MCP prompts and resources need their servers
            self._router.drive(via)  # a command's `!` questions go to its sender
        expanded = await expand_for_session(
            self.engine,
            blocks,
            commands=commands.discover(self.cwd),
            mcp=self._hooks.mcp_prompts(),
        )
        instructions = _compact_instructions(expanded.blocks)
        if instructions is not None:
            return await self._compact_as_turn(instructions)
        while True:
            if self._closed:
                raise SessionError(f"session {self.session_id} was closed before this prompt ran")
            if self.busy:
                # A prompt joining a running turn does not switch that turn's model.
                async with command_turn(self.engine, expanded, None):
                    future = await self.engine.enqueue(expanded.blocks)
                    consumed = await asyncio.shield(future)
                if consumed is not None:
                    return consumed
                # Given back: it came after that turn's last boundary.
            elif self._line[0] is place:
                # Nothing awaits between the check above and the turn's start.
                async with command_turn(self.engine, expanded, self._hooks.provider_for):
                    self._router.drive(via)
                    return await self._drive(expanded.blocks, turn_id)
            else:
                await self._line_moved.wait()

    async def fold(self, blocks: Sequence[ContentBlock]) -> TurnResult | None:
        """Give a prompt to the running turn only, as Claude Code folds one: it is taken in
        at the turn's next boundary after tool results and this returns that turn's result.
        None when nothing took it in (no turn runs, the running one ended without another
        tool call, or it is a ``/compact``): the caller runs it as a turn of its own, in its
        order."""
        if self._closed or not self.busy:
            return None
        expanded = await expand_for_session(
            self.engine,
            list(blocks),
            commands=commands.discover(self.cwd),
            mcp=self._hooks.mcp_prompts(),
        )
        if _compact_instructions(expanded.blocks) is not None or not self.busy:
            return None
        async with command_turn(self.engine, expanded, None):
            future = await self.engine.enqueue(expanded.blocks, with_tools_only=True)
            return await asyncio.shield(future)

    def _moved(self) -> None:
        """Wake every prompt waiting in line to look again (a turn started or ended, or
        one left the line)."""
        self._line_moved.set()
        self._line_moved = asyncio.Event()

    async def answer_notifications(self) -> TurnResult | None:
        """Finished background tasks wait to be answered and nothing runs: answer them
        with a turn of their own (``None`` when there is nothing to answer, or prompts
        wait for their turns: those turns take the notifications in)."""
        if self.busy or self._line or not self.engine.notifications:
            return None
        self._router.drive(None)
        return await self._drive(None, None)

    def cancel(self) -> bool:
        """Stop the running turn; it ends ``cancelled`` with a consistent history."""
        return self.engine.cancel()

    async def _drive(self, blocks: list[ContentBlock] | None, turn_id: str | None) -> TurnResult:
        turn_id = turn_id or uuid.uuid4().hex[:12]
        writer = self.engine.transcript
        self.checkpoints.begin(turn_id, writer.last_uuid if writer is not None else None)
        stream = self.engine.start(blocks, turn_id=turn_id)
        self._moved()  # prompts waiting in line join this turn
        self._watch()
        driver = asyncio.get_running_loop().create_task(self._publish(stream))
        self._drivers.add(driver)
        driver.add_done_callback(self._drivers.discard)
        driver.add_done_callback(lambda _: self._moved())
        try:
            return await asyncio.shield(driver)
        except asyncio.CancelledError:
            # The caller went away ($/cancelRequest, a closed connection): stop the turn,
            # let its end be published, then let the cancellation through.
            self.engine.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await driver
            raise

    async def _publish(self, stream: TurnStream) -> TurnResult:
        began: float | None = None
        try:
            async for update in stream:
                if isinstance(update, TurnEnd):
                    # Its files are written and recorded; whoever waits for the end of the
                    # turn finds its change set ready.
                    await self.changes.turn_ended(stream.turn_id)
                began = began if began is not None else time.perf_counter()
                self.events.publish(stream.turn_id, update)
                if not stream.ready():
                    began = None  # the next one is waited for: this step ends here anyway
                elif time.perf_counter() - began > PUBLISH_SLICE_S:
                    # A burst (a whole answer read at once): the rest in a later step, so
                    # what else is ready (the editor's messages first) does not wait for it.
                    await asyncio.sleep(0)
                    began = None
        finally:
            await stream.aclose()
        result = self.engine.last_result
        assert result is not None
        return result

    async def _first_prompt(self) -> None:
        """MCP servers get their chance to come up before the first request."""
        if self._ready:
            return
        self._ready = True
        for problem in await self._hooks.ready():
            self.engine.note(problem)

    def _watch(self) -> None:
        if self.auto_wake and self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(self._answer_when_woken())

    async def _answer_when_woken(self) -> None:
        wake = self.events.wake_requested
        while True:
            await wake.wait()
            wake.clear()
            # Tasks that finish together are answered by one turn.
            await asyncio.sleep(0)
            try:
                await self.answer_notifications()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the turn answering finished tasks failed")

    # -- between turns ----------------------------------------------------------------

    def set_mode(self, mode: Mode) -> None:
        self.engine.set_mode(mode)

    def set_model(self, spec: str) -> None:
        """Use another model from the next request on."""
        self.engine.set_provider(self._hooks.provider_for(spec))
        self._hooks.model_set(spec)

    async def use_caller(self, caller: Caller | None) -> None:
        """Work for ``caller`` from now on: its model client, commands, hooks and MCP
        servers take it from their next use (the warm daemon: the client that owns the
        session sent a new environment)."""
        if self._hooks.use_caller is not None and not self._closed:
            await self._hooks.use_caller(caller)

    async def compact(self, instructions: str = "") -> Compaction:
        """Summarise the conversation now (``/compact``, ``tether/compact``)."""
        if self.busy:
            raise SessionError("cannot compact while a turn is running")
        try:
            return await self.engine.compact(instructions)
        except ModelError as e:
            raise SessionError(f"compaction failed: {e}")

    async def _compact_as_turn(self, instructions: str) -> TurnResult:
        from tether.engine.transitions import Terminal

        await self.compact(instructions)
        return TurnResult("", Terminal("completed"), self.engine.meter.turn)

    async def rewind(self, turn_id: str) -> Rewound:
        """Put the files changed by ``turn_id`` and every later turn back as they were
        before it, and continue the conversation from there."""
        if self.busy:
            raise SessionError("cannot rewind while a turn is running; cancel it first")
        plan = self.checkpoints.restore_plan(turn_id)
        if plan is None:
            raise SessionError(f"unknown turnId for this session: {turn_id}")
        rewound_turns = len(self.checkpoints.turns) - (self.checkpoints.find(turn_id) or 0)
        outcomes = [await self.editor.restore(path, text) for path, text in plan.files.items()]
        outcomes += [
            Restored(
                path, False, f"a shell command changed it and what it was is not kept: {reason}"
            )
            for path, reason in plan.missing.items()
        ]
        for path in plan.files:
            # The agent's view of the file went back in time too: it must read it again.
            self.engine.state.files.forget(path)
        result = Rewound(outcomes)
        await rewind_conversation(self.engine, turn_id, plan.checkpoint.parent_uuid, result)
        self.engine.turns = max(0, self.engine.turns - rewound_turns)
        await self.engine.save_meta()
        dropped = self.rewindable_turns[self.checkpoints.find(turn_id) or 0 :]
        self.checkpoints.drop_from(turn_id)
        self.changes.drop(dropped)
        return result

    # -- the change set ---------------------------------------------------------------

    async def undo_changes(self, selection: Selection, editor: Editor) -> Outcome:
        """Put the chosen hunks' lines back as they were, in ``editor``'s buffers and on
        disk; the next prompt tells the model."""
        if self.busy:
            raise SessionError("cannot undo changes while a turn is running; cancel it first")
        return await undo_hunks(self.changes, editor, selection)

    async def history(self) -> list[tuple[str, SessionUpdate]]:
        """The conversation as the updates a client would have seen, ``(turnId, update)``."""
        return (await self.full_history()).updates

    async def full_history(self) -> History:
        """``history`` and the turns rewinds took off it, each where it was."""
        writer = self.engine.transcript
        if writer is None:
            return History([], [])
        await writer.flush()
        return await asyncio.to_thread(
            read_history,
            writer.path,
            writer.last_uuid,
            self.engine.describe_call,
            self.engine.provider.context_window,
            self.repaired,
        )

    async def stop_task(self, task_id: str) -> bool:
        tasks = self.engine.tasks
        if tasks.get(task_id) is None:
            raise SessionError(f"unknown taskId: {task_id}")
        task = await tasks.stop(task_id)
        return task is not None and task.status == "killed"

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._moved()  # prompts waiting in line learn that they will not run
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        self.engine.cancel()
        if self._drivers:
            # Waits without taking in the drivers' ends: a cancel of this close still stops it.
            await asyncio.wait(list(self._drivers))
        await self._hooks.close()


class _Place:
    """One prompt's place in the session's line."""


def _compact_instructions(blocks: Sequence[ContentBlock]) -> str | None:
    """``/compact [instructions]`` typed as a prompt asks for a compaction, not a turn."""
    first = blocks[0] if blocks else None
    if not isinstance(first, TextContent):
        return None
    text = first.text.strip()
    if text == COMPACT_COMMAND or text.startswith(COMPACT_COMMAND + " "):
        return text.removeprefix(COMPACT_COMMAND).strip()
    return None
