"""Helpers for the provider tests (imported by name; conftest.py makes ``tether`` importable)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import tether
from tether.core.messages import Message, user_text
from tether.providers.base import ModelRequest, StreamEvent, SystemBlock, ToolSpec

MODEL = "claude-sonnet-4-6"
API_HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}
"""What every real client sends to the Messages API (the fake refuses requests without)."""
READ_TOOL = ToolSpec(
    name="Read",
    description="Read a file.",
    input_schema={"type": "object", "properties": {"file_path": {"type": "string"}}},
)


def make_request(
    messages: list[Message] | None = None,
    *,
    system: list[SystemBlock] | None = None,
    tools: list[ToolSpec] | None = None,
    cache_history: bool = True,
    model: str = MODEL,
) -> ModelRequest:
    return ModelRequest(
        model=model,
        system=system if system is not None else [SystemBlock("You are a test.")],
        messages=messages if messages is not None else [user_text("hello")],
        tools=tools if tools is not None else [READ_TOOL],
        cache_history=cache_history,
    )


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


def env_with_tether() -> dict[str, str]:
    """The environment for a child process that must import this checkout's ``tether``."""
    root = str(Path(tether.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}
