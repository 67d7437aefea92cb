"""ACP: edits reach the editor as fs/write_text_file, with diff content on the tool card
and inside the permission question; reads see unsaved buffers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .acp.harness import running_agent


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


async def test_an_edit_arrives_as_fs_write_text_file_with_diff_content(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    app = workspace / "src" / "app.py"
    on_disk = app.read_text()
    unsaved = "# a note the user has not saved yet\n" + on_disk
    expected = unsaved.replace('"Hello, "', '"Howdy, "')
    script = [
        [tool("Read", file_path=str(app))],
        [tool("Edit", file_path=str(app), old_string='"Hello, "', new_string='"Howdy, "')],
        say("Done."),
    ]
    async with running_agent(workspace, daemon_env, script=script) as agent:
        client = agent.client
        client.buffers[str(app)] = unsaved
        session = await agent.new_session()
        response = await agent.prompt(session, "Make the greeting friendlier.")
        assert response.stop_reason == "end_turn"

        # The write went to the editor, based on the unsaved buffer, and reached the disk.
        assert client.writes == [(str(app), expected)]
        assert app.read_text() == expected

        edit = next(u for u in client.updates_of(session, "tool_call") if u.kind == "edit")
        assert edit.title == "Edit src/app.py"
        assert [loc.path for loc in edit.locations] == [str(app)]
        (announced,) = edit.content  # the diff from the tool input, before anything runs
        assert (announced.type, announced.path) == ("diff", str(app))
        assert (announced.old_text, announced.new_text) == ('"Hello, "', '"Howdy, "')

        (request,) = client.permission_requests
        assert request.tool_call.tool_call_id == edit.tool_call_id
        (asked,) = request.tool_call.content  # the exact diff, for review in the dialog
        assert (asked.type, asked.path) == ("diff", str(app))
        assert (asked.old_text, asked.new_text) == (unsaved, expected)

        done = [
            u
            for u in client.updates_of(session, "tool_call_update")
            if u.tool_call_id == edit.tool_call_id and u.status == "completed"
        ]
        (result,) = done[-1].content
        assert (result.type, result.old_text, result.new_text) == ("diff", unsaved, expected)


async def test_a_new_file_in_accept_edits_mode(workspace: Path, daemon_env: dict[str, str]) -> None:
    notes = workspace / "notes.md"
    script = [[tool("Write", file_path="notes.md", content="# Notes\n")], say("Written.")]
    async with running_agent(workspace, daemon_env, script=script) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="acceptEdits")
        await agent.prompt(session, "Start a notes file.")
        assert agent.client.permission_requests == []
        assert agent.client.writes == [(str(notes), "# Notes\n")]
        write = next(u for u in agent.client.updates_of(session, "tool_call") if u.kind == "edit")
        (diff,) = write.content
        assert (diff.path, diff.old_text, diff.new_text) == (str(notes), None, "# Notes\n")
        assert write.title == "Write notes.md"


async def test_a_client_without_fs_gets_the_disk(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    app = workspace / "src" / "app.py"
    script = [
        [tool("Read", file_path=str(app))],
        [tool("Edit", file_path=str(app), old_string="Bye", new_string="Farewell")],
        say("Done."),
    ]
    async with running_agent(workspace, daemon_env, script=script, fs=False) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="acceptEdits")
        await agent.prompt(session, "Rename the farewell.")
        assert agent.client.reads == [] and agent.client.writes == []
        assert '"Farewell, "' in app.read_text()


async def test_a_one_line_edit_of_a_big_file_shows_the_region(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    """The permission question and the card get the changed lines with their context, not
    the whole 760 KB file (the write itself still carries the whole new text)."""
    big = workspace / "big.py"
    before = "".join(f"line {i:05d} = compute({i})\n" for i in range(20_000))
    big.write_text(before)
    after = before.replace("compute(12345)", "compute_fast(12345)")
    script = [
        [tool("Read", file_path=str(big), limit=5)],
        [
            tool(
                "Edit",
                file_path=str(big),
                old_string="compute(12345)",
                new_string="compute_fast(12345)",
            )
        ],
        say("Done."),
    ]
    region = "".join(f"line {i:05d} = compute({i})\n" for i in range(12342, 12349))
    async with running_agent(workspace, daemon_env, script=script) as agent:
        client = agent.client
        session = await agent.new_session()
        await agent.prompt(session, "Make line 12345 fast.")
        assert client.writes == [(str(big), after)]
        (request,) = client.permission_requests
        (asked,) = request.tool_call.content
        done = [
            u
            for u in client.updates_of(session, "tool_call_update")
            if u.status == "completed" and u.content
        ]
        (shown,) = done[-1].content
        for diff in (asked, shown):
            assert (diff.type, diff.path) == ("diff", str(big))
            assert diff.old_text == region
            assert diff.new_text == region.replace("compute(12345)", "compute_fast(12345)")
