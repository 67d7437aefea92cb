"""Sessions: rewind, concurrency, several workspace folders, listing and loading."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .conftest import FIXTURES, running_daemon

ACCEPT = {"model": "anthropic:claude-sonnet-4-6", "permissionMode": "acceptEdits"}


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


async def test_rewind_restores_two_files_and_the_conversation(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app, notes, readme = (
        workspace / "src" / "app.py",
        workspace / "notes.md",
        workspace / "README.md",
    )
    app_before, readme_before = app.read_text(), readme.read_text()
    api = fake_api(
        [
            [tool("Read", file_path="src/app.py")],
            [
                tool("Edit", file_path="src/app.py", old_string="Hello", new_string="Howdy"),
                tool("Write", file_path="notes.md", content="temporary notes\n"),
            ],
            say("two edits"),
            [tool("Read", file_path="README.md")],
            [tool("Edit", file_path="README.md", old_string="# basic", new_string="# changed")],
            say("third edit"),
            {"expect": {"contains": "fresh start"}, "blocks": say("hello again")},
        ]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        editor.open(app)
        session = await editor.new_session()
        first = await editor.prompt(session, "edit two files")
        await editor.prompt(session, "edit the readme")
        assert "Howdy" in app.read_text() and notes.exists() and "# changed" in readme.read_text()
        result = await editor.request(
            "tether/rewind", {"sessionId": session, "turnId": first["turnId"]}
        )
        assert sorted(result["restored"]) == sorted([app.as_uri(), notes.as_uri(), readme.as_uri()])
        assert app.read_text() == app_before and editor.text(app) == app_before
        assert readme.read_text() == readme_before
        assert not notes.exists()
        await editor.prompt(session, "fresh start")
        last = api.requests[-1]["messages"]
        assert len(last) == 1, last  # the rewound turns are gone from the conversation
    api.assert_complete()


async def test_two_sessions_run_concurrently_in_one_workspace(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    blocks = [{"type": "text", "text": f"thought {i} out loud. "} for i in range(8)]
    slow = {"chunk_delay_ms": 25, "blocks": blocks}
    api = fake_api([slow, slow])
    async with running_daemon([workspace], daemon_env, api) as editor:
        one, two = await editor.new_session(), await editor.new_session()
        results = await asyncio.gather(editor.prompt(one, "a"), editor.prompt(two, "b"))
        assert [r["stopReason"] for r in results] == ["end_turn", "end_turn"]
        order = [
            u["sessionId"] for u in editor.updates if u["update"]["kind"] == "agent_message_chunk"
        ]
        switches = sum(1 for a, b in zip(order, order[1:], strict=False) if a != b)
        assert switches >= 2, "the two turns did not overlap"


async def test_prompt_during_a_turn_is_queued_not_interleaved(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            [tool("Bash", command="sleep 0.5; echo slept")],
            {"expect": {"contains": "and also this"}, "blocks": say("both handled")},
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={
            "model": "anthropic:claude-sonnet-4-6",
            "permissionMode": "bypassPermissions",
        },
    ) as editor:
        session = await editor.new_session()
        first = asyncio.create_task(editor.prompt(session, "sleep"))
        await editor.wait_for_update(
            lambda u: (
                u["update"]["kind"] == "tool_call_update"
                and u["update"].get("status") == "in_progress"
            )
        )
        second = await editor.prompt(session, "and also this")
        assert (await first)["turnId"] == second["turnId"]
        assert second["stopReason"] == "end_turn"
    api.assert_complete()


async def test_two_workspace_folders(
    tmp_path: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    one, two, three = tmp_path / "one", tmp_path / "two", tmp_path / "three"
    for root in (one, two, three):
        shutil.copytree(FIXTURES / "basic", root)
    write = tool("Write", file_path="made-here.txt", content="x\n")
    api = fake_api([[write], say("ok"), [write], say("ok")])
    async with running_daemon([one, two], daemon_env, api, init_options=ACCEPT) as editor:
        s1 = await editor.new_session(workspaceFolder=one.as_uri())
        s2 = await editor.new_session(workspaceFolder=two.as_uri())
        await editor.prompt(s1, "write")
        assert (one / "made-here.txt").exists() and not (two / "made-here.txt").exists()
        await editor.prompt(s2, "write")
        assert (two / "made-here.txt").exists()
        listed = await editor.request("tether/listSessions", {"workspaceFolder": two.as_uri()})
        assert [s["sessionId"] for s in listed["sessions"]] == [s2]
        every = await editor.request("tether/listSessions", {})
        assert {s["sessionId"] for s in every["sessions"]} == {s1, s2}
        with pytest.raises(JsonRpcInvalidParams):
            await editor.new_session(workspaceFolder=three.as_uri())
        editor.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=three.as_uri(), name="three")],
                    removed=[types.WorkspaceFolder(uri=one.as_uri(), name="one")],
                )
            )
        )
        s3 = await editor.new_session(workspaceFolder=three.as_uri())
        assert s3
        with pytest.raises(JsonRpcInvalidParams):
            await editor.new_session(workspaceFolder=one.as_uri())


async def test_sessions_are_listed_and_loaded_after_a_restart(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api(
        [
            [{"type": "text", "text": "Reading."}, tool("Read", file_path="README.md")],
            say("It is a fixture."),
            say("Still here."),
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session(title="readme question")
        await editor.prompt(session, "What is README.md?")
    async with running_daemon([workspace], daemon_env, api) as editor:
        listed = await editor.request("tether/listSessions", {})
        (info,) = listed["sessions"]
        assert info["sessionId"] == session and info["title"] == "readme question"
        assert info["turns"] == 1 and info["workspaceFolder"] == workspace.as_uri()
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        kinds = [u["kind"] for u in loaded["history"]]
        assert kinds[0] == "user_message"
        assert "tool_call" in kinds and "tool_call_update" in kinds and kinds[-1] == "turn_end"
        text = "".join(
            u.get("text", "") for u in loaded["history"] if u["kind"] == "agent_message_chunk"
        )
        assert text == "Reading.It is a fixture."
        result = await editor.prompt(session, "still there?")
        assert result["stopReason"] == "end_turn"
        sent = api.requests[-1]["messages"]
        assert len(sent) == 5  # prompt, tool use, result, answer, new prompt
        assert "A fixture workspace" in str(sent[2])
        with pytest.raises(JsonRpcInvalidParams):
            await editor.request("tether/loadSession", {"sessionId": "nope"})
    api.assert_complete()


async def test_rewind_and_rich_history_after_a_restart(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    before = app.read_text()
    api = fake_api(
        [
            [tool("Read", file_path="src/app.py")],
            [tool("Edit", file_path="src/app.py", old_string="Hello", new_string="Ahoy")],
            say("edited"),
        ]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        session = await editor.new_session()
        first = await editor.prompt(session, "edit it")
    assert "Ahoy" in app.read_text()
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        history = loaded["history"]
        diffs = [
            c
            for u in history
            if u["kind"] == "tool_call_update"
            for c in u.get("content") or []
            if c["type"] == "diff"
        ]
        assert diffs and diffs[0]["newText"].count("Ahoy") == 1
        usage = [u for u in history if u["kind"] == "usage"]
        assert usage and usage[-1]["contextWindow"] > 0
        result = await editor.request(
            "tether/rewind", {"sessionId": session, "turnId": first["turnId"]}
        )
        assert result["restored"] == [app.as_uri()]
    assert app.read_text() == before


async def test_session_totals_follow_rewind_and_restart(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([say("one"), say("two")])
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "first question")
        second = await editor.prompt(session, "second question")
        listed = await editor.request("tether/listSessions", {})
        assert listed["sessions"][0]["turns"] == 2
        await editor.request("tether/rewind", {"sessionId": session, "turnId": second["turnId"]})
        listed = await editor.request("tether/listSessions", {})
        assert listed["sessions"][0]["turns"] == 1
    async with running_daemon([workspace], daemon_env) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        assert loaded["title"] == "first question"
        assert loaded["turns"] == 1
        # Both model calls cost tokens, rewound or not: the totals survive the restart.
        assert loaded["usage"]["outputTokens"] > 0 and loaded["usage"]["inputTokens"] > 0
        kinds = [u["kind"] for u in loaded["history"]]
        assert kinds.count("user_message") == 1


async def test_rewind_after_a_compaction_drops_the_summary_of_the_undone_turn(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """Turns 1 and 2, a compaction summarising both, then a rewind of turn 2: the file
    goes back and the conversation is turn 1 as it was, not the summary that includes
    turn 2 (checkpoint positions from before the compaction must not matter)."""
    app = workspace / "src" / "app.py"
    api = fake_api(
        [
            say("First answer: FIRST-TURN-MARK"),
            [tool("Read", file_path="src/app.py")],
            [tool("Edit", file_path="src/app.py", old_string="Hello", new_string="Howdy")],
            say("edited"),
            say("<summary>SUMMARY-MARK: greeted, then Hello became Howdy.</summary>"),
            {"expect": {"contains": "after the rewind"}, "blocks": say("back at turn one")},
        ]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "say hi")
        second = await editor.prompt(session, "rename the greeting")
        assert "Howdy" in app.read_text()
        compacted = await editor.request("tether/compact", {"sessionId": session})
        assert compacted["tokensAfter"] < compacted["tokensBefore"]
        result = await editor.request(
            "tether/rewind", {"sessionId": session, "turnId": second["turnId"]}
        )
        assert result["restored"] == [app.as_uri()]
        assert "Howdy" not in app.read_text()
        await editor.prompt(session, "after the rewind")
    sent = str(api.requests[-1]["messages"])
    assert "FIRST-TURN-MARK" in sent  # turn 1 is back, verbatim
    assert "SUMMARY-MARK" not in sent and "rename the greeting" not in sent
    api.assert_complete()


async def test_prompt_after_the_last_boundary_gets_a_turn_of_its_own(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any, tmp_path: Path
) -> None:
    entered, release = tmp_path / "stop-entered", tmp_path / "stop-release"
    # A Stop hook holds the first turn after its last boundary until the test releases it.
    hold = (
        f"[ -e {release} ] && exit 0; touch {entered}; "
        f"for i in $(seq 500); do [ -e {release} ] && exit 0; sleep 0.02; done"
    )
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": hold}]}]}}
    user_settings = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "settings.json"
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(json.dumps(settings))  # the user's own: no trust question
    api = fake_api(
        [
            say("first done"),
            {"expect": {"contains": "came late"}, "blocks": say("late one answered")},
        ]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        session = await editor.new_session()
        first = asyncio.create_task(editor.prompt(session, "first"))
        await wait_for_file(entered)
        late = asyncio.create_task(editor.prompt(session, "this came late"))
        # A round trip after it: the daemon has read the late prompt and queued it.
        await editor.request("tether/listSessions", {})
        release.touch()
        first_result, late_result = await asyncio.wait_for(asyncio.gather(first, late), 30)
        assert late_result["turnId"] != first_result["turnId"]
        assert late_result["stopReason"] == "end_turn"
        messages = editor.updates_of(session, "user_message")
        assert "this came late" in json.dumps(messages[-1])
    api.assert_complete()


async def wait_for_file(path: Path, timeout: float = 10) -> None:
    async def exists() -> None:
        while not path.exists():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(exists(), timeout)


async def test_history_shows_new_files_as_diffs_and_failed_turns_with_their_error(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    refuse = "grep -q forbidden && { echo 'that word is not allowed here' >&2; exit 2; }; exit 0"
    settings = {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": refuse}]}]}
    }
    user_settings = Path(daemon_env["XDG_CONFIG_HOME"]) / "tether" / "settings.json"
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(json.dumps(settings))
    created = workspace / "docs" / "new.md"
    api = fake_api([[tool("Write", file_path="docs/new.md", content="# New\n")], say("written")])
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "create it")
        failed = await editor.prompt(session, "a forbidden request")
        assert failed["stopReason"] == "error"
        live_end = editor.updates_of(session, "turn_end")[-1]
    assert created.read_text() == "# New\n"
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        history = loaded["history"]
        diffs = [
            c
            for u in history
            if u["kind"] == "tool_call_update"
            for c in u.get("content") or []
            if c["type"] == "diff"
        ]
        assert diffs == [{"type": "diff", "uri": created.as_uri(), "newText": "# New\n"}]
        ends = [u for u in history if u["kind"] == "turn_end"]
        assert ends[-1]["error"] == live_end["error"] == failed["error"]
        assert "not allowed" in ends[-1]["error"]["message"]
    api.assert_complete()


async def test_what_loading_repaired_reaches_the_client_as_notices(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([say("answered")])
    async with running_daemon([workspace], daemon_env, api) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "hello")
    (transcript,) = Path(daemon_env["TETHER_DATA_DIR"]).rglob(f"{session}.jsonl")
    with transcript.open("a") as f:
        f.write('{"type": "user", "uuid": "cut-sh')  # a write cut short by a crash
    async with running_daemon([workspace], daemon_env, api) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        notices = [u for u in loaded["history"] if u["kind"] == "notice"]
        assert len(notices) == 1 and notices[0]["turnId"] == ""
        assert notices[0]["level"] == "warning" and "torn last line" in notices[0]["message"]
        assert [u["kind"] for u in loaded["history"]][:1] == ["user_message"]
    api.assert_complete()


async def test_rewind_undoes_what_a_shell_command_changed_even_after_a_restart(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app, readme = workspace / "src" / "app.py", workspace / "README.md"
    logo = workspace / "logo.bin"
    logo.write_bytes(b"\x89PNG\0")
    app_before, readme_before = app.read_text(), readme.read_text()
    script = (
        "sed -i 's/Hello/Howdy/' src/app.py && rm README.md && echo made > made.txt "
        "&& printf 'more\\0' >> logo.bin"
    )
    api = fake_api([[tool("Bash", command=script)], say("done")])
    bypass = {"model": "anthropic:claude-sonnet-4-6", "permissionMode": "bypassPermissions"}
    async with running_daemon([workspace], daemon_env, api, init_options=bypass) as editor:
        session = await editor.new_session()
        turn = await editor.prompt(session, "change things with the shell")
    assert "Howdy" in app.read_text() and not readme.exists()
    async with running_daemon([workspace], daemon_env, api, init_options=bypass) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        assert loaded["rewindableTurns"] == [turn["turnId"]]
        result = await editor.request(
            "tether/rewind", {"sessionId": session, "turnId": turn["turnId"]}
        )
    assert sorted(result["restored"]) == sorted(
        [app.as_uri(), readme.as_uri(), (workspace / "made.txt").as_uri()]
    )
    (missing,) = result["notRestored"]
    assert missing["uri"] == logo.as_uri() and "binary" in missing["reason"]
    assert app.read_text() == app_before and readme.read_text() == readme_before
    assert not (workspace / "made.txt").exists()
    api.assert_complete()


async def test_resume_after_a_rewind_keeps_the_mode_the_session_is_in(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """A plan approved inside a turn switches the mode; rewinding that turn keeps the
    session in the mode it is in (the user's setting), and a resume finds that mode."""
    api = fake_api([[tool("ExitPlanMode", plan="1. Change the greeting")], say("planned")])
    options = {"model": "anthropic:claude-sonnet-4-6", "permissionMode": "plan"}
    async with running_daemon([workspace], daemon_env, api, init_options=options) as editor:
        editor.answers.append("plan_default")  # "Start (ask before edits)"
        session = await editor.new_session()
        turn = await editor.prompt(session, "plan it")
        assert [r["kind"] for r in editor.permission_requests] == ["plan"]
        assert turn["stopReason"] == "end_turn"
        await editor.request("tether/rewind", {"sessionId": session, "turnId": turn["turnId"]})
        listed = await editor.request("tether/loadSession", {"sessionId": session})
        assert listed["mode"] == "default"
    async with running_daemon([workspace], daemon_env) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        assert loaded["mode"] == "default"


async def test_a_turn_the_model_never_answered_is_not_counted(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """A prompt that failed before any answer (no credentials) is not a turn in the
    sessions list; the retry, answered, is the first."""
    api = fake_api([say("hello")])
    keyless = {k: v for k, v in daemon_env.items() if k != "ANTHROPIC_API_KEY"}
    async with running_daemon([workspace], keyless, api) as editor:
        session = await editor.new_session()
        failed = await editor.prompt(session, "hi")
        assert failed["stopReason"] == "error"
        assert "credentials" in failed["error"]["message"]
        listed = await editor.request("tether/listSessions", {})
        assert listed["sessions"][0]["turns"] == 0
    async with running_daemon([workspace], daemon_env, api) as editor:
        await editor.request("tether/loadSession", {"sessionId": session})
        answered = await editor.prompt(session, "hi again")
        assert answered["stopReason"] == "end_turn"
        listed = await editor.request("tether/listSessions", {})
        assert listed["sessions"][0]["turns"] == 1


async def test_loading_a_session_gives_the_rewound_turns_where_they_were(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """Three turns; the third rewound; a fourth; then the second rewound (taking the fourth
    and, with it, the third rewound earlier on that branch); a fifth. ``history`` is the live
    conversation; ``rewound`` has what the rewinds took off, in order, placed before the
    update it came before; the same in the daemon that rewound and after a restart."""
    api = fake_api([say(f"answer {n}") for n in range(1, 6)])
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        session = await editor.new_session()
        turns = [(await editor.prompt(session, f"prompt {n}"))["turnId"] for n in (1, 2, 3)]
        await editor.request("tether/rewind", {"sessionId": session, "turnId": turns[2]})
        turns.append((await editor.prompt(session, "prompt 4"))["turnId"])
        await editor.request("tether/rewind", {"sessionId": session, "turnId": turns[1]})
        turns.append((await editor.prompt(session, "prompt 5"))["turnId"])
        here = await editor.request("tether/loadSession", {"sessionId": session})
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
    api.assert_complete()

    def prompts(history: list[dict[str, Any]]) -> list[str]:
        return [u["content"][0]["text"] for u in history if u["kind"] == "user_message"]

    for result in (here, loaded):
        assert prompts(result["history"]) == ["prompt 1", "prompt 5"]
        (rewound,) = result["rewound"]
        assert rewound["turnId"] == turns[1] and rewound["restored"] == []
        assert prompts(rewound["history"]) == ["prompt 2", "prompt 3", "prompt 4"]
        assert [u["turnId"] for u in rewound["history"] if u["kind"] == "turn_end"] == [
            turns[1],
            turns[2],
            turns[3],
        ]
        texts = [u["text"] for u in rewound["history"] if u["kind"] == "agent_message_chunk"]
        assert texts == ["answer 2", "answer 3", "answer 4"]
        # They came right after the first turn's end, before the fifth prompt.
        before = result["history"][: rewound["at"]]
        after = result["history"][rewound["at"] :]
        assert before[-1] == {"turnId": turns[0], "kind": "turn_end", "stopReason": "end_turn"}
        assert after[0]["kind"] == "user_message" and after[0]["turnId"] == turns[4]
    assert loaded["rewound"] == here["rewound"]
    assert loaded["turns"] == 2


async def test_a_rewind_that_restored_files_says_which_after_loading(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    notes = workspace / "notes.md"
    api = fake_api([[tool("Write", file_path="notes.md", content="draft\n")], say("written")])
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        session = await editor.new_session()
        turn = await editor.prompt(session, "write notes")
        await editor.request("tether/rewind", {"sessionId": session, "turnId": turn["turnId"]})
    assert not notes.exists()
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT) as editor:
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
    assert loaded["history"] == []
    (rewound,) = loaded["rewound"]
    assert rewound["at"] == 0 and rewound["restored"] == [notes.as_uri()]
    kinds = [u["kind"] for u in rewound["history"]]
    assert kinds[0] == "user_message" and kinds[-1] == "turn_end" and "tool_call" in kinds
