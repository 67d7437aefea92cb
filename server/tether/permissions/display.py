"""Show exactly what is approved: control characters and ANSI escapes made visible."""

from __future__ import annotations


def visible(text: str) -> str:
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t":
            out.append(ch)
        elif code < 32 or code == 127 or 0x80 <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif code in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF) or 0x202A <= code <= 0x202E:
            out.append(f"\\u{code:04x}")  # zero-width and bidi controls hide or reorder text
        else:
            out.append(ch)
    return "".join(out)
