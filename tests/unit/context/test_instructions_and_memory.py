from __future__ import annotations

from pathlib import Path

from tether.context.instructions import instructions_section, load_instructions
from tether.context.memory import MAX_LINES, Bm25Recaller, load_index, memory_attachment


def test_imports_resolve_cycles_and_escapes_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(
        "Use tabs. See @docs/style.md and `@docs/not-an-import.md`.\n"
        "```\n@docs/also-not.md\n```\n@../outside.md\n"
    )
    (root / "docs" / "style.md").write_text("STYLE RULES. More in @rules.md\n")
    (root / "docs" / "rules.md").write_text("RULES BODY. Back to @style.md\n")
    (tmp_path / "outside.md").write_text("SECRET OUTSIDE")
    files = load_instructions(root, user_file=tmp_path / "none.md")
    (item,) = files
    text = item.text
    assert "STYLE RULES" in text and "RULES BODY" in text
    assert "import cycle" in text
    assert "not-an-import.md`" in text and "also-not.md" in text  # code is left alone
    assert "SECRET OUTSIDE" not in text and "outside the workspace" in text


def test_depth_limit_and_order(tmp_path: Path) -> None:
    root = tmp_path / "a" / "ws"
    root.mkdir(parents=True)
    (tmp_path / "a" / "AGENTS.md").write_text("PARENT")
    (root / "AGENTS.md").write_text("CHILD @1.md")
    (root / "AGENTS.local.md").write_text("LOCAL")
    for i in range(1, 9):
        (root / f"{i}.md").write_text(f"level{i} @{i + 1}.md")
    user = tmp_path / "user.md"
    user.write_text("USER GLOBAL")
    files = load_instructions(root, user_file=user)
    assert [f.scope for f in files] == ["user", "project", "project", "local"]
    section = instructions_section(files)
    assert section.index("USER GLOBAL") < section.index("PARENT") < section.index("CHILD")
    assert "level5" in section and "level7" not in section and "levels deep" in section


def test_memory_index_limits_are_enforced(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    lines = [f"- [Note {i}](note{i}.md) — fact number {i}" for i in range(MAX_LINES + 20)]
    index.write_text("\n".join(lines))
    loaded = load_index(index)
    assert len(loaded.entries) == MAX_LINES
    assert any("200 lines" in w for w in loaded.warnings)
    big = tmp_path / "BIG.md"
    big.write_text("- [x](x.md) — " + "y" * 30_000)
    assert any("KB" in w for w in load_index(big).warnings)


def test_recall_picks_at_most_five_relevant_entries(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    entries = [
        f"- [Database tip {i}](db{i}.md) — postgres migrations and database indexes"
        for i in range(8)
    ]
    entries += ["- [Frontend](ui.md) — react component conventions"]
    index.write_text("\n".join(entries))
    for i in range(8):
        (tmp_path / f"db{i}.md").write_text(f"database memory {i}")
    (tmp_path / "ui.md").write_text("ui memory")
    loaded = load_index(index).entries
    chosen = Bm25Recaller().recall("add an index to the postgres database", loaded, k=10)
    assert 0 < len(chosen) <= 5
    assert all("Database" in e.title for e in chosen)
    assert Bm25Recaller().recall("react component", loaded, k=5)[0].title == "Frontend"
    assert Bm25Recaller().recall("zzz unrelated", loaded, k=5) == []
    text = memory_attachment(chosen)
    assert text.count("<memory ") == len(chosen)
