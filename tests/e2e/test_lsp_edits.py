"""Edits land as versioned applyEdit on the editor's buffers; user text is never lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from .conftest import running_daemon


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


EDIT_GREETING = tool(
    "Edit",
    file_path="src/app.py",
    old_string='return "Hello, " + name',
    new_string='return "Hi, " + name',
)


@pytest.mark.parametrize("save_documents", [True, False])
async def test_edit_on_an_unsaved_buffer_keeps_the_users_text(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any, save_documents: bool
) -> None:
    app = workspace / "src" / "app.py"
    unsaved = "# typed by the user, not saved\n" + app.read_text()
    api = fake_api(
        [
            [tool("Read", file_path="src/app.py")],
            {"expect": {"contains": "typed by the user"}, "blocks": [EDIT_GREETING]},
            [say("done")],
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        save_documents=save_documents,
        init_options={"model": "anthropic:claude-sonnet-4-6", "permissionMode": "acceptEdits"},
    ) as editor:
        editor.open(app, unsaved)
        session = await editor.new_session()
        result = await editor.prompt(session, "Say Hi instead of Hello")
        assert result["stopReason"] == "end_turn"
        expected = unsaved.replace('"Hello, "', '"Hi, "')
        assert editor.text(app) == expected
        assert app.read_text() == expected  # buffer and disk agree
        (params,) = editor.applied_edits
        (change,) = params.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.version == 1  # the version the agent read
        (edit,) = change.edits
        assert edit.range.start.line == 2 and edit.range.end.line == 2  # minimal range
        assert params.label == "Edit src/app.py"
        assert bool(editor.saved) is save_documents


async def test_edit_of_a_file_not_open_goes_through_apply_edit(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api([[tool("Read", file_path="src/app.py")], [EDIT_GREETING], [say("ok")]])
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={"model": "anthropic:claude-sonnet-4-6", "permissionMode": "acceptEdits"},
    ) as editor:
        session = await editor.new_session()
        await editor.prompt(session, "go")
        (params,) = editor.applied_edits
        (change,) = params.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.version is None
        assert '"Hi, "' in app.read_text()


@pytest.mark.parametrize("stale_edits", ["refuse", "skip"])
async def test_user_typing_between_read_and_edit_is_rematched(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any, stale_edits: str
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api(
        [
            [tool("Read", file_path="src/app.py")],
            {"chunk_delay_ms": 150, "blocks": [EDIT_GREETING]},
            [say("ok")],
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        stale_edits=stale_edits,
        init_options={"model": "anthropic:claude-sonnet-4-6", "permissionMode": "acceptEdits"},
    ) as editor:
        editor.open(app)
        original = editor.text(app)
        typed = original.replace("def farewell", "def farewell_user")

        def on_update(params: dict[str, Any]) -> None:
            update = params["update"]
            if update["kind"] == "tool_call_update" and update.get("status") == "completed":
                if editor.text(app) == original:
                    editor.type(app, typed)  # the user types while the model thinks

        editor.on_update = on_update
        session = await editor.new_session()
        result = await editor.prompt(session, "go")
        assert result["stopReason"] == "end_turn"
        final = editor.text(app)
        assert "def farewell_user" in final  # the user's typing survives
        assert '"Hi, "' in final  # and the agent's edit landed
        assert app.read_text() == final


async def test_ambiguous_rematch_fails_cleanly(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api(
        [
            [tool("Read", file_path="src/app.py")],
            {"chunk_delay_ms": 150, "blocks": [EDIT_GREETING]},
            {
                "expect": {"contains": "changed since you read it"},
                "blocks": [say("I will re-read it.")],
            },
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={"model": "anthropic:claude-sonnet-4-6", "permissionMode": "acceptEdits"},
    ) as editor:
        editor.open(app)
        original = editor.text(app)
        typed = original + '\n\ndef again(name: str) -> str:\n    return "Hello, " + name\n'

        def on_update(params: dict[str, Any]) -> None:
            update = params["update"]
            if update["kind"] == "tool_call_update" and update.get("status") == "completed":
                if editor.text(app) == original:
                    editor.type(app, typed)

        editor.on_update = on_update
        session = await editor.new_session()
        await editor.prompt(session, "go")
        assert editor.text(app) == typed  # untouched: the user's text wins
        failed = [
            u for u in editor.updates_of(session, "tool_call_update") if u.get("status") == "failed"
        ]
        assert len(failed) == 1
    api.assert_complete()


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
async def test_position_encodings_with_emoji_and_cjk(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any, encoding: str
) -> None:
    intl = workspace / "src" / "intl.txt"
    api = fake_api(
        [
            [tool("Read", file_path="src/intl.txt")],
            [
                tool(
                    "Edit", file_path="src/intl.txt", old_string="pending ✅", new_string="done 🎉"
                ),
                tool(
                    "Edit",
                    file_path="src/intl.txt",
                    old_string="café 😀 done",
                    new_string="café ☕ 完成",
                ),
            ],
            [say("ok")],
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        encoding=encoding,
        init_options={"model": "anthropic:claude-sonnet-4-6", "permissionMode": "acceptEdits"},
    ) as editor:
        editor.open(intl, intl.read_text() + "extra: 🌍🌍 unsaved 中文\n")
        session = await editor.new_session()
        await editor.prompt(session, "go")
        expected = (
            "title: 你好，世界 🌍\nstatus: done 🎉\nnote: naïve café ☕ 完成\n"
            "extra: 🌍🌍 unsaved 中文\n"
        )
        assert editor.text(intl) == expected
        assert intl.read_text() == expected
        first = editor.applied_edits[0].edit.document_changes[0]
        assert isinstance(first, types.TextDocumentEdit)
        (edit,) = first.edits
        assert edit.range.start.line == 1
        # "status: " is 8 units in both encodings; the edit starts at "pending".
        assert edit.range.start.character == 8
        second = editor.applied_edits[1].edit.document_changes[0]
        assert isinstance(second, types.TextDocumentEdit)
        (edit2,) = second.edits
        # "note: naïve café " — ï and é are 2 bytes in utf-8, 1 unit in utf-16.
        assert edit2.range.start.character == (19 if encoding == "utf-8" else 17)


async def test_buffer_with_a_form_feed_keeps_its_lines(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """LSP line ends only: a typed change after a form feed lands on the client's line, and
    the agent reads the buffer exactly as the user sees it."""
    notes = workspace / "notes.py"
    notes.write_text("x = 1\x0c\ny = 2\n")
    api = fake_api(
        [
            [tool("Read", file_path="notes.py")],
            {"expect": {"contains": "Z = 2"}, "blocks": [say("ok")]},
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.open(notes)
        editor.replace(notes, (1, 0), (1, 1), "Z")
        assert editor.text(notes) == "x = 1\x0c\nZ = 2\n"
        session = await editor.new_session()
        result = await editor.prompt(session, "Read notes.py")
        assert result["stopReason"] == "end_turn"
    api.assert_complete()
    sent = json.dumps(api.requests[1]["messages"][-1])
    assert "Z = 2" in sent and "Zy = 2" not in sent


def big_file_text() -> str:
    return "".join(f"line {i:05d} = compute({i}, 'payload')\n" for i in range(20_000))


def splice(whole: str, line: int, old: str, new: str) -> str:
    """``whole`` with the region ``old`` that starts at zero-based ``line`` replaced by ``new``."""
    lines = whole.splitlines(keepends=True)
    count = len(old.splitlines(keepends=True))
    assert "".join(lines[line : line + count]) == old, "the region is not where it says"
    return "".join(lines[:line]) + new + "".join(lines[line + count :])


async def test_a_one_line_edit_of_a_big_file_sends_the_region_not_the_file(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """The editor gets the changed lines with their context and where they start, in the
    permission question, the tool call's update and the loaded history; the buffer still
    ends right, and undoing the turn still restores the file."""
    big = workspace / "big.py"
    before = big_file_text()
    big.write_text(before)
    after = before.replace("compute(12345,", "compute_fast(12345,")
    api = fake_api(
        [
            [tool("Read", file_path="big.py", limit=5)],
            [
                tool(
                    "Edit",
                    file_path="big.py",
                    old_string="compute(12345,",
                    new_string="compute_fast(12345,",
                )
            ],
            [say("faster")],
        ]
    )
    async with running_daemon([workspace], daemon_env, api) as editor:
        editor.open(big)
        session = await editor.new_session()
        result = await editor.prompt(session, "make line 12345 fast")
        assert editor.text(big) == after and big.read_text() == after
        (question,) = editor.permission_requests
        (asked,) = question["toolCall"]["content"]
        (update,) = [
            u
            for u in editor.updates_of(session, "tool_call_update")
            if any(c["type"] == "diff" for c in u.get("content") or [])
        ]
        (shown,) = update["content"]
        for diff, message in ((asked, question), (shown, update)):
            assert len(json.dumps(message)) < 2_000  # the file is 760 KB
            assert diff["line"] == 12345 - 3  # three lines of context before the change
            assert len(diff["oldText"].splitlines()) == 7
            assert splice(before, diff["line"], diff["oldText"], diff["newText"]) == after
        loaded = await editor.request("tether/loadSession", {"sessionId": session})
        kept = [
            c
            for u in loaded["history"]
            if u["kind"] == "tool_call_update"
            for c in u.get("content") or []
            if c["type"] == "diff"
        ]
        assert kept == [shown]  # small enough now to be kept in the transcript
        rewound = await editor.request(
            "tether/rewind", {"sessionId": session, "turnId": result["turnId"]}
        )
        assert rewound["restored"] == [big.as_uri()]
        assert big.read_text() == before and editor.text(big) == before
    api.assert_complete()
