"""The fake Ollama answers /api/chat as Ollama does (each rule's evidence is in
``tether/testing/fake_ollama.py``): what it refuses, what it cuts, how it streams."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from tether.testing.fake_ollama import IMAGE_TOKENS, FakeOllamaServer

OK = [{"type": "text", "text": "ok"}]
LONG = [{"role": "user", "content": "old " * 400}, {"role": "assistant", "content": "ok"}]


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": "qwen", "messages": [{"role": "user", "content": "hi"}], **fields}


def post(server: FakeOllamaServer, body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(f"{server.base_url}/api/chat", json=body, timeout=10)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}, "content"),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"function": {"name": "Read", "arguments": "{}"}}],
                    }
                ]
            },
            "arguments",
        ),
        ({"messages": [{"role": "user", "content": "hi", "images": [1]}]}, "images"),
        ({"options": {"num_ctx": "8192"}}, "num_ctx"),
    ],
)
def test_a_body_go_cannot_decode_is_answered_400(change: dict[str, Any], said: str) -> None:
    with FakeOllamaServer([OK], served_model="qwen") as server:
        answer = post(server, chat(**change))
        assert answer.status_code == 400 and answer.json()["error"].startswith("json: ")
        assert said in answer.json()["error"]
        assert server.remaining == 1  # a refusal consumes no turn


def test_model_names_capabilities_and_the_answer() -> None:
    with FakeOllamaServer([OK, OK], served_model="qwen", capabilities=("completion",)) as server:
        missing = post(server, chat(model="llama3"))
        assert missing.status_code == 404
        assert missing.json() == {"error": "model 'llama3' not found"}
        think = post(server, chat(think=True))
        assert (
            think.status_code == 400 and think.json()["error"] == '"qwen" does not support thinking'
        )
        tools = post(server, chat(tools=[{"type": "function", "function": {"name": "Read"}}]))
        assert tools.json()["error"].endswith("qwen:latest does not support tools")
        tagged = post(server, chat(model="qwen:latest", options={"num_ctx": 4096}))
        assert tagged.status_code == 200
        assert tagged.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in tagged.text.splitlines()]
        assert [line["message"]["content"] for line in lines] == ["o", "k", ""]
        assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "stop"
        assert lines[-1]["prompt_eval_count"] > 0 and lines[-1]["eval_count"] == 20
        whole = post(server, chat(stream=False, options={"num_ctx": 4096})).json()
        assert whole["message"]["content"] == "ok" and whole["done"] is True
        assert server.num_ctx == [4096, 4096]
        assert server.remaining == 0 and len(server.problems()) == 3  # the three refusals


def test_over_num_ctx_by_default_ollama_drops_the_oldest_messages_silently() -> None:
    with FakeOllamaServer([OK], served_model="qwen") as server:
        body = chat(messages=[*LONG, {"role": "user", "content": "new"}], options={"num_ctx": 200})
        answer = post(server, {**body, "stream": False})
        assert answer.status_code == 200 and answer.json()["prompt_eval_count"] < 200
        assert len(server.truncated) == 1
        assert any("cut silently" in problem for problem in server.problems())


def test_over_num_ctx_with_truncate_false_is_refused_with_the_numbers() -> None:
    with FakeOllamaServer([OK], served_model="qwen") as server:
        body = chat(messages=[*LONG, {"role": "user", "content": "new"}], options={"num_ctx": 200})
        answer = post(server, {**body, "truncate": False})
        assert answer.status_code == 400
        inner = json.loads(answer.json()["error"])["error"]  # llama-server's, relayed as text
        assert inner["type"] == "exceed_context_size_error" and inner["n_ctx"] == 200
        assert "exceeds the available context size (200 tokens)" in inner["message"]
        assert server.truncated == [] and server.remaining == 1


def test_shift_false_refuses_a_last_message_that_alone_does_not_fit() -> None:
    with FakeOllamaServer([OK], served_model="qwen") as server:
        body = chat(messages=[{"role": "user", "content": "x" * 2_000}], options={"num_ctx": 200})
        answer = post(server, {**body, "shift": False})
        assert answer.status_code == 400
        assert answer.json()["error"].startswith("the prompt is longer than the context length")


def test_an_ollama_before_0_12_6_ignores_truncate_and_cuts() -> None:
    with FakeOllamaServer([OK], served_model="qwen", knows_truncate=False) as server:
        body = chat(messages=[*LONG, {"role": "user", "content": "new"}], options={"num_ctx": 200})
        answer = post(server, {**body, "truncate": False, "shift": False, "stream": False})
        assert answer.status_code == 200 and len(server.truncated) == 1


def test_a_request_without_num_ctx_is_a_problem() -> None:
    with FakeOllamaServer([OK], served_model="qwen", context_window=8_192) as server:
        assert post(server, chat()).status_code == 200
        assert server.num_ctx == [None]
        assert any("sent no options.num_ctx" in problem for problem in server.problems())


def test_an_error_after_the_stream_began_is_an_error_line() -> None:
    script = [{"blocks": [{"type": "text", "text": "partial"}], "fault": "overloaded_mid_stream"}]
    with FakeOllamaServer(script, served_model="qwen") as server:
        answer = post(server, chat(options={"num_ctx": 4096}))
        assert answer.status_code == 200
        last = json.loads(answer.text.splitlines()[-1])
        assert last == {"error": "an error was encountered while running the model"}


def test_an_image_costs_what_ollama_counts_not_its_base64() -> None:
    plain = chat(options={"num_ctx": 8_192}, stream=False)
    with FakeOllamaServer([OK, OK, OK], served_model="qwen") as server:
        base = post(server, plain).json()["prompt_eval_count"]
        for data in ("A" * 400, "A" * 40_000):  # a small and a large image: the same cost
            message = {"role": "user", "content": "hi", "images": [data, data]}
            answer = post(server, {**plain, "messages": [message]})
            assert answer.json()["prompt_eval_count"] == base + 2 * IMAGE_TOKENS


def test_a_count_without_the_cached_front_leaves_out_what_the_last_request_shared() -> None:
    first = [{"role": "user", "content": "old " * 400}]
    later = [*first, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "new"}]
    with FakeOllamaServer([OK, OK, OK], served_model="qwen", counts_cached=False) as server:
        body = chat(options={"num_ctx": 8_192}, stream=False)
        full = post(server, {**body, "messages": first}).json()["prompt_eval_count"]
        again = post(server, {**body, "messages": later}).json()["prompt_eval_count"]
        assert full > 400 and again < 50  # only what was new was counted
        assert server.truncated == [] and server.prompt_tokens[1] > full  # nothing was cut
