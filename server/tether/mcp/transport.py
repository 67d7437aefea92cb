"""Transports for one MCP server, from the official SDK, with an end-of-stream signal.

The SDK's session notices a dead server only when a request fails. A crash while the
session is idle must be seen too (to restart the server before the model needs it), so
the read stream is wrapped: when it ends without our asking, ``on_lost`` is called.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

import anyio
from mcp.client._transport import ReadStream, TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage

from tether.mcp.config import NamedServer, StdioServer

Item = SessionMessage | Exception


class WatchedRead:
    """A read stream that reports its end (EOF or closed) once, then behaves as the inner."""

    def __init__(self, inner: ReadStream[Item], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        # The dispatcher duck-types this to restore the sender's contextvars (HTTP).
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Item:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> WatchedRead:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WatchedRead:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


@asynccontextmanager
async def open_transport(
    server: NamedServer, *, cwd: Path, errlog: TextIO, on_lost: Callable[[], None]
) -> AsyncGenerator[TransportStreams]:
    """Streams to ``server``; ``on_lost`` fires when the server ends the connection."""
    config = server.config
    if isinstance(config, StdioServer):
        params = StdioServerParameters(
            command=config.command,
            args=config.args,
            # Like Claude Code: the server sees the daemon's environment plus its own.
            env={**os.environ, **config.env},
            cwd=Path(config.cwd) if config.cwd else cwd,
        )
        async with stdio_client(params, errlog=errlog) as (read, write):
            yield WatchedRead(read, on_lost), write
    elif config.type == "sse":
        async with sse_client(config.url, headers=config.headers or None) as (read, write):
            yield WatchedRead(read, on_lost), write
    else:
        async with (
            create_mcp_http_client(headers=config.headers or None) as http,
            streamable_http_client(config.url, http_client=http) as (read, write),
        ):
            yield WatchedRead(read, on_lost), write
