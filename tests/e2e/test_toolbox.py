"""The rest of the toolbox through `tether run` against the fake Messages API: Read of an
image, a PDF and a notebook reaching the API as their own block types, NotebookEdit, the
provider's web search kept verbatim in the history, WebFetch answered by the small model
from a local web server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import nbformat
from PIL import Image
from pypdf import PdfWriter

from tether.providers.side import DEFAULT_SMALL_ANTHROPIC_MODEL
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_web import FakeWebServer

from .test_cli import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def blocks_of(request: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """Every block of ``kind`` in the request's messages, tool_result contents included."""
    found: list[dict[str, Any]] = []
    for message in request["messages"]:
        for block in message["content"]:
            if block["type"] == kind:
                found.append(block)
            if block["type"] == "tool_result":
                found += [p for p in block.get("content", []) if p["type"] == kind]
    return found


def test_media_notebook_search_and_fetch(workspace: Path, daemon_env: dict[str, str]) -> None:
    Image.new("RGB", (3000, 1500), (250, 120, 0)).save(workspace / "chart.png")
    writer = PdfWriter()
    for _ in range(2):
        writer.add_blank_page(width=200, height=200)
    with (workspace / "report.pdf").open("wb") as f:
        writer.write(f)
    shutil.copy(FIXTURES / "notebooks" / "analysis.ipynb", workspace / "analysis.ipynb")
    docs = (FIXTURES / "web" / "docs.html").read_bytes()
    with FakeWebServer({"/docs.html": docs}) as web:
        script: list[Any] = [
            [
                tool("Read", file_path="chart.png"),
                tool("Read", file_path="report.pdf"),
                tool("Read", file_path="analysis.ipynb"),
            ],
            [
                {
                    "type": "web_search",
                    "query": "widget spin speed",
                    "results": [{"url": "https://widgets.example/docs", "title": "Widget docs"}],
                },
                {
                    "type": "text",
                    "text": "The docs say 42.",
                    "citations": [
                        {
                            "url": "https://widgets.example/docs",
                            "title": "Widget docs",
                            "cited_text": "42 rpm",
                        }
                    ],
                },
                tool(
                    "NotebookEdit",
                    notebook_path="analysis.ipynb",
                    cell_id="double",
                    new_source="total * 42",
                ),
                tool("WebFetch", url=web.url("/docs.html"), prompt="What is the default speed?"),
            ],
            {"expect": {"contains": "Widget API"}, "blocks": [{"type": "text", "text": "42 rpm."}]},
            {"expect": {"contains": "42 rpm."}, "blocks": [{"type": "text", "text": "Done."}]},
        ]
        with FakeAnthropicServer(script) as api:
            done = run_cli(
                workspace,
                {**daemon_env, "ANTHROPIC_BASE_URL": api.base_url},
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "WebFetch(domain:127.0.0.1)",
                "--output-format",
                "tether-json",
                "Check the chart against the docs",
            )
            assert done.returncode == 0, done.stderr
            api.assert_complete()
            requests = api.requests
    # Every request offers the provider's web search in its own shape.
    main = [r for i, r in enumerate(requests) if i != 2]
    for request in main:
        (search,) = [t for t in request["tools"] if t.get("type") == "web_search_20250305"]
        assert search["name"] == "web_search" and search["max_uses"] == 8
        assert not any(t.get("name") == "WebSearch" for t in request["tools"])
    # Read results reached the API as an image block and a document block.
    chart, plot = blocks_of(requests[1], "image")  # the PNG, and the notebook's chart output
    assert chart["source"]["media_type"] == plot["source"]["media_type"] == "image/png"
    assert len(chart["source"]["data"]) > len(plot["source"]["data"])
    (document,) = blocks_of(requests[1], "document")
    assert (
        document["source"]["media_type"] == "application/pdf" and document["title"] == "report.pdf"
    )
    notebook_text = json.dumps(requests[1])
    assert (
        'id=\\"double\\" type=\\"code\\"' in notebook_text and "ZeroDivisionError" in notebook_text
    )
    # The small model got the page as Markdown; the main model only its answer.
    small = requests[2]
    assert small["model"] == DEFAULT_SMALL_ANTHROPIC_MODEL and "tools" not in small
    assert "`widget.spin(speed)`" in json.dumps(small)
    # The search blocks and the cited text went back exactly as the API sent them (the
    # fake checks their encrypted parts, and would have refused the request otherwise).
    (use,) = blocks_of(requests[3], "server_tool_use")
    assert use["input"] == {"query": "widget spin speed"}
    (result,) = blocks_of(requests[3], "web_search_tool_result")
    assert result["tool_use_id"] == use["id"] and result["content"][0]["encrypted_content"]
    cited = [b for b in blocks_of(requests[3], "text") if b.get("citations")]
    assert cited[0]["citations"][0]["cited_text"] == "42 rpm"
    # NotebookEdit changed the notebook, which is still valid.
    edited = nbformat.read(str(workspace / "analysis.ipynb"), as_version=4)
    nbformat.validate(edited)
    assert edited.cells[2].source == "total * 42"
    # The editor saw the search as a tool call with its results.
    events = [json.loads(line) for line in done.stdout.splitlines()]
    updates = [e["update"] for e in events if e["type"] == "update"]
    call = next(u for u in updates if u["kind"] == "tool_call" and u["toolCallId"] == use["id"])
    assert call["title"] == "Web search: widget spin speed" and call["toolKind"] == "fetch"
    finished = next(
        u for u in updates if u["kind"] == "tool_call_update" and u["toolCallId"] == use["id"]
    )
    assert finished["status"] == "completed" and "widgets.example" in json.dumps(finished)
    # The transcript keeps the blocks verbatim, for resume.
    transcript = next((Path(daemon_env["TETHER_DATA_DIR"])).rglob("*.jsonl")).read_text()
    assert result["content"][0]["encrypted_content"] in transcript


def test_slash_command_expands_shell_files_and_model(
    workspace: Path, daemon_env: dict[str, str]
) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review\nmodel: haiku\n---\n"
        "Changes:\n!`git status --short`\nDenied: !`touch denied.txt`\n"
        "Read @README.md and review $ARGUMENTS.\n"
    )
    script: list[Any] = [[{"type": "text", "text": "Reviewed."}]]
    with FakeAnthropicServer(script) as api:
        done = run_cli(
            workspace,
            {**daemon_env, "ANTHROPIC_BASE_URL": api.base_url},
            "--disallowedTools",
            "Bash(touch:*)",
            "/review the parser",
        )
        assert done.returncode == 0, done.stderr
        api.assert_complete()
        (request,) = api.requests
    assert request["model"] == DEFAULT_SMALL_ANTHROPIC_MODEL  # `model: haiku`
    prompt = json.dumps(request["messages"][0])
    assert "?? README.md" in prompt  # git status ran and its output is inlined
    assert "was not run: Permission denied" in prompt and not (workspace / "denied.txt").exists()
    readme = (workspace / "README.md").read_text().splitlines()[0]
    assert "attached-file" in prompt and json.dumps(readme)[1:-1] in prompt
    assert "review the parser." in prompt
