"""The fakes count an image by the providers' documented rules on its pixels, not by the
length of its base64: a noisy image and a flat one of the same size cost the same."""

from __future__ import annotations

import base64
import io
import json
import random
import urllib.request

from PIL import Image

from tether.testing.anthropic_wire import count_input_tokens
from tether.testing.image_tokens import anthropic_image_tokens, openai_image_tokens
from tether.testing.openai_rules import count_prompt_tokens


def png(width: int, height: int, *, noisy: bool) -> str:
    image = Image.new("RGB", (width, height), (200, 30, 30))
    if noisy:
        rng = random.Random(7)
        image.putdata([(rng.randrange(256), rng.randrange(256), 0) for _ in range(width * height)])
    out = io.BytesIO()
    image.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_the_documented_rules() -> None:
    assert anthropic_image_tokens((200, 150)) == 40  # 200 × 150 / 750
    assert anthropic_image_tokens((1000, 1000)) == 1334
    # Scaled to the ~1,600-token limit (and the 1568-px edge), aspect ratio kept.
    assert 1_590 <= anthropic_image_tokens((4000, 3000)) <= 1_600
    assert anthropic_image_tokens(None) == 1_600
    assert openai_image_tokens((200, 150), "low") == 85
    assert openai_image_tokens((200, 150), "high") == 85 + 170
    assert openai_image_tokens((1024, 1024), "auto") == 85 + 170 * 4  # 768 × 768: 2 × 2 tiles
    assert openai_image_tokens((2048, 4096), "high") == 85 + 170 * 6  # 768 × 1536: 2 × 3


def test_the_fakes_count_pixels_not_base64() -> None:
    noisy, flat = png(300, 200, noisy=True), png(300, 200, noisy=False)
    assert len(noisy) > 20 * len(flat)

    def anthropic(data: str) -> int:
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}  # fmt: skip
        content = [{"type": "text", "text": "look"}, image]
        return count_input_tokens({"messages": [{"role": "user", "content": content}]})

    def openai(data: str, detail: str) -> int:
        url = {"url": f"data:image/png;base64,{data}", "detail": detail}
        content = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": url}]
        return count_prompt_tokens({"messages": [{"role": "user", "content": content}]})

    assert anthropic(noisy) == anthropic(flat) < 200  # 300 × 200 / 750 = 80, and the text
    assert openai(noisy, "high") == openai(flat, "high") < 400  # 85 + 170, and the text
    assert openai(noisy, "low") == openai(flat, "low") == openai(flat, "high") - 170


def test_the_fake_messages_api_counts_a_request_so_too() -> None:
    """Its own count (kept from request to request) agrees with the rule."""
    from providers_support import API_HEADERS

    from tether.testing.fake_anthropic import FakeAnthropicServer

    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png(300, 200, noisy=True)}}  # fmt: skip
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "look"}, image]}],
    }
    with FakeAnthropicServer([[{"type": "text", "text": "ok"}]]) as api:
        request = urllib.request.Request(
            f"{api.url}/v1/messages",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", **API_HEADERS},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            usage = json.loads(answer.read())["usage"]
    assert usage["input_tokens"] == api.input_tokens[0] == count_input_tokens(body) < 200
