"""The Agent SDK's control protocol: requests both ways over the stream-json lines.

The program (the SDK's ``Query``) sends ``control_request`` lines to us (``initialize``,
``interrupt``, ``set_permission_mode``...: ``cli/sdk_wire.py`` types them) and each gets one
``control_response`` (``success`` with a payload, or ``error`` with a message and maybe an
``error_code``). We send it ``control_request`` lines of our own (``can_use_tool``,
``hook_callback``, ``mcp_message``) and wait for its ``control_response``; when we stop
waiting (the turn was interrupted) we say so with a ``control_cancel_request``.
``ControlChannel`` is that plumbing; what the requests mean is ``cli/sdk_mode.py``'s and
``cli/sdk_requests.py``'s business.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from tether.cli.stream_input import ResponseBody

Write = Callable[[dict[str, Any]], None]


class ControlError(Exception):
    """The program answered one of our requests with an error, or went away."""


class ControlTimeout(ControlError):
    """The program did not answer one of our requests in time (or went away first)."""


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
            raise ControlTimeout(self._closed)
        request_id = str(uuid.uuid4())
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write({"type": "control_request", "request_id": request_id, "request": body})
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            self._cancel(request_id)
            raise ControlTimeout(
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

    def respond_error(self, request_id: str, message: str, code: str | None = None) -> None:
        body = {"subtype": "error", "request_id": request_id, "error": message}
        if code is not None:
            body["error_code"] = code
        self._write({"type": "control_response", "response": body})

    def close(self, reason: str) -> None:
        """The program closed its input: nothing we asked will be answered."""
        self._closed = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlTimeout(reason))
