"""One long-lived client per MCP server: connect, list what it offers, call, restart after a
crash, list again when the server says its tools, prompts or resources changed.

The SDK's ``Client`` is entered and left in one task (anyio cancel scopes require it), so
each server gets a runner task that owns the connection for its whole life; tool calls
from turns use the live client. States:

    pending -> connecting -> connected -> (lost) restarting -> connected ... -> stopped
                         \\-> failed        (start failure, or too many restarts in a row)

A start failure is reported (state ``failed``, the reason, the tail of the server's stderr)
and not retried: it is almost always a configuration problem. A server that dies after
it worked is restarted with exponential backoff; ``restart()`` tries again on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar, cast

import mcp_types as types
from mcp import Client, MCPError

from tether import __version__
from tether.core.environ import Caller
from tether.errors import ToolError
from tether.mcp.catalog import Kind, changed_kind, list_kind, load_catalog, watch_changes
from tether.mcp.config import NamedServer
from tether.mcp.transport import open_transport

log = logging.getLogger(__name__)

T = TypeVar("T")
State = Literal["pending", "connecting", "connected", "restarting", "failed", "stopped"]


class McpUnavailable(ToolError):
    """The server cannot take a call now (not connected, or it went away mid-call): a tool
    failure the model hears about."""


@dataclass(frozen=True)
class Backoff:
    initial: float = 0.5
    factor: float = 2.0
    maximum: float = 30.0
    max_restarts: int = 5
    """Restarts in a row (each connection lived less than ``stable_after``) before giving up."""
    stable_after: float = 60.0

    def delay(self, restart: int) -> float:
        return min(self.maximum, self.initial * self.factor ** max(0, restart - 1))


@dataclass(frozen=True)
class ServerStatus:
    name: str
    transport: str
    state: State
    tools: int = 0
    error: str | None = None
    restarts: int = 0


class McpConnection:
    def __init__(
        self,
        server: NamedServer,
        *,
        cwd: Path,
        log_dir: Path,
        backoff: Backoff,
        connect_timeout: float,
        call_timeout: float | None,
        on_change: Callable[[McpConnection], None],
        caller_env: Caller | None = None,
        settings_env: Mapping[str, str] | None = None,
    ) -> None:
        self.server = server
        self.name = server.name
        self.cwd = cwd
        self.log_path = log_dir / f"{server.name}.log"
        self.backoff = backoff
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self._on_change = on_change
        self.caller_env = caller_env
        self.settings_env = settings_env
        self.state: State = "pending"
        self.error: str | None = None
        self.restarts = 0
        self.tools: list[types.Tool] = []
        self.prompts: list[types.Prompt] = []
        self.resources: list[types.Resource] = []
        self.instructions: str | None = None
        """What the server asks clients to tell the model about it (initialize result)."""
        self._client: Client | None = None
        self._lost = asyncio.Event()
        self._relist = asyncio.Event()
        self._stale: set[Kind] = set()
        self._fresh = asyncio.Event()
        """Clear while a change notice waits for its relisting."""
        self._fresh.set()
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        """Set once the first attempt connected or failed."""
        self._up = asyncio.Event()
        """Set while a connection can take calls."""
        self._down = asyncio.Event()
        """Set when the server failed or was stopped: waiting for it is pointless."""
        self._connected_at: float | None = None
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def wait_settled(self) -> None:
        await self._settled.wait()

    async def restart(self) -> None:
        """Reconnect now (after a failure, or to pick up a changed server)."""
        await self._halt()
        self._stop = asyncio.Event()
        self._down.clear()
        self.restarts, self.error = 0, None
        self.start()

    async def close(self) -> None:
        await self._halt()
        if self.state != "failed":
            self._set("stopped")

    async def _halt(self) -> None:
        task, self._task = self._task, None
        self._stop.set()
        if task is not None and not task.done():
            # The SDK bounds its own shutdown (stdin close, SIGTERM, SIGKILL); this is a net.
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=10)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def status(self) -> ServerStatus:
        return ServerStatus(
            self.name, self.server.transport, self.state, len(self.tools), self.error, self.restarts
        )

    def _set(self, state: State, error: str | None = None) -> None:
        self.state = state
        if error is not None or state == "connected":
            self.error = error
        if state in ("failed", "stopped"):
            self._down.set()
        self._on_change(self)

    def _mark_lost(self) -> None:
        """The connection is gone: no call may use it, even before the runner notices."""
        self._client = None
        self._up.clear()
        self._lost.set()
        self._stale.clear()
        self._fresh.set()

    async def _run(self) -> None:
        ever_connected = False
        while not self._stop.is_set():
            self._set("restarting" if ever_connected else "connecting")
            self._connected_at = None
            try:
                await self._serve()
                if not self._stop.is_set():
                    self.error = "the server closed the connection" + self._stderr_note()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                if not self._stop.is_set():
                    self.error = self._describe(e)
            finally:
                self._client = None
                self._up.clear()
            if self._stop.is_set():
                break
            lived = None if self._connected_at is None else time.monotonic() - self._connected_at
            ever_connected = ever_connected or lived is not None
            log.warning("MCP server %s: %s", self.name, self.error)
            if not ever_connected:
                self._set("failed", self.error)
                break
            if lived is not None and lived >= self.backoff.stable_after:
                self.restarts = 0
            self.restarts += 1
            if self.restarts > self.backoff.max_restarts:
                self._set(
                    "failed", f"gave up after {self.backoff.max_restarts} restarts: {self.error}"
                )
                break
            self._set("restarting", self.error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.backoff.delay(self.restarts))
        self._settled.set()

    async def _serve(self) -> None:
        """Connect, then hold the connection until stopped or lost; raises if it cannot."""
        self._lost = asyncio.Event()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self._errlog() as errlog:
            transport = open_transport(
                self.server,
                cwd=self.cwd,
                errlog=errlog,
                on_lost=self._mark_lost,
                caller_env=self.caller_env,
                settings_env=self.settings_env,
            )
            client = Client(
                transport,
                client_info=types.Implementation(name="tether", version=__version__),
                message_handler=self._on_message,
            )
            async with contextlib.AsyncExitStack() as stack:
                async with asyncio.timeout(self.connect_timeout):
                    await stack.enter_async_context(client)
                    catalog = await load_catalog(client)
                self.tools, self.prompts = catalog.tools, catalog.prompts
                self.resources, self.instructions = catalog.resources, catalog.instructions
                self._client = client
                self._connected_at = time.monotonic()
                watcher = asyncio.get_running_loop().create_task(
                    watch_changes(client, self._mark_stale)
                )
                stack.push_async_callback(_cancel, watcher)
                self._set("connected")
                self._settled.set()
                self._up.set()
                while True:
                    await _first(self._stop, self._lost, self._relist)
                    if self._stop.is_set() or self._lost.is_set():
                        break
                    await self._refresh(client)

    @contextlib.contextmanager
    def _errlog(self) -> Generator[TextIO]:
        # One attempt's stderr: its tail explains a failure; older attempts' is history.
        with open(self.log_path, "w", encoding="utf-8") as f:
            yield f

    async def _on_message(self, message: Any) -> None:
        kind = changed_kind(message)
        if kind is not None:
            self._mark_stale(kind)

    def _mark_stale(self, kind: Kind) -> None:
        self._stale.add(kind)
        self._fresh.clear()
        self._relist.set()

    async def _refresh(self, client: Client) -> None:
        self._relist.clear()
        stale, self._stale = self._stale, set()
        for kind in sorted(stale):
            items = await list_kind(client, kind, fresh=True)
            if kind == "tools":
                self.tools = items
            elif kind == "prompts":
                self.prompts = items
            else:
                self.resources = items
        if not self._stale:
            self._fresh.set()
        self._on_change(self)

    def _describe(self, error: BaseException) -> str:
        error = _root_cause(error)
        if isinstance(error, TimeoutError):
            text = f"did not connect within {self.connect_timeout:g}s"
        elif isinstance(error, FileNotFoundError):
            text = f"command not found: {error.filename or error}"
        elif isinstance(error, MCPError):
            text = f"the connection closed ({error.error.message})"
        else:
            text = f"{type(error).__name__}: {error}"
        return text + self._stderr_note()

    def _stderr_note(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        tail = " | ".join(ln.strip() for ln in text.strip().splitlines()[-lines:])[-500:]
        return f"; stderr: {tail}" if tail else ""

    # -- calls ------------------------------------------------------------------------

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Call ``tool``; raises McpUnavailable when the server cannot answer, MCPError for a
        protocol error the server sent (bad arguments, unknown tool...)."""
        client = await self._ready_client()
        result = await self._guard(
            client.call_tool(tool, arguments, read_timeout_seconds=self.call_timeout)
        )
        # A call may change the server's tools. The change notice can reach us after the
        # answer (over HTTP it comes on another stream), so after a call that may write, a
        # server that announces tool changes is asked again now: the model's next request
        # then offers what the call made available.
        if self._may_change_tools(tool):
            await self._relist_tools(client)
        elif not self._fresh.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._fresh.wait(), self.connect_timeout)
        return result

    def _may_change_tools(self, tool: str) -> bool:
        client = self._client
        if client is None:
            return False
        caps = client.server_capabilities.tools
        if caps is None or not caps.list_changed:
            return False
        found = next((t for t in self.tools if t.name == tool), None)
        hints = found.annotations if found is not None else None
        return not (hints is not None and hints.read_only_hint is True)

    async def _relist_tools(self, client: Client) -> None:
        try:
            tools = await self._guard(list_kind(client, "tools", fresh=True))
        except (McpUnavailable, MCPError) as e:
            log.info("MCP server %s: could not list tools again: %s", self.name, e)
            return
        if [t.model_dump() for t in tools] != [t.model_dump() for t in self.tools]:
            self.tools = tools
            self._on_change(self)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        """The prompt's messages with ``arguments`` filled in; errors as for ``call_tool``."""
        client = await self._ready_client()
        return await self._guard(client.get_prompt(name, arguments))

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        client = await self._ready_client()
        return await self._guard(client.read_resource(uri, cache_mode="bypass"))

    async def _guard(self, request: Awaitable[T]) -> T:
        try:
            return await request
        except MCPError as e:
            if e.code != types.CONNECTION_CLOSED:
                raise
            self._mark_lost()
            raise McpUnavailable(
                f"the MCP server {self.name} closed the connection during the call "
                "(it is being restarted; the call may or may not have taken effect)"
            ) from e
        except (OSError, ConnectionError) as e:
            self._mark_lost()
            raise McpUnavailable(f"the MCP server {self.name} is unreachable: {e}") from e

    async def _ready_client(self) -> Client:
        if self._client is None and not self._down.is_set():
            # Starting or coming back after a crash: worth a bounded wait.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_first(self._up, self._down), self.connect_timeout)
        if self._client is None:
            reason = f": {self.error}" if self.error else ""
            raise McpUnavailable(f"the MCP server {self.name} is {self.state}{reason}")
        return self._client


def _root_cause(error: BaseException) -> BaseException:
    """The SDK's task groups wrap the one real cause in exception groups."""
    inner: Any = getattr(error, "exceptions", ())
    if isinstance(error, BaseExceptionGroup) and len(inner) == 1:
        return _root_cause(cast(BaseException, inner[0]))
    return cast(BaseException, error)


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def _first(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
