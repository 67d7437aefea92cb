"""Read: numbering, ranges, limits, special files, and the read record it leaves."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from pathlib import Path

from tether.core.messages import ImageBlock
from tether.tools.base import ToolResult
from tether.tools.context import ToolContext, text_hash
from tether.tools.read import READ_TOOL

Run = Callable[..., Awaitable[ToolResult]]
PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def test_numbers_lines_and_records_the_read(
    run: Run, ctx: ToolContext, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("alpha\nbeta\r\ngamma")
    result = await run(READ_TOOL, {"file_path": str(f)})
    assert not result.is_error
    assert result.content == "1\talpha\n2\tbeta\n3\tgamma"
    record = ctx.files.get(f)
    assert record is not None and record.hash == text_hash("alpha\nbeta\r\ngamma")
    assert not record.partial


async def test_relative_path_and_offset_limit(run: Run, ctx: ToolContext, workspace: Path) -> None:
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await run(READ_TOOL, {"file_path": "n.txt", "offset": 4, "limit": 3})
    assert result.content == "4\tline 4\n5\tline 5\n6\tline 6"
    record = ctx.files.get(workspace / "n.txt")
    assert record is not None and record.partial


async def test_default_limit_notes_the_rest(run: Run, ctx: ToolContext, workspace: Path) -> None:
    ctx.config.read_max_lines = 5
    (workspace / "long.txt").write_text("".join(f"{i}\n" for i in range(1, 21)))
    result = await run(READ_TOOL, {"file_path": "long.txt"})
    assert isinstance(result.content, str)
    assert result.content.startswith("1\t1\n2\t2\n3\t3\n4\t4\n5\t5\n\n<system-reminder>")
    assert "of 20" in result.content and "offset=6" in result.content


async def test_empty_file_and_offset_past_end(run: Run, workspace: Path) -> None:
    (workspace / "empty.txt").write_text("")
    (workspace / "short.txt").write_text("a\nb\n")
    empty = await run(READ_TOOL, {"file_path": "empty.txt"})
    assert not empty.is_error
    assert "<system-reminder>" in str(empty.content) and "empty" in str(empty.content)
    past = await run(READ_TOOL, {"file_path": "short.txt", "offset": 10})
    assert not past.is_error
    assert "only 2 lines" in str(past.content)


async def test_long_lines_are_cut(run: Run, ctx: ToolContext, workspace: Path) -> None:
    ctx.config.read_max_line_chars = 10
    (workspace / "wide.txt").write_text("x" * 25 + "\nshort\n")
    result = await run(READ_TOOL, {"file_path": "wide.txt"})
    first, second = str(result.content).split("\n")
    assert first.startswith("1\t" + "x" * 10 + "…") and "15 more characters" in first
    assert second == "2\tshort"


async def test_missing_file_suggests_a_similar_name(run: Run, workspace: Path) -> None:
    (workspace / "config.yaml").write_text("x")
    result = await run(READ_TOOL, {"file_path": str(workspace / "config.yml")})
    assert result.is_error
    assert "does not exist" in str(result.content)
    assert f"Did you mean {workspace / 'config.yaml'}?" in str(result.content)
    plain = await run(READ_TOOL, {"file_path": "nothing-like-it.txt"})
    assert plain.is_error and "Did you mean" not in str(plain.content)


async def test_directory_and_binary_files_are_refused(run: Run, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "blob.dat").write_bytes(b"abc\x00def")
    (workspace / "lib.so").write_bytes(b"ELF")
    assert "Glob" in str((await run(READ_TOOL, {"file_path": "sub"})).content)
    for name in ("blob.dat", "lib.so"):
        result = await run(READ_TOOL, {"file_path": name})
        assert result.is_error and "binary" in str(result.content)


async def test_image_comes_back_as_an_image_block(run: Run, workspace: Path) -> None:
    (workspace / "dot.png").write_bytes(PNG_1PX)
    (workspace / "misnamed.jpg").write_bytes(PNG_1PX)
    result = await run(READ_TOOL, {"file_path": "dot.png"})
    assert not result.is_error and isinstance(result.content, list)
    (block,) = result.content
    assert isinstance(block, ImageBlock)
    assert block.media_type == "image/png" and base64.b64decode(block.data) == PNG_1PX
    sniffed = await run(READ_TOOL, {"file_path": "misnamed.jpg"})
    assert isinstance(sniffed.content, list) and isinstance(sniffed.content[0], ImageBlock)
    assert sniffed.content[0].media_type == "image/png"


async def test_too_large_whole_read_is_refused_but_ranges_work(
    run: Run, ctx: ToolContext, workspace: Path
) -> None:
    ctx.config.read_max_bytes = 100
    (workspace / "big.txt").write_text("".join(f"line number {i}\n" for i in range(50)))
    whole = await run(READ_TOOL, {"file_path": "big.txt"})
    assert whole.is_error and "offset and limit" in str(whole.content)
    part = await run(READ_TOOL, {"file_path": "big.txt", "offset": 2, "limit": 2})
    assert part.content == "2\tline number 1\n3\tline number 2"


async def test_outside_workspace_is_refused(run: Run, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    result = await run(READ_TOOL, {"file_path": str(tmp_path / "secret.txt")})
    assert result.is_error and "outside the workspace" in str(result.content)


async def test_metadata(ctx: ToolContext, workspace: Path) -> None:
    inp = READ_TOOL.input_model(file_path=str(workspace / "x.py"), offset=3)
    assert READ_TOOL.is_read_only(inp) and READ_TOOL.is_concurrency_safe(inp)
    assert (await READ_TOOL.check_permissions(inp, ctx)).behavior == "allow"
    (loc,) = READ_TOOL.locations(inp, ctx)
    assert loc.uri == (workspace / "x.py").as_uri() and loc.line == 3
    assert READ_TOOL.rule_content(inp) == str(workspace / "x.py")
    assert READ_TOOL.kind == "read"
