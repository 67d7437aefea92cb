"""Wire errors of the LSP front door, drawn once: bad params, unknown sessions and requests
that cannot be carried out any more are -32602 with a message naming the problem; a session
file that cannot be written is -32603 with a message saying what to fix (the request was
fine; the machine is not); anything else stays a server fault (-32603, logged, its
traceback kept out of the answer by ``TetherProtocol``)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from tether.errors import SessionError, TranscriptWriteError
from tether.lsp.asks import AskError
from tether.lsp.params import InvalidParamsError
from tether.transcript.load import TranscriptDamagedError


def invalid(e: Exception) -> JsonRpcException:
    if isinstance(e, TranscriptWriteError):
        return JsonRpcInternalError(str(e))
    if isinstance(e, TranscriptDamagedError):
        return JsonRpcInvalidParams(str(e), data={"line": e.line, "lastGoodLine": e.last_good})
    return JsonRpcInvalidParams(str(e))


WIRE_ERRORS: tuple[type[Exception], ...] = (InvalidParamsError, SessionError, AskError)


def wire_errors(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Bad params, unknown sessions and requests that cannot be carried out any more become
    -32602 naming the problem (wire errors); anything else stays a server fault."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def run_async(*args: Any) -> Any:
            try:
                return await handler(*args)
            except WIRE_ERRORS as e:
                raise invalid(e)

        return run_async

    @functools.wraps(handler)
    def run(*args: Any) -> Any:
        try:
            return handler(*args)
        except WIRE_ERRORS as e:
            raise invalid(e)

    return run
