"""Answers to the control requests an SDK program sends (``cli/sdk_wire.py`` types them).

Before the session opens, ``initialize`` records what the program chose (hooks, agents, its
MCP servers, system prompt, settings: ``SessionChoices``, read by ``cli/sdk_mode.py`` when the
first prompt opens the session), and ``set_permission_mode`` / ``set_model`` /
``set_max_thinking_tokens`` change what the session will start with; once it is open they
act on it through the driver. The MCP requests go to ``SdkServers``; ``interrupt`` and
``cancel_async_message`` act on the running turn and the queued prompts
(``PromptQueue``). Each handler returns the ``success`` payload or raises
``RequestRefused`` (a ``ConfigError``/``SessionError`` is an error answer too).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

from tether import __version__
from tether.cli.callenv import served_env
from tether.cli.driver import SessionDriver
from tether.cli.flags import PrintOptions
from tether.cli.sdk_choices import SessionChoices, apply_initialize
from tether.cli.sdk_servers import SdkServers
from tether.cli.sdk_wire import (
    CancelAsyncMessageRequest,
    EndSessionRequest,
    GetBinaryVersionRequest,
    GetContextUsageRequest,
    IncomingRequest,
    InitializeRequest,
    InterruptRequest,
    ListModelsRequest,
    McpCallRequest,
    McpMessageRequest,
    McpReconnectRequest,
    McpSetServersRequest,
    McpStatusRequest,
    McpToggleRequest,
    RequestRefused,
    SetHasSubscribersRequest,
    SetMaxThinkingTokensRequest,
    SetModelRequest,
    SetPermissionModeRequest,
    StopTaskRequest,
)
from tether.cli.stream_json import COMPAT_VERSION, StreamJsonEncoder
from tether.protocol.updates import MODES, Mode, UsageUpdate
from tether.providers.registry import MODEL_ALIASES, parse_model_spec
from tether.skills import commands


class PromptQueue(Protocol):
    """The prompts read but not yet run (``interrupt``, ``cancel_async_message``)."""

    def queued_uuids(self) -> list[str]: ...

    def cancel(self, uuids: list[str]) -> list[str]:
        """Drop the queued prompts with these uuids; returns those dropped."""
        ...

    def end(self) -> None:
        """No more prompts: the run ends once the queued ones have run (``end_session``)."""
        ...


def model_list() -> list[dict[str, Any]]:
    return [
        {
            "value": alias,
            "resolvedModel": model,
            "displayName": alias.title(),
            "description": f"{alias.title()} ({model}), or what {variable} names",
        }
        for alias, (model, variable) in MODEL_ALIASES.items()
    ]


class ControlAnswers:
    def __init__(
        self,
        options: PrintOptions,
        driver: SessionDriver,
        encoder: StreamJsonEncoder,
        servers: SdkServers,
        prompts: PromptQueue,
        is_open: Callable[[], bool],
    ) -> None:
        self.options = options
        self.driver = driver
        self.encoder = encoder
        self.servers = servers
        self.prompts = prompts
        self._is_open = is_open
        self.choices = SessionChoices(options.mode, options.model)
        self.usage: UsageUpdate | None = None
        """The last model response's usage (``get_context_usage``)."""

    async def answer(self, request: IncomingRequest) -> dict[str, Any]:
        """The payload of the ``success`` response; raises ``RequestRefused`` (or a
        ``ConfigError``/``SessionError``) for an ``error`` one."""
        is_open = self._is_open()
        match request:
            case InitializeRequest():
                return self._initialize(request)
            case InterruptRequest():
                return self._interrupt(request.cancel_queued)
            case SetPermissionModeRequest():
                return await self._set_mode(request.mode)
            case SetModelRequest():
                return await self._set_model(request.model)
            case SetMaxThinkingTokensRequest():
                return self._set_thinking(request.max_thinking_tokens)
            case McpStatusRequest():
                return {"mcpServers": self.servers.statuses(self.driver, is_open)}
            case McpSetServersRequest():
                return await self.servers.set_servers(request.servers, self.driver, is_open)
            case McpToggleRequest():
                name, enabled = request.server_name, request.enabled
                await self.servers.toggle(name, enabled, self.driver, is_open)
                return {}
            case McpReconnectRequest():
                await self.servers.reconnect(request.server_name, self.driver, is_open)
                return {}
            case McpMessageRequest():
                return await self.servers.message(
                    request.server_name, request.message, self.driver, is_open
                )
            case McpCallRequest():
                return await self._mcp_call(
                    request.tool, request.arguments, checked=request.check_permissions
                )
            case StopTaskRequest():
                if not is_open or not await self.driver.stop_task(request.task_id):
                    raise RequestRefused(f"no running task {request.task_id}")
                return {}
            case GetContextUsageRequest():
                return self._context_usage()
            case CancelAsyncMessageRequest():
                return {"cancelled": bool(self.prompts.cancel([request.message_uuid]))}
            case ListModelsRequest():
                return {"models": model_list()}
            case GetBinaryVersionRequest():
                return {"version": COMPAT_VERSION, "tether_version": __version__}
            case SetHasSubscribersRequest():
                return {}  # nothing is held back on stdout: every line goes out as it comes
            case EndSessionRequest():
                self.prompts.end()
                return {}

    def _initialize(self, request: InitializeRequest) -> dict[str, Any]:
        if self._is_open():
            raise RequestRefused("initialize came after the session started")
        applied = apply_initialize(request, self.choices, self.servers, self.options.cwd)
        found = commands.discover(self.options.cwd)
        return {
            "commands": [
                {"name": c.name, "description": c.description, "argumentHint": c.hint or ""}
                for c in found
            ],
            "agents": [
                {"name": n, "description": a.description} for n, a in self.choices.agents.items()
            ],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": model_list(),
            "account": {},
            "pid": os.getpid(),
            "claude_code_version": COMPAT_VERSION,
            "tether_version": __version__,
            "current_permission_mode": self.choices.mode or "default",
            "hook_on_failure_supported": True,
            **applied,
        }

    def _interrupt(self, cancel_queued: bool) -> dict[str, Any]:
        if self._is_open():
            self.driver.interrupt()
        queued = self.prompts.queued_uuids()
        if cancel_queued:
            return {"still_queued": [], "cancelled": self.prompts.cancel(queued)}
        return {"still_queued": queued}

    async def _set_mode(self, mode: str) -> dict[str, Any]:
        if mode not in MODES:
            raise RequestRefused(
                f"unknown permission mode {mode!r} (Tether's modes: {', '.join(MODES)})"
            )
        chosen: Mode = mode  # pyright: ignore[reportAssignmentType]
        self.choices.mode = chosen
        if self._is_open():
            await self.driver.set_mode(chosen)  # its mode update writes system/status
        else:
            self.encoder.status(chosen)
        return {"mode": chosen}

    async def _set_model(self, model: str | None) -> dict[str, Any]:
        wanted = None if model in (None, "default") else model
        if self._is_open():
            return {"model": await self.driver.set_model(wanted or self.options.model)}
        if wanted is not None:
            spec = parse_model_spec(wanted, cwd=self.options.cwd, env=served_env())
            self.choices.model = wanted  # a bad name failed above
            return {"model": spec.model}
        self.choices.model = self.options.model
        return {"model": self.options.model or "default"}

    def _set_thinking(self, tokens: int | None) -> dict[str, Any]:
        if self._is_open():
            raise RequestRefused(
                "set_max_thinking_tokens works only before the first prompt in Tether (the "
                "session's model is built with its thinking settings): pass maxThinkingTokens "
                "or thinking in the options"
            )
        self.choices.thinking_tokens = tokens
        return {}

    async def _mcp_call(
        self, tool: str, arguments: dict[str, Any], *, checked: bool
    ) -> dict[str, Any]:
        if not self._is_open():
            raise RequestRefused("mcp_call needs a running session: send a prompt first")
        if checked:
            call = await self.driver.call_checked(tool, arguments)
            if call.result is None:
                raise RequestRefused(call.refused or "The tool did not run")
            result = call.result
        else:
            result = await self.driver.call_mcp_tool(tool, arguments)
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    def _context_usage(self) -> dict[str, Any]:
        usage = self.usage
        used = usage.context_tokens if usage is not None else 0
        window = usage.context_window if usage is not None else 0
        categories = [
            {"id": "messages", "name": "Messages", "tokens": used, "color": "", "kind": "used"},
            {
                "id": "free_space",
                "name": "Free space",
                "tokens": max(0, window - used),
                "color": "",
                "kind": "free",
            },
        ]
        api = None
        if usage is not None:
            api = {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": usage.cache_creation_tokens,
                "cache_read_input_tokens": usage.cache_read_tokens,
            }
        return {
            "categories": categories,
            "totalTokens": used,
            "maxTokens": window,
            "rawMaxTokens": window,
            "percentage": round(100 * used / window, 1) if window else 0,
            "gridRows": [],
            "model": self.driver.facts().model if self._is_open() else self.choices.model or "",
            "memoryFiles": [],
            "mcpTools": [],
            "agents": [],
            "isAutoCompactEnabled": True,
            "apiUsage": api,
        }
