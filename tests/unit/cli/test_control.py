"""The control protocol's plumbing: our requests and their answers, cancellation, a program
that goes away, and hook callbacks read like command hooks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tether.cli.control import ControlChannel, ControlError
from tether.cli.sdk_hooks import SdkHooks
from tether.cli.sdk_prompts import HeldPrompt, Prompt, Prompts, RefusedPrompt
from tether.cli.sdk_wire import HookMatcherConfig, RequestRefused, parse_request
from tether.cli.stream_input import (
    ControlResponseLine,
    InputError,
    UserLine,
    parse_line,
)
from tether.core.hooks import AgentScope, current_agent
from tether.protocol.content import ImageContent, TextContent


class Program:
    """The other end: records our lines and answers requests as told."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.channel = ControlChannel(self.lines.append)

    def requests(self) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["type"] == "control_request"]

    def answer(
        self, request_id: str, payload: dict[str, Any] | None, error: str | None = None
    ) -> None:
        body: dict[str, Any] = {
            "subtype": "error" if error else "success",
            "request_id": request_id,
        }
        if error:
            body["error"] = error
        else:
            body["response"] = payload
        line = parse_line(json.dumps({"type": "control_response", "response": body}))
        assert isinstance(line, ControlResponseLine)
        self.channel.deliver(line.response)


async def test_a_request_gets_its_answer() -> None:
    program = Program()
    asking = asyncio.ensure_future(program.channel.request({"subtype": "can_use_tool"}))
    await asyncio.sleep(0)
    (sent,) = program.requests()
    assert sent["request"] == {"subtype": "can_use_tool"} and sent["request_id"]
    program.answer(sent["request_id"], {"behavior": "allow"})
    assert await asking == {"behavior": "allow"}


async def test_an_error_answer_raises() -> None:
    program = Program()
    asking = asyncio.ensure_future(program.channel.request({"subtype": "hook_callback"}))
    await asyncio.sleep(0)
    program.answer(program.requests()[0]["request_id"], None, error="callback crashed")
    with pytest.raises(ControlError, match="callback crashed"):
        await asking


async def test_giving_up_tells_the_program() -> None:
    program = Program()
    asking = asyncio.ensure_future(program.channel.request({"subtype": "can_use_tool"}))
    await asyncio.sleep(0)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    request_id = program.requests()[0]["request_id"]
    assert program.lines[-1] == {"type": "control_cancel_request", "request_id": request_id}
    assert program.channel.waiting == 0


async def test_a_program_that_closed_its_input_answers_nothing() -> None:
    program = Program()
    asking = asyncio.ensure_future(program.channel.request({"subtype": "can_use_tool"}))
    await asyncio.sleep(0)
    program.channel.close("the program closed its input")
    with pytest.raises(ControlError, match="closed its input"):
        await asking
    with pytest.raises(ControlError):
        await program.channel.request({"subtype": "can_use_tool"})


def test_incoming_requests_are_typed() -> None:
    init = parse_request(
        {
            "subtype": "initialize",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 5}]
            },
        }
    )
    assert init.subtype == "initialize" and init.hooks is not None
    matcher = init.hooks["PreToolUse"][0]
    assert (matcher.matcher, matcher.callback_ids, matcher.timeout) == ("Bash", ["hook_0"], 5)
    with pytest.raises(RequestRefused, match="Unsupported control request subtype: frobnicate"):
        parse_request({"subtype": "frobnicate"})
    with pytest.raises(RequestRefused, match="rewind_files is not supported by Tether: ") as known:
        parse_request({"subtype": "rewind_files", "user_message_id": "u"})
    assert known.value.code == "unsupported_request"
    with pytest.raises(RequestRefused, match="bad set_permission_mode request: mode"):
        parse_request({"subtype": "set_permission_mode"})


def test_input_lines() -> None:
    line = parse_line(
        '{"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hi"},'
        ' {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]},'
        ' "parent_tool_use_id": null, "session_id": ""}'
    )
    assert isinstance(line, UserLine)
    assert line.blocks() == [
        TextContent(text="hi"),
        ImageContent(mime_type="image/png", data="AA=="),
    ]
    assert parse_line("   \n") is None
    assert parse_line('{"type": "keep_alive"}') is None  # a heartbeat, ignored
    with pytest.raises(InputError, match="not JSON"):
        parse_line("{oops")
    with pytest.raises(InputError, match="unknown message type 'assistant'"):
        parse_line('{"type": "assistant"}')
    with pytest.raises(InputError, match="bad user message: message"):
        parse_line('{"type": "user"}')


async def test_hook_callbacks_decide_like_command_hooks(tmp_path: Path) -> None:
    program = Program()
    config = {
        "PreToolUse": [
            HookMatcherConfig(matcher="Bash", hookCallbackIds=["deny_bash"]),
            HookMatcherConfig(matcher="Read|Bash", hookCallbackIds=["note"]),
        ],
        "Stop": [HookMatcherConfig(hookCallbackIds=["failing"], onFailure="block")],
        "Notification": [HookMatcherConfig(hookCallbackIds=["never"])],
    }
    hooks = SdkHooks(
        program.channel, config, session_id=lambda: "s", cwd=tmp_path, mode=lambda: "default"
    )
    assert hooks.unsupported == ["Notification"]

    async def respond() -> None:
        answered: set[str] = set()
        while True:
            await asyncio.sleep(0)
            for request in program.requests():
                rid = request["request_id"]
                if rid in answered:
                    continue
                answered.add(rid)
                body = request["request"]
                payload = body["input"]
                assert payload["session_id"] == "s" and payload["cwd"] == str(tmp_path)
                if body["callback_id"] == "deny_bash":
                    program.answer(
                        rid,
                        {
                            "hookSpecificOutput": {
                                "hookEventName": "PreToolUse",
                                "permissionDecision": "deny",
                                "permissionDecisionReason": "no shell",
                            }
                        },
                    )
                elif body["callback_id"] == "note":
                    program.answer(
                        rid,
                        {
                            "hookSpecificOutput": {
                                "hookEventName": "PreToolUse",
                                "additionalContext": "seen",
                            }
                        },
                    )
                else:
                    program.answer(rid, None, error="it broke")

    responder = asyncio.ensure_future(respond())
    try:
        bash = await hooks.pre_tool_use("Bash", {"command": "ls"}, "u1")
        read = await hooks.pre_tool_use("Read", {"file_path": "a"}, "u2")
        stop = await hooks.stop(stop_hook_active=False, last_message="done")
    finally:
        responder.cancel()
    assert (bash.decision, bash.reason, bash.additional_context) == ("deny", "no shell", "seen")
    assert (read.decision, read.additional_context) == (None, "seen")
    assert stop.block_reason is not None and "it broke" in stop.block_reason
    asked = [r["request"]["callback_id"] for r in program.requests()]
    assert sorted(asked) == ["deny_bash", "failing", "note", "note"]


async def test_an_unanswered_callback_means_what_it_means_in_claude_code(tmp_path: Path) -> None:
    """A callback that misses its timeout: the call does not run, the prompt is not sent; a
    PostToolUse or Stop goes on without the answer (unless its matcher says block)."""
    program = Program()
    silent = [HookMatcherConfig(hookCallbackIds=["silent"], timeout=0.05)]
    config = {
        "PreToolUse": silent,
        "UserPromptSubmit": silent,
        "PostToolUse": silent,
        "Stop": silent,
        "SubagentStop": [
            HookMatcherConfig(hookCallbackIds=["silent"], timeout=0.05, onFailure="block")
        ],
    }
    hooks = SdkHooks(
        program.channel, config, session_id=lambda: "s", cwd=tmp_path, mode=lambda: "default"
    )
    pre = await hooks.pre_tool_use("Bash", {"command": "touch x"}, "u1")
    assert pre.decision == "deny" and "did not respond before its timeout" in pre.reason
    prompt = await hooks.user_prompt_submit("hi")
    assert prompt.block_reason is not None and "timed out" in prompt.block_reason
    post = await hooks.post_tool_use("Bash", {"command": "ls"}, "u2", "out", False)
    assert (post.decision, post.stop_turn, post.additional_context) == (None, None, None)
    stop = await hooks.stop(stop_hook_active=False, last_message="done")
    assert (stop.block_reason, stop.stop_turn) == (None, None)
    sub = await hooks.subagent_stop(stop_hook_active=False, last_message="done")
    assert sub.block_reason is not None
    cancelled = [line for line in program.lines if line["type"] == "control_cancel_request"]
    assert len(cancelled) == 5
    # A program gone away is no answer either: the call still does not run.
    program.channel.close("the program closed its input")
    gone = await hooks.pre_tool_use("Bash", {"command": "touch x"}, "u3")
    assert gone.decision == "deny"


async def test_a_failure_reaches_its_hook_as_claude_code_words_it(tmp_path: Path) -> None:
    """PostToolUseFailure's ``error`` is the message, without the tags the model reads it
    in; a subagent's hook inputs name the agent."""
    program = Program()
    silent = [HookMatcherConfig(hookCallbackIds=["silent"], timeout=0.05)]
    hooks = SdkHooks(
        program.channel,
        {"PostToolUseFailure": silent},
        session_id=lambda: "s",
        cwd=tmp_path,
        mode=lambda: "default",
    )
    failed = "<tool_use_error>File does not exist: missing.txt</tool_use_error>"
    scope = current_agent.set(AgentScope("a1b2", "reviewer"))
    try:
        await hooks.post_tool_use("Read", {"file_path": "missing.txt"}, "u1", failed, True)
    finally:
        current_agent.reset(scope)
    sent = program.requests()[-1]["request"]["input"]
    assert sent["error"] == "File does not exist: missing.txt"
    assert (sent["agent_id"], sent["agent_type"], sent["tool_use_id"]) == ("a1b2", "reviewer", "u1")


def user_line(content: Any, **extra: Any) -> UserLine:
    line = parse_line(
        json.dumps({"type": "user", "message": {"role": "user", "content": content}} | extra)
    )
    assert isinstance(line, UserLine)
    return line


def test_prompt_blocks_are_taken_or_refused_never_dropped() -> None:
    doc = {
        "type": "document",
        "title": "notes",
        "source": {"type": "text", "media_type": "text/plain", "data": "The secret is mango."},
    }
    nested = {
        "type": "document",
        "source": {"type": "content", "content": [{"type": "text", "text": "inner"}]},
    }
    (text, notes, inner) = user_line([{"type": "text", "text": "sum it up"}, doc, nested]).blocks()
    assert text == TextContent(text="sum it up")
    assert isinstance(notes, TextContent) and "The secret is mango." in notes.text
    assert 'title="notes"' in notes.text and inner == TextContent(text="inner")
    for bad, named in [
        ({"type": "document", "source": {"type": "url", "url": "https://x/a.pdf"}}, "'url' source"),
        ({"type": "image", "source": {"type": "url", "url": "https://x/a.png"}}, "'url' source"),
        ({"type": "tool_result", "tool_use_id": "t", "content": "x"}, "'tool_result' block"),
    ]:
        with pytest.raises(InputError, match=named):
            user_line([{"type": "text", "text": "hi"}, bad]).blocks()


def test_queued_prompts_hold_what_does_not_query_and_refuse_what_cannot_run() -> None:
    prompts = Prompts()
    prompts.put_line(user_line("context: mango", shouldQuery=False, uuid="a"))
    prompts.put_line(
        user_line([{"type": "tool_use", "id": "x", "name": "n", "input": {}}], uuid="b")
    )
    prompts.put_line(user_line("what is it?", uuid="c"))
    held, refused, asked = list(prompts._entries)  # pyright: ignore[reportPrivateUsage]
    assert isinstance(held, HeldPrompt) and held.uuid == "a"
    assert isinstance(refused, RefusedPrompt) and "'tool_use' block" in refused.error
    assert isinstance(asked, Prompt)
    assert asked.blocks == [TextContent(text="context: mango"), TextContent(text="what is it?")]
    assert prompts.take_prompt() is None  # the held line is next, not a prompt to run


def test_an_empty_updated_input_means_as_asked_and_unknown_fields_are_dropped() -> None:
    from tether.cli.permission_tool import answer_reply
    from tether.editor.port import PermissionRequest
    from tether.orchestration.pipeline import known_fields
    from tether.tools.write import WRITE_TOOL

    asked = {"file_path": "/w/a.txt", "content": "x"}
    request = PermissionRequest(
        session_id="s",
        tool_call_id="t",
        tool_name="Write",
        title="Write a.txt",
        tool_kind="edit",
        raw_input=asked,
    )
    reply = answer_reply(request, {"behavior": "allow", "updatedInput": {}}, "the program")
    assert reply.allowed and reply.updated_input is None
    rewritten = {**asked, "content": "y", "note": "the program's own"}
    assert known_fields(WRITE_TOOL, rewritten) == {"file_path": "/w/a.txt", "content": "y"}


def test_a_server_config_drops_what_it_cannot_read_and_refuses_what_it_cannot_trust() -> None:
    from tether.cli.sdk_servers import server_config, tool_rules

    config = server_config(
        {"timeout": "soon", "tools": [{"name": "rm", "permission_policy": "always_deny"}, "junk"]}
    )
    assert not isinstance(config, str) and config.timeout is None
    assert tool_rules("calc", config) == ([], ["mcp__calc__rm"])
    refused = server_config({"tools": "rm"})
    assert isinstance(refused, str) and "not started" in refused
