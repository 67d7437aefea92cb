"""``tether demo``: a complete offline session on a copy of the bundled example workspace."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from tether.cli.driver import OpenRequest
from tether.cli.inprocess import InProcessDriver
from tether.cli.render import TextRenderer
from tether.cli.run import exit_code
from tether.editor.port import PermissionReply, PermissionRequest
from tether.protocol.content import TextContent
from tether.providers.scripted import ScriptedProvider
from tether.settings.load import SettingSources

DEMO_PROMPT = "The mean() in calc/ops.py looks wrong. Fix it and make sure the tests pass."


def example_dir() -> Path:
    return Path(str(resources.files("tether").joinpath("examples", "demo")))


def prepare_workspace(target: Path | None) -> Path:
    root = target or Path(tempfile.mkdtemp(prefix="tether-demo-"))
    dest = root / "calc-demo"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(example_dir() / "workspace", dest)
    return dest


async def _approve(request: PermissionRequest) -> PermissionReply:
    """The demo's user says yes to every question (and shows it)."""
    command = request.raw_input.get("command")
    what = f"$ {command}" if isinstance(command, str) else request.title
    sys.stderr.write(f"  ? permission asked for {request.tool_name}: {what} -> allow once\n")
    return request.reply("allow_once")


async def run_in_process(root: Path) -> int:
    script = example_dir() / "script.json"
    provider = ScriptedProvider.from_file(script)
    driver = InProcessDriver(
        setting_sources=SettingSources(user=False), provider_factory=lambda _m, _r: provider
    )
    renderer = TextRenderer(verbose=True)
    facts = await driver.open(OpenRequest(cwd=root, mode="default", ask=_approve))
    unsubscribe = driver.subscribe(renderer.update)
    try:
        renderer.start(facts)
        outcome = await driver.prompt([TextContent(text=DEMO_PROMPT)])
        renderer.finish(outcome)
    finally:
        unsubscribe()
        await renderer.aclose()
        await driver.close()
    provider.assert_complete()
    print(f"\ntranscript: {facts.transcript_path or '-'}", file=sys.stderr)
    return exit_code(outcome)


def show_change(root: Path) -> None:
    before = (example_dir() / "workspace" / "calc" / "ops.py").read_text().splitlines()
    after = (root / "calc" / "ops.py").read_text().splitlines()
    diff = difflib.unified_diff(
        before, after, "calc/ops.py (before)", "calc/ops.py (after)", lineterm=""
    )
    print("\n".join(diff), file=sys.stderr)


def demo_command(args: argparse.Namespace) -> int:
    root = prepare_workspace(Path(args.dir).resolve() if args.dir else None)
    print(f"[demo] workspace: {root}", file=sys.stderr)
    print(f"[demo] prompt: {DEMO_PROMPT}\n", file=sys.stderr)
    from pygls.exceptions import JsonRpcException

    from tether.errors import TetherError

    try:
        if args.in_process:
            code = asyncio.run(run_in_process(root))
        else:
            from tether.cli.demo_client import run_through_daemon

            script = example_dir() / "script.json"
            code = asyncio.run(run_through_daemon(root, DEMO_PROMPT, script))
    except (TetherError, JsonRpcException, OSError) as e:
        # The setup is wrong (a data directory that cannot be written, no daemon): say
        # what and how to fix it, as the message does; no traceback.
        print(f"tether demo: {getattr(e, 'message', None) or e}", file=sys.stderr)
        return 1
    show_change(root)
    print(f"\n[demo] done (exit {code}). The edited workspace is at {root}", file=sys.stderr)
    return code
