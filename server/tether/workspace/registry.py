"""The open workspaces of one daemon (by root) and their sessions (by id).

Every front door keeps one: the LSP hub and the ACP agent per connection, the warm daemon
for all its clients. Sessions themselves are ``tether.session.Session``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from tether.editor.port import Editor
from tether.errors import SessionError
from tether.session.hosted import HostedSession
from tether.session.session import Session
from tether.transcript.store import SessionInfo
from tether.workspace.options import SessionOptions
from tether.workspace.workspace import Workspace

log = logging.getLogger(__name__)

WorkspaceFactory = Callable[[Path], Workspace]


class Sessions:
    def __init__(self, make_workspace: WorkspaceFactory = Workspace) -> None:
        self._make_workspace = make_workspace
        self.workspaces: dict[Path, Workspace] = {}
        self.hosted: dict[str, HostedSession] = {}
        """Sessions run elsewhere in the daemon (``tether -p`` calls, each on its own loop),
        which its clients may follow and cancel."""

    def workspace(self, root: Path) -> Workspace:
        """The workspace of a folder, made on first use."""
        root = root.resolve()
        workspace = self.workspaces.get(root)
        if workspace is None:
            workspace = self._make_workspace(root)
            for warning in workspace.warnings:
                log.warning("workspace %s: %s", root, warning)
            self.workspaces[root] = workspace
        return workspace

    def host(self, session: HostedSession) -> Callable[[], None]:
        """List a session another loop runs; returns the function that unlists it. Called
        from that loop's thread: one dict operation each, atomic for the daemon's loop."""
        self.hosted[session.session_id] = session

        def unlist() -> None:
            if self.hosted.get(session.session_id) is session:
                del self.hosted[session.session_id]

        return unlist

    def find(self, session_id: str) -> Session | None:
        for workspace in self.workspaces.values():
            session = workspace.sessions.get(session_id)
            if session is not None:
                return session
        return None

    def get(self, session_id: str) -> Session:
        session = self.find(session_id)
        if session is None:
            raise SessionError(f"unknown sessionId: {session_id}")
        return session

    def new(self, root: Path, editor: Editor, options: SessionOptions | None = None) -> Session:
        return self.workspace(root).new_session(editor, options)

    def stored_in(self, roots: list[Path], session_id: str) -> Path | None:
        """Which of ``roots`` holds a transcript of ``session_id``."""
        for root in roots:
            if self.workspace(root).store.find(session_id) is not None:
                return root
        return None

    async def load(
        self,
        root: Path,
        session_id: str,
        editor: Editor,
        options: SessionOptions | None = None,
        *,
        recover: bool = False,
    ) -> Session:
        """The session if it is open, else resumed from its transcript."""
        open_session = self.find(session_id)
        if open_session is not None:
            return open_session
        return await self.workspace(root).load_session(session_id, editor, options, recover=recover)

    async def list(self, roots: list[Path], limit: int | None = None) -> list[SessionInfo]:
        """Sessions of ``roots`` (open or on disk), newest first."""
        infos = [
            info
            for root in roots
            for info in await asyncio.to_thread(self.workspace(root).list_sessions)
        ]
        infos.sort(key=lambda i: i.updated_at, reverse=True)
        return infos[:limit] if limit else infos

    async def close_workspace(self, root: Path) -> None:
        workspace = self.workspaces.pop(root.resolve(), None)
        if workspace is not None:
            await workspace.close()

    async def shutdown(self) -> None:
        for hosted in list(self.hosted.values()):
            hosted.cancel()  # its call saves it as it ends
        for workspace in self.workspaces.values():
            for session in list(workspace.sessions.values()):
                session.cancel()
        for root in list(self.workspaces):
            await self.close_workspace(root)
