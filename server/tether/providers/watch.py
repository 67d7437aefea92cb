"""The waits of ``patience`` kept for one provider's requests: ``Waiting`` events at
growing intervals while nothing has come back (the engine shows them), and the words when a
wait is over, naming the URL, the wait and the variable that raises it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from tether.errors import ModelError
from tether.providers.base import Waiting
from tether.providers.patience import FIRST_ANSWER_VARIABLE, IDLE_VARIABLE, Patience

T = TypeVar("T")

FIRST_NOTICE_S = 10.0
"""The first ``Waiting`` event; later ones at twice the wait before."""


@dataclass(frozen=True)
class Done(Generic[T]):
    value: T


@dataclass(frozen=True)
class Watch:
    """The waits of one provider's requests to ``where`` (its URL, named in every word)."""

    patience: Patience
    where: str

    async def first_answer(
        self, attempt: Callable[[], Awaitable[T]], *, whole: bool = False
    ) -> AsyncIterator[Waiting | Done[T]]:
        """Run ``attempt`` (a request up to its first event, or a ``whole`` answer), yielding
        ``Waiting`` while it keeps the user waiting; ends with ``Done``, or raises its
        exception, or a ``ModelError`` once the wait is over (the attempt is cancelled)."""
        limit = self.patience.request if whole else self.patience.first_answer
        loop = asyncio.get_running_loop()
        start = loop.time()
        notice = min(FIRST_NOTICE_S, limit / 2)
        task = asyncio.ensure_future(attempt())
        try:
            while True:
                waited = loop.time() - start
                await asyncio.wait({task}, timeout=max(0.0, min(notice, limit) - waited))
                if task.done():
                    yield Done(task.result())
                    return
                waited = loop.time() - start
                if waited >= limit:
                    raise ModelError(self._no_answer(limit, whole))
                if waited >= notice:
                    yield Waiting(self.where, waited, limit)
                    notice *= 2
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    def stalled(self) -> ModelError:
        """The stream went silent for longer than the idle wait."""
        idle = self.patience.idle
        return ModelError(
            f"{self.where} stopped sending in the middle of the answer: nothing for {idle:g} s "
            "(the answer above may be incomplete). The server or the network path to it "
            f"stalled; if the model is just slow, raise {IDLE_VARIABLE} (milliseconds, in the "
            "environment or the settings' env)."
        )

    def _no_answer(self, limit: float, whole: bool) -> str:
        what = "the whole answer" if whole else "the first answer"
        return (
            f"{self.where} took the request but sent nothing for {limit:g} s (waited for "
            f"{what}). The server may be hung, or a local model may still be loading: check "
            f"the server, or raise the wait with {FIRST_ANSWER_VARIABLE} (milliseconds, in the "
            f"environment or the settings' env), e.g. {FIRST_ANSWER_VARIABLE}=900000 for 15 "
            "minutes."
        )
