"""Bad input against the real daemon over stdio: special files in the workspace, JSON nested
past any parser's depth, damaged and looping transcripts, stray files in the sessions
folder, didChange that cannot be applied, malformed envelopes and requests after shutdown.
Each ends in a clear error or a notice, and the daemon keeps serving."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from .conftest import running_daemon
from .test_lsp_robustness import INIT, RawClient


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def script(path: Path, turns: list[Any]) -> str:
    path.write_text(json.dumps(turns))
    return f"scripted:{path}"


def transcript_of(env: dict[str, str], session: str) -> Path:
    (found,) = Path(env["TETHER_DATA_DIR"]).rglob(f"{session}.jsonl")
    return found


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_records(path: Path, recs: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))


def texts(history: list[dict[str, Any]]) -> list[str]:
    """What was said, in order: prompts and answers."""
    out: list[str] = []
    for u in history:
        if u["kind"] == "user_message":
            out += [c["text"] for c in u["content"] if c["type"] == "text"]
        elif u["kind"] == "agent_message_chunk":
            out.append(u["text"])
    return out


async def test_five_fifos_read_at_once_do_not_stop_a_sixth_session(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    fifos = []
    for i in range(5):
        fifo = workspace / f"pipe{i}"
        os.mkfifo(fifo)
        fifos.append(fifo)
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(workspace / "sock"))
    try:
        async with running_daemon([workspace], daemon_env) as editor:
            readers = []
            for i, fifo in enumerate(fifos):
                model = script(
                    tmp_path / f"r{i}.json", [[tool("Read", file_path=str(fifo))], say("r")]
                )
                readers.append(await editor.new_session(model=model))
            sixth_model = script(
                tmp_path / "six.json", [[tool("Read", file_path="sock")], say("six done")]
            )
            sixth = await editor.new_session(model=sixth_model)
            reading = [asyncio.create_task(editor.prompt(s, "read the pipe")) for s in readers]
            result = await editor.prompt(sixth, "go", timeout=20)
            assert result["stopReason"] == "end_turn"
            listed = await editor.request("tether/listSessions", {}, timeout=10)
            assert len(listed["sessions"]) == 6
            # The reads themselves end at once, with the reason.
            done = await asyncio.wait_for(asyncio.gather(*reading), 20)
            assert all(r["stopReason"] == "end_turn" for r in done)
            for session in [*readers, sixth]:
                (update,) = [
                    u
                    for u in editor.updates_of(session, "tool_call_update")
                    if u.get("status") == "failed"
                ]
                shown = json.dumps(update["content"])
                assert ("a FIFO (named pipe)" in shown) or ("a socket" in shown), shown
    finally:
        unix.close()


async def test_json_nested_past_any_depth_gets_an_error_and_the_turn_goes_on(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([{"chunk_delay_ms": 30, "blocks": say("slow " * 20)}])
    client = await RawClient.spawn({**daemon_env, "ANTHROPIC_BASE_URL": api.base_url})
    try:
        init = client.request(
            "initialize",
            {
                **INIT,
                "rootUri": workspace.as_uri(),
                "initializationOptions": {"model": "anthropic:claude-sonnet-4-6"},
            },
        )
        await client.response(init)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        new = client.request("tether/newSession", {})
        session = (await client.response(new))["result"]["sessionId"]
        turn = client.request(
            "tether/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
        )
        deep = b"[" * 1000 + b"]" * 1000
        # Too deep for Python's parser (about 2 KB): a parse error.
        client.send_bytes(b"Content-Length: %d\r\n\r\n" % len(deep) + deep)
        error = await client.response(None)
        assert error["error"]["code"] == -32700 and "nested" in error["error"]["message"]
        # Deeper than the limit yet readable: refused with the request's own id.
        body = (
            b'{"jsonrpc":"2.0","id":77,"method":"tether/listSessions","params":{"x":'
            + b"[" * 500
            + b"]" * 500
            + b"}}"
        )
        client.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        refused = await client.response(77)
        assert refused["error"]["code"] == -32600 and "200 levels" in refused["error"]["message"]
        # A deep notification, too.
        note = b'{"jsonrpc":"2.0","method":"tether/cancel","params":' + deep + b"}"
        client.send_bytes(b"Content-Length: %d\r\n\r\n" % len(note) + note)
        assert (await client.response(None))["error"]["code"] == -32700
        result = (await client.response(turn, timeout=20))["result"]
        assert result["stopReason"] == "end_turn"
        ok = client.request("tether/listSessions", {})
        assert len((await client.response(ok))["result"]["sessions"]) == 1
        down = client.request("shutdown", None)
        await client.response(down)
        client.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert await asyncio.wait_for(client.proc.wait(), 5) == 0
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()
    api.assert_complete()


async def _two_turns(workspace: Path, env: dict[str, str], tmp_path: Path) -> str:
    """A session of two turns (the first with a Read, so tool progress lines exist)."""
    model = script(
        tmp_path / "first.json",
        [[tool("Read", file_path="README.md")], say("one"), say("two")],
    )
    async with running_daemon([workspace], env) as editor:
        session = await editor.new_session(model=model)
        await editor.prompt(session, "first")
        await editor.prompt(session, "second")
    return session


async def test_a_failed_load_leaves_the_session_free(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    session = await _two_turns(workspace, daemon_env, tmp_path)
    bad = {"model": f"scripted:{tmp_path / 'missing.json'}"}
    good = {"model": script(tmp_path / "next.json", [say("three")])}
    async with running_daemon([workspace], daemon_env, init_options=bad) as broken:
        with pytest.raises(JsonRpcException) as failed:
            await broken.request("tether/loadSession", {"sessionId": session})
        # While the daemon that failed still runs, another one opens the session.
        async with running_daemon([workspace], daemon_env, init_options=good) as other:
            loaded = await other.request("tether/loadSession", {"sessionId": session}, timeout=10)
            assert texts(loaded["history"]) == ["first", "one", "second", "two"]
            assert (await other.prompt(session, "third"))["stopReason"] == "end_turn"
    # The failure was the request's (a model that cannot be used), named as such.
    assert isinstance(failed.value, JsonRpcInvalidParams)
    assert "script not found" in str(failed.value)


async def test_a_nul_byte_in_a_progress_line_is_skipped_with_a_notice(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    session = await _two_turns(workspace, daemon_env, tmp_path)
    path = transcript_of(daemon_env, session)
    lines = path.read_bytes().split(b"\n")
    number = next(i for i, line in enumerate(lines) if b'"event":"tool_finished"' in line)
    lines[number] = lines[number].replace(b'"toolUseId"', b'"tool\x00UseId"')
    path.write_bytes(b"\n".join(lines))
    model = {"model": script(tmp_path / "next.json", [say("three")])}
    async with running_daemon([workspace], daemon_env, init_options=model) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        assert texts(loaded["history"]) == ["first", "one", "second", "two"]
        (notice,) = [u for u in loaded["history"] if u["kind"] == "notice"]
        assert f"line {number + 1}" in notice["message"] and "NUL" in notice["message"]
        assert (await editor.prompt(session, "third"))["stopReason"] == "end_turn"


async def test_a_nul_byte_in_the_conversation_is_refused_then_recovered(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    session = await _two_turns(workspace, daemon_env, tmp_path)
    path = transcript_of(daemon_env, session)
    lines = path.read_bytes().split(b"\n")
    number = next(i for i, line in enumerate(lines) if b'"text":"second"' in line)
    lines[number] = lines[number].replace(b"second", b"sec\x00ond")
    path.write_bytes(b"\n".join(lines))
    model = {"model": script(tmp_path / "next.json", [say("three")])}
    async with running_daemon([workspace], daemon_env, init_options=model) as editor:
        for _ in range(2):  # refused the same way each time: nothing was left locked
            with pytest.raises(JsonRpcInvalidParams, match=f"line {number + 1} is damaged"):
                await editor.request("tether/loadSession", {"sessionId": session})
        loaded = await editor.request("tether/loadSession", {"sessionId": session, "recover": True})
        assert texts(loaded["history"]) == ["first", "one"]
        (notice,) = [u for u in loaded["history"] if u["kind"] == "notice"]
        message = notice["message"]
        assert f"line {number + 1} could not be read" in message and "NUL" in message
        assert "1 readable prompt(s)" in message and ".damaged-" in message
        assert (await editor.prompt(session, "third"))["stopReason"] == "end_turn"


async def test_a_parent_loop_keeps_the_whole_conversation_and_says_so(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    session = await _two_turns(workspace, daemon_env, tmp_path)
    path = transcript_of(daemon_env, session)
    recs = records(path)
    second = next(r for r in recs if r["type"] == "user" and "second" in json.dumps(r))
    last = [r for r in recs if r["type"] == "assistant"][-1]
    second["parentUuid"] = last["uuid"]  # second -> its own answer -> second: a loop
    write_records(path, recs)
    model = {"model": script(tmp_path / "next.json", [say("three")])}
    async with running_daemon([workspace], daemon_env, init_options=model) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        assert texts(loaded["history"]) == ["first", "one", "second", "two"]
        assert loaded["turns"] == 2
        (notice,) = [u for u in loaded["history"] if u["kind"] == "notice"]
        assert "loop" in notice["message"]
        assert (await editor.prompt(session, "third"))["stopReason"] == "end_turn"
        again = await editor.request("tether/loadSession", {"sessionId": session})
        assert texts(again["history"]) == ["first", "one", "second", "two", "third", "three"]


async def test_a_directory_named_like_a_session_does_not_break_the_listing(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    session = await _two_turns(workspace, daemon_env, tmp_path)
    folder = transcript_of(daemon_env, session).parent
    stray = "0d5c3c3e-0000-4000-8000-000000000000"
    (folder / f"{stray}.jsonl").mkdir()
    os.mkfifo(folder / "11111111-0000-4000-8000-000000000000.jsonl")
    async with running_daemon([workspace], daemon_env) as editor:
        listed = await editor.request("tether/listSessions", {}, timeout=10)
        assert [s["sessionId"] for s in listed["sessions"]] == [session]
        with pytest.raises(JsonRpcInvalidParams, match="unknown sessionId"):
            await editor.request("tether/loadSession", {"sessionId": stray})
        assert await editor.new_session()  # and new sessions go on being made


async def test_did_change_that_cannot_be_applied_drops_the_copy_never_duplicates(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    app = workspace / "src" / "app.py"
    disk = app.read_text()
    model = script(
        tmp_path / "s.json",
        [[tool("Read", file_path=str(app))], say("read")] * 3,
    )
    client = await RawClient.spawn(daemon_env)
    try:
        init = client.request(
            "initialize",
            {**INIT, "rootUri": workspace.as_uri(), "initializationOptions": {"model": model}},
        )
        await client.response(init)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = app.as_uri()

        def notify(method: str, params: Any) -> None:
            client.send({"jsonrpc": "2.0", "method": method, "params": params})

        def change(version: int, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
            rng = {
                "start": {"line": start[0], "character": start[1]},
                "end": {"line": end[0], "character": end[1]},
            }
            notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": rng, "text": text}],
                },
            )

        async def read_by_agent() -> str:
            new = client.request("tether/newSession", {})
            session = (await client.response(new))["result"]["sessionId"]
            turn = client.request(
                "tether/prompt",
                {"sessionId": session, "prompt": [{"type": "text", "text": "read"}]},
            )
            shown = ""
            while True:
                message = await client.read(20)
                if message.get("id") == turn and "method" not in message:
                    return shown
                if message.get("method") == "tether/sessionUpdate":
                    update = message["params"]["update"]
                    if update["kind"] == "tool_call_update" and update.get("content"):
                        shown = update["content"][0]["text"]

        def numbered(text: str) -> str:
            return "\n".join(f"{i}\t{line}" for i, line in enumerate(text.splitlines(), 1))

        open_doc = {"uri": uri, "languageId": "python", "version": 1, "text": "unsaved\n" + disk}
        notify("textDocument/didOpen", {"textDocument": open_doc})
        change(2, (0, 7), (0, 0), "X")  # a reversed range
        assert await read_by_agent() == numbered(disk)  # the disk, not a doubled buffer

        notify("textDocument/didOpen", {"textDocument": open_doc})
        change(3, (0, 0), (0, 0), "A")
        change(2, (0, 0), (0, 0), "B")  # a version going backwards
        assert await read_by_agent() == numbered(disk)

        change(9, (0, 0), (0, 0), "C")  # for a document no longer open: ignored
        notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": (workspace / "nope.py").as_uri(), "version": 1},
                "contentChanges": [{"text": "x"}],
            },
        )
        notify("textDocument/didOpen", {"textDocument": {**open_doc, "version": 10}})
        change(11, (0, 0), (0, 0), "ok ")
        assert await read_by_agent() == numbered("ok unsaved\n" + disk)
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()


async def test_malformed_requests_get_typed_errors_without_tracebacks(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the data directory should be")
    env = {**daemon_env, "TETHER_DATA_DIR": str(blocker / "data")}
    afile = workspace / "README.md"
    client = await RawClient.spawn(env)
    try:
        folders = [
            {"uri": workspace.as_uri(), "name": "ws"},
            {"uri": afile.as_uri(), "name": "a file"},
        ]
        init = client.request(
            "initialize", {**INIT, "rootUri": workspace.as_uri(), "workspaceFolders": folders}
        )
        await client.response(init)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        for bad in (
            {"jsonrpc": "2.0", "id": 5, "method": 12, "params": {}},
            {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tether/listSessions", "params": {}},
            {"jsonrpc": "2.0", "id": [1], "method": "tether/listSessions", "params": {}},
            {"jsonrpc": "2.0", "id": True, "method": "tether/listSessions", "params": {}},
        ):
            client.send(bad)
            answer = await client.response(5 if bad["id"] == 5 else None)
            assert answer["error"]["code"] == -32600, answer
            assert "data" not in answer["error"]
        # A session file that cannot be written: what to fix, no traceback.
        new = client.request("tether/newSession", {})
        error = (await client.response(new))["error"]
        assert error["code"] == -32603 and "TETHER_DATA_DIR" in error["message"]
        assert "traceback" not in json.dumps(error).lower()
        # A workspace folder that is a file says so.
        new = client.request("tether/newSession", {"workspaceFolder": afile.as_uri()})
        error = (await client.response(new))["error"]
        assert error["code"] == -32602 and "is a regular file, not a directory" in error["message"]
        down = client.request("shutdown", None)
        assert (await client.response(down))["result"] is None
        late = client.request("tether/listSessions", {})
        answer = await client.response(late)
        assert answer["error"]["code"] == -32600 and "after shutdown" in answer["error"]["message"]
        client.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert await asyncio.wait_for(client.proc.wait(), 5) == 0
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()


def test_stream_json_survives_deep_lines_and_reports_a_huge_prompt(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    import subprocess

    model = script(tmp_path / "s.json", [say("small one")])
    deep = "[" * 5000 + "]" * 5000
    huge = "x" * 20_000_000
    lines = [
        deep,
        json.dumps(
            {
                "type": "user",
                "message": {"role": "user", "content": json.loads("[" * 150 + "]" * 150)},
            }
        ),
        json.dumps({"type": "user", "message": {"role": "user", "content": "hello"}}),
        json.dumps({"type": "user", "message": {"role": "user", "content": huge}}),
    ]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tether",
            "-p",
            "--model",
            model,
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=workspace,
        env={**os.environ, **daemon_env, "TETHER_NO_DAEMON": "1"},
        timeout=120,
    )
    err = run.stderr
    assert "input line ignored: JSON nested more than 200 levels deep" in err
    # A user message Tether cannot take is an error result that names it, never dropped
    # (as Claude Code answers it); the conversation goes on.
    assert "bad user message" in err
    results = [json.loads(x) for x in run.stdout.splitlines() if '"type": "result"' in x]
    assert [r["is_error"] for r in results] == [True, False, True]
    assert results[1]["result"] == "small one"
    # The 20 MB prompt fails (the script has no turn left for it) and says so on stderr.
    assert "[tether] error: the turn failed:" in err
