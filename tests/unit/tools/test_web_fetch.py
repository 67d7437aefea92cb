"""WebFetch against a local web server: HTML to Markdown, redirects, caps, errors, the cache,
the small model, and permission by domain."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from tether.errors import ModelError
from tether.permissions.policy import RuleSet, decide, suggest_rule
from tether.permissions.rules import Rule
from tether.testing.fake_web import FakeWebServer
from tether.tools.base import ToolResult
from tether.tools.context import ToolContext
from tether.tools.web_fetch import WEB_FETCH_TOOL
from tether.web.cache import TtlCache
from tether.web.fetch import normalize_url
from tether.web.page import Page

Run = Callable[..., Awaitable[ToolResult]]
DOCS = (Path(__file__).resolve().parents[2] / "fixtures" / "web" / "docs.html").read_bytes()


@pytest.fixture
def web() -> Iterator[FakeWebServer]:
    with FakeWebServer({"/docs.html": DOCS}, big_bytes=50_000, slow_s=5.0) as server:
        yield server


@pytest.fixture
def fetch_ctx(ctx: ToolContext) -> ToolContext:
    ctx.config.web_fetch_max_bytes = 20_000
    ctx.config.web_fetch_timeout_s = 0.5
    return ctx


class RecordingModel:
    """Stands in for the provider's small model where only the prompt it gets matters."""

    model = "small-test-model"

    def __init__(self, reply: str = "The default speed is 42 rpm.", fail: bool = False) -> None:
        self.reply = reply
        self.fail = fail
        self.prompts: list[tuple[str, str]] = []

    async def answer(self, system: str, prompt: str) -> str:
        self.prompts.append((system, prompt))
        if self.fail:
            raise ModelError("overloaded")
        return self.reply


async def fetch(
    run: Run, ctx: ToolContext, url: str, prompt: str = "What is the default speed?"
) -> ToolResult:
    return await run(WEB_FETCH_TOOL, {"url": url, "prompt": prompt}, ctx)


async def test_html_becomes_markdown_without_scripts(
    run: Run, fetch_ctx: ToolContext, web: FakeWebServer
) -> None:
    result = await fetch(run, fetch_ctx, web.url("/docs.html"))
    text = str(result.content)
    assert not result.is_error, text
    assert "# Widget API" in text and "## Options" in text
    assert "`widget.spin(speed)`" in text and "**42**" in text
    assert "[changelog](https://example.org/changelog)" in text
    assert "Café & résumé" in text
    assert "tracking-code" not in text and "font-family" not in text
    assert "no small model" in text  # none configured: the page itself, capped


async def test_small_model_answers_the_prompt(
    run: Run, fetch_ctx: ToolContext, web: FakeWebServer
) -> None:
    model = RecordingModel()
    fetch_ctx.config.small_model = model
    result = await fetch(run, fetch_ctx, web.url("/docs.html"))
    assert result.content == "The default speed is 42 rpm."
    ((system, prompt),) = model.prompts
    assert "only the page content" in system
    assert "# Widget API" in prompt and prompt.rstrip().endswith("What is the default speed?")
    failing = RecordingModel(fail=True)
    fetch_ctx.config.small_model = failing
    fallback = await fetch(run, fetch_ctx, web.url("/docs.html"), "other question")
    assert not fallback.is_error and "could not answer (overloaded)" in str(fallback.content)
    assert "# Widget API" in str(fallback.content)


async def test_pages_are_cached(run: Run, fetch_ctx: ToolContext, web: FakeWebServer) -> None:
    await fetch(run, fetch_ctx, web.url("/docs.html"))
    await fetch(run, fetch_ctx, web.url("/docs.html"), "Another question")
    assert web.hits.count("/docs.html") == 1
    clock = [0.0]
    cache = TtlCache[Page](clock=lambda: clock[0])
    cache.put("k", Page("u", 200, "text/plain", "t", 1))
    clock[0] = 15 * 60 - 1
    assert cache.get("k") is not None
    clock[0] = 15 * 60 + 1
    assert cache.get("k") is None  # expired after 15 minutes


async def test_same_host_redirect_is_followed(
    run: Run, fetch_ctx: ToolContext, web: FakeWebServer
) -> None:
    result = await fetch(run, fetch_ctx, web.url("/moved"))
    assert not result.is_error and "# Widget API" in str(result.content)
    assert web.hits == ["/moved", "/docs.html"]


async def test_cross_host_redirect_is_reported_not_followed(
    run: Run, fetch_ctx: ToolContext, web: FakeWebServer
) -> None:
    result = await fetch(run, fetch_ctx, web.url("/elsewhere"))
    text = str(result.content)
    assert not result.is_error
    assert "redirects to another host" in text
    assert f"Redirect URL: http://localhost:{web.port}/docs.html" in text
    assert web.hits == ["/elsewhere"]  # the other host was not contacted


async def test_oversize_bodies_are_refused(
    run: Run, fetch_ctx: ToolContext, web: FakeWebServer
) -> None:
    declared = await fetch(run, fetch_ctx, web.url("/big"))
    assert declared.is_error and "50000 bytes, more than the 20000" in str(declared.content)
    streamed = await fetch(run, fetch_ctx, web.url("/big-chunked"))
    assert streamed.is_error and "larger than the 20000 bytes" in str(streamed.content)


async def test_timeout_offline_and_http_errors(
    run: Run, fetch_ctx: ToolContext, web: FakeWebServer
) -> None:
    slow = await fetch(run, fetch_ctx, web.url("/slow"))
    assert slow.is_error and "did not answer within 0.5 seconds" in str(slow.content)
    missing = await fetch(run, fetch_ctx, web.url("/nothing"))
    assert missing.is_error and "HTTP 404" in str(missing.content)
    refused = await fetch(run, fetch_ctx, web.url("/private"))
    assert refused.is_error and "HTTP 403" in str(refused.content)
    binary = await fetch(run, fetch_ctx, web.url("/picture.png"))
    assert binary.is_error and "image/png, not a text page" in str(binary.content)
    offline = await fetch(run, fetch_ctx, "http://127.0.0.1:9/anything")
    assert offline.is_error and "Could not connect to 127.0.0.1" in str(offline.content)


def test_url_rules() -> None:
    assert str(normalize_url("http://example.com/a?b=1")) == "https://example.com/a?b=1"
    assert str(normalize_url("http://localhost:8000/x")) == "http://localhost:8000/x"
    assert str(normalize_url("http://127.0.0.1:8000/x")).startswith("http://127.0.0.1")
    assert str(normalize_url("http://[::1]:8000/x")).startswith("http://[::1]")


async def test_invalid_urls_fail_validation(ctx: ToolContext) -> None:
    for url, why in [
        ("ftp://example.com/x", "Only http and https"),
        ("https://user:pw@example.com/", "user name or password"),
        ("not a url", "Only http and https"),
    ]:
        inp = WEB_FETCH_TOOL.input_model(url=url, prompt="p")
        problem = await WEB_FETCH_TOOL.validate(inp, ctx)
        assert problem is not None and why in problem, (url, problem)


async def test_permission_is_per_domain(ctx: ToolContext) -> None:
    inp = WEB_FETCH_TOOL.input_model(url="https://docs.example.com/page", prompt="p")
    asked = await decide(WEB_FETCH_TOOL, inp, ctx, RuleSet())
    assert asked.behavior == "ask"
    assert suggest_rule(WEB_FETCH_TOOL, inp, ctx) == "WebFetch(domain:docs.example.com)"
    allowed = RuleSet(allow=[Rule.parse("WebFetch(domain:*.example.com)")])
    assert (await decide(WEB_FETCH_TOOL, inp, ctx, allowed)).behavior == "allow"
    other = WEB_FETCH_TOOL.input_model(url="https://example.net/", prompt="p")
    assert (await decide(WEB_FETCH_TOOL, other, ctx, allowed)).behavior == "ask"
    denied = RuleSet(deny=[Rule.parse("WebFetch(domain:docs.example.com)")])
    assert (await decide(WEB_FETCH_TOOL, inp, ctx, denied)).behavior == "deny"
    assert WEB_FETCH_TOOL.is_read_only(inp) and WEB_FETCH_TOOL.kind == "fetch"
