"""Checkpoints of files changed by shell commands, so rewind covers them too.

``ShellCheckpoints`` is a ``Hooks`` source composed with the session's other hooks: before
a Bash call that is not read-only it takes a snapshot of the workspace
(``file_snapshot``), after it records the text every changed file had before the command
in the turn's checkpoint — like ``CheckpointingEditor`` does for the editor's writes, and
in the transcript, so it survives a restart. A changed file whose text before is not
known (binary, too large, the cache full) is recorded with the reason, and rewind reports
it as not restored.

A command sent to the background is checked when its call returns (when it starts):
what it changes later is not covered.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from tether.core.hooks import NoHooks, ToolHookVerdict
from tether.permissions.shell import is_read_only_command
from tether.session.checkpoints import CheckpointRecorder, Checkpoints
from tether.session.file_snapshot import Change, Snapshot, WorkspaceSnapshots
from tether.transcript.payloads import CheckpointData, CheckpointMissingData
from tether.transcript.records import ProgressRecord

log = logging.getLogger(__name__)

ChangesFiles = Callable[[str, dict[str, Any]], bool]
"""(tool name, input) -> whether the call may change files outside the editor."""


def shell_changes_files(tool: str, tool_input: dict[str, Any]) -> bool:
    """A Bash command that is not known to be read-only."""
    command = tool_input.get("command")
    return tool == "Bash" and isinstance(command, str) and not is_read_only_command(command)


PENDING_LIMIT = 8
"""Snapshots of calls that were refused never see their post hook: keep only a few."""


class ShellCheckpoints(NoHooks):
    def __init__(
        self,
        snapshots: WorkspaceSnapshots,
        checkpoints: Checkpoints,
        session_id: str,
        record: CheckpointRecorder,
        changes_files: ChangesFiles = shell_changes_files,
    ) -> None:
        self.snapshots = snapshots
        self.checkpoints = checkpoints
        self._session_id = session_id
        self._record = record
        self._changes_files = changes_files
        self._pending: OrderedDict[str, Snapshot] = OrderedDict()

    async def pre_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> ToolHookVerdict:
        if self.checkpoints.current is not None and self._changes_files(tool, tool_input):
            snapshot = await self.snapshots.take()
            if snapshot is not None:
                self._pending[tool_use_id] = snapshot
                while len(self._pending) > PENDING_LIMIT:
                    self._pending.popitem(last=False)
        return ToolHookVerdict()

    async def post_tool_use(
        self, tool: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> ToolHookVerdict:
        snapshot = self._pending.pop(tool_use_id, None)
        if snapshot is not None:
            for change in await self.snapshots.changes(snapshot):
                self._keep(change)
        return ToolHookVerdict()

    def _keep(self, change: Change) -> None:
        turn = self.checkpoints.current
        if turn is not None:
            turn.after.pop(change.path, None)  # its text is the one on disk now
        if turn is None or change.path in turn.before or change.path in turn.missing:
            return  # what the turn first saw of the file is what rewind puts back
        data: CheckpointData | CheckpointMissingData
        if change.missing is None:
            turn.before[change.path] = change.before
            data = CheckpointData(turn_id=turn.turn_id, path=str(change.path), before=change.before)
        else:
            turn.missing[change.path] = change.missing
            data = CheckpointMissingData(
                turn_id=turn.turn_id, path=str(change.path), reason=change.missing
            )
        self._record(ProgressRecord(session_id=self._session_id, turn_id=turn.turn_id, data=data))
