"""Words, parameter expansions and arithmetic: their values, the commands inside them,
and the arithmetic bash will evaluate (``Taint`` turns that into a hazard)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from tree_sitter import Node

from tether.permissions.shell.lexical import (
    BRACES,
    INTEGER,
    NAME,
    WORD_TYPES,
    bare_word,
    has_glob,
    node_text,
    unescape_double,
)
from tether.permissions.shell.model import Word


class Unanalysable(Exception):
    """The line uses syntax the grammar rejects or the walker does not model."""


class Statements(Protocol):
    def substitution(self, node: Node) -> None:
        """Visit the statements of ``$(…)``, backticks or ``<(…)``."""
        ...


@dataclass
class Taint:
    """What the line lets bash evaluate as code without a command showing it."""

    arith: set[str] = field(default_factory=lambda: set[str]())
    """Names bash evaluates as arithmetic; "*" for text read at run time."""
    tainted: set[str] = field(default_factory=lambda: set[str]())
    """Names the line assigns from untrusted values; "*" for any name."""
    hazards: list[str] = field(default_factory=lambda: list[str]())

    def hazard(self) -> str | None:
        if "*" in self.arith:
            return "arithmetic evaluates text the command produces at run time"
        if self.arith and ("*" in self.tainted or self.arith & self.tainted):
            return "arithmetic evaluates a variable this command line assigns"
        return self.hazards[0] if self.hazards else None


class Words:
    """Reads words for a statement walker (the ``Statements`` it was built with visits the
    commands found in substitutions)."""

    def __init__(self, statements: Statements, taint: Taint) -> None:
        self.statements = statements
        self.taint = taint

    def word(self, node: Node) -> Word:
        kind = node.type
        if not node.is_named:
            return Word(node_text(node), None)  # the `$` of `$"..."`: locale-translated text
        if kind == "word":
            return bare_word(node_text(node), first=True)
        if kind == "concatenation":
            return self.concatenation(node)
        if kind == "number":
            return Word.literal(node_text(node))
        if kind == "raw_string":
            inner = node_text(node)[1:-1]
            return Word(inner, inner)
        if kind == "string":
            return self.string(node)
        if kind in ("simple_expansion", "expansion"):
            self.expansion(node)
            return Word(node_text(node), None)
        if kind == "command_substitution":
            self.statements.substitution(node)
            return Word(node_text(node), None)
        if kind == "process_substitution":
            self.statements.substitution(node)
            return Word(node_text(node), None, pipe=True)
        if kind == "arithmetic_expansion":
            for child in node.named_children:
                self.arith_node(child)
            return Word(node_text(node), None)
        if kind in ("variable_name", "special_variable_name"):
            return Word.literal(node_text(node))
        if kind in ("extglob_pattern", "regex"):
            return Word(node_text(node), node_text(node), glob=True)
        if kind in ("ansi_c_string", "translated_string", "brace_expression"):
            return Word(node_text(node), None)
        if kind == "array":
            for child in node.named_children:
                self.word(child)
            return Word(node_text(node), None)
        raise Unanalysable(f"unsupported word: {kind}")

    def concatenation(self, node: Node) -> Word:
        texts: list[str] = []
        values: list[str] = []
        unquoted: list[str] = []
        dynamic = glob = pipe = False
        for i, child in enumerate(node.children):
            if child.type == "word":
                raw = node_text(child)
                unquoted.append(raw)
                part = bare_word(raw, first=i == 0)
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
        if dynamic or BRACES.search("".join(unquoted)):
            return Word(text, None, pipe=pipe)
        if not glob and any(has_glob(u) for u in unquoted):
            glob = True
        return Word(text, "".join(values), glob=glob)

    def string(self, node: Node) -> Word:
        texts: list[str] = []
        dynamic = False
        for child in node.children:
            kind = child.type
            if kind == "string_content":
                texts.append(unescape_double(node_text(child)))
            elif not child.is_named:
                if kind != '"':
                    texts.append(node_text(child))
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
                text = node_text(child)
                if text == "!" and name is None:
                    indirect = True
                elif text in ("@", "P") and name is not None:
                    indirect = True  # a transformation: @P expands the value as a prompt
                if text not in ("${", "}", "$"):
                    last_op = text
            elif kind in ("variable_name", "special_variable_name") and name is None:
                name = node_text(child)
            elif kind == "subscript":
                base = self.subscript(child)
                name = name or base
            elif last_op == ":":
                self.arith_node(child)
            else:
                self.word(child)
        if indirect:
            self.taint.arith.add(name or "*")

    def subscript(self, node: Node) -> str:
        """The array's name; its index is arithmetic (unless ``@``/``*``)."""
        base = node.child_by_field_name("name")
        index = node.child_by_field_name("index")
        if index is not None and node_text(index) not in ("@", "*"):
            self.arith_node(index)
        return node_text(base) if base is not None else "*"

    def arith_node(self, node: Node) -> None:
        kind = node.type
        if kind == "number":
            return
        if kind in ("variable_name", "word"):
            text = node_text(node)
            if NAME.fullmatch(text):
                self.taint.arith.add(text)
            elif not INTEGER.fullmatch(text):
                self.taint.arith.add("*")
            return
        if kind == "simple_expansion":
            self.taint.arith.update(node_text(c) for c in node.named_children)
            return
        if kind == "expansion":
            self.expansion(node)
            name = next((c for c in node.named_children if c.type == "variable_name"), None)
            self.taint.arith.add(node_text(name) if name is not None else "*")
            return
        if kind in ("command_substitution", "process_substitution"):
            self.statements.substitution(node)
            self.taint.arith.add("*")  # its output is evaluated
            return
        if kind in ("string", "raw_string", "concatenation"):
            self.arith_text(self.word(node))
            return
        if kind == "subscript":
            name = self.subscript(node)
            self.taint.arith.add(name)
            return
        for child in node.children:
            if child.is_named:
                self.arith_node(child)

    def arith_operand(self, node: Node) -> None:
        """An operand of ``[[ -eq ]]``: a word whose text bash evaluates as arithmetic."""
        if node.type in WORD_TYPES and node.type not in ("number", "simple_expansion"):
            self.arith_text(self.word(node))
        else:
            self.arith_node(node)

    def arith_text(self, word: Word) -> None:
        if word.value is None or any(c in word.value for c in "[$`"):
            self.taint.arith.add("*")
            return
        self.taint.arith.update(NAME.findall(word.value))
