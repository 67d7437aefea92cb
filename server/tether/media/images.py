"""Images shrunk to what model APIs take.

The Messages API refuses images over 8000 px a side or 5 MB of base64, and scales anything
over about 1568 px on the long edge down itself (the tokens are paid either way). Images are
therefore scaled to ``MAX_EDGE`` and, when still too heavy, re-encoded as JPEG at falling
quality. Pillow does the work; an image it cannot decode is an error naming the file type.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

MAX_EDGE = 2000
"""Longest side sent; above it the API downsizes anyway."""
MAX_BYTES = 3_750_000
"""Raw bytes that still fit the 5 MB base64 limit."""
_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class ImageError(ValueError):
    """The bytes are not an image the model can be shown."""


@dataclass(frozen=True)
class FittedImage:
    data: bytes
    media_type: str
    width: int
    height: int
    original: tuple[int, int]
    """Width and height before any scaling."""

    @property
    def resized(self) -> bool:
        return (self.width, self.height) != self.original


def fit_image(data: bytes, *, max_edge: int = MAX_EDGE, max_bytes: int = MAX_BYTES) -> FittedImage:
    """``data`` unchanged when it fits, else scaled and re-encoded until it does."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as e:
        raise ImageError(f"the file is not a readable image ({e})") from None
    media_type = _FORMATS.get(image.format or "")
    if media_type is None:
        raise ImageError(f"{image.format or 'this'} images cannot be sent to the model")
    size = image.size
    if max(size) <= max_edge and len(data) <= max_bytes:
        return FittedImage(data, media_type, *size, original=size)
    if getattr(image, "is_animated", False):
        image.seek(0)  # the first frame stands for an animation
    scaled = image.copy()
    scaled.thumbnail((max_edge, max_edge), Image.Resampling.LANCZOS)
    out = _encode(scaled, "PNG" if media_type == "image/png" else "JPEG", 90)
    quality = 85
    while len(out) > max_bytes and quality >= 30:
        out = _encode(scaled, "JPEG", quality)
        quality -= 15
    while len(out) > max_bytes:
        # Still too heavy at low quality: halve the size until it fits.
        scaled.thumbnail((max(1, scaled.width // 2), max(1, scaled.height // 2)))
        out = _encode(scaled, "JPEG", 60)
    kind = "image/png" if out.startswith(b"\x89PNG") else "image/jpeg"
    return FittedImage(out, kind, scaled.width, scaled.height, original=size)


def _encode(image: Image.Image, fmt: str, quality: int) -> bytes:
    buffer = io.BytesIO()
    if fmt == "JPEG" and image.mode not in ("RGB", "L"):
        image = _flatten(image)
    if fmt == "PNG":
        image.save(buffer, format="PNG", optimize=True)
    else:
        image.save(buffer, format="JPEG", quality=quality, optimize=True)
    return buffer.getvalue()


def _flatten(image: Image.Image) -> Image.Image:
    """JPEG has no alpha: transparent parts become white, as a viewer shows them."""
    rgba = image.convert("RGBA")
    background = Image.new("RGB", rgba.size, (255, 255, 255))
    background.paste(rgba, mask=rgba.getchannel("A"))
    return background
