"""Transports for one MCP server, from the official SDK, with an end-of-stream signal.

The SDK's session notices a dead server only when a request fails. A crash while the
session is idle must be seen too (to restart the server before the model needs it), so
the read stream is wrapped: when it ends without our asking, ``on_lost`` is called.

Remote servers get their configured headers (environment variables already expanded) on
every request, through an HTTP client made here with the SDK's documented timeouts.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self, TextIO

import anyio
import httpx2
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from tether.core.environ import INHERIT_UMASK, Caller, process_env, process_umask
from tether.mcp.config import NamedServer, StdioServer
from tether.providers.network import NetworkSettings

Item = SessionMessage | Exception
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""The SDK's own defaults: a server may hold a response stream open for minutes."""


class _Reading(Protocol):
    async def receive(self) -> Item: ...

    async def aclose(self) -> None: ...


class MessageWriter(Protocol):
    """The write half of a transport (the shape the SDK's streams have)."""

    async def send(self, item: SessionMessage, /) -> None: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None: ...


class WatchedRead:
    """A read stream that reports its end (EOF or closed) once, then behaves as the inner."""

    def __init__(self, inner: _Reading, on_end: Callable[[], None]) -> None:
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
    server: NamedServer,
    *,
    cwd: Path,
    errlog: TextIO,
    on_lost: Callable[[], None],
    caller_env: Caller | None = None,
    settings_env: Mapping[str, str] | None = None,
) -> AsyncGenerator[tuple[WatchedRead, MessageWriter]]:
    """Streams to ``server``; ``on_lost`` fires when the server ends the connection.
    ``caller_env``: the warm daemon's client, whose world a stdio server runs in (None:
    this process's); ``settings_env``: the settings' ``env``, over it."""
    config = server.config
    if isinstance(config, StdioServer):
        # Like Claude Code: the server sees the user's environment (under the settings'
        # ``env``) plus its own.
        env = {**process_env(caller_env, credentials=True, settings=settings_env), **config.env}
        command, args = config.command, config.args
        if caller_env is not None:
            command, args = exactly(command, args, env, process_umask(caller_env))
        params = StdioServerParameters(
            command=command,
            args=args,
            env=env,
            cwd=Path(config.cwd) if config.cwd else cwd,
        )
        async with stdio_client(params, errlog=errlog) as (read, write):
            yield WatchedRead(read, on_lost), write
    elif config.type == "sse":

        def sse_http(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return _http_client(
                caller_env, headers=headers, timeout=timeout or HTTP_TIMEOUT, auth=auth
            )

        sse = sse_client(config.url, headers=config.headers or None, httpx_client_factory=sse_http)
        async with sse as (read, write):
            yield WatchedRead(read, on_lost), write
    else:
        async with (
            _http_client(caller_env, headers=config.headers or None, timeout=HTTP_TIMEOUT) as http,
            streamable_http_client(config.url, http_client=http) as (read, write),
        ):
            yield WatchedRead(read, on_lost), write


def exactly(
    command: str, args: list[str], env: Mapping[str, str], umask: int
) -> tuple[str, list[str]]:
    """The command line that starts ``command`` with exactly ``env`` and ``umask``. The SDK
    puts a few of this process's variables (``HOME``, ``PATH``, ``SHELL``, ``TERM``,
    ``USER``, ``LOGNAME``) under the given ones and has no umask: for a caller of the warm
    daemon, a ``/bin/sh`` in front takes out those the caller does not have and sets its
    umask, then becomes the server (same process, same arguments)."""
    if "/" not in command and shutil.which(command, path=env.get("PATH", os.defpath)) is None:
        return command, args  # starting it fails, with the SDK's clear error
    missing = sorted(set(get_default_environment()) - set(env))
    steps = [f"unset {' '.join(missing)}"] if missing else []
    if umask != INHERIT_UMASK:
        steps.append(f"umask {umask:04o}")
    if not steps:
        return command, args
    return "/bin/sh", ["-c", "; ".join([*steps, 'exec "$0" "$@"']), command, *args]


def _http_client(caller_env: Mapping[str, str] | None, **kwargs: Any) -> httpx2.AsyncClient:
    """For a caller of the warm daemon, its proxies and CA certificates (not the daemon's)."""
    if caller_env is None:
        return httpx2.AsyncClient(**kwargs)
    return NetworkSettings.of(caller_env).client(**kwargs)
