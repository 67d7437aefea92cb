"""``workspace/executeCommand``: Tether's commands for editors without a plugin, and the
commands its code actions carry.

Every command takes one object argument (a bare string is accepted where one field says it
all: the text of ``tether.prompt``, the mode of ``tether.setMode``), validated here so a bad
one gets -32602 naming the field, and answers at once (see ``plain_turns``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import Field, ValidationError

from tether.lsp import actions, asks, changes
from tether.lsp.asks import Diagnostic
from tether.lsp.params import InvalidParamsError
from tether.lsp.plain_changes import ChangeArgs, PlainChanges
from tether.lsp.plain_turns import PlainTurns
from tether.lsp.server import TetherServer
from tether.lsp.wire import wire_errors
from tether.protocol.base import LenientWireModel
from tether.protocol.content import Range
from tether.protocol.updates import Mode

PROMPT = "tether.prompt"
CANCEL = "tether.cancel"
UNDO = "tether.undoLastTurn"
NEW_SESSION = "tether.newSession"
SET_MODE = "tether.setMode"

REFACTOR_QUESTION = "How should Tether refactor the selection?"
REFACTORINGS = {
    "Simplify": "simplify it",
    "Extract functions": "extract well-named functions from it where that helps",
    "Improve names": "give its variables and functions clearer names",
    "Make it idiomatic": "make it idiomatic for its language",
}

A = TypeVar("A", bound=LenientWireModel)


class PromptArgs(LenientWireModel):
    text: str = Field(min_length=1)
    uri: str | None = None
    range: Range | None = None


class WhereArgs(LenientWireModel):
    uri: str | None = None
    """A file (or folder) of the workspace meant; default: the first workspace folder."""


class NewSessionArgs(WhereArgs):
    mode: Mode | None = None


class SetModeArgs(WhereArgs):
    mode: Mode


class FixArgs(LenientWireModel):
    uri: str
    diagnostic: Diagnostic


class SelectionArgs(LenientWireModel):
    uri: str
    range: Range


class InstructionArgs(LenientWireModel):
    uri: str
    line: int = Field(ge=0)


def parse_args(model: type[A], arguments: tuple[Any, ...], bare: str | None = None) -> A:
    """The command's one argument as ``model``; the error names the field."""
    if len(arguments) > 1:
        raise InvalidParamsError(
            f"invalid arguments: expected one object, got {len(arguments)} arguments"
        )
    value: Any = arguments[0] if arguments else {}
    if bare is not None and isinstance(value, str):
        value = {bare: value}
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise InvalidParamsError("invalid arguments: arguments[0] must be an object")
    try:
        return model.model_validate(value)
    except ValidationError as e:
        problems = [
            f"arguments[0].{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            for err in e.errors(include_url=False)
        ]
        raise InvalidParamsError("invalid arguments: " + "; ".join(problems)) from None


COMMANDS = [
    PROMPT,
    CANCEL,
    UNDO,
    NEW_SESSION,
    SET_MODE,
    actions.FIX,
    actions.EXPLAIN,
    actions.REFACTOR,
    actions.WRITE_TESTS,
    actions.INSTRUCTION,
    changes.KEEP,
    changes.UNDO,
]
"""Every command, as ``executeCommandProvider.commands`` lists them."""


def register(server: TetherServer, turns: PlainTurns, review: PlainChanges) -> None:
    @server.command(changes.KEEP)
    @wire_errors
    def keep_changes(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        return review.keep(parse_args(ChangeArgs, arguments))

    @server.command(changes.UNDO)
    @wire_errors
    def undo_changes(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        return review.undo(parse_args(ChangeArgs, arguments))

    @server.command(PROMPT)
    @wire_errors
    async def prompt(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        args = parse_args(PromptArgs, arguments, bare="text")
        if args.uri is None:
            return turns.start(turns.root_of(None), asks.free(args.text, None, None))
        root, doc = await turns.source(args.uri)
        return turns.start(root, asks.free(args.text, doc, args.range))

    @server.command(CANCEL)
    @wire_errors
    def cancel(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        return {"cancelled": turns.cancel(parse_args(WhereArgs, arguments).uri)}

    @server.command(UNDO)
    @wire_errors
    def undo(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        return turns.undo(turns.root_of(parse_args(WhereArgs, arguments).uri))

    @server.command(NEW_SESSION)
    @wire_errors
    def new_session(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        args = parse_args(NewSessionArgs, arguments)
        session_id = turns.new_session(turns.root_of(args.uri), args.mode)
        turns.say("started a fresh session")
        return {"sessionId": session_id}

    @server.command(SET_MODE)
    @wire_errors
    def set_mode(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        args = parse_args(SetModeArgs, arguments, bare="mode")
        return {"sessionId": turns.set_mode(turns.root_of(args.uri), args.mode)}

    @server.command(actions.FIX)
    @wire_errors
    async def fix(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        args = parse_args(FixArgs, arguments)
        root, doc = await turns.source(args.uri)
        return turns.start(root, asks.fix(doc, args.diagnostic))

    @server.command(actions.EXPLAIN)
    @wire_errors
    async def explain(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        args = parse_args(SelectionArgs, arguments)
        root, doc = await turns.source(args.uri)
        return turns.start(root, asks.selection("explain", doc, args.range))

    @server.command(actions.WRITE_TESTS)
    @wire_errors
    async def write_tests(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        args = parse_args(SelectionArgs, arguments)
        root, doc = await turns.source(args.uri)
        return turns.start(root, asks.selection("tests", doc, args.range))

    @server.command(actions.REFACTOR)
    @wire_errors
    async def refactor(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        args = parse_args(SelectionArgs, arguments)
        root, doc = await turns.source(args.uri)

        async def ask() -> asks.Ask | None:
            how = await turns.choose(REFACTOR_QUESTION, list(REFACTORINGS))
            if how is None:
                return None
            return asks.selection("refactor", doc, args.range, REFACTORINGS.get(how, how))

        return turns.start(root, ask)

    @server.command(actions.INSTRUCTION)
    @wire_errors
    async def instruction(ls: TetherServer, *arguments: Any) -> dict[str, Any]:
        args = parse_args(InstructionArgs, arguments)
        root, doc = await turns.source(args.uri)
        return turns.start(root, asks.instruction(doc, args.line))
