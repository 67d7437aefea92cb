"""Print mode in the warm daemon: ``tether -p`` / ``tether run`` for a terminal client.

The client (``cli/remote.py``) sends its command line, directory, whole environment and
umask, and which of its streams are terminals (``tether/print``); the daemon runs the very
code an in-process run runs (``cli.main.run_local``, passed in as ``RunCommand``), in a
thread of its own with its own event loop, so the output is the same byte for byte. What
that code writes to ``sys.stdout``/``sys.stderr`` goes back as ``tether/output``
notifications; when it reads ``sys.stdin`` the daemon asks the client for the next piece
(``tether/readInput``, answered by ``tether/input``), so a piped prompt, stream-json input
and the answers to terminal permission questions arrive exactly when read.
``tether/interrupt`` is the client's Ctrl+C. The result is the exit code.

The standard streams are process-wide, so the daemon replaces them once with ones that route
to the current call (a context variable, carried by asyncio into tasks and ``to_thread``);
outside a call they are the daemon's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol, TextIO, cast

from pydantic import Field

from tether.cli.callenv import CallControl, ShareSession, calling_with, controlled_by
from tether.cli.driver import SessionFacts
from tether.core.environ import Caller
from tether.lsp.params import InvalidParamsError
from tether.protocol.base import LenientWireModel

log = logging.getLogger(__name__)

WARM_UP_WAIT_S = 30.0
"""At most this long a call waits for the daemon's warm-up (``daemon/warm.py``)."""

Notify = Callable[[str, dict[str, Any]], None]
"""Sends a notification to the call's client; safe from any thread."""


class RunCommand(Protocol):
    """Runs a command line as ``tether`` would in-process (``cli.main.run_local``); given
    to the daemon by the command line that starts it, so the daemon does not import it."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        on_open: Callable[[SessionFacts], None] | None = None,
    ) -> int: ...


class PrintParams(LenientWireModel):
    build: str | None = None
    """The client's build: a daemon of another build refuses the command (-32602, with
    ``data.daemonBuild``), and the client replaces it."""
    argv: list[str]
    cwd: str
    env: dict[str, str] = Field(default_factory=lambda: dict[str, str]())
    """The client's whole environment: the run's processes get exactly this."""
    umask: int | None = Field(default=None, ge=0, le=0o7777)
    """The client's umask (None: an older client; the daemon's applies)."""

    def caller(self) -> Caller:
        return Caller(self.env, cwd=Path(self.cwd), umask=self.umask)

    stdin_is_tty: bool = False
    stdout_is_tty: bool = False
    stderr_is_tty: bool = False


class InputParams(LenientWireModel):
    text: str = ""
    eof: bool = False


# -- the call's streams ---------------------------------------------------------------------


class CallOutput(io.TextIOBase):
    """stdout or stderr of a call: each write is a ``tether/output`` notification."""

    def __init__(self, stream: str, notify: Notify, tty: bool) -> None:
        super().__init__()
        self._stream = stream
        self._notify = notify
        self._tty = tty

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._tty

    def write(self, s: str) -> int:
        if s:
            self._notify("tether/output", {"stream": self._stream, "text": s})
        return len(s)


class CallInput(io.RawIOBase):
    """stdin of a call, read from the client on demand (a blocking read waits for it: print
    mode reads stdin in threads, or before its event loop starts)."""

    def __init__(self, notify: Notify) -> None:
        super().__init__()
        self._notify = notify
        self._data = b""
        self._eof = False
        self._asked = False
        self._ready = threading.Condition()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        with self._ready:
            while not self._data and not self._eof:
                if not self._asked:
                    self._asked = True
                    self._notify("tether/readInput", {})
                self._ready.wait()
            count = min(len(view), len(self._data))
            view[:count] = self._data[:count]
            self._data = self._data[count:]
            return count

    def feed(self, data: bytes, eof: bool) -> None:
        with self._ready:
            self._data += data
            self._eof = self._eof or eof
            self._asked = False
            self._ready.notify_all()


class CallStdin(io.TextIOWrapper):
    """The call's stdin as print mode sees it: a terminal when the client's is one."""

    def __init__(self, raw: CallInput, tty: bool) -> None:
        super().__init__(io.BufferedReader(raw), encoding="utf-8", errors="replace")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


_STREAMS: ContextVar[tuple[TextIO, TextIO, TextIO] | None] = ContextVar(
    "tether_call_streams", default=None
)


class Routed:
    """Stands in for ``sys.stdin``/``stdout``/``stderr``: the current call's stream, else
    the daemon's own."""

    def __init__(self, index: int, own: TextIO) -> None:
        self._index = index
        self._own = own

    def _target(self) -> TextIO:
        streams = _STREAMS.get()
        return self._own if streams is None else streams[self._index]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._target())

    def write(self, s: str) -> int:
        return self._target().write(s)


@contextlib.contextmanager
def silenced() -> Generator[None]:
    """A call of the daemon's own (its warm-up): what it reads is empty, what it writes goes
    nowhere."""
    nothing = io.StringIO()
    token = _STREAMS.set(
        (cast(TextIO, io.StringIO()), cast(TextIO, nothing), cast(TextIO, nothing))
    )
    try:
        yield
    finally:
        _STREAMS.reset(token)


def route_standard_streams() -> None:
    """Make ``sys.stdin``/``stdout``/``stderr`` follow the current call (once per daemon)."""
    if not isinstance(sys.stdout, Routed):
        sys.stdin = cast(TextIO, Routed(0, sys.stdin))
        sys.stdout = cast(TextIO, Routed(1, sys.stdout))
        sys.stderr = cast(TextIO, Routed(2, sys.stderr))


# -- one call -------------------------------------------------------------------------------


class PrintCall:
    """One ``tether/print`` request, run in its own thread."""

    def __init__(
        self,
        params: PrintParams,
        notify: Notify,
        run_command: RunCommand,
        share: ShareSession | None = None,
        ready: threading.Event | None = None,
    ) -> None:
        self.params = params
        self._notify = notify
        self._run_command = run_command
        self._ready = ready
        """Set once the daemon has warmed up: a call waits for that, not racing it."""
        self.control = CallControl(share)
        self.stdin = CallInput(notify)
        self.finished = threading.Event()
        """Set when the command is done and its session closed (saved)."""

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int] = loop.create_future()

        def finish(code: int) -> None:
            if not done.done():
                done.set_result(code)

        def target() -> None:
            try:
                code = self._main()
            finally:
                self.finished.set()
            with contextlib.suppress(RuntimeError):  # the daemon's loop is gone (stopping)
                loop.call_soon_threadsafe(finish, code)

        threading.Thread(target=target, name="tether-print", daemon=True).start()
        return await done

    def _main(self) -> int:
        if self._ready is not None:
            self._ready.wait(WARM_UP_WAIT_S)
        p = self.params
        # A TextIOBase is what print mode writes to; TextIO is how sys types its streams.
        streams = (
            CallStdin(self.stdin, p.stdin_is_tty),
            cast(TextIO, CallOutput("stdout", self._notify, p.stdout_is_tty)),
            cast(TextIO, CallOutput("stderr", self._notify, p.stderr_is_tty)),
        )
        token = _STREAMS.set(streams)
        try:
            with calling_with(p.caller()), controlled_by(self.control):
                return self._run_command(p.argv, cwd=Path(p.cwd), on_open=self._opened)
        except SystemExit as e:  # argparse's --help and the like
            return e.code if isinstance(e.code, int) else 1
        except BaseException:
            log.exception("print mode failed in the daemon")
            streams[2].write("[tether] error: the daemon failed (see its log)\n")
            return 1
        finally:
            _STREAMS.reset(token)

    def _opened(self, facts: SessionFacts) -> None:
        self._notify("tether/printSession", {"sessionId": facts.session_id})

    def give_input(self, params: InputParams) -> None:
        self.stdin.feed(params.text.encode("utf-8"), params.eof)

    def abandon(self) -> None:
        """The client went away: stop the run, and let a read of stdin see its end."""
        self.control.interrupt()
        self.stdin.feed(b"", True)


class PrintService:
    """A connection's print-mode calls (one at a time: a terminal runs one command)."""

    def __init__(
        self,
        notify: Notify,
        run_command: RunCommand,
        share: ShareSession | None = None,
        ready: threading.Event | None = None,
    ) -> None:
        self._notify = notify
        self._run_command = run_command
        self._share = share
        self._ready = ready
        """Lists each call's session among the daemon's, for its other clients."""
        self._call: PrintCall | None = None

    async def run(self, params: PrintParams) -> dict[str, Any]:
        if self._call is not None:
            raise InvalidParamsError("this connection runs a command already")
        self._call = PrintCall(params, self._notify, self._run_command, self._share, self._ready)
        try:
            return {"exitCode": await self._call.run()}
        finally:
            self._call = None

    def give_input(self, params: InputParams) -> None:
        if self._call is not None:
            self._call.give_input(params)

    def interrupt(self) -> None:
        if self._call is not None:
            self._call.control.interrupt()

    def abandon(self) -> None:
        if self._call is not None:
            self._call.abandon()

    def wait(self, timeout: float) -> bool:
        """Wait (blocking, bounded) until the running command is done; True if it is."""
        call = self._call
        return call is None or call.finished.wait(timeout)
