"""Permission questions on the terminal, and the workspace trust question.

A question about an edit shows the change as a coloured unified diff; a command shows the
command. Without a terminal to ask on (stdin piped), every question is a no; the tool line
says so (``render.rejection``), and the trust question's no is said on stderr when stderr
is for such notes (``talk``).
"""

from __future__ import annotations

import asyncio
import difflib
import sys
from pathlib import Path
from typing import TextIO

from tether.cli.style import Spinner, Style, colour_wanted
from tether.editor.port import PermissionReply, PermissionRequest
from tether.permissions.display import visible
from tether.protocol.content import DiffContent
from tether.tools.diff_view import numbered_as_in_file

MAX_DIFF_LINES = 60


def diff_lines(item: DiffContent, style: Style) -> list[str]:
    """The change as a unified diff, coloured, cut after ``MAX_DIFF_LINES`` lines."""
    lines = list(
        difflib.unified_diff(
            (item.old_text or "").splitlines(),
            item.new_text.splitlines(),
            f"{item.uri} (before)",
            f"{item.uri} (after)",
            lineterm="",
        )
    )
    lines = numbered_as_in_file(lines, item)
    out: list[str] = []
    for line in lines[:MAX_DIFF_LINES]:
        shown = visible(line)
        if line.startswith(("+++", "---")):
            out.append(style.bold(shown))
        elif line.startswith("+"):
            out.append(style.green(shown))
        elif line.startswith("-"):
            out.append(style.red(shown))
        elif line.startswith("@@"):
            out.append(style.cyan(shown))
        else:
            out.append(shown)
    if len(lines) > MAX_DIFF_LINES:
        out.append(style.dim(f"… {len(lines) - MAX_DIFF_LINES} more line(s)"))
    return out


NETWORK = "Network"
"""The questions the shell sandbox's proxy asks (``permissions.network``)."""
NO_TERMINAL = "no terminal to ask on"


class TerminalAsker:
    """Asks on the controlling terminal when interactive; otherwise every question is a no."""

    def __init__(
        self,
        interactive: bool | None = None,
        *,
        spinner: Spinner | None = None,
        err: TextIO | None = None,
        talk: bool = True,
    ) -> None:
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.err = err or sys.stderr
        self.talk = talk
        """Notes on stderr (a terminal, or --verbose); else it stays empty on success."""
        self.style = Style(colour_wanted(self.err))
        self._spinner = spinner
        self._lock = asyncio.Lock()

    async def __call__(self, request: PermissionRequest) -> PermissionReply:
        if self._spinner is not None:
            self._spinner.hide()
        if not self.interactive:
            if request.tool_name == NETWORK:  # not a tool call: the command goes on without
                return self._no_network(request)
            return request.reply("reject_once")
        async with self._lock:
            return await asyncio.to_thread(self._ask, request)

    def _no_network(self, request: PermissionRequest) -> PermissionReply:
        where = f"{request.raw_input.get('host')}:{request.raw_input.get('port')}"
        if self.talk:
            self.err.write(
                f"[tether] no terminal to ask on, so network access to {visible(where)} is "
                f'denied: allow it with --allowedTools "{request.always_rule}" or in '
                "sandbox.network.allowedDomains\n"
            )
        return request.reply("reject_once", NO_TERMINAL)

    def _ask(self, request: PermissionRequest) -> PermissionReply:
        err, s = self.err, self.style
        if request.kind == "plan":
            err.write(f"\n{s.bold('The plan:')}\n{visible(request.plan or '')}\n")
        else:
            err.write(f"\n{s.bold(request.tool_name)} wants to run: {visible(request.title)}\n")
            command = request.raw_input.get("command")
            if isinstance(command, str):
                err.write(f"  $ {visible(command)}\n")
            for item in request.content:
                if isinstance(item, DiffContent):
                    err.write("\n".join("  " + line for line in diff_lines(item, s)) + "\n")
        options = request.options()
        menu = " / ".join(f"[{n}] {o.name}" for n, o in enumerate(options, 1))
        while True:
            err.write(f"{menu}: ")
            err.flush()
            line = sys.stdin.readline()
            if not line:
                return request.reply("reject_once")
            choice = line.strip()
            if choice.isdigit() and 1 <= int(choice) <= len(options):
                option = options[int(choice) - 1]
                feedback = None
                if request.kind == "plan" and option.kind == "reject_once":
                    err.write("What should change in the plan? ")
                    err.flush()
                    feedback = sys.stdin.readline().strip() or None
                return PermissionReply(option, feedback)

    async def trust(self, root: Path, withheld: list[str]) -> bool:
        """The one-time workspace trust question (not interactive: not trusted)."""
        if self._spinner is not None:
            self._spinner.hide()
        if not self.interactive:
            if self.talk:
                self.err.write(
                    f"[tether] {visible(str(root))} is not trusted (no terminal to ask on): "
                    "its own hooks, MCP servers and env do not run\n"
                )
            return False
        async with self._lock:
            return await asyncio.to_thread(self._ask_trust, root, withheld)

    def _ask_trust(self, root: Path, withheld: list[str]) -> bool:
        err = self.err
        err.write(f"\nThe workspace {visible(str(root))} wants to run its own configuration:\n")
        for item in withheld:
            err.write(f"  - {visible(item)}\n")
        err.write("Trust this workspace? [y]es / [n]o: ")
        err.flush()
        return sys.stdin.readline().strip().lower().startswith("y")
