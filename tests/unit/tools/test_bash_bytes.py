"""Bytes that are not UTF-8 survive a Bash call as visible escapes, and the transcript
round-trips them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tether.core.messages import Message
from tether.tools.base import ToolResult
from tether.tools.bash import make_bash_tool
from tether.transcript.records import ToolResultRecord, dump_record, load_record

Run = Callable[..., Awaitable[ToolResult]]


async def test_invalid_utf8_is_kept_escaped(run: Run) -> None:
    result = await run(make_bash_tool(), {"command": r"printf 'ok \377\376 caf\303\251 \000 end'"})
    text = result.content if isinstance(result.content, str) else ""
    assert "\\xff\\xfe" in text and "café" in text and "end" in text
    record = ToolResultRecord(
        session_id="s", message=Message(role="user", content=[result.to_block("t1")])
    )
    back = load_record(dump_record(record))
    assert isinstance(back, ToolResultRecord)
    assert back.message.tool_results[0].text == result.to_block("t1").text


async def test_model_keys_do_not_reach_commands(run: Run, monkeypatch: object) -> None:
    import os

    os.environ["ANTHROPIC_API_KEY"] = "sk-secret-value"
    try:
        result = await run(make_bash_tool(), {"command": "echo key=[${ANTHROPIC_API_KEY:-none}]"})
    finally:
        del os.environ["ANTHROPIC_API_KEY"]
    assert "key=[none]" in str(result.content)
