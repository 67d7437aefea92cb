"""The per-session registry of background tasks and their lifecycle.

pending -> running -> completed | failed | killed. A task is an asyncio task that writes
its output to a file; every lifecycle change is reported to ``on_change`` (the engine turns
it into a ``task`` update and, on completion, a notification for the next turn boundary).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

TaskState = Literal["pending", "running", "completed", "failed", "killed"]
TaskKind = Literal["bash", "agent"]
FINAL_STATES: frozenset[TaskState] = frozenset({"completed", "failed", "killed"})


def new_task_id() -> str:
    """8 random bytes, hex: unguessable and short enough to quote."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class TaskOutcome:
    status: Literal["completed", "failed"]
    summary: str
    result: str = ""
    exit_code: int | None = None


@dataclass
class Task:
    id: str
    kind: TaskKind
    description: str
    output_path: Path
    tool_use_id: str | None = None
    status: TaskState = "pending"
    summary: str = ""
    result: str = ""
    exit_code: int | None = None
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None
    runner: asyncio.Task[None] | None = field(default=None, repr=False)
    done: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATES


TaskRun = Callable[[Task], Awaitable[TaskOutcome]]


class TaskRegistry:
    """Owns the background tasks of one session."""

    def __init__(
        self,
        output_dir: Path,
        on_change: Callable[[Task], None] | None = None,
        *,
        max_running: int = 16,
    ) -> None:
        self.output_dir = output_dir
        self._on_change = on_change
        self._tasks: dict[str, Task] = {}
        self.max_running = max_running

    def set_listener(self, on_change: Callable[[Task], None] | None) -> None:
        self._on_change = on_change

    def start(
        self, *, kind: TaskKind, description: str, tool_use_id: str | None, run: TaskRun
    ) -> Task:
        if len(self.running()) >= self.max_running:
            raise RuntimeError(
                f"too many background tasks are running ({self.max_running}); "
                "stop one with TaskStop or wait for one to finish"
            )
        self.output_dir.mkdir(parents=True, exist_ok=True)
        task_id = new_task_id()
        task = Task(
            id=task_id,
            kind=kind,
            description=description,
            output_path=self.output_dir / f"{task_id}.output",
            tool_use_id=tool_use_id,
        )
        task.output_path.touch(mode=0o600)
        self._tasks[task_id] = task
        self._changed(task)
        task.runner = asyncio.get_running_loop().create_task(self._drive(task, run))
        return task

    async def _drive(self, task: Task, run: TaskRun) -> None:
        task.status = "running"
        self._changed(task)
        try:
            outcome = await run(task)
        except asyncio.CancelledError:
            self._finish(task, "killed", "stopped", None)
            raise
        except Exception as e:  # a failing task is reported, not raised into the loop
            self._finish(task, "failed", f"failed: {type(e).__name__}: {e}", None)
            return
        task.result = outcome.result
        self._finish(task, outcome.status, outcome.summary, outcome.exit_code)

    def _finish(self, task: Task, status: TaskState, summary: str, exit_code: int | None) -> None:
        if task.finished:
            return
        task.status = status
        task.summary = summary
        task.exit_code = exit_code
        task.ended_at = time.time()
        task.done.set()
        self._changed(task)

    def _changed(self, task: Task) -> None:
        if self._on_change is not None:
            self._on_change(task)

    def get(self, task_id: str) -> Task | None:
        return self._tasks.get(task_id)

    def all(self) -> list[Task]:
        return list(self._tasks.values())

    def running(self) -> list[Task]:
        return [t for t in self._tasks.values() if not t.finished]

    async def wait(self, task_id: str, timeout: float | None) -> Task | None:
        task = self._tasks.get(task_id)
        if task is None:
            return None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(task.done.wait(), timeout)
        return task

    async def wait_any(self) -> None:
        """Return when one of the running tasks finishes (at once if none runs)."""
        running = self.running()
        if not running:
            return
        waiters = [asyncio.ensure_future(t.done.wait()) for t in running]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    async def stop(self, task_id: str) -> Task | None:
        task = self._tasks.get(task_id)
        if task is None or task.finished:
            return task
        if task.runner is not None:
            task.runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task.runner
        self._finish(task, "killed", "stopped", None)
        return task

    async def shutdown(self) -> None:
        for task in self.running():
            await self.stop(task.id)
