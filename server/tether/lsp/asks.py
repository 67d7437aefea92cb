"""What each plain-LSP action asks the agent: the prompt (package data, ``prompts/lsp``), the
code it is about (attached as ``resource_link`` blocks, so the engine reads the live buffer)
and the task a user sees in ``$/progress`` and in the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tether import prompts
from tether.lsp import instructions
from tether.protocol.base import LenientWireModel
from tether.protocol.content import ContentBlock, Position, Range, ResourceLink, TextContent

WHOLE_FILE_LINES = 1000
"""Files up to this many lines are attached whole; longer ones only around the spot."""
AROUND = 5
"""Lines of context on each side of a diagnostic."""
TASK_CHARS = 60
SEVERITIES = {1: "error", 2: "warning", 3: "info", 4: "hint"}

SelectionKind = Literal["explain", "refactor", "tests"]


class AskError(ValueError):
    """The action cannot be asked any more (its text is gone); the message says why."""


class Diagnostic(LenientWireModel):
    """The part of an LSP diagnostic a fix needs."""

    range: Range
    message: str
    severity: int | None = None
    source: str | None = None
    code: int | str | None = None


@dataclass(frozen=True)
class SourceDoc:
    """A file as the editor has it (its unsaved buffer when open)."""

    path: Path
    shown: str
    """The path as the user knows it (relative to the workspace)."""
    lines: list[str]
    language_id: str | None = None


@dataclass(frozen=True)
class Ask:
    """A turn asked for with standard LSP."""

    task: str
    """What the turn is for, in a few words: the progress title and the transcript heading."""
    blocks: list[ContentBlock]
    request: str
    """The request as the transcript shows it."""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TASK_CHARS else text[: TASK_CHARS - 1] + "…"


def _link(doc: SourceDoc, first: int | None = None, last: int | None = None) -> ResourceLink:
    uri = doc.path.as_uri()
    if first is None or last is None:
        return ResourceLink(uri=uri)
    last = max(first, min(last, len(doc.lines) - 1))
    # Whole lines: the range ends at the start of the line after the last one.
    span = Range(start=Position(line=first, character=0), end=Position(line=last + 1, character=0))
    return ResourceLink(uri=uri, range=span)


def _whole(doc: SourceDoc) -> bool:
    return len(doc.lines) <= WHOLE_FILE_LINES


def fix(doc: SourceDoc, diagnostic: Diagnostic) -> Ask:
    line = diagnostic.range.start.line
    source = f" ({diagnostic.source})" if diagnostic.source else ""
    severity = SEVERITIES.get(diagnostic.severity or 1, "error")
    whole = _whole(doc)
    tail = (
        ", with the whole file after it"
        if whole
        else f"; the file has {len(doc.lines)} lines: read the parts you need"
    )
    text = prompts.render(
        "lsp/fix.md",
        path=doc.shown,
        line=line + 1,
        severity=severity,
        message=diagnostic.message,
        source=source,
        whole_file=tail,
    )
    blocks: list[ContentBlock] = [
        TextContent(text=text),
        _link(doc, max(0, line - AROUND), diagnostic.range.end.line + AROUND),
    ]
    if whole:
        blocks.append(_link(doc))
    return Ask(f"fix {_short(diagnostic.message)}", blocks, text)


REFACTOR_DEFAULT = "make it clearer and simpler"


def selection(kind: SelectionKind, doc: SourceDoc, span: Range, how: str | None = None) -> Ask:
    first, last = span.start.line, span.end.line
    if last > first and span.end.character == 0:
        last -= 1
    where = f"{doc.shown}:{first + 1}–{last + 1}"
    if kind == "explain":
        text = prompts.render("lsp/explain.md", path=doc.shown, first=first + 1, last=last + 1)
        task = f"explain {where}"
    elif kind == "refactor":
        text = prompts.render(
            "lsp/refactor.md",
            path=doc.shown,
            first=first + 1,
            last=last + 1,
            how=how or REFACTOR_DEFAULT,
        )
        task = f"refactor {where}"
    else:
        text = prompts.render("lsp/tests.md", path=doc.shown, first=first + 1, last=last + 1)
        task = f"write tests for {where}"
    return Ask(task, [TextContent(text=text), _link(doc, first, last)], text)


def instruction(doc: SourceDoc, line: int) -> Ask:
    found = (
        instructions.find(doc.lines[line], line, instructions.syntaxes(doc.language_id, doc.path))
        if 0 <= line < len(doc.lines)
        else None
    )
    if found is None:
        raise AskError(
            f"line {line + 1} of {doc.shown} no longer holds a tether: instruction comment"
        )
    text = prompts.render(
        "lsp/instruction.md", path=doc.shown, line=line + 1, comment=found.comment
    )
    context = _link(doc) if _whole(doc) else _link(doc, max(0, line - 40), line + 40)
    return Ask(_short(found.text), [TextContent(text=text), context], text)


def free(text: str, doc: SourceDoc | None, span: Range | None) -> Ask:
    """``tether.prompt``: the user's own words, with the file (or selection) they name."""
    blocks: list[ContentBlock] = [TextContent(text=text)]
    if doc is not None:
        if span is None:
            blocks.append(_link(doc))
        else:
            last = span.end.line
            if last > span.start.line and span.end.character == 0:
                last -= 1
            blocks.append(_link(doc, span.start.line, last))
    return Ask(_short(text), blocks, text)
