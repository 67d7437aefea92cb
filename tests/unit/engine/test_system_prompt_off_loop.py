"""The system prompt is made off the event loop (it runs ``git`` and reads instruction
files), once, and then sent byte for byte at every request until something it names
changes: a build that started before a change is never the one kept."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from pathlib import Path

import pytest

from tether.engine import context
from tether.engine.context import ContextAssembler, PromptInputs, build_system
from tether.providers.base import SystemBlock


def _text(blocks: list[SystemBlock]) -> str:
    return "\n".join(block.text for block in blocks)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "trunk"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    (root / "CLAUDE.md").write_text("Always answer in haiku.\n", encoding="utf-8")
    return root


async def test_prepare_builds_in_a_thread_and_the_prompt_then_stays_the_same(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    real = context.git_summary

    def git_summary(cwd: Path, env: object = None) -> str:
        threads.append(threading.current_thread())
        return real(cwd)

    monkeypatch.setattr(context, "git_summary", git_summary)
    assembler = ContextAssembler(cwd=repo, model="m")
    await assembler.prepare()
    assert threads and threads[0] is not threading.main_thread()
    first = assembler.system()
    assert "branch trunk" in _text(first) and "Always answer in haiku." in _text(first)
    await assembler.prepare()  # made: nothing runs again
    assert assembler.system() is first and len(threads) == 1
    # The same inputs make the same bytes on the loop's thread too (``system()`` unprepared).
    assert _text(build_system(assembler.inputs())) == _text(first)


async def test_a_change_during_the_build_is_not_lost(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = threading.Event()
    release = threading.Event()
    real = context.build_system

    def slow_build(inputs: PromptInputs) -> list[SystemBlock]:
        if inputs.model == "old-model":
            started.set()
            assert release.wait(10)
        return real(inputs)

    monkeypatch.setattr(context, "build_system", slow_build)
    assembler = ContextAssembler(cwd=repo, model="old-model")
    preparing = asyncio.create_task(assembler.prepare())
    assert await asyncio.to_thread(started.wait, 10)
    assembler.model = "new-model"  # what ``set_provider`` does, while the build runs
    assembler.extra_sections.append("An extra section.")
    assembler.invalidate()
    release.set()
    await preparing
    text = _text(assembler.system())
    assert "new-model" in text and "old-model" not in text
    assert "An extra section." in text


def test_system_without_prepare_still_builds(repo: Path) -> None:
    assembler = ContextAssembler(cwd=repo, model="m")
    assert "branch trunk" in _text(assembler.system())
