"""What the user and the server decide about a model: per-model windows and output limits
from the table, the 1M window through its beta, thinking by default and by setting, window
discovery on OpenAI-compatible servers, and apiKeyHelper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from providers_support import collect, make_request

from tether.errors import ModelError
from tether.providers.anthropic import AnthropicProvider
from tether.providers.models import ModelOptions, anthropic_limits
from tether.providers.openai_compat import FALLBACK_WINDOW, OpenAICompatProvider
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer

OK = [{"type": "text", "text": "ok"}]


def test_the_table_by_longest_prefix() -> None:
    assert anthropic_limits("claude-sonnet-4-6").window == 1_000_000
    assert anthropic_limits("claude-sonnet-4-5-20250929").window == 200_000
    assert anthropic_limits("claude-sonnet-4-5-20250929").max_output == 64_000
    assert anthropic_limits("claude-sonnet-4-20250514").thinking == "enabled"
    assert anthropic_limits("claude-opus-4-1-20250805").max_output == 32_000
    assert anthropic_limits("claude-3-5-haiku-20241022").thinking == "none"
    assert anthropic_limits("claude-3-5-haiku-20241022").default_output == 8_192
    assert anthropic_limits("claude-unknown").window == 200_000


async def provider_request(
    model: str, options: ModelOptions
) -> tuple[dict[str, Any], dict[str, str]]:
    with FakeAnthropicServer([OK]) as server:
        provider = AnthropicProvider(model, api_key="k", base_url=server.base_url, options=options)
        try:
            await collect(provider.stream(make_request(model=model)))
        finally:
            await provider.aclose()
        server.assert_complete()
        return server.requests[0], server.request_headers[0]


async def test_thinking_on_by_default_adaptive_or_budgeted() -> None:
    body, headers = await provider_request("claude-sonnet-4-6", ModelOptions())
    assert body["thinking"] == {"type": "adaptive"}
    assert "anthropic-beta" not in headers  # adaptive thinking interleaves by itself
    body, headers = await provider_request("claude-sonnet-4-5", ModelOptions(thinking_budget=4000))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert "interleaved-thinking-2025-05-14" in headers["anthropic-beta"]


async def test_thinking_off_and_models_without_it() -> None:
    body, _ = await provider_request("claude-sonnet-4-6", ModelOptions(thinking="off"))
    assert "thinking" not in body
    body, _ = await provider_request("claude-3-5-haiku-20241022", ModelOptions())
    assert "thinking" not in body


async def test_one_million_window_through_the_beta() -> None:
    options = ModelOptions(context_1m=True)
    provider = AnthropicProvider("claude-sonnet-4-5", api_key="k", options=options)
    assert provider.context_window == 1_000_000
    _, headers = await provider_request("claude-sonnet-4-5", options)
    assert "context-1m-2025-08-07" in headers["anthropic-beta"]
    assert AnthropicProvider("claude-sonnet-4-5", api_key="k").context_window == 200_000
    # A setting overrides the table either way.
    assert (
        AnthropicProvider(
            "claude-sonnet-4-6", options=ModelOptions(context_window=20_000)
        ).context_window
        == 20_000
    )


async def test_vllm_window_is_read_from_the_server() -> None:
    with FakeOpenAIServer([OK], context_window=8_192, served_model="qwen") as server:
        provider = OpenAICompatProvider("qwen", base_url=server.base_url)
        assert provider.context_window == FALLBACK_WINDOW  # not asked yet
        await collect(provider.stream(make_request(model="qwen")))
        assert provider.context_window == 8_192
        await provider.aclose()
        server.assert_complete()


async def test_ollama_window_from_api_show_and_settings_override() -> None:
    with FakeOpenAIServer(
        [OK, OK], context_window=16_384, flavor="ollama", served_model="qwen"
    ) as server:
        provider = OpenAICompatProvider("qwen", base_url=server.base_url)
        await collect(provider.stream(make_request(model="qwen")))
        assert provider.context_window == 16_384
        await provider.aclose()
        fixed = OpenAICompatProvider(
            "qwen", base_url=server.base_url, options=ModelOptions(context_window=4_096)
        )
        await collect(fixed.stream(make_request(model="qwen")))
        assert fixed.context_window == 4_096
        await fixed.aclose()
        server.assert_complete()


async def test_api_key_helper_keys_both_headers_and_is_asked_again_after_401(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls"
    # A secret store that rotated: the first key it hands out is already revoked.
    helper = f"if [ -f {calls} ]; then echo new-key; else echo old-key; fi; echo x >> {calls}"
    with FakeAnthropicServer([OK], api_keys={"new-key"}) as server:
        provider = AnthropicProvider(
            "claude-sonnet-4-6",
            base_url=server.base_url,
            options=ModelOptions(api_key_helper=helper),
        )
        try:
            events = await collect(provider.stream(make_request()))
        finally:
            await provider.aclose()
        server_rejected = [e.status for e in server.rejected]
        headers = server.request_headers
    assert server_rejected == [401]
    assert events[-1].message.text == "ok"  # type: ignore[union-attr]
    assert calls.read_text() == "x\nx\n"  # asked once, then again after the 401
    assert headers[0]["x-api-key"] == "old-key"
    assert headers[-1]["x-api-key"] == "new-key"
    assert headers[-1]["authorization"] == "Bearer new-key"


async def test_a_failing_api_key_helper_stops_with_its_error(tmp_path: Path) -> None:
    with FakeAnthropicServer([OK]) as server:
        options = ModelOptions(api_key_helper="echo 'vault is sealed' >&2; exit 3")
        provider = AnthropicProvider("claude-sonnet-4-6", base_url=server.base_url, options=options)
        with pytest.raises(ModelError, match=r"apiKeyHelper .* failed: vault is sealed"):
            await collect(provider.stream(make_request()))
        await provider.aclose()
        assert server.requests == []  # no request went out without a key
