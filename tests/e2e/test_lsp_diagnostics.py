"""Diagnostics in: new errors in files the agent edited reach the next model request."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .conftest import running_daemon


async def test_new_errors_after_an_edit_are_attached(
    workspace: Path, daemon_env: dict[str, str], fake_api: Any
) -> None:
    app = workspace / "src" / "app.py"
    api = fake_api(
        [
            [{"type": "tool_use", "name": "Read", "input": {"file_path": "src/app.py"}}],
            [
                {
                    "type": "tool_use",
                    "name": "Edit",
                    "input": {
                        "file_path": "src/app.py",
                        "old_string": "def greet",
                        "new_string": "def greet(",
                    },
                }
            ],
            {
                "expect": {"contains": "expected ':'"},
                "blocks": [{"type": "text", "text": "Oops, fixing."}],
            },
        ]
    )
    async with running_daemon(
        [workspace],
        daemon_env,
        api,
        diagnostics=True,
        init_options={"model": "anthropic:claude-sonnet-4-6", "permissionMode": "acceptEdits"},
    ) as editor:
        editor.open(app)
        # An old warning is already there; it must not be reported as new.
        editor.client.protocol.notify(
            "tether/diagnostics",
            {
                "uri": app.as_uri(),
                "diagnostics": [
                    {
                        "range": {
                            "start": {"line": 4, "character": 0},
                            "end": {"line": 4, "character": 3},
                        },
                        "severity": 2,
                        "message": "unused function",
                        "source": "lint",
                    },
                ],
            },
        )

        def on_update(params: dict[str, Any]) -> None:
            update = params["update"]
            if update["kind"] == "tool_call_update" and update.get("status") == "completed":
                if "(" in editor.text(app).split("\n")[0].split("greet")[1][:2]:
                    # The editor's language server reacts to the broken edit.
                    editor.client.protocol.notify(
                        "tether/diagnostics",
                        {
                            "uri": app.as_uri(),
                            "diagnostics": [
                                {
                                    "range": {
                                        "start": {"line": 0, "character": 10},
                                        "end": {"line": 0, "character": 11},
                                    },
                                    "severity": 1,
                                    "message": "expected ':'",
                                    "source": "pyright",
                                },
                            ],
                        },
                    )

        editor.on_update = on_update
        session = await editor.new_session()
        result = await asyncio.wait_for(editor.prompt(session, "rename"), 30)
        assert result["stopReason"] == "end_turn"
        last = str(api.requests[-1]["messages"][-1])
        assert "new-diagnostics" in last and "unused function" not in last
    api.assert_complete()
