"""``--input-format stream-json``: the lines a program writes to Tether's stdin.

One JSON object per line, as the Agent SDKs write them
(``claude_agent_sdk._internal.query`` and ``transport/subprocess_cli.py``):

- ``{"type": "user", "message": {"role": "user", "content": "text" | [blocks]}, ...}``: a
  prompt (``prompt_blocks`` says which blocks; ``shouldQuery: false`` adds it to the
  conversation without a turn);
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
    """A line of the input stream Tether cannot use: ``kind`` and ``request_id`` say what
    it was meant to be, when that much could be read (a refused prompt ends in an error
    ``result``; a refused request gets an error answer)."""

    def __init__(self, message: str, kind: str | None = None, request_id: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.request_id = request_id


class _Line(BaseModel):
    # Programs send fields we do not use (session_id, uuid, client_composed...).
    model_config = ConfigDict(extra="allow")


class PromptMessage(_Line):
    role: Literal["user"]
    content: str | list[dict[str, Any]]


class UserLine(_Line):
    type: Literal["user"]
    message: PromptMessage
    parent_tool_use_id: str | None = None
    uuid: str | None = None
    """The program's id for the prompt (``cancel_async_message`` names it)."""
    should_query: bool = Field(default=True, alias="shouldQuery")
    """False: the text joins the conversation and waits for the next prompt (no turn)."""

    def blocks(self) -> list[ContentBlock]:
        """The prompt's blocks; raises ``InputError`` naming a block Tether cannot give the
        model (never drops one)."""
        content = self.message.content
        if isinstance(content, str):
            return [TextContent(text=content)]
        return [b for i, part in enumerate(content) for b in prompt_blocks(part, f"block {i}")]


def prompt_blocks(part: dict[str, Any], where: str) -> list[ContentBlock]:
    """One block of a prompt, as the Messages API takes it in a user message (what Claude
    Code passes on): ``text``; ``image`` with base64 data; ``document`` with a ``text``,
    ``base64`` PDF or ``content`` source (a PDF reaches the model as its text layer);
    ``search_result`` (its text blocks). Anything else raises ``InputError``."""
    kind = part.get("type")
    source: Any = part.get("source")
    src: dict[str, Any] = cast(dict[str, Any], source) if isinstance(source, dict) else {}
    if kind == "text" and isinstance(part.get("text"), str):
        return [TextContent(text=part["text"])]
    if kind == "image" and src.get("type") == "base64" and isinstance(src.get("data"), str):
        return [ImageContent(mime_type=str(src.get("media_type") or ""), data=src["data"])]
    if kind == "document":
        title = part.get("title") or part.get("context")
        head = f'<document title="{title}">' if isinstance(title, str) else "<document>"
        if src.get("type") == "text" and isinstance(src.get("data"), str):
            return [TextContent(text=f"{head}\n{src['data']}\n</document>")]
        if src.get("type") == "base64" and src.get("media_type") == "application/pdf":
            from tether.media.pdf import document_text

            text = document_text(str(src.get("data") or ""))
            return [TextContent(text=f"{head}\n[a PDF, as its text]\n{text}\n</document>")]
        if src.get("type") == "content" and isinstance(src.get("content"), list):
            inner = cast(list[Any], src["content"])
            return [
                b
                for j, item in enumerate(inner)
                if isinstance(item, dict)
                for b in prompt_blocks(cast(dict[str, Any], item), f"{where}, part {j}")
            ]
        raise InputError(
            f"{where}: a document with a {src.get('type')!r} source is not supported (Tether "
            "takes text, base64 PDF and content sources; fetch a URL or file and send it as "
            "data)"
        )
    if kind == "search_result" and isinstance(part.get("content"), list):
        items = cast(list[Any], part["content"])
        texts = [str(cast(dict[str, Any], i).get("text", "")) for i in items if isinstance(i, dict)]
        where_from = f'source="{part.get("source", "")}" title="{part.get("title", "")}"'
        head = f"<search_result {where_from}>"
        return [TextContent(text="\n".join([head, *texts, "</search_result>"]))]
    if kind == "image":
        raise InputError(
            f"{where}: an image with a {src.get('type')!r} source is not supported (send it "
            "as base64 data)"
        )
    raise InputError(
        f"{where}: a {kind!r} block cannot be part of a prompt (Tether takes text, image, "
        "document and search_result blocks)"
    )


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
    """One line of input; None for a blank line or a ``keep_alive``."""
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
    if fields.get("type") == "keep_alive":  # a heartbeat receivers ignore (the SDK's d.ts)
        return None
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
        request_id = fields.get("request_id")
        raise InputError(
            f"bad {fields['type']} message: {problems}",
            str(fields["type"]),
            request_id if isinstance(request_id, str) else None,
        ) from None


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
