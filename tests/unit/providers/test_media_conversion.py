"""Images and PDFs in the history, per provider: Anthropic gets its own block types;
OpenAI-compatible servers, which take neither in tool results, get the PDF's text and a
note for images."""

from __future__ import annotations

import base64
from typing import Any

from providers_support import make_request

from tether.core.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    user_text,
)
from tether.providers.convert_anthropic import request_params
from tether.providers.convert_openai import request_messages


def text_pdf(text: str) -> bytes:
    """A one-page PDF whose page says ``text`` (a real text layer, with a correct xref)."""
    stream = f"BT /F1 12 Tf 20 100 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer << /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


HELLO_PDF = text_pdf("Quarterly revenue grew")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def history() -> list[Message]:
    document = DocumentBlock(data=base64.b64encode(HELLO_PDF).decode(), title="report.pdf")
    result = ToolResultBlock(
        tool_use_id="t1",
        content=[
            TextBlock(text="PDF report.pdf (all 1 pages):"),
            document,
            ImageBlock(media_type="image/png", data=PNG),
        ],
    )
    return [
        user_text("read it"),
        Message(
            role="assistant",
            content=[ToolUseBlock(id="t1", name="Read", input={"file_path": "report.pdf"})],
        ),
        Message(role="user", content=[result]),
    ]


def test_anthropic_gets_document_and_image_blocks() -> None:
    params = request_params(make_request(history()), max_tokens=100)
    (result,) = params.messages[2]["content"]
    parts: list[Any] = list(result["content"])
    assert [p["type"] for p in parts] == ["text", "document", "image"]
    assert parts[1]["source"] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": base64.b64encode(HELLO_PDF).decode(),
    }
    assert parts[1]["title"] == "report.pdf"


def test_openai_gets_the_pdf_text_and_an_image_note() -> None:
    messages = request_messages(make_request(history()))
    tool = next(m for m in messages if m["role"] == "tool")
    content = str(tool["content"])
    assert "[PDF report.pdf, as text]" in content and "Quarterly revenue grew" in content
    assert "1 image(s) omitted" in content
