"""``tether run PROMPT``: one headless turn (plus any turns background tasks trigger)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from tether.cli.render import JsonRenderer, Renderer, TextRenderer
from tether.cli.terminal import terminal_editor
from tether.errors import ConfigError, SessionError
from tether.protocol.content import TextContent
from tether.protocol.updates import AgentMessageChunk, SessionUpdate
from tether.providers.scripted import ScriptedProvider
from tether.session.session import Session
from tether.workspace import Workspace
from tether.workspace.workspace import SessionOptions


def _read_prompt(args: argparse.Namespace) -> str:
    if args.prompt and args.prompt != "-":
        return args.prompt
    if sys.stdin.isatty():
        raise ConfigError("no prompt given (pass it as an argument or on stdin)")
    return sys.stdin.read()


def _renderer(args: argparse.Namespace) -> Renderer:
    if args.output_format == "text":
        return TextRenderer(verbose=args.verbose)
    return JsonRenderer(stream=args.output_format == "stream-json")


async def run_turn(session: Session, prompt: str | None, renderer: Renderer) -> int:
    """One turn for ``prompt`` (``None``: answer finished background tasks)."""
    engine = session.engine
    info: dict[str, Any] = {
        "session_id": session.session_id,
        "cwd": str(session.cwd),
        "model": session.model,
        "permissionMode": session.mode,
        "tools": [s.name for s in engine.tool_specs()],
    }
    renderer.start(info)
    started = time.monotonic()
    text: list[str] = []

    def show(turn_id: str, update: SessionUpdate) -> None:
        if isinstance(update, AgentMessageChunk):
            text.append(update.text)
        renderer.update(session.session_id, turn_id, update)

    unsubscribe = session.events.subscribe(show)
    try:
        if prompt is None:
            result = await session.answer_notifications()
            if result is None:
                return 0
        else:
            result = await session.prompt([TextContent(text=prompt)])
    finally:
        unsubscribe()
    info.update(
        text="".join(text),
        duration_ms=int((time.monotonic() - started) * 1000),
        model_calls=result.model_calls,
    )
    renderer.finish(result, info)
    return 0 if result.terminal.stop_reason == "end_turn" else 1


async def _main(args: argparse.Namespace) -> int:
    prompt = _read_prompt(args)
    root = Path(args.cwd or os.getcwd()).resolve()
    if not root.is_dir():
        raise ConfigError(f"--cwd {root} is not a directory")
    workspace = Workspace(root)
    for warning in workspace.loaded.warnings:
        print(f"[tether] settings: {warning}", file=sys.stderr)
    editor = terminal_editor()
    options = SessionOptions(
        model=args.model,
        mode=args.permission_mode,
        allow=args.allowed_tools or (),
        deny=args.disallowed_tools or (),
        max_turns=args.max_turns,
        max_budget_usd=args.max_budget_usd,
        auto_wake=False,
    )
    if args.resume:
        session = await workspace.load_session(args.resume, editor, options, recover=args.recover)
        for note in session.repaired:
            print(f"[tether] resume: {note}", file=sys.stderr)
    else:
        session = workspace.new_session(editor, options)
    renderer = _renderer(args)
    for problem in await workspace.ready():
        print(f"[tether] {problem}", file=sys.stderr)
    provider = session.engine.provider
    try:
        code = await run_turn(session, prompt, renderer)
        code = await follow_background(session, renderer, code)
    finally:
        await workspace.close()
    if isinstance(provider, ScriptedProvider) and provider.remaining:
        print(
            f"[tether] error: the script has {provider.remaining} unconsumed turn(s)",
            file=sys.stderr,
        )
        return 1
    return code


async def follow_background(session: Session, renderer: Renderer, code: int) -> int:
    """Do not exit while background tasks of the session run: wait for them and answer
    their notifications with turns of their own (Ctrl+C stops them)."""
    engine = session.engine
    while engine.tasks.running() or engine.notifications:
        if engine.notifications:
            code = await run_turn(session, None, renderer)
            continue
        count = len(engine.tasks.running())
        print(f"[tether] waiting for {count} background task(s)...", file=sys.stderr)
        await engine.tasks.wait_any()
        await asyncio.sleep(0)  # let the finished task's notification be queued
    return code


def run_command(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except (ConfigError, SessionError) as e:
        print(f"tether: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
