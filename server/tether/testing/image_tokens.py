"""What an image costs in the fakes' token counts: the providers' documented rules on the
image's pixels, not the length of its base64 (which says nothing about its size on screen).

* Messages API: ``tokens = width × height / 750``, after the API scales an image whose long
  edge is over 1568 px, or that would cost over about 1,600 tokens, down (aspect ratio
  kept) until it is within both (https://docs.anthropic.com/en/docs/build-with-claude/vision,
  "Evaluate image size").
* OpenAI chat completions: ``detail: "low"`` costs 85; otherwise the image is scaled to fit
  2048 × 2048, then so that its shorter side is 768 px (never up), and costs 85 plus 170
  per 512-px tile (https://platform.openai.com/docs/guides/images-vision, "Calculating
  costs"; ``auto`` is counted as ``high``, the larger).

An image Pillow cannot read, or one given by URL, counts as the most the rule allows
(1,600 tokens; OpenAI: a 2048 × 768 image's 1,105), as a server that cannot see it would
still have to make room for it.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from typing import Any, cast

from PIL import Image, UnidentifiedImageError

ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_TOKENS = 1600
ANTHROPIC_PIXELS_PER_TOKEN = 750
OPENAI_BASE, OPENAI_TILE = 85, 170


def pixels(data_b64: str) -> tuple[int, int] | None:
    """Width and height of a base64 image (only its header is read), or None."""
    try:
        raw = base64.b64decode(data_b64, validate=False)
        with Image.open(io.BytesIO(raw)) as image:
            return image.size
    except (binascii.Error, ValueError, UnidentifiedImageError, OSError):
        return None


def anthropic_image_tokens(size: tuple[int, int] | None) -> int:
    if size is None:
        return ANTHROPIC_MAX_TOKENS
    width, height = size
    scale = min(
        1.0,
        ANTHROPIC_MAX_EDGE / max(width, height, 1),
        math.sqrt(ANTHROPIC_MAX_TOKENS * ANTHROPIC_PIXELS_PER_TOKEN / max(width * height, 1)),
    )
    return math.ceil(int(width * scale) * int(height * scale) / ANTHROPIC_PIXELS_PER_TOKEN)


def openai_image_tokens(size: tuple[int, int] | None, detail: str = "auto") -> int:
    if detail == "low":
        return OPENAI_BASE
    width, height = size or (2048, 768)
    fit = min(1.0, 2048 / max(width, height, 1))
    width, height = width * fit, height * fit
    short = min(1.0, 768 / max(min(width, height), 1))
    width, height = width * short, height * short
    return OPENAI_BASE + OPENAI_TILE * math.ceil(width / 512) * math.ceil(height / 512)


def without_images(value: Any, api: str) -> tuple[Any, int]:
    """``value`` with each image's data taken out (so the text rule does not count it), and
    what the images cost by ``api``'s rule (``anthropic`` or ``openai``)."""
    if isinstance(value, list):
        total = 0
        kept: list[Any] = []
        for item in cast("list[Any]", value):
            part, tokens = without_images(item, api)
            kept.append(part)
            total += tokens
        return kept, total
    if not isinstance(value, dict):
        return value, 0
    fields = cast("dict[str, Any]", value)
    if api == "anthropic" and fields.get("type") == "image":
        source = fields.get("source")
        data = cast("dict[str, Any]", source).get("data") if isinstance(source, dict) else None
        size = pixels(data) if isinstance(data, str) else None
        return {"type": "image"}, anthropic_image_tokens(size)
    if api == "openai" and fields.get("type") == "image_url":
        image = fields.get("image_url")
        url, detail = "", "auto"
        if isinstance(image, dict):
            spec = cast("dict[str, Any]", image)
            url, detail = str(spec.get("url", "")), str(spec.get("detail", "auto"))
        _, comma, data = url.partition(",")
        size = pixels(data) if url.startswith("data:") and comma else None
        return {"type": "image_url"}, openai_image_tokens(size, detail)
    total = 0
    kept_fields: dict[str, Any] = {}
    for key, item in fields.items():
        kept_fields[key], tokens = without_images(item, api)
        total += tokens
    return kept_fields, total
