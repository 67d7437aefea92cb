"""What Tether offers an ACP client: capabilities, the auth method, modes and the
model/mode config options.

Modes are deprecated in ACP in favour of config options, but Zed, JetBrains and
CodeCompanion read both, so every session reports its mode both ways.
"""

from __future__ import annotations

import os
from pathlib import Path

from acp.schema import (
    AgentCapabilities,
    AuthMethodAgent,
    Implementation,
    McpCapabilities,
    PromptCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
)

from tether import __version__
from tether.errors import ConfigError
from tether.protocol.updates import MODES, Mode
from tether.providers.registry import parse_model_spec

API_KEY_METHOD = "anthropic-api-key"
_KEY_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

MODE_INFO: dict[Mode, tuple[str, str]] = {
    "default": ("Default", "Ask before edits and commands"),
    "acceptEdits": ("Accept Edits", "Edit workspace files without asking; ask before commands"),
    "plan": ("Plan", "Read and plan only: nothing is edited or run"),
    "dontAsk": ("Don't Ask", "Never ask: whatever no rule allows is denied"),
    "bypassPermissions": ("Bypass Permissions", "Run everything without asking"),
}

# Offered next to the session's own model when it is an Anthropic one; other providers
# (local OpenAI-compatible servers, scripts) only list the model they were started with.
ANTHROPIC_MODELS: tuple[tuple[str, str], ...] = (
    ("anthropic:claude-sonnet-4-6", "Claude Sonnet 4.6"),
    ("anthropic:claude-opus-4-5", "Claude Opus 4.5"),
    ("anthropic:claude-haiku-4-5", "Claude Haiku 4.5"),
)


def agent_info() -> Implementation:
    return Implementation(name="tether", title="Tether", version=__version__)


def agent_capabilities() -> AgentCapabilities:
    return AgentCapabilities(
        load_session=True,
        # Images go to the model as they are; embedded resources become context blocks.
        # Audio is not accepted: no provider we drive can hear it.
        prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
        # Client MCP servers are accepted and recorded (stdio always, http declared here);
        # they are not connected until the engine has an MCP client.
        mcp_capabilities=McpCapabilities(http=True, sse=False),
        session_capabilities=SessionCapabilities(
            list=SessionListCapabilities(),
            resume=SessionResumeCapabilities(),
            close=SessionCloseCapabilities(),
        ),
    )


def auth_methods() -> list[AuthMethodAgent]:
    # An agent-type method: registries require one, and the key itself never crosses
    # the protocol; the editor passes it in the agent's environment.
    return [
        AuthMethodAgent(
            id=API_KEY_METHOD,
            name="Anthropic API key",
            description="Set ANTHROPIC_API_KEY in the environment the editor starts Tether "
            "with (or pick a local model with --model openai:<model>@<url>).",
        )
    ]


def credentials_problem(model: str | None, cwd: Path) -> str | None:
    """Why a session with ``model`` could not reach its provider, or None if it can.
    Only missing credentials count; a malformed spec is a configuration error."""
    if not model:
        try:
            parse_model_spec(None, cwd=cwd)
        except ConfigError as e:
            return str(e)
        return None
    spec = parse_model_spec(model, cwd=cwd)
    if spec.provider == "anthropic" and not any(os.environ.get(k) for k in _KEY_VARS):
        return f"{model} needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment."
    return None


def resolve_model(model: str | None, cwd: Path) -> str:
    """The canonical spec string of ``model`` (settings/--model, or the default)."""
    return str(parse_model_spec(model, cwd=cwd))


def session_modes(current: Mode) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=mode, name=MODE_INFO[mode][0], description=MODE_INFO[mode][1])
            for mode in MODES
        ],
    )


def model_choices(current: str) -> list[tuple[str, str]]:
    choices = list(ANTHROPIC_MODELS) if current.startswith("anthropic:") else []
    if all(value != current for value, _ in choices):
        choices.insert(0, (current, current.partition(":")[2] or current))
    return choices


ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean


def config_options(mode: Mode, model: str) -> list[ConfigOption]:
    """The complete set; ACP clients replace their copy with every answer."""
    return [
        SessionConfigOptionSelect(
            id="mode",
            name="Mode",
            description="When Tether asks before acting",
            category="mode",
            type="select",
            current_value=mode,
            options=[
                SessionConfigSelectOption(
                    value=m, name=MODE_INFO[m][0], description=MODE_INFO[m][1]
                )
                for m in MODES
            ],
        ),
        SessionConfigOptionSelect(
            id="model",
            name="Model",
            category="model",
            type="select",
            current_value=model,
            options=[SessionConfigSelectOption(value=v, name=n) for v, n in model_choices(model)],
        ),
    ]


def parse_mode(value: str) -> Mode | None:
    return next((m for m in MODES if m == value), None)
