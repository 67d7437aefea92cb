"""The Agent SDK's control protocol: requests both ways over the stream-json lines.

The program (``claude_agent_sdk``'s ``Query``) sends ``control_request`` lines to us —
``initialize`` (with its hook callbacks), ``interrupt``, ``set_permission_mode``,
``set_model``, ``mcp_status``, ``stop_task`` — and each gets one ``control_response``
(``success`` with a payload, or ``error`` with a message). We send it ``control_request``
lines of our own — ``can_use_tool``, ``hook_callback``, ``mcp_message`` — and wait for its
``control_response``; when we stop waiting (the turn was interrupted) we say so with a
``control_cancel_request``. ``ControlChannel`` is that plumbing; what the requests mean is
``cli/sdk_mode.py``'s business.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from tether.cli.stream_input import ResponseBody

Write = Callable[[dict[str, Any]], None]


class ControlError(Exception):
    """The program answered one of our requests with an error, or went away."""


class _Request(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class HookMatcherConfig(_Request):
    matcher: str | None = None
    callback_ids: list[str] = Field(default_factory=lambda: list[str](), alias="hookCallbackIds")
    timeout: float | None = None
    """Seconds."""
    on_failure: str | None = Field(default=None, alias="onFailure")
    """``continue`` or ``block`` (anything else counts as ``block``, as in Claude Code)."""

    @property
    def blocks_on_failure(self) -> bool:
        return self.on_failure is not None and self.on_failure != "continue"


class SdkAgent(_Request):
    """An agent the program defines (``ClaudeAgentOptions.agents``)."""

    description: str
    prompt: str
    tools: list[str] | None = None
    model: str | None = None
    """An alias, a model id, or ``inherit``."""


class InitializeRequest(_Request):
    subtype: Literal["initialize"]
    hooks: dict[str, list[HookMatcherConfig]] | None = None
    agents: dict[str, SdkAgent] | None = None


class InterruptRequest(_Request):
    subtype: Literal["interrupt"]


class SetPermissionModeRequest(_Request):
    subtype: Literal["set_permission_mode"]
    mode: str


class SetModelRequest(_Request):
    subtype: Literal["set_model"]
    model: str | None = None


class McpStatusRequest(_Request):
    subtype: Literal["mcp_status"]


class StopTaskRequest(_Request):
    subtype: Literal["stop_task"]
    task_id: str


IncomingRequest = Annotated[
    InitializeRequest
    | InterruptRequest
    | SetPermissionModeRequest
    | SetModelRequest
    | McpStatusRequest
    | StopTaskRequest,
    Field(discriminator="subtype"),
]
_REQUESTS: TypeAdapter[IncomingRequest] = TypeAdapter(IncomingRequest)
SUPPORTED = (
    "initialize",
    "interrupt",
    "set_permission_mode",
    "set_model",
    "mcp_status",
    "stop_task",
)


def parse_request(body: dict[str, Any]) -> IncomingRequest:
    """A request the program sent; raises ``ControlError`` with the message its
    ``control_response`` should carry."""
    subtype = body.get("subtype")
    if subtype not in SUPPORTED:
        raise ControlError(f"Unsupported control request subtype: {subtype}")
    try:
        return _REQUESTS.validate_python(body)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or '(request)'}: {err['msg']}"
            for err in e.errors(include_url=False)[:3]
        )
        raise ControlError(f"bad {subtype} request: {problems}") from None


class ControlChannel:
    """Our side of the control protocol over one line writer."""

    def __init__(self, write: Write) -> None:
        self._write = write
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._closed: str | None = None

    @property
    def waiting(self) -> int:
        """Requests of ours still unanswered."""
        return len(self._pending)

    async def request(
        self, body: dict[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a request and wait for its answer's payload; raises ``ControlError`` when the
        program answers with an error, goes away, or does not answer within ``timeout``."""
        if self._closed is not None:
            raise ControlError(self._closed)
        request_id = str(uuid.uuid4())
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write({"type": "control_request", "request_id": request_id, "request": body})
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            self._cancel(request_id)
            raise ControlError(
                f"no answer to {body.get('subtype')} within {timeout:g}s"  # type: ignore[str-format]
            ) from None
        except asyncio.CancelledError:
            self._cancel(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)

    def _cancel(self, request_id: str) -> None:
        if request_id in self._pending and self._closed is None:
            self._write({"type": "control_cancel_request", "request_id": request_id})

    def deliver(self, response: ResponseBody) -> bool:
        """An answer from the program; False when nothing waits for it."""
        future = self._pending.get(response.request_id)
        if future is None or future.done():
            return False
        if response.subtype == "error":
            future.set_exception(ControlError(response.error or "the program reported an error"))
        else:
            future.set_result(response.response or {})
        return True

    def respond(self, request_id: str, payload: dict[str, Any]) -> None:
        body = {"subtype": "success", "request_id": request_id, "response": payload}
        self._write({"type": "control_response", "response": body})

    def respond_error(self, request_id: str, message: str) -> None:
        body = {"subtype": "error", "request_id": request_id, "error": message}
        self._write({"type": "control_response", "response": body})

    def close(self, reason: str) -> None:
        """The program closed its input: nothing we asked will be answered."""
        self._closed = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError(reason))
