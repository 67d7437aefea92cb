"""Whatever fails while a prompt is accepted or a turn is recorded, the turn ends and the
session takes the next prompt; text the API would refuse never enters the conversation."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tether.core.messages import TextBlock, ToolResultBlock
from tether.engine.prompt_input import well_formed_blocks
from tether.protocol.content import ResourceLink, TextContent
from tether.protocol.updates import TurnEnd
from tether.providers.anthropic import AnthropicProvider
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.tools.registry import core_tools

from .support import make_engine, text, use


def test_lone_surrogates_in_a_prompt_become_replacement_characters() -> None:
    blocks = well_formed_blocks(
        [TextContent(text="caf\udce9 \ud800"), ResourceLink(uri="file:///a\udce9", name=None)]
    )
    assert blocks[0] == TextContent(text="caf\ufffd \ufffd")
    assert isinstance(blocks[1], ResourceLink) and blocks[1].uri == "file:///a\ufffd"
    plain = [TextContent(text="plain é")]
    assert well_formed_blocks(plain)[0] is plain[0]


async def test_a_prompt_and_a_listing_with_undecodable_bytes_reach_the_strict_api(
    tmp_path: Path,
) -> None:
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    script = [
        [use("Glob", pattern="*.txt")],
        [text("listed")],
        [text("answered")],
    ]
    with FakeAnthropicServer(script) as server:
        provider = AnthropicProvider("claude-sonnet-4-6", base_url=server.base_url, api_key="k")
        engine = make_engine(tmp_path, None, core_tools(), provider=provider)
        first = await asyncio.wait_for(engine.run("list the txt files"), 30)
        second = await asyncio.wait_for(engine.run([TextContent(text="\udfff and more")]), 30)
        await engine.close()
        await provider.aclose()
        server.assert_complete()  # no request was refused
    assert first.terminal.reason == "completed", first.terminal
    assert second.terminal.reason == "completed", second.terminal
    results = [
        b for m in engine.history.messages for b in m.content if isinstance(b, ToolResultBlock)
    ]
    assert results and '"' + str(tmp_path / "caf\\xe9.txt") + '"' in results[0].text
    prompts = [m.content[0] for m in engine.history.messages if m.role == "user"]
    assert TextBlock(text="\ufffd and more") in prompts


@pytest.mark.parametrize("where", ["record_turn_end", "append_user"])
async def test_the_turn_ends_whatever_fails_while_it_is_recorded(
    tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(tmp_path, [[text("one")], [text("two")]], [])
    calls = 0
    original = getattr(engine.history, where)

    def failing_once(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("a bug")
        return original(*args, **kwargs)

    monkeypatch.setattr(engine.history, where, failing_once)
    updates = await asyncio.wait_for(_updates(engine, "first"), 10)
    ends = [u for u in updates if isinstance(u, TurnEnd)]
    assert len(ends) == 1 and ends[0].stop_reason == "error"
    assert engine.last_result is not None and "a bug" in engine.last_result.terminal.message
    again = await asyncio.wait_for(engine.run("second"), 10)
    assert again.terminal.reason == "completed"
    await engine.close()


async def _updates(engine, prompt: str) -> list[object]:
    return [u async for u in engine.submit(prompt)]
