"""Background tasks seen from the engine: lifecycle records and updates, and completion
notifications held for the next turn boundary (or a turn of their own, if the session is
idle)."""

from __future__ import annotations

from collections.abc import Callable

from tether.core.messages import Message, TextBlock
from tether.engine.turns import EngineEvents
from tether.protocol.updates import SessionUpdate, TaskStatus, TaskUpdate
from tether.tasks.registry import Task, TaskState
from tether.transcript.payloads import TaskData
from tether.transcript.records import ProgressRecord, Record


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


class TaskInbox:
    """Listens to a session's task registry; holds the notifications of finished tasks."""

    def __init__(
        self,
        session_id: str,
        *,
        record: Callable[[Record], None],
        emit: Callable[[SessionUpdate], None],
        events: EngineEvents,
        busy: Callable[[], bool],
    ) -> None:
        self.session_id = session_id
        self._record = record
        self._emit = emit
        self._events = events
        self._busy = busy
        self.pending: list[Message] = []
        """Finished-task notifications waiting for a turn boundary."""

    def take(self) -> list[Message]:
        pending, self.pending = self.pending, []
        return pending

    def task_changed(self, task: Task) -> None:
        if task.status == "pending" or task.finished:
            # Out of the chain, so a crash with the task running is known on resume.
            self._record(
                ProgressRecord(
                    session_id=self.session_id,
                    data=TaskData(
                        event="task_started" if task.status == "pending" else "task_finished",
                        task_id=task.id,
                        tool_use_id=task.tool_use_id,
                        description=task.description,
                        output_file=str(task.output_path),
                        status=task.status,
                    ),
                )
            )
        if task.status == "running":
            return  # "pending" was sent as "running" already: clients know one running state
        self._emit(
            TaskUpdate(
                task_id=task.id,
                tool_call_id=task.tool_use_id,
                status=_wire_status(task.status),
                description=task.description,
                summary=task.summary or None,
            )
        )
        if task.finished:
            self.pending.append(task_notification(task))
            if not self._busy():
                self._events.wake()


def _wire_status(state: TaskState) -> TaskStatus:
    # Editors show a task as running until it is over; "pending" is the engine's own.
    if state == "pending" or state == "running":
        return "running"
    return state
