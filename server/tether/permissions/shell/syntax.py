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

import os
import re
import threading
from dataclasses import replace

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from tether.permissions.shell.model import Redirect, Script, SimpleCommand, Word

_LANGUAGE = Language(tree_sitter_bash.language())
_PARSER = Parser(_LANGUAGE)
_LOCK = threading.Lock()  # a Parser is not safe to share between threads


class Unanalysable(Exception):
    """The line uses syntax the grammar rejects or the walker does not model."""


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
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_UNPARSED_EXPANSION = re.compile(r"`|\$[({\[]")
_BRACES = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
# Builtins that store into a variable named by an argument; bash evaluates a subscript in
# that name, so the name must be a plain one. Value: options that take a value, and the
# options whose value is such a name.
_NAME_BUILTINS: dict[str, tuple[str, str]] = {
    "read": ("adinNptu", "a"),
    "mapfile": ("dnOsuCc", ""),
    "readarray": ("dnOsuCc", ""),
    "unset": ("", ""),
    "export": ("", ""),
    "readonly": ("", ""),
    "declare": ("", ""),
    "typeset": ("", ""),
    "local": ("", ""),
    "getopts": ("", ""),
    "wait": ("p", "p"),
    "printf": ("v", "v"),
    "test": ("", ""),
    "[": ("", ""),
}
# Builtins that assign variables from text the line does not show.
_TAINTING = frozenset({"read", "mapfile", "readarray", "getopts", "source", ".", "eval", "set"})


class _Walker:
    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.arith: set[str] = set()
        """Names bash evaluates as arithmetic; "*" for text read at run time."""
        self.tainted: set[str] = set()
        """Names the line assigns from untrusted values; "*" for any name."""
        self.hazards: list[str] = []
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
                words.extend(self.word(c) for c in child.children)
            elif kind in _REDIRECTS:
                found, after = self.redirect(child)
                redirects += found
                later += after
            elif kind == "comment":
                continue
            elif child.is_named:
                words.append(self.word(child))
            else:
                words.append(Word(_text(child), None))  # a stray `$` of `$"..."`
        self.add(SimpleCommand(tuple(words), tuple(assignments), tuple(redirects), _text(node)))
        for statement in later:
            self.statement(statement)

    def add(self, cmd: SimpleCommand, *, names_checked: bool = False) -> None:
        if self.loops:
            cmd = replace(cmd, repeats=True)
        if cmd.words:
            name = cmd.words[0].text
            if name in _TAINTING or (name == "printf" and "-v" in cmd.argv):
                self.tainted.add("*")
            if name in _NAME_BUILTINS and not names_checked and not _names_are_plain(cmd):
                self.hazards.append(f"`{name}` is given a variable name bash would evaluate")
            if name == "let":
                for word in cmd.words[1:]:
                    self.arith_text(word)
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
            targets = [self.word(c) for c in node.children if c.is_named]
            return [Redirect("<<<", targets[0] if targets else None)], []
        if kind == "file_redirect":
            fd, op, target = "", "", None
            for child in node.children:
                if child.type == "file_descriptor":
                    fd = _text(child)
                elif not child.is_named:
                    op += _text(child)
                elif target is None:
                    target = self.word(child)
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
                raw = _text(child)
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
        if not node.children and _UNPARSED_EXPANSION.search(_text(node)):
            raise Unanalysable("a substitution in a heredoc the grammar does not read")
        for child in node.children:
            if child.type == "heredoc_content":
                if _UNPARSED_EXPANSION.search(_text(child)):
                    raise Unanalysable("a substitution in a heredoc the grammar does not read")
            elif child.is_named:
                self.word(child)

    def bare_assignments(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        parts = [node] if node.type == "variable_assignment" else list(node.named_children)
        assignments = tuple(self.assignment(p) for p in parts if p.type == "variable_assignment")
        self.add(SimpleCommand((), assignments, inherited, _text(node)))

    def assignment(self, node: Node) -> str:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            raise Unanalysable("an assignment without a name")
        name = _text(name_node)
        if name_node.type == "subscript":
            name = self.subscript(name_node)
        op = "+=" if any(c.type == "+=" for c in node.children) else "="
        if value_node is None:
            value = Word.literal("")
        elif value_node.type == "array":
            elements = [self.word(c) for c in value_node.named_children]
            value = Word(_text(value_node), None) if elements else Word.literal("()")
        else:
            value = self.word(value_node)
        if not (value.static and (value.value == "" or _INTEGER.fullmatch(value.value or ""))):
            self.tainted.add(name)
        return f"{name}{op}{value.text}"

    def declaration(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        words: list[Word] = []
        for child in node.children:
            if not child.is_named:
                if not words:
                    words.append(Word.literal(_text(child)))  # declare, local, unset…
                continue
            if child.type == "variable_assignment":
                words.append(Word(self.assignment(child), None))
            elif child.type == "variable_name":
                words.append(Word.literal(_text(child)))
            else:
                word = self.word(child)
                name = (word.value or "").split("=", 1)[0]
                if not word.text.startswith("-") and not _NAME.fullmatch(name):
                    self.hazards.append(f"`{_text(node)}` names a variable bash would evaluate")
                words.append(word)
        if any(w.text.startswith("-") and "n" in w.text for w in words[1:]):
            self.tainted.add("*")  # a name reference makes every name an alias
        self.add(SimpleCommand(tuple(words), (), inherited, _text(node)), names_checked=True)

    def test_command(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        words: list[Word] = []
        opening = _text(node.children[0]) if node.children else "["
        self.test_expression(node, words, extended=opening == "[[")
        self.add(SimpleCommand(tuple(words), (), inherited, _text(node)))

    def test_expression(self, node: Node, out: list[Word], *, extended: bool) -> None:
        kind = node.type
        if kind == "binary_expression" and extended:
            op = node.child_by_field_name("operator")
            if op is not None and _text(op) in _ARITH_TEST_OPS:
                for side in ("left", "right"):
                    operand = node.child_by_field_name(side)
                    if operand is not None:
                        self.arith_operand(operand)
        if kind == "unary_expression" and extended:
            op = node.child_by_field_name("operator")
            operand = node.named_children[-1] if node.named_children else None
            if op is not None and _text(op) == "-v" and operand is not None:
                value = self.word(operand)
                if not (value.static and _NAME.fullmatch(value.value or "")):
                    self.hazards.append("`[[ -v ]]` is given a name bash would evaluate")
        for child in node.children:
            if child.type in _WORD_TYPES:
                out.append(self.word(child))
            elif not child.is_named or child.type == "test_operator":
                out.append(Word.literal(_text(child)))
            else:
                self.test_expression(child, out, extended=extended)

    def arithmetic_command(self, node: Node) -> None:
        for child in node.named_children:
            self.arith_node(child)
        self.add(SimpleCommand((Word.literal("(("),), text=_text(node)))

    def for_statement(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        variable = node.child_by_field_name("variable")
        values: list[Word] = []
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field == "value":
                values.append(self.word(child))
        if variable is not None:
            literal = all(w.static and _INTEGER.fullmatch(w.value or "") for w in values)
            if not literal:
                self.tainted.add(_text(variable))
        body = node.child_by_field_name("body")
        if body is not None:
            self.loops += 1
            self.statement(body, inherited)
            self.loops -= 1

    def c_style_for(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field in ("initializer", "condition", "update"):
                self.arith_node(child)
            elif field == "body":
                self.loops += 1
                self.statement(child, inherited)
                self.loops -= 1

    def case_statement(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "value":
                self.word(child)
            elif child.type == "case_item":
                for j, part in enumerate(child.children):
                    if child.field_name_for_child(j) == "value":
                        self.word(part)
                    elif part.is_named:
                        self.statement(part, inherited)

    def function(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            self.functions.add(_text(name))
        self.loops += 1  # a body runs once per call
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "body":
                self.statement(child)
            elif child.type in _REDIRECTS:
                self.redirect(child)
        self.loops -= 1

    # -- words -------------------------------------------------------------------------

    def word(self, node: Node) -> Word:
        kind = node.type
        if not node.is_named:
            return Word(_text(node), None)  # the `$` of `$"..."`: locale-translated text
        if kind == "word":
            return _bare_word(_text(node), first=True)
        if kind == "concatenation":
            return self.concatenation(node)
        if kind == "number":
            return Word.literal(_text(node))
        if kind == "raw_string":
            inner = _text(node)[1:-1]
            return Word(inner, inner)
        if kind == "string":
            return self.string(node)
        if kind in ("simple_expansion", "expansion"):
            self.expansion(node)
            return Word(_text(node), None)
        if kind == "command_substitution":
            self.substitution(node)
            return Word(_text(node), None)
        if kind == "process_substitution":
            self.substitution(node)
            return Word(_text(node), None, pipe=True)
        if kind == "arithmetic_expansion":
            for child in node.named_children:
                self.arith_node(child)
            return Word(_text(node), None)
        if kind in ("variable_name", "special_variable_name"):
            return Word.literal(_text(node))
        if kind in ("extglob_pattern", "regex"):
            return Word(_text(node), _text(node), glob=True)
        if kind in ("ansi_c_string", "translated_string", "brace_expression"):
            return Word(_text(node), None)
        if kind == "array":
            for child in node.named_children:
                self.word(child)
            return Word(_text(node), None)
        raise Unanalysable(f"unsupported word: {kind}")

    def concatenation(self, node: Node) -> Word:
        texts: list[str] = []
        values: list[str] = []
        unquoted: list[str] = []
        dynamic = glob = pipe = False
        for i, child in enumerate(node.children):
            if child.type == "word":
                raw = _text(child)
                unquoted.append(raw)
                part = _bare_word(raw, first=i == 0)
            else:
                unquoted.append("\0")  # a quoted or expanded part ends a brace/tilde run
                part = self.word(child)
            texts.append(part.text)
            glob = glob or part.glob
            pipe = pipe or part.pipe
            if part.value is None:
                dynamic = True
            else:
                values.append(part.value)
        text = "".join(texts)
        if dynamic or _BRACES.search("".join(unquoted)):
            return Word(text, None, pipe=pipe)
        if not glob and any(_has_glob(u) for u in unquoted):
            glob = True
        return Word(text, "".join(values), glob=glob)

    def string(self, node: Node) -> Word:
        texts: list[str] = []
        dynamic = False
        for child in node.children:
            kind = child.type
            if kind == "string_content":
                texts.append(_unescape_double(_text(child)))
            elif not child.is_named:
                if kind != '"':
                    texts.append(_text(child))
                    dynamic = dynamic or kind == "$"
            else:
                part = self.word(child)
                texts.append(part.text)
                dynamic = dynamic or part.value is None
        text = "".join(texts)
        return Word(text, None if dynamic else text)

    def expansion(self, node: Node) -> None:
        """Visit ``$x`` / ``${...}``: substitutions inside, and the arithmetic bash does
        on a substring offset, a subscript, an indirect ``${!x}`` or a ``${x@P}``."""
        name: str | None = None
        last_op = ""
        indirect = False
        for child in node.children:
            kind = child.type
            if not child.is_named:
                text = _text(child)
                if text == "!" and name is None:
                    indirect = True
                elif text in ("@", "P") and name is not None:
                    indirect = True  # a transformation: @P expands the value as a prompt
                if text not in ("${", "}", "$"):
                    last_op = text
            elif kind in ("variable_name", "special_variable_name") and name is None:
                name = _text(child)
            elif kind == "subscript":
                base = self.subscript(child)
                name = name or base
            elif last_op == ":":
                self.arith_node(child)
            else:
                self.word(child)
        if indirect:
            self.arith.add(name or "*")

    def subscript(self, node: Node) -> str:
        """The array's name; its index is arithmetic (unless ``@``/``*``)."""
        base = node.child_by_field_name("name")
        index = node.child_by_field_name("index")
        if index is not None and _text(index) not in ("@", "*"):
            self.arith_node(index)
        return _text(base) if base is not None else "*"

    def substitution(self, node: Node) -> None:
        for child in node.children:
            if child.is_named:
                self.statement(child)

    # -- arithmetic --------------------------------------------------------------------

    def arith_node(self, node: Node) -> None:
        kind = node.type
        if kind == "number":
            return
        if kind in ("variable_name", "word"):
            text = _text(node)
            if _NAME.fullmatch(text):
                self.arith.add(text)
            elif not _INTEGER.fullmatch(text):
                self.arith.add("*")
            return
        if kind == "simple_expansion":
            self.arith.update(_text(c) for c in node.named_children)
            return
        if kind == "expansion":
            self.expansion(node)
            name = next((c for c in node.named_children if c.type == "variable_name"), None)
            self.arith.add(_text(name) if name is not None else "*")
            return
        if kind in ("command_substitution", "process_substitution"):
            self.substitution(node)
            self.arith.add("*")  # its output is evaluated
            return
        if kind in ("string", "raw_string", "concatenation"):
            self.arith_text(self.word(node))
            return
        if kind == "subscript":
            name = self.subscript(node)
            self.arith.add(name)
            return
        for child in node.children:
            if child.is_named:
                self.arith_node(child)

    def arith_operand(self, node: Node) -> None:
        """An operand of ``[[ -eq ]]``: a word whose text bash evaluates as arithmetic."""
        if node.type in _WORD_TYPES and node.type not in ("number", "simple_expansion"):
            self.arith_text(self.word(node))
        else:
            self.arith_node(node)

    def arith_text(self, word: Word) -> None:
        if word.value is None or any(c in word.value for c in "[$`"):
            self.arith.add("*")
            return
        self.arith.update(_NAME.findall(word.value))

    def script(self) -> Script:
        hazard = self.hazards[0] if self.hazards else None
        refs = self.arith
        if "*" in refs:
            hazard = "arithmetic evaluates text the command produces at run time"
        elif refs and ("*" in self.tainted or refs & self.tainted):
            hazard = "arithmetic evaluates a variable this command line assigns"
        return Script(tuple(self.commands), hazard, frozenset(self.functions))


_WORD_TYPES = frozenset(
    {
        "word",
        "concatenation",
        "number",
        "raw_string",
        "string",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "extglob_pattern",
        "regex",
        "ansi_c_string",
        "translated_string",
        "brace_expression",
    }
)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _has_glob(raw: str) -> bool:
    escaped = False
    for ch in raw:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in "*?[":
            return True
    return False


def _bare_word(raw: str, *, first: bool) -> Word:
    """An unquoted word: backslashes removed, globs noted, a leading ``~`` expanded."""
    out: list[str] = []
    escaped = glob = False
    for ch in raw:
        if escaped:
            if ch != "\n":  # backslash-newline joins lines
                out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            glob = glob or ch in "*?["
            out.append(ch)
    text = "".join(out)
    if _BRACES.search(raw):
        return Word(text, None)
    value = text
    if first and raw.startswith("~"):
        prefix, sep, rest = raw.partition("/")
        if "\\" in prefix:
            return Word(text, None)
        home = os.path.expanduser(prefix)
        if home == prefix:
            return Word(text, None)  # an unknown user: bash leaves it, we do not guess
        value = home + sep + rest if sep else home
    return Word(text, value, glob=glob)


def _unescape_double(raw: str) -> str:
    """Inside double quotes a backslash only escapes ``$ ` " \\`` and a newline."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _names_are_plain(cmd: SimpleCommand) -> bool:
    """Do the variable names this builtin stores into carry no subscript to evaluate?"""
    name = cmd.words[0].text
    words = cmd.words[1:]
    if name in ("test", "["):
        checked = [words[i + 1].value for i, w in enumerate(words[:-1]) if w.text == "-v"]
        return all(n is not None and _NAME.fullmatch(n) for n in checked)
    takes_value, name_options = _NAME_BUILTINS[name]
    names: list[str | None] = []
    operands: list[str | None] = []
    i = 0
    while i < len(words):
        text = words[i].value
        if text is None and operands and name in ("printf", "wait"):
            operands.append(text)  # a format argument: options are over
            i += 1
            continue
        if text is None:
            return False  # a name (or an option naming one) decided at run time
        if text == "--" and not operands:
            operands += [w.value for w in words[i + 1 :]]
            break
        if text.startswith("-") and len(text) > 1 and not operands:  # builtins do not permute
            for j in range(1, len(text)):
                if text[j] in takes_value:
                    value: str | None = text[j + 1 :]
                    if not value:
                        i += 1
                        value = words[i].value if i < len(words) else ""
                    if text[j] in name_options:
                        names.append(value)
                    break
        else:
            operands.append(text)
        i += 1
    if name == "getopts":
        names += operands[1:2]
    elif name not in ("printf", "wait"):
        names += [o.split("=", 1)[0] if o is not None else None for o in operands]
    return all(n is not None and _NAME.fullmatch(n) for n in names)


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
