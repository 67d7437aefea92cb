"""The provider's web search: streamed blocks, kept and sent back verbatim, refused when
altered, resumed after ``pause_turn``; left out for OpenAI-compatible servers; shaped by
the session's rules."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from providers_support import API_HEADERS, collect, make_request

from tether.core.messages import (
    Message,
    ServerToolUseBlock,
    TextBlock,
    WebSearchToolResultBlock,
    user_text,
)
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.permissions.policy import RuleSet
from tether.permissions.rules import Rule
from tether.protocol.updates import ToolCall, ToolCallUpdate
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import Completed, ServerToolFinished, ServerToolStarted
from tether.providers.convert_openai import request_messages, tool_params
from tether.tasks.registry import TaskRegistry
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_web_search import sealed
from tether.tools.web_search import search_options, web_search_tool
from tether.transcript.replay import history_updates
from tether.transcript.resume import resume

SEARCH: list[Any] = [
    {"type": "text", "text": "Let me look."},
    {
        "type": "web_search",
        "query": "pygls release",
        "results": [
            {"url": "https://pygls.dev/news", "title": "News", "page_age": "2 days ago"},
            {"url": "https://pypi.org/project/pygls", "title": "pygls"},
        ],
    },
    {
        "type": "text",
        "text": "pygls 2.1 is out.",
        "citations": [{"url": "https://pygls.dev/news", "title": "News", "cited_text": "2.1"}],
    },
]


async def test_stream_yields_server_blocks_verbatim(
    anthropic_server: Callable[..., FakeAnthropicServer],
    anthropic_provider: Callable[..., AnthropicProvider],
) -> None:
    server = anthropic_server([SEARCH])
    events = await collect(anthropic_provider(server).stream(make_request()))
    started = [e for e in events if isinstance(e, ServerToolStarted)]
    finished = [e for e in events if isinstance(e, ServerToolFinished)]
    assert [e.block.input for e in started] == [{"query": "pygls release"}]
    assert finished[0].block.tool_use_id == started[0].block.id
    completed = events[-1]
    assert isinstance(completed, Completed)
    kinds = [b.type for b in completed.message.content]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text"]
    result = completed.message.content[2]
    assert isinstance(result, WebSearchToolResultBlock) and isinstance(result.content, list)
    assert result.content[0].encrypted_content == sealed("content", "https://pygls.dev/news")
    assert result.content[0].page_age == "2 days ago"
    cited = completed.message.content[3]
    assert isinstance(cited, TextBlock) and cited.citations
    assert cited.citations[0].model_dump()["encrypted_index"]


def engine_for(tmp_path: Path, provider: Any, rules: RuleSet | None = None) -> QueryEngine:
    rules = rules or RuleSet()
    engine = QueryEngine(
        session_id="s1",
        cwd=tmp_path,
        provider=provider,
        tools=[],
        editor=DiskEditor(),
        rules=rules,
        tasks=TaskRegistry(tmp_path / "tasks"),
    )
    engine.tools.add(web_search_tool(lambda: search_options(lambda: rules.deny)))
    return engine


async def test_history_goes_back_unchanged_and_pause_turn_resumes(
    tmp_path: Path,
    anthropic_server: Callable[..., FakeAnthropicServer],
    anthropic_provider: Callable[..., AnthropicProvider],
) -> None:
    server = anthropic_server(
        [
            {"blocks": SEARCH[:2], "stop_reason": "pause_turn"},
            [SEARCH[2]],
            {"expect": {"contains": "and then?"}, "blocks": [{"type": "text", "text": "Bye."}]},
        ]
    )
    engine = engine_for(tmp_path, anthropic_provider(server))
    first = await engine.run("what is new in pygls?")
    second = await engine.run("and then?")
    await engine.close()
    assert first.terminal.reason == second.terminal.reason == "completed", server.errors
    server.assert_complete()
    _paused, resumed, follow_up = server.requests
    # After pause_turn the paused reply is sent back as the last message, unchanged.
    last = resumed["messages"][-1]
    assert last["role"] == "assistant"
    assert [b["type"] for b in last["content"]] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
    ]
    wire_result = last["content"][2]
    assert wire_result["content"][0]["encrypted_content"] == sealed(
        "content", "https://pygls.dev/news"
    )
    assert "web_search_tool_result" in json.dumps(follow_up["messages"])
    assert all(
        any(t.get("type") == "web_search_20250305" for t in r["tools"]) for r in server.requests
    )


async def test_fake_refuses_altered_search_blocks(
    anthropic_server: Callable[..., FakeAnthropicServer],
) -> None:
    # Refused like any request that breaks the API's rules: before a turn of the script.
    server = anthropic_server([[{"type": "text", "text": "never"}]])
    altered = {
        "role": "assistant",
        "content": [
            {
                "type": "server_tool_use",
                "id": "srv1",
                "name": "web_search",
                "input": {"query": "q"},
            },
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srv1",
                "content": [
                    {
                        "type": "web_search_result",
                        "url": "https://a.b",
                        "title": "t",
                        "encrypted_content": "forged",
                    }
                ],
            },
        ],
    }
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "q"}, altered, {"role": "user", "content": "go"}],
    }
    response = httpx2.post(f"{server.base_url}/v1/messages", json=body, headers=API_HEADERS)
    assert response.status_code == 400
    assert "encrypted_content: invalid" in response.json()["error"]["message"]
    orphan = {**altered, "content": altered["content"][:1]}
    body["messages"][1] = orphan
    response = httpx2.post(f"{server.base_url}/v1/messages", json=body, headers=API_HEADERS)
    assert response.status_code == 400 and "has no web_search_tool_result" in response.text
    assert server.remaining == 1 and len(server.rejected) == 2


def test_openai_compatible_requests_leave_search_out() -> None:
    tool = web_search_tool(lambda: search_options(lambda: []))
    assert tool_params([tool.spec()]) == []
    use = ServerToolUseBlock(id="srv1", name="web_search", input={"query": "q"})
    result = WebSearchToolResultBlock.model_validate(
        {
            "tool_use_id": "srv1",
            "content": [{"type": "web_search_result", "url": "https://a.b/c", "title": "A"}],
        }
    )
    history = [
        user_text("search"),
        Message(role="assistant", content=[use, result, TextBlock(text="Found it.")]),
        user_text("thanks"),
    ]
    request = make_request(history, tools=[tool.spec()])
    assistant = request_messages(request)[2]
    assert assistant["role"] == "assistant"
    content = str(assistant.get("content"))
    assert "web search results" in content and "https://a.b/c" in content and "Found it." in content


@pytest.mark.parametrize(
    ("deny", "expected"),
    [
        ([], ()),
        (["WebSearch(domain:spam.example)", "Bash(rm:*)"], ("spam.example",)),
    ],
)
def test_deny_rules_become_blocked_domains(deny: list[str], expected: tuple[str, ...]) -> None:
    rules = RuleSet(deny=[Rule.parse(r) for r in deny])
    spec = web_search_tool(lambda: search_options(lambda: rules.deny)).spec()
    assert spec.server is not None and spec.server.blocked_domains == expected


async def test_bare_deny_rule_removes_the_search(tmp_path: Path) -> None:
    from tether.providers.script import parse_script
    from tether.providers.scripted import ScriptedProvider

    engine = engine_for(
        tmp_path, ScriptedProvider(parse_script([])), RuleSet(deny=[Rule.parse("WebSearch")])
    )
    assert "WebSearch" not in [s.name for s in engine.tool_specs()]
    await engine.close()


async def test_scripted_search_lands_in_the_transcript(tmp_path: Path) -> None:
    from tether.providers.script import parse_script
    from tether.providers.scripted import ScriptedProvider
    from tether.transcript.writer import TranscriptWriter

    writer = TranscriptWriter(tmp_path / "t.jsonl", "s1")
    writer.open()
    engine = QueryEngine(
        session_id="s1",
        cwd=tmp_path,
        provider=ScriptedProvider(parse_script([SEARCH])),
        tools=[],
        editor=DiskEditor(),
        transcript=writer,
        tasks=TaskRegistry(tmp_path / "tasks"),
    )
    await engine.run("search")
    await engine.close()
    resumed = resume(tmp_path / "t.jsonl", "s1")
    kinds = [b.type for m in resumed.messages for b in m.content]
    assert "server_tool_use" in kinds and "web_search_tool_result" in kinds
    # An editor loading the session sees the search as a finished tool call.
    replayed = [u for _, u in history_updates(resumed.chain, lambda b: (b.name, "other", []))]
    call = next(u for u in replayed if isinstance(u, ToolCall))
    done = next(u for u in replayed if isinstance(u, ToolCallUpdate))
    assert call.title == "Web search: pygls release" and call.tool_call_id == done.tool_call_id
    assert done.status == "completed" and "https://pygls.dev/news" in str(done.content)
