"""The headless Editor: files on disk, permission questions on the terminal."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tether.editor.disk import DiskEditor
from tether.editor.port import PermissionReply, PermissionRequest
from tether.permissions.display import visible
from tether.protocol.content import DiffContent


class TerminalAsker:
    """Asks on the controlling terminal when interactive; otherwise every question is a no."""

    def __init__(self, interactive: bool | None = None) -> None:
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self._lock = asyncio.Lock()

    async def __call__(self, request: PermissionRequest) -> PermissionReply:
        if not self.interactive:
            sys.stderr.write(f"[tether] denied (not interactive): {visible(request.title)}\n")
            return request.reply("reject_once")
        async with self._lock:
            return await asyncio.to_thread(self._ask, request)

    def _ask(self, request: PermissionRequest) -> PermissionReply:
        err = sys.stderr
        if request.kind == "plan":
            err.write(f"\nThe plan:\n{visible(request.plan or '')}\n")
        else:
            err.write(f"\n{request.tool_name} wants to run: {visible(request.title)}\n")
            command = request.raw_input.get("command")
            if isinstance(command, str):
                err.write(f"  $ {visible(command)}\n")
            for item in request.content:
                if isinstance(item, DiffContent):
                    err.write(f"  edits {item.uri}\n")
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
        if not self.interactive:
            sys.stderr.write(f"[tether] {root} is not trusted; its own hooks/env do not run\n")
            return False
        async with self._lock:
            return await asyncio.to_thread(self._ask_trust, root, withheld)

    def _ask_trust(self, root: Path, withheld: list[str]) -> bool:
        err = sys.stderr
        err.write(f"\nThe workspace {visible(str(root))} wants to run its own configuration:\n")
        for item in withheld:
            err.write(f"  - {visible(item)}\n")
        err.write("Trust this workspace? [y]es / [n]o: ")
        err.flush()
        return sys.stdin.readline().strip().lower().startswith("y")


def terminal_editor(interactive: bool | None = None) -> DiskEditor:
    asker = TerminalAsker(interactive)
    return DiskEditor(asker, asker.trust)
