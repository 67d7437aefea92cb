"""Print mode's command line: Claude Code's ``-p`` flags, read into ``PrintOptions``.

``tether -p PROMPT`` and ``tether run PROMPT`` take the same flags. Everything is checked
here, before a session exists: an unknown flag, a bad value, an unreadable
``--mcp-config`` or ``--settings``, a missing ``--add-dir`` is one line naming what is wrong
and how to fix it (``UsageError``), and nothing is left behind.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn, cast

from tether.cli.sdk_flags import add_sdk_flags, flag_notes, refused_flag
from tether.core.json_input import parse_json
from tether.protocol.updates import MODES, Mode
from tether.settings.load import ALL_SOURCES, SettingSources

OutputFormat = Literal["text", "json", "stream-json", "tether-json"]
InputFormat = Literal["text", "stream-json"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("text", "json", "stream-json", "tether-json")
INPUT_FORMATS: tuple[InputFormat, ...] = ("text", "stream-json")
STDIO_PROMPT_TOOL = "stdio"
"""``--permission-prompt-tool stdio``: questions go to the SDK program (``can_use_tool``)."""


class UsageError(Exception):
    """A command line Tether cannot run; the message is one line naming the problem."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``UsageError``) instead of usage text and exit."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            unknown = message.removeprefix("unrecognized arguments: ").split()[0]
            raise UsageError(f"unknown option {unknown} (see tether --help)")
        raise UsageError(message)


@dataclass(frozen=True)
class PrintOptions:
    prompt: str | None
    cwd: Path
    input_format: InputFormat = "text"
    output_format: OutputFormat = "text"
    partial: bool = False
    verbose: bool = False
    resume: str | None = None
    continue_latest: bool = False
    session_id: str | None = None
    recover: bool = False
    model: str | None = None
    fallback_model: str | None = None
    mode: Mode | None = None
    allow: list[str] = field(default_factory=lambda: list[str]())
    deny: list[str] = field(default_factory=lambda: list[str]())
    builtin_tools: list[str] | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    settings: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    mcp_servers: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    strict_mcp: bool = False
    permission_prompt_tool: str | None = None
    setting_sources: SettingSources = ALL_SOURCES
    """``--setting-sources``: which settings files load (all when the flag is absent)."""
    fork: bool = False
    """``--fork-session``: continue a copy of the resumed session under a new id."""
    await_initialize: bool = False
    """``--await-initialize``: the program's ``initialize`` comes before anything runs."""
    notes: list[str] = field(default_factory=lambda: list[str]())
    """Flags taken but without effect in Tether, said once on stderr."""


def split_tools(values: Sequence[str] | None) -> list[str]:
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
            if depth == 0 and ch in ", ":
                if word.strip():
                    out.append(word.strip())
                word = ""
            else:
                word += ch
        if word.strip():
            out.append(word.strip())
    return out


def add_print_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", nargs="?", help="the prompt ('-' or absent: read stdin)")
    parser.add_argument("--cwd", help="workspace root (default: the current directory)")
    parser.add_argument(
        "--input-format", choices=INPUT_FORMATS, default="text", help="text, or stream-json lines"
    )
    parser.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text")
    parser.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="with stream-json: also the model's stream events",
    )
    parser.add_argument("--verbose", action="store_true", help="show tool output and thinking")
    parser.add_argument("-c", "--continue", dest="continue_latest", action="store_true")
    parser.add_argument("-r", "--resume", nargs="?", const="", metavar="SESSION_ID")
    parser.add_argument("--session-id", metavar="UUID", help="the id of the new session")
    parser.add_argument(
        "--recover",
        action="store_true",
        help="with --resume: continue a damaged transcript from its last good point",
    )
    parser.add_argument(
        "--model",
        help="sonnet | opus | haiku | claude-... | openai:<model>@<url> | scripted:<file>",
    )
    parser.add_argument("--fallback-model", help="used when the model is overloaded")
    parser.add_argument(
        "--thinking",
        choices=["auto", "adaptive", "enabled", "off", "disabled"],
        help="extended thinking (default: the modelOptions.thinking setting, else auto: "
        "on for models that support it)",
    )
    parser.add_argument(
        "--max-thinking-tokens", type=int, metavar="N", help="thinking budget (0: no thinking)"
    )
    parser.add_argument("--max-turns", type=int, metavar="N", help="model requests per turn")
    parser.add_argument("--max-budget-usd", type=float, metavar="USD")
    parser.add_argument("--permission-mode", choices=MODES)
    parser.add_argument(
        "--dangerously-skip-permissions",
        action="store_true",
        help="the same as --permission-mode bypassPermissions",
    )
    parser.add_argument(
        "--allowedTools", "--allowed-tools", action="append", dest="allowed_tools", default=[]
    )
    parser.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        action="append",
        dest="disallowed_tools",
        default=[],
    )
    parser.add_argument(
        "--tools", help='the built-in tools the model gets: "default", "" (none), or a list'
    )
    parser.add_argument("--system-prompt")
    parser.add_argument("--system-prompt-file")
    parser.add_argument("--append-system-prompt")
    parser.add_argument("--append-system-prompt-file")
    parser.add_argument(
        "--mcp-config", action="append", nargs="+", default=[], metavar="FILE_OR_JSON"
    )
    parser.add_argument("--strict-mcp-config", action="store_true")
    parser.add_argument("--add-dir", action="append", nargs="+", default=[], metavar="DIR")
    parser.add_argument("--settings", metavar="FILE_OR_JSON")
    parser.add_argument("--setting-sources", metavar="SOURCES", help="user,project,local")
    parser.add_argument("--permission-prompt-tool", metavar="NAME")
    parser.add_argument(
        "--fork-session", action="store_true", help="with --resume: continue a copy, new id"
    )
    parser.add_argument(
        "--await-initialize",
        action="store_true",
        help="with stream-json input: wait for the program's initialize request",
    )
    add_sdk_flags(parser)
    parser.add_argument(
        "--no-daemon",
        action="store_true",
        help="run in this process, not in the warm daemon (also: TETHER_NO_DAEMON=1)",
    )


def print_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tether",
        description="Run one prompt headless (Claude Code's -p).",
        allow_abbrev=False,
    )
    parser.add_argument("-p", "--print", action="store_true", dest="print_mode")
    parser.add_argument(
        "--log-level",
        help="logging level (default WARNING): to the log file tether doctor names, and "
        "to stderr too when this is given",
    )
    add_print_flags(parser)
    return parser


def _json_or_file(value: str, flag: str, cwd: Path) -> dict[str, Any]:
    text = value.strip()
    if text.startswith(("{", "[")):
        source = "the JSON given"
    else:
        path = Path(value).expanduser()
        path = path if path.is_absolute() else cwd / path
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as e:
            raise UsageError(
                f"{flag} {value}: cannot read the file ({e.strerror or e}); pass a JSON "
                "object or the path of a JSON file"
            ) from None
    try:
        data = parse_json(text)
    except ValueError as e:
        raise UsageError(f"{flag}: {source} is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{flag}: {source} must be a JSON object")
    return cast(dict[str, Any], data)


def _mcp_servers(values: Sequence[str], cwd: Path) -> dict[str, Any]:
    servers: dict[str, Any] = {}
    for value in values:
        data = _json_or_file(value, "--mcp-config", cwd)
        found: Any = data.get("mcpServers")
        if not isinstance(found, dict):
            raise UsageError(
                f'--mcp-config {value}: expected {{"mcpServers": {{"name": {{...}}}}}}'
            )
        servers.update(cast(dict[str, Any], found))
    return servers


def _read_text(value: str | None, flag: str, cwd: Path) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    path = path if path.is_absolute() else cwd / path
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{flag} {value}: cannot read the file ({e.strerror or e})") from None


def _builtin_tools(value: str | None) -> list[str] | None:
    if value is None or value.strip() == "default":
        return None
    return split_tools([value])


def _add_dirs(values: Sequence[str], cwd: Path, notes: list[str]) -> list[str]:
    """The directories that exist; one that does not is passed over with a note, as
    Claude Code does (a program naming a folder it has not made yet must still run)."""
    out: list[str] = []
    for value in values:
        path = Path(value).expanduser()
        path = (path if path.is_absolute() else cwd / path).resolve()
        if not path.is_dir():
            notes.append(f"--add-dir {value}: no such directory; left out")
            continue
        out.append(str(path))
    return out


def _check(args: argparse.Namespace) -> None:
    refused = refused_flag(args)
    if refused is not None:
        raise UsageError(refused)
    streaming_in = args.input_format == "stream-json"
    if streaming_in and args.output_format != "stream-json":
        raise UsageError("--input-format stream-json needs --output-format stream-json")
    if args.include_partial_messages and args.output_format != "stream-json":
        raise UsageError("--include-partial-messages needs --output-format stream-json")
    if args.resume is not None and args.continue_latest:
        raise UsageError("--resume and --continue exclude each other: pick one")
    if args.resume == "":
        raise UsageError("--resume needs a session id here (list them with: tether sessions)")
    if args.session_id is not None:
        try:
            uuid.UUID(args.session_id)
        except ValueError:
            raise UsageError(f"--session-id {args.session_id}: not a valid UUID") from None
        if (args.resume is not None or args.continue_latest) and not args.fork_session:
            raise UsageError(
                "--session-id names a new session: it goes with --resume only to name a "
                "fork (--fork-session)"
            )
    if args.max_turns is not None and args.max_turns < 1:
        raise UsageError("--max-turns must be 1 or more")
    if args.max_budget_usd is not None and args.max_budget_usd <= 0:
        raise UsageError("--max-budget-usd must be more than 0")
    tool = args.permission_prompt_tool
    if tool == STDIO_PROMPT_TOOL and not streaming_in:
        raise UsageError("--permission-prompt-tool stdio needs --input-format stream-json")
    if tool is not None and tool != STDIO_PROMPT_TOOL and not tool.startswith("mcp__"):
        raise UsageError(
            f"--permission-prompt-tool {tool}: expected stdio or an MCP tool (mcp__server__tool)"
        )
    if args.system_prompt is not None and args.system_prompt_file is not None:
        raise UsageError("--system-prompt and --system-prompt-file exclude each other")
    if args.fork_session and args.resume is None and not args.continue_latest:
        raise UsageError("--fork-session needs --resume or --continue (the session to copy)")
    if args.await_initialize and not streaming_in:
        raise UsageError("--await-initialize needs --input-format stream-json")
    if args.max_thinking_tokens is not None and args.max_thinking_tokens < 0:
        raise UsageError("--max-thinking-tokens must be 0 (no thinking) or more")


def print_options(args: argparse.Namespace, base: Path | None = None) -> PrintOptions:
    """Check and resolve the parsed flags; raises ``UsageError``. ``base``: the directory
    relative paths are relative to (the caller's; None: this process's)."""
    _check(args)
    cwd = ((base or Path.cwd()) / Path(args.cwd or ".").expanduser()).resolve()
    if not cwd.is_dir():
        raise UsageError(f"--cwd {args.cwd}: no such directory")
    settings = _json_or_file(args.settings, "--settings", cwd) if args.settings else {}
    dir_notes: list[str] = []
    dirs = _add_dirs([d for group in args.add_dir for d in group], cwd, dir_notes)
    if dirs:
        permissions = dict(settings.get("permissions") or {})
        permissions["additionalDirectories"] = [
            *permissions.get("additionalDirectories", []),
            *dirs,
        ]
        settings = {**settings, "permissions": permissions}
    model_options = dict(settings.get("modelOptions") or {})
    if args.thinking:
        model_options["thinking"] = "off" if args.thinking == "disabled" else args.thinking
    if args.max_thinking_tokens == 0:
        model_options["thinking"] = "off"
    elif args.max_thinking_tokens is not None:
        budget = max(args.max_thinking_tokens, 1024)
        model_options |= {"thinking": "enabled", "thinkingBudget": budget}
    if model_options:
        settings = {**settings, "modelOptions": model_options}
    mode: Mode | None = args.permission_mode
    if args.dangerously_skip_permissions:
        mode = "bypassPermissions"
    try:
        # Absent: every file; given, even empty (the SDKs' ``settingSources: []``): those.
        sources = (
            ALL_SOURCES
            if args.setting_sources is None
            else SettingSources.parse(args.setting_sources)
        )
    except ValueError as e:
        raise UsageError(f"--setting-sources: {e}") from None
    appended = _read_text(args.append_system_prompt_file, "--append-system-prompt-file", cwd)
    return PrintOptions(
        prompt=args.prompt,
        cwd=cwd,
        input_format=args.input_format,
        output_format=args.output_format,
        partial=args.include_partial_messages,
        verbose=args.verbose,
        resume=args.resume,
        continue_latest=args.continue_latest,
        session_id=args.session_id,
        recover=args.recover,
        model=args.model,
        fallback_model=args.fallback_model,
        mode=mode,
        allow=split_tools(args.allowed_tools),
        deny=split_tools(args.disallowed_tools),
        builtin_tools=_builtin_tools(args.tools),
        max_turns=args.max_turns,
        max_budget_usd=args.max_budget_usd,
        system_prompt=args.system_prompt
        if args.system_prompt is not None
        else _read_text(args.system_prompt_file, "--system-prompt-file", cwd),
        append_system_prompt="\n\n".join(p for p in (args.append_system_prompt, appended) if p)
        or None,
        settings=settings,
        mcp_servers=_mcp_servers([v for group in args.mcp_config for v in group], cwd),
        strict_mcp=args.strict_mcp_config,
        permission_prompt_tool=args.permission_prompt_tool,
        setting_sources=sources,
        fork=args.fork_session,
        await_initialize=args.await_initialize,
        notes=[*flag_notes(args), *dir_notes],
    )
