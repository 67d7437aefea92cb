"""A prompt that comes after the running turn's last boundary runs as a turn of its own."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tether.core.hooks import NoHooks, StopHookVerdict
from tether.editor.disk import DiskEditor
from tether.editor.port import Document
from tether.engine.engine import QueryEngine
from tether.errors import SessionError
from tether.protocol.content import ResourceLink, TextContent
from tether.providers.base import Provider
from tether.session.changes import ChangeSet
from tether.session.checkpoints import CheckpointingEditor, Checkpoints
from tether.session.events import SessionEvents
from tether.session.router import EditorRouter
from tether.session.session import Session, SessionHooks

from .support import make_engine, text

WAIT = 5


class HeldStop(NoHooks):
    """A Stop hook that holds the first turn's end until released: the window after the
    turn's last boundary, where a prompt can only be given back."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def stop(self, *, stop_hook_active: bool, last_message: str) -> StopHookVerdict:
        if not self.entered.is_set():
            self.entered.set()
            await self.release.wait()
        return StopHookVerdict()


class SlowReads(DiskEditor):
    """Reads of attached files wait until released (the prompt is still being read)."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = asyncio.Event()
        self.release = asyncio.Event()

    async def read(self, path: Path) -> Document:
        self.reading.set()
        await self.release.wait()
        return await super().read(path)


def make_session(engine: QueryEngine) -> Session:
    async def ready() -> list[str]:
        return []

    async def close() -> None:
        return None

    def no_provider(spec: str) -> Provider:
        raise AssertionError(f"no model switch expected: {spec}")

    checkpoints = Checkpoints()
    router = EditorRouter(engine.editor)
    return Session(
        engine=engine,
        editor=CheckpointingEditor(router, checkpoints, engine.session_id, lambda _r: None),
        router=router,
        checkpoints=checkpoints,
        changes=ChangeSet(checkpoints, engine.session_id, lambda _r: None, lambda _u: None),
        events=SessionEvents(),
        hooks=SessionHooks(ready=ready, provider_for=no_provider, close=close),
        auto_wake=False,
    )


async def queued(engine: QueryEngine, count: int) -> None:
    async def poll() -> None:
        while engine.queued_prompts < count:
            await asyncio.sleep(0)

    await asyncio.wait_for(poll(), WAIT)


def user_texts(engine: QueryEngine) -> list[str]:
    return [m.text for m in engine.messages if m.role == "user" and not m.tool_results]


async def test_prompt_after_the_last_boundary_runs_as_its_own_turn(tmp_path: Path) -> None:
    hooks = HeldStop()
    script = [
        [text("first done")],
        {"expect": {"contains": "late prompt"}, "blocks": [text("late done")]},
    ]
    engine = make_engine(tmp_path, script, [], hooks=hooks)
    session = make_session(engine)
    first = asyncio.create_task(session.prompt([TextContent(text="first")]))
    await asyncio.wait_for(hooks.entered.wait(), WAIT)
    late = asyncio.create_task(session.prompt([TextContent(text="late prompt")]))
    await queued(engine, 1)  # for a boundary that will not come
    hooks.release.set()
    first_result = await asyncio.wait_for(first, WAIT)
    late_result = await asyncio.wait_for(late, WAIT)
    assert late_result.turn_id != first_result.turn_id
    assert late_result.terminal.reason == "completed"
    assert engine.provider.remaining == 0  # type: ignore[attr-defined]
    assert "late prompt" in user_texts(engine)[-1]
    assert engine.messages[-1].text == "late done"


async def test_late_prompts_keep_their_order(tmp_path: Path) -> None:
    hooks = HeldStop()
    script = [
        [text("first done")],
        {"expect": {"contains": "second"}, "blocks": [text("second done")]},
        {"expect": {"contains": "third"}, "blocks": [text("third done")]},
    ]
    engine = make_engine(tmp_path, script, [], hooks=hooks)
    session = make_session(engine)
    first = asyncio.create_task(session.prompt([TextContent(text="first")]))
    await asyncio.wait_for(hooks.entered.wait(), WAIT)
    second = asyncio.create_task(session.prompt([TextContent(text="second")]))
    third = asyncio.create_task(session.prompt([TextContent(text="third")]))
    await queued(engine, 2)
    hooks.release.set()
    results = await asyncio.wait_for(asyncio.gather(first, second, third), WAIT)
    assert len({r.turn_id for r in results[:2]}) == 2
    assert all(r.terminal.reason == "completed" for r in results)
    assert user_texts(engine) == ["first", "second", "third"]
    assert engine.provider.remaining == 0  # type: ignore[attr-defined]


async def test_prompt_still_being_read_when_the_turn_ends_does_not_hang(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the attached notes\n")
    editor = SlowReads()
    script = [
        [text("first done")],
        {"expect": {"contains": "the attached notes"}, "blocks": [text("read them")]},
    ]
    hooks = HeldStop()
    engine = make_engine(tmp_path, script, [], editor=editor, hooks=hooks)
    session = make_session(engine)
    first = asyncio.create_task(session.prompt([TextContent(text="first")]))
    await asyncio.wait_for(hooks.entered.wait(), WAIT)
    link = ResourceLink(uri=(tmp_path / "notes.txt").as_uri(), name="notes.txt")
    late = asyncio.create_task(session.prompt([TextContent(text="see"), link]))
    await asyncio.wait_for(editor.reading.wait(), WAIT)
    hooks.release.set()  # the turn ends while the prompt's attachment is being read
    first_result = await asyncio.wait_for(first, WAIT)
    editor.release.set()
    late_result = await asyncio.wait_for(late, WAIT)
    assert late_result.turn_id != first_result.turn_id
    assert engine.provider.remaining == 0  # type: ignore[attr-defined]


async def test_engine_gives_back_what_no_turn_consumed(tmp_path: Path) -> None:
    hooks = HeldStop()
    engine = make_engine(tmp_path, [[text("done")]], [], hooks=hooks)
    stream = engine.start("go")
    await asyncio.wait_for(hooks.entered.wait(), WAIT)
    future = await engine.enqueue([TextContent(text="too late")])
    hooks.release.set()
    async for _ in stream:
        pass
    assert await asyncio.wait_for(future, WAIT) is None
    assert "too late" not in str(user_texts(engine))


async def test_a_prompt_waiting_when_the_session_closes_is_told_so(tmp_path: Path) -> None:
    hooks = HeldStop()
    engine = make_engine(tmp_path, [[text("first done")]], [], hooks=hooks)
    session = make_session(engine)
    first = asyncio.create_task(session.prompt([TextContent(text="first")]))
    await asyncio.wait_for(hooks.entered.wait(), WAIT)
    late = asyncio.create_task(session.prompt([TextContent(text="late prompt")]))
    await queued(engine, 1)
    await asyncio.wait_for(session.close(), WAIT)
    assert (await asyncio.wait_for(first, WAIT)).terminal.reason == "aborted"
    with pytest.raises(SessionError, match="closed before this prompt ran"):
        await asyncio.wait_for(late, WAIT)
