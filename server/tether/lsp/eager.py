"""Running a coroutine eagerly: up to its first real suspension in the caller's own call,
so that a handler that does not wait for anything answers without a trip through the event
loop's queue (behind every callback the agent's work queued before it)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import types
from collections.abc import Coroutine, Generator
from typing import Any

TASKS_START_EAGERLY = sys.version_info >= (3, 12)
"""Python 3.12 runs a task's first step at its creation when asked (``eager_start``): the
handler runs as a task from the start. On 3.11 the first step runs outside any task, where
nothing on the code action's path needs one (3.11's ``wait_for`` does not)."""


def start_eagerly(
    coro: Coroutine[Any, Any, Any],
) -> concurrent.futures.Future[Any] | asyncio.Task[Any]:
    """A finished future when ``coro`` ran to its end now (its done callbacks run at once),
    else a task that goes on from where it suspended."""
    if TASKS_START_EAGERLY:
        # A task of its own from the first step on (``asyncio.timeout`` and, from 3.12,
        # ``wait_for`` need one); done at once when nothing made it wait.
        task: asyncio.Task[Any] = asyncio.Task(coro, eager_start=True)  # pyright: ignore[reportCallIssue, reportUnknownVariableType]
        return task
    try:
        waiting = coro.send(None)
    except StopIteration as stop:
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        done.set_result(stop.value)
        return done
    except asyncio.CancelledError:  # answered as a cancelled request, as a task's would be
        cancelled: concurrent.futures.Future[Any] = concurrent.futures.Future()
        cancelled.cancel()
        return cancelled
    except Exception as e:
        failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
        failed.set_exception(e)
        return failed

    async def finish() -> Any:
        return await _resume(coro, waiting)

    return asyncio.ensure_future(finish())


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], waiting: Any) -> Generator[Any, Any, Any]:
    """Hand what ``coro`` waits on to the task, and the outcome back to ``coro``."""
    while True:
        try:
            sent = yield waiting
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as e:  # the task's cancellation, or the awaited failure
            try:
                waiting = coro.throw(e)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                waiting = coro.send(sent)
            except StopIteration as stop:
                return stop.value
