"""A client's malformed answer to one of the daemon's requests (a permission question, an
edit) fails that request at once, saying so: the turn waiting on it goes on (a question
that cannot be answered is a "no"), instead of waiting for an answer that already came."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.server import JsonRPCServer

from tether.lsp.io import handle_body


class Sink:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("error", ["x", 5, {"message": "no code"}, [1]])
async def test_a_malformed_error_answer_fails_the_request(error: object) -> None:
    server = JsonRPCServer(JsonRPCProtocol, default_converter)
    protocol = server.protocol
    protocol.set_writer(Sink())  # type: ignore[arg-type]
    future = protocol.send_request("tether/requestPermission", {})
    (msg_id,) = protocol._request_futures  # pyright: ignore[reportPrivateUsage]
    body = {"jsonrpc": "2.0", "id": msg_id, "error": error}
    handle_body(protocol, json.dumps(body).encode())
    with pytest.raises(JsonRpcException, match="malformed answer"):
        await asyncio.wait_for(asyncio.wrap_future(future), 5)
