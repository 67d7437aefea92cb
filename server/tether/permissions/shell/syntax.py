"""Bash syntax on tree-sitter-bash: every simple command a line would run.

A command is only as safe as the worst command hidden in it, and those hide after
``;``/``&&``/``|``, in ``$(...)``, backticks, ``<(...)``, ``${x:-$(...)}``, arithmetic,
unquoted heredocs, subshells, blocks, loops, ``case`` arms and function bodies. The walker
visits every one of them. Anything the grammar reports as an error or that the walker does
not model raises ``Unanalysable``: such a line is never read-only and asks.

Besides the commands, the walker tracks one way bash runs code that no command shows:
arithmetic evaluates a variable's *value* as an expression, and an array subscript in it
(``a[$(cmd)]``) runs ``cmd``. Variables the environment brings are trusted; a variable the
same line assigns from anything but a plain number (a ``for`` word, ``read``, a
substitution, a glob) is not, nor is the output of a substitution inside arithmetic.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from tether.permissions.shell.builtins import NAME_BUILTINS, TAINTING, names_are_plain
from tether.permissions.shell.lexical import (
    INTEGER,
    NAME,
    UNPARSED_EXPANSION,
    WORD_TYPES,
    node_text,
)
from tether.permissions.shell.model import Redirect, Script, SimpleCommand, Word
from tether.permissions.shell.words import Taint, Unanalysable, Words

__all__ = ["Unanalysable", "parse_script"]

_LANGUAGE = Language(tree_sitter_bash.language())
_PARSER = Parser(_LANGUAGE)
_LOCK = threading.Lock()  # a Parser is not safe to share between threads


# Containers whose named children are statements.
_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "do_group",
        "else_clause",
        "elif_clause",
        "if_statement",
        "negated_command",
    }
)
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


class _Walker:
    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.taint = Taint()
        self.words = Words(self, self.taint)
        self.functions: set[str] = set()
        self.loops = 0
        """How many loops or function bodies enclose the current statement."""

    # -- statements --------------------------------------------------------------------

    def statement(self, node: Node, inherited: tuple[Redirect, ...] = ()) -> None:
        kind = node.type
        if not node.is_named or kind == "comment":
            return
        if kind in _CONTAINERS:
            for child in node.children:
                self.statement(child, inherited)
        elif kind == "command":
            self.command(node, inherited)
        elif kind == "redirected_statement":
            self.redirected(node, inherited)
        elif kind == "compound_statement":
            if node.children and node.children[0].type == "((":
                self.arithmetic_command(node)
            else:
                for child in node.children:
                    self.statement(child, inherited)
        elif kind in ("variable_assignment", "variable_assignments"):
            self.bare_assignments(node, inherited)
        elif kind == "declaration_command" or kind == "unset_command":
            self.declaration(node, inherited)
        elif kind == "test_command":
            self.test_command(node, inherited)
        elif kind == "while_statement":
            self.loops += 1
            for child in node.children:
                self.statement(child, inherited)
            self.loops -= 1
        elif kind == "for_statement":
            self.for_statement(node, inherited)
        elif kind == "c_style_for_statement":
            self.c_style_for(node, inherited)
        elif kind == "case_statement":
            self.case_statement(node, inherited)
        elif kind == "function_definition":
            self.function(node)
        else:
            raise Unanalysable(f"unsupported shell construct: {kind}")

    def command(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        words: list[Word] = []
        assignments: list[str] = []
        redirects = list(inherited)
        later: list[Node] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.assignment(child))
            elif kind == "command_name":
                words.extend(self.words.word(c) for c in child.children)
            elif kind in _REDIRECTS:
                found, after = self.redirect(child)
                redirects += found
                later += after
            elif kind == "comment":
                continue
            elif child.is_named:
                words.append(self.words.word(child))
            else:
                words.append(Word(node_text(child), None))  # a stray `$` of `$"..."`
        self.add(SimpleCommand(tuple(words), tuple(assignments), tuple(redirects), node_text(node)))
        for statement in later:
            self.statement(statement)

    def add(self, cmd: SimpleCommand, *, names_checked: bool = False) -> None:
        if self.loops:
            cmd = replace(cmd, repeats=True)
        if cmd.words:
            name = cmd.words[0].text
            if name in TAINTING or (name == "printf" and "-v" in cmd.argv):
                self.taint.tainted.add("*")
            if name in NAME_BUILTINS and not names_checked and not names_are_plain(cmd):
                self.taint.hazards.append(f"`{name}` is given a variable name bash would evaluate")
            if name == "let":
                for word in cmd.words[1:]:
                    self.words.arith_text(word)
        self.commands.append(cmd)

    def redirected(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        redirects = list(inherited)
        later: list[Node] = []
        body: Node | None = None
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "body":
                body = child
            elif child.type in _REDIRECTS:
                found, after = self.redirect(child)
                redirects += found
                later += after
            elif child.is_named and child.type != "comment":
                raise Unanalysable(f"unsupported redirection: {child.type}")
        if body is not None:
            self.tail(body, inherited, tuple(redirects))
        for statement in later:
            self.statement(statement)

    def tail(self, node: Node, inherited: tuple[Redirect, ...], redirects: tuple[Redirect, ...]):
        """tree-sitter hangs ``a && b > f`` and ``a | b > f`` on the whole list, but bash
        redirects only the last command: give the redirections to that one."""
        if node.type not in ("list", "pipeline"):
            self.statement(node, redirects)
            return
        parts = [c for c in node.children if c.is_named and c.type != "comment"]
        for part in parts[:-1]:
            self.statement(part, inherited)
        if parts:
            self.tail(parts[-1], inherited, redirects)

    def redirect(self, node: Node) -> tuple[list[Redirect], list[Node]]:
        """The redirections of one redirect node, and statements that follow a heredoc
        operator on its line (tree-sitter nests ``cat <<EOF | grep x`` inside it)."""
        kind = node.type
        if kind == "herestring_redirect":
            targets = [self.words.word(c) for c in node.children if c.is_named]
            return [Redirect("<<<", targets[0] if targets else None)], []
        if kind == "file_redirect":
            fd, op, target = "", "", None
            for child in node.children:
                if child.type == "file_descriptor":
                    fd = node_text(child)
                elif not child.is_named:
                    op += node_text(child)
                elif target is None:
                    target = self.words.word(child)
                else:
                    raise Unanalysable("a redirection with two targets")
            return [Redirect(fd + op, target)], []
        return self.heredoc(node)

    def heredoc(self, node: Node) -> tuple[list[Redirect], list[Node]]:
        op, delimiter, quoted = "<<", "", False
        found: list[Redirect] = []
        later: list[Node] = []
        for child in node.children:
            kind = child.type
            if kind in ("<<", "<<-"):
                op = kind
            elif kind == "heredoc_start":
                raw = node_text(child)
                quoted = any(c in raw for c in "'\"\\")
                delimiter = raw.strip("'\"").replace("\\", "")
            elif kind == "heredoc_body":
                if not quoted:
                    self.heredoc_body(child)
            elif kind in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                more, after = self.redirect(child)
                found += more
                later += after
            elif kind == "heredoc_end" or not child.is_named:
                continue
            else:
                later.append(child)
        return [Redirect(op, Word.literal(delimiter)), *found], later

    def heredoc_body(self, node: Node) -> None:
        """bash expands an unquoted heredoc: ``$(...)``, backticks, ``${...}``."""
        if not node.children and UNPARSED_EXPANSION.search(node_text(node)):
            raise Unanalysable("a substitution in a heredoc the grammar does not read")
        for child in node.children:
            if child.type == "heredoc_content":
                if UNPARSED_EXPANSION.search(node_text(child)):
                    raise Unanalysable("a substitution in a heredoc the grammar does not read")
            elif child.is_named:
                self.words.word(child)

    def bare_assignments(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        parts = [node] if node.type == "variable_assignment" else list(node.named_children)
        assignments = tuple(self.assignment(p) for p in parts if p.type == "variable_assignment")
        self.add(SimpleCommand((), assignments, inherited, node_text(node)))

    def assignment(self, node: Node) -> str:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            raise Unanalysable("an assignment without a name")
        name = node_text(name_node)
        if name_node.type == "subscript":
            name = self.words.subscript(name_node)
        op = "+=" if any(c.type == "+=" for c in node.children) else "="
        if value_node is None:
            value = Word.literal("")
        elif value_node.type == "array":
            elements = [self.words.word(c) for c in value_node.named_children]
            value = Word(node_text(value_node), None) if elements else Word.literal("()")
        else:
            value = self.words.word(value_node)
        if not (value.static and (value.value == "" or INTEGER.fullmatch(value.value or ""))):
            self.taint.tainted.add(name)
        return f"{name}{op}{value.text}"

    def declaration(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        words: list[Word] = []
        for child in node.children:
            if not child.is_named:
                if not words:
                    words.append(Word.literal(node_text(child)))  # declare, local, unset…
                continue
            if child.type == "variable_assignment":
                words.append(Word(self.assignment(child), None))
            elif child.type == "variable_name":
                words.append(Word.literal(node_text(child)))
            else:
                word = self.words.word(child)
                name = (word.value or "").split("=", 1)[0]
                if not word.text.startswith("-") and not NAME.fullmatch(name):
                    self.taint.hazards.append(
                        f"`{node_text(node)}` names a variable bash would evaluate"
                    )
                words.append(word)
        if any(w.text.startswith("-") and "n" in w.text for w in words[1:]):
            self.taint.tainted.add("*")  # a name reference makes every name an alias
        self.add(SimpleCommand(tuple(words), (), inherited, node_text(node)), names_checked=True)

    def test_command(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        words: list[Word] = []
        opening = node_text(node.children[0]) if node.children else "["
        self.test_expression(node, words, extended=opening == "[[")
        self.add(SimpleCommand(tuple(words), (), inherited, node_text(node)))

    def test_expression(self, node: Node, out: list[Word], *, extended: bool) -> None:
        kind = node.type
        if kind == "binary_expression" and extended:
            op = node.child_by_field_name("operator")
            if op is not None and node_text(op) in _ARITH_TEST_OPS:
                for side in ("left", "right"):
                    operand = node.child_by_field_name(side)
                    if operand is not None:
                        self.words.arith_operand(operand)
        if kind == "unary_expression" and extended:
            op = node.child_by_field_name("operator")
            operand = node.named_children[-1] if node.named_children else None
            if op is not None and node_text(op) == "-v" and operand is not None:
                value = self.words.word(operand)
                if not (value.static and NAME.fullmatch(value.value or "")):
                    self.taint.hazards.append("`[[ -v ]]` is given a name bash would evaluate")
        for child in node.children:
            if child.type in WORD_TYPES:
                out.append(self.words.word(child))
            elif not child.is_named or child.type == "test_operator":
                out.append(Word.literal(node_text(child)))
            else:
                self.test_expression(child, out, extended=extended)

    def arithmetic_command(self, node: Node) -> None:
        for child in node.named_children:
            self.words.arith_node(child)
        self.add(SimpleCommand((Word.literal("(("),), text=node_text(node)))

    def for_statement(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        variable = node.child_by_field_name("variable")
        values: list[Word] = []
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field == "value":
                values.append(self.words.word(child))
        if variable is not None:
            literal = all(w.static and INTEGER.fullmatch(w.value or "") for w in values)
            if not literal:
                self.taint.tainted.add(node_text(variable))
        body = node.child_by_field_name("body")
        if body is not None:
            self.loops += 1
            self.statement(body, inherited)
            self.loops -= 1

    def c_style_for(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field in ("initializer", "condition", "update"):
                self.words.arith_node(child)
            elif field == "body":
                self.loops += 1
                self.statement(child, inherited)
                self.loops -= 1

    def case_statement(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "value":
                self.words.word(child)
            elif child.type == "case_item":
                for j, part in enumerate(child.children):
                    if child.field_name_for_child(j) == "value":
                        self.words.word(part)
                    elif part.is_named:
                        self.statement(part, inherited)

    def function(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            self.functions.add(node_text(name))
        self.loops += 1  # a body runs once per call
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "body":
                self.statement(child)
            elif child.type in _REDIRECTS:
                self.redirect(child)
        self.loops -= 1

    # -- words -------------------------------------------------------------------------

    def substitution(self, node: Node) -> None:
        for child in node.children:
            if child.is_named:
                self.statement(child)

    # -- arithmetic --------------------------------------------------------------------

    def script(self) -> Script:
        return Script(tuple(self.commands), self.taint.hazard(), frozenset(self.functions))


def parse_script(command: str) -> Script:
    """Every simple command of ``command``; raises Unanalysable."""
    source = command.encode("utf-8", "surrogateescape")
    with _LOCK:
        tree = _PARSER.parse(source)
    root = tree.root_node
    if root.has_error:
        raise Unanalysable("the shell grammar does not accept this line")
    walker = _Walker()
    try:
        walker.statement(root)
    except RecursionError:
        raise Unanalysable("nested too deeply")
    return walker.script()
