"""What an SDK program chose for its session before the session opened: the fields of
``initialize`` and the requests that came before the first prompt, as ``SessionChoices``.

``apply_initialize`` reads every field the current SDKs send (``docs/agent-sdk.md`` lists
them): those Tether acts on become choices; those that would change what the program relies
on and that Tether cannot honour are refused with a reason (``RequestRefused``); those that
only shape a display Tether does not have are noted on stderr. It returns the ``*_applied``
fields of the answer, which the TypeScript SDK checks before it sends a prompt.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.agents.definitions import AgentDefinition
from tether.cli.sdk_servers import SdkServers
from tether.cli.sdk_wire import HookMatcherConfig, InitializeRequest, RequestRefused, SdkAgent
from tether.protocol.updates import Mode

AGENT_FIELDS = {"description", "prompt", "tools", "disallowedTools", "model", "permissionMode"}
"""The fields of an SDK ``AgentDefinition`` Tether honours; others are noted."""
QUIET_FIELDS = {
    # What only a terminal or Claude's hosted sessions show or use: no effect on a turn.
    "promptSuggestions",
    "agentProgressSummaries",
    "forwardSubagentText",
    "forwardNestedSubagentToolCalls",
    "supportedDialogKinds",
    "perTaskStopAffordance",
    "rapidFollowupPreempt",
    "offersBypassSwitchBack",
    "keepsBypassHeld",
    "agentSdkVersion",
    "workspaceTrust",
    "sdkMcpServerManifestsOrigin",
    "systemPromptSnapshot",
    "excludeDynamicSections",
    "webSearchIsolationExemptMcpServers",
    "skills",
    "planModeInstructions",
    "appendSubagentSystemPrompt",
    "toolAliases",
    "codeRunningMcpTools",
}


@dataclass
class SessionChoices:
    mode: Mode | None
    model: str | None
    hooks: dict[str, list[HookMatcherConfig]] = field(
        default_factory=lambda: dict[str, list[HookMatcherConfig]]()
    )
    agents: dict[str, AgentDefinition] = field(default_factory=lambda: dict[str, AgentDefinition]())
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    title: str | None = None
    settings: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    """Settings sent in ``initialize`` (``settingsDelivery: "initialize"``)."""
    deny: list[str] = field(default_factory=lambda: list[str]())
    add_dirs: list[str] = field(default_factory=lambda: list[str]())
    thinking_tokens: int | None = None
    thinking_set: bool = False
    """``set_max_thinking_tokens`` came before the first prompt."""
    initialized: bool = False

    def settings_overrides(self, base: dict[str, Any], ask: list[str]) -> dict[str, Any]:
        """``base`` (the command line's) with what the program chose on top."""
        merged = {**base, **self.settings}
        permissions = dict(merged.get("permissions") or {})
        if self.add_dirs:
            permissions["additionalDirectories"] = [
                *permissions.get("additionalDirectories", []),
                *self.add_dirs,
            ]
        if ask:
            permissions["ask"] = [*permissions.get("ask", []), *ask]
        if permissions:
            merged["permissions"] = permissions
        if self.thinking_set:
            tokens = self.thinking_tokens
            model_options = dict(merged.get("modelOptions") or {})
            if tokens is None:
                model_options.pop("thinking", None)
            elif tokens == 0:
                model_options["thinking"] = "off"
            else:
                model_options |= {"thinking": "enabled", "thinking_budget": max(tokens, 1024)}
            merged["modelOptions"] = model_options
        return merged


def _note(message: str) -> None:
    sys.stderr.write(f"[tether] {message}\n")


def agent_definition(name: str, agent: SdkAgent) -> AgentDefinition:
    unused = sorted(set(agent.model_extra or {}) - AGENT_FIELDS)
    if unused:
        _note(f"agent {name}: {', '.join(unused)} not supported by Tether, left out")
    tools = agent.tools
    if agent.disallowed_tools:
        if tools is None:
            _note(
                f"agent {name}: disallowedTools without tools is not supported by Tether "
                "(name the tools it may use instead); it gets every tool"
            )
        else:
            tools = [t for t in tools if t not in agent.disallowed_tools]
    return AgentDefinition(
        name=name,
        description=agent.description,
        prompt=agent.prompt,
        tools=tuple(tools) if tools is not None else None,
        model=None if agent.model in (None, "inherit") else agent.model,
        read_only=agent.permission_mode == "plan",
    )


def _directories(values: list[str], cwd: Path) -> list[str]:
    out: list[str] = []
    for value in values:
        path = Path(value).expanduser()
        path = (path if path.is_absolute() else cwd / path).resolve()
        if not path.is_dir():
            # Passed over, as Claude Code does: the program may create it later.
            sys.stderr.write(
                f"[tether] additionalDirectories: {value} is not a directory; left out\n"
            )
            continue
        out.append(str(path))
    return out


def apply_initialize(
    request: InitializeRequest, choices: SessionChoices, servers: SdkServers, cwd: Path
) -> dict[str, Any]:
    """Record ``request`` in ``choices`` and ``servers``; returns the ``*_applied`` fields."""
    if choices.initialized:
        raise RequestRefused("initialize came twice: a session takes one")
    if request.json_schema is not None:
        raise RequestRefused(
            "structured output (jsonSchema / outputFormat) is not supported by Tether: ask for "
            "JSON in the prompt and parse the result text"
        )
    if request.managed_settings is not None:
        raise RequestRefused(
            "managed settings from a program are not supported by Tether: put the settings in "
            "the options' settings (or a settings file), or use managedSettingsDelivery 'argv'"
        )
    applied: dict[str, Any] = {}
    choices.hooks = dict(request.hooks or {})
    if request.hooks:
        applied["hooks_applied"] = True
    choices.agents = {n: agent_definition(n, a) for n, a in (request.agents or {}).items()}
    if request.system_prompt is not None:
        choices.system_prompt = "\n\n".join(request.system_prompt)
    if request.append_system_prompt:
        choices.append_system_prompt = request.append_system_prompt
    choices.title = request.title
    if request.settings is not None:
        choices.settings = request.settings
        applied["settings_applied"] = True
    if request.disallowed_tools is not None:
        choices.deny = list(request.disallowed_tools)
        applied["disallowed_tools_applied"] = True
    if request.additional_directories is not None:
        choices.add_dirs = _directories(request.additional_directories, cwd)
        applied["additional_directories_applied"] = True
    if request.plugins:
        _note("plugins are not supported by Tether: none was loaded")
        applied["plugins_applied"] = False
    hosted = {name: {"type": "sdk", "name": name} for name in request.sdk_mcp_servers or []}
    servers.announce(
        {**hosted, **(request.mcp_servers or {})},
        configs=request.sdk_mcp_server_configs,
        manifests=request.sdk_mcp_server_manifests,
    )
    if request.mcp_servers is not None:
        applied["mcp_servers_applied"] = True
    if servers.manifests:
        applied["sdk_mcp_manifests_parked"] = dict(servers.manifests)
    quiet = sorted(set(request.model_extra or {}) - QUIET_FIELDS)
    if quiet:
        _note(f"initialize: {', '.join(quiet)} not known to Tether, left out")
    choices.initialized = True
    return applied
