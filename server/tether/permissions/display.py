"""Show exactly what is approved: control characters, ANSI escapes and invisible Unicode
made visible, so a dialog cannot show one command while another runs.

Escaped: C0/C1 controls (ESC starts every ANSI sequence; CR can overwrite a line), DEL,
and every format or separator character Unicode defines as invisible (zero-width joiners,
bidi overrides and isolates that reorder text, tag characters that smuggle ASCII, soft
hyphens, line/paragraph separators). Newlines and tabs stay: the full command is shown.
"""

from __future__ import annotations

import unicodedata

_KEEP = frozenset("\n\t")
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch in _KEEP:
            out.append(ch)
        elif unicodedata.category(ch) in _INVISIBLE_CATEGORIES or _is_variation_selector(ch):
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)


def _is_variation_selector(ch: str) -> bool:
    code = ord(ch)
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def has_hidden_characters(text: str) -> bool:
    """True when ``visible`` would change the text (worth a warning in the dialog)."""
    return visible(text) != text
