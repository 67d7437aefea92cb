"""The settings tree. Every field has a default; unknown keys are reported and ignored."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from tether.network.hosts import valid_pattern
from tether.protocol.updates import Mode

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
]
HOOK_EVENTS: tuple[HookEvent, ...] = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
)


class _Section(BaseModel):
    # camelCase keys in the JSON files; an alias generator keeps pyright's view simple
    model_config = ConfigDict(extra="ignore", populate_by_name=True, alias_generator=to_camel)


class PermissionSettings(_Section):
    allow: list[str] = Field(default_factory=lambda: list[str]())
    ask: list[str] = Field(default_factory=lambda: list[str]())
    deny: list[str] = Field(default_factory=lambda: list[str]())
    default_mode: Mode = "default"
    additional_directories: list[str] = Field(default_factory=lambda: list[str]())
    disable_bypass_permissions_mode: Literal["disable"] | None = None


def _host_pattern(value: str) -> str:
    if (problem := valid_pattern(value)) is not None:
        raise ValueError(problem)
    return value


HostPattern = Annotated[str, AfterValidator(_host_pattern)]
"""One bad pattern is reported and dropped, the others kept."""


class NetworkSettings(_Section):
    """``sandbox.network``: which hosts sandboxed commands may reach through the proxy.
    Patterns: ``example.org``, ``*.example.org`` (subdomains), either with ``:port``
    (``tether.network.hosts``). A denied host wins; a host in neither list is asked about
    (``Network(domain:…)`` permission rules count too)."""

    allowed_domains: list[HostPattern] = Field(default_factory=lambda: list[str]())
    denied_domains: list[HostPattern] = Field(default_factory=lambda: list[str]())


class SandboxSettings(_Section):
    enabled: bool = True
    allow_network: bool = False
    """Every host, directly (no proxy, no questions)."""
    network: NetworkSettings = Field(default_factory=lambda: NetworkSettings())
    writable_paths: list[str] = Field(default_factory=lambda: list[str]())
    git_writable: bool = True
    """Let sandboxed commands write git objects, refs, the index and logs (``git add``,
    ``commit``, ``branch``); config, hooks and the rest git runs stay read-only. False
    keeps every git directory read-only."""
    hide_home: bool = True
    """The home directory is unreadable in the sandbox, except the workspace, toolchains
    (``~/.cargo``, ``~/.nvm``, ``~/.gitconfig``…) and ``readablePaths``."""
    readable_paths: list[str] = Field(default_factory=lambda: list[str]())
    """Paths shell commands may read although hidden (in the home directory, or on the
    sensitive list: naming a sensitive path here exposes it)."""
    hidden_paths: list[str] = Field(default_factory=lambda: list[str]())
    """More sensitive paths to hide, besides the built-in list (``~/.ssh``, ``~/.aws``,
    cloud and registry credentials, shell histories, browser profiles…)."""


class HookCommand(_Section):
    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float | None = Field(default=None, gt=0)
    """Seconds; the event's default when absent."""


class HookMatcher(_Section):
    matcher: str | None = None
    hooks: list[HookCommand] = Field(default_factory=lambda: list[HookCommand]())


class ContextSettings(_Section):
    """The compaction ladder's knobs (token thresholds default from the model's window)."""

    auto_compact: bool = True
    auto_compact_threshold: int | None = None
    warning_threshold: int | None = None
    tool_result_max_chars: int = 40_000
    microcompact_keep: int = 3


class ModelLimitSettings(_Section):
    """``modelOptions``: override what Tether knows or discovers about the model."""

    context_window: int | None = Field(default=None, gt=0)
    """Tokens; overrides the model table and what an OpenAI-compatible server reports."""
    max_output_tokens: int | None = Field(default=None, gt=0)
    thinking: Literal["auto", "adaptive", "enabled", "off"] = "auto"
    """auto: on where the model supports it (adaptive, or a budget on older models)."""
    thinking_budget: int = Field(default=10_000, ge=1024)
    context1m: bool = False
    """Ask for the 1M-token window on models that offer it through the context-1m beta."""


class Settings(_Section):
    model: str | None = None
    model_options: ModelLimitSettings = Field(default_factory=lambda: ModelLimitSettings())
    context: ContextSettings = Field(default_factory=lambda: ContextSettings())
    permissions: PermissionSettings = Field(default_factory=lambda: PermissionSettings())
    sandbox: SandboxSettings = Field(default_factory=lambda: SandboxSettings())
    max_turns: int | None = None
    max_budget_usd: float | None = None
    env: dict[str, str] = Field(default_factory=lambda: dict[str, str]())
    hooks: dict[HookEvent, list[HookMatcher]] = Field(
        default_factory=lambda: dict[HookEvent, list[HookMatcher]]()
    )
    mcp_servers: dict[str, Any] = Field(default_factory=lambda: dict[str, Any]())
    api_key_helper: str | None = None
    daemon_idle_timeout: float | None = Field(default=None, gt=0)
    """Seconds the warm daemon stays up with no client and no session (user settings only;
    ``$TETHER_DAEMON_IDLE_S`` and ``tether daemon run --idle-timeout`` win)."""


LIST_KEYS = {
    ("permissions", "allow"),
    ("permissions", "ask"),
    ("permissions", "deny"),
    ("permissions", "additionalDirectories"),
    ("sandbox", "writablePaths"),
    ("sandbox", "readablePaths"),
    ("sandbox", "hiddenPaths"),
    ("sandbox", "network", "allowedDomains"),
    ("sandbox", "network", "deniedDomains"),
    *(("hooks", event) for event in HOOK_EVENTS),
}


def unknown_keys(data: dict[str, Any], model: type[BaseModel] = Settings) -> list[str]:
    """Dotted names of keys no field reads (typos deserve a warning, not silence)."""
    found: list[str] = []
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    names = set(fields) | set(model.model_fields)
    for key, value in data.items():
        if key not in names:
            found.append(key)
            continue
        field = fields.get(key) or model.model_fields[key]
        sub = field.annotation
        if isinstance(value, dict) and isinstance(sub, type) and issubclass(sub, _Section):
            found += [f"{key}.{k}" for k in unknown_keys(value, sub)]  # pyright: ignore[reportUnknownArgumentType]
    return found
