"""The NDJSON streams under the SDK: big lines, files as well as pipes, and a guard that
answers malformed input instead of letting it reach the SDK's reader.

The SDK's reader drops a line that is not JSON without answering, and its receive loop
dies on JSON that is not an object (``[]``, ``42``), which would end the connection. The
guard reads each line first: well-formed messages pass on unchanged; the others get the
JSON-RPC answer (-32700 parse error, -32600 invalid request) and the session goes on.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
from typing import Any, cast

from tether.core.json_input import JsonTooDeepError, parse_json
from tether.protocol.jsonrpc import INVALID_REQUEST, PARSE_ERROR, envelope_error, usable_id

LINE_LIMIT = 64 * 1024 * 1024
"""Longest line buffered at once: asyncio's default (64 KiB) breaks on pasted files."""


async def open_streams(
    stdin_fd: int, stdout_fd: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.Task[None]]:
    """(reader for the SDK, writer, the guard task feeding the reader)."""
    loop = asyncio.get_running_loop()
    raw = asyncio.StreamReader(limit=LINE_LIMIT)
    if _is_file(stdin_fd):
        threading.Thread(target=_feed, args=(loop, raw, stdin_fd), daemon=True).start()
    else:
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(raw), os.fdopen(stdin_fd, "rb", buffering=0)
        )
    protocol = asyncio.streams.FlowControlMixin()
    transport: asyncio.WriteTransport
    if _is_file(stdout_fd):
        transport = _FileTransport(stdout_fd)
    else:
        out = os.fdopen(stdout_fd, "wb", buffering=0)
        transport, _ = await loop.connect_write_pipe(lambda: protocol, out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    checked = asyncio.StreamReader(limit=LINE_LIMIT)
    return checked, writer, loop.create_task(guard(raw, checked, writer))


async def guard(
    source: asyncio.StreamReader, sink: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while line := await read_line(source):
            answer = problem(line)
            if answer is None:
                sink.feed_data(line if line.endswith(b"\n") else line + b"\n")
            elif answer:
                # One whole line per write, like the SDK's sender: lines never interleave.
                writer.write(answer)
    finally:
        sink.feed_eof()


async def read_line(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        try:
            chunks.append(await reader.readuntil(b"\n"))
        except asyncio.LimitOverrunError as e:
            chunks.append(await reader.readexactly(e.consumed))
            continue
        except asyncio.IncompleteReadError as e:
            chunks.append(e.partial)
        return b"".join(chunks)


def problem(line: bytes) -> bytes | None:
    """None for a line to pass on; else the error to answer (empty: drop silently)."""
    if not line.strip():
        return b""
    try:
        message = parse_json(line)
    except JsonTooDeepError as e:
        top = e.parsed
        msg_id = cast("dict[str, object]", top).get("id") if isinstance(top, dict) else None
        if usable_id(msg_id):
            return _error(msg_id, INVALID_REQUEST, f"Invalid Request: {e}")
        return _error(None, PARSE_ERROR, f"Parse error: {e}")
    except ValueError:
        return _error(None, PARSE_ERROR, "Parse error")
    refused = envelope_error(message)
    if refused is not None:
        return _error(refused.msg_id, refused.code, refused.message)
    return None


def _error(request_id: Any, code: int, message: str) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return (json.dumps(body, separators=(",", ":")) + "\n").encode()


# asyncio's pipe transports refuse regular files, which is what stdin and stdout are when
# a session is replayed from a file or recorded into one (`tether acp <in >out`).


def _is_file(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def _feed(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    with os.fdopen(fd, "rb") as f:
        for line in f:
            loop.call_soon_threadsafe(reader.feed_data, line)
    loop.call_soon_threadsafe(reader.feed_eof)


class _FileTransport(asyncio.WriteTransport):
    """Writes straight to a file: writes to a regular file do not block for long."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
