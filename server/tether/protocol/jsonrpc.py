"""The JSON-RPC 2.0 envelope both front doors check before a message reaches a library.

pygls and the ACP SDK trust the envelope: a ``method`` that is a number, or an ``id`` that
is an object, raised ``TypeError`` deep inside them and came back as -32603 with a Python
traceback (or not at all). A message these rules refuse gets -32600 Invalid Request naming
the field, with the message's id when that id is usable, else ``null`` (as JSON-RPC asks).

Ids are integers or strings (LSP's ``integer | string``; JSON-RPC's fractional numbers are
"SHOULD NOT"). ``true`` is refused too: in Python it equals ``1`` and would answer the
wrong request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MsgId = int | str | None


def usable_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


@dataclass(frozen=True)
class EnvelopeError:
    """Why a message is refused, and the id to answer it with."""

    msg_id: MsgId
    message: str
    code: int = INVALID_REQUEST


def envelope_error(message: object) -> EnvelopeError | None:
    """None for a well-formed request, notification or response; else what is wrong."""
    if not isinstance(message, dict):
        return EnvelopeError(None, "Invalid Request: not a JSON-RPC 2.0 object")
    fields: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
    raw_id = fields.get("id")
    msg_id: MsgId = raw_id if usable_id(raw_id) else None
    if fields.get("jsonrpc") != "2.0":
        return EnvelopeError(msg_id, 'Invalid Request: "jsonrpc" must be "2.0"')
    method = fields.get("method")
    if "method" in fields and not isinstance(method, str):
        return EnvelopeError(msg_id, 'Invalid Request: "method" must be a string')
    if "id" in fields and raw_id is not None and not usable_id(raw_id):
        return EnvelopeError(None, 'Invalid Request: "id" must be an integer or a string')
    if method is None and "id" not in fields:
        return EnvelopeError(None, 'Invalid Request: no "method" and no "id"')
    if method is not None and raw_id is None and "id" in fields:
        return EnvelopeError(None, 'Invalid Request: a request\'s "id" must not be null')
    params = fields.get("params")
    if params is not None and not isinstance(params, dict | list):
        return EnvelopeError(msg_id, '"params" must be an object or an array', INVALID_PARAMS)
    return None
