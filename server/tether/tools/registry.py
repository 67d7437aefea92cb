"""The built-in tools, in the order the model sees them. WebSearch joins per session (it
reads the session's rules); the provider decides whether it can offer it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tether.tools.base import Tool
from tether.tools.bash import BASH_TOOL
from tether.tools.edit import EDIT_TOOL
from tether.tools.glob import GLOB_TOOL
from tether.tools.grep import GREP_TOOL
from tether.tools.notebook_edit import NOTEBOOK_EDIT_TOOL
from tether.tools.read import READ_TOOL
from tether.tools.task_tools import TASK_OUTPUT_TOOL, TASK_STOP_TOOL
from tether.tools.todo import TODO_WRITE_TOOL
from tether.tools.web_fetch import WEB_FETCH_TOOL
from tether.tools.write import WRITE_TOOL


def core_tools() -> list[Tool[Any]]:
    return [
        BASH_TOOL,
        GLOB_TOOL,
        GREP_TOOL,
        READ_TOOL,
        EDIT_TOOL,
        WRITE_TOOL,
        NOTEBOOK_EDIT_TOOL,
        WEB_FETCH_TOOL,
        TODO_WRITE_TOOL,
        TASK_OUTPUT_TOOL,
        TASK_STOP_TOOL,
    ]


def tool_by_name(tools: Iterable[Tool[Any]], name: str) -> Tool[Any] | None:
    return next((t for t in tools if t.name == name), None)
