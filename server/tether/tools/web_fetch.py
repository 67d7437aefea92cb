"""WebFetch: fetch a page and answer ``prompt`` about it with the provider's small model.

The page comes from ``tether.web.fetch`` (its rules: https upgrade, same-host redirects,
size and time caps, HTML to Markdown) through a 15-minute cache. Without a small model the
model gets the capped Markdown itself. Permission is per domain: ``WebFetch(domain:host)``
rules decide, else the user is asked; the shell sandbox's network policy does not apply.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.errors import ModelError, ToolError
from tether.protocol.updates import Location
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import ToolContext
from tether.web.page import CrossHostRedirect, FetchError, Page

NAME = "WebFetch"


class WebFetchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, description="The URL to fetch (http or https).")
    prompt: str = Field(min_length=1, description="What to find out from the page.")


def host_of(url: str) -> str:
    from tether.web.fetch import normalize_url

    try:
        return normalize_url(url).host
    except FetchError:
        return url


async def _page(inp: WebFetchInput, ctx: ToolContext) -> Page | CrossHostRedirect:
    from tether.providers.network import NetworkSettings
    from tether.web.fetch import fetch, normalize_url

    key = str(normalize_url(inp.url))
    cached = ctx.config.web_cache.get(key)
    if cached is not None:
        return cached
    caller = ctx.config.caller_env
    found = await fetch(
        key,
        timeout_s=ctx.config.web_fetch_timeout_s,
        max_bytes=ctx.config.web_fetch_max_bytes,
        network=NetworkSettings.of(caller) if caller is not None else None,
    )
    if isinstance(found, Page):
        ctx.config.web_cache.put(key, found)
    return found


def _capped(page: Page, limit: int) -> str:
    if len(page.text) <= limit:
        return page.text
    cut = len(page.text) - limit
    return page.text[:limit] + f"\n\n[... the page continues for {cut} more characters]"


async def _call(inp: WebFetchInput, ctx: ToolContext) -> ToolResult:
    try:
        found = await _page(inp, ctx)
    except FetchError as e:
        raise ToolError(str(e))
    if isinstance(found, CrossHostRedirect):
        text = (
            f"The URL redirects to another host, which was not followed.\n"
            f"Original URL: {found.url}\nRedirect URL: {found.location}\nStatus: {found.status}\n"
            "To read it, call WebFetch again with the redirect URL and the same prompt."
        )
        return ToolResult(text, raw_output={"url": found.url, "redirect": found.location})
    content = _capped(found, ctx.config.web_fetch_max_chars)
    raw = {"url": found.url, "status": found.status, "bytes": found.size}
    model = ctx.config.small_model
    if model is None:
        text = (
            f"Content of {found.url} ({found.content_type}); no small model is available to "
            f"apply the prompt, so here is the page itself:\n\n{content}"
        )
        return ToolResult(text, raw_output=raw)
    question = prompts.render(
        "web/apply_prompt.md", url=found.url, content=content, prompt=inp.prompt
    )
    try:
        answer = await model.answer(prompts.load("web/apply_system.md").strip(), question)
    except ModelError as e:
        text = (
            f"The small model could not answer ({e}); here is the content of {found.url} "
            f"instead:\n\n{content}"
        )
        return ToolResult(text, raw_output=raw)
    return ToolResult(answer.strip() or "(the small model gave no answer)", raw_output=raw)


async def _validate(inp: WebFetchInput, _ctx: ToolContext) -> str | None:
    from tether.web.fetch import normalize_url

    try:
        normalize_url(inp.url)
    except FetchError as e:
        return str(e)
    return None


async def _check_permissions(inp: WebFetchInput, _ctx: ToolContext) -> PermissionCheck:
    return PermissionCheck("ask", f"Fetch a page from {host_of(inp.url)}")


def _locations(_inp: WebFetchInput, _ctx: ToolContext) -> list[Location]:
    return []


def _always(_inp: WebFetchInput) -> bool:
    return True


WEB_FETCH_TOOL: Tool[WebFetchInput] = build_tool(
    name=NAME,
    description=prompts.load("tools/WebFetch.md"),
    input_model=WebFetchInput,
    call=_call,
    kind="fetch",
    is_read_only=_always,
    is_concurrency_safe=_always,
    validate=_validate,
    check_permissions=_check_permissions,
    title=lambda inp: f"Fetch {inp.url}",
    locations=_locations,
    rule_content=lambda inp: inp.url,
)
