"""The machinery shared by the fake model API servers.

``FakeModelServer`` is a real HTTP/1.1 server (stdlib ``ThreadingHTTPServer`` on a daemon
thread) that plays a script (``tether.providers.script``): every request consumes the next
turn, and a subclass renders that turn in its API's wire format through a ``Reply`` (JSON,
or a chunked ``text/event-stream`` that can also be cut off mid-body). It fails loudly: an
unmet ``expect``, a request after the last turn or an unknown path is answered with HTTP 500
(``x-should-retry: false``) and recorded in ``errors``.

``serve_main`` runs a server as a process for end-to-end tests of the real daemon.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self, cast

from tether.providers.script import Script, ScriptTurn, parse_script
from tether.testing.body_parser import BodyParser

SUMMARY_MARKER = "is about to be replaced by a summary"
"""A phrase of Tether's compaction instructions (prompts/compaction/instructions.md)."""
SCRIPT_ERROR_HEADERS = {"x-should-retry": "false"}
"""Script failures must not be retried: each retry would consume (and fail) another turn."""


class ClientGone(Exception):
    """The client closed the connection while we were still writing, or before its request
    was complete (a request cancelled while its body was on the way)."""


class Reply:
    """The response side of one request."""

    def __init__(
        self,
        handler: BaseHTTPRequestHandler,
        chunk_delay_ms: int = 0,
        log: list[tuple[float, str]] | None = None,
        hold: Hold | None = None,
    ):
        self._handler = handler
        self._delay_s = chunk_delay_ms / 1000
        self._log = log
        self._hold = hold
        self._events = 0

    @property
    def request_headers(self) -> dict[str, str]:
        """The request's headers, names lower-cased (``header_fields``)."""
        return header_fields(self._handler)

    def json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(body).encode()
        self._handler.send_response(status)
        self._handler.send_header("Content-Type", "application/json")
        self._handler.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self._handler.send_header(name, value)
        self._handler.end_headers()
        self._write(payload)

    def start_events(self, content_type: str = "text/event-stream") -> None:
        """A 200 with a chunked body of events (or of JSON lines: ``line``)."""
        self._handler.send_response(200)
        self._handler.send_header("Content-Type", content_type)
        self._handler.send_header("Cache-Control", "no-cache")
        self._handler.send_header("Transfer-Encoding", "chunked")
        self._handler.end_headers()
        self._write(b"")

    def sse(self, data: Any, *, event: str | None = None) -> None:
        """One server-sent event in its own HTTP chunk (``data`` JSON-encoded unless str)."""
        if self._delay_s:
            time.sleep(self._delay_s)
        text = data if isinstance(data, str) else json.dumps(data)
        frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
        self._chunk(frame.encode(), text)

    def line(self, data: Any) -> None:
        """One JSON line (newline-delimited JSON, as Ollama streams) in its own chunk."""
        if self._delay_s:
            time.sleep(self._delay_s)
        text = json.dumps(data)
        self._chunk(f"{text}\n".encode(), text)

    def _chunk(self, payload: bytes, text: str) -> None:
        self._write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
        if self._log is not None:
            self._log.append((time.monotonic(), text))
        self._events += 1
        if self._hold is not None and self._events == self._hold.after_events:
            self._hold.reached.set()
            self._hold.released.wait()

    def end(self) -> None:
        """The terminating chunk: the body is complete."""
        self._write(b"0\r\n\r\n")

    def cut(self) -> None:
        """Close the connection abruptly, without finishing the body (or sending one)."""
        self._handler.close_connection = True
        try:
            self._handler.wfile.flush()
            self._handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _write(self, data: bytes) -> None:
        try:
            self._handler.wfile.write(data)
            self._handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ClientGone from exc


class Hold:
    """A streamed reply stopped after ``after_events`` events until ``release`` (or the
    server stops): a turn that is surely mid-stream, for as long as a test needs."""

    def __init__(self, after_events: int) -> None:
        self.after_events = after_events
        self.reached = threading.Event()
        """Set when the reply stopped (the events before it were flushed)."""
        self.released = threading.Event()

    def release(self) -> None:
        self.released.set()


Refusal = tuple[int, Any] | Callable[[Reply], None]
"""How a fake refuses a request: (status, error body), or a function writing the answer."""


class FakeModelServer:
    """Base of the fake API servers; subclasses set ``route`` and render turns."""

    route: ClassVar[str]
    label: ClassVar[str] = "fake server"

    def __init__(
        self,
        script: Script | list[Any] | dict[str, Any],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.script = script if isinstance(script, Script) else parse_script(script)
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []
        """When each request had arrived (its body read, before it was checked)."""
        self.response_end_times: list[float] = []
        self.event_log: list[tuple[float, str]] = []
        """(monotonic time, data) of every SSE event, when it was flushed to the client."""
        self.errors: list[str] = []
        self.summary_reply: str | None = None
        """Set: answer every summary request (one whose newest user input contains
        ``SUMMARY_MARKER``) with ``<summary>`` + this text, without consuming a turn; the
        request is still checked like any other. For long sessions whose compactions a
        fixed script cannot foresee."""
        self.summaries = 0
        self.refused_at: list[int] = []
        """Indexes in ``requests`` of the requests the API's rules refused."""
        self.request_headers: list[dict[str, str]] = []
        """Headers of every request (names lower-cased), discovery requests included."""
        self._holds: dict[int, Hold] = {}
        self._address = (host, port)
        self._next = 0
        self._bodies = BodyParser()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- subclass hooks ------------------------------------------------------------------

    def respond(self, index: int, turn: ScriptTurn, body: dict[str, Any], reply: Reply) -> None:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> Any:
        raise NotImplementedError

    def expectation_haystack(self, body: dict[str, Any]) -> str:
        """The text of the request's newest user input, searched by ``expect.contains``."""
        raise NotImplementedError

    def reject(self, body: dict[str, Any], headers: dict[str, str]) -> Refusal | None:
        """(status, error body) when the real API would refuse this request (``headers``
        lower-cased), or a function that writes another answer that is no answer (a server
        that answers an over-long prompt with an empty message): no turn is consumed. The
        default accepts everything."""
        return None

    def serve_other(
        self, method: str, path: str, body: dict[str, Any] | None, reply: Reply
    ) -> bool:
        """Answer a request for another route (e.g. model discovery); False: unknown."""
        return False

    def fail(self, reply: Reply, status: int, message: str) -> None:
        """A script failure: recorded, answered with an error that must not be retried."""
        self.errors.append(message)
        reply.json(
            status, self.error_body(status, f"{self.label}: {message}"), SCRIPT_ERROR_HEADERS
        )

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> str:
        """Listen and serve on a daemon thread; returns the base URL for the SDK."""
        if self._httpd is None:
            self._httpd = ThreadingHTTPServer(self._address, _handler_class(self))
            self._httpd.daemon_threads = True
            # A short poll interval makes stop() quick (shutdown waits for the next poll).
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, args=(0.02,), name=self.label, daemon=True
            )
            self._thread.start()
        return self.base_url

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """``http://host:port`` of the listening socket."""
        return f"http://{self._address[0]}:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url

    def hold(self, turn: int, after_events: int) -> Hold:
        """Stop the reply to script turn ``turn`` (0-based) after ``after_events`` events
        until the returned hold is released (or the server stops)."""
        hold = self._holds[turn] = Hold(after_events)
        return hold

    def stop(self) -> None:
        for hold in self._holds.values():
            hold.release()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self.script.turns) - self._next

    def problems(self) -> list[str]:
        left = self.remaining
        unused = [f"{left} scripted turn(s) were never requested"] if left else []
        return [*self.errors, *unused]

    def assert_complete(self) -> None:
        problems = self.problems()
        if problems:
            raise AssertionError(f"{self.label}: " + "; ".join(problems))

    # -- request handling ----------------------------------------------------------------

    def handle_request(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        body = _json_object(raw, self._bodies)
        path = handler.path.split("?")[0]
        if path != self.route and self.serve_other(handler.command, path, body, Reply(handler)):
            return
        headers = header_fields(handler)
        self.request_headers.append(headers)
        refusal = self.reject(body, headers) if body is not None and path == self.route else None
        if refusal is not None:
            with self._lock:
                self.refused_at.append(len(self.requests))
                self.requests.append(body or {})
                self.request_times.append(_arrival(handler))
            if callable(refusal):
                return refusal(Reply(handler))
            return Reply(handler).json(*refusal)
        if self.summary_reply is not None and SUMMARY_MARKER in self.expectation_haystack(
            body or {}
        ):
            with self._lock:
                self.requests.append(body or {})
                self.request_times.append(_arrival(handler))
                self.summaries += 1
                number = self.summaries
            text = f"<summary>{self.summary_reply} (#{number})</summary>"
            turn = ScriptTurn.model_validate([{"type": "text", "text": text}])
            return self.respond(10_000 + number, turn, body or {}, Reply(handler))
        turn: ScriptTurn | None = None
        with self._lock:
            raw_text = raw.decode("utf-8", "replace")
            self.requests.append(body if body is not None else {"_raw": raw_text})
            self.request_times.append(_arrival(handler))
            number, index, total = len(self.requests), self._next, len(self.script.turns)
            problem = None
            if path != self.route:
                problem = 404, f"request #{number}: unknown path {handler.path}"
            elif body is None:
                problem = 400, f"request #{number}: the body is not a JSON object"
            elif index >= total:
                problem = 500, f"unexpected request #{number}: the script has {total} turn(s)"
            else:
                turn = self.script.turns[index]
                self._next += 1
        if turn is None or body is None:
            assert problem is not None
            return self._fail(handler, *problem)
        wanted = turn.expect.contains if turn.expect else None
        if wanted is not None and wanted not in self.expectation_haystack(body):
            message = f"turn {index + 1}: expected the last user message to contain {wanted!r}"
            return self._fail(handler, 500, message)
        reply = Reply(handler, turn.chunk_delay_ms, self.event_log, self._holds.get(index))
        self.respond(index, turn, body, reply)

    def _fail(self, handler: BaseHTTPRequestHandler, status: int, message: str) -> None:
        self.errors.append(message)
        body = self.error_body(status, f"{self.label}: {message}")
        Reply(handler).json(status, body, SCRIPT_ERROR_HEADERS)


def header_fields(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    """The request's header fields, names lower-cased; a field sent on several lines is one
    value joined with ", " (RFC 9110 5.3), as the real APIs read it: two
    ``anthropic-version`` lines are refused as ``"2023-06-01, 2023-06-01" is not a valid
    version`` (a captured answer, decolua/9router#2357)."""
    fields: dict[str, str] = {}
    for name, value in handler.headers.items():
        name = name.lower()
        fields[name] = f"{fields[name]}, {value}" if name in fields else value
    return fields


def _arrival(handler: BaseHTTPRequestHandler) -> float:
    """When the request's body was read (now, for a handler that did not note it)."""
    arrived = getattr(handler, "arrived", None)
    return arrived if isinstance(arrived, float) else time.monotonic()


def _json_object(raw: bytes, parser: BodyParser) -> dict[str, Any] | None:
    try:
        value = parser.loads(raw)
    except ValueError:
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _handler_class(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive and chunked bodies, as the real APIs
        arrived: float | None = None

        def setup(self) -> None:
            super().setup()
            # Real API servers flush each event at once; without TCP_NODELAY, Nagle's
            # algorithm holds the small SSE chunks back ~40 ms and skews timings.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            try:
                raw = self._body()
            except ClientGone:
                # The client gave up before its request was whole (it cancelled while the
                # body was on the way): no request reached the server, as with a real API,
                # so nothing is recorded and nothing is answered.
                self.close_connection = True
                return
            except ValueError as e:
                # A malformed chunk size: a real server answers 400 Bad Request, and so does
                # the fake (recorded: a client that sends it is broken), then hangs up.
                self.close_connection = True
                message = f"the request body is not valid HTTP/1.1 chunked coding: {e}"
                return server.fail(Reply(self), 400, message)
            # The request is here: parsing and checking it is the server's time, not the
            # client's (``request_times`` measure when requests arrive).
            self.arrived = time.monotonic()
            try:
                server.handle_request(self, raw)
            except ClientGone:
                self.close_connection = True
            finally:
                server.response_end_times.append(time.monotonic())

        def do_GET(self) -> None:
            self.do_POST()

        def _body(self) -> bytes:
            """The request body: ``Content-Length`` bytes, or HTTP/1.1 chunks (RFC 9112
            7.1: size in hex, optional extensions after ``;``, trailers after the last)."""
            if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
                return self._read(int(self.headers.get("Content-Length") or 0))
            parts: list[bytes] = []
            while True:
                line = self.rfile.readline()
                if not line.endswith(b"\n"):
                    raise ClientGone  # the stream ended before the last chunk
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailer fields, then a blank line
                        pass
                    return b"".join(parts)
                parts.append(self._read(size))
                self.rfile.readline()  # the CRLF after the chunk

        def _read(self, size: int) -> bytes:
            """``size`` bytes of the body; the connection ending before them is the client
            gone, not a request (``rfile.read`` returns short only at the end)."""
            data = self.rfile.read(size)
            if len(data) < size:
                raise ClientGone
            return data

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler
