"""``--input-format stream-json``: the lines a program writes to Tether's stdin.

One JSON object per line, as the Agent SDKs write them
(``claude_agent_sdk._internal.query`` and ``transport/subprocess_cli.py``):

- ``{"type": "user", "message": {"role": "user", "content": "text" | [blocks]}, ...}``: a
  prompt; blocks are ``text`` and ``image`` (base64 ``source``);
- ``{"type": "control_request", "request_id": ..., "request": {"subtype": ...}}``: the
  program asks something of us (``initialize``, ``interrupt``, ``set_permission_mode``...);
- ``{"type": "control_response", "response": {"subtype": "success"|"error",
  "request_id": ..., "response"|"error": ...}}``: the answer to one of our requests
  (``can_use_tool``, ``hook_callback``, ``mcp_message``);
- ``{"type": "control_cancel_request", "request_id": ...}``: the program gave up on a
  request it sent.

A line that is not one of these raises ``InputError`` naming the line and what is wrong with
it; the caller reports it and goes on with the next line.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from tether.core.json_input import JsonTooDeepError, parse_json
from tether.protocol.content import ContentBlock, ImageContent, TextContent


class InputError(ValueError):
    """A line of the input stream Tether cannot use."""


class _Line(BaseModel):
    # Programs send fields we do not use (session_id, uuid, client_composed...).
    model_config = ConfigDict(extra="allow")


class TextPart(_Line):
    type: Literal["text"]
    text: str


class ImageSource(_Line):
    type: Literal["base64"]
    media_type: str
    data: str


class ImagePart(_Line):
    type: Literal["image"]
    source: ImageSource


PromptPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class PromptMessage(_Line):
    role: Literal["user"]
    content: str | list[PromptPart]


class UserLine(_Line):
    type: Literal["user"]
    message: PromptMessage
    parent_tool_use_id: str | None = None
    uuid: str | None = None
    """The program's id for the prompt (``cancel_async_message`` names it)."""

    def blocks(self) -> list[ContentBlock]:
        content = self.message.content
        if isinstance(content, str):
            return [TextContent(text=content)]
        out: list[ContentBlock] = []
        for part in content:
            if isinstance(part, TextPart):
                out.append(TextContent(text=part.text))
            else:
                out.append(ImageContent(mime_type=part.source.media_type, data=part.source.data))
        return out


class ControlRequestLine(_Line):
    type: Literal["control_request"]
    request_id: str
    request: dict[str, Any]


class ResponseBody(_Line):
    subtype: Literal["success", "error"]
    request_id: str
    response: dict[str, Any] | None = None
    error: str | None = None


class ControlResponseLine(_Line):
    type: Literal["control_response"]
    response: ResponseBody


class ControlCancelLine(_Line):
    type: Literal["control_cancel_request"]
    request_id: str


InputLine = Annotated[
    UserLine | ControlRequestLine | ControlResponseLine | ControlCancelLine,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[InputLine] = TypeAdapter(InputLine)
KINDS = ("user", "control_request", "control_response", "control_cancel_request")


def parse_line(line: str) -> InputLine | None:
    """One line of input; None for a blank line."""
    text = line.strip()
    if not text:
        return None
    try:
        data: Any = parse_json(text)
    except JsonTooDeepError as e:
        raise InputError(f"{e}: {text[:200]}") from None
    except ValueError as e:
        raise InputError(f"not JSON ({e}): {text[:200]}") from None
    fields: dict[str, Any] = cast(dict[str, Any], data) if isinstance(data, dict) else {}
    if fields.get("type") not in KINDS:
        kind: object = fields.get("type") if fields else type(cast(object, data)).__name__
        raise InputError(f"unknown message type {kind!r} (expected one of {', '.join(KINDS)})")
    try:
        return _ADAPTER.validate_python(fields)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or '(line)'}: {err['msg']}"
            for err in e.errors(include_url=False)[:3]
        )
        raise InputError(f"bad {fields['type']} message: {problems}") from None


async def stdin_lines() -> AsyncIterator[str]:
    """Lines of stdin as they arrive (a thread reads, so nothing blocks the loop and any
    kind of stdin works: pipe, file, terminal)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def put(item: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the run is over and its loop closed
            loop.call_soon_threadsafe(queue.put_nowait, item)

    # Resolved here, not in the thread: the warm daemon gives each call its own stdin,
    # which a new thread (starting with an empty context) would not see.
    source = sys.stdin
    binary = getattr(source, "buffer", None)

    def read() -> None:
        try:
            if binary is None:  # a text stream standing in for stdin
                for text in source:
                    put(text)
                return
            for raw in binary:
                put(raw.decode("utf-8", "replace"))
        finally:
            # Whatever happened to stdin, the run learns that no more input comes.
            put(None)

    threading.Thread(target=read, name="stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        yield line
