"""Which model a run uses, and what chose it: the command line, a settings file, or the
environment. Error messages and ``tether doctor`` name that origin, so a user fixes the
setting that is actually in force (not ``ANTHROPIC_BASE_URL`` when a settings file chose a
local server)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tether.providers.registry import ANTHROPIC_DEFAULT_URL, ModelSpec, parse_model_spec


@dataclass(frozen=True)
class ModelChoice:
    spec: ModelSpec
    chosen_by: str
    """What named the model: ``--model``, ``model in <settings file>``, ``ANTHROPIC_MODEL``,
    or the default (an Anthropic key is set)."""
    endpoint: str | None
    """The URL requests go to (None: a scripted model)."""
    endpoint_chosen_by: str | None
    """What set that URL (None: the provider's own default, Anthropic's API)."""


def choose_model(
    model: str | None,
    chosen_by: str | None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> ModelChoice:
    """Resolve ``model`` (None: the default) as ``parse_model_spec`` does, keeping what chose
    it (``chosen_by``: where ``model`` came from). Raises ``ConfigError`` as it does."""
    environ = os.environ if env is None else env
    spec = parse_model_spec(model, cwd=cwd, env=env)
    if not model:
        chosen_by = "ANTHROPIC_MODEL" if environ.get("ANTHROPIC_MODEL") else None
        chosen_by = chosen_by or f"the default ({_anthropic_credential(environ)} is set)"
    origin = chosen_by or "the model setting"
    if spec.provider == "scripted":
        return ModelChoice(spec, origin, None, None)
    if spec.provider == "openai":
        assert spec.base_url is not None
        by_url = model is not None and "@" in model.partition(":")[2]
        return ModelChoice(spec, origin, spec.base_url, origin if by_url else "OPENAI_BASE_URL")
    if spec.provider == "ollama":
        assert spec.base_url is not None
        by_url = model is not None and "@" in model.partition(":")[2]
        url_by = origin if by_url else "OLLAMA_HOST" if environ.get("OLLAMA_HOST") else None
        return ModelChoice(spec, origin, spec.base_url, url_by)
    base = environ.get("ANTHROPIC_BASE_URL")
    if base:
        return ModelChoice(spec, origin, base, "ANTHROPIC_BASE_URL")
    return ModelChoice(spec, origin, ANTHROPIC_DEFAULT_URL, None)


def _anthropic_credential(env: Mapping[str, str]) -> str:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        if env.get(name):
            return name
    return "ANTHROPIC_API_KEY"
