"""Tether through standard LSP only: a client that declares nothing of Tether's gets code
actions and ``workspace/executeCommand`` commands, and follows the turn through
``$/progress``, edits, ``window/showMessageRequest``, ``window/showDocument`` and
``window/showMessage``. The real daemon over stdio; the fake Messages API plays the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tether.lsp.testing.editor_client import FakeEditor

from .conftest import MODEL, running_daemon

PLAIN: dict[str, Any] = {"plugin": False, "save_documents": False, "permission_request": False}
COMMANDS = {
    "tether.prompt",
    "tether.cancel",
    "tether.undoLastTurn",
    "tether.newSession",
    "tether.setMode",
    "tether.fix",
    "tether.explain",
    "tether.refactor",
    "tether.writeTests",
    "tether.instruction",
    "tether.keepChanges",
    "tether.undoChanges",
}
UNDEFINED = {
    "range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 16}},
    "severity": 1,
    "source": "pyflakes",
    "message": "undefined name 'Hello'",
}


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def told(text: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"expect": {"contains": text}, "blocks": list(blocks)}


READ = tool("Read", file_path="src/app.py")
EDIT_GREETING = tool(
    "Edit",
    file_path="src/app.py",
    old_string='return "Hello, " + name',
    new_string='return "Hi, " + name',
)


def kind_of(action: Any) -> str:
    return str(action["kind"]) if isinstance(action, dict) else str(action.kind)


def title_of(action: Any) -> str:
    return str(action["title"]) if isinstance(action, dict) else str(action.title)


def command_of(action: Any) -> dict[str, Any]:
    raw = action["command"] if isinstance(action, dict) else action.command
    if not isinstance(raw, dict):
        raw = {"command": raw.command, "arguments": list(raw.arguments or [])}
    return raw


def run_action(editor: FakeEditor, action: Any) -> Any:
    """What a client does with a chosen action: run its command."""
    command = command_of(action)
    return editor.execute_command(command["command"], *command["arguments"])


def ended(message: types.ShowMessageParams) -> bool:
    return message.message.startswith("Tether: ") and (
        "changed" in message.message or message.type == types.MessageType.Error
    )


async def until(
    predicate: Callable[[], bool], timeout: float = 20, what: Callable[[], str] = str
) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(poll(), timeout)
    except TimeoutError:
        raise AssertionError(f"not so after {timeout} s: {what()}")


def progress_of(editor: FakeEditor) -> list[dict[str, Any]]:
    return [p.value if hasattr(p, "value") else p["value"] for p in editor.progress]


async def test_capabilities_are_advertised_to_plain_clients_only(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    async with running_daemon([workspace], daemon_env, **PLAIN) as editor:
        result = editor.initialize_result
        caps = result.capabilities
        assert caps.code_action_provider is not None
        kinds = {str(k) for k in caps.code_action_provider.code_action_kinds or []}
        assert kinds == {
            "quickfix",
            "source.tether.review",
            "source.tether.explain",
            "source.tether.refactor",
            "source.tether.tests",
            "source.tether.instruction",
        }
        assert caps.execute_command_provider is not None
        assert set(caps.execute_command_provider.commands) == COMMANDS
    async with running_daemon([workspace], daemon_env) as plugin:
        caps = plugin.initialize_result.capabilities
        # The shipped clients own these command names (VS Code would clash registering them).
        assert caps.code_action_provider is None and caps.execute_command_provider is None


async def test_code_action_kinds(workspace: Path, daemon_env: dict[str, str]) -> None:
    app = workspace / "src" / "app.py"
    text = app.read_text().replace(
        "def farewell", "# tether: make farewell polite\ndef farewell", 1
    )
    async with running_daemon([workspace], daemon_env, **PLAIN) as editor:
        editor.open(app, text)
        on_diag = await editor.code_actions(app, (1, 11), diagnostics=[UNDEFINED])
        assert [title_of(a) for a in on_diag] == ["Tether: fix this"]
        (fix,) = on_diag
        assert kind_of(fix) == "quickfix"
        assert fix.diagnostics[0].message == UNDEFINED["message"]
        assert command_of(fix)["command"] == "tether.fix"

        selected = await editor.code_actions(app, (0, 0), (2, 0))
        assert {title_of(a): kind_of(a) for a in selected} == {
            "Tether: explain": "source.tether.explain",
            "Tether: refactor…": "source.tether.refactor",
            "Tether: write tests": "source.tether.tests",
        }
        assert await editor.code_actions(app, (0, 4)) == []  # a bare cursor: nothing to do

        comment_line = text.splitlines().index("# tether: make farewell polite")
        (do_this,) = await editor.code_actions(app, (comment_line, 3))
        assert title_of(do_this) == "Tether: do this"
        assert kind_of(do_this) == "source.tether.instruction"
        assert command_of(do_this)["arguments"] == [{"uri": app.as_uri(), "line": comment_line}]

        only = await editor.code_actions(
            app, (0, 0), (2, 0), diagnostics=[UNDEFINED], only=["quickfix"]
        )
        assert [title_of(a) for a in only] == ["Tether: fix this"]
        sources = await editor.code_actions(
            app, (0, 0), (2, 0), diagnostics=[UNDEFINED], only=["source"]
        )
        assert len(sources) == 3 and all(kind_of(a).startswith("source.tether.") for a in sources)


async def test_clients_without_code_action_literals_get_commands(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    app = workspace / "src" / "app.py"
    async with running_daemon(
        [workspace], daemon_env, code_action_literals=False, **PLAIN
    ) as editor:
        editor.open(app)
        (command,) = await editor.code_actions(app, (1, 11), diagnostics=[UNDEFINED])
        assert command.title == "Tether: fix this" and command.command == "tether.fix"
        assert not hasattr(command, "kind")


async def test_fix_this_runs_a_turn_a_plain_client_can_follow(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    unsaved = "# unsaved note\n" + app.read_text()
    api = fake_api(
        [
            told("undefined name", READ),
            [EDIT_GREETING],
            told("has been updated", say("Fixed greet() in app.py: it says Hi now.")),
        ]
    )
    async with running_daemon(
        [workspace], daemon_env, api, init_options={"model": MODEL}, **PLAIN
    ) as editor:
        editor.open(app, unsaved)
        span = {"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 16}}
        diag = {**UNDEFINED, "range": span}
        (fix,) = await editor.code_actions(app, (2, 11), diagnostics=[diag])
        answer = await run_action(editor, fix)
        assert answer["sessionId"] and answer["turnId"]  # answered at once
        done = await editor.wait_for_message(ended, 60)
        assert done.type == types.MessageType.Info
        assert done.message == "Tether: fixed greet() in app.py: it says Hi now — 1 file changed"
        # The permission question came as a plain dialog, the edit as a versioned applyEdit.
        (question,) = editor.message_requests
        assert "Edit" in question.message and any(
            a.title == "Allow once" for a in question.actions or []
        )
        expected = unsaved.replace('"Hello, "', '"Hi, "')
        assert editor.text(app) == expected and app.read_text() == expected
        # $/progress: the task as title, each step in words.
        values = progress_of(editor)
        begin = values[0]
        assert begin["kind"] == "begin" and begin["title"] == "Tether: fix undefined name 'Hello'"
        reports = [v["message"] for v in values if v["kind"] == "report"]
        assert reports == ["Reading app.py", "Editing app.py"]
        assert values[-1] == {"kind": "end", "message": "Done"}
        # The conversation, opened beside the code without taking focus.
        (shown,) = editor.shown_documents
        assert shown.take_focus is False
        transcript = Path(unquote(urlparse(shown.uri).path))
        assert transcript.parent == Path(daemon_env["TETHER_DATA_DIR"]) / "conversations"
        log = transcript.read_text()
        assert "## fix undefined name 'Hello'" in log
        assert "Fixed greet() in app.py" in log and "✓ `Edit src/app.py`" in log
        assert editor.violations == []
    api.assert_complete()


async def test_actions_of_a_workspace_continue_its_session_until_a_new_one(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api(
        [
            told("Explain the selected code", say("It greets.")),
            told("Write tests for the selected code", say("Tests would go in tests/.")),
            told("what now", say("A fresh start.")),
        ]
    )
    async with running_daemon(
        [workspace], daemon_env, api, init_options={"model": MODEL}, **PLAIN
    ) as editor:
        editor.open(app)
        span = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}
        first = await editor.execute_command("tether.explain", {"uri": app.as_uri(), "range": span})
        await editor.wait_for_message(lambda m: "it greets" in m.message, 60)
        second = await editor.execute_command(
            "tether.writeTests", {"uri": app.as_uri(), "range": span}
        )
        await editor.wait_for_message(lambda m: "tests would go" in m.message, 60)
        assert second["sessionId"] == first["sessionId"]
        # The second request carried the first exchange: the session went on.
        assert len(api.requests[1]["messages"]) == 3
        fresh = await editor.execute_command("tether.newSession")
        assert fresh["sessionId"] != first["sessionId"]
        third = await editor.execute_command("tether.prompt", "what now?")
        await editor.wait_for_message(lambda m: "a fresh start" in m.message, 60)
        assert third["sessionId"] == fresh["sessionId"]
        assert len(api.requests[2]["messages"]) == 1
    api.assert_complete()


async def test_refactor_asks_how_and_set_mode_skips_the_edit_question(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api(
        [
            told("simplify it", READ),
            [EDIT_GREETING],
            told("has been updated", say("Simplified greet().")),
        ]
    )
    async with running_daemon(
        [workspace], daemon_env, api, init_options={"model": MODEL}, **PLAIN
    ) as editor:
        editor.open(app)
        await editor.execute_command("tether.setMode", "acceptEdits")
        await editor.wait_for_message(lambda m: "acceptEdits" in m.message)
        editor.answers = ["Simplify"]
        span = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}
        await editor.execute_command("tether.refactor", {"uri": app.as_uri(), "range": span})
        await editor.wait_for_message(lambda m: "simplified" in m.message, 60)
        (question,) = editor.message_requests  # the "how", and no edit permission question
        assert question.message == "How should Tether refactor the selection?"
        assert '"Hi, "' in editor.text(app)
    api.assert_complete()


async def test_an_instruction_comment_is_carried_out_and_removed(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    text = "# tether: greet with Hi\n" + app.read_text()
    api = fake_api(
        [
            told("remove that instruction comment", READ),
            [
                tool(
                    "Edit",
                    file_path="src/app.py",
                    old_string="# tether: greet with Hi\ndef greet(name: str) -> str:\n"
                    '    return "Hello, " + name',
                    new_string='def greet(name: str) -> str:\n    return "Hi, " + name',
                )
            ],
            told("has been updated", say("Greets with Hi now.")),
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={"model": MODEL, "permissionMode": "acceptEdits"},
        **PLAIN,
    ) as editor:
        editor.open(app, text)
        (do_this,) = await editor.code_actions(app, (0, 5))
        await run_action(editor, do_this)
        await editor.wait_for_message(ended, 60)
        assert editor.text(app) == app.read_text()
        assert "tether:" not in editor.text(app) and '"Hi, "' in editor.text(app)
        first_request = api.requests[0]["messages"][0]["content"][0]["text"]
        assert "# tether: greet with Hi" in first_request
    api.assert_complete()


async def test_undo_puts_the_last_turn_back_and_cancel_stops_a_long_one(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    original = app.read_text()
    api = fake_api(
        [
            [READ],
            [EDIT_GREETING],
            told("has been updated", say("Done.")),
            {"chunk_delay_ms": 400, "blocks": [say("A long answer " * 40)]},
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={"model": MODEL, "permissionMode": "acceptEdits"},
        **PLAIN,
    ) as editor:
        editor.open(app)
        await editor.execute_command("tether.prompt", {"text": "say Hi", "uri": app.as_uri()})
        await editor.wait_for_message(lambda m: m.message.startswith("Tether: done"), 60)
        assert '"Hi, "' in editor.text(app)

        undone = await editor.execute_command("tether.undoLastTurn")
        assert undone["turnId"]
        done = await editor.wait_for_message(lambda m: "undid the last turn" in m.message, 30)
        assert done.message == "Tether: undid the last turn — restored app.py"
        assert editor.text(app) == original and app.read_text() == original

        await editor.execute_command("tether.prompt", "tell me a long story")
        await until(lambda: len(api.requests) == 4)
        stopped = await editor.execute_command("tether.cancel")
        assert stopped == {"cancelled": True}
        message = await editor.wait_for_message(lambda m: "stopped" in m.message, 30)
        assert message.type == types.MessageType.Warning
        assert message.message == "Tether: stopped — no files changed"
        assert progress_of(editor)[-1] == {"kind": "end", "message": "Stopped"}
        assert await editor.execute_command("tether.cancel") == {"cancelled": False}
    api.assert_complete()


@pytest.mark.parametrize(
    ("command", "arguments", "named"),
    [
        ("tether.prompt", [{}], "arguments[0].text"),
        ("tether.prompt", [{"text": ""}], "arguments[0].text"),
        ("tether.prompt", [{"text": "hi"}, {"text": "again"}], "expected one object"),
        ("tether.setMode", [{"mode": "fast"}], "arguments[0].mode"),
        ("tether.fix", [{"uri": "file:///x.py"}], "arguments[0].diagnostic"),
        ("tether.explain", [{"uri": "file:///x.py", "range": {"start": {}}}], "arguments[0].range"),
        ("tether.instruction", [{"uri": "file:///x.py", "line": -1}], "arguments[0].line"),
        ("tether.cancel", [42], "arguments[0] must be an object"),
        ("tether.nope", [], "'tether.nope' is not defined"),
    ],
)
async def test_bad_arguments_name_the_field(
    workspace: Path, daemon_env: dict[str, str], command: str, arguments: list[Any], named: str
) -> None:
    async with running_daemon([workspace], daemon_env, **PLAIN) as editor:
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await editor.execute_command(command, *arguments)
        assert named in str(caught.value)


async def test_a_file_outside_the_workspace_is_refused(
    workspace: Path, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    async with running_daemon([workspace], daemon_env, **PLAIN) as editor:
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await editor.execute_command("tether.prompt", {"text": "hi", "uri": outside.as_uri()})
        assert "not inside a workspace folder" in str(caught.value)


async def test_a_client_with_neither_show_document_nor_progress(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    api = fake_api([[say("Nothing to change.")]])
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={"model": MODEL},
        show_document=False,
        work_done_progress=False,
        **PLAIN,
    ) as editor:
        answer = await editor.execute_command("tether.prompt", "anything to do?")
        done = await editor.wait_for_message(ended, 60)
        assert done.message == "Tether: nothing to change — no files changed"
        assert editor.progress_tokens == [] and editor.progress == []
        assert editor.shown_documents == [] and editor.violations == []
        transcript = Path(daemon_env["TETHER_DATA_DIR"]) / "conversations"
        assert (transcript / f"{answer['sessionId']}.md").read_text().count(
            "Nothing to change"
        ) == 1
    api.assert_complete()


async def test_a_client_that_cannot_ask_gets_a_refusal_it_can_act_on(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """Helix answers window/showMessageRequest with -32601: the edit is refused, and the
    user is told why and what to set."""
    app = workspace / "src" / "app.py"
    original = app.read_text()
    api = fake_api(
        [
            [READ],
            [EDIT_GREETING],
            told("declined this tool call", say("I was not allowed to edit.")),
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        init_options={"model": MODEL},
        message_requests=False,
        **PLAIN,
    ) as editor:
        editor.open(app)
        await editor.execute_command("tether.prompt", {"text": "say Hi", "uri": app.as_uri()})
        refused = await editor.wait_for_message(lambda m: "cannot answer questions" in m.message)
        assert refused.type == types.MessageType.Error
        assert '"permissionMode"' in refused.message and "Edit" in refused.message
        await editor.wait_for_message(lambda m: "not allowed" in m.message, 60)
        assert app.read_text() == original and editor.applied_edits == []
    api.assert_complete()
