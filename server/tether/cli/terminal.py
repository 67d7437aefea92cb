"""The headless Editor: files on disk, permission questions on the terminal."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tether.editor.disk import DiskEditor
from tether.editor.port import PermissionAnswer, PermissionRequest
from tether.permissions.display import visible
from tether.protocol.content import DiffContent

_CHOICES: dict[str, PermissionAnswer] = {
    "y": "allow_once",
    "a": "allow_always",
    "n": "reject_once",
    "d": "reject_always",
}


class TerminalAsker:
    """Asks on the controlling terminal when interactive; otherwise every question is a no."""

    def __init__(self, interactive: bool | None = None) -> None:
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self._lock = asyncio.Lock()

    async def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        if not self.interactive:
            sys.stderr.write(f"[tether] denied (not interactive): {visible(request.title)}\n")
            return "reject_once"
        async with self._lock:
            return await asyncio.to_thread(self._ask, request)

    def _ask(self, request: PermissionRequest) -> PermissionAnswer:
        err = sys.stderr
        err.write(f"\n{request.tool_name} wants to run: {visible(request.title)}\n")
        command = request.raw_input.get("command")
        if isinstance(command, str):
            err.write(f"  $ {visible(command)}\n")
        for item in request.content:
            if isinstance(item, DiffContent):
                err.write(f"  edits {item.uri}\n")
        rule = request.always_rule
        prompt = f"[y]es / [a]lways ({rule}) / [n]o / [d]eny always" if rule else "[y]es / [n]o"
        while True:
            err.write(f"Allow? {prompt}: ")
            err.flush()
            line = sys.stdin.readline()
            if not line:
                return "reject_once"
            choice = _CHOICES.get(line.strip().lower()[:1])
            if choice is not None and (rule or not choice.endswith("always")):
                return choice

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
