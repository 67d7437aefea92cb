"""Assemble what goes to the model: system prompt sections, tools and the message history.

The system prompt is a static prefix (identity, tool guidance, output style: byte-identical
across turns and sessions, cached) followed by the dynamic part (environment, project
instructions and extra sections: per session, cached after the prefix). The newest message
carries the history breakpoint so turn N+1 reads turn N from the cache.

Which identity is used follows the chain override -> agent -> custom -> default: the first
one given wins (a subagent swaps in its own; the user may configure a custom one).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import operator
import platform
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether import prompts
from tether.context.instructions import instructions_section, load_instructions
from tether.core.environ import environ_of, process_env
from tether.core.messages import Block, Message
from tether.providers.base import ModelRequest, SystemBlock, ToolSpec

STATIC_SECTIONS = ("system/identity.md", "system/tools.md", "system/style.md")


def choose_identity(
    override: str | None = None, agent: str | None = None, custom: str | None = None
) -> str:
    for candidate in (override, agent, custom):
        if candidate and candidate.strip():
            return candidate
    return prompts.load(STATIC_SECTIONS[0])


def static_prompt(identity: str | None = None) -> str:
    """The cacheable prefix: the identity, then tool guidance and output style."""
    sections = [identity or prompts.load(STATIC_SECTIONS[0])]
    sections += [prompts.load(name) for name in STATIC_SECTIONS[1:]]
    return "\n\n".join(s.strip() for s in sections)


def git_summary(cwd: Path, env: Mapping[str, str] | None = None) -> str:
    """Branch and a short status, or 'not a git repository'. Run once per session, with
    ``env`` (the caller's environment; None: this process's)."""
    try:
        branch = subprocess.run(
            ["git", "-C", str(cwd), "rev-parse", "--abbrev-ref", "HEAD"],
            capture_output=True,
            text=True,
            timeout=2,
            env=env,
        )
        if branch.returncode != 0:
            return "not a git repository"
        status = subprocess.run(
            ["git", "-C", str(cwd), "status", "--porcelain"],
            capture_output=True,
            text=True,
            timeout=2,
            env=env,
        )
        changed = len([line for line in status.stdout.splitlines() if line.strip()])
        return f"branch {branch.stdout.strip()}, {changed} changed file(s)"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def user_shell(caller: Mapping[str, str] | None) -> str:
    """The shell of the user a session works for: its caller's ``SHELL`` (None: this
    process's), ``/bin/sh`` when it has none; never the daemon's."""
    return environ_of(caller).get("SHELL") or "/bin/sh"


def environment_prompt(cwd: Path, model: str, git: str, shell: str) -> str:
    return prompts.render(
        "system/environment.md",
        cwd=cwd,
        platform=f"{platform.system()} {platform.release()}",
        shell=shell,
        date=dt.date.today().isoformat(),
        model=model,
        git=git,
    ).strip()


@dataclass(frozen=True)
class PromptInputs:
    """What a session's system prompt is made from, as it stood when the build started."""

    cwd: Path
    model: str
    override: str | None
    agent: str | None
    custom: str | None
    instructions: bool
    extra_sections: tuple[str, ...]
    caller: Mapping[str, str] | None


def build_system(inputs: PromptInputs) -> list[SystemBlock]:
    """The system prompt of ``inputs``: runs ``git`` and reads instruction files, so a
    session's event loop runs it in a thread (``ContextAssembler.prepare``)."""
    caller = inputs.caller
    git_env = None if caller is None else process_env(caller, credentials=False)
    env = environment_prompt(
        inputs.cwd, inputs.model, git_summary(inputs.cwd, git_env), user_shell(caller)
    )
    sections = [env]
    if inputs.instructions:
        sections.append(instructions_section(load_instructions(inputs.cwd, caller=caller)))
    dynamic = "\n\n".join(s for s in [*sections, *inputs.extra_sections] if s)
    identity = choose_identity(inputs.override, inputs.agent, inputs.custom)
    return [SystemBlock(static_prompt(identity), cache=True), SystemBlock(dynamic, cache=True)]


@dataclass
class ContextAssembler:
    """Builds each ModelRequest of a session. The system prompt is made once (then kept
    byte for byte until ``invalidate``): ``prepare`` makes it off the event loop, before the
    request needs it."""

    cwd: Path
    model: str
    max_tokens: int = 16000
    override: str | None = None
    agent: str | None = None
    custom: str | None = None
    instructions: bool = True
    """Include AGENTS.md / CLAUDE.md project instructions."""
    extra_sections: list[str] = field(default_factory=lambda: list[str]())
    caller: Mapping[str, str] | None = None
    """The variables of the user the session works for (the warm daemon's client's: its
    ``SHELL``, the environment of the git it runs); None: this process's."""
    _system: list[SystemBlock] | None = None
    _version: int = 0
    """Counts ``invalidate`` calls: a build that started before one is not kept."""
    _merged: MergedHistory = field(default_factory=lambda: MergedHistory())

    def inputs(self) -> PromptInputs:
        return PromptInputs(
            cwd=self.cwd,
            model=self.model,
            override=self.override,
            agent=self.agent,
            custom=self.custom,
            instructions=self.instructions,
            extra_sections=tuple(self.extra_sections),
            caller=self.caller,
        )

    async def prepare(self) -> None:
        """Make the system prompt in a thread unless it is made (returns at once then,
        without yielding to the loop). What changed meanwhile (``invalidate``) makes it
        again from the new inputs."""
        while self._system is None:
            version = self._version
            built = await asyncio.to_thread(build_system, self.inputs())
            if self._system is None and version == self._version:
                self._system = built

    def system(self) -> list[SystemBlock]:
        """The system prompt; made here, on the caller's thread, if ``prepare`` has not."""
        if self._system is None:
            self._system = build_system(self.inputs())
        return self._system

    def invalidate(self) -> None:
        """Rebuild the system prompt on the next request (model or sections changed)."""
        self._system = None
        self._version += 1

    def request(self, messages: Sequence[Message], tools: list[ToolSpec]) -> ModelRequest:
        return ModelRequest(
            model=self.model,
            system=self.system(),
            messages=self._merged.merge(messages),
            tools=tools,
            max_tokens=self.max_tokens,
        )


def merge_consecutive(messages: Sequence[Message]) -> list[Message]:
    """Join neighbouring messages of the same role (tool results + attachments, an
    interrupted turn followed by a new prompt) so roles alternate; tool results first."""
    merged: list[Message] = []
    for message in messages:
        if merged and merged[-1].role == message.role:
            prev = merged[-1]
            content: list[Block] = [*prev.content, *message.content]
            if message.role == "user":
                content.sort(key=lambda b: 0 if b.type == "tool_result" else 1)
            merged[-1] = Message(role=prev.role, content=content)
        else:
            merged.append(message)
    return merged


class MergedHistory:
    """``merge_consecutive`` for a history that grows at the end: groups that cannot change
    any more (a message of the other role follows them) are kept with their merged message,
    so each request merges only the newest messages and a merged message stays the same
    object from request to request (the provider's encoding cache keys on it)."""

    def __init__(self) -> None:
        self._sources: list[Message] = []
        """The history messages the kept groups were merged from, in order."""
        self._merged: list[Message] = []

    def merge(self, messages: Sequence[Message]) -> list[Message]:
        done = len(self._sources)
        if done > len(messages) or not all(map(operator.is_, self._sources, messages)):
            self._sources, self._merged, done = [], [], 0
        groups = _groups(messages[done:])
        tail = [_merged(group) for group in groups]
        out = [*self._merged, *tail]
        for group, merged in zip(groups[:-1], tail[:-1], strict=True):
            self._sources.extend(group)
            self._merged.append(merged)
        return out


def _groups(messages: Sequence[Message]) -> list[list[Message]]:
    groups: list[list[Message]] = []
    for message in messages:
        if groups and groups[-1][-1].role == message.role:
            groups[-1].append(message)
        else:
            groups.append([message])
    return groups


def _merged(group: list[Message]) -> Message:
    if len(group) == 1:
        return group[0]
    return merge_consecutive(group)[0]
