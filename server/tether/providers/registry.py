"""Choose a provider from a model spec: ``anthropic:<model>``, ``openai:<model>@<base-url>``,
``ollama:<model>[@<root-url>]`` (Ollama's native API), ``scripted:<path>``; a bare Claude
model id (``claude-...``) or an alias users type (``sonnet``, ``opus``, ``haiku``) means
Anthropic."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from tether.errors import ConfigError
from tether.providers.base import Provider
from tether.providers.models import ModelOptions
from tether.providers.windows import WindowBook

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
ProviderName = Literal["anthropic", "openai", "ollama", "scripted"]
MODEL_ALIASES: dict[str, tuple[str, str]] = {
    "sonnet": ("claude-sonnet-5-5", "ANTHROPIC_DEFAULT_SONNET_MODEL"),
    "opus": ("claude-opus-5-5", "ANTHROPIC_DEFAULT_OPUS_MODEL"),
    "haiku": ("claude-haiku-5-5", "ANTHROPIC_DEFAULT_HAIKU_MODEL"),
}
"""Alias -> (current model id, the variable that overrides it), as Claude Code resolves
them (measured against Claude Code 2.1.332)."""

MODEL_FORMS = (
    "an alias (sonnet, opus, haiku), a Claude model id (claude-...), anthropic:<model>, "
    "openai:<model>@<base-url>, ollama:<model> or scripted:<script.json>"
)


def resolve_alias(name: str, env: Mapping[str, str] | None = None) -> str:
    """The model id an alias stands for (``ANTHROPIC_DEFAULT_*_MODEL`` wins); other names
    are returned as they are. ``env``: the caller's variables (None: this process's)."""
    found = MODEL_ALIASES.get(name.strip().lower())
    if found is None:
        return name
    model, variable = found
    return (os.environ if env is None else env).get(variable) or model


@dataclass(frozen=True)
class ModelSpec:
    provider: ProviderName
    model: str
    base_url: str | None = None
    path: Path | None = None

    def __str__(self) -> str:
        if self.provider == "scripted":
            return f"scripted:{self.path}"
        if self.provider in ("openai", "ollama"):
            return f"{self.provider}:{self.model}@{self.base_url}"
        return f"anthropic:{self.model}"


def parse_model_spec(
    spec: str | None, *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> ModelSpec:
    """Parse a model spec; ``None`` picks Anthropic when ANTHROPIC_API_KEY (or a token or
    base URL) is set, and otherwise explains how to choose a model. ``env``: the caller's
    variables (the warm daemon serves several callers); None: this process's."""
    environ = os.environ if env is None else env
    if not spec:
        if any(
            environ.get(k)
            for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
        ):
            model = environ.get("ANTHROPIC_MODEL") or DEFAULT_ANTHROPIC_MODEL
            return ModelSpec("anthropic", resolve_alias(model, env))
        raise ConfigError(
            "No model is configured. Set ANTHROPIC_API_KEY, or pass --model "
            "(anthropic:<model>, ollama:<model>, openai:<model>@<base-url> for vLLM/llama.cpp/"
            "LM Studio, or scripted:<script.json>). Try `tether demo` for an offline run."
        )
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in ("anthropic", "openai", "ollama", "scripted"):
        model = resolve_alias(spec, env)
        if not model.startswith("claude"):
            raise ConfigError(f"unknown model {spec!r}: use {MODEL_FORMS}")
        return ModelSpec("anthropic", model)
    if kind == "scripted":
        if not rest:
            raise ConfigError("scripted: needs a path, e.g. scripted:turns.json")
        path = Path(rest).expanduser()
        if not path.is_absolute() and cwd is not None:
            path = cwd / path
        return ModelSpec("scripted", path.name, path=path)
    if kind == "openai":
        model, at, base_url = rest.partition("@")
        if not model:
            raise ConfigError(
                "openai: needs a model name, e.g. openai:qwen2.5-coder@http://localhost:11434/v1"
            )
        base = base_url if at else environ.get("OPENAI_BASE_URL")
        if not base:
            raise ConfigError(
                f"openai:{model} needs a base URL: openai:{model}@http://localhost:11434/v1 "
                "(or set OPENAI_BASE_URL)"
            )
        url = urlsplit(base)
        if url.scheme not in ("http", "https") or not url.netloc:
            where = f"in openai:{model}@…" if at else "in OPENAI_BASE_URL"
            raise ConfigError(
                f"the base URL {base!r} ({where}) is not an http:// or https:// URL: write it "
                "whole, e.g. http://localhost:11434/v1"
            )
        return ModelSpec("openai", model, base_url=base)
    if kind == "ollama":
        return _ollama_spec(rest, environ)
    if not rest:
        raise ConfigError("anthropic: needs a model name, e.g. anthropic:claude-sonnet-4-6")
    return ModelSpec("anthropic", resolve_alias(rest, env))


def _ollama_spec(rest: str, environ: Mapping[str, str]) -> ModelSpec:
    """``ollama:<model>[@<root-url>]``. A model name has a tag after a colon
    (``qwen2.5-coder:14b``), so the URL is whatever follows the last ``@``; without one,
    ``OLLAMA_HOST``; either read as Ollama's own CLI reads ``OLLAMA_HOST`` (unset: local)."""
    model, at, base_url = rest.rpartition("@") if "@" in rest else (rest, "", "")
    if not model:
        raise ConfigError("ollama: needs a model name, e.g. ollama:qwen2.5-coder:14b")
    # Written as OLLAMA_HOST is (``gpu-box:11434`` is http://gpu-box:11434), or whole.
    base = ollama_host(base_url if at else environ.get("OLLAMA_HOST"))
    url = urlsplit(base)
    if url.scheme not in ("http", "https") or not url.netloc:
        where = f"in ollama:{model}@…" if at else "in OLLAMA_HOST"
        raise ConfigError(
            f"the URL {base!r} ({where}) is not an http:// or https:// URL: write it whole, "
            "e.g. http://localhost:11434"
        )
    # Ollama's root; its OpenAI-compatible /v1 beside it is the same server.
    return ModelSpec("ollama", model, base_url=base.rstrip("/").removesuffix("/v1"))


def ollama_host(value: str | None) -> str:
    """The URL ``OLLAMA_HOST`` means to Ollama's own client (``envconfig.ConnectableHost``):
    ``http`` and port 11434 unless it names them (a scheme without a port: 80 or 443;
    ``ollama.com``: https); a bind-all address (``0.0.0.0``, ``::``) is the loopback one."""
    value = (value or "").strip()
    scheme, sep, hostport = value.partition("://")
    port = "11434"
    if not sep:
        scheme, hostport = "http", value
        if value == "ollama.com":
            scheme, hostport = "https", "ollama.com:443"
    elif scheme in ("http", "https"):
        port = "80" if scheme == "http" else "443"
    hostport, slash, path = hostport.partition("/")
    split = urlsplit(f"//{hostport}")
    try:
        named_port = split.port
    except ValueError:  # not a port number: the default, as Ollama's client does
        named_port = None
    host = split.hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1" if host == "0.0.0.0" else "::1"
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{named_port or port}" + (f"/{path}" if slash and path else "")


ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"


def create_provider(
    spec: ModelSpec,
    options: ModelOptions | None = None,
    env: Mapping[str, str] | None = None,
    windows: WindowBook | None = None,
) -> Provider:
    """Instantiate the provider (SDK imports happen lazily inside the provider); ``options``
    are the user's window, output and thinking choices. With ``env`` (a caller's variables)
    the key, base URL, proxies and CA certificates come from there and nowhere else: the
    SDKs would otherwise read this process's environment, which in the warm daemon belongs
    to nobody in particular. ``windows``: where windows learned from refusals are kept."""
    options = options or ModelOptions()
    if spec.provider == "scripted":
        from tether.providers.scripted import ScriptedProvider

        assert spec.path is not None
        if not spec.path.is_file():
            raise ConfigError(f"script not found: {spec.path}")
        return ScriptedProvider.from_file(spec.path, context_window=options.context_window)
    if spec.provider == "openai":
        from tether.providers.openai_compat import OpenAICompatProvider

        assert spec.base_url is not None
        if env is None:
            return OpenAICompatProvider(
                spec.model, base_url=spec.base_url, options=options, windows=windows
            )
        return OpenAICompatProvider(
            spec.model,
            base_url=spec.base_url,
            api_key=env.get("OPENAI_API_KEY") or "not-needed",
            options=options,
            caller_env=env,
            windows=windows,
        )
    if spec.provider == "ollama":
        from tether.providers.ollama import OllamaProvider

        assert spec.base_url is not None
        if env is None:
            return OllamaProvider(
                spec.model, base_url=spec.base_url, options=options, windows=windows
            )
        return OllamaProvider(
            spec.model,
            base_url=spec.base_url,
            api_key=env.get("OLLAMA_API_KEY") or None,
            options=options,
            caller_env=env,
            windows=windows,
        )
    from tether.providers.anthropic import AnthropicProvider

    if env is None:
        return AnthropicProvider(spec.model, options=options, windows=windows)
    key = env.get("ANTHROPIC_API_KEY") or None
    return AnthropicProvider(
        spec.model,
        api_key=key,
        auth_token=None if key else env.get("ANTHROPIC_AUTH_TOKEN") or None,
        base_url=env.get("ANTHROPIC_BASE_URL") or ANTHROPIC_DEFAULT_URL,
        options=options,
        caller_env=env,
        windows=windows,
    )
