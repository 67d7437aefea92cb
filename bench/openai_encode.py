"""Per-request cost of building the chat completions body (the OpenAI-compatible provider)
as a Bash-echo session grows: at turn 10 and at turn 1,000, for the whole-history path the
provider used before (convert every message, then the SDK's parameter transform and JSON
encoding of all of it) and for the joined cached encodings it uses now (``openai_body``).
The Messages API encoder (``anthropic_body``) and Ollama's native one (``ollama_body``) are
shown alongside. Target: the cost at turn
1,000 about that at turn 10 (O(new messages)).

    python bench/openai_encode.py [--turns 1000] [--samples 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms

from tether.core.messages import Message, TextBlock, ToolUseBlock, tool_result, user_text
from tether.providers.anthropic_body import BodyEncoder
from tether.providers.base import ModelRequest, SystemBlock, ToolSpec
from tether.providers.convert_openai import request_messages, tool_params
from tether.providers.ollama_body import ChatBodyEncoder as OllamaBodyEncoder
from tether.providers.openai_body import ChatBodyEncoder
from tether.tools.registry import core_tools

SYSTEM = [SystemBlock("You are a coding agent. " * 200, cache=True)]


def turn(n: int) -> list[Message]:
    """One round-trip of a Bash-echo session: the call and its result."""
    use = ToolUseBlock(id=f"call_{n}", name="Bash", input={"command": f"echo step {n}"})
    thinking = TextBlock(text=f"Running step {n} of the plan, then checking the output.")
    return [
        Message(role="assistant", content=[thinking, use]),
        Message(role="user", content=[tool_result(f"call_{n}", f"step {n}\n")]),
    ]


def tools() -> list[ToolSpec]:
    return [t.spec() for t in core_tools()]


async def sdk_whole(request: ModelRequest) -> bytes:
    """The provider's former body: every message converted, the SDK's transform, JSON."""
    import json

    from openai._utils import async_maybe_transform
    from openai.types.chat import completion_create_params

    params = await async_maybe_transform(
        {
            "model": request.model,
            "messages": request_messages(request),
            "tools": tool_params(request.tools),
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        completion_create_params.CompletionCreateParamsStreaming,
    )
    return json.dumps(params).encode()


async def timed(build: Callable[[ModelRequest], Any], requests: list[ModelRequest]) -> list[float]:
    samples: list[float] = []
    for request in requests:
        start = time.perf_counter()
        result = build(request)
        if asyncio.iscoroutine(result):
            await result  # only the former path is async (the SDK transform)
        samples.append(time.perf_counter() - start)
    return samples


def growing(at: int, samples: int, spec: list[ToolSpec]) -> list[ModelRequest]:
    """``samples`` consecutive requests of one session, the first at turn ``at``."""
    history: list[Message] = [user_text("Run the steps.")]
    for n in range(at):
        history += turn(n)
    requests: list[ModelRequest] = []
    for n in range(at, at + samples):
        requests.append(
            ModelRequest(
                model="qwen2.5-coder",
                system=SYSTEM,
                messages=list(history),
                tools=spec,
                max_tokens=4096,
            )
        )
        history += turn(n)
    return requests


def openai_joined() -> Callable[[ModelRequest], bytes]:
    encoder = ChatBodyEncoder()  # one per session, as the provider keeps it
    return lambda r: encoder.body(r, max_tokens=None, stream=True)


def ollama_joined() -> Callable[[ModelRequest], bytes]:
    encoder = OllamaBodyEncoder()
    return lambda r: encoder.body(r, num_ctx=32_768, num_predict=4096, think=None, stream=True)


def anthropic_joined() -> Callable[[ModelRequest], bytes]:
    encoder = BodyEncoder()
    return lambda r: encoder.body(r, max_tokens=4096, thinking=None, stream=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()
    spec = tools()
    print(f"per-request body build, median of {args.samples} consecutive requests")
    print(f"{'path':<44}{'turn 10':>12}{'turn ' + str(args.turns):>14}{'ratio':>8}")
    rows: list[tuple[str, Callable[[], Callable[[ModelRequest], Any]]]] = [
        ("openai, whole history + SDK transform (before)", lambda: sdk_whole),
        ("openai, joined cached encodings (now)", openai_joined),
        ("anthropic, joined cached encodings", anthropic_joined),
        ("ollama /api/chat, joined cached encodings", ollama_joined),
    ]
    for name, make in rows:
        medians: list[float] = []
        for at in (10, args.turns):
            build = make()
            requests = growing(at, args.samples + 1, spec)
            # The first request of a session fills the cache: measured are the ones after.
            await timed(build, requests[:1])
            samples = await timed(build, requests[1:])
            medians.append(statistics.median(samples))
        ratio = medians[1] / medians[0] if medians[0] else float("nan")
        print(f"{name:<44}{ms(medians[0]):>12}{ms(medians[1]):>14}{ratio:>7.1f}x")


if __name__ == "__main__":
    asyncio.run(main())
