"""Test support shipped with the package: fake model API servers that play scripts.

``FakeAnthropicServer`` (Messages API), ``FakeOpenAIServer`` (chat completions) and
``FakeOllamaServer`` (Ollama's native ``/api/chat``) are real HTTP servers speaking the real
wire formats, so tests drive the official SDKs (and Tether's own Ollama client) end to end
with no network. Names are resolved lazily so that ``python -m tether.testing.fake_*``
does not import its own module twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.testing.fake_anthropic import FakeAnthropicServer
    from tether.testing.fake_ollama import FakeOllamaServer
    from tether.testing.fake_openai import FakeOpenAIServer

__all__ = ["FakeAnthropicServer", "FakeOllamaServer", "FakeOpenAIServer"]


def __getattr__(name: str) -> Any:
    if name == "FakeAnthropicServer":
        from tether.testing.fake_anthropic import FakeAnthropicServer

        return FakeAnthropicServer
    if name == "FakeOllamaServer":
        from tether.testing.fake_ollama import FakeOllamaServer

        return FakeOllamaServer
    if name == "FakeOpenAIServer":
        from tether.testing.fake_openai import FakeOpenAIServer

        return FakeOpenAIServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
