"""docs/protocol.md against the real daemon.

Every fenced ```json block of the document is one JSON-RPC message, its info string naming
the sender (```json client / ```json server). The daemon is driven through a scenario that
produces each documented message for real (four daemons: a capable editor, a plain LSP
client, a raw byte-level client, the warm daemon through ``tether serve --connect``), every
message on the wire is logged, and then:

- every documented message is matched by a real one of the same sender and method whose
  fields include all of the example's (discriminators such as ``kind`` and ``type`` and
  error codes must be equal; other values must have the same JSON type);
- a documented response is matched by a real response to the same method;
- every method the daemon registers, every method it sent in the scenario, every update
  kind and every field of the wire models is documented, and ``initialize`` advertises
  exactly the documented ``tether/*`` requests.

So an example that drifts from the daemon fails, and so does a method, update kind or
field added to the daemon without documentation.

To refresh examples: ``TETHER_PROTOCOL_DUMP=/tmp/wire.json pytest tests/e2e/test_protocol_doc.py``
writes the real wire log.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import re
import signal
import sys
import time
import typing
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pydantic import BaseModel
from pygls.exceptions import JsonRpcException

from tether.cli.main import run_local
from tether.lsp.main import create_server
from tether.lsp.testing.editor_client import EditorOptions, FakeEditor
from tether.protocol import content, updates
from tether.protocol.base import WireModel

from .conftest import MODEL, make_editor

DOC = Path(__file__).parents[2] / "docs" / "protocol.md"
BLOCK = re.compile(r"^```json[ \t]*([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
KNOWN_DEFECTS: dict[tuple[str, str, str], str] = {}
"""Documented behaviour the daemon does not have yet. The test insists the defect is still
there, so that its fix removes the entry here (and nothing documented stays unchecked)."""
EQUAL_KEYS = {"jsonrpc", "kind", "type", "code", "outcome"}
"""Discriminators: an example's value for these keys must be the real one."""
OPAQUE = {"rawInput", "rawOutput", "history", "update", "diagnostics"}
"""Values whose fields are not listed here: tool-specific, LSP's own, or SessionUpdates
(whose fields are checked against the models)."""
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

# -- the wire ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One message: a request or notification (``payload`` = params) or a response
    (``method`` = the request's method, ``payload`` = {"result": ...} or {"error": ...})."""

    sender: str
    kind: str
    method: str | None
    payload: Any


def records(messages: list[tuple[str, dict[str, Any]]]) -> list[Record]:
    """Messages in order, responses paired with the latest request of that id."""
    asked: dict[tuple[str, Any], str] = {}
    out: list[Record] = []
    for sender, message in messages:
        assert message.get("jsonrpc") == "2.0", message
        method = message.get("method")
        if method is not None and "id" in message:
            asked[(sender, message["id"])] = method
            out.append(Record(sender, "request", method, message.get("params")))
        elif method is not None:
            out.append(Record(sender, "notification", method, message.get("params")))
        else:
            other = "server" if sender == "client" else "client"
            answered = asked.get((other, message.get("id")))
            part = "error" if "error" in message else "result"
            out.append(Record(sender, "response", answered, {part: message.get(part)}))
    return out


class WireLog:
    """Every message between a FakeEditor and the daemon, as JSON, in order."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def attach(self, editor: FakeEditor) -> None:
        protocol: Any = editor.client.protocol
        structure, send = protocol.structure_message, protocol._send_data

        def incoming(data: Any) -> Any:
            if isinstance(data, dict) and "jsonrpc" in data:
                self.messages.append(("server", copy.deepcopy(data)))
            return structure(data)

        def outgoing(data: Any) -> None:
            if data:
                raw = json.dumps(data, default=protocol._serialize_message)
                self.messages.append(("client", json.loads(raw)))
            send(data)

        protocol.structure_message = incoming
        protocol._send_data = outgoing

    def sent_by_server(self, method: str) -> list[dict[str, Any]]:
        return [m for s, m in self.messages if s == "server" and m.get("method") == method]


@asynccontextmanager
async def logged_daemon(
    folders: list[Path], env: dict[str, str], log: WireLog, **option_values: Any
) -> AsyncIterator[FakeEditor]:
    init = option_values.pop("init_options", {"model": MODEL})
    editor = make_editor(EditorOptions(init_options=init, **option_values))
    log.attach(editor)
    await editor.start([sys.executable, "-m", "tether", "serve"], folders, env=env)
    try:
        yield editor
    finally:
        await editor.stop()


async def until(predicate: Any, timeout: float = 15) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


# -- the scenario -----------------------------------------------------------------------


def tool(name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inp}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


SLOW = {"chunk_delay_ms": 150, "blocks": say("Here is a long explanation, slowly. " * 8)}
TODOS = [
    {"content": "Rename greet", "status": "in_progress", "activeForm": "Renaming greet"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]
PLAN = "1. Add a CHANGELOG entry for the rename\n2. Mention it in README.md"
SCRIPT: list[Any] = [
    # Turn A: thinking, text, a plan, a read, an edit (asked), new diagnostics, a command.
    [
        {"type": "thinking", "thinking": "A rename; read the file first."},
        {"type": "text", "text": "I'll read the file first."},
        tool("TodoWrite", todos=TODOS),
        tool("Read", file_path="src/app.py"),
    ],
    [tool("Edit", file_path="src/app.py", old_string="def greet(", new_string="def welcome(")],
    {
        "expect": {"contains": "<new-diagnostics>"},
        "blocks": [
            tool("Bash", command="mkdir -p build && ls src", description="List the sources")
        ],
    },
    say("Renamed greet to welcome."),
    # Turn B: a Write the user rejects with feedback, a command they dismiss.
    [tool("Write", file_path="NOTES.md", content="# Notes\n")],
    {
        "expect": {"contains": "Not now"},
        "blocks": [tool("Bash", command="touch NOTES.md", description="Create NOTES.md")],
    },
    say("OK, no notes."),
    # Turn C (plan mode): the plan question, then a new file in acceptEdits.
    [tool("ExitPlanMode", plan=PLAN)],
    {
        "expect": {"contains": "Keep it short"},
        "blocks": [tool("Write", file_path="CHANGELOG.md", content="- greet is now welcome\n")],
    },
    say("Added CHANGELOG.md."),
    # Turn D: a background task, stopped; its notification starts a turn by itself. Its
    # prompt carries the note of what was undone since turn C.
    {
        "expect": {"contains": "undid these"},
        "blocks": [
            tool("Bash", command="sleep 30", description="Watch the tests", run_in_background=True)
        ],
    },
    say("The watcher runs in the background."),
    {"expect": {"contains": "<status>killed</status>"}, "blocks": say("The watcher stopped.")},
    # Turn E: an overloaded API (a retry notice), a prompt queued during a command.
    {"fault": "529"},
    [tool("Bash", command="sleep 0.5; echo built", description="Build")],
    {"expect": {"contains": "and list the docs"}, "blocks": say("Built; there are no docs.")},
    # Turns F-I: cancelled four ways.
    [tool("Bash", command="make clean", description="Clean the build")],
    SLOW,
    SLOW,
    SLOW,
    # tether/compact, then a turn that fails: prompt too long even after compacting.
    say("<summary>greet was renamed to welcome; CHANGELOG.md was added.</summary>"),
    {"fault": "prompt_too_long"},
    say("<summary>The same, shorter.</summary>"),
    {"fault": "prompt_too_long"},
    # The second daemon: the recovered session goes on, asking through showMessageRequest.
    [tool("Write", file_path="TODO.md", content="- check the tree\n")],
    say("Wrote TODO.md."),
]


def diagnostic(line: int, severity: int, message: str, source: str) -> dict[str, Any]:
    position = {"line": line, "character": 0}
    return {
        "range": {"start": position, "end": {"line": line, "character": 9}},
        "severity": severity,
        "message": message,
        "source": source,
    }


def send_diagnostics_like_an_editor(editor: FakeEditor, app: Path) -> None:
    """A file's current diagnostics when an edit of it is announced, new ones after."""
    uri, edits = app.as_uri(), set[str]()

    def on_update(params: dict[str, Any]) -> None:
        update = params["update"]
        names_app = any(loc["uri"] == uri for loc in update.get("locations") or [])
        if update["kind"] == "tool_call" and update["toolKind"] == "edit" and names_app:
            edits.add(update["toolCallId"])
            warning = diagnostic(0, 2, "Missing module docstring", "pylint")
            editor.client.protocol.notify(
                "tether/diagnostics", {"uri": uri, "diagnostics": [warning]}
            )
        elif update.get("toolCallId") in edits and update.get("status") == "completed":
            error = diagnostic(4, 1, '"greet" is not defined', "pyright")
            editor.client.protocol.notify(
                "tether/diagnostics", {"uri": uri, "diagnostics": [error]}
            )

    editor.on_update = on_update


async def capable_editor(workspace: Path, other: Path, env: dict[str, str], log: WireLog) -> str:
    """A rich client: permissionRequest, saveDocuments, diagnostics, progress."""
    app, changelog = workspace / "src" / "app.py", workspace / "CHANGELOG.md"
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "settings.json").write_text('{"theme": "dark"}')
    options = {"diagnostics": True, "init_options": {"model": MODEL, "permissionMode": "default"}}
    async with logged_daemon([workspace], env, log, **options) as editor:
        editor.open(app)
        send_diagnostics_like_an_editor(editor, app)
        session = await editor.new_session(
            workspaceFolder=workspace.as_uri(),
            title="Rename greet",
            model=MODEL,
            permissionMode="default",
        )
        # Turn A.
        editor.answers += ["allow_once", "allow_always"]
        selection = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 31}}
        first = await editor.request(
            "tether/prompt",
            {
                "sessionId": session,
                "prompt": [
                    {"type": "text", "text": "Rename greet to welcome, then list the sources."},
                    {"type": "resource_link", "uri": app.as_uri(), "range": selection},
                ],
                "workDoneToken": "rename-1",
            },
            60,
        )
        assert first["stopReason"] == "end_turn"
        # Turn B.
        editor.answers += ["reject_once", "cancel"]
        editor.feedback.append("Not now, thanks.")
        await editor.request(
            "tether/prompt",
            {
                "sessionId": session,
                "prompt": [
                    {"type": "text", "text": "Write NOTES.md like this sketch."},
                    {"type": "image", "mimeType": "image/png", "data": PNG_1PX},
                ],
            },
            60,
        )
        # Turn C.
        assert (
            await editor.request("tether/setMode", {"sessionId": session, "mode": "plan"}) is None
        )
        editor.answers.append("plan_accept_edits")
        editor.feedback.append("Keep it short.")
        await editor.prompt(session, "Plan the CHANGELOG entry.")
        assert changelog.exists()
        await review_changes(editor, session, app, changelog)
        # Turn D.
        await editor.prompt(session, "Watch the tests in the background.")
        known = {u["turnId"] for u in editor.updates}
        listed = await editor.request("tether/listTasks", {"sessionId": session})
        (task,) = listed["tasks"]
        stopped = await editor.request(
            "tether/stopTask", {"sessionId": session, "taskId": task["taskId"]}
        )
        assert stopped == {"stopped": True}
        await editor.wait_for_update(
            lambda u: u["update"]["kind"] == "turn_end" and u["turnId"] not in known
        )
        # Turn E: a second prompt while a command runs is queued into the running turn.
        first_e = asyncio.create_task(
            editor.prompt(session, "Build it.", workDoneToken="build-progress")
        )
        await editor.wait_for_update(
            lambda u: (
                u["update"].get("status") == "in_progress"
                and u["update"]["toolCallId"]
                == editor.updates_of(session, "tool_call")[-1]["toolCallId"]
            )
        )
        queued = await editor.prompt(session, "and list the docs")
        assert (await first_e)["turnId"] == queued["turnId"]
        await cancellations(editor, session, log)
        compacted = await editor.request(
            "tether/compact", {"sessionId": session, "instructions": "Keep the file names."}
        )
        assert compacted["tokensAfter"] < compacted["tokensBefore"]
        failed = await editor.prompt(session, "Summarise everything.")
        assert failed["stopReason"] == "error"
        listed = await editor.request(
            "tether/listSessions", {"workspaceFolder": workspace.as_uri(), "limit": 20}
        )
        assert [s["sessionId"] for s in listed["sessions"]] == [session]
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        assert first["turnId"] in loaded["rewindableTurns"]
        # Rewind: one file put back, one that cannot be read any more.
        editor.client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=changelog.as_uri())
            )
        )
        changelog.write_bytes(b"\xff\xfe not text")
        rewound = await editor.request(
            "tether/rewind", {"sessionId": session, "turnId": first["turnId"]}
        )
        assert rewound["restored"] == [app.as_uri()]
        assert rewound["notRestored"][0]["uri"] == changelog.as_uri()
        # Loading it again gives the rewound turns, where they were.
        reloaded = await editor.request(
            "tether/loadSession", {"sessionId": session, "recover": False}
        )
        assert reloaded["rewound"][0]["turnId"] == first["turnId"]
        with pytest.raises(JsonRpcException):
            await editor.new_session(workspaceFolder=other.as_uri())
        editor.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=other.as_uri(), name=other.name)], removed=[]
                )
            )
        )
        assert await editor.new_session(workspaceFolder=other.as_uri())
    return session


async def review_changes(editor: FakeEditor, session: str, app: Path, changelog: Path) -> None:
    """The change set after turns A and C: list, keep, a conflict, undo a file's changes."""
    everything = {"states": ["pending", "kept", "undone"]}
    listed = await editor.request("tether/listChanges", {"sessionId": session, **everything})
    by_uri = {f["uri"]: f["hunks"] for f in listed["files"]}
    (greet,) = by_uri[app.as_uri()]
    (entry,) = by_uri[changelog.as_uri()]
    assert listed["counts"] == {"pending": 2, "kept": 0, "undone": 0, "conflicts": 0}
    kept = await editor.request(
        "tether/keepChanges", {"sessionId": session, "hunkIds": [greet["hunkId"]]}
    )
    assert kept == {"kept": [greet["hunkId"]]}
    # The user edits the kept line: it can no longer be undone, only reported.
    editor.type(app, editor.text(app).replace("(name: str)", "(name: str, mark: str = '!')", 1))
    conflict = await editor.request(
        "tether/undoChanges", {"sessionId": session, "hunkIds": [greet["hunkId"]]}
    )
    assert conflict["undone"] == [] and conflict["notUndone"][0]["conflict"] is True
    undone = await editor.request(
        "tether/undoChanges", {"sessionId": session, "uri": changelog.as_uri()}
    )
    assert undone == {"undone": [entry["hunkId"]]}
    assert not changelog.exists()  # the turn created it
    pending = await editor.request(
        "tether/listChanges", {"sessionId": session, "turnId": greet["turnId"]}
    )
    assert pending["files"] == [] and pending["counts"]["conflicts"] == 1


async def cancellations(editor: FakeEditor, session: str, log: WireLog) -> None:
    # F: tether/cancel while a permission question is open, which withdraws the question
    # (see KNOWN_DEFECTS).
    asked, answer_late = asyncio.Event(), asyncio.Event()

    async def answer_when_told(_params: dict[str, Any]) -> str | None:
        asked.set()
        await answer_late.wait()
        return "reject_once"

    editor.asker = answer_when_told
    turn = asyncio.create_task(editor.prompt(session, "Clean the build directory."))
    await asyncio.wait_for(asked.wait(), 15)
    assert await editor.request("tether/cancel", {"sessionId": session}) is None
    assert (await turn)["stopReason"] == "cancelled"
    answer_late.set()  # a user who answers after all: harmless
    editor.asker = None
    # G: $/cancelRequest on the prompt request.
    params = {"sessionId": session, "prompt": [{"type": "text", "text": "Explain the code."}]}
    future = editor.client.protocol.send_request("tether/prompt", params, msg_id=41)
    await until(lambda: chunking(editor))
    editor.client.protocol.notify("$/cancelRequest", types.CancelParams(id=41))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(asyncio.wrap_future(future), 15)
    await until(lambda: editor.updates_of(session)[-1]["kind"] == "turn_end")
    # H: tether/cancel as a notification.
    turn = asyncio.create_task(editor.prompt(session, "Explain it again."))
    await until(lambda: chunking(editor))
    editor.client.protocol.notify("tether/cancel", {"sessionId": session})
    assert (await turn)["stopReason"] == "cancelled"
    # I: the cancel button of the progress the daemon created.
    turn = asyncio.create_task(editor.prompt(session, "Explain it once more."))
    await until(lambda: chunking(editor))
    begun = [p for p in log.sent_by_server("$/progress") if p["params"]["value"]["kind"] == "begin"]
    token = begun[-1]["params"]["token"]
    editor.client.protocol.notify(
        "window/workDoneProgress/cancel", types.WorkDoneProgressCancelParams(token=token)
    )
    assert (await turn)["stopReason"] == "cancelled"


def chunking(editor: FakeEditor) -> bool:
    return bool(editor.updates) and editor.updates[-1]["update"]["kind"] == "agent_message_chunk"


UNDEFINED_NAME = {
    "range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 16}},
    "severity": 1,
    "source": "pyflakes",
    "message": "undefined name 'Hello'",
}


async def plain_editor(workspace: Path, env: dict[str, str], log: WireLog, session: str) -> None:
    """A client that declares nothing of Tether's; the session's transcript is damaged."""
    (path,) = Path(env["TETHER_DATA_DIR"]).rglob(f"{session}.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = b'{"type": "user", "damaged\n'
    path.write_bytes(b"".join(lines))
    options = {
        "permission_request": False,
        "save_documents": False,
        "work_done_progress": False,
        "init_options": {"model": MODEL},
    }
    async with logged_daemon([workspace], env, log, **options) as editor:
        with pytest.raises(JsonRpcException):
            await editor.request("tether/loadSession", {"sessionId": session})
        await editor.request("tether/loadSession", {"sessionId": session, "recover": True})
        editor.answers.append("allow_once")
        result = await editor.prompt(session, "Write a TODO list.", workDoneToken="todo-1")
        assert result["stopReason"] == "end_turn"
        assert editor.message_requests
        # Code actions are offered to clients that declare nothing of Tether's.
        app = workspace / "src" / "app.py"
        editor.open(app)
        actions = await editor.code_actions(app, (1, 11), diagnostics=[UNDEFINED_NAME])
        assert any(getattr(a, "title", "") == "Tether: fix this" for a in actions)


class RawClient:
    """Bytes on stdin, messages from stdout: what no well-behaved client sends."""

    def __init__(self, proc: asyncio.subprocess.Process, log: WireLog) -> None:
        self.proc, self.log, self.next_id = proc, log, 0

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    def send(self, message: Any) -> None:
        if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
            self.log.messages.append(("client", copy.deepcopy(message)))
        body = json.dumps(message).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    async def response(self, msg_id: Any) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            length = None
            while True:
                line = await asyncio.wait_for(self.proc.stdout.readline(), 15)
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            message = json.loads(await self.proc.stdout.readexactly(length))
            self.log.messages.append(("server", message))
            if "method" not in message and message.get("id") == msg_id:
                return message


async def raw_client(workspace: Path, env: dict[str, str], log: WireLog) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tether",
        "serve",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    client = RawClient(proc, log)
    try:
        early = client.request("tether/listSessions", {})
        assert (await client.response(early))["error"]["code"] == -32002
        init = client.request(
            "initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        )
        await client.response(init)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        client.send_bytes(b'Content-Length: 17\r\n\r\n{"jsonrpc": "2.0"')
        assert (await client.response(None))["error"]["code"] == -32700
        client.send([1, 2, 3])
        assert (await client.response(None))["error"]["code"] == -32600
        unknown = client.request("tether/noSuchMethod", {})
        assert (await client.response(unknown))["error"]["code"] == -32601
        bad = client.request("tether/prompt", {"sessionId": 5, "prompt": "hi"})
        assert (await client.response(bad))["error"]["code"] == -32602
        stranger = client.request("tether/prompt", {"sessionId": "nope", "prompt": say("hi")})
        assert (await client.response(stranger))["error"]["code"] == -32602
        down = client.request("shutdown", None)
        await client.response(down)
        client.send({"jsonrpc": "2.0", "method": "exit"})
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def warm_daemon(workspace: Path, env: dict[str, str], log: WireLog, run_dir: Path) -> None:
    """``tether serve --connect``: the same protocol, passed to the warm daemon."""
    env = {**env, "TETHER_RUNTIME_DIR": str(run_dir), "TETHER_DAEMON_IDLE_S": "120"}
    full_env = {**os.environ, **env}
    try:
        editor = make_editor(EditorOptions(init_options={"model": MODEL}))
        log.attach(editor)
        await editor.start(
            [sys.executable, "-m", "tether", "serve", "--connect"], [workspace], env=env
        )
        try:
            # What the proxy sends first, sent again the same way the editor speaks.
            from tether.daemon.environment import client_environment

            editor.client.protocol.notify(
                "tether/clientEnvironment",
                client_environment(str(workspace), {"ANTHROPIC_API_KEY": "k", "PATH": "/bin"}),
            )
            session = await editor.new_session()
            info = await editor.request("tether/daemonInfo", None)
            assert [s["sessionId"] for s in info["sessions"]] == [session]
        finally:
            await editor.stop()
        await asyncio.to_thread(print_through_daemon, full_env, workspace, log)
        await asyncio.to_thread(stop_daemon, full_env, log)
    finally:
        for pid_file in run_dir.glob("*.pid"):  # the daemon this test started, if it is left
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGTERM)


def print_through_daemon(env: dict[str, str], workspace: Path, log: WireLog) -> None:
    """``echo hi | tether -p -`` as the terminal client speaks it (``cli/remote.py``)."""
    from tether.daemon.client import connect

    (workspace / "turns.json").write_text(json.dumps([[{"type": "text", "text": "Done."}]]))
    channel = connect(env, start=False)

    def send(message: dict[str, Any]) -> None:
        log.messages.append(("client", message))
        channel.send(message)

    from tether.daemon.build import build_id

    params = {
        "build": build_id(),
        "argv": ["-p", "-", "--model", "scripted:turns.json"],
        "cwd": str(workspace),
        "env": {"ANTHROPIC_API_KEY": "k", "PATH": "/usr/bin:/bin"},
        "umask": 0o022,
        "stdinIsTty": False,
        "stdoutIsTty": False,
        "stderrIsTty": False,
    }
    send({"jsonrpc": "2.0", "id": 1, "method": "tether/print", "params": params})
    pieces = ["hi\n", ""]
    output = ""
    while (reply := channel.receive()) is not None:
        log.messages.append(("server", reply))
        if reply.get("method") == "tether/readInput":
            text = pieces.pop(0)
            input_params = {"text": text, "eof": not text}
            send({"jsonrpc": "2.0", "method": "tether/input", "params": input_params})
        elif reply.get("method") == "tether/output":
            output += reply["params"]["text"] if reply["params"]["stream"] == "stdout" else ""
        elif reply.get("id") == 1:
            break
    assert reply is not None and reply["result"] == {"exitCode": 0}, reply
    assert output == "Done.\n"
    send({"jsonrpc": "2.0", "method": "tether/interrupt"})  # nothing runs: nothing happens
    channel.close()


def stop_daemon(env: dict[str, str], log: WireLog) -> None:
    from tether.daemon.client import connect
    from tether.daemon.paths import socket_path

    channel = connect(env, start=False)
    message = {"jsonrpc": "2.0", "id": 31, "method": "tether/daemonStop"}
    log.messages.append(("client", message))
    channel.send(message)
    while (reply := channel.receive()) is not None:
        log.messages.append(("server", reply))
        if reply.get("id") == 31:
            break
    channel.close()
    deadline = time.monotonic() + 10
    while socket_path(env).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not socket_path(env).exists(), "the daemon did not stop"


async def real_wire(workspace: Path, tmp_path: Path, env: dict[str, str]) -> list[Record]:
    """The scenario's messages, from all four daemons."""
    other = tmp_path / "other"
    other.mkdir()
    logs = [WireLog(), WireLog(), WireLog(), WireLog()]
    try:
        session = await capable_editor(workspace, other, env, logs[0])
        await plain_editor(workspace, env, logs[1], session)
        await raw_client(workspace, env, logs[2])
        await warm_daemon(other, env, logs[3], tmp_path / "run")
    finally:
        dump = os.environ.get("TETHER_PROTOCOL_DUMP")
        if dump:
            Path(dump).write_text(json.dumps([log.messages for log in logs], indent=1))
    return [record for log in logs for record in records(log.messages)]


# -- the document -----------------------------------------------------------------------


def doc_messages() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for match in BLOCK.finditer(DOC.read_text(encoding="utf-8")):
        sender = match.group(1).strip()
        assert sender in ("client", "server"), (
            f"every ```json block of {DOC.name} is a message and names its sender "
            f"(```json client or ```json server), not {sender!r}:\n{match.group(2)}"
        )
        try:
            message = json.loads(match.group(2))
        except ValueError as e:
            raise AssertionError(f"not JSON ({e}):\n{match.group(2)}") from None
        out.append((sender, message))
    return out


def covers(real: Any, example: Any) -> bool:
    """Whether ``real`` has every field of ``example`` (recursively, lists element-wise)."""
    if isinstance(example, dict):
        if not isinstance(real, dict):
            return False
        for key, value in example.items():
            if key not in real:
                return False
            if key in EQUAL_KEYS and not isinstance(value, dict | list):
                if real[key] != value:
                    return False
            elif not covers(real[key], value):
                return False
        return True
    if isinstance(example, list):
        return isinstance(real, list) and all(any(covers(r, e) for r in real) for e in example)
    if example is None or real is None:
        return True
    if isinstance(example, bool) or isinstance(real, bool):
        return isinstance(example, bool) and isinstance(real, bool)
    if isinstance(example, int | float):
        return isinstance(real, int | float)
    return type(example) is type(real)


def field_paths(value: Any, prefix: str = "") -> set[str]:
    """``a.b``, ``a.c[].d``: where fields occur in a message."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{prefix}.{key}" if prefix else key
            found.add(path)
            if key not in OPAQUE:
                found |= field_paths(inner, path)
    elif isinstance(value, list):
        for inner in value:
            found |= field_paths(inner, f"{prefix}[]")
    return found


def own_part(record: Record) -> Any:
    """The part of a message whose every field this document must show: Tether's methods,
    and Tether's part of the ``initialize`` answer."""
    if record.method == "initialize" and record.kind == "response":
        result = record.payload.get("result") or {}
        return {"tether": result.get("capabilities", {}).get("experimental", {}).get("tether")}
    if record.method is not None and record.method.startswith("tether/"):
        return record.payload
    return None


def error_only(documented: list[Record]) -> set[str]:
    """Methods documented only to show an error (an unknown method)."""
    answered = {r.method for r in documented if r.kind == "response" and "result" in r.payload}
    return {
        r.method
        for r in documented
        if r.kind == "request" and r.method is not None and r.method not in answered
    }


def update_models() -> list[type[WireModel]]:
    variants = typing.get_args(typing.get_args(updates.SessionUpdate)[0])
    return list(variants)


def aliases(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


def test_every_json_block_is_a_message_and_responses_follow_requests() -> None:
    documented = records(doc_messages())
    assert len(documented) > 50
    orphans = [r for r in documented if r.kind == "response" and r.method is None]
    for orphan in orphans:  # only errors about messages that could not be read have no id
        assert orphan.payload["error"]["code"] in (-32700, -32600), orphan


def warm_daemon_methods() -> set[str]:
    """What a connection to the warm daemon registers beyond ``tether serve``."""
    from tether.daemon.server import ConnectionServer, Daemon
    from tether.lsp.handlers import register
    from tether.lsp.hub import SessionHub

    plain, _hub = create_server()
    server = ConnectionServer()
    hub = SessionHub(server)
    register(server, hub)
    Daemon(Path("/nonexistent/daemon.sock"), run_command=run_local)._register_daemon_methods(
        server, hub
    )
    return set(server.protocol.fm.features) - set(plain.protocol.fm.features)


def test_every_method_the_daemon_handles_is_documented() -> None:
    server, _hub = create_server()
    registered = set(server.protocol.fm.features) | warm_daemon_methods()
    handled = registered | set(server.protocol.fm.builtin_features) | {"$/cancelRequest"}
    documented = records(doc_messages())
    from_client = {r.method for r in documented if r.sender == "client" and r.kind != "response"}
    missing = registered - from_client
    assert not missing, f"methods the daemon registers but {DOC.name} does not show: {missing}"
    unknown = from_client - handled - error_only(documented)
    assert not unknown, f"{DOC.name} shows methods the daemon does not handle: {unknown}"


def test_every_update_kind_and_field_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    examples = [
        m["params"]["update"]
        for s, m in doc_messages()
        if s == "server" and m.get("method") == "tether/sessionUpdate"
    ]
    for model in update_models():
        kind = model.model_fields["kind"].default
        row = next((ln for ln in text.splitlines() if ln.startswith(f"| `{kind}` |")), None)
        assert row is not None, f"no row for update kind {kind!r} in the SessionUpdate table"
        undocumented = {a for a in aliases(model) - {"kind"} if f"`{a}`" not in row}
        assert not undocumented, f"fields of {kind!r} missing from its table row: {undocumented}"
        assert any(u["kind"] == kind for u in examples), f"no example of a {kind!r} update"
    for module in (updates, content):
        for model in vars(module).values():
            if isinstance(model, type) and issubclass(model, WireModel):
                undocumented = {a for a in aliases(model) if f"`{a}`" not in text}
                assert not undocumented, f"{model.__name__} fields not documented: {undocumented}"
    shown_types = {
        block["type"]
        for _s, m in doc_messages()
        for block in _blocks(m)
        if isinstance(block, dict) and "type" in block
    }
    for union in (content.ContentBlock, content.ToolContent):
        for variant in typing.get_args(typing.get_args(union)[0]):
            kind = variant.model_fields["type"].default
            assert kind in shown_types, f"no example with a {kind!r} block ({variant.__name__})"


def _blocks(message: Any) -> Iterator[Any]:
    """Every dict inside a message."""
    if isinstance(message, dict):
        yield message
        for value in message.values():
            yield from _blocks(value)
    elif isinstance(message, list):
        for value in message:
            yield from _blocks(value)


async def test_every_documented_message_matches_the_real_daemon(
    workspace: Path, tmp_path: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(SCRIPT)
    real = await real_wire(workspace, tmp_path, {**daemon_env, "ANTHROPIC_BASE_URL": api.base_url})
    api.assert_complete()
    documented = records(doc_messages())
    problems: list[str] = []
    for doc in documented:
        key = (doc.sender, doc.kind, doc.method)
        candidates = [r for r in real if (r.sender, r.kind, r.method) == key]
        if key in KNOWN_DEFECTS:
            if candidates:
                problems.append(f"{key} works now: remove it from KNOWN_DEFECTS")
            continue
        if not any(covers(r.payload, doc.payload) for r in candidates):
            shown = json.dumps(doc.payload, indent=1)[:1500]
            near = [json.dumps(r.payload)[:600] for r in candidates[:3]]
            problems.append(
                f"{doc.sender} {doc.kind} {doc.method}: no real message has these fields:\n"
                f"{shown}\nreal ones ({len(candidates)}): {near}"
            )
    assert not problems, "\n\n".join(problems)

    shown_fields: dict[tuple[str, str, str | None], set[str]] = {}
    for doc in documented:
        key = (doc.sender, doc.kind, doc.method)
        shown_fields.setdefault(key, set()).update(field_paths(own_part(doc)))
    unshown = {
        f"{r.sender} {r.kind} {r.method}: {path}"
        for r in real
        if own_part(r) is not None
        for path in field_paths(own_part(r)) - shown_fields.get((r.sender, r.kind, r.method), set())
    }
    assert not unshown, "fields the daemon sends that no example shows:\n" + "\n".join(
        sorted(unshown)
    )

    answered = {r.method for r in real if r.kind == "response" and "result" in r.payload}
    requests = {r.method for r in documented if r.kind == "request" and r.sender == "client"}
    unanswered = requests - answered - error_only(documented)
    assert not unanswered, f"documented requests the daemon never answered: {unanswered}"

    init = next(r for r in real if r.kind == "response" and r.method == "initialize")
    advertised = set(init.payload["result"]["capabilities"]["experimental"]["tether"]["methods"])
    ours = {
        m
        for m in requests - error_only(documented) - warm_daemon_methods()
        if m and m.startswith("tether/")
    }
    assert advertised == ours, "initialize must advertise exactly the documented requests"

    sent = {r.method for r in real if r.sender == "server" and r.kind != "response"}
    shown = {r.method for r in documented if r.sender == "server" and r.kind != "response"}
    assert sent <= shown, f"the daemon sent methods {DOC.name} does not show: {sent - shown}"
