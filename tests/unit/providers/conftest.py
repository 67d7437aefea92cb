"""Fixtures for the provider tests: real SDKs against the fake servers, no network."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import tether  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "server"))

from tether.providers.anthropic import AnthropicProvider
from tether.providers.openai_compat import OpenAICompatProvider
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer
from tether.testing.sse import FakeModelServer

FAST = {"base_delay_s": 0.01, "max_delay_s": 0.05}
"""Backoff for tests: real sleeps, but tiny."""


def _servers(cls: type[FakeModelServer]) -> Iterator[Callable[..., Any]]:
    servers: list[FakeModelServer] = []

    def start(script: Any, **kwargs: Any) -> Any:
        server = cls(script, **kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def anthropic_server() -> Iterator[Callable[..., FakeAnthropicServer]]:
    """``anthropic_server(script)`` starts a fake Messages API, stopped after the test."""
    yield from _servers(FakeAnthropicServer)


@pytest.fixture
def openai_server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    yield from _servers(FakeOpenAIServer)


@pytest.fixture
async def anthropic_provider() -> AsyncIterator[Callable[..., AnthropicProvider]]:
    """``anthropic_provider(server, **options)``: a provider for that server, closed after."""
    providers: list[AnthropicProvider] = []

    def make(server: FakeModelServer, **options: Any) -> AnthropicProvider:
        kwargs = {"base_url": server.base_url, "api_key": "test-key", **FAST, **options}
        provider = AnthropicProvider("claude-sonnet-4-6", **kwargs)
        providers.append(provider)
        return provider

    yield make
    for provider in providers:
        await provider.aclose()


@pytest.fixture
async def openai_provider() -> AsyncIterator[Callable[..., OpenAICompatProvider]]:
    providers: list[OpenAICompatProvider] = []

    def make(server: FakeModelServer, **options: Any) -> OpenAICompatProvider:
        kwargs = {"base_url": server.base_url, **FAST, **options}
        provider = OpenAICompatProvider("qwen2.5-coder", **kwargs)
        providers.append(provider)
        return provider

    yield make
    for provider in providers:
        await provider.aclose()
