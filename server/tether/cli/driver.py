"""The narrow interface print mode drives a session through.

Everything ``tether -p`` / ``tether run`` does to a session goes through a ``SessionDriver``:
open or resume one with options, prompt it, interrupt it, change its mode or model, follow
its updates, and let it reach back for what only the caller can answer (permission
questions, hook callbacks, tools an SDK program hosts). ``InProcessDriver``
(``cli/inprocess.py``) runs the session in this process; a driver speaking to a warm
per-user daemon can take its place without the stream-json, control-protocol or rendering
code noticing.

Everything crossing this interface is a plain value or a callback, so a remote driver can
carry it over a socket.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tether.agents.definitions import AgentDefinition
from tether.core.hooks import Hooks
from tether.editor.port import PermissionReply, PermissionRequest
from tether.protocol.content import ContentBlock
from tether.protocol.updates import Mode, SessionUpdate, StopReason, Usage

if TYPE_CHECKING:
    import mcp_types

PermissionAsker = Callable[[PermissionRequest], Awaitable[PermissionReply]]
TrustAsker = Callable[[Path, list[str]], Awaitable[bool]]
UpdateListener = Callable[[str, SessionUpdate], None]
"""Receives ``(turn_id, update)``."""
CallHostedTool = Callable[[str, dict[str, Any]], Awaitable["mcp_types.CallToolResult"]]


@dataclass(frozen=True)
class HostedServer:
    """An MCP server that lives in the calling program (the Agent SDK's in-process servers):
    its tools, and how to call one."""

    name: str
    tools: Sequence[mcp_types.Tool]
    call_tool: CallHostedTool


@dataclass(frozen=True)
class OpenRequest:
    """Which session to run and how: the command line's choices plus the caller's
    callbacks."""

    cwd: Path
    resume: str | None = None
    continue_latest: bool = False
    """Continue the newest session of ``cwd``."""
    session_id: str | None = None
    """For a new session: its id."""
    recover: bool = False
    model: str | None = None
    fallback_model: str | None = None
    mode: Mode | None = None
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    builtin_tools: Sequence[str] | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    settings: Mapping[str, Any] = field(default_factory=lambda: dict[str, Any]())
    """Settings from the command line (``--settings``, ``--add-dir``): the most specific
    layer."""
    mcp_servers: Mapping[str, Any] = field(default_factory=lambda: dict[str, Any]())
    strict_mcp: bool = False
    ask: PermissionAsker | None = None
    """Answers permission questions; None: every question is a no."""
    trust: TrustAsker | None = None
    hooks: Hooks | None = None
    """The caller's own hooks, asked along with the settings' command hooks."""
    hosted: Sequence[HostedServer] = ()
    agents: Mapping[str, AgentDefinition] = field(
        default_factory=lambda: dict[str, AgentDefinition]()
    )
    """Subagents the caller defines (the SDK's ``agents``), over the workspace's own."""
    title: str | None = None
    fork: bool = False
    """With ``resume``/``continue_latest``: continue a copy of the session, under a new id."""


@dataclass(frozen=True)
class McpServerState:
    name: str
    status: str
    """``connected``, ``pending``, ``failed``..."""
    error: str | None = None


@dataclass(frozen=True)
class SessionFacts:
    """What a caller shows about the session it opened."""

    session_id: str
    cwd: Path
    model: str
    mode: Mode
    tools: list[str]
    mcp_servers: list[McpServerState]
    slash_commands: list[str]
    notes: list[str]
    """Warnings worth showing once (settings problems, what resuming repaired)."""
    endpoint: str | None = None
    """The URL model requests go to (named when they cannot get there)."""
    endpoint_origin: str | None = None
    """What set that URL (``--model``, ``model in <settings file>``, ``OPENAI_BASE_URL``,
    ``ANTHROPIC_BASE_URL``); None: the provider's default."""
    transcript_path: str | None = None


@dataclass(frozen=True)
class CheckedCall:
    """A tool call made outside a turn through the permission pipeline."""

    result: mcp_types.CallToolResult | None
    """What the tool returned; None when it did not run."""
    refused: str | None = None
    """Why it did not run (a rule, the mode, a hook or the program said no)."""


@dataclass(frozen=True)
class TurnOutcome:
    """How a turn ended."""

    stop_reason: StopReason
    reason: str
    """The engine's terminal reason: ``completed``, ``max_turns``, ``aborted``..."""
    error: str | None
    usage: Usage


class SessionDriver(Protocol):
    async def open(self, request: OpenRequest) -> SessionFacts:
        """Open (or resume) the session; raises ``ConfigError``/``SessionError`` with a
        message the user can act on, leaving nothing behind."""
        ...

    def facts(self) -> SessionFacts:
        """The open session as it is now (model and mode may have changed)."""
        ...

    def subscribe(self, listener: UpdateListener) -> Callable[[], None]:
        """Follow the session's updates; returns the function that stops following."""
        ...

    async def ready(self) -> None:
        """Wait (bounded) for the session's MCP servers to come up, so the facts list their
        tools; what went wrong is said on stderr, once."""
        ...

    async def prompt(self, blocks: Sequence[ContentBlock]) -> TurnOutcome:
        """Run a turn and return when it ends; updates go to the subscribers."""
        ...

    async def fold(self, blocks: Sequence[ContentBlock]) -> TurnOutcome | None:
        """Give a prompt to the running turn (Claude Code folds a prompt sent mid-turn into
        it): the outcome of that turn, or None when no turn took it in (the caller runs it
        as a turn of its own)."""
        ...

    def interrupt(self) -> bool:
        """Stop the running turn (it ends ``cancelled``); False when nothing runs."""
        ...

    async def set_mode(self, mode: Mode) -> None: ...

    async def set_model(self, model: str | None) -> str:
        """Use another model from the next request on (None: the settings' model); returns
        the model id in use."""
        ...

    async def stop_task(self, task_id: str) -> bool: ...

    async def call_checked(self, name: str, arguments: dict[str, Any]) -> CheckedCall:
        """Call a tool of the session as the model's own call to it is decided: rules, the
        mode, hooks, and a question when one is due (``mcp_call`` with
        ``check_permissions``)."""
        ...

    async def call_mcp_tool(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call an MCP tool of the session by its ``mcp__server__tool`` name."""
        ...

    def set_hosted(
        self, servers: Sequence[HostedServer], *, ask: Sequence[str] = (), deny: Sequence[str] = ()
    ) -> None:
        """The caller's in-process servers are now ``servers`` (their tools replace the
        ones offered before); ``ask``/``deny``: rules for their tools, added."""
        ...

    async def set_mcp_servers(self, servers: Mapping[str, Any]) -> dict[str, str]:
        """The caller's MCP servers that Tether runs are now ``servers`` (the workspace's
        own stay); returns, by name, those that could not start."""
        ...

    def add_rules(self, behavior: str, rules: Sequence[str], *, persist: bool) -> None:
        """Permission rules (``allow``/``deny``/``ask``) from now on; ``persist``: saved in
        the workspace's local settings too (allow and deny only)."""
        ...

    async def restart_mcp(self, name: str) -> None:
        """Start one MCP server again; ``KeyError`` when there is no such server."""
        ...

    async def background_pending(self, waiting: Callable[[int], None]) -> bool:
        """Wait until finished background tasks wait to be answered (True), or until
        nothing runs any more (False). ``waiting`` hears how many tasks it waits for."""
        ...

    async def answer_background(self) -> TurnOutcome | None:
        """A turn answering the finished tasks' notifications (None: nothing to answer)."""
        ...

    async def close(self) -> list[str]:
        """Close the session; returns problems worth reporting (a scripted model whose
        script was not used up)."""
        ...
