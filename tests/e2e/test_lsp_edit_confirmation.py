"""Edits under clients that report them late, never, falsely or with jumping versions.

Each test drives the real daemon with the scripted editor set up to behave like a client
seen in the field; the fake Messages API checks what the model is told (``expect``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types

from tether.lsp.testing.editor_client import FakeEditor

from .conftest import MODEL, running_daemon

ACCEPT_EDITS = {"model": MODEL, "permissionMode": "acceptEdits"}
UNKNOWN = "may or may not have been applied"
UPDATED = "has been updated"


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def told(text: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    """A model turn that only plays if the last message (the tool results) contains ``text``."""
    return {"expect": {"contains": text}, "blocks": list(blocks)}


READ = tool("Read", file_path="src/app.py")
EDIT_GREETING = tool(
    "Edit",
    file_path="src/app.py",
    old_string='return "Hello, " + name',
    new_string='return "Hi, " + name',
)
EDIT_FAREWELL = tool(
    "Edit",
    file_path="src/app.py",
    old_string='return "Bye, " + name',
    new_string='return "Ciao, " + name',
)


def versions_sent(editor: FakeEditor) -> list[int | None]:
    out: list[int | None] = []
    for params in editor.applied_edits:
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            out.append(change.text_document.version)
    return out


async def until(predicate: Callable[[], bool], timeout: float) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), timeout)


async def test_a_didchange_three_seconds_late_confirms_the_edit(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api([[READ], [EDIT_GREETING], told(UPDATED, say("done"))])
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options=ACCEPT_EDITS,
        edit_reports="delayed",
        report_delay_s=3.0,
    ) as editor:
        editor.open(app)
        session = await editor.new_session()
        result = await editor.prompt(session, "Say Hi")
        assert result["stopReason"] == "end_turn"
        assert versions_sent(editor) == [1]  # sent once, never re-sent
        assert editor.text(app).count('"Hi, "') == 1
        assert app.read_text() == editor.text(app)
    api.assert_complete()


async def test_a_didchange_twelve_seconds_late_is_an_unknown_outcome_and_never_resent(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api(
        [
            [READ],
            [EDIT_GREETING],
            told(UNKNOWN, say("I will read it again before going on.")),
            # The next turn, after the late report: the file reads as the client has it.
            [READ],
            told("Hi, ", EDIT_FAREWELL),
            told(UPDATED, say("done")),
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options=ACCEPT_EDITS,
        edit_reports="delayed",
        report_delay_s=12.0,
    ) as editor:
        editor.open(app)
        session = await editor.new_session()
        result = await editor.prompt(session, "Say Hi")
        assert result["stopReason"] == "end_turn"
        assert versions_sent(editor) == [1]
        await until(lambda: len(editor.sent_changes) == 1, 15)
        reported = editor.sent_changes[0].text_document.version
        result = await editor.prompt(session, "Now say Ciao")
        assert result["stopReason"] == "end_turn"
        # The second edit is versioned against what the client reported, late as it was.
        assert versions_sent(editor) == [1, reported]
        assert editor.text(app).count('"Hi, "') == 1 and '"Ciao, "' in editor.text(app)
    api.assert_complete()


async def test_no_didchange_at_all_means_unknown_and_a_reread_before_the_next_edit(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api(
        [
            [READ],
            [EDIT_GREETING],
            told(UNKNOWN, EDIT_FAREWELL),  # the model edits again without reading
            told("could not be confirmed", READ),
            told("Hi, ", EDIT_FAREWELL),
            told(UNKNOWN, say("done; both changes may need checking")),
        ]
    )
    async with running_daemon(
        [workspace], daemon_env, api, init_options=ACCEPT_EDITS, edit_reports="never"
    ) as editor:
        editor.open(app)
        session = await editor.new_session()
        result = await editor.prompt(session, "Say Hi, then Ciao")
        assert result["stopReason"] == "end_turn"
        # The client moved past version 1 with the first edit: the second is not sent
        # against it (it goes unversioned, computed on the text the first one produced).
        assert versions_sent(editor) == [1, None]
        text = editor.text(app)
        assert text.count('"Hi, "') == 1 and text.count('"Ciao, "') == 1
        assert app.read_text() == text
    api.assert_complete()


async def test_a_client_that_reports_only_after_its_own_request_returns(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """The field report: the editor holds its didChange until its pending request (here the
    prompt itself) is answered."""
    app = workspace / "src" / "app.py"
    api = fake_api([[READ], [EDIT_GREETING], told(UNKNOWN, say("please check the file"))])
    async with running_daemon(
        [workspace], daemon_env, api, init_options=ACCEPT_EDITS, edit_reports="after_requests"
    ) as editor:
        editor.open(app)
        session = await editor.new_session()
        result = await editor.prompt(session, "Say Hi")
        assert result["stopReason"] == "end_turn"
        assert versions_sent(editor) == [1]
        assert len(editor.sent_changes) == 1  # released once the prompt returned
        assert editor.text(app).count('"Hi, "') == 1
        failed = [
            u for u in editor.updates_of(session, "tool_call_update") if u.get("status") == "failed"
        ]
        assert failed == []  # not reported as a failure: the outcome is unknown
    api.assert_complete()


async def test_applied_true_for_a_skipped_edit_is_rematched_on_the_new_version(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """Neovim: the user typed just before the edit arrived (the didChange still in its
    debounce), so it skips the edit and answers ``applied: true``."""
    app = workspace / "src" / "app.py"
    api = fake_api([[READ], [EDIT_GREETING], told(UPDATED, say("done"))])
    async with running_daemon(
        [workspace], daemon_env, api, init_options=ACCEPT_EDITS, stale_edits="skip"
    ) as editor:
        editor.open(app)
        typed = app.read_text().replace("def farewell", "def farewell_user")

        def user_types(_params: types.ApplyWorkspaceEditParams) -> None:
            if editor.text(app) != typed and len(editor.applied_edits) == 1:
                editor.type(app, typed, report_after=0.3)

        editor.before_apply = user_types
        session = await editor.new_session()
        result = await editor.prompt(session, "Say Hi")
        assert result["stopReason"] == "end_turn"
        assert versions_sent(editor) == [1, 2]  # re-sent only against the newer version
        final = editor.text(app)
        assert "def farewell_user" in final and final.count('"Hi, "') == 1
        assert app.read_text() == final
    api.assert_complete()


async def test_a_refused_edit_waits_for_the_version_the_client_has(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """Versions that jump (Neovim's changedtick) and a refusal naming them ("require
    version 1, you have 3"): the re-match uses the version the client then reports."""
    app = workspace / "src" / "app.py"
    api = fake_api([[READ], [EDIT_GREETING], told(UPDATED, say("done"))])
    async with running_daemon(
        [workspace], daemon_env, api, init_options=ACCEPT_EDITS, version_step=2
    ) as editor:
        editor.open(app)
        typed = app.read_text() + "\n# a note typed meanwhile\n"

        def user_types(_params: types.ApplyWorkspaceEditParams) -> None:
            if len(editor.applied_edits) == 1:
                editor.type(app, typed, report_after=0.3)

        editor.before_apply = user_types
        session = await editor.new_session()
        result = await editor.prompt(session, "Say Hi")
        assert result["stopReason"] == "end_turn"
        assert versions_sent(editor) == [1, 3]
        final = editor.text(app)
        assert "# a note typed meanwhile" in final and final.count('"Hi, "') == 1
    api.assert_complete()


async def test_an_edit_the_user_declines_is_not_asked_again(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """eglot asks before applying a server edit; a "no" is ``applied: false`` with nothing
    changed, and the same edit must not be sent (and asked about) again."""
    app = workspace / "src" / "app.py"
    api = fake_api([[READ], [EDIT_GREETING], told("Nothing was written", say("ok, leaving it"))])
    async with running_daemon(
        [workspace], daemon_env, api, init_options=ACCEPT_EDITS, decline_edits=True
    ) as editor:
        editor.open(app)
        original = editor.text(app)
        session = await editor.new_session()
        result = await editor.prompt(session, "Say Hi")
        assert result["stopReason"] == "end_turn"
        assert len(editor.applied_edits) == 1 and editor.text(app) == original
        assert app.read_text() == original
    api.assert_complete()
