"""Web search in the fake Messages API: the blocks it emits for a scripted search, and the
checks it makes on what comes back.

The real API sends search results and citations with encrypted parts (``encrypted_content``,
``encrypted_index``) and refuses a request whose copies of them were altered, or whose
``server_tool_use`` has no result after it. The fake derives those parts from a key of its
own, so it can refuse the same requests: a client that rewrites or drops these blocks
fails its tests here as it would against the real API.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any, cast

from tether.providers.script import ScriptText, ScriptWebSearch, server_tool_use_id

_KEY = b"tether fake web search"
WEB_SEARCH_TOOL_TYPES = frozenset({"web_search_20250305", "web_search_20260209"})


def sealed(kind: str, value: str) -> str:
    digest = hmac.new(_KEY, f"{kind}\0{value}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def search_blocks(turn: int, index: int, block: ScriptWebSearch) -> list[dict[str, Any]]:
    """``server_tool_use`` and its ``web_search_tool_result``, as the API returns them."""
    use_id = block.id or server_tool_use_id(turn, index)
    use = {
        "type": "server_tool_use",
        "id": use_id,
        "name": "web_search",
        "input": {"query": block.query},
    }
    content: Any
    if block.error is not None:
        content = {"type": "web_search_tool_result_error", "error_code": block.error}
    else:
        content = [
            {
                "type": "web_search_result",
                "url": r.url,
                "title": r.title,
                "encrypted_content": sealed("content", r.url),
                "page_age": r.page_age,
            }
            for r in block.results
        ]
    return [use, {"type": "web_search_tool_result", "tool_use_id": use_id, "content": content}]


def text_block(block: ScriptText) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "text", "text": block.text}
    if block.citations:
        out["citations"] = [
            {
                "type": "web_search_result_location",
                "url": c.url,
                "title": c.title,
                "cited_text": c.cited_text,
                "encrypted_index": sealed("index", c.url + "\0" + c.cited_text),
            }
            for c in block.citations
        ]
    return out


def check_request(body: dict[str, Any], first: int = 0) -> str | None:
    """Why the real API would refuse this request's web search parts, or None; messages
    before ``first`` passed in an earlier request."""
    for tool in cast(list[dict[str, Any]], body.get("tools") or []):
        if tool.get("type") in WEB_SEARCH_TOOL_TYPES:
            problem = _check_tool(tool)
            if problem:
                return problem
    messages = cast(list[dict[str, Any]], body.get("messages") or [])
    for i in range(first, len(messages)):
        message = messages[i]
        content = message.get("content")
        if not isinstance(content, list):
            continue
        blocks = [cast(dict[str, Any], b) for b in cast(list[Any], content) if isinstance(b, dict)]
        problem = _check_message(i, str(message.get("role")), blocks)
        if problem:
            return problem
    return None


def _check_tool(tool: dict[str, Any]) -> str | None:
    if tool.get("name") != "web_search":
        return f"tools: a {tool.get('type')} tool must be named 'web_search'"
    if tool.get("allowed_domains") and tool.get("blocked_domains"):
        return "tools: web_search cannot have both allowed_domains and blocked_domains"
    uses = tool.get("max_uses")
    if uses is not None and (not isinstance(uses, int) or uses < 1):
        return "tools: web_search max_uses must be a positive integer"
    return None


def _check_message(i: int, role: str, blocks: list[dict[str, Any]]) -> str | None:
    where = f"messages.{i}"
    pending: set[str] = set()
    for j, block in enumerate(blocks):
        kind = block.get("type")
        if kind in ("server_tool_use", "web_search_tool_result") and role != "assistant":
            return f"{where}.content.{j}: {kind} blocks may only appear in assistant messages"
        if kind == "server_tool_use":
            pending.add(str(block.get("id")))
        elif kind == "web_search_tool_result":
            use_id = str(block.get("tool_use_id"))
            if use_id not in pending:
                return f"{where}.content.{j}: web_search_tool_result without its server_tool_use"
            pending.discard(use_id)
            problem = _check_results(f"{where}.content.{j}", block.get("content"))
            if problem:
                return problem
        elif kind == "text" and block.get("citations"):
            problem = _check_citations(f"{where}.content.{j}", block["citations"])
            if problem:
                return problem
    if pending:
        return f"{where}: server_tool_use {sorted(pending)[0]} has no web_search_tool_result"
    return None


def _check_results(where: str, content: Any) -> str | None:
    if isinstance(content, dict):
        return None if cast(dict[str, Any], content).get("error_code") else f"{where}: bad error"
    if not isinstance(content, list):
        return f"{where}: content must be a list of results"
    for k, result in enumerate(cast(list[Any], content)):
        item = cast(dict[str, Any], result) if isinstance(result, dict) else {}
        if item.get("encrypted_content") != sealed("content", str(item.get("url"))):
            return f"{where}.content.{k}.encrypted_content: invalid (the result was altered)"
    return None


def _check_citations(where: str, citations: Any) -> str | None:
    for k, citation in enumerate(cast(list[Any], citations)):
        item = cast(dict[str, Any], citation) if isinstance(citation, dict) else {}
        if item.get("type") != "web_search_result_location":
            continue
        expected = sealed("index", f"{item.get('url')}\0{item.get('cited_text')}")
        if item.get("encrypted_index") != expected:
            return f"{where}.citations.{k}.encrypted_index: invalid (the citation was altered)"
        if "title" not in item:
            return f"{where}.citations.{k}.title: Field required"
    return None
