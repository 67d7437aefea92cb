"""What joins the conversation at a turn boundary, besides the model's own work: queued
prompts the user sent while the turn ran, finished-task notifications, urgent attachments
(new diagnostics), notices of files changed by someone else, and memory entries relevant
to a new prompt (each once, until the conversation is replaced)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from tether.context.memory import MAX_RECALLED, Bm25Recaller, Recaller, memory_attachment
from tether.context.recall import memory_entries
from tether.context.watcher import ChangeWatcher, change_notice
from tether.core.messages import Message, TextBlock
from tether.editor.port import Editor
from tether.engine.background import TaskInbox
from tether.engine.history import History
from tether.engine.prompt_input import prompt_to_message
from tether.engine.turns import AttachmentSource, PromptNotes, Queued, TurnResult
from tether.protocol.content import ContentBlock
from tether.protocol.updates import SessionUpdate, UserMessage
from tether.tools.context import FileState

log = logging.getLogger(__name__)


class Boundary:
    def __init__(
        self,
        *,
        cwd: Path,
        history: History,
        tasks: TaskInbox,
        files: FileState,
        editor: Editor,
        emit: Callable[[SessionUpdate], None],
        sources: Sequence[AttachmentSource] = (),
        recaller: Recaller | None = None,
        prompt_notes: PromptNotes | None = None,
    ) -> None:
        self.cwd = cwd
        self.history = history
        self.tasks = tasks
        self.files = files
        self.editor = editor
        self.emit = emit
        self.sources: list[AttachmentSource] = list(sources)
        """Urgent attachments (new diagnostics): they make the model go on at a turn's end."""
        self.prompt_notes = prompt_notes
        """Notes that go with the user's next prompt (what the user undid)."""
        self.recaller = recaller or Bm25Recaller()
        self.watcher = ChangeWatcher()
        self.queued: list[Queued] = []
        self._recalled: set[Path] = set()

    async def enqueue(
        self,
        prompt: Sequence[ContentBlock],
        running: Callable[[], bool],
        context: str | None = None,
        *,
        with_tools_only: bool = False,
    ) -> asyncio.Future[TurnResult | None]:
        """A prompt sent while a turn runs; the future resolves with the result of the turn
        that took it in, or with ``None`` when no turn did (the caller runs it as a turn)."""
        message = await prompt_to_message(prompt, self.editor)
        future: asyncio.Future[TurnResult | None] = asyncio.get_running_loop().create_future()
        if not running():  # the turn ended while the prompt was being read
            future.set_result(None)
        else:
            self.queued.append(Queued(message, list(prompt), future, context, with_tools_only))
        return future

    async def drain(
        self,
        turn_id: str,
        waiters: list[asyncio.Future[TurnResult | None]],
        *,
        ending: bool = False,
    ) -> int:
        """Inject attachments, task notifications and queued prompts (last: the user's
        words are nearest and win attention); returns how many should make the model go on.
        Each queued prompt's future joins ``waiters``."""
        count = 0
        # Files changed by someone else: worth knowing, not worth another model call.
        for note in await self._changed_files():
            self.history.append_meta(turn_id, note, "file_changed")
        for source in self.sources:
            for note in await source():
                self.history.append_meta(turn_id, note, "attachment")
                count += 1
        count += self.notifications(turn_id)
        # At the turn's end a prompt that joins only a turn going on waits to be given back.
        taken = [q for q in self.queued if not (ending and q.with_tools_only)]
        for queued in taken:
            self.emit(UserMessage(content=queued.content))
            await self.history.append_user(turn_id, queued.message, queued.content)
            if queued.context:
                note = f"<system-reminder>\n{queued.context}\n</system-reminder>"
                self.history.append_meta(
                    turn_id, Message(role="user", content=[TextBlock(text=note)]), "hook_context"
                )
            waiters.append(queued.future)
            count += 1
        if taken:
            await self.notes(turn_id)
        self.queued = [q for q in self.queued if q not in taken]
        return count

    async def notes(self, turn_id: str) -> None:
        """What goes with a prompt of the user's that just joined the conversation."""
        if self.prompt_notes is None:
            return
        try:
            notes = await self.prompt_notes()
        except Exception:  # a note is worth less than the prompt it goes with
            log.exception("the notes for a prompt could not be made")
            return
        for kind, message in notes:
            self.history.append_meta(turn_id, message, kind)

    def notifications(self, turn_id: str) -> int:
        pending = self.tasks.take()
        for note in pending:
            self.history.append_meta(turn_id, note, "task_notification")
        return len(pending)

    def release(self) -> None:
        """The turn ended: prompts that came too late for its last boundary are given back
        (``None``) to run as turns of their own."""
        for queued in self.queued:
            if not queued.future.done():
                queued.future.set_result(None)
        self.queued.clear()

    def recall(self, turn_id: str, query: str) -> None:
        """Memory entries relevant to a new prompt that were not attached yet."""
        entries = [e for e in memory_entries(self.cwd) if e.path not in self._recalled]
        chosen = self.recaller.recall(query, entries, MAX_RECALLED)
        text = memory_attachment(chosen)
        if text:
            self._recalled.update(e.path for e in chosen)
            message = Message(role="user", content=[TextBlock(text=text)])
            self.history.append_meta(turn_id, message, "memory")

    def reset(self) -> None:
        """The conversation was replaced: what it recalled may be recalled again."""
        self._recalled.clear()

    async def _changed_files(self) -> list[Message]:
        new = self.watcher.unfollowed(self.files.paths())
        if new:  # a watch to set up (threads started, inotify): not on the loop
            await asyncio.to_thread(self.watcher.follow, new)
        if not self.watcher.dirty(self.files):  # nothing to read: no trip to a thread
            return []
        changed = await asyncio.to_thread(self.watcher.changed_since_read, self.files)
        return [change_notice(changed)] if changed else []

    def close(self) -> None:
        self.watcher.close()
