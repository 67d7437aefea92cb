"""The Editor port (a Protocol) and its value types.

Every front door implements it: the LSP bridge (open buffers, versioned applyEdit, dialogs),
the ACP bridge (fs/* and session/request_permission) and the headless terminal bridge (disk
and a terminal prompt). The engine and the tools never import a front door.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from tether.protocol.content import ToolContent
from tether.protocol.updates import ToolKind


@dataclass(frozen=True)
class Document:
    """A file's text as the editor shows it (unsaved buffer if open, else disk)."""

    path: Path
    text: str
    version: int | None = None
    """Editor buffer version; None when the text came from disk."""
    in_editor: bool = False


@dataclass(frozen=True)
class Written:
    document: Document
    """The document as it is after the write (buffer and disk agree)."""


@dataclass(frozen=True)
class Conflict:
    """The document changed since ``base`` was read; nothing was written."""

    current: Document | None
    reason: str


@dataclass(frozen=True)
class Unconfirmed:
    """The editor accepted the write but never showed its result: the edit may or may not
    be in the buffer. Whoever wrote must read the file again before writing it again."""

    likely: Document
    """What the document most likely is now (the write's text when the editor went quiet)."""
    reason: str


WriteOutcome = Written | Conflict | Unconfirmed


async def current_document(editor: Editor, path: Path) -> Document | None:
    """The document as ``editor`` has it now; None when the file does not exist."""
    try:
        return await editor.read(path)
    except FileNotFoundError:
        return None


async def check_base(
    editor: Editor, path: Path, base: Document | None
) -> tuple[Document | None, Conflict | None]:
    """The start of every write: the current document, and the Conflict that forbids the
    write when it is no longer ``base``."""
    current = await current_document(editor, path)
    return current, conflict(base, current)


def conflict(base: Document | None, current: Document | None) -> Conflict | None:
    """Why a write based on ``base`` must not happen now that the text is ``current``
    (``base=None``: the file must not exist), or None when it may."""
    if base is None and current is not None:
        return Conflict(current, "the file was created meanwhile")
    if base is not None and (current is None or current.text != base.text):
        return Conflict(current, "the document changed since it was read")
    return None


PermissionAnswer = Literal[
    "allow_once", "allow_always", "reject_once", "reject_always", "cancelled"
]
OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
QuestionKind = Literal["tool", "plan"]


@dataclass(frozen=True)
class PermissionOption:
    """One answer a question offers; ``rule`` is what an "always" answer saves."""

    option_id: str
    name: str
    kind: OptionKind
    rule: str | None = None


PLAN_DEFAULT = PermissionOption("plan_default", "Start (ask before edits)", "allow_once")
PLAN_ACCEPT_EDITS = PermissionOption("plan_accept_edits", "Start (accept edits)", "allow_once")
PLAN_KEEP = PermissionOption("plan_keep", "Keep planning", "reject_once")
PLAN_OPTIONS = (PLAN_DEFAULT, PLAN_ACCEPT_EDITS, PLAN_KEEP)


@dataclass(frozen=True)
class PermissionRequest:
    """A question for the user about one tool call, exactly as it will run."""

    session_id: str
    tool_call_id: str
    tool_name: str
    title: str
    tool_kind: ToolKind
    raw_input: dict[str, Any]
    content: list[ToolContent] = field(default_factory=lambda: list[ToolContent]())
    always_rule: str | None = None
    """The rule an "always" answer would save, e.g. ``Bash(npm test:*)``; None: no rule is
    narrow enough to be safe, so no "always" answer is offered."""
    kind: QuestionKind = "tool"
    plan: str | None = None
    """For ``kind == "plan"``: the plan (Markdown) the user approves or sends back."""
    more_options: tuple[PermissionOption, ...] = ()
    """Answers this question offers after the usual ones (a network question's "reject the
    rest of this command")."""

    def options(self) -> list[PermissionOption]:
        """The answers, in the order every front door shows them."""
        if self.kind == "plan":
            return list(PLAN_OPTIONS)
        options = [PermissionOption("allow_once", "Allow once", "allow_once")]
        rule = self.always_rule
        if rule is not None:
            options.append(
                PermissionOption("allow_always", f"Always allow {rule}", "allow_always", rule)
            )
        options.append(PermissionOption("reject_once", "Reject", "reject_once"))
        if rule is not None:
            options.append(
                PermissionOption("reject_always", f"Always reject {rule}", "reject_always", rule)
            )
        return [*options, *self.more_options]

    def reply(self, option_id: str | None, feedback: str | None = None) -> PermissionReply:
        """The reply for an answer given by id (or by name, for plain dialogs); an id this
        question did not offer is not consent."""
        if option_id is None:
            return PermissionReply(None, feedback)
        for option in self.options():
            if option_id in (option.option_id, option.name):
                return PermissionReply(option, feedback or None)
        return PermissionReply(REJECTED_UNKNOWN, feedback or None)


REJECTED_UNKNOWN = PermissionOption("reject_once", "Reject", "reject_once")


@dataclass(frozen=True)
class PermissionReply:
    """The user's answer: the option chosen (None: the question was cancelled) and any
    feedback they typed with it."""

    option: PermissionOption | None
    feedback: str | None = None
    updated_input: dict[str, Any] | None = None
    """An allow that rewrote the call (an SDK program's ``updatedInput``): the call runs
    with this input, checked again, or not at all."""

    @property
    def answer(self) -> PermissionAnswer:
        return self.option.kind if self.option is not None else "cancelled"

    @property
    def allowed(self) -> bool:
        return self.answer in ("allow_once", "allow_always")


def reply_of(request: PermissionRequest, answer: PermissionAnswer) -> PermissionReply:
    """The reply meant by a bare answer kind (terminal and scripted askers): the first
    option of that kind, or of its "once" form when the question offers no "always"."""
    if answer == "cancelled":
        return PermissionReply(None)
    options = request.options()
    wanted = (answer, answer.replace("always", "once"))
    for kind in wanted:
        for option in options:
            if option.kind == kind:
                return PermissionReply(option)
    return PermissionReply(REJECTED_UNKNOWN)


class Editor(Protocol):
    async def read(self, path: Path) -> Document:
        """Current text of ``path``. Raises FileNotFoundError / IsADirectoryError /
        UnicodeDecodeError like ``open`` would."""
        ...

    async def write(
        self, path: Path, new_text: str, *, base: Document | None, label: str
    ) -> WriteOutcome:
        """Replace the document's text with ``new_text`` if it still equals ``base``
        (``base=None``: the file must not exist). Buffer and disk agree afterwards.
        ``Unconfirmed`` when the editor took the edit but its outcome cannot be known."""
        ...

    async def ask_permission(self, request: PermissionRequest) -> PermissionReply: ...


@runtime_checkable
class BufferOnlyWriter(Protocol):
    """Optional part of the Editor port: put ``new_text`` in the editor's buffer of ``path``
    (if it still holds ``base``) and leave the file on disk as it is, so the user's unsaved
    text there stays unsaved. None when no buffer holds the file (then ``write``)."""

    async def write_buffer_only(
        self, path: Path, new_text: str, *, base: Document, label: str
    ) -> WriteOutcome | None: ...


def buffer_only_writer(editor: object) -> BufferOnlyWriter | None:
    """``editor``, or an editor it wraps (``.inner``), that can write a buffer alone."""
    for _ in range(4):
        if isinstance(editor, BufferOnlyWriter):
            return editor
        editor = getattr(editor, "inner", None)
        if editor is None:
            break
    return None


class DiskSource(Protocol):
    """Optional part of the Editor port: whether the editor would read a file from disk
    (no buffer holds it), so that a tool may read just part of it there itself instead of
    taking the whole text through ``read``."""

    def reads_from_disk(self, path: Path) -> bool: ...


def reads_from_disk(editor: object, path: Path) -> bool:
    """Does ``editor`` (or an editor it wraps, ``.inner``) read ``path`` from disk? False
    when it cannot tell: then only ``read`` gives the text."""
    for _ in range(4):
        check = getattr(editor, "reads_from_disk", None)
        if callable(check):
            return bool(check(path))
        editor = getattr(editor, "inner", None)
        if editor is None:
            break
    return False


class TrustDialog(Protocol):
    """Optional part of the Editor port: the one-time workspace trust question.

    Kept apart from ``Editor`` so front doors without it still satisfy the port; callers
    fall back to ``ask_permission`` (see ``permissions.trust_dialog``)."""

    async def trust_workspace(self, root: Path, withheld: list[str]) -> bool:
        """May the workspace's own configuration run the things listed in ``withheld``
        (hooks, MCP servers, env...)? True is remembered for this workspace."""
        ...
