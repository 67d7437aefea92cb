"""Starting the gate (``gate/``) inside the sandbox, and reading what it refused.

The gate runs with the daemon's own interpreter in isolated mode (``-I -S``: no
environment variables, no user or site packages), its package put first on ``sys.path``.
Where the interpreter, its standard library or the gate's sources lie in a writable root
or a hidden directory, they are bound read-only into the sandbox (``runtime_paths``): a
command must not be able to change the program that guards the next command.

What the gate refuses comes back on a pipe (``Refusals``): ``op NUL path NUL why NUL``
records, read once the command has ended.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tether.sandbox.gate import abi, main

COMPILED = main.__name__
"""Imported here so that the gate's bytecode is written once, by the daemon, next to its
sources; inside the sandbox they may be read-only."""

GATE_PACKAGE = Path(__file__).with_name("gate")
MAX_READ = 1 << 16


@dataclass(frozen=True)
class Runtime:
    interpreter: str
    boot: str
    paths: tuple[Path, ...]
    """What the gate needs to read: the interpreter, its libraries, the gate's sources."""


@lru_cache(maxsize=1)
def runtime() -> Runtime:
    interpreter = os.path.realpath(sys.executable)
    where = str(GATE_PACKAGE.parent)
    boot = f"import sys; sys.path[:0] = [{where!r}]; from gate.main import run; run(sys.argv[1:])"
    paths: list[Path] = [Path(interpreter), GATE_PACKAGE]
    for key in ("stdlib", "platstdlib"):
        paths.append(Path(os.path.realpath(sysconfig.get_paths()[key])))
    library = sysconfig.get_config_var("LDLIBRARY")
    libdir = sysconfig.get_config_var("LIBDIR")
    if isinstance(library, str) and isinstance(libdir, str) and library.endswith(".so"):
        for candidate in Path(libdir).glob(f"{library}*"):
            paths.append(Path(os.path.realpath(candidate)))
    existing = [p for p in dict.fromkeys(paths) if p.exists()]
    return Runtime(interpreter, boot, tuple(existing))


def supported() -> str | None:
    """Why the gate cannot run on this machine, or None."""
    if abi.machine() is None:
        return f"the shell sandbox's gate does not support {os.uname().machine}"
    if not hasattr(os, "pidfd_open"):
        return "the shell sandbox's gate needs pidfd_open (Linux 5.3, Python 3.9)"
    return None


def gate_argv(
    rt: Runtime, report_fd: int | None, policy: Sequence[str], argv: Sequence[str]
) -> list[str]:
    """The gate's command line running ``argv`` under ``policy`` (``Policy.encode``)."""
    out = [rt.interpreter, "-I", "-S", "-c", rt.boot]
    if report_fd is not None:
        out += ["--report", str(report_fd)]
    return [*out, *policy, "--", *argv]


def waiting_argv(rt: Runtime, report_fd: int) -> list[str]:
    """The gate's command line for a sandbox prepared before its command is known: it reads
    the policy and the command from standard input (``job``)."""
    return [rt.interpreter, "-I", "-S", "-c", rt.boot, "--report", str(report_fd), "--stdin"]


def job(policy: Sequence[str], argv: Sequence[str]) -> bytes:
    return b"".join(os.fsencode(s) + b"\0" for s in (*policy, "--", *argv))


def split_gate(argv: Sequence[str]) -> tuple[list[str], list[str], list[str]] | None:
    """``(before, policy, command)`` of ``before + gate_argv(…)``, or None."""
    rt = runtime()
    head = [rt.interpreter, "-I", "-S", "-c", rt.boot]
    for i in range(len(argv) - len(head) + 1):
        if list(argv[i : i + len(head)]) == head:
            rest = list(argv[i + len(head) :])
            if rest[:1] == ["--report"]:
                rest = rest[2:]
            if "--" not in rest:
                return None
            cut = _policy_end(rest)
            if cut is None:
                return None
            return list(argv[:i]), rest[:cut], rest[cut + 1 :]
    return None


def _policy_end(tokens: list[str]) -> int | None:
    """The index of the ``--`` closing the policy (paths and reasons may be ``--`` too)."""
    arity = {"proxy": 1, "root": 1, "gitdir": 1, "name": 1, "locked": 1, "bound": 1, "exact": 2}
    i = 0
    while i < len(tokens):
        if tokens[i] == "--":
            return i
        step = arity.get(tokens[i])
        if step is None:
            return None
        i += 1 + step
    return None


@dataclass(frozen=True)
class Refusal:
    op: str
    path: str
    why: str


class Refusals:
    """The read end of a gate's report pipe, and the write end the gate inherits."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self._closed = False
        self._writing = True
        self._lock = threading.Lock()

    def close_writer(self) -> None:
        """The daemon's copy of the write end (the gate has its own)."""
        with self._lock:
            if self._writing:
                self._writing = False
                os.close(self.write_fd)

    def collect(self) -> tuple[list[Refusal], int]:
        """What the gate refused (at most once each), and how many more it did not list.
        Closes the pipe."""
        with self._lock:
            if self._closed:
                return [], 0
            self._closed = True
        self.close_writer()
        data = b""
        try:
            while len(data) < MAX_READ:
                chunk = os.read(self.read_fd, MAX_READ)
                if not chunk:
                    break
                data += chunk
        except BlockingIOError:
            pass
        finally:
            os.close(self.read_fd)
        fields = [os.fsdecode(f) for f in data.split(b"\0")]
        out: dict[tuple[str, str], Refusal] = {}
        more = 0
        for i in range(0, len(fields) - 2, 3):
            op, path, why = fields[i : i + 3]
            if op == "more":
                more += int(why) if why.isdigit() else 0
            else:
                out.setdefault((op, path), Refusal(op, path, why))
        return list(out.values()), more

    def discard(self) -> None:
        self.collect()
