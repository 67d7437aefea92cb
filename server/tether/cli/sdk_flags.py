"""Command-line flags the Agent SDKs pass that only they use.

The SDKs build Claude Code's command line from a program's options
(``subprocess_cli.py`` in the Python SDK, ``ProcessTransport`` in the TypeScript SDK). Tether
takes every flag they can pass: some it acts on (``flags.py``), some it takes without effect
and says so once on stderr (``NOTED_FLAGS``: they only shape what is shown or sent), and some
it refuses with a one-line reason (``REFUSED_FLAGS``: each changes what the program relies
on, so running without it would mislead).
"""

from __future__ import annotations

import argparse

REFUSED_FLAGS = {
    "--json-schema": "structured output is not supported: ask for JSON in the prompt",
    "--agent": "a main-thread agent is not supported: define it with --agents and ask for it",
    "--resume-session-at": "resuming at a message is not supported: resume the whole session",
    "--resume-drops-turn": "resuming at a message is not supported: resume the whole session",
    "--plugin-dir": "Tether has no plugins",
    "--plugin-dir-no-mcp": "Tether has no plugins",
    "--session-mirror": "a session store is not supported: transcripts stay in Tether's data dir",
    "--no-session-persistence": "Tether always keeps the transcript (it is how sessions resume)",
    "--managed-settings": "managed settings are not read from the command line: use --settings",
    "--managed-settings-in-initialize": "managed settings from a program are not supported",
    "--task-budget": "task budgets are not supported: use --max-budget-usd",
    "--channels": "channels belong to Claude's hosted sessions",
    "--project-config-root": "the project's configuration is read from the workspace itself",
    "--permission-prompts": "use --permission-prompt-tool (stdio or an MCP tool)",
}
"""Flags the Agent SDKs may pass that Tether refuses, naming why: each changes what the
program relies on, so running without it would mislead."""
NOTED_FLAGS = {
    "--effort": "Tether sends no effort level: the model's default applies",
    "--betas": "Tether chooses the API's beta headers itself",
    "--thinking-display": "thinking is streamed as the model writes it",
    "--include-hook-events": "hook runs are not streamed as messages",
}
"""Flags taken without effect (each only shapes what is shown or sent, not what runs)."""


def _dest(flag: str) -> str:
    return "flag_" + flag.removeprefix("--").replace("-", "_")


def add_sdk_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--initialize-fields", metavar="FIELDS", help=argparse.SUPPRESS)
    parser.add_argument(
        "--allow-dangerously-skip-permissions", action="store_true", help=argparse.SUPPRESS
    )
    parser.add_argument("--debug", nargs="?", const="", metavar="FILTER", help=argparse.SUPPRESS)
    parser.add_argument("--debug-file", metavar="FILE", help=argparse.SUPPRESS)
    for flag in (*REFUSED_FLAGS, *NOTED_FLAGS):
        parser.add_argument(
            flag, nargs="?", const="", dest=_dest(flag), default=None, help=argparse.SUPPRESS
        )


def refused_flag(args: argparse.Namespace) -> str | None:
    """The message for the first refused flag given, if any."""
    for flag, reason in REFUSED_FLAGS.items():
        if getattr(args, _dest(flag)) is not None:
            return f"{flag} is not supported by Tether: {reason}"
    return None


def flag_notes(args: argparse.Namespace) -> list[str]:
    return [
        f"{flag} has no effect in Tether: {why}"
        for flag, why in NOTED_FLAGS.items()
        if getattr(args, _dest(flag)) is not None
    ]
