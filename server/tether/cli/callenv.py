"""The environment of the print-mode call being run, and how the daemon stops it.

In-process that is this process's environment. The warm daemon runs print mode for several
terminals at once, each with its own environment (``NO_COLOR``, ``TERM``, keys, base URLs,
``PATH``...), directory and umask: it runs each call with that ``Caller`` set here, and print
mode reads it from here, never from ``os.environ``. A context variable, so each call (and
the tasks and threads it starts through asyncio) sees its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tether.core.environ import Caller

if TYPE_CHECKING:
    from tether.session.session import Session

T = TypeVar("T")

_CALLER: ContextVar[Caller | None] = ContextVar("tether_caller_env", default=None)


def caller_env() -> Mapping[str, str]:
    """The caller's variables (this process's when nobody else called)."""
    env = _CALLER.get()
    return os.environ if env is None else env


def served_env() -> Caller | None:
    """The caller the daemon serves; None in-process (use this process's world)."""
    return _CALLER.get()


@contextmanager
def calling_with(caller: Caller) -> Generator[None]:
    token = _CALLER.set(caller)
    try:
        yield
    finally:
        _CALLER.reset(token)


class ShareSession(Protocol):
    """Lists a print-mode session among the daemon's (its other clients may follow it and
    cancel its turns); called on the call's loop once the session is open, returns the
    function that unlists it."""

    def __call__(self, session: Session) -> Callable[[], None]: ...


class CallControl:
    """How the daemon stops a print-mode call it runs (its client pressed Ctrl+C or went
    away): the call's event loop and main task register here when they start, and
    ``interrupt`` cancels that task, as Ctrl+C does in-process. ``share``: how the call's
    session joins the daemon's shared ones."""

    def __init__(self, share: ShareSession | None = None) -> None:
        self.share = share
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._interrupted = False

    def started(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        with self._lock:
            self._loop, self._task = loop, task
            interrupted = self._interrupted
        if interrupted:
            task.cancel()

    def interrupt(self) -> None:
        with self._lock:
            self._interrupted = True
            loop, task = self._loop, self._task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the call's loop has closed
                loop.call_soon_threadsafe(task.cancel)


_CONTROL: ContextVar[CallControl | None] = ContextVar("tether_call_control", default=None)


@contextmanager
def controlled_by(control: CallControl) -> Generator[None]:
    token = _CONTROL.set(control)
    try:
        yield
    finally:
        _CONTROL.reset(token)


def daemon_share() -> ShareSession | None:
    """How to share the session of the call being run with the daemon's other clients (None
    in-process)."""
    control = _CONTROL.get()
    return control.share if control is not None else None


async def interruptible(main: Awaitable[T]) -> T:
    """``main``, registered with the daemon's control of this call when there is one."""
    control = _CONTROL.get()
    task = asyncio.current_task()
    if control is not None and task is not None:
        control.started(asyncio.get_running_loop(), task)
    return await main
