"""Ask an OpenAI-compatible server how long a context its model takes.

* vLLM lists ``max_model_len`` on each model of ``GET /v1/models``.
* Ollama's ``/v1/models`` has no length; ``POST /api/show`` (at the server root) gives the
  model's ``num_ctx`` parameter when one is set (what it is loaded with) and its trained
  ``<arch>.context_length`` in ``model_info``. Ollama may still load a model with less
  (its default runtime context); set ``model.contextWindow`` when that is so.

Anything else (llama.cpp, LM Studio, an error): None, and the caller falls back.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from tether.providers.network import NetworkSettings

log = logging.getLogger(__name__)
TIMEOUT_S = 5.0
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


async def discover_window(
    base_url: str, model: str, api_key: str, network: NetworkSettings | None = None
) -> int | None:
    """``network``: the caller's proxies and CA certificates (None: this process's)."""
    import httpx2

    headers = {"Authorization": f"Bearer {api_key}"}
    base = base_url.rstrip("/")
    make = network.client if network is not None else httpx2.AsyncClient
    try:
        async with make(timeout=TIMEOUT_S, headers=headers) as client:
            window = await _from_models(client, base, model)
            if window is None:
                window = await _from_ollama(client, base, model)
    except (httpx2.HTTPError, ValueError) as e:
        log.info("could not ask %s for the context window of %s: %s", base, model, e)
        return None
    return window


async def _from_models(client: Any, base: str, model: str) -> int | None:
    response = await client.get(f"{base}/models")
    if response.status_code != 200:
        return None
    data = cast("dict[str, Any]", response.json())
    cards = cast("list[dict[str, Any]]", data.get("data") or [])
    for card in cards:
        if card.get("id") == model and isinstance(card.get("max_model_len"), int):
            return int(card["max_model_len"])
    return None


async def _from_ollama(client: Any, base: str, model: str) -> int | None:
    root = base.removesuffix("/v1")
    response = await client.post(f"{root}/api/show", json={"model": model})
    if response.status_code != 200:
        return None
    data = cast("dict[str, Any]", response.json())
    match = _NUM_CTX.search(str(data.get("parameters") or ""))
    if match:
        return int(match.group(1))
    info = cast("dict[str, Any]", data.get("model_info") or {})
    lengths = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
    return int(lengths[0]) if lengths else None
