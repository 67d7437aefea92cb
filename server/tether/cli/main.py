"""Entry point: ``tether -p PROMPT`` (Claude Code's print mode) and the subcommands.

``tether serve|acp|run|sessions|demo ...`` picks a subcommand; anything else is print mode,
which needs ``-p``/``--print`` or a stream-json ``--input-format``/``--output-format`` (the
Agent SDKs start the CLI that way). Heavy imports happen inside the commands.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

from tether import __version__
from tether.cli.flags import Parser, UsageError, add_print_flags, print_options, print_parser

SUBCOMMANDS = ("serve", "run", "acp", "sessions", "demo", "daemon")
_DRIVING_FLAGS = ("--input-format", "--output-format")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tether",
        description="A coding agent in your editor. Print mode: tether -p PROMPT [flags] "
        "(see tether run --help for the flags).",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    parser.add_argument("--log-level", default="WARNING", help="logging level (stderr)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    serve = sub.add_parser("serve", help="run the LSP daemon on stdio (for editors)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    serve.add_argument(
        "--connect",
        action="store_true",
        help="pass stdio to the warm daemon (started if needed) instead of serving in-process",
    )

    run = sub.add_parser(
        "run", help="run one prompt headless (the same flags as tether -p)", allow_abbrev=False
    )
    add_print_flags(run)

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


def _command_index(argv: Sequence[str]) -> int | None:
    """Where the subcommand is, past the global ``--log-level``; None: print mode."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--log-level":
            i += 2
            continue
        if arg.startswith("--log-level="):
            i += 1
            continue
        return i if arg in SUBCOMMANDS else None
    return None


def _logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, str(level).upper(), logging.WARNING),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        wants_help = bool({"-h", "--help", "--version"} & set(args_list))
        printing = bool({"-p", "--print"} & set(args_list))
        if _command_index(args_list) is None and (printing or not wants_help):
            return _print_mode(args_list)
        return _subcommand(build_parser().parse_args(args_list))
    except UsageError as e:
        print(f"tether: {e}", file=sys.stderr)
        return 2


def _print_mode(argv: list[str]) -> int:
    args = print_parser().parse_args(argv)
    driven = any(a.split("=")[0] in _DRIVING_FLAGS for a in argv)
    if not args.print_mode and not driven:
        if args.prompt:
            raise UsageError(
                f"unknown command {args.prompt!r}: commands are {', '.join(SUBCOMMANDS)}; "
                f"for a prompt use tether -p {args.prompt!r}"
            )
        build_parser().print_help(sys.stderr)
        return 2
    _logging(args.log_level)
    return run_print_mode(args)


def run_print_mode(args: argparse.Namespace) -> int:
    from tether.cli.inprocess import InProcessDriver
    from tether.cli.render import json_lines
    from tether.cli.run import run_print
    from tether.cli.sdk_mode import SdkMode
    from tether.errors import ConfigError, SessionError

    options = print_options(args)
    driver = InProcessDriver(user_settings=options.user_settings)
    try:
        if options.input_format == "stream-json":
            return asyncio.run(SdkMode(options, driver, json_lines(sys.stdout)).run())
        return asyncio.run(run_print(options, driver))
    except (ConfigError, SessionError) as e:
        print(f"tether: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader of stdout went away (`tether -p ... | head -1`)
        from tether.cli.render import quiet_stdout

        quiet_stdout()
        return 1


def _subcommand(args: argparse.Namespace) -> int:
    _logging(args.log_level)
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
        return run_print_mode(args)
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
