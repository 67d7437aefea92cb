"""One budget for what a model may send as a tool input: within it, the input runs and its
transcript line reads back; past it (nested too deep, or holding a lone surrogate escape)
the call is refused with a reason the model reads, and nothing unreadable is written."""

from __future__ import annotations

from providers_support import collect, make_request

from tether.core.json_input import MAX_DEPTH, parse_model_input
from tether.core.messages import Message, ToolUseBlock
from tether.providers.base import ToolUseReady
from tether.providers.convert_openai import tool_use
from tether.transcript.records import AssistantRecord, dump_record, load_record


def _nested(depth: int) -> dict[str, object]:
    """An input whose own nesting is ``depth`` levels (the object itself is one)."""
    inner: object = []
    for _ in range(depth - 2):
        inner = [inner]
    return {"file_path": "a.py", "extra": inner}


def test_the_deepest_input_taken_is_written_and_read_back() -> None:
    value, refused = parse_model_input(_json(_nested(MAX_DEPTH)))
    assert refused is None and value is not None
    use = ToolUseBlock(id="t1", name="Read", input=value)
    record = AssistantRecord(session_id="s1", message=Message(role="assistant", content=[use]))
    back = load_record(dump_record(record))
    assert isinstance(back, AssistantRecord)
    assert back.message.content == [use]


def test_input_past_the_budget_is_refused_and_its_record_reads_back() -> None:
    for raw in (
        _json(_nested(MAX_DEPTH + 1)),
        '{"a": ' + "[" * 3000 + "]" * 3000 + "}",
        '{"file_path": "\\udfff"}',
    ):
        value, refused = parse_model_input(raw)
        assert value == {} and refused
        use = ToolUseBlock(id="t1", name="Read", input=value, refused=refused)
        record = AssistantRecord(session_id="s1", message=Message(role="assistant", content=[use]))
        assert load_record(dump_record(record)) == record
    # A surrogate pair is one character: taken.
    assert parse_model_input('{"text": "\\ud83d\\ude00"}') == ({"text": "\U0001f600"}, None)


def test_openai_arguments_share_the_budget() -> None:
    deep = tool_use("c1", "Read", _json(_nested(MAX_DEPTH + 5)))
    assert deep.input == {} and deep.refused and not deep.truncated
    cut = tool_use("c1", "Read", '{"file_path": "a')
    assert cut.truncated and cut.refused is None


async def test_a_streamed_input_past_the_budget_arrives_refused(
    anthropic_server, anthropic_provider
):
    server = anthropic_server(
        [
            {"blocks": [{"type": "tool_use", "name": "Read", "input": _nested(MAX_DEPTH + 50)}]},
            {"blocks": [{"type": "tool_use", "name": "Read", "input": {"file_path": "\udfff"}}]},
        ]
    )
    provider = anthropic_provider(server)
    for _ in range(2):
        events = await collect(provider.stream(make_request()))
        ready = [e.block for e in events if isinstance(e, ToolUseReady)]
        assert len(ready) == 1
        assert ready[0].input == {} and ready[0].refused and not ready[0].truncated


def _json(value: object) -> str:
    import json

    return json.dumps(value)
