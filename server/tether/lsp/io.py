"""Serving stdio: a forgiving framing loop and a quick, clean exit.

pygls's own loop drops a message it cannot decode without answering and can lose the next
message after a bad ``Content-Length``. This loop answers garbage with JSON-RPC errors
(-32700 parse error, -32600 invalid request, the method's id kept where known), resyncs on
the next ``Content-Length`` header, and on stdin EOF (the editor died) stops the turns,
flushes transcripts and exits within a second.

pygls reads stdin in a thread, a line at a time: each header line and each body is a trip
to a worker thread and back to the loop. A pipe or socket is read by the loop itself
instead, and first: between any two of its callbacks (``editor_first``), so what the user
types (document sync, code actions: ``EditorMessages``) does not queue behind the work of
every session streaming; it is framed and handled in that same call (``frames``). A
regular file or a terminal keeps the thread.

pygls writes to stdout with a blocking ``write`` and ``flush``: a message bigger than the
pipe's buffer (64 KiB) stalls the whole event loop until the editor has read it. Messages
go through an asyncio pipe transport instead, as on the daemon's socket: it writes what the
pipe takes now and the rest when the pipe is writable again, so the loop never waits for
the editor.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import stat
import sys
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.protocol import JsonRPCProtocol

from tether.core.executor import install_default_executor
from tether.core.json_input import JsonTooDeepError, parse_json
from tether.lsp.editor_first import EditorFirstLoop, FdInput
from tether.lsp.frames import Frames
from tether.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    envelope_error,
    usable_id,
)

log = logging.getLogger(__name__)


def send_error(protocol: JsonRPCProtocol, msg_id: Any, code: int, message: str) -> None:
    protocol._send_data(  # pyright: ignore[reportPrivateUsage]
        {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    )


def handle_body(protocol: JsonRPCProtocol, body: bytes) -> None:
    message = parse_body(protocol, body)
    if message is not None:
        handle_parsed(protocol, message)


def parse_body(protocol: JsonRPCProtocol, body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC message in ``body``; None when it is not one (answered as an error)."""
    try:
        raw = parse_json(body)
    except JsonTooDeepError as e:
        # Answer the request when its id can be read: its sender is waiting for it.
        top = e.parsed
        msg_id = cast("dict[str, object]", top).get("id") if isinstance(top, dict) else None
        if usable_id(msg_id):
            send_error(protocol, msg_id, INVALID_REQUEST, f"Invalid Request: {e}")
        else:
            send_error(protocol, None, PARSE_ERROR, f"Parse error: {e}")
        return None
    except ValueError as e:
        send_error(protocol, None, PARSE_ERROR, f"Parse error: {e}")
        return None
    refused = envelope_error(raw)
    if refused is not None:
        send_error(protocol, refused.msg_id, refused.code, refused.message)
        return None
    return raw


def handle_parsed(protocol: JsonRPCProtocol, message: dict[str, Any]) -> None:
    try:
        structured = protocol.structure_message(message)
    except JsonRpcException as e:
        if "method" in message:
            if "id" in message:
                send_error(protocol, message["id"], e.code, f"{e.message} ({message['method']})")
            return
        if not usable_id(message.get("id")):
            return
        # A malformed answer to one of our requests ("error": "x"): the request fails with
        # that said, instead of waiting for an answer that already came.
        log.warning("a malformed answer to request %r: %s", message["id"], e.message)
        failed = {"code": INTERNAL_ERROR, "message": f"malformed answer: {e.message}"}
        structured = protocol.structure_message(
            {"jsonrpc": "2.0", "id": message["id"], "error": failed}
        )
    try:
        protocol.handle_message(structured)  # pyright: ignore[reportArgumentType]
    except Exception:
        log.exception("failed to handle a message")


def protocol_frames(protocol: JsonRPCProtocol) -> Frames:
    """The framing of the editor's messages to ``protocol``: each is handled as it is
    complete, a bad ``Content-Length`` answered."""
    return Frames(
        lambda body: handle_body(protocol, body),
        lambda message: send_error(protocol, None, PARSE_ERROR, message),
    )


FIRST = frozenset(
    {
        types.TEXT_DOCUMENT_DID_OPEN,
        types.TEXT_DOCUMENT_DID_CHANGE,
        types.TEXT_DOCUMENT_DID_CLOSE,
        types.TEXT_DOCUMENT_DID_SAVE,
        types.TEXT_DOCUMENT_CODE_ACTION,
    }
)
"""What the editor sends as the user types: handled as soon as it is read, even between
two callbacks of the agent's work."""


class EditorMessages:
    """The editor's messages to ``protocol``, in order. Read by the loop between two
    callbacks (``first``), a message of ``FIRST`` is handled there and then; any other
    one, and every one behind it, waits for its turn as if read the usual way (a
    callback at the end of the loop's queue): its handler may rely on what the messages
    before it queued (a turn a prompt started, that a cancel stops) having run."""

    def __init__(self, protocol: JsonRPCProtocol) -> None:
        self._protocol = protocol
        self._frames = Frames(
            self._take, lambda message: send_error(protocol, None, PARSE_ERROR, message)
        )
        self._first = False
        self._waiting: collections.deque[dict[str, Any]] = collections.deque()

    def feed(self, data: bytes, first: bool) -> None:
        self._first = first
        self._frames.feed(data)

    def _take(self, body: bytes) -> None:
        message = parse_body(self._protocol, body)
        if message is None:
            return
        if self._waiting or (self._first and message.get("method") not in FIRST):
            self._waiting.append(message)
            if len(self._waiting) == 1:
                asyncio.get_running_loop().call_soon(self._handle_waiting)
            return
        handle_parsed(self._protocol, message)

    def _handle_waiting(self) -> None:
        while self._waiting:
            handle_parsed(self._protocol, self._waiting.popleft())


async def read_loop(
    read_line: Callable[[], Awaitable[bytes]],
    read_exactly: Callable[[int], Awaitable[bytes]],
    protocol: JsonRPCProtocol,
) -> None:
    """Read framed messages until EOF (a line at a time, a body at once)."""
    frames = protocol_frames(protocol)
    while True:
        wanted = frames.body_wanted()
        data = await (read_exactly(wanted) if wanted else read_line())
        if not data:
            return
        frames.feed(data)
        if len(data) < wanted:
            return


class TransportWriter:
    """pygls's writer interface over an asyncio write transport (writes never block)."""

    def __init__(self, transport: asyncio.WriteTransport) -> None:
        self._transport = transport

    def write(self, data: bytes) -> None:
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self._transport.close()


async def nonblocking_writer(stdout: BinaryIO) -> TransportWriter | StdoutWriter:
    """A writer for ``stdout`` that does not block the loop; pygls's blocking one when the
    stream is a regular file (asyncio's pipe transport takes pipes, sockets and ttys)."""
    try:
        transport, _ = await asyncio.get_running_loop().connect_write_pipe(asyncio.Protocol, stdout)
    except ValueError:
        return StdoutWriter(stdout)
    return TransportWriter(transport)


async def read_editor(stdin: BinaryIO, thread_pool: Any, protocol: JsonRPCProtocol) -> None:
    """Handle the editor's messages until EOF: a pipe or a socket is read by the loop
    itself, between any two of its callbacks (``editor_first``), each message handled as
    it is complete; a regular file or a terminal is read by pygls's thread."""
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        mode = 0
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        try:
            editor = FdInput(stdin.fileno(), EditorMessages(protocol).feed)
        except (OSError, ValueError) as e:
            log.debug("stdin is read in a thread: %s", e)
        else:
            await editor.closed
            return
    reader = StdinAsyncReader(stdin, thread_pool)
    await read_loop(reader.readline, reader.readexactly, protocol)


def serve_stdio(
    protocol: JsonRPCProtocol,
    thread_pool: Any,
    on_eof: Callable[[], Awaitable[None]],
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    async def main() -> None:
        install_default_executor()  # a thread stuck for good must not hold the exit
        protocol.set_writer(await nonblocking_writer(stdout or sys.stdout.buffer))
        await read_editor(stdin or sys.stdin.buffer, thread_pool, protocol)
        try:
            await asyncio.wait_for(on_eof(), timeout=0.8)
        except (TimeoutError, Exception):
            log.warning("shutdown after EOF did not finish in time")

    code = 0
    try:
        with asyncio.Runner(loop_factory=EditorFirstLoop) as runner:
            runner.run(main())
    except SystemExit as e:  # the `exit` notification
        code = int(e.code or 0)
    except KeyboardInterrupt:
        code = 130
    # A blocked worker thread (a read in flight) must not keep a dead editor's daemon alive.
    sys.stderr.flush()
    os._exit(code)
