"""``tether attach SESSION``: a terminal follows a session another client drives.

It is one more client of the warm daemon, speaking the editors' protocol: it follows the
session (``tether/loadSession`` of an open session attaches to it), shows its updates as
text as they come, sends a typed line as a prompt (queued into the running turn if there
is one), turns Ctrl+C into ``tether/cancel`` of the running turn (twice: leave), and
answers the permission questions of the turns it started on the terminal. Files its turns
edit are written on disk by the daemon (this client holds no buffers). Ctrl+D leaves.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from tether.cli.style import Style, colour_wanted
from tether.daemon.channel import Channel, DaemonUnavailable
from tether.daemon.client import connect
from tether.daemon.environment import client_environment
from tether.permissions.display import visible
from tether.protocol.content import TextContent
from tether.protocol.updates import (
    SESSION_UPDATE_ADAPTER,
    AgentMessageChunk,
    Notice,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    UserMessage,
)

CAPABILITIES: dict[str, Any] = {
    # No workspace.applyEdit: the daemon writes the files of this client's turns on disk.
    "experimental": {"tether": {"permissionRequest": True, "sessionUpdates": True}},
}


class Attached:
    """The connection, the session and what the terminal shows."""

    def __init__(self, channel: Channel, session_id: str) -> None:
        self.channel = channel
        self.session_id = session_id
        self.out = Style(colour_wanted(sys.stdout))
        self.err = Style(colour_wanted(sys.stderr))
        self._send = threading.Lock()
        self._question: tuple[Any, list[dict[str, Any]]] | None = None
        self._questions = threading.Condition()
        self._at_line_start = True
        self._titles: dict[str, str] = {}

    # -- sending (the terminal's thread and the main thread) ------------------------------

    def notify(self, method: str, params: Any) -> None:
        with self._send:
            self.channel.notify(method, params)

    def request(self, method: str, params: Any) -> None:
        with self._send:
            self.channel.request(method, params)

    def respond(self, msg_id: Any, result: Any) -> None:
        with self._send:
            self.channel.respond(msg_id, result)

    def decline(self, msg_id: Any, method: str) -> None:
        """A request this client does not serve (a dialog, a document)."""
        error = {"code": -32601, "message": f"{method} is not handled by tether attach"}
        with self._send:
            self.channel.send({"jsonrpc": "2.0", "id": msg_id, "error": error})

    # -- showing ----------------------------------------------------------------------------

    def _line(self, text: str) -> None:
        if not self._at_line_start:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._at_line_start = True
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def show(self, update: SessionUpdate) -> None:
        if isinstance(update, AgentMessageChunk):
            sys.stdout.write(update.text)
            sys.stdout.flush()
            self._at_line_start = update.text.endswith("\n") if update.text else self._at_line_start
        elif isinstance(update, UserMessage):
            said = " ".join(b.text for b in update.content if isinstance(b, TextContent))
            self._line(self.err.bold(f"> {visible(said)}"))
        elif isinstance(update, ToolCall):
            self._titles[update.tool_call_id] = update.title
            self._line(self.err.cyan(f"⏺ {visible(update.title)}"))
        elif isinstance(update, ToolCallUpdate) and update.status == "failed":
            title = self._titles.get(update.tool_call_id, "a tool")
            self._line(self.err.red(f"  ✗ {visible(title)} failed"))
        elif isinstance(update, Notice):
            self._line(self.err.yellow(f"[tether] {visible(update.message)}"))
        elif isinstance(update, TurnEnd):
            detail = f": {update.error.message}" if update.error is not None else ""
            self._line(self.err.dim(f"— turn ended ({update.stop_reason}{detail})"))

    # -- questions ---------------------------------------------------------------------------

    def ask(self, msg_id: Any, params: dict[str, Any]) -> None:
        """Show the question; the next line typed answers it."""
        call: dict[str, Any] = params.get("toolCall") or {}
        options = _objects(params.get("options"))
        if params.get("kind") == "plan":
            self._line(f"{self.err.bold('The plan:')}\n{visible(str(params.get('plan', '')))}")
        else:
            self._line(f"{self.err.bold('Permission')}: {visible(str(call.get('title', '')))}")
            for item in _objects(call.get("content")):
                if item.get("type") == "text":
                    self._line(f"  {visible(str(item.get('text', '')))}")
        menu = " / ".join(f"[{n}] {o.get('name')}" for n, o in enumerate(options, 1))
        sys.stderr.write(f"{menu}: ")
        sys.stderr.flush()
        with self._questions:
            self._question = (msg_id, options)

    def refused(self, error: Any) -> None:
        """The daemon refused a request of this terminal (a prompt to a session it may only
        follow, say): say why."""
        text = str(error)
        if isinstance(error, dict):
            text = str(cast(dict[str, Any], error).get("message") or text)
        self._line(self.err.red(f"[tether] {visible(text)}"))

    def withdraw(self, msg_id: Any) -> None:
        with self._questions:
            if self._question is not None and self._question[0] == msg_id:
                self._question = None
                self._line(self.err.dim("(the question was withdrawn)"))

    def typed(self, line: str) -> None:
        """A line from the terminal: the answer to the open question, else a prompt."""
        with self._questions:
            question, self._question = self._question, None
        if question is not None:
            msg_id, options = question
            choice = line.strip()
            if choice.isdigit() and 1 <= int(choice) <= len(options):
                picked = options[int(choice) - 1]
                outcome = {"outcome": "selected", "optionId": picked.get("optionId")}
            else:
                outcome = {"outcome": "selected", "optionId": "reject_once"}
            self.respond(msg_id, {"outcome": outcome})
            return
        if line.strip():
            prompt = [{"type": "text", "text": line.rstrip("\n")}]
            self.request("tether/prompt", {"sessionId": self.session_id, "prompt": prompt})


def _objects(value: Any) -> list[dict[str, Any]]:
    """The JSON objects of a list from the wire (anything else dropped)."""
    items: list[Any] = value if isinstance(value, list) else []  # pyright: ignore[reportUnknownVariableType]
    return [cast(dict[str, Any], item) for item in items if isinstance(item, dict)]


def _handshake(channel: Channel, root: Path, session_id: str) -> int:
    """Initialize, follow the session; returns how many updates it had so far."""
    channel.notify("tether/clientEnvironment", client_environment(str(root), os.environ))
    folder = {"uri": root.as_uri(), "name": root.name}
    channel.result(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "capabilities": CAPABILITIES,
            "workspaceFolders": [folder],
            "clientInfo": {"name": "tether attach"},
        },
    )
    channel.notify("initialized", {})
    loaded = channel.call_object("tether/loadSession", {"sessionId": session_id})
    history: Any = loaded.get("history")
    return len(history) if isinstance(history, list) else 0  # pyright: ignore[reportUnknownArgumentType]


def attach_command(args: argparse.Namespace) -> int:
    root = Path(args.cwd or ".").expanduser().resolve()
    try:
        channel = connect()
        seen = _handshake(channel, root, args.session)
    except (DaemonUnavailable, OSError) as e:
        print(f"[tether] error: cannot reach the Tether daemon ({e})", file=sys.stderr)
        return 1
    except RuntimeError as e:  # the daemon refused: an unknown session, say
        print(f"[tether] error: cannot attach to {args.session}: {e}", file=sys.stderr)
        return 1
    attached = Attached(channel, args.session)
    sys.stderr.write(
        f"[tether] attached to {args.session} ({seen} update(s) so far): type a prompt, "
        "Ctrl+C cancels the running turn, Ctrl+D leaves\n"
    )
    stdin_done = threading.Event()

    def read_terminal() -> None:
        for line in sys.stdin:
            attached.typed(line)
        stdin_done.set()
        # Wakes the main thread, blocked reading the socket: leaving.
        with contextlib.suppress(OSError):
            channel.sock.shutdown(socket.SHUT_RDWR)

    threading.Thread(target=read_terminal, name="terminal", daemon=True).start()
    return _follow(attached, stdin_done)


def _follow(attached: Attached, stdin_done: threading.Event) -> int:
    cancelled = False
    while True:
        try:
            message = attached.channel.receive()
        except KeyboardInterrupt:
            if cancelled:
                return 130
            cancelled = True
            attached.notify("tether/cancel", {"sessionId": attached.session_id})
            continue
        except OSError:
            message = None
        if message is None:
            if stdin_done.is_set():
                return 0
            print("[tether] error: the daemon closed the connection", file=sys.stderr)
            return 1
        method = message.get("method")
        params: dict[str, Any] = message.get("params") or {}
        if method == "tether/sessionUpdate" and params.get("sessionId") == attached.session_id:
            try:
                update = SESSION_UPDATE_ADAPTER.validate_python(params.get("update"))
            except ValidationError:
                continue  # a kind of update a newer daemon sends: not shown here
            attached.show(update)
            if isinstance(update, TurnEnd):
                cancelled = False
        elif method == "tether/requestPermission" and "id" in message:
            attached.ask(message["id"], params)
        elif method == "$/cancelRequest":
            attached.withdraw(params.get("id"))
        elif method is not None and "id" in message:
            attached.decline(message["id"], method)
        elif method is None and "error" in message:
            attached.refused(message["error"])
