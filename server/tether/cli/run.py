"""``tether run PROMPT``: one headless turn (plus any turns background tasks trigger)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tether.cli.render import JsonRenderer, Renderer, TextRenderer
from tether.cli.terminal import terminal_editor
from tether.engine.engine import QueryEngine
from tether.errors import ConfigError, SessionError
from tether.protocol.content import ContentBlock, TextContent
from tether.protocol.updates import AgentMessageChunk
from tether.providers.scripted import ScriptedProvider
from tether.workspace import Workspace


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


async def run_turn(
    engine: QueryEngine, prompt: str | Sequence[ContentBlock] | None, renderer: Renderer
) -> int:
    info: dict[str, Any] = {
        "session_id": engine.session_id,
        "cwd": str(engine.cwd),
        "model": engine.provider.model,
        "permissionMode": engine.state.mode,
        "tools": [s.name for s in engine.tool_specs()],
    }
    renderer.start(info)
    started = time.monotonic()
    text: list[str] = []
    turn_id = ""
    async for update in engine.submit(prompt):
        turn_id = engine.current_turn_id or turn_id
        if isinstance(update, AgentMessageChunk):
            text.append(update.text)
        renderer.update(engine.session_id, turn_id, update)
    result = engine.last_result
    assert result is not None
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
    limits: dict[str, Any] = {
        "extra_allow": args.allowed_tools,
        "extra_deny": args.disallowed_tools,
        "max_turns": args.max_turns,
        "max_budget_usd": args.max_budget_usd,
    }
    if args.resume:
        engine, resumed = await workspace.load_session(
            args.resume, editor, model=args.model, recover=args.recover, **limits
        )
        for note in resumed.repaired:
            print(f"[tether] resume: {note}", file=sys.stderr)
        if args.permission_mode:
            engine.set_mode(args.permission_mode)
    else:
        engine = workspace.new_session(
            editor, model=args.model, mode=args.permission_mode, **limits
        )
    from tether.skills import commands
    from tether.skills.session_prompt import command_turn, expand_for_session

    renderer = _renderer(args)
    for problem in await workspace.ready():
        print(f"[tether] {problem}", file=sys.stderr)
    try:
        found = commands.discover(root)
        expanded = await expand_for_session(
            engine, [TextContent(text=prompt)], commands=found, mcp=workspace.mcp_prompts()
        )
        async with command_turn(engine, expanded, workspace.model_provider):
            code = await run_turn(engine, expanded.blocks, renderer)
        code = await follow_background(engine, renderer, code)
    finally:
        await workspace.close()
    if isinstance(engine.provider, ScriptedProvider) and engine.provider.remaining:
        print(
            f"[tether] error: the script has {engine.provider.remaining} unconsumed turn(s)",
            file=sys.stderr,
        )
        return 1
    return code


async def follow_background(engine: QueryEngine, renderer: Renderer, code: int) -> int:
    """Do not exit while background tasks of the session run: wait for them and answer
    their notifications with turns of their own (Ctrl+C stops them)."""
    while engine.tasks.running() or engine.notifications:
        if engine.notifications:
            code = await run_turn(engine, None, renderer)
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
