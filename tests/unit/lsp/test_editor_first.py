"""The editor's input is read between any two callbacks of a busy loop, not behind every
callback queued before it; a handler that needs no wait answers in the call that read its
request; the framing is the same whatever the chunks the bytes come in."""

from __future__ import annotations

import asyncio
import json
import linecache
import os
from collections.abc import Iterator
from typing import Any

import pytest
from lsprotocol import types

from tether.lsp import editor_first
from tether.lsp.eager import start_eagerly
from tether.lsp.editor_first import EditorFirstLoop, FdInput
from tether.lsp.frames import LINE_LIMIT, Frames
from tether.lsp.io import EditorMessages
from tether.lsp.main import create_server
from tether.lsp.protocol import TetherProtocol


def test_this_python_s_loop_lets_the_editor_in_between_callbacks() -> None:
    # Pins CPython's private _run_once/_ready on the Python CI runs: without them the
    # daemon falls back to the plain loop, and the editor waits behind the agent again.
    loop = EditorFirstLoop()
    try:
        assert loop.prioritizes
    finally:
        loop.close()


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        try:
            os.close(fd)
        except OSError:
            pass


def _busy_loop_then_input(
    loop: asyncio.AbstractEventLoop, pipe: tuple[int, int], queued: int
) -> list[str]:
    """``queued`` callbacks are ready when the first of them writes to the editor's pipe:
    where the reader ran among them."""
    order: list[str] = []

    async def main() -> None:
        read, write = pipe
        editor = FdInput(read, lambda data, first: order.append(data.decode()))
        loop.call_soon(os.write, write, b"editor")
        for n in range(queued):
            loop.call_soon(order.append, str(n))
        while len(order) < queued + 1:
            await asyncio.sleep(0)
        editor.close()

    loop.run_until_complete(main())
    return order


def test_input_is_read_before_the_callbacks_queued_before_it(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(editor_first, "POLL_INTERVAL_S", 0.0)
    loop = EditorFirstLoop()
    try:
        order = _busy_loop_then_input(loop, pipe, 200)
    finally:
        loop.close()
    assert order.index("editor") <= 1, order[:5]
    # The plain loop, for contrast: the reader runs after everything queued.
    plain = asyncio.SelectorEventLoop()
    try:
        assert _busy_loop_then_input(plain, pipe, 200).index("editor") == 200
    finally:
        plain.close()


def test_a_failing_reader_is_logged_and_the_loop_goes_on(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(editor_first, "POLL_INTERVAL_S", 0.0)
    loop = EditorFirstLoop()
    ran: list[int] = []

    def take(data: bytes, first: bool) -> None:
        raise ValueError("broken reader")

    async def main() -> None:
        read, write = pipe
        editor = FdInput(read, take)
        loop.call_soon(os.write, write, b"x")
        for n in range(50):
            loop.call_soon(ran.append, n)
        while len(ran) < 50:
            await asyncio.sleep(0)
        editor.close()

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert ran == list(range(50))
    assert "broken reader" in caplog.text


def test_end_of_input_closes(pipe: tuple[int, int]) -> None:
    async def main() -> list[bytes]:
        read, write = pipe
        got: list[bytes] = []
        editor = FdInput(read, lambda data, first: got.append(data))
        os.write(write, b"last words")
        os.close(write)
        await asyncio.wait_for(editor.closed, 5)
        return got

    loop = EditorFirstLoop()
    try:
        assert b"".join(loop.run_until_complete(main())) == b"last words"
    finally:
        loop.close()


# -- framing ----------------------------------------------------------------------------


def _frame(body: bytes, headers: bytes = b"") -> bytes:
    return b"Content-Length: %d\r\n%s\r\n%s" % (len(body), headers, body)


STREAM = (
    b"garbage before\r\n"
    + _frame(b'{"a":1}')
    + _frame(b'{"b":2}', b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n")
    + b"Content-Length: nope\r\n\r\n{}"
    + _frame(b"")
    + _frame(b'{"c":"\xc3\xa9\\n"}')
)


def _parse(chunks: list[bytes]) -> tuple[list[bytes], list[str]]:
    bodies: list[bytes] = []
    errors: list[str] = []
    frames = Frames(bodies.append, errors.append)
    for chunk in chunks:
        frames.feed(chunk)
    return bodies, errors


@pytest.mark.parametrize("size", [1, 2, 7, 64, len(STREAM)])
def test_any_chunking_frames_the_same(size: int) -> None:
    bodies, errors = _parse([STREAM[i : i + size] for i in range(0, len(STREAM), size)])
    assert bodies == [b'{"a":1}', b'{"b":2}', b"", b'{"c":"\xc3\xa9\\n"}']
    assert errors == ["Parse error: bad Content-Length b'nope'"]


@pytest.mark.parametrize("value", [b"7_5", b"+75", b"-0", b"0x4b", b"75.0", b"\xd9\xa7\xd9\xa5"])
def test_a_length_is_ascii_digits_only(value: bytes) -> None:
    """What ``int()`` would also read (underscores, signs, other scripts' digits) is a bad
    length, answered, and the next message is read."""
    bodies, errors = _parse([b"Content-Length: " + value + b"\r\n\r\n" + b"x" * 75, _frame(b"{}")])
    assert bodies == [b"{}"]
    assert errors == [f"Parse error: bad Content-Length {value!r}"]


def test_an_overlong_line_is_garbage_and_the_next_message_is_read() -> None:
    junk = b"x" * (LINE_LIMIT + 10)
    bodies, _ = _parse([junk[: LINE_LIMIT // 2], junk[LINE_LIMIT // 2 :] + b"\n", _frame(b"{}")])
    assert bodies == [b"{}"]


def test_a_handler_that_exits_leaves_the_rest_for_later() -> None:
    seen: list[bytes] = []

    def take(body: bytes) -> None:
        seen.append(body)
        if body == b"exit":
            raise SystemExit(0)

    frames = Frames(take, lambda _: None)
    with pytest.raises(SystemExit):
        frames.feed(_frame(b"exit") + _frame(b"after"))
    frames.feed(b"")
    assert seen == [b"exit", b"after"]


# -- eager handlers ---------------------------------------------------------------------


async def test_a_coroutine_that_never_waits_is_done_at_once() -> None:
    async def answer() -> int:
        return 42

    future = start_eagerly(answer())
    assert future.done() and future.result() == 42


async def test_a_coroutine_that_waits_goes_on_as_a_task() -> None:
    gate: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    steps: list[str] = []

    async def answer() -> str:
        steps.append("before")
        got = await gate
        steps.append("after")
        return got * 2

    future = start_eagerly(answer())
    assert steps == ["before"] and not future.done()
    gate.set_result("ab")
    assert await asyncio.wait_for(asyncio.wrap_future(future), 5) == "abab"


async def test_failures_and_cancellation_reach_the_caller() -> None:
    async def fails() -> Any:
        raise ValueError("bad")

    failed = start_eagerly(fails())
    assert failed.done() and isinstance(failed.exception(), ValueError)

    cleaned: list[str] = []

    async def waits() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            cleaned.append("cleaned")

    task = start_eagerly(waits())
    assert isinstance(task, asyncio.Task)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == ["cleaned"]


# -- the converter, made before the first message needs it ------------------------------


def _generated() -> set[str]:
    return {str(name) for name in linecache.cache if str(name).startswith("<cattrs generated")}


def test_the_warm_up_makes_what_the_first_edit_and_code_action_need() -> None:
    server, _hub = create_server()
    protocol = server.protocol
    assert isinstance(protocol, TetherProtocol)
    protocol.warm_converter()
    made = _generated()
    converter: Any = protocol._converter  # pyright: ignore[reportPrivateUsage]
    at = types.Position(line=0, character=0)
    edit = types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri="file:///a.py", version=1),
        edits=[types.TextEdit(range=types.Range(start=at, end=at), new_text="x")],
    )
    params = types.ApplyWorkspaceEditParams(edit=types.WorkspaceEdit(document_changes=[edit]))
    converter.unstructure(types.ApplyWorkspaceEditRequest(id="1", params=params))
    action = types.CodeAction(title="Keep", command=types.Command(title="Keep", command="k"))
    converter.unstructure(types.CodeActionResponse(id=2, result=[action]))
    change = {
        "jsonrpc": "2.0",
        "method": types.TEXT_DOCUMENT_DID_CHANGE,
        "params": {
            "textDocument": {"uri": "file:///a.py", "version": 2},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": 0, "character": 0},
                        "end": {"line": 0, "character": 0},
                    },
                    "text": "y",
                }
            ],
        },
    }
    protocol.structure_message(change)
    assert _generated() == made


# -- which messages go first ------------------------------------------------------------


class Recorder:
    """The protocol side of ``EditorMessages``: records what it is handed, in order."""

    def __init__(self, order: list[str]) -> None:
        self.order = order

    def structure_message(self, message: dict[str, Any]) -> dict[str, Any]:
        return message

    def handle_message(self, message: dict[str, Any]) -> None:
        self.order.append(str(message.get("method")))

    def _send_data(self, data: Any) -> None:
        self.order.append("error")


def _message(method: str, msg_id: int | None = None) -> bytes:
    body = {"jsonrpc": "2.0", "method": method, "params": {}}
    if msg_id is not None:
        body["id"] = msg_id
    return _frame(json.dumps(body).encode())


async def test_typing_goes_first_and_everything_else_keeps_its_turn() -> None:
    order: list[str] = []
    messages = EditorMessages(Recorder(order))  # type: ignore[arg-type]
    asyncio.get_running_loop().call_soon(order.append, "queued before")
    messages.feed(_message("textDocument/didChange") + _message("textDocument/codeAction", 1), True)
    assert order == ["textDocument/didChange", "textDocument/codeAction"]
    # A command waits for what is queued (a turn it would stop may not have started yet),
    # and so does the keystroke behind it: the order of the editor's messages holds.
    messages.feed(
        _message("workspace/executeCommand", 2) + _message("textDocument/didChange"), True
    )
    assert order == ["textDocument/didChange", "textDocument/codeAction"]
    await asyncio.sleep(0)
    assert order[2:] == ["queued before", "workspace/executeCommand", "textDocument/didChange"]
    # Read the usual way, every message is handled as it is read.
    messages.feed(_message("workspace/executeCommand", 3), False)
    assert order[-1] == "workspace/executeCommand"
