"""Code actions for editors without a Tether plugin.

On a diagnostic the request carries: "Tether: fix this" (``quickfix``). On lines the agent
changed: "Tether: keep this change", "Tether: undo this change" and "… all changes in this
file" (``source.tether.review``, made by ``changes``). On a selection:
"Tether: explain", "Tether: refactor…", "Tether: write tests" (``source.tether.*``). On an
instruction comment (``instructions``): "Tether: do this". Each action is only a ``command``
(the ``tether.*`` commands of ``commands``), so it works in clients that never resolve
edits; the turn it starts answers through ``$/progress``, edits, dialogs and messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from lsprotocol import converters, types

from tether.lsp import instructions

FIX = "tether.fix"
EXPLAIN = "tether.explain"
REFACTOR = "tether.refactor"
WRITE_TESTS = "tether.writeTests"
INSTRUCTION = "tether.instruction"

KIND_EXPLAIN = "source.tether.explain"
KIND_REFACTOR = "source.tether.refactor"
KIND_TESTS = "source.tether.tests"
KIND_INSTRUCTION = "source.tether.instruction"
KIND_REVIEW = "source.tether.review"
"""Keep or undo the agent's changes under the cursor (``changes``)."""

ReviewAction = tuple[str, types.Command, str | None]
"""A review action: its kind, its command, and why it is disabled (None: it is not)."""
KINDS: list[str] = [
    types.CodeActionKind.QuickFix.value,
    KIND_REVIEW,
    KIND_EXPLAIN,
    KIND_REFACTOR,
    KIND_TESTS,
    KIND_INSTRUCTION,
]
"""What ``codeActionProvider.codeActionKinds`` advertises."""

Action = types.CodeAction | types.Command
_CONVERTER = converters.get_converter()


def _range(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def _wanted(kind: str, only: list[str] | None) -> bool:
    """LSP's ``context.only`` filter: a kind matches its own name and every parent."""
    if not only:
        return True
    return any(kind == o or kind.startswith(o + ".") for o in only)


def lines_of(selection: types.Range) -> tuple[int, int]:
    """The lines a request's range is on (first, last, inclusive)."""
    first, last = selection.start.line, selection.end.line
    if last > first and selection.end.character == 0:
        last -= 1  # a selection of whole lines ends at the start of the next one
    return first, last


def code_actions(
    params: types.CodeActionParams,
    lines: list[str],
    language_id: str | None,
    path: PurePath,
    *,
    literals: bool,
    review: Sequence[ReviewAction] = (),
) -> list[Action]:
    """The actions for a request on a document with ``lines`` (the open buffer's text);
    ``review``: (kind, command, why disabled) of the changes under the request (after the
    fixes). A disabled one needs code action literals (LSP ``CodeAction.disabled``)."""
    uri = params.text_document.uri
    only = [str(getattr(k, "value", k)) for k in params.context.only or []] or None
    found: list[tuple[str, types.Command, list[types.Diagnostic] | None]] = []
    disabled: dict[int, str] = {}
    for diagnostic in params.context.diagnostics:
        wire: Any = _CONVERTER.unstructure(diagnostic)
        command = types.Command(
            title="Tether: fix this", command=FIX, arguments=[{"uri": uri, "diagnostic": wire}]
        )
        found.append((types.CodeActionKind.QuickFix.value, command, [diagnostic]))
    for kind, command, why in review:
        if why is not None:
            if not literals:
                continue  # a bare command cannot say it is disabled
            disabled[len(found)] = why
        found.append((kind, command, None))
    selection = params.range
    first, last = lines_of(selection)
    for instruction in instructions.in_lines(lines, first, last, language_id, path):
        args = [{"uri": uri, "line": instruction.line}]
        command = types.Command(title="Tether: do this", command=INSTRUCTION, arguments=args)
        found.append((KIND_INSTRUCTION, command, None))
    if selection.start != selection.end:
        args = [{"uri": uri, "range": _range(selection)}]
        for title, name, kind in (
            ("Tether: explain", EXPLAIN, KIND_EXPLAIN),
            ("Tether: refactor…", REFACTOR, KIND_REFACTOR),
            ("Tether: write tests", WRITE_TESTS, KIND_TESTS),
        ):
            found.append((kind, types.Command(title=title, command=name, arguments=args), None))
    out: list[Action] = []
    for index, (kind, command, diagnostics) in enumerate(found):
        if not _wanted(kind, only):
            continue
        why = disabled.get(index)
        if why is not None:
            out.append(
                types.CodeAction(
                    title=command.title, kind=kind, disabled=types.CodeActionDisabled(reason=why)
                )
            )
        elif literals:
            out.append(
                types.CodeAction(
                    title=command.title,
                    kind=kind,
                    diagnostics=diagnostics,
                    command=command,
                )
            )
        else:
            out.append(command)
    return out
