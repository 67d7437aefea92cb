"""A turn's changes as hunks, through the real daemon: undo one of three after a later turn
changed the file, with unsaved text in the buffer and the editor's own undo afterwards; a
conflict; a file a command changed; the note the next model request carries; the states
after a resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from .conftest import MODEL, running_daemon

ACCEPT_EDITS = {"model": MODEL, "permissionMode": "acceptEdits"}
CALC = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(8))


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def edit(old: str, new: str) -> dict[str, Any]:
    return tool("Edit", file_path="src/calc.py", old_string=old, new_string=new)


THREE_EDITS = [
    [tool("Read", file_path="src/calc.py")],
    [edit("return x + 1\n", "return x + 100\n")],
    [edit("return x + 4\n", "return x * 4\n")],
    [edit("return x + 7\n", "return x - 7\n")],
    [say("Changed f1, f4 and f7.")],
]
"""Turn 1: three hunks in src/calc.py."""
ADD_HEADER = [
    [edit("def f0(x):\n", '"""Small functions."""\n\n\ndef f0(x):\n')],
    [say("Added a docstring.")],
]
"""Turn 2: another part of the same file."""


async def changes(editor: Any, session: str, **params: Any) -> dict[str, Any]:
    return await editor.request("tether/listChanges", {"sessionId": session, **params})


def hunks(listed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {h["hunkId"]: h for f in listed["files"] for h in f["hunks"]}


def lines(text: str, start: int, end: int) -> str:
    return "".join(text.splitlines(keepends=True)[start:end])


async def test_undo_one_of_three_hunks_after_a_later_turn(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    calc = workspace / "src" / "calc.py"
    calc.write_text(CALC)
    api = fake_api(
        [
            *THREE_EDITS,
            *ADD_HEADER,
            {"expect": {"contains": "undid these"}, "blocks": [say("I will leave f4 alone.")]},
        ]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT_EDITS) as editor:
        editor.open(calc)
        session = await editor.new_session()
        first = await editor.prompt(session, "Change f1, f4 and f7.")
        assert first["stopReason"] == "end_turn"
        changed = [u for u in editor.updates_of(session, "changes")]
        assert changed == [
            {"kind": "changes", "turnIds": [first["turnId"]], "uris": [calc.as_uri()]}
        ]
        second = await editor.prompt(session, "Add a module docstring.")
        # The user types below, unsaved.
        editor.type(calc, editor.text(calc) + "# my own note, not saved\n")
        listed = await changes(editor, session)
        by_id = hunks(listed)
        t1 = first["turnId"]
        assert sorted(by_id) == sorted([f"{t1}-1", f"{t1}-2", f"{t1}-3", f"{second['turnId']}-1"])
        assert listed["counts"] == {"pending": 4, "kept": 0, "undone": 0, "conflicts": 0}
        middle = by_id[f"{t1}-2"]
        assert (middle["oldText"], middle["newText"]) == (
            "    return x + 4\n",
            "    return x * 4\n",
        )
        start, end = middle["range"]["start"]["line"], middle["range"]["end"]["line"]
        assert lines(editor.text(calc), start, end) == "    return x * 4\n"  # moved by turn 2

        version = editor.buffers[calc.as_uri()].version
        edits_before = len(editor.applied_edits)
        undone = await editor.request(
            "tether/undoChanges", {"sessionId": session, "hunkIds": [middle["hunkId"]]}
        )
        assert undone == {"undone": [middle["hunkId"]]}
        (applied,) = editor.applied_edits[edits_before:]
        assert applied.label == "Tether: undo change"
        (doc_edit,) = applied.edit.document_changes or []
        assert isinstance(doc_edit, types.TextDocumentEdit)
        assert doc_edit.text_document.version == version  # versioned against the buffer
        (one,) = doc_edit.edits
        assert isinstance(one, types.TextEdit) and one.range.start.line == start
        text = editor.text(calc)
        assert "return x + 4\n" in text and "return x * 4" not in text
        assert "return x + 100" in text and "return x - 7" in text  # the other hunks stay
        assert text.startswith('"""Small functions."""')  # and the later turn's change
        assert text.endswith("# my own note, not saved\n")  # and the user's unsaved text
        # On disk the hunk is undone too, but the user's text stays unsaved.
        assert calc.read_text() == text.removesuffix("# my own note, not saved\n")
        listed = await changes(editor, session, states=["pending", "kept", "undone"])
        assert hunks(listed)[middle["hunkId"]]["state"] == "undone"
        assert editor.updates_of(session, "changes")[-1]["uris"] == [calc.as_uri()]

        # The editor's undo takes Tether's undo back: the hunk is pending again...
        editor.undo(calc)
        assert "return x * 4\n" in editor.text(calc)
        listed = await changes(editor, session)
        assert hunks(listed)[middle["hunkId"]]["state"] == "pending"
        # ...and undone again, it is what the next request tells the model.
        await editor.request(
            "tether/undoChanges", {"sessionId": session, "hunkIds": [middle["hunkId"]]}
        )
        await editor.prompt(session, "Anything else?")
        note = api.requests[-1]["messages"][-1]
        text = str(note)
        assert "src/calc.py line" in text and '("return x * 4")' in text
        assert "return x + 100" not in text  # only what was undone


async def test_a_hunk_taken_back_by_hand_is_undone_on_disk_too(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    """The user took the agent's lines back in the buffer (unsaved): undoing the hunk puts
    them back on disk as well, and says "undone" truthfully; where the disk has other lines,
    it is left as it is and the answer says so."""
    calc = workspace / "src" / "calc.py"
    calc.write_text(CALC)
    api = fake_api(THREE_EDITS)
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT_EDITS) as editor:
        editor.open(calc)
        session = await editor.new_session()
        await editor.prompt(session, "Change f1, f4 and f7.")
        by_id = hunks(await changes(editor, session))
        _first, middle, last = sorted(by_id)
        assert "return x * 4\n" in calc.read_text()
        editor.type(calc, editor.text(calc).replace("return x * 4\n", "return x + 4\n"))
        undone = await editor.request(
            "tether/undoChanges", {"sessionId": session, "hunkIds": [middle]}
        )
        assert undone == {"undone": [middle]}
        assert "return x + 4\n" in calc.read_text() and "return x * 4" not in calc.read_text()
        assert "return x + 100\n" in calc.read_text()  # the others stay

        # The disk has other lines where the last hunk is: the buffer is undone, not the disk.
        calc.write_text(calc.read_text().replace("return x - 7\n", "return x - 70\n"))
        undone = await editor.request(
            "tether/undoChanges", {"sessionId": session, "hunkIds": [last]}
        )
        assert undone["undone"] == [last]
        assert "line 30 is undone in the editor" in undone["notes"][0], undone
        assert "return x + 7\n" in editor.text(calc)
        assert "return x - 70\n" in calc.read_text()


async def test_a_conflicting_hunk_is_reported_not_merged(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    calc = workspace / "src" / "calc.py"
    calc.write_text(CALC)
    api = fake_api(THREE_EDITS)
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT_EDITS) as editor:
        editor.open(calc)
        session = await editor.new_session()
        turn = (await editor.prompt(session, "Change f1, f4 and f7."))["turnId"]
        typed = editor.text(calc).replace("return x * 4", "return x * 44")
        editor.type(calc, typed)
        listed = await changes(editor, session)
        conflicted = hunks(listed)[f"{turn}-2"]
        assert conflicted["conflict"] is True and "range" not in conflicted
        assert listed["counts"]["conflicts"] == 1
        edits_before = len(editor.applied_edits)
        result = await editor.request("tether/undoChanges", {"sessionId": session, "turnId": turn})
        assert sorted(result["undone"]) == [f"{turn}-1", f"{turn}-3"]
        (refused,) = result["notUndone"]
        assert refused["hunkId"] == f"{turn}-2" and refused["conflict"] is True
        assert "changed after the turn made them" in refused["reason"]
        assert len(editor.applied_edits) == edits_before + 1
        assert "return x * 44" in editor.text(calc)  # never merged
        assert "return x + 1\n" in editor.text(calc) and "return x + 7\n" in editor.text(calc)


async def test_a_file_a_command_changed_is_undone_hunk_by_hunk(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    original = app.read_text()
    command = "sed -i -e 's/Hello, /Hi, /' -e 's/Bye, /Ciao, /' src/app.py"
    api = fake_api(
        [
            [tool("Bash", command=command, description="Greet differently")],
            [say("Done.")],
        ]
    )
    init = {"model": MODEL, "permissionMode": "bypassPermissions"}
    async with running_daemon([workspace], daemon_env, api, init_options=init) as editor:
        session = await editor.new_session()
        turn = (await editor.prompt(session, "Greet differently"))["turnId"]
        assert "Ciao" in app.read_text()
        listed = await changes(editor, session, turnId=turn)
        assert [f["uri"] for f in listed["files"]] == [app.as_uri()]
        by_id = hunks(listed)
        assert [h["newText"] for h in by_id.values()] == [
            '    return "Hi, " + name\n',
            '    return "Ciao, " + name\n',
        ]
        result = await editor.request(
            "tether/undoChanges", {"sessionId": session, "hunkIds": [f"{turn}-2"]}
        )
        assert result == {"undone": [f"{turn}-2"]}
        assert app.read_text() == original.replace("Hello, ", "Hi, ")
        assert editor.text(app) == app.read_text()  # through the editor, opened for it
        kept = await editor.request(
            "tether/keepChanges", {"sessionId": session, "uri": app.as_uri()}
        )
        assert kept == {"kept": [f"{turn}-1"]}


async def test_resume_keeps_the_hunks_states(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    calc = workspace / "src" / "calc.py"
    calc.write_text(CALC)
    api = fake_api(
        [*THREE_EDITS, {"expect": {"contains": "undid these"}, "blocks": [say("Noted.")]}]
    )
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT_EDITS) as editor:
        session = await editor.new_session()
        turn = (await editor.prompt(session, "Change f1, f4 and f7."))["turnId"]
        await editor.request("tether/keepChanges", {"sessionId": session, "hunkIds": [f"{turn}-1"]})
        await editor.request("tether/undoChanges", {"sessionId": session, "hunkIds": [f"{turn}-3"]})
        everything = {"states": ["pending", "kept", "undone"]}
        before = await changes(editor, session, **everything)
    async with running_daemon([workspace], daemon_env, api, init_options=ACCEPT_EDITS) as editor:
        await editor.request("tether/loadSession", {"sessionId": session})
        after = await changes(editor, session, **everything)
        assert after == before
        assert {i: h["state"] for i, h in hunks(after).items()} == {
            f"{turn}-1": "kept",
            f"{turn}-2": "pending",
            f"{turn}-3": "undone",
        }
        # The undo made before the restart is still news for the model.
        await editor.prompt(session, "Go on.")
    api.assert_complete()


async def test_crlf_lines_and_a_last_line_without_a_break_in_utf8(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    notes = workspace / "notes.txt"
    notes.write_bytes("über\r\nmiddle\r\nend 😀".encode())
    api = fake_api(
        [
            [tool("Read", file_path="notes.txt")],
            [tool("Edit", file_path="notes.txt", old_string="über", new_string="ÜBER")],
            [tool("Edit", file_path="notes.txt", old_string="end 😀", new_string="fin 😀😀")],
            [say("Done.")],
        ]
    )
    init = ACCEPT_EDITS
    async with running_daemon(
        [workspace], daemon_env, api, init_options=init, encoding="utf-8"
    ) as editor:
        editor.open(notes, language="text")
        session = await editor.new_session()
        turn = (await editor.prompt(session, "Shout"))["turnId"]
        assert notes.read_bytes() == "ÜBER\r\nmiddle\r\nfin 😀😀".encode()
        by_id = hunks(await changes(editor, session))
        last = by_id[f"{turn}-2"]
        assert last["newText"] == "fin 😀😀"
        # The range ends inside the last line, counted in UTF-8 bytes.
        assert last["range"] == {
            "start": {"line": 2, "character": 0},
            "end": {"line": 2, "character": len("fin 😀😀".encode())},
        }
        await editor.request(
            "tether/undoChanges", {"sessionId": session, "hunkIds": [last["hunkId"]]}
        )
        assert notes.read_bytes() == "ÜBER\r\nmiddle\r\nend 😀".encode()
        assert editor.text(notes) == "ÜBER\r\nmiddle\r\nend 😀"
