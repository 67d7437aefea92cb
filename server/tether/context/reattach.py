"""What survives a summary: the essentials re-attached after an auto or manual compaction
(recent files re-read, the todo plan, running tasks, and whatever a source adds, e.g. the
skills invoked so far)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tether.context.tokens import estimate_text
from tether.core.messages import Message, TextBlock
from tether.editor.port import Editor
from tether.tasks.registry import TaskRegistry
from tether.tools.context import SessionRunState


@dataclass(frozen=True)
class ReattachLimits:
    files: int = 5
    file_tokens: int = 5_000
    total_tokens: int = 30_000


@dataclass
class Essentials:
    editor: Editor
    state: SessionRunState
    tasks: TaskRegistry
    sources: list[Callable[[], str]] = field(default_factory=lambda: list[Callable[[], str]]())
    """Extra essentials to keep after a summary (e.g. invoked skills)."""

    def add_source(self, source: Callable[[], str]) -> None:
        self.sources.append(source)

    async def gather(self, window: int, limits: ReattachLimits) -> list[Message]:
        parts: list[str] = []
        # Re-read files take a share of the window, not a fixed amount: on a small local
        # model 30k tokens of files would not fit at all.
        budget = min(limits.total_tokens, window // 20)
        per_file = min(limits.file_tokens, window // 40)
        for path in list(reversed(self.state.files.paths()))[: limits.files]:
            try:
                doc = await self.editor.read(path)
            except (OSError, UnicodeDecodeError):
                continue
            limit = min(per_file, budget) * 3
            if limit <= 0:
                break
            text = doc.text[:limit]
            budget -= estimate_text(text)
            numbered = "\n".join(f"{n}\t{line}" for n, line in enumerate(text.splitlines(), 1))
            cut = (
                "" if len(text) == len(doc.text) else "\n[... cut; Read the file for the rest ...]"
            )
            parts.append(f"Contents of {path}, re-read after compaction:\n{numbered}{cut}")
            self.state.files.record(doc, partial=bool(cut))
        if self.state.todos:
            plan = "\n".join(f"- [{e.status}] {e.content}" for e in self.state.todos)
            parts.append(f"The current todo list:\n{plan}")
        running = self.tasks.running()
        if running:
            tasks = "\n".join(
                f'<task id="{t.id}" tool_use_id="{t.tool_use_id or ""}" status="{t.status}">'
                f"{t.description} (output: {t.output_path})</task>"
                for t in running
            )
            parts.append(f"Background tasks still running (use TaskOutput / TaskStop):\n{tasks}")
        parts += [text for source in self.sources if (text := source())]
        return [
            Message(
                role="user", content=[TextBlock(text=f"<system-reminder>\n{p}\n</system-reminder>")]
            )
            for p in parts
        ]
