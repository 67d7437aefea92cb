"""TodoWrite publishes a Plan; the registry exposes every tool with Claude Code's schema."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tether.protocol.updates import Plan, PlanEntry, SessionUpdate
from tether.tools.base import ToolResult
from tether.tools.context import ToolContext
from tether.tools.registry import core_tools, tool_by_name
from tether.tools.todo import TODO_WRITE_TOOL

Run = Callable[..., Awaitable[ToolResult]]


async def test_todo_write_replaces_state_and_emits_plan(
    run: Run, ctx: ToolContext, updates: list[SessionUpdate]
) -> None:
    todos = [
        {"content": "Run tests", "status": "completed", "activeForm": "Running tests"},
        {"content": "Fix bug", "status": "in_progress", "activeForm": "Fixing bug"},
    ]
    result = await run(TODO_WRITE_TOOL, {"todos": todos})
    assert not result.is_error and "Note:" not in str(result.content)
    expected = [
        PlanEntry(content="Run tests", status="completed", active_form="Running tests"),
        PlanEntry(content="Fix bug", status="in_progress", active_form="Fixing bug"),
    ]
    assert ctx.state.todos == expected
    assert updates == [Plan(entries=expected)]
    await run(TODO_WRITE_TOOL, {"todos": todos[:1]})
    assert len(ctx.state.todos) == 1


async def test_todo_write_warns_about_several_in_progress(run: Run) -> None:
    item = {"content": "a", "status": "in_progress", "activeForm": "doing a"}
    result = await run(TODO_WRITE_TOOL, {"todos": [item, {**item, "content": "b"}]})
    assert not result.is_error and "2 tasks are in_progress" in str(result.content)


async def test_todo_write_metadata(ctx: ToolContext) -> None:
    bad = TODO_WRITE_TOOL.parse({"todos": [{"content": "x", "status": "bogus"}]})
    assert isinstance(bad, str) and "InputValidationError" in bad
    inp = TODO_WRITE_TOOL.input_model.model_validate({"todos": []})
    assert (await TODO_WRITE_TOOL.check_permissions(inp, ctx)).behavior == "allow"
    assert TODO_WRITE_TOOL.is_concurrency_safe(inp) and TODO_WRITE_TOOL.kind == "think"


def test_registry_has_every_tool_with_claude_code_fields() -> None:
    tools = core_tools()
    expected = {
        "Read": {"file_path", "offset", "limit", "pages"},
        "Write": {"file_path", "content"},
        "Edit": {"file_path", "old_string", "new_string", "replace_all"},
        "Glob": {"pattern", "path"},
        "Grep": {"pattern", "path", "glob", "output_mode", "-A", "-B", "-C", "-n", "-i"}
        | {"type", "head_limit", "offset", "multiline"},
        "Bash": {
            "command",
            "timeout",
            "description",
            "run_in_background",
            "dangerouslyDisableSandbox",
        },
        "TaskOutput": {"task_id", "block", "timeout"},
        "TaskStop": {"task_id"},
        "TodoWrite": {"todos"},
        "NotebookEdit": {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
        "WebFetch": {"url", "prompt"},
    }
    assert {t.name for t in tools} == set(expected)
    for tool in tools:
        spec = tool.spec()
        assert set(spec.input_schema["properties"]) == expected[tool.name], tool.name
        assert spec.input_schema.get("additionalProperties") is False, tool.name
        assert spec.description.strip()
        for prop in spec.input_schema["properties"].values():
            assert prop.get("description"), (tool.name, prop)
    assert tool_by_name(tools, "Edit") is not None and tool_by_name(tools, "Nope") is None
    todo = tool_by_name(tools, "TodoWrite")
    assert todo is not None
    item = todo.spec().input_schema["$defs"]["TodoItem"]["properties"]
    assert set(item) == {"content", "status", "activeForm"}
