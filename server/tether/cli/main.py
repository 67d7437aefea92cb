"""Entry point and argument parsing. Heavy imports happen inside the subcommands."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from tether import __version__

MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]


def _split_tools(values: list[str] | None) -> list[str]:
    """``--allowedTools "Bash(git log:*) Read"`` and repeated flags; commas separate too,
    except inside parentheses."""
    out: list[str] = []
    for value in values or []:
        depth, word = 0, ""
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (ch in ", "):
                if word.strip():
                    out.append(word.strip())
                word = ""
            else:
                word += ch
        if word.strip():
            out.append(word.strip())
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tether", description="A coding agent in your editor.")
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    parser.add_argument("--log-level", default="WARNING", help="logging level (stderr)")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the LSP daemon on stdio (for editors)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    serve.add_argument(
        "--connect",
        action="store_true",
        help="pass stdio to the warm daemon (started if needed) instead of serving in-process",
    )

    run = sub.add_parser("run", help="run one prompt headless")
    run.add_argument("prompt", nargs="?", help="the prompt ('-' or absent: read stdin)")
    run.add_argument("--cwd", help="workspace root (default: current directory)")
    run.add_argument("--model", help="anthropic:<model> | openai:<model>@<url> | scripted:<file>")
    run.add_argument("--permission-mode", choices=MODES)
    run.add_argument("--allowedTools", "--allowed-tools", action="append", dest="allowed_tools")
    run.add_argument(
        "--disallowedTools", "--disallowed-tools", action="append", dest="disallowed_tools"
    )
    run.add_argument("--max-turns", type=int)
    run.add_argument("--max-budget-usd", type=float)
    run.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    run.add_argument("--resume", metavar="SESSION", help="continue a session")
    run.add_argument(
        "--recover",
        action="store_true",
        help="with --resume: continue a damaged transcript from its last good point",
    )
    run.add_argument("--verbose", action="store_true", help="show tool calls and results")

    demo = sub.add_parser("demo", help="an offline demo session (no key, no network)")
    demo.add_argument("--dir", help="where to copy the example workspace (default: a temp dir)")
    demo.add_argument("--in-process", action="store_true", help="run the engine without the daemon")

    sessions = sub.add_parser("sessions", help="list sessions, newest first")
    sessions.add_argument("--cwd", help="workspace root (default: current directory)")
    sessions.add_argument("--all", action="store_true", help="sessions of every workspace")
    sessions.add_argument("--limit", type=int, default=50)

    from tether.daemon.commands import add_parser as add_daemon_parser

    add_daemon_parser(sub)

    acp = sub.add_parser("acp", help="speak the Agent Client Protocol on stdio")
    acp.add_argument("--model")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command == "serve" and args.connect:
        from tether.daemon.proxy import proxy

        return proxy()
    if args.command == "daemon":
        from tether.daemon.commands import daemon_command

        return daemon_command(args)
    if args.command == "serve":
        from tether.lsp.main import serve

        return serve(tcp=args.tcp)
    if args.command == "run":
        from tether.cli.run import run_command

        args.allowed_tools = _split_tools(args.allowed_tools)
        args.disallowed_tools = _split_tools(args.disallowed_tools)
        return run_command(args)
    if args.command == "demo":
        from tether.cli.demo import demo_command

        return demo_command(args)
    if args.command == "sessions":
        from tether.cli.sessions import sessions_command

        return sessions_command(args)
    if args.command == "acp":
        from tether.acp.main import serve as serve_acp

        return serve_acp(model=args.model)
    return 2
