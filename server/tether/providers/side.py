"""Side questions to a provider's small, fast model (Claude Code's "small fast model").

WebFetch uses it to answer a prompt about a page without spending the main model's context.
Anthropic has one (Haiku, or ``ANTHROPIC_SMALL_FAST_MODEL``/``ANTHROPIC_DEFAULT_HAIKU_MODEL``);
requests go through the session's own provider (same client, credentials and retries) with
the model swapped. OpenAI-compatible servers usually serve one model, and the scripted
provider none: they get no small model, and the tools fall back to doing without.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tether.core.messages import user_text
from tether.errors import ModelError
from tether.providers.base import Completed, ModelRequest, Provider, SystemBlock
from tether.providers.registry import MODEL_ALIASES, resolve_alias

DEFAULT_SMALL_ANTHROPIC_MODEL = MODEL_ALIASES["haiku"][0]
"""The model ``haiku`` stands for: the small model follows the alias users type."""
SIDE_MAX_TOKENS = 4096


def small_anthropic_model(env: Mapping[str, str] | None = None) -> str:
    """``env``: the caller's variables (the warm daemon serves several); None: this
    process's."""
    environ = os.environ if env is None else env
    value = environ.get("ANTHROPIC_SMALL_FAST_MODEL", "").strip()
    return value or resolve_alias("haiku", env)  # ANTHROPIC_DEFAULT_HAIKU_MODEL retargets it


class SideModel:
    """One-shot questions, no tools, no history."""

    def __init__(self, provider: Provider, model: str, max_tokens: int = SIDE_MAX_TOKENS) -> None:
        self._provider = provider
        self._model = model
        self._max_tokens = max_tokens

    @property
    def model(self) -> str:
        return self._model

    async def answer(self, system: str, prompt: str) -> str:
        request = ModelRequest(
            model=self._model,
            system=[SystemBlock(system)],
            messages=[user_text(prompt)],
            tools=[],
            max_tokens=self._max_tokens,
            cache_history=False,
            # A one-shot answer from a small model: no thinking (the session's thinking
            # settings are the main model's, and the small one may not take them).
            thinking=False,
        )
        async for event in self._provider.stream(request):
            if isinstance(event, Completed):
                return event.message.text
        raise ModelError("the small model's stream ended without a reply")


def small_model_for(provider: Provider, env: Mapping[str, str] | None = None) -> SideModel | None:
    if provider.name != "anthropic":
        return None
    return SideModel(provider, small_anthropic_model(env))
