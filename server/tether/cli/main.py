"""Entry point: ``tether -p PROMPT`` (Claude Code's print mode) and the subcommands.

``tether serve|acp|run|sessions|demo ...`` picks a subcommand; anything else is print mode,
which needs ``-p``/``--print`` or a stream-json ``--input-format``/``--output-format`` (the
Agent SDKs start the CLI that way).

Print mode runs in the user's warm daemon (``cli/remote.py``, standard library only: the
call pays Python's start-up, not Tether's), or in this process with ``--no-daemon`` or
``TETHER_NO_DAEMON=1``. This module imports only the standard library at the top; heavy
imports happen inside the commands.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from tether.cli.driver import SessionFacts

SUBCOMMANDS = ("serve", "run", "acp", "sessions", "demo", "doctor", "daemon", "attach")
_DRIVING_FLAGS = ("--input-format", "--output-format")
IN_DIRECTORY = ("run", "sessions", "doctor", "attach")
"""Subcommands that work in the current directory unless ``--cwd`` names another (print
mode too); ``sessions --all`` needs none."""
NO_DAEMON_ENV = "TETHER_NO_DAEMON"


def build_parser() -> argparse.ArgumentParser:
    from tether import __version__
    from tether.cli.flags import Parser, add_print_flags

    parser = Parser(
        prog="tether",
        description="A coding agent in your editor. Print mode: tether -p PROMPT [flags] "
        "(see tether run --help for the flags).",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    parser.add_argument(
        "--log-level",
        help="logging level (default WARNING); print mode logs to the daemon's log file "
        "(tether doctor names it), and to stderr too when this is given",
    )
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

    attach = sub.add_parser(
        "attach", help="follow a session another client drives (in the warm daemon)"
    )
    attach.add_argument("session", metavar="SESSION_ID")
    attach.add_argument("--cwd", help="its workspace root (default: the current directory)")

    sessions = sub.add_parser("sessions", help="list sessions, newest first")
    sessions.add_argument("--cwd", help="workspace root (default: current directory)")
    sessions.add_argument("--all", action="store_true", help="sessions of every workspace")
    sessions.add_argument("--limit", type=int, default=50)

    from tether.cli.doctor.command import add_parser as add_doctor_parser
    from tether.daemon.commands import add_parser as add_daemon_parser

    add_doctor_parser(sub)
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


def _is_print_mode(argv: Sequence[str]) -> bool:
    wants_help = bool({"-h", "--help", "--version"} & set(argv))
    printing = bool({"-p", "--print"} & set(argv))
    return _command_index(argv) is None and (printing or not wants_help)


def uses_daemon(argv: Sequence[str], env: Mapping[str, str]) -> bool:
    """Whether this command line runs in the warm daemon: a print-mode run (``-p``, a
    stream-json format, or ``run``) without ``--no-daemon`` or ``TETHER_NO_DAEMON=1``."""
    if env.get(NO_DAEMON_ENV, "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    if "--no-daemon" in argv or {"-h", "--help", "--version"} & set(argv):
        return False
    index = _command_index(argv)
    if index is None:
        return bool({"-p", "--print"} & set(argv)) or any(
            a.split("=")[0] in _DRIVING_FLAGS for a in argv
        )
    return argv[index] == "run"


def _lost_directory(argv: Sequence[str]) -> str | None:
    """One clear line when the working directory is gone (deleted or moved away) and the
    command would work in it; None when it is there or the command needs none."""
    index = _command_index(argv)
    command = "run" if index is None else argv[index]
    if command not in IN_DIRECTORY or {"-h", "--help", "--version"} & set(argv):
        return None
    if command == "sessions" and "--all" in argv:
        return None
    if any(os.path.isabs(path) for path in _cwd_values(argv)):
        return None
    try:
        os.getcwd()
    except OSError as e:
        return (
            f"tether: the current directory cannot be read ({e.strerror or e}): it was "
            "deleted or moved away. cd to an existing directory (or name one with --cwd) and run "
            "again."
        )
    return None


def _cwd_values(argv: Sequence[str]) -> list[str]:
    """The directories ``--cwd`` names on the command line (``--cwd DIR``, ``--cwd=DIR``)."""
    found: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--cwd" and i + 1 < len(argv):
            found.append(argv[i + 1])
        elif arg.startswith("--cwd="):
            found.append(arg.removeprefix("--cwd="))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    lost = _lost_directory(args_list)
    if lost is not None:
        print(lost, file=sys.stderr)
        return 1
    if uses_daemon(args_list, os.environ):
        from tether.cli.remote import run_remote

        outcome = run_remote(args_list)
        if isinstance(outcome, int):
            return outcome
        _prepare_run(args_list)
        code = run_local(args_list)
        if outcome.start_daemon:
            _start_daemon("--verbose" in args_list)
        return code
    _prepare_run(args_list)
    return run_local(args_list)


def _prepare_run(argv: Sequence[str]) -> None:
    """A model run in this process (not a listing, not help): its imports first, kept out of
    the cyclic GC's way (``warmup.import_for_run``)."""
    index = _command_index(argv)
    runs = argv[index] == "run" if index is not None else _is_print_mode(argv)
    if runs and not {"-h", "--help", "--version"} & set(argv):
        from tether.warmup import import_for_run

        import_for_run()


def _start_daemon(verbose: bool) -> None:
    """After an in-process run: start the daemon for the next call (best effort; a failure
    is said on a terminal, or with ``--verbose``)."""
    from tether.daemon.client import start_in_background

    try:
        start_in_background()
    except OSError as e:
        if verbose or sys.stderr.isatty():
            print(f"[tether] the daemon could not start: {e}", file=sys.stderr)


OnOpen = Callable[["SessionFacts"], None]


def run_local(
    argv: Sequence[str], *, cwd: Path | None = None, on_open: OnOpen | None = None
) -> int:
    """The command line run in this process (the daemon runs print mode with this too):
    ``cwd`` is the caller's directory (None: this process's), ``on_open`` hears of the
    session print mode opens."""
    from tether.cli.flags import UsageError

    args_list = list(argv)
    try:
        if _is_print_mode(args_list):
            return _print_mode(args_list, cwd, on_open)
        args = build_parser().parse_args(args_list)
        if args.command == "run":
            return run_print_mode(args, cwd=cwd, on_open=on_open)
        return _subcommand(args)
    except UsageError as e:
        print(f"tether: {e}", file=sys.stderr)
        return 2


def _print_mode(argv: list[str], cwd: Path | None, on_open: OnOpen | None) -> int:
    from tether.cli.flags import UsageError, print_parser

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
    return run_print_mode(args, cwd=cwd, on_open=on_open)


def run_print_mode(
    args: argparse.Namespace, *, cwd: Path | None = None, on_open: OnOpen | None = None
) -> int:
    import asyncio

    from tether.cli.callenv import interruptible, served_env
    from tether.cli.flags import print_options
    from tether.cli.inprocess import InProcessDriver
    from tether.cli.logs import noting, print_logging
    from tether.cli.render import json_lines, talkative
    from tether.cli.run import run_print
    from tether.cli.sdk_mode import SdkMode
    from tether.errors import ConfigError, SessionError

    print_logging(args.log_level)
    options = print_options(args, cwd)
    driver = InProcessDriver(
        setting_sources=options.setting_sources, env=served_env(), on_open=on_open
    )
    try:
        with noting(talkative(sys.stderr, options.verbose)):
            if options.input_format == "stream-json":
                return asyncio.run(
                    interruptible(SdkMode(options, driver, json_lines(sys.stdout)).run())
                )
            return asyncio.run(interruptible(run_print(options, driver)))
    except (ConfigError, SessionError) as e:
        print(f"tether: {e}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl+C (the daemon's: cancelled)
        return 130
    except BrokenPipeError:  # the reader of stdout went away (`tether -p ... | head -1`)
        from tether.cli.render import quiet_stdout

        quiet_stdout()
        return 1


def _subcommand(args: argparse.Namespace) -> int:
    from tether.cli.logs import stderr_logging

    stderr_logging(args.log_level)
    if args.command == "serve" and args.connect:
        from tether.daemon.proxy import proxy

        return proxy()
    if args.command == "daemon":
        from tether.daemon.commands import daemon_command

        return daemon_command(args, run_command=run_local)
    if args.command == "serve":
        from tether.lsp.main import serve

        return serve(tcp=args.tcp)
    if args.command == "demo":
        from tether.cli.demo import demo_command

        return demo_command(args)
    if args.command == "doctor":
        from tether.cli.doctor.command import doctor_command

        return doctor_command(args)
    if args.command == "attach":
        from tether.cli.attach import attach_command

        return attach_command(args)
    if args.command == "sessions":
        from tether.cli.sessions import sessions_command

        return sessions_command(args)
    if args.command == "acp":
        from tether.acp.main import serve as serve_acp

        return serve_acp(model=args.model)
    return 2
