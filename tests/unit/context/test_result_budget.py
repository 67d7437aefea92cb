"""Tool results cut to the budget: the file that keeps the full text is named by Tether
(never by the server's tool call id), is one per result, and the cut keeps a result's images
and documents."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tether.context.trim import ResultBudget
from tether.core.messages import DocumentBlock, ImageBlock, Message, TextBlock, ToolResultBlock

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVQI12P4//8/AAX+Av6n1qSoAAAAAElFTkSuQmCC"


def result(tool_use_id: str, *parts: TextBlock | ImageBlock | DocumentBlock) -> Message:
    return Message(
        role="user", content=[ToolResultBlock(tool_use_id=tool_use_id, content=[*parts])]
    )


def stored_path(message: Message) -> Path:
    block = message.content[0]
    assert isinstance(block, ToolResultBlock)
    found = re.search(r"the full text is in (\S+)\. Read it", block.text)
    assert found, block.text
    return Path(found.group(1))


async def test_ids_chosen_by_the_server_never_become_paths(tmp_path: Path) -> None:
    results = tmp_path / "session" / "tool-results"
    outside = tmp_path / "outside"
    ids = [
        "../../outside/relative",
        str(outside / "absolute"),
        "call/../../x",
        "..",
        "",
        "a\x00b",
        "é" * 300,
    ]
    messages = [result(i, TextBlock(text=f"{n} " + "A" * 9_000)) for n, i in enumerate(ids)]
    assert await ResultBudget(results, 500).apply(messages, 4_000) == len(ids)
    paths = [stored_path(m) for m in messages]
    assert not outside.exists()
    assert all(p.parent == results and p.is_file() for p in paths), paths
    assert all(len(p.name) < 80 for p in paths)
    assert sorted(os.listdir(results)) == sorted(p.name for p in paths)
    for n, p in enumerate(paths):
        assert p.read_text().startswith(f"{n} A")
        assert p.stat().st_mode & 0o777 == 0o600


async def test_a_repeated_id_keeps_each_result(tmp_path: Path) -> None:
    budget = ResultBudget(tmp_path, 200)
    first = [result("Bash:0", TextBlock(text="FIRST " * 2_000))]
    await budget.apply(first, 3_000)
    later = [*first, result("Bash:0", TextBlock(text="SECOND " * 2_000))]
    await budget.apply(later, 3_000)
    one, two = stored_path(later[0]), stored_path(later[1])
    assert one != two
    assert one.read_text() == "FIRST " * 2_000
    assert two.read_text() == "SECOND " * 2_000


async def test_a_result_cut_again_for_a_smaller_window_keeps_its_file(tmp_path: Path) -> None:
    budget = ResultBudget(tmp_path, 2_000)
    messages = [result("t1", TextBlock(text="x" * 50_000))]
    await budget.apply(messages, 10_000)
    path = stored_path(messages[0])
    await budget.apply(messages, 2_000)
    assert stored_path(messages[0]) == path
    assert "this result had 50000 characters" in messages[0].content[0].text  # type: ignore[union-attr]
    assert os.listdir(tmp_path) == [path.name]


async def test_images_and_documents_stay_when_the_text_is_cut(tmp_path: Path) -> None:
    image = ImageBlock(media_type="image/png", data=PNG)
    pdf = DocumentBlock(data="JVBERi0xLjQK", title="spec.pdf")
    messages = [
        result("mcp_1", TextBlock(text="page " * 2_000), image, TextBlock(text="more " * 500), pdf)
    ]
    await ResultBudget(tmp_path, 500).apply(messages, 3_000)
    block = messages[0].content[0]
    assert isinstance(block, ToolResultBlock)
    assert [type(p) for p in block.content] == [TextBlock, ImageBlock, DocumentBlock]
    assert block.content[1] == image and block.content[2] == pdf
    # The whole text (both text parts) is in the file.
    stored = stored_path(messages[0]).read_text()
    assert stored == "page " * 2_000 + "more " * 500


async def test_undecodable_file_names_are_stored_as_their_bytes(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    messages = [result("g1", TextBlock(text=f"{name}\n" * 2_000))]
    await ResultBudget(tmp_path, 200).apply(messages, 3_000)
    assert stored_path(messages[0]).read_bytes() == b"caf\xe9.txt\n" * 2_000
