"""Token estimates: by script (CJK is about a token a character), and anchored on the last
response's usage rather than re-estimated over the whole history."""

from __future__ import annotations

from pathlib import Path

from tether.context.tokens import estimate_text
from tether.editor.disk import DiskEditor
from tether.engine.engine import QueryEngine
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.tasks.registry import TaskRegistry


def test_cjk_text_is_not_undercounted() -> None:
    chinese = "上下文窗口的大小决定了模型一次能看到多少内容。" * 40  # 920 characters
    assert estimate_text(chinese) >= 900  # 3.5 characters a token would say 263
    assert estimate_text("hello world " * 100) == 343
    russian = "контекстное окно " * 50
    assert 400 <= estimate_text(russian) <= 450


async def test_context_size_is_the_last_usage_plus_what_came_after(tmp_path: Path) -> None:
    usage = {"input_tokens": 40_000, "cache_read_input_tokens": 10_000, "output_tokens": 30}
    script = [{"blocks": [{"type": "text", "text": "ok"}], "usage": usage}]
    engine = QueryEngine(
        session_id="s1",
        cwd=tmp_path,
        provider=ScriptedProvider(parse_script(script)),
        tools=[],
        editor=DiskEditor(),
        tasks=TaskRegistry(tmp_path / "tasks"),
    )
    await engine.run("hello")
    compactor = engine.compactor
    assert compactor.context_tokens(engine) == 50_030  # the API's count, not an estimate
    from tether.core.messages import user_text

    engine.messages.append(user_text("x" * 350))
    assert compactor.context_tokens(engine) == 50_030 + 100 + 4  # plus the new message only
    engine.messages[:] = engine.messages[-1:]  # the history rewritten: estimate again
    assert compactor.context_tokens(engine) < 10_000
    await engine.close()
