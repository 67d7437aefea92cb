"""The fake APIs refuse what the real ones refuse, with the real status and error JSON.

One test per rule: a bad body goes in over real HTTP, and the exact answer is checked (the
message wording is the real API's, see ``tether.testing.anthropic_rules``). A refused
request consumes no scripted turn.
"""

from __future__ import annotations

import json
import math
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tether.testing.anthropic_rules import count_input_tokens, sign
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_openai import FakeOpenAIServer
from tether.testing.openai_rules import count_prompt_tokens

OK = [{"type": "text", "text": "ok"}]
TOOL = {"name": "Read", "description": "Read a file.", "input_schema": {"type": "object"}}


API_HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}
"""What every real client sends (the fake refuses a request without them)."""


def post(
    url: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **API_HEADERS, **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def get(url: str) -> tuple[int, dict[str, Any]]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, json.loads(response.read())


@pytest.fixture
def api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer([OK]) as server:
        yield server


def body(messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-6", "max_tokens": 1000, "messages": messages, **extra}


def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(content)}


def assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(content)}


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **extra}


def use(use_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": "Read", "input": {"file_path": "a"}}


def result(use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": "x"}


def refused(
    api: FakeAnthropicServer, payload: dict[str, Any], message: str, *, left: int = 1
) -> None:
    status, answer = post(f"{api.url}/v1/messages", payload)
    assert status == 400
    assert answer == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
    }
    assert api.remaining == left  # no scripted turn was consumed
    assert api.rejected[-1].message == message


def test_a_valid_request_is_answered(api: FakeAnthropicServer) -> None:
    status, answer = post(f"{api.url}/v1/messages", body([user(text("hi"))]))
    assert status == 200 and answer["content"] == OK
    assert api.rejected == []


def test_unknown_fields(api: FakeAnthropicServer) -> None:
    refused(
        api, body([user(text("hi"))], temperatur=1), "temperatur: Extra inputs are not permitted"
    )
    refused(
        api,
        body([user(text("hi", citation=[]))]),
        "messages.0.content.0.citation: Extra inputs are not permitted",
    )
    refused(
        api,
        body([user(text("hi", cache_control={"type": "ephemeral", "tll": "1h"}))]),
        "messages.0.content.0.cache_control.tll: Extra inputs are not permitted",
    )


def test_system_messages_are_generally_available(api: FakeAnthropicServer) -> None:
    """Claude Code 2.1.337 sends ``role: "system"`` messages without a beta (its binary: the
    ``mid-conversation-system-2026-04-07`` beta "is generally available; the header is not
    sent"); a per-message ``output_config`` needs the ``per-turn-control`` beta (its
    ``per_message_effort``). Models that refuse the role are named in the fake."""
    bare = body([user(text("hi")), {"role": "system", "content": [text("be brief")]}])
    status, answer = post(f"{api.url}/v1/messages", bare)
    assert status == 200 and answer["content"] == OK
    note = {"role": "system", "content": [text("be brief")], "output_config": {"effort": "low"}}
    payload = body([user(text("hi")), note])
    refused(api, payload, "messages.1.output_config: Extra inputs are not permitted", left=0)
    beta = {"anthropic-beta": "claude-code-20250219,per-turn-control-2026-07-01"}
    status, answer = post(f"{api.url}/v1/messages", {**payload, "extra": 1}, beta)
    assert (status, answer["error"]["message"]) == (400, "extra: Extra inputs are not permitted")
    empty = body([user(text("hi")), {"role": "system", "content": [text(" ")]}])
    status, answer = post(f"{api.url}/v1/messages", empty, beta)
    assert status == 400 and "non-whitespace" in answer["error"]["message"]
    opus = {**bare, "model": "claude-opus-4-8"}
    refused(api, opus, "messages.1.role: Input should be 'user' or 'assistant'", left=0)


def headers_refused(
    api: FakeAnthropicServer, headers: dict[str, str], status: int, kind: str, message: str
) -> None:
    request = urllib.request.Request(
        f"{api.url}/v1/messages",
        data=json.dumps(body([user(text("hi"))])).encode(),
        headers={"Content-Type": "application/json", **headers},
    )
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request, timeout=10)
    assert answer.value.code == status
    assert json.loads(answer.value.read()) == {
        "type": "error",
        "error": {"type": kind, "message": message},
    }
    assert api.remaining == 1


def test_credentials_are_required(api: FakeAnthropicServer) -> None:
    version = {"anthropic-version": "2023-06-01"}
    headers_refused(api, version, 401, "authentication_error", "x-api-key header is required")
    headers_refused(
        api,
        {**version, "authorization": "Basic abc"},
        401,
        "authentication_error",
        "x-api-key header is required",
    )
    status, _ = post(f"{api.url}/v1/messages", body([user(text("hi"))]), {"x-api-key": ""})
    assert status == 401
    bearer = {**version, "authorization": "Bearer tok"}
    status, _ = post(f"{api.url}/v1/messages", body([user(text("hi"))]), bearer)
    assert status == 200


def test_only_the_listed_keys_when_a_list_is_set() -> None:
    with FakeAnthropicServer([OK], api_keys={"good"}) as api:
        version = {"anthropic-version": "2023-06-01"}
        headers_refused(
            api, {**version, "x-api-key": "bad"}, 401, "authentication_error", "invalid x-api-key"
        )
        status, _ = post(f"{api.url}/v1/messages", body([user(text("hi"))]), {"x-api-key": "good"})
        assert status == 200


def test_anthropic_version_is_required(api: FakeAnthropicServer) -> None:
    headers_refused(
        api,
        {"x-api-key": "k"},
        400,
        "invalid_request_error",
        "anthropic-version: header is required",
    )


def test_unknown_beta_names_are_refused(api: FakeAnthropicServer) -> None:
    message = (
        "Unexpected value(s) `made-up-2026-01-01`, `zz-nope` for the `anthropic-beta` header. "
        "Please consult our documentation at docs.anthropic.com or try again without the header."
    )
    headers_refused(
        api,
        {**API_HEADERS, "anthropic-beta": "context-1m-2025-08-07, zz-nope,made-up-2026-01-01"},
        400,
        "invalid_request_error",
        message,
    )
    # Known ones: the SDK's own literals and the names Claude Code sends.
    known = "interleaved-thinking-2025-05-14,claude-code-20250219,context-management-2025-06-27"
    status, _ = post(f"{api.url}/v1/messages", body([user(text("hi"))]), {"anthropic-beta": known})
    assert status == 200


def test_a_chunked_request_body_is_read(api: FakeAnthropicServer) -> None:
    payload = json.dumps(body([user(text("hi"))])).encode()
    pieces = [payload[:10], payload[10:25], payload[25:]]
    chunked = (
        b"".join(f"{len(p):x};ext=1\r\n".encode() + p + b"\r\n" for p in pieces)
        + b"0\r\nx-trailer: 1\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", api.port), timeout=10) as conn:
        head = (
            "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "x-api-key: k\r\nanthropic-version: 2023-06-01\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        conn.sendall(head.encode() + chunked)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line == b"HTTP/1.1 200 OK"
    assert json.loads(rest.partition(b"\r\n\r\n")[2])["content"] == OK
    assert api.rejected == [] and api.remaining == 0


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_request_cut_off_by_the_client_is_no_request(
    api: FakeAnthropicServer, chunked: bool
) -> None:
    """A client that cancels while the body is on the way closes the connection: the server
    never got a request, so nothing is recorded, no turn is used and no error is counted;
    the next request is served as usual."""
    payload = json.dumps(body([user(text("hi"))])).encode()
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(payload)}"
    sent = f"{len(payload):x}\r\n".encode() + payload[:20] if chunked else payload[:20]
    with socket.create_connection(("127.0.0.1", api.port), timeout=10) as conn:
        head = (
            "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"x-api-key: k\r\nanthropic-version: 2023-06-01\r\n{framing}\r\n\r\n"
        )
        conn.sendall(head.encode() + sent)
        conn.shutdown(socket.SHUT_WR)
        assert conn.recv(65536) == b"", "no answer to a request that never arrived whole"
    assert api.requests == [] and api.errors == [] and api.remaining == 1
    status, _ = post(f"{api.url}/v1/messages", body([user(text("hi"))]))
    assert status == 200 and api.remaining == 0 and api.errors == []


def test_empty_and_whitespace_text(api: FakeAnthropicServer) -> None:
    refused(
        api,
        body([user(text(""))]),
        "messages.0.content.0.text: text content blocks must be non-empty",
    )
    refused(
        api,
        body([user(text(" \n"))]),
        "messages: text content blocks must contain non-whitespace text",
    )
    inner = {"type": "tool_result", "tool_use_id": "t1", "content": [text("")]}
    refused(
        api,
        body([user(text("go")), assistant(use("t1")), user(inner)]),
        "messages.2.content.0.content.0.text: text content blocks must be non-empty",
    )


def test_tool_use_without_result(api: FakeAnthropicServer) -> None:
    refused(
        api,
        body([user(text("go")), assistant(use("t1"), use("t2")), user(result("t1"), text("more"))]),
        "messages.2: Did not find 2 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of "
        "`tool_result` blocks.",
    )


def test_pairing_is_checked_after_merging_same_role_messages(api: FakeAnthropicServer) -> None:
    # Two user messages in a row merge; the result then is not first in the merged message.
    refused(
        api,
        body([user(text("go")), assistant(use("t1")), user(text("note")), user(result("t1"))]),
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of "
        "`tool_result` blocks.",
    )
    # The other way round the merged message is valid.
    status, _ = post(
        f"{api.url}/v1/messages",
        body([user(text("go")), assistant(use("t1")), user(result("t1")), user(text("note"))]),
    )
    assert status == 200


def test_result_without_its_tool_use(api: FakeAnthropicServer) -> None:
    refused(
        api,
        body([user(text("go")), assistant(text("hm")), user(result("t9"))]),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t9. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message.",
    )


def test_missing_result_for_one_of_the_ids(api: FakeAnthropicServer) -> None:
    refused(
        api,
        body([user(text("go")), assistant(use("t1"), use("t2")), user(result("t1"), result("t3"))]),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "t2. Each `tool_use` block must have a corresponding `tool_result` block in the next "
        "message.",
    )


def test_duplicate_ids(api: FakeAnthropicServer) -> None:
    refused(
        api,
        body(
            [
                user(text("go")),
                assistant(use("t1")),
                user(result("t1")),
                assistant(use("t1")),
                user(result("t1")),
            ]
        ),
        "messages.3.content.0: `tool_use` ids must be unique",
    )
    refused(
        api,
        body([user(text("go")), assistant(use("t1")), user(result("t1"), result("t1"))]),
        "messages.2: each tool_use must have a single result. Found multiple `tool_result` "
        "blocks with id: t1",
    )


def test_more_than_four_cache_marks(api: FakeAnthropicServer) -> None:
    mark = {"type": "ephemeral"}
    blocks = [text(f"part {i}", cache_control=mark) for i in range(5)]
    refused(
        api,
        body([user(*blocks)]),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    )


def test_one_hour_mark_after_a_five_minute_one(api: FakeAnthropicServer) -> None:
    system = [text("system", cache_control={"type": "ephemeral"})]
    refused(
        api,
        body([user(text("hi", cache_control={"type": "ephemeral", "ttl": "1h"}))], system=system),
        "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. "
        "Note that blocks are processed in the following order: `tools`, `system`, `messages`.",
    )


def test_bad_and_duplicate_tool_names(api: FakeAnthropicServer) -> None:
    refused(
        api,
        body([user(text("hi"))], tools=[{**TOOL, "name": "read file"}]),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
    )
    refused(
        api,
        body([user(text("hi"))], tools=[{**TOOL, "name": "x" * 65}]),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
    )
    refused(api, body([user(text("hi"))], tools=[TOOL, TOOL]), "tools: Tool names must be unique.")


def test_max_tokens_over_the_models_limit(api: FakeAnthropicServer) -> None:
    refused(
        api,
        {**body([user(text("hi"))]), "max_tokens": 128_001},
        "max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens "
        "for claude-sonnet-4-6",
    )


def test_thinking_budget_rules() -> None:
    with FakeAnthropicServer([OK]) as api:
        model = {"model": "claude-sonnet-4-5"}
        refused(
            api,
            {
                **body([user(text("hi"))]),
                **model,
                "thinking": {"type": "enabled", "budget_tokens": 1023},
            },
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        )
        refused(
            api,
            {
                **body([user(text("hi"))]),
                **model,
                "thinking": {"type": "enabled", "budget_tokens": 1000},
            },
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        )
        refused(
            api,
            {
                **body([user(text("hi"))]),
                **model,
                "max_tokens": 2000,
                "thinking": {"type": "enabled", "budget_tokens": 2000},
            },
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
            "documentation at https://docs.claude.com/en/docs/build-with-claude/"
            "extended-thinking#max-tokens-and-context-window-size",
        )
        refused(
            api,
            {**body([user(text("hi"))]), **model, "thinking": {"type": "adaptive"}},
            "thinking.type: 'adaptive' is not supported on this model",
        )


def _loop(first_block: dict[str, Any]) -> list[Any]:
    return [user(text("go")), assistant(first_block, use("t1")), user(result("t1"))]


def test_tool_loop_must_start_with_its_thinking_block_when_enabled() -> None:
    with FakeAnthropicServer([OK]) as api:
        payload = {
            **body(_loop(text("Reading."))),
            "model": "claude-sonnet-4-5",
            "max_tokens": 4000,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
        }
        refused(
            api,
            payload,
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            "`text`. When `thinking` is enabled, a final `assistant` message must start with a "
            "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` "
            "blocks). We recommend you include thinking blocks from previous turns. To avoid "
            "this requirement, disable `thinking`. Please consult our documentation at "
            "https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
        )


def test_adaptive_loop_must_keep_the_thinking_the_model_gave() -> None:
    """The fake remembers which tool_use came after thinking and refuses the loop without it."""
    script = [
        [
            {"type": "thinking", "thinking": "Look first."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
        ],
        OK,
        OK,
    ]
    with FakeAnthropicServer(script) as api:
        adaptive = {"thinking": {"type": "adaptive"}}
        status, first = post(f"{api.url}/v1/messages", {**body([user(text("go"))]), **adaptive})
        assert status == 200
        thinking, tool_use = first["content"]
        assert thinking["signature"] == sign("Look first.")
        dropped = [user(text("go")), assistant(tool_use), user(result("t1"))]
        status, answer = post(f"{api.url}/v1/messages", {**body(dropped), **adaptive})
        assert status == 400 and "must start with a thinking block" in answer["error"]["message"]
        kept = [user(text("go")), assistant(thinking, tool_use), user(result("t1"))]
        status, _ = post(f"{api.url}/v1/messages", {**body(kept), **adaptive})
        assert status == 200


def test_thinking_blocks_come_first_and_are_not_last() -> None:
    signed = {"type": "thinking", "thinking": "hm", "signature": sign("hm")}
    with FakeAnthropicServer([OK]) as api:
        refused(
            api,
            {
                **body([user(text("go")), assistant(text("a"), signed), user(text("b"))]),
                "thinking": {"type": "adaptive"},
            },
            "messages.1.content.0: If an assistant message contains any thinking blocks, the "
            "first block must be `thinking` or `redacted_thinking`. Found `text`.",
        )
        refused(
            api,
            {**body([user(text("go")), assistant(signed)])},
            "messages.1.content.0: When thinking is disabled, an `assistant` message in the "
            "final position cannot contain `thinking`. To use thinking blocks, enable "
            "`thinking` in your request.",
        )


def test_signatures_are_verified() -> None:
    forged = {"type": "thinking", "thinking": "edited", "signature": sign("original")}
    with FakeAnthropicServer([OK]) as api:
        adaptive = {"thinking": {"type": "adaptive"}}
        refused(
            api,
            {**body(_loop(forged)), **adaptive},
            "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest "
            "assistant message cannot be modified. These blocks must remain as they were in the "
            "original response.",
        )
        older = [*_loop(forged), assistant(text("done")), user(text("next"))]
        refused(
            api,
            {**body(older), **adaptive},
            "messages.1.content.0: Invalid `signature` in `thinking` block",
        )
        redacted = {"type": "redacted_thinking", "data": "bm9uY2U=.forged"}
        refused(
            api,
            {**body(_loop(redacted)), **adaptive},
            "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest "
            "assistant message cannot be modified. These blocks must remain as they were in the "
            "original response.",
        )


def test_prompt_too_long_by_the_documented_token_rule() -> None:
    with FakeAnthropicServer([OK], context_window=1_000) as api:
        payload = body([user(text("x" * 4_000))])
        tokens = math.ceil(
            len(
                json.dumps(
                    {"messages": payload["messages"], "system": None, "tools": None},
                    separators=(",", ":"),
                    sort_keys=True,
                ).encode()
            )
            / 4
        )
        assert tokens == count_input_tokens(payload) > 1_000
        refused(api, payload, f"prompt is too long: {tokens} tokens > 1000 maximum")
        assert api.problems() == ["1 scripted turn(s) were never requested"]  # not a defect
        status, answer = post(f"{api.url}/v1/messages", body([user(text("x" * 100))]))
        assert status == 200 and answer["usage"]["input_tokens"] == count_input_tokens(
            body([user(text("x" * 100))])
        )


def test_unknown_model_is_not_found(api: FakeAnthropicServer) -> None:
    status, answer = post(f"{api.url}/v1/messages", {**body([user(text("hi"))]), "model": "gpt-4"})
    assert status == 404
    assert answer == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "model: gpt-4"},
    }


# -- the OpenAI-compatible fake ---------------------------------------------------------


def chat(messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": "qwen", "messages": messages, **extra}


def test_vllm_context_length_error_and_models_card() -> None:
    with FakeOpenAIServer([OK], context_window=100, served_model="qwen") as server:
        status, models = get(f"{server.base_url}/models")
        assert status == 200 and models["data"][0]["max_model_len"] == 100
        payload = chat([{"role": "user", "content": "x" * 300}], max_tokens=50)
        status, answer = post(f"{server.base_url}/chat/completions", payload)
        prompt = math.ceil(
            len(
                json.dumps(
                    {"messages": payload["messages"], "tools": None},
                    separators=(",", ":"),
                    sort_keys=True,
                ).encode()
            )
            / 4
        )
        assert status == 400
        assert answer == {
            "error": {
                "message": f"This model's maximum context length is 100 tokens. However, you "
                f"requested {prompt + 50} tokens ({prompt} in the messages, 50 in the "
                "completion). Please reduce the length of the messages or completion.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        }
        status, answer = post(
            f"{server.base_url}/chat/completions", chat([{"role": "user", "content": "x" * 400}])
        )
        assert status == 400 and "However, your request has" in answer["error"]["message"]
        status, answer = post(
            f"{server.base_url}/chat/completions",
            {**chat([{"role": "user", "content": "hi"}]), "model": "other"},
        )
        assert status == 404 and answer["error"]["message"] == "The model `other` does not exist."
        assert server.remaining == 1


def test_ollama_cuts_an_oversized_prompt_silently_and_the_fake_says_so() -> None:
    """Ollama's /v1 does not refuse a prompt over its context: it answers 200 with what it
    kept of it. The fake does the same and counts it as a problem."""
    with FakeOpenAIServer([OK], context_window=50, flavor="ollama", served_model="qwen") as server:
        status, models = get(f"{server.base_url}/models")
        assert "max_model_len" not in models["data"][0]
        status, show = post(f"{server.url}/api/show", {"model": "qwen"})
        assert status == 200 and "num_ctx" not in show["parameters"]
        assert show["model_info"]["qwen2.context_length"] == 131_072
        status, answer = post(
            f"{server.base_url}/chat/completions", chat([{"role": "user", "content": "x" * 400}])
        )
        assert status == 200 and answer["usage"]["prompt_tokens"] == 50 - (50 - 5) // 2
        assert server.truncated == [server.prompt_tokens[0]]
        with pytest.raises(AssertionError, match="cut silently to the 50-token context"):
            server.assert_complete()


def test_llamacpp_and_litellm_overflow_errors() -> None:
    with FakeOpenAIServer([OK], context_window=100, flavor="llamacpp") as server:
        payload = chat([{"role": "user", "content": "x" * 400}])
        status, answer = post(f"{server.base_url}/chat/completions", payload)
        prompt = count_prompt_tokens(payload)
        assert status == 400 and answer == {
            "error": {
                "code": 400,
                "message": f"request ({prompt} tokens) exceeds the available context size "
                "(100 tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt,
                "n_ctx": 100,
            }
        }
    with FakeOpenAIServer([OK], context_window=100, flavor="litellm") as server:
        status, answer = post(f"{server.base_url}/chat/completions", payload)
        assert status == 400 and answer["error"]["code"] == "400"
        message = answer["error"]["message"]
        assert message.startswith("litellm.ContextWindowExceededError: ")
        assert (
            f"maximum context length is 100 tokens. However, your messages resulted in {prompt}"
            in message
        )


def test_openai_tool_call_pairing() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}
    with FakeOpenAIServer([OK]) as server:
        missing = chat(
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "user", "content": "?"},
            ]
        )
        status, answer = post(f"{server.base_url}/chat/completions", missing)
        assert status == 400 and answer["error"]["message"] == (
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'. The following tool_call_ids did not have response "
            "messages: c1"
        )
        stray = chat(
            [
                {"role": "user", "content": "go"},
                {"role": "tool", "tool_call_id": "c9", "content": "x"},
            ]
        )
        status, answer = post(f"{server.base_url}/chat/completions", stray)
        assert status == 400 and answer["error"]["message"] == (
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'."
        )
        assert server.remaining == 1
