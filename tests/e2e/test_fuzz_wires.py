"""Property-based fuzzing (Hypothesis) of what comes from outside: the LSP wire of a real
daemon over stdio, the stream-json and ACP line parsers, and the transcript loader.

Properties: the daemon answers every message that has a usable id with a well-formed
JSON-RPC response (no traceback in it), answers a probe request after each message, and
exits cleanly at the end; the line parsers return or raise their own error type, never
anything else; a damaged transcript is resumed or refused with ``SessionError``, read for a
history without raising, recovered always, and whenever the live read vouches for a file it
gives the chain the whole read gives.

Bounded for CI (about a minute together): ``TETHER_FUZZ_EXAMPLES`` scales the example
counts. Runs are random; a failure prints the falsifying example and, with ``print_blob``,
the ``@reproduce_failure`` line that replays it. No example database is written (the tree
stays clean).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.acp.stdio import problem
from tether.cli.stream_input import InputError, parse_line
from tether.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from tether.errors import SessionError
from tether.transcript.chain import build_chain
from tether.transcript.live import read_live
from tether.transcript.load import read_transcript
from tether.transcript.payloads import ToolStartedData
from tether.transcript.records import (
    AssistantRecord,
    MetaRecord,
    ProgressRecord,
    ToolResultRecord,
    UserRecord,
    dump_record,
)
from tether.transcript.resume import resume

SCALE = float(os.environ.get("TETHER_FUZZ_EXAMPLES", "1"))


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        print_blob=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
shallow = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
deep = st.integers(150, 3000).map(lambda n: "[" * n + "]" * n)
"""JSON nested around and past every limit, as text (Python cannot even encode it)."""
values = shallow.map(json.dumps) | deep

METHODS = [
    "tether/newSession",
    "tether/prompt",
    "tether/cancel",
    "tether/listSessions",
    "tether/loadSession",
    "tether/setMode",
    "tether/rewind",
    "tether/compact",
    "tether/listTasks",
    "tether/stopTask",
    "tether/diagnostics",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/codeAction",
    "workspace/executeCommand",
    "workspace/didChangeWorkspaceFolders",
    "$/cancelRequest",
    "initialize",
    "nope/nothing",
]
ids = st.integers(-(2**40), 2**40) | st.text(max_size=10) | scalars | st.lists(scalars, max_size=2)
fields = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": (st.sampled_from(["2.0", "2.0", "2.0", "1.0"]) | scalars).map(json.dumps),
        "id": ids.map(json.dumps),
        "method": (st.sampled_from(METHODS) | scalars).map(json.dumps),
        "params": values,
        "result": values,
        "error": values,
    },
)
envelopes = fields.map(lambda f: "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in f.items()) + "}")
"""A JSON-RPC message of sorts, as text: each field present or not, right or wrong."""
bodies = (envelopes | values).map(str.encode) | st.binary(max_size=200)


class Daemon:
    """``tether serve`` over pipes; a thread parses its frames into a queue."""

    def __init__(self, env: dict[str, str], root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tether", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **env},
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.call("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            self.messages.put(json.loads(out.read(length)))

    def frame(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.frame(json.dumps(message).encode())

    def call(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        probe = f"tether-fuzz-probe-{self.next_id}"
        self.send({"jsonrpc": "2.0", "id": probe, "method": method, "params": params})
        while True:
            message = self.messages.get(timeout=20)
            assert message is not None, "the daemon closed its output"
            check_well_formed(message)
            if message.get("id") == probe and "method" not in message:
                return message


def check_well_formed(message: dict[str, Any]) -> None:
    assert message.get("jsonrpc") == "2.0", message
    if "method" in message:
        return  # a notification or request from the daemon
    assert message.get("id") is None or isinstance(message["id"], int | str), message
    error = message.get("error")
    if error is not None:
        assert isinstance(error["code"], int) and isinstance(error["message"], str), message
        assert "traceback" not in json.dumps(error).lower(), message


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "ws").mkdir()
    env = {
        "TETHER_DATA_DIR": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # nothing listens: no turn gets far
    }
    d = Daemon(env, root / "ws")
    yield d
    d.call("shutdown", None)
    d.send({"jsonrpc": "2.0", "method": "exit", "params": None})
    try:
        assert d.proc.wait(10) == 0
    finally:
        if d.proc.poll() is None:
            d.proc.kill()


@fuzz(250)
@given(body=bodies, length_error=st.sampled_from([0, 0, 0, 0, -1, 3]))
def test_the_lsp_wire_answers_anything_and_keeps_serving(
    daemon: Daemon, body: bytes, length_error: int
) -> None:
    message: Any = None
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        pass
    if isinstance(message, dict) and message.get("method") in ("exit", "shutdown"):
        return
    if length_error:  # a wrong Content-Length: the stream must resync on the next header
        assert daemon.proc.stdin is not None
        daemon.proc.stdin.write(
            b"Content-Length: %d\r\n\r\n" % max(0, len(body) + length_error) + body
        )
        daemon.proc.stdin.write(b"\r\n\r\n")
    else:
        daemon.frame(body)
    answer = daemon.call("tether/listSessions", {})
    assert "result" in answer, answer


@fuzz(600)
@given(line=st.text(max_size=300) | values | envelopes)
def test_stream_json_lines_parse_or_say_why(line: str) -> None:
    try:
        parse_line(line)
    except InputError as e:
        assert str(e)


@fuzz(600)
@given(line=st.binary(max_size=300) | envelopes.map(str.encode))
def test_acp_lines_pass_or_get_a_json_rpc_answer(line: bytes) -> None:
    answer = problem(line)
    if answer:
        reply = json.loads(answer)
        check_well_formed(reply)


SID = "fz"


def _transcript() -> list[bytes]:
    records: list[Any] = []
    parent = None
    for turn in ("one", "two", "three"):
        user = UserRecord(session_id=SID, parent_uuid=parent, message=user_text(turn))
        use = ToolUseBlock(id=f"t-{turn}", name="Read", input={"file_path": "a"})
        said = AssistantRecord(
            session_id=SID,
            parent_uuid=user.uuid,
            message=Message(role="assistant", content=[TextBlock(text=f"re {turn}"), use]),
        )
        started = ProgressRecord(session_id=SID, data=ToolStartedData(tool_use_id=use.id))
        result = ToolResultRecord(
            session_id=SID,
            parent_uuid=said.uuid,
            message=Message(
                role="user",
                content=[ToolResultBlock(tool_use_id=use.id, content=[TextBlock(text="x")])],
            ),
        )
        answer = AssistantRecord(
            session_id=SID,
            parent_uuid=result.uuid,
            message=Message(role="assistant", content=[TextBlock(text=f"done {turn}")]),
        )
        records += [user, said, started, result, answer]
        parent = answer.uuid
    records.append(MetaRecord(session_id=SID, title="t", turns=3))
    return [dump_record(r).encode() for r in records]


LINES = _transcript()
UUIDS = [json.loads(line)["uuid"] for line in LINES]

mutations = st.one_of(
    st.tuples(st.just("nul"), st.integers(0, len(LINES) - 1), st.integers(0, 400)),
    st.tuples(st.just("cut"), st.integers(0, len(LINES) - 1), st.integers(0, 400)),
    st.tuples(st.just("drop"), st.integers(0, len(LINES) - 1), st.just(0)),
    st.tuples(st.just("copy"), st.integers(0, len(LINES) - 1), st.integers(0, len(LINES) - 1)),
    st.tuples(st.just("parent"), st.integers(0, len(LINES) - 1), st.integers(0, len(LINES) - 1)),
    st.tuples(st.just("deep"), st.integers(0, len(LINES) - 1), st.integers(200, 3000)),
)


def mutate(lines: list[bytes], how: tuple[str, int, int]) -> list[bytes]:
    kind, i, n = how
    out = list(lines)
    i %= len(out) or 1
    line = out[i] if out else b""
    if not out:
        return out
    if kind == "nul":
        out[i] = line[:n] + b"\x00" + line[n:]
    elif kind == "cut":
        out[i] = line[:n]
    elif kind == "drop" and out:
        del out[i]
    elif kind == "copy":
        out.insert(n, line)
    elif kind == "parent" and line in LINES:  # a sound line given another parent
        record = json.loads(line)
        record["parentUuid"] = UUIDS[n]
        out[i] = json.dumps(record, separators=(",", ":")).encode()
    elif kind == "deep" and line:
        out[i] = line[:-1] + b',"x":' + b"[" * n + b"]" * n + b"}"
    return out


@fuzz(250)
@given(changes=st.lists(mutations, min_size=1, max_size=4), torn=st.booleans())
def test_the_transcript_loader_mends_or_refuses_any_damage(
    tmp_path_factory: pytest.TempPathFactory, changes: list[tuple[str, int, int]], torn: bool
) -> None:
    lines = LINES
    for how in changes:
        lines = mutate(lines, how)
    path = tmp_path_factory.mktemp("t") / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"" if torn else b"\n"))
    try:
        resumed = resume(path, SID)
    except SessionError:
        resumed = None
    shown = read_transcript(path, skip_damaged=True)
    build_chain(shown.records)
    live = read_live(path)
    if live is not None:  # what the live read vouches for, the whole read agrees with
        whole, _notes = build_chain(shown.records)
        assert [r.uuid for r in live.chain] == [r.uuid for r in whole]
        assert resumed is not None
    resume(path, SID, recover=True)  # recovery always gives a session
