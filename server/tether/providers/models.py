"""What each model can take and give: context window, output limits, thinking.

Anthropic models come from a table shipped as package data (``models.json``), matched by the
longest id prefix, so dated ids (``claude-sonnet-4-5-20250929``) and aliases both resolve.
OpenAI-compatible servers report their own window (``providers/discovery.py``). Settings
override both (``ModelOptions``).

Output limits: requests ask for ``default_output`` tokens (capped at 32k like Claude Code's
default); a reply cut off there is retried once with ``max_output``, the model's own limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any, Literal, cast

from tether.providers.patience import Patience

ThinkingKind = Literal["adaptive", "enabled", "none"]
ThinkingSetting = Literal["auto", "adaptive", "enabled", "off"]
DEFAULT_OUTPUT_CAP = 32_000
DEFAULT_THINKING_BUDGET = 10_000
MIN_THINKING_BUDGET = 1_024
"""The API rejects a smaller ``budget_tokens``."""


@dataclass(frozen=True)
class ModelLimits:
    window: int
    max_output: int
    default_output: int
    thinking: ThinkingKind = "none"
    window_1m: int | None = None
    """The larger window the context-1m beta unlocks, where the model has one."""
    window_setting: str = ""
    """What gives the model a larger window where it is served ("": nothing does)."""
    learned: str = ""
    """When and from which refusal ``window`` was learned, and how to forget it ("": it
    was not learned)."""
    refuses_over_window: bool = False
    """The server refuses a prompt over the window rather than cutting it, and may leave
    cached tokens out of its prompt count: a count below what was sent is no cut."""


@dataclass(frozen=True)
class ModelOptions:
    """The user's choices (settings ``model*`` keys and ``--thinking``); None: the model's."""

    context_window: int | None = None
    max_output_tokens: int | None = None
    thinking: ThinkingSetting = "auto"
    thinking_budget: int = DEFAULT_THINKING_BUDGET
    context_1m: bool = False
    api_key_helper: str | None = None
    patience: Patience = field(default_factory=Patience)
    """The waits the settings' ``env`` sets (over the caller's environment)."""


@cache
def _table() -> dict[str, Any]:
    text = resources.files("tether.providers").joinpath("models.json").read_text("utf-8")
    return cast("dict[str, Any]", json.loads(text))


def _limits(entry: dict[str, Any], default: dict[str, Any]) -> ModelLimits:
    merged = {**default, **entry}
    max_output = int(merged["max_output"])
    return ModelLimits(
        window=int(merged["window"]),
        max_output=max_output,
        default_output=min(int(merged.get("default_output", max_output)), DEFAULT_OUTPUT_CAP),
        thinking=cast("ThinkingKind", merged.get("thinking", "none")),
        window_1m=int(merged["window_1m"]) if merged.get("window_1m") else None,
    )


def anthropic_limits(model: str) -> ModelLimits:
    """The table's row for ``model`` (longest matching prefix), else the default row."""
    table = _table()
    models = cast("dict[str, dict[str, Any]]", table["models"])
    default = cast("dict[str, Any]", table["default"])
    matches = [prefix for prefix in models if model.startswith(prefix)]
    if not matches:
        return _limits({}, default)
    return _limits(models[max(matches, key=len)], default)


def effective_limits(limits: ModelLimits, options: ModelOptions) -> ModelLimits:
    """Apply the user's overrides to a model's limits."""
    window = limits.window
    if options.context_1m and limits.window_1m:
        window = limits.window_1m
    if options.context_window:
        window = options.context_window
    max_output = options.max_output_tokens or limits.max_output
    default_output = min(limits.default_output, max_output)
    return replace(limits, window=window, max_output=max_output, default_output=default_output)


def thinking_kind(limits: ModelLimits, setting: ThinkingSetting) -> ThinkingKind:
    """What to send: ``auto`` follows the model; a model without thinking gets none."""
    if setting == "off" or limits.thinking == "none":
        return "none"
    if setting == "auto":
        return limits.thinking
    if setting == "adaptive" and limits.thinking != "adaptive":
        return "enabled"  # the model only takes a budget
    return setting
