"""The demo's editor: starts ``tether serve`` as a child and drives it over stdio like an
editor would, printing what the editor would show."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tether.lsp.testing.editor_client import EditorOptions, FakeEditor
from tether.transcript.store import TranscriptStore

UNSAVED_NOTE = "\n\n# NOTE (unsaved): keep these helpers free of I/O.\n"


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class DemoView:
    """Renders session updates as an editor's chat panel would."""

    def __init__(self) -> None:
        self.titles: dict[str, str] = {}
        self.in_text = False

    def _line(self, text: str) -> None:
        if self.in_text:
            _out("\n")
            self.in_text = False
        _out(text + "\n")

    def __call__(self, params: dict[str, Any]) -> None:
        update: dict[str, Any] = params["update"]
        kind = update["kind"]
        if kind == "agent_message_chunk":
            _out(update["text"])
            self.in_text = True
        elif kind == "tool_call":
            self.titles[update["toolCallId"]] = update["title"]
            self._line(f"  ┌ {update['toolKind']:<8} {update['title']}  [pending]")
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            title = self.titles.get(update["toolCallId"], "?")
            mark = "done" if update["status"] == "completed" else "failed"
            detail = ""
            contents: list[dict[str, Any]] = update.get("content") or []
            for content in contents:
                if content.get("type") == "terminal":
                    detail = " | " + content["output"].strip().splitlines()[-1][:70]
                elif content.get("type") == "diff":
                    detail = " | diff shown in the editor"
            self._line(f"  └ {title}  [{mark}]{detail}")
        elif kind == "plan":
            marks = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
            self._line(
                "  plan: "
                + "  ".join(f"{marks[e['status']]} {e['content']}" for e in update["entries"])
            )
        elif kind == "usage":
            self._line(
                f"  usage: {update['inputTokens']} in / {update['outputTokens']} out, "
                f"context {update['contextTokens']}/{update['contextWindow']}"
            )
        elif kind == "turn_end":
            self._line(f"  turn ended: {update['stopReason']}")


async def _approve(params: dict[str, Any]) -> str:
    tool: dict[str, Any] = params.get("toolCall", {})
    raw: dict[str, Any] = tool.get("rawInput") or {}
    command = raw.get("command")
    what = f"$ {command}" if command else tool.get("title", "?")
    _out(
        f"\n  ? permission dialog: {what}\n    [Allow once] [Allow always] [Reject] -> Allow once\n"
    )
    return "allow_once"


async def run_through_daemon(root: Path, prompt: str, script: Path) -> int:
    view = DemoView()
    editor = FakeEditor(
        EditorOptions(init_options={"model": f"scripted:{script}", "permissionMode": "default"}),
        on_update=view,
        asker=_approve,
    )
    command = [sys.executable, "-m", "tether", "serve"]
    _out(f"[editor] starting the daemon: {' '.join(command[1:])}\n")
    result = await editor.start(command, [root])
    caps: Any = result.capabilities.experimental or {}
    _out(f"[editor] connected; protocol version {caps.get('tether', {}).get('protocolVersion')}\n")
    ops = root / "calc" / "ops.py"
    editor.open(ops, ops.read_text(encoding="utf-8") + UNSAVED_NOTE)
    _out("[editor] calc/ops.py is open with an unsaved note the agent must not lose\n")
    try:
        session = await editor.new_session(title="demo")
        _out(f"[editor] session {session}\n[you] {prompt}\n\n")
        answer = await editor.prompt(session, prompt, timeout=120)
        _out("\n")
        for params in editor.applied_edits:
            _out(f"[editor] applied edit '{params.label}' (versioned, undoable)\n")
        buffer = editor.text(ops)
        kept = UNSAVED_NOTE.strip() in buffer
        fixed = "/ len(values)" in buffer
        saved = bool(editor.saved)
        _out(f"[editor] unsaved note kept: {kept}; fix in buffer: {fixed}; saved: {saved}\n")
        path = TranscriptStore().find(session)
        _out(f"[editor] transcript: {path}\n")
        ok = answer["stopReason"] == "end_turn" and kept and fixed
        return 0 if ok else 1
    finally:
        await editor.stop()
