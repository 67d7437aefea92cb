"""Answers to the control requests an SDK program sends (``cli/control.py`` types them).

Before the session opens, ``initialize`` registers the program's hook callbacks and agents,
and ``set_permission_mode`` / ``set_model`` change what the session will start with
(``SessionChoices``); once it is open they act on it through the driver. ``interrupt``
stops the running turn; ``mcp_status`` and ``stop_task`` report and stop.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tether import __version__
from tether.agents.definitions import AgentDefinition
from tether.cli.callenv import served_env
from tether.cli.control import (
    ControlError,
    HookMatcherConfig,
    IncomingRequest,
    InitializeRequest,
    InterruptRequest,
    McpStatusRequest,
    SetModelRequest,
    SetPermissionModeRequest,
)
from tether.cli.driver import SessionDriver
from tether.cli.flags import PrintOptions
from tether.cli.stream_json import StreamJsonEncoder
from tether.protocol.updates import MODES, Mode
from tether.providers.registry import MODEL_ALIASES, parse_model_spec
from tether.skills import commands


@dataclass
class SessionChoices:
    """What the program chose before the session opened."""

    mode: Mode | None
    model: str | None
    hooks: dict[str, list[HookMatcherConfig]] = field(
        default_factory=lambda: dict[str, list[HookMatcherConfig]]()
    )
    agents: dict[str, AgentDefinition] = field(default_factory=lambda: dict[str, AgentDefinition]())


class ControlAnswers:
    def __init__(
        self,
        options: PrintOptions,
        driver: SessionDriver,
        encoder: StreamJsonEncoder,
        is_open: Callable[[], bool],
    ) -> None:
        self.options = options
        self.driver = driver
        self.encoder = encoder
        self._is_open = is_open
        self.choices = SessionChoices(options.mode, options.model)

    async def answer(self, request: IncomingRequest) -> dict[str, Any]:
        """The payload of the ``success`` response; raises ``ControlError`` (or a
        ``ConfigError``) for an ``error`` one."""
        if isinstance(request, InitializeRequest):
            return self._initialize(request)
        if isinstance(request, InterruptRequest):
            if self._is_open():
                self.driver.interrupt()
            return {}
        if isinstance(request, SetPermissionModeRequest):
            return await self._set_mode(request.mode)
        if isinstance(request, SetModelRequest):
            return await self._set_model(request.model)
        if isinstance(request, McpStatusRequest):
            servers = self.driver.facts().mcp_servers if self._is_open() else []
            return {"mcpServers": [{"name": s.name, "status": s.status} for s in servers]}
        if not self._is_open() or not await self.driver.stop_task(request.task_id):
            raise ControlError(f"no running task {request.task_id}")
        return {}

    def _initialize(self, request: InitializeRequest) -> dict[str, Any]:
        if self._is_open():
            raise ControlError("initialize came after the session started")
        choices = self.choices
        choices.hooks = dict(request.hooks or {})
        choices.agents = {
            name: AgentDefinition(
                name=name,
                description=agent.description,
                prompt=agent.prompt,
                tools=tuple(agent.tools) if agent.tools is not None else None,
                model=None if agent.model in (None, "inherit") else agent.model,
            )
            for name, agent in (request.agents or {}).items()
        }
        found = commands.discover(self.options.cwd)
        return {
            "commands": [
                {"name": c.name, "description": c.description, "argumentHint": c.hint or ""}
                for c in found
            ],
            "agents": [
                {"name": n, "description": a.description} for n, a in choices.agents.items()
            ],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [
                {"value": alias, "resolvedModel": model, "displayName": alias.title()}
                for alias, (model, _variable) in MODEL_ALIASES.items()
            ],
            "pid": os.getpid(),
            "tether_version": __version__,
            "current_permission_mode": choices.mode or "default",
            "hooks_applied": True,
            "hook_on_failure_supported": True,
        }

    async def _set_mode(self, mode: str) -> dict[str, Any]:
        if mode not in MODES:
            raise ControlError(f"unknown permission mode {mode!r} (one of {', '.join(MODES)})")
        chosen: Mode = mode  # pyright: ignore[reportAssignmentType]
        self.choices.mode = chosen
        if self._is_open():
            await self.driver.set_mode(chosen)  # its mode update writes system/status
        else:
            self.encoder.status(chosen)
        return {"mode": chosen}

    async def _set_model(self, model: str | None) -> dict[str, Any]:
        if self._is_open():
            if model is None:
                raise ControlError("set_model needs a model once the session has started")
            return {"model": await self.driver.set_model(model)}
        if model is not None:
            spec = parse_model_spec(
                model, cwd=self.options.cwd, env=served_env()
            )  # a bad name fails here
            self.choices.model = model
            return {"model": spec.model}
        self.choices.model = self.options.model
        return {"model": self.options.model or "default"}
