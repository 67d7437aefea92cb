"""Running a coroutine eagerly: up to its first real suspension in the caller's own call,
so that a handler that does not wait for anything answers without a trip through the event
loop's queue (behind every callback the agent's work queued before it)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import types
from collections.abc import Coroutine, Generator
from typing import Any


def start_eagerly(
    coro: Coroutine[Any, Any, Any],
) -> concurrent.futures.Future[Any] | asyncio.Task[Any]:
    """A finished future when ``coro`` ran to its end now (its done callbacks run at once),
    else a task that goes on from where it suspended."""
    try:
        waiting = coro.send(None)
    except StopIteration as stop:
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        done.set_result(stop.value)
        return done
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
