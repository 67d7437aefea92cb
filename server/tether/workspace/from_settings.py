"""What the settings and the wire say, in the terms of the parts a workspace builds: model
options and providers, compaction settings, token usage."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tether.context.compaction import CompactionSettings
from tether.protocol.updates import Usage
from tether.providers.base import Provider, TokenUsage
from tether.providers.models import ModelOptions
from tether.providers.patience import Patience
from tether.providers.registry import create_provider, parse_model_spec
from tether.providers.windows import WindowBook
from tether.settings.model import ContextSettings, Settings


def default_provider_factory(
    model: str | None,
    root: Path,
    options: ModelOptions | None = None,
    env: Mapping[str, str] | None = None,
    windows: WindowBook | None = None,
) -> Provider:
    """``env``: the caller's variables the provider is built with (None: this process's);
    ``windows``: the context windows learned from refusals (kept in the data directory)."""
    return create_provider(parse_model_spec(model, cwd=root, env=env), options, env, windows)


def model_options(settings: Settings) -> ModelOptions:
    """The settings' model overrides (``--thinking`` arrives as a settings override)."""
    o = settings.model_options
    return ModelOptions(
        context_window=o.context_window,
        max_output_tokens=o.max_output_tokens,
        thinking=o.thinking,
        thinking_budget=o.thinking_budget,
        context_1m=o.context1m,
        api_key_helper=settings.api_key_helper,
        patience=Patience.read(settings.env),
    )


def compaction_settings(context: ContextSettings) -> CompactionSettings:
    return CompactionSettings(
        auto=context.auto_compact,
        auto_threshold=context.auto_compact_threshold,
        warning_threshold=context.warning_threshold,
        tool_result_max_chars=context.tool_result_max_chars,
        microcompact_keep=context.microcompact_keep,
    )


def token_usage(usage: Usage) -> TokenUsage:
    return TokenUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_creation_tokens=usage.cache_creation_tokens,
    )
