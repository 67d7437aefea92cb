"""Prompt expansion before a turn, as Claude Code defines it for slash commands.

    expanded = await expand_prompt(blocks, cwd=root, commands=found, run_shell=run, mcp=src)

- ``/name args`` in the first text block becomes the command's prompt: ``$ARGUMENTS``,
  ``$1``… substituted (``commands.Command``); then, in that text only, each ``!`cmd```
  is run through ``run_shell`` (the permission pipeline: a denied command does not run,
  and the text says so) and replaced by its output, and each ``@path`` of a file in the
  workspace is attached (the file is read through the editor when the prompt is turned
  into a message, so unsaved text wins).
- ``/mcp__<server>__<prompt> args`` fetches that MCP prompt (positional arguments in the
  prompt's declared order; a missing required one is a ``CommandError``).
- ``@server:uri`` in any prompt, for a connected MCP server, attaches that resource.

A prompt naming no known command passes through unchanged, and text the user typed is never
run: ``!`...``` only counts in command files the user wrote.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tether.errors import SessionError
from tether.protocol.content import ContentBlock, ResourceLink, TextContent
from tether.skills.commands import Command, match

_SHELL = re.compile(r"!`([^`\n]+)`")
_MENTION = re.compile(r"(?:(?<=\s)|^)@(\"[^\"\n]+\"|[^\s\"]+)", re.MULTILINE)
_TRAILING = ".,;:!?)]}'"
_MCP_COMMAND = re.compile(r"^mcp__([A-Za-z0-9_-]+?)__(.+)$")


class CommandError(SessionError):
    """A command that cannot be expanded (missing argument, server down); nothing is sent."""


@dataclass(frozen=True)
class ShellRun:
    ran: bool
    """False when the pipeline refused the command (denied, rejected, invalid)."""
    output: str


RunShell = Callable[[str, Sequence[str]], Awaitable[ShellRun]]
"""Runs one command through the permission pipeline, the command's ``allowed-tools`` counting
as allow rules while it runs."""


@dataclass(frozen=True)
class McpPromptInfo:
    server: str
    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...] = ()
    """(name, required), in the order the server declares them."""

    @property
    def command(self) -> str:
        return f"mcp__{self.server}__{self.name}"


class McpPrompts(Protocol):
    """What expansion needs from the workspace's MCP servers (``tether.mcp.commands``)."""

    def prompts(self) -> list[McpPromptInfo]: ...

    def servers(self) -> list[str]: ...

    async def render_prompt(
        self, server: str, name: str, arguments: dict[str, str]
    ) -> list[ContentBlock]:
        """Raises CommandError when the server cannot give it."""
        ...

    async def resource(self, server: str, uri: str) -> list[ContentBlock]:
        """Raises CommandError when the server cannot give it."""
        ...


@dataclass(frozen=True)
class ExpandedPrompt:
    blocks: list[ContentBlock]
    command: str | None = None
    """The slash command that was expanded, if any."""
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    shell: list[ShellRun] = field(default_factory=lambda: list[ShellRun]())


async def expand_prompt(
    blocks: list[ContentBlock],
    *,
    cwd: Path,
    commands: Sequence[Command],
    run_shell: RunShell,
    mcp: McpPrompts | None = None,
) -> ExpandedPrompt:
    expanded = await _expand_command(blocks, cwd, commands, run_shell, mcp)
    if mcp is not None:
        expanded = ExpandedPrompt(
            await _attach_resources(expanded.blocks, mcp),
            expanded.command,
            expanded.allowed_tools,
            expanded.model,
            expanded.shell,
        )
    return expanded


async def _expand_command(
    blocks: list[ContentBlock],
    cwd: Path,
    commands: Sequence[Command],
    run_shell: RunShell,
    mcp: McpPrompts | None,
) -> ExpandedPrompt:
    if not blocks or not isinstance(blocks[0], TextContent):
        return ExpandedPrompt(blocks)
    rest = blocks[1:]
    found = match(blocks[0].text, commands)
    if found is None:
        prompt = _mcp_call(blocks[0].text, mcp)
        if prompt is None or mcp is None:
            return ExpandedPrompt(blocks)
        info, args = prompt
        rendered = await mcp.render_prompt(info.server, info.name, _prompt_arguments(info, args))
        return ExpandedPrompt([*rendered, *rest], command=info.command)
    command, args = found
    text = command.expand(args)
    runs: list[ShellRun] = []
    for call in _SHELL.finditer(text):
        runs.append(await run_shell(call.group(1).strip(), command.allowed_tools))
    text = _inline_shell(text, runs)
    files = await asyncio.to_thread(mentioned_files, text, cwd)
    attached: list[ContentBlock] = [ResourceLink(uri=f.as_uri(), name=f.name) for f in files]
    return ExpandedPrompt(
        [TextContent(text=text), *attached, *rest],
        command=command.name,
        allowed_tools=command.allowed_tools,
        model=command.model,
        shell=runs,
    )


def _inline_shell(text: str, runs: list[ShellRun]) -> str:
    outputs = iter(runs)

    def replace(m: re.Match[str]) -> str:
        run = next(outputs)
        if run.ran:
            return run.output
        return f"[`{m.group(1).strip()}` was not run: {run.output}]"

    return _SHELL.sub(replace, text)


def mentioned_files(text: str, cwd: Path) -> list[Path]:
    """Workspace files named as ``@path`` (or ``@"path with spaces"``) in ``text``."""
    root = cwd.resolve()
    found: list[Path] = []
    for m in _MENTION.finditer(text):
        raw = m.group(1)
        candidates = [raw[1:-1]] if raw.startswith('"') else [raw, raw.rstrip(_TRAILING)]
        for candidate in dict.fromkeys(candidates):
            path = (root / candidate).resolve()
            if path.is_relative_to(root) and path.is_file():
                if path not in found:
                    found.append(path)
                break
    return found


def _mcp_call(text: str, mcp: McpPrompts | None) -> tuple[McpPromptInfo, str] | None:
    call = re.match(r"\A\s*/(\S+)(.*)\Z", text, re.DOTALL)
    if call is None or mcp is None or _MCP_COMMAND.match(call.group(1)) is None:
        return None
    info = next((p for p in mcp.prompts() if p.command == call.group(1)), None)
    return None if info is None else (info, call.group(2).strip())


def _prompt_arguments(info: McpPromptInfo, args: str) -> dict[str, str]:
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    values: dict[str, str] = {}
    names = [name for name, _ in info.arguments]
    for name, word in zip(names, words, strict=False):
        values[name] = word
    if len(words) > len(names) and names:
        # Extra words belong to the last argument (a sentence for a "text" argument).
        values[names[-1]] = " ".join(words[len(names) - 1 :])
    missing = [name for name, required in info.arguments if required and name not in values]
    if missing:
        usage = " ".join(f"<{n}>" if r else f"[{n}]" for n, r in info.arguments)
        raise CommandError(
            f"/{info.command} needs {', '.join(missing)}: use /{info.command} {usage}"
        )
    return values


async def _attach_resources(blocks: list[ContentBlock], mcp: McpPrompts) -> list[ContentBlock]:
    servers = mcp.servers()
    if not servers:
        return blocks
    mention = re.compile(
        r"(?:(?<=\s)|^)@(" + "|".join(re.escape(s) for s in servers) + r"):(\S+)", re.MULTILINE
    )
    extra: list[ContentBlock] = []
    for block in blocks:
        if not isinstance(block, TextContent):
            continue
        for m in mention.finditer(block.text):
            extra += await mcp.resource(m.group(1), m.group(2).rstrip(_TRAILING))
    return [*blocks, *extra]
