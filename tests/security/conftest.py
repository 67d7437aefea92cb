"""Fixtures for the attack suite: a workspace next to a directory it must not reach, the
real tools behind the real permission pipeline, and (where bwrap works) the real sandbox."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tether.core.hooks import Hooks, NoHooks
from tether.core.messages import ToolUseBlock
from tether.editor.disk import DiskEditor
from tether.editor.port import PermissionAnswer, PermissionRequest
from tether.orchestration.pipeline import ToolOutcome, ToolRuntime, run_tool_use
from tether.permissions.plan_mode import EXIT_PLAN_MODE_TOOL
from tether.permissions.policy import Decision, RuleSet, decide
from tether.protocol.updates import Mode, SessionUpdate
from tether.sandbox import BwrapSandbox
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState, ToolConfig, ToolContext
from tether.tools.registry import core_tools

needs_bwrap = pytest.mark.needs_sandbox
"""Skips only where bubblewrap is not installed and CI does not require it (tests/conftest)."""
TOOLS = {t.name: t for t in [*core_tools(), EXIT_PLAN_MODE_TOOL]}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('hi')\n")
    return Path(os.path.realpath(ws))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the workspace holding a secret and a dotfile."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("TOP SECRET\n")
    (out / ".bashrc").write_text("# rc\n")
    return Path(os.path.realpath(out))


SECRET = "TETHER-CANARY-SECRET-4f1c"
"""Written into every secret file of the fake home: it must never come back."""
HOME_SECRETS = (
    ".ssh/id_rsa",
    ".aws/credentials",
    ".netrc",
    ".bash_history",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    "notes.txt",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The user's home directory (``$HOME``), holding secrets and a git identity. Outside
    ``/tmp`` when possible: the sandbox has a private ``/tmp``, which would hide a home
    there whatever the settings say."""
    base = Path("/var/tmp")
    made = (
        Path(tempfile.mkdtemp(prefix="tether-home-", dir=base))
        if os.access(base, os.W_OK)
        else None
    )
    root = (made or tmp_path) / "home"
    for rel in HOME_SECRETS:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{SECRET} in {rel}\n")
    (root / ".gitconfig").write_text("[user]\n\tname = Tester\n\temail = tester@example.com\n")
    monkeypatch.setenv("HOME", str(root))
    yield Path(os.path.realpath(root))
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture
async def tasks(tmp_path: Path) -> AsyncIterator[TaskRegistry]:
    registry = TaskRegistry(tmp_path / "tasks")
    yield registry
    await registry.shutdown()


@dataclass
class Answers:
    """The user: answers every permission question the same way, and remembers them."""

    answer: PermissionAnswer = "allow_once"
    asked: list[PermissionRequest] = field(default_factory=lambda: list[PermissionRequest]())

    async def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request)
        return self.answer


@dataclass
class Harness:
    """One session's worth of tools behind the pipeline."""

    ctx: ToolContext
    answers: Answers
    rules: RuleSet
    hooks: Hooks
    updates: list[SessionUpdate]
    remembered: list[tuple[str, str]] = field(default_factory=lambda: list[tuple[str, str]]())
    counter: int = 0

    def runtime(self) -> ToolRuntime:
        return ToolRuntime(
            session_id="sec",
            tools=TOOLS,
            rules=self.rules,
            hooks=self.hooks,
            make_context=lambda _id: self.ctx,
            remember_rule=lambda kind, rule: self.remembered.append((kind, rule)),
        )

    async def call(self, tool: str, **raw: Any) -> ToolOutcome:
        self.counter += 1
        use = ToolUseBlock(id=f"toolu_{self.counter}", name=tool, input=raw)
        return await run_tool_use(use, self.runtime())

    async def decide(self, tool: str, **raw: Any) -> Decision:
        parsed = TOOLS[tool].parse(raw)
        assert not isinstance(parsed, str), parsed
        return await decide(TOOLS[tool], parsed, self.ctx, self.rules)

    async def read(self, path: str) -> ToolOutcome:
        return await self.call("Read", file_path=path)


MakeHarness = Callable[..., Harness]


@pytest.fixture
def make_harness(workspace: Path, tasks: TaskRegistry) -> MakeHarness:
    def make(
        *,
        mode: Mode = "default",
        allow: tuple[str, ...] = (),
        ask: tuple[str, ...] = (),
        deny: tuple[str, ...] = (),
        answer: PermissionAnswer = "allow_once",
        hooks: Hooks | None = None,
        sandbox: bool = True,
        linger_s: float = 0,
    ) -> Harness:
        answers = Answers(answer)
        updates: list[SessionUpdate] = []
        config = ToolConfig()
        if sandbox:
            config.shell_sandbox = BwrapSandbox(workspace, linger_s=linger_s)
        else:
            config.sandbox = False
        ctx = ToolContext(
            session_id="sec",
            tool_use_id="toolu_sec",
            cwd=workspace,
            editor=DiskEditor(answers),
            state=SessionRunState(mode=mode),
            config=config,
            tasks=tasks,
            emit=updates.append,
        )
        rules = RuleSet.from_strings(allow, ask, deny)
        return Harness(ctx, answers, rules, hooks or NoHooks(), updates)

    return make


Bash = Callable[[str], Awaitable[ToolOutcome]]


def text_of(outcome: ToolOutcome) -> str:
    return outcome.block.text
