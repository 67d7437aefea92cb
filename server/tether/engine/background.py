"""Background tasks seen from the engine: lifecycle records and updates, and completion
notifications queued for the next turn boundary (or a new turn, if the session is idle)."""

from __future__ import annotations

from typing import Any

from tether.core.messages import Message, TextBlock
from tether.engine.turns import EngineEvents
from tether.protocol.updates import SessionUpdate, TaskUpdate
from tether.tasks.registry import Task
from tether.transcript.records import ProgressRecord


def task_notification(task: Task) -> Message:
    result = task.result[-4000:] if task.result else ""
    body = (
        "<task-notification>\n"
        f"<task-id>{task.id}</task-id>\n"
        f"<tool-use-id>{task.tool_use_id or ''}</tool-use-id>\n"
        f"<status>{task.status}</status>\n"
        f"<summary>{task.description}: {task.summary}</summary>\n"
        f"<result>{result}</result>\n"
        f"<output-file>{task.output_path}</output-file>\n"
        "</task-notification>"
    )
    return Message(role="user", content=[TextBlock(text=body)])


class BackgroundMixin:
    session_id: str
    notifications: list[Message]
    events: EngineEvents

    @property
    def busy(self) -> bool:
        raise NotImplementedError

    def record(self, record: Any) -> None:
        raise NotImplementedError

    def _emit(self, update: SessionUpdate) -> None:
        raise NotImplementedError

    def task_changed(self, task: Task) -> None:
        if task.status == "pending" or task.finished:
            # Out of the chain, so a crash with the task running is known on resume.
            self.record(
                ProgressRecord(
                    session_id=self.session_id,
                    event="task_started" if task.status == "pending" else "task_finished",
                    data={
                        "taskId": task.id,
                        "toolUseId": task.tool_use_id,
                        "description": task.description,
                        "outputFile": str(task.output_path),
                        "status": task.status,
                    },
                )
            )
        if task.status == "running":
            return  # "pending" was sent as "running" already: clients know one running state
        status = "running" if task.status == "pending" else task.status
        self._emit(
            TaskUpdate(
                task_id=task.id,
                tool_call_id=task.tool_use_id,
                status=status,  # type: ignore[arg-type]
                description=task.description,
                summary=task.summary or None,
            )
        )
        if task.finished:
            self.notifications.append(task_notification(task))
            if not self.busy:
                self.events.wake()
