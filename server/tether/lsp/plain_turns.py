"""Turns asked for with standard LSP: code actions and ``workspace/executeCommand``.

Such clients (Helix, eglot, Kate, Sublime LSP, Zed, a bare ``vim.lsp.start``) wait for a
command's answer — eglot synchronously, sending no ``didChange`` meanwhile — so every command
answers at once and the turn runs on its own. The user follows it through ``$/progress``
(the task as title, each step in words), the edits themselves, permission questions as
``window/showMessageRequest``, the conversation as a Markdown file opened with
``window/showDocument`` (``takeFocus: false``) where supported, and one ``window/showMessage``
at the end ("Tether: fixed mean() in ops.py — 1 file changed"), an Error one if it failed.

Each workspace folder has a current session: its actions and commands continue it (so "fix
this" after "explain" has the context); ``tether.newSession`` starts a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tether.editor.disk import read_text_file
from tether.errors import SessionError
from tether.lsp.asks import Ask, SourceDoc
from tether.lsp.hub import SessionHub, uri_to_path
from tether.lsp.markdown_log import MarkdownLog, conversation_path
from tether.lsp.params import NewSessionParams
from tether.lsp.server import TetherServer
from tether.lsp.summary import TurnDigest, ending
from tether.lsp.turns import ProgressLook
from tether.protocol.updates import Mode, SessionUpdate

if TYPE_CHECKING:
    from tether.session.session import Session

log = logging.getLogger(__name__)

AskMaker = Callable[[], Awaitable[Ask | None]]
"""Builds the ask once the turn's task runs (after a question to the user, say); None: the
user dismissed it."""


class PlainTurns:
    def __init__(self, server: TetherServer, hub: SessionHub, data: Path | None = None) -> None:
        self.server = server
        self.hub = hub
        self._data = data
        """Where the Markdown conversations go (default: the user data directory)."""
        self._current: dict[Path, str] = {}
        """Each workspace folder's current session."""
        self._logs: dict[str, MarkdownLog] = {}
        self._unsubscribe: list[Callable[[], None]] = []
        self._running: set[asyncio.Task[None]] = set()

    # -- where ----------------------------------------------------------------------------

    def root_of(self, uri: str | None) -> Path:
        """The workspace folder a request is about: the one holding ``uri``, else the first."""
        folders = self.hub.folders
        if not folders:
            raise SessionError(
                "no workspace folder is open; open the project's folder in the editor first"
            )
        if uri is None:
            return folders[0]
        try:
            path = uri_to_path(uri).resolve()
        except ValueError as e:
            raise SessionError(str(e))
        inside = [f for f in folders if path == f or f in path.parents]
        if not inside:
            raise SessionError(f"{uri} is not inside a workspace folder of this editor")
        return max(inside, key=lambda f: len(f.parts))

    async def source(self, uri: str) -> tuple[Path, SourceDoc]:
        """The workspace folder of ``uri`` and the file as the editor has it."""
        root = self.root_of(uri)
        path = uri_to_path(uri).resolve()
        open_doc = self.server.open_document(path)
        if open_doc is not None:
            text, language = open_doc.source, open_doc.language_id
        else:
            try:
                text, language = await asyncio.to_thread(read_text_file, path), None
            except (OSError, UnicodeDecodeError) as e:
                raise SessionError(f"cannot read {uri}: {e}")
        shown = path.relative_to(root).as_posix() if path != root else path.name
        return root, SourceDoc(path, shown, text.splitlines(), language)

    # -- sessions -------------------------------------------------------------------------

    def session(self, root: Path) -> Session:
        """The folder's current session, started on first use."""
        session_id = self._current.get(root)
        if session_id is not None:
            session = self.hub.sessions.find(session_id)
            if session is not None:
                return session
        return self.hub.get(self.new_session(root))

    def new_session(self, root: Path, mode: Mode | None = None) -> str:
        params = NewSessionParams(workspace_folder=root.as_uri(), permission_mode=mode)
        session_id = self.hub.new_session(params)
        self._current[root] = session_id
        return session_id

    def _log(self, session: Session) -> MarkdownLog:
        found = self._logs.get(session.session_id)
        if found is None:
            path = conversation_path(session.session_id, self._data)
            found = MarkdownLog(path, f"{session.cwd.name} ({session.cwd})")
            self._logs[session.session_id] = found

            def follow(_turn_id: str, update: SessionUpdate) -> None:
                found.update(update)

            self._unsubscribe.append(session.events.subscribe(follow))
        return found

    # -- turns ----------------------------------------------------------------------------

    def start(self, root: Path, ask: Ask | AskMaker) -> dict[str, Any]:
        """Start a turn of the folder's current session (or queue the ask into the running
        one) and answer at once."""
        session = self.session(root)
        out: dict[str, Any] = {"sessionId": session.session_id}
        turn_id = None
        if session.busy:
            out["queued"] = True
        else:
            turn_id = out["turnId"] = uuid.uuid4().hex[:12]
        self.spawn(self._run(session, ask, turn_id))
        return out

    async def _run(self, session: Session, ask: Ask | AskMaker, turn_id: str | None) -> None:
        if not isinstance(ask, Ask):
            made = await ask()
            if made is None:
                return
            ask = made
        markdown = self._log(session)
        markdown.ask(ask.task, ask.request)
        digests: dict[str, TurnDigest] = {}

        def digest(turn: str, update: SessionUpdate) -> None:
            digests.setdefault(turn, TurnDigest()).feed(update)

        unsubscribe = session.events.subscribe(digest)
        look = ProgressLook(title=f"Tether: {ask.task}", steps=True)
        try:
            result = await self.hub.run(session, ask.blocks, look=look, turn_id=turn_id)
        except SessionError as e:
            self.error(str(e))
            return
        finally:
            unsubscribe()
        await markdown.flush()
        await self._show(markdown.path)
        self.server.window_show_message(ending(result, digests.get(result.turn_id, TurnDigest())))

    async def _show(self, path: Path) -> None:
        if not self.server.features.show_document:
            return
        params = types.ShowDocumentParams(uri=path.as_uri(), external=False, take_focus=False)
        try:
            await self.server.request_shielded(self.server.window_show_document_async(params))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the transcript is a convenience; the turn went fine
            log.info("showDocument refused: %s", e)

    def spawn(self, work: Awaitable[None]) -> None:
        """Run ``work`` on its own; a failure is told to the user."""

        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.exception("a plain-LSP turn failed")
                self.error(f"the request failed ({e}); the daemon's log has the details")

        task = asyncio.get_running_loop().create_task(guarded())
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    # -- between turns --------------------------------------------------------------------

    def cancel(self, uri: str | None) -> bool:
        """Stop the running turn of the folder of ``uri`` (of every folder when None)."""
        roots = [self.root_of(uri)] if uri is not None else list(self._current)
        stopped = False
        for root in roots:
            session_id = self._current.get(root)
            session = self.hub.sessions.find(session_id) if session_id else None
            if session is not None and session.busy:
                stopped = session.cancel() or stopped
        return stopped

    def undo(self, root: Path) -> dict[str, Any]:
        """Put back what the folder's last turn changed (answers at once)."""
        session = self.session(root)
        if session.busy:
            raise SessionError("a turn is running; stop it first with tether.cancel")
        turns = session.rewindable_turns
        if not turns:
            self.say("there is no turn to undo in this session")
            return {"sessionId": session.session_id, "turnId": None}
        self.spawn(self._undo(session, turns[-1]))
        return {"sessionId": session.session_id, "turnId": turns[-1]}

    async def _undo(self, session: Session, turn_id: str) -> None:
        rewound = await session.rewind(turn_id)
        names = ", ".join(p.name for p in rewound.restored) or "no files needed restoring"
        if rewound.failed:
            failed = "; ".join(f"{o.path.name}: {o.problem}" for o in rewound.failed)
            self.error(f"undid the last turn, but could not restore {failed}")
        else:
            self.say(f"undid the last turn — restored {names}")

    def set_mode(self, root: Path, mode: Mode) -> str:
        session = self.session(root)
        session.set_mode(mode)
        self.say(f"permission mode is now {mode}")
        return session.session_id

    # -- telling the user -----------------------------------------------------------------

    def say(self, message: str) -> None:
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=f"Tether: {message}")
        )

    def error(self, message: str) -> None:
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"Tether: {message}")
        )

    async def choose(self, question: str, titles: list[str]) -> str | None:
        """A question every client can answer (``window/showMessageRequest``)."""
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=question,
            actions=[types.MessageActionItem(title=t) for t in titles],
        )
        choice = await self.server.ask_client(types.WINDOW_SHOW_MESSAGE_REQUEST, params)
        title = getattr(choice, "title", None)
        return title if isinstance(title, str) else None

    async def shutdown(self) -> None:
        for task in list(self._running):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        for markdown in self._logs.values():
            with contextlib.suppress(Exception):
                await markdown.close()
