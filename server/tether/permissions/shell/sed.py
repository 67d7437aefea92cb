"""Is a sed script only an editor of its input? No ``w``/``W`` (write a file), ``r``/``R``
(read one), ``e`` (run a command), nor the ``w``/``e`` flags of ``s``.

The scanner reads GNU sed's grammar: addresses (``N``, ``$``, ``/re/I``, ``\\cREc``,
``first~step``, ``addr,+N``), ``!``, blocks, labels, the text of ``a``/``i``/``c``, and the
delimited arguments of ``s`` and ``y`` with their escapes. Anything else is refused.
"""

from __future__ import annotations

_SIMPLE = frozenset("dDpPnNgGhHxzF=")
_S_FLAGS = frozenset("gpiImM0123456789")
_END = frozenset(";\n}")


class _Refused(Exception):
    pass


class _Scanner:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def take(self) -> str:
        ch = self.peek()
        if not ch:
            raise _Refused("unexpected end")
        self.i += 1
        return ch

    def spaces(self) -> None:
        while self.peek() in (" ", "\t"):
            self.i += 1

    def delimited(self, delim: str) -> None:
        """Up to and past the next unescaped ``delim``."""
        if delim in ("\\", "\n", ""):
            raise _Refused("bad delimiter")
        while True:
            ch = self.take()
            if ch == "\\":
                self.take()
            elif ch == delim:
                return

    def address(self) -> None:
        ch = self.peek()
        if ch.isdigit():
            while self.peek().isdigit() or self.peek() == "~":
                self.i += 1
        elif ch == "$":
            self.i += 1
        elif ch in ("/", "\\"):
            self.i += 1
            delim = self.take() if ch == "\\" else "/"
            self.delimited(delim)
            while self.peek() in ("I", "M"):
                self.i += 1

    def addresses(self) -> None:
        self.address()
        self.spaces()
        if self.peek() == ",":
            self.i += 1
            self.spaces()
            if self.peek() in ("+", "~"):
                self.i += 1
            self.address()
        self.spaces()
        while self.peek() == "!":
            self.i += 1
            self.spaces()

    def rest_of_line(self) -> None:
        while self.peek() not in ("", "\n"):
            if self.take() == "\\":
                self.take()

    def label(self) -> None:
        while self.peek() not in ("", "\n", ";"):
            self.i += 1

    def command(self) -> None:
        self.addresses()
        cmd = self.take()
        if cmd in ("{", "}") or cmd in _SIMPLE:
            return
        if cmd in ("l", "q", "Q", "L"):
            self.spaces()
            while self.peek().isdigit():
                self.i += 1
        elif cmd in ("b", "t", "T", ":"):
            self.label()
        elif cmd in ("a", "i", "c"):
            self.rest_of_line()
        elif cmd == "y":
            delim = self.take()
            self.delimited(delim)
            self.delimited(delim)
        elif cmd == "s":
            delim = self.take()
            self.delimited(delim)
            self.delimited(delim)
            while self.peek() and self.peek() not in _END and self.peek() not in " \t":
                if self.take() not in _S_FLAGS:
                    raise _Refused("an s flag that writes or runs")
        else:
            raise _Refused(f"the command {cmd!r}")

    def script(self) -> None:
        while True:
            while self.peek() in (" ", "\t", "\n", ";"):
                self.i += 1
            if not self.peek():
                return
            if self.peek() == "#":
                self.rest_of_line()
                continue
            self.command()
            self.spaces()
            if self.peek() and self.peek() not in _END and self.peek() != "#":
                raise _Refused("trailing text")


def script_is_plain(script: str) -> bool:
    """True when the script only edits the stream (no file or program is touched)."""
    try:
        _Scanner(script).script()
    except _Refused:
        return False
    return True
