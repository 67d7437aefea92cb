"""Resume a session from its transcript.

Load and index the file, take the newest leaf (or a given one), walk ``parentUuid`` to the
root, keep what follows the last compaction boundary, restore the run state (mode, todo
plan, files read, background tasks) and repair what a crash leaves behind: a tool_use
without a result gets a synthetic one (saying the tool may have partly run when its
"tool started" record is there: never re-executed silently), and tasks that were running
are reported as interrupted. Repairs are returned as records to append, so the file tells
the same story as the resumed conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.core.messages import (
    Block,
    Message,
    TextBlock,
    ToolResultBlock,
    tool_result,
    unanswered_tool_uses,
)
from tether.protocol.updates import Mode, PlanEntry, Usage
from tether.transcript.chain import build_chain
from tether.transcript.live import read_live
from tether.transcript.load import (
    LoadedTranscript,
    keep_out_of_gc,
    paused_gc,
    read_transcript,
)
from tether.transcript.payloads import (
    CompactBoundaryData,
    FilesData,
    ModeData,
    PlanData,
    TaskData,
    ToolFinishedData,
    ToolStartedData,
)
from tether.transcript.records import (
    AssistantRecord,
    AttachmentRecord,
    ChainRecord,
    ProgressRecord,
    SystemRecord,
    ToolResultRecord,
    UserRecord,
)

PARTLY_RAN = (
    "[The session was interrupted while this tool was running. It may have partly run: "
    "check its effects before running it again.]"
)
NOT_RUN = (
    "[The session ended unexpectedly (not by the user) before this tool call finished; it "
    "has no result. Run it again if you still need it.]"
)

CONVERSATION = (UserRecord, AssistantRecord, ToolResultRecord, AttachmentRecord)


@dataclass
class ResumedSession:
    session_id: str
    messages: list[Message]
    chain: list[ChainRecord]
    """The chain as far as it was read: from the last compaction boundary on, with the
    run-state records before it (the whole chain when the file was read whole)."""
    last_uuid: str | None
    mode: Mode | None = None
    todos: list[PlanEntry] = field(default_factory=lambda: list[PlanEntry]())
    files: dict[str, dict[str, Any]] = field(default_factory=lambda: dict[str, dict[str, Any]]())
    title: str | None = None
    turns: int = 0
    repaired: list[str] = field(default_factory=lambda: list[str]())
    """Human-readable notes of what was repaired."""
    repairs: list[ChainRecord | ProgressRecord] = field(
        default_factory=lambda: list[ChainRecord | ProgressRecord]()
    )
    """Records to append before continuing (their parents are set when appended)."""
    loaded: LoadedTranscript | None = None
    message_turns: list[str | None] = field(default_factory=lambda: list[str | None]())
    """The turn each of ``messages`` belongs to (None for repairs)."""
    discovered_tools: list[str] = field(default_factory=lambda: list[str]())
    """Deferred tools found with ToolSearch before the last compaction (kept by it)."""
    usage: Usage = field(default_factory=Usage)
    """Token and cost totals of the session before this resume."""
    context_anchor: tuple[int, Usage] | None = None
    """The usage of the newest model response among ``messages`` and how many messages
    it covers (up to and including it): the context size is known without estimating the
    whole history again."""
    turn_parents: list[tuple[str, str | None]] = field(
        default_factory=lambda: list[tuple[str, str | None]]()
    )
    """Every turn on the whole chain and the parent of its first record (rewind points)."""


def resume(
    path: Path, session_id: str, *, leaf: str | None = None, recover: bool = False
) -> ResumedSession:
    with paused_gc():
        resumed = _resume(path, session_id, leaf, recover)
        keep_out_of_gc(len(resumed.chain))
        return resumed


def _resume(path: Path, session_id: str, leaf: str | None, recover: bool) -> ResumedSession:
    live = None if recover else read_live(path, leaf)
    notes: list[str] = []
    if live is not None:  # the live part only (``live.py``)
        loaded, chain, users, turn_parents = live.loaded, live.chain, live.users, live.turn_parents
    else:  # the whole file, repairs included
        loaded = read_transcript(path, recover=recover)
        chain, notes = build_chain(loaded.records, leaf)
        users = sum(1 for r in chain if isinstance(r, UserRecord))
        turn_parents = _turn_parents(chain)
    notes[:0] = loaded.skipped
    if loaded.torn_tail is not None:
        notes.append("a torn last line (a write cut short by a crash) was set aside")
    kept, discovered = live_conversation(chain)
    messages = [r.message for r in kept]
    message_turns: list[str | None] = [r.turn_id for r in kept]
    _pair_tool_blocks(messages, message_turns, notes)
    state = _run_state(chain)
    if live is not None and unanswered_tool_uses(messages):
        loaded.progress += live.tool_progress()
    repairs = _answer_dangling(messages, loaded.progress, session_id, notes)
    repairs += _interrupted_tasks(loaded.progress, session_id, messages, notes)
    message_turns += [None] * (len(messages) - len(message_turns))
    meta = loaded.meta
    # The meta line may be older than the chain (a torn last line took the newer one); a
    # turn counts once the model answered it (a prompt that failed before any answer is none).
    answered = {r.turn_id for r in chain if isinstance(r, AssistantRecord) and r.turn_id}
    turns = max(meta.turns, len(answered)) if meta else users
    anchor = next(
        (
            (i + 1, r.usage)
            for i, r in zip(range(len(kept) - 1, -1, -1), reversed(kept), strict=True)
            if isinstance(r, AssistantRecord) and r.usage is not None
        ),
        None,
    )
    return ResumedSession(
        session_id=session_id,
        messages=messages,
        chain=chain,
        last_uuid=chain[-1].uuid if chain else None,
        mode=state["mode"],
        todos=state["todos"],
        files=state["files"],
        title=meta.title if meta else None,
        turns=turns,
        repaired=notes,
        repairs=repairs,
        loaded=loaded,
        message_turns=message_turns,
        discovered_tools=discovered,
        usage=meta.usage if meta and meta.usage else Usage(),
        context_anchor=anchor,
        turn_parents=turn_parents,
    )


def _turn_parents(chain: list[ChainRecord]) -> list[tuple[str, str | None]]:
    turns: dict[str, str | None] = {}
    for record in chain:
        if record.turn_id and record.turn_id not in turns:
            turns[record.turn_id] = record.parent_uuid
    return list(turns.items())


def live_conversation(
    chain: list[ChainRecord],
) -> tuple[list[UserRecord | AssistantRecord | ToolResultRecord | AttachmentRecord], list[str]]:
    """The records the model still sees (after the last compaction boundary) and the
    deferred tools discovered before that boundary."""
    start = 0
    discovered: list[str] = []
    for i, record in enumerate(chain):
        if isinstance(record, SystemRecord) and isinstance(record.data, CompactBoundaryData):
            start = i + 1
            discovered = list(record.data.discovered_tools)
    return [r for r in chain[start:] if isinstance(r, CONVERSATION)], discovered


def conversation_at(path: Path, leaf: str | None) -> list[Message]:
    """The messages the model saw when the chain ended at ``leaf`` (None: nothing yet)."""
    if leaf is None:
        return []
    with paused_gc():
        chain, _notes = build_chain(read_transcript(path).records, leaf)
        kept = live_conversation(chain)[0]
        messages = [r.message for r in kept]
        _pair_tool_blocks(messages, [r.turn_id for r in kept], [])
        return messages


def _run_state(chain: list[ChainRecord]) -> dict[str, Any]:
    mode: Mode | None = None
    todos: list[PlanEntry] = []
    files: dict[str, dict[str, Any]] = {}
    for record in chain:
        if not isinstance(record, SystemRecord):
            continue
        data = record.data
        if isinstance(data, ModeData):
            mode = data.mode
        elif isinstance(data, PlanData):
            todos = list(data.entries)
        elif isinstance(data, FilesData):
            files = dict(data.files)
    return {"mode": mode, "todos": todos, "files": files}


LOST_CALL = "[The record of the tool call this result answered was lost from the transcript.]"
LOST_RESULT = "[The record of this tool call's result was lost from the transcript.]"


def _pair_tool_blocks(messages: list[Message], turns: list[str | None], notes: list[str]) -> None:
    """Mend what a lost line leaves (the API refuses a conversation with either): a tool
    result whose call is not in the message before it becomes text, and a tool call with
    no result in the message after it gets one saying the result was lost. The last call
    and its results are ``_answer_dangling``'s (a crash mid-turn: results may be in the
    progress records)."""
    orphans = unanswered = 0
    for i, message in enumerate(messages):
        if message.role != "user" or not message.tool_results:
            continue
        before = messages[i - 1] if i and messages[i - 1].role == "assistant" else None
        calls = {u.id for u in before.tool_uses} if before else set[str]()
        content: list[Block] = []
        mended = False
        for block in message.content:
            if isinstance(block, ToolResultBlock) and block.tool_use_id not in calls:
                mended = True
                orphans += 1
                text = f"{LOST_CALL}\n{block.text}" if block.text else LOST_CALL
                content.append(TextBlock(text=text))
                content += [b for b in block.content if not isinstance(b, TextBlock)]
            else:
                content.append(block)
        if mended:
            messages[i] = message.model_copy(update={"content": content})
    i = 0
    while i < len(messages) - 2:  # the last call and its results: ``_answer_dangling``'s
        message, after = messages[i], messages[i + 1]
        i += 1
        if message.role != "assistant" or not message.tool_uses:
            continue
        answered = (
            {r.tool_use_id for r in after.tool_results} if after.role == "user" else set[str]()
        )
        lost = [u for u in message.tool_uses if u.id not in answered]
        if not lost:
            continue
        unanswered += len(lost)
        results: list[Block] = [tool_result(u.id, LOST_RESULT, is_error=True) for u in lost]
        if after.role == "user":
            firsts = [b for b in after.content if isinstance(b, ToolResultBlock)]
            rest = [b for b in after.content if not isinstance(b, ToolResultBlock)]
            messages[i] = after.model_copy(update={"content": [*firsts, *results, *rest]})
        else:  # two answers in a row: the results go between them
            messages.insert(i, Message(role="user", content=results))
            turns.insert(i, None)
    if orphans:
        notes.append(
            f"{orphans} tool result(s) whose call was lost from the transcript were turned "
            "into text (the model sees them as such)"
        )
    if unanswered:
        notes.append(
            f"{unanswered} tool call(s) whose result was lost from the transcript were "
            "marked as having no result"
        )


def _answer_dangling(
    messages: list[Message], progress: list[ProgressRecord], session_id: str, notes: list[str]
) -> list[ChainRecord | ProgressRecord]:
    dangling = unanswered_tool_uses(messages)
    if not dangling:
        return []
    started = {p.data.tool_use_id for p in progress if isinstance(p.data, ToolStartedData)}
    finished = _finished_results(progress)
    results: list[ToolResultBlock] = []
    for use in dangling:
        if use.id in finished:
            results.append(finished[use.id])
        else:
            text = PARTLY_RAN if use.id in started else NOT_RUN
            results.append(tool_result(use.id, text, is_error=True))
    kept = sum(1 for u in dangling if u.id in finished)
    partly = sum(1 for u in dangling if u.id in started and u.id not in finished)
    lost = len(dangling) - kept
    notes.append(
        f"{len(dangling)} tool call(s) had no result in the conversation: {kept} finished "
        f"result(s) kept, {lost} marked as cut off by the crash"
        + (f" ({partly} may have partly run)" if partly else "")
    )
    message = Message(role="user", content=list(results))
    messages.append(message)
    return [ToolResultRecord(session_id=session_id, message=message)]


def _finished_results(progress: list[ProgressRecord]) -> dict[str, ToolResultBlock]:
    out: dict[str, ToolResultBlock] = {}
    for record in progress:
        # A damaged record loads as an unknown payload: that call counts as cut off.
        if isinstance(record.data, ToolFinishedData):
            out[record.data.result.tool_use_id] = record.data.result
    return out


def _interrupted_tasks(
    progress: list[ProgressRecord], session_id: str, messages: list[Message], notes: list[str]
) -> list[ChainRecord | ProgressRecord]:
    started: dict[str, TaskData] = {}
    for record in progress:
        data = record.data
        if isinstance(data, TaskData) and data.event == "task_started":
            started[data.task_id] = data
        elif isinstance(data, TaskData):
            started.pop(data.task_id, None)
    if not started:
        return []
    lines = [
        "<task-notification>\n"
        f"<task-id>{task_id}</task-id>\n<tool-use-id>{data.tool_use_id or ''}</tool-use-id>\n"
        f"<status>killed</status>\n<summary>{data.description}: interrupted when "
        "the session ended; it is no longer running</summary>\n"
        f"<output-file>{data.output_file}</output-file>\n</task-notification>"
        for task_id, data in started.items()
    ]
    notes.append(f"{len(started)} background task(s) that were running are reported as interrupted")
    message = Message(role="user", content=[TextBlock(text="\n".join(lines))])
    messages.append(message)
    ended: list[ChainRecord | ProgressRecord] = [
        ProgressRecord(
            session_id=session_id,
            data=TaskData(
                event="task_finished", task_id=task_id, status="killed", reason="session ended"
            ),
        )
        for task_id in started
    ]
    notice = AttachmentRecord(
        session_id=session_id, message=message, attachment="task_notification"
    )
    return [notice, *ended]
