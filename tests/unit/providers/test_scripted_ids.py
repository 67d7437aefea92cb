"""The scripted model's tool ids: unique within a conversation also when the script is played
again over it (a resumed session), and distinct between sessions (clients key questions by
session and id, the Messages API refuses a repeated id in one conversation)."""

from __future__ import annotations

from providers_support import collect, make_request

from tether.core.messages import Message, ToolUseBlock, tool_result, user_text
from tether.providers.base import Completed
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider

SCRIPT = {
    "turns": [
        {"blocks": [{"type": "tool_use", "name": "Read", "input": {"file_path": "a.py"}}]},
        {"blocks": [{"type": "text", "text": "read it"}]},
    ]
}


async def play_first(provider: ScriptedProvider, messages: list[Message]) -> ToolUseBlock:
    events = await collect(provider.stream(make_request(messages)))
    done = events[-1]
    assert isinstance(done, Completed)
    (use,) = done.message.tool_uses
    return use


async def test_each_play_of_a_script_has_its_own_tool_ids() -> None:
    first = ScriptedProvider(parse_script(SCRIPT))
    other_session = ScriptedProvider(parse_script(SCRIPT))
    conversation = [user_text("read a.py")]
    use = await play_first(first, conversation)
    assert use.id != (await play_first(other_session, conversation)).id
    # Resumed: a new provider plays the script again over the conversation so far; the strict
    # request rules (those of the Messages API) accept it, as the ids do not repeat.
    conversation += [
        Message(role="assistant", content=[use]),
        Message(role="user", content=[tool_result(use.id, "print(1)")]),
        user_text("and again"),
    ]
    resumed = ScriptedProvider(parse_script(SCRIPT))
    again = await play_first(resumed, conversation)
    assert again.id != use.id
    assert again.id.startswith("toolu_") and again.id.replace("_", "").isalnum()
