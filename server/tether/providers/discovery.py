"""Ask an OpenAI-compatible server how long a context its model takes.

Each server says it its own way (the fake serves each, ``testing/openai_discovery``):

* vLLM: ``max_model_len`` on the model's card in ``GET {base}/models``.
* LiteLLM's proxy: ``model_info.max_input_tokens`` of the deployment named like the model in
  ``GET {base}/model/info`` (docs.litellm.ai/docs/proxy/model_management).
* llama.cpp's server: ``default_generation_settings.n_ctx`` in ``GET {root}/props``.
* Ollama: the window its runner really uses, which is neither the model's trained length
  nor anything the OpenAI-compatible endpoint can set (it ignores ``num_ctx``): the
  Modelfile's ``num_ctx`` (``POST {root}/api/show``, ``parameters``) when set, the trained
  length of a cloud model (``/api/show`` names its ``remote_host``), else the
  ``context_length`` ``GET {root}/api/ps`` lists for the loaded model, after loading it the
  way the chat requests will (``POST {root}/api/generate`` with no prompt and no options, so
  they find it loaded with the same context rather than reload it); an Ollama too old to
  list it gets ``OLLAMA_OLD_DEFAULT``. A prompt over that window would be cut silently, so
  the compaction thresholds must follow it.

Anything else (LM Studio, an error): None, and the caller falls back. With the window comes
the server's own setting for it (``Announced.setting``), for advice when a context cannot fit.

Ollama's native API (``providers/ollama``) asks ``ollama_window``: the same window, which it
then sends as ``num_ctx`` with every request, and the model's trained length, which bounds
any ``num_ctx`` (Ollama loads no more: ``server/sched.go`` ``effectiveContext``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from tether.providers.network import NetworkSettings

log = logging.getLogger(__name__)
TIMEOUT_S = 5.0
LOAD_TIMEOUT_S = 120.0
"""Loading a model into memory may take a while (it would take as long on the first chat)."""
OLLAMA_OLD_DEFAULT = 4_096
"""Ollama's default context before it sized it by VRAM (and listed it in ``/api/ps``)."""
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)
VLLM_SETTING = "vLLM's --max-model-len"
LITELLM_SETTING = "the deployment's max_input_tokens in LiteLLM's config, and its backend's"
LLAMACPP_SETTING = "llama.cpp's -c/--ctx-size"
OLLAMA_V1_SETTING = (
    "Ollama's OLLAMA_CONTEXT_LENGTH or a Modelfile's num_ctx (behind /v1 nothing else; an "
    "ollama:<model> spec sets it per request from modelOptions.contextWindow)"
)
ANY_SETTING = (
    "the server's context length (llama.cpp -c/--ctx-size, vLLM --max-model-len, LM "
    "Studio's context length, Ollama's OLLAMA_CONTEXT_LENGTH), then "
    "modelOptions.contextWindow to match"
)
"""A server that did not say which it is."""


@dataclass(frozen=True)
class Announced:
    window: int
    setting: str
    """The server's own setting for its window."""


async def discover_window(
    base_url: str, model: str, api_key: str, network: NetworkSettings | None = None
) -> Announced | None:
    """``network``: the caller's proxies and CA certificates (None: this process's)."""
    import httpx2

    headers = {"Authorization": f"Bearer {api_key}"}
    base = base_url.rstrip("/")
    root = base.removesuffix("/v1")
    make = network.client if network is not None else httpx2.AsyncClient
    try:
        async with make(timeout=TIMEOUT_S, headers=headers) as client:
            for ask, setting in (
                (_from_models, VLLM_SETTING),
                (_from_litellm, LITELLM_SETTING),
                (_from_llamacpp, LLAMACPP_SETTING),
            ):
                window = await ask(client, base if ask is not _from_llamacpp else root, model)
                if window is not None:
                    return Announced(window, setting)
            window = await _from_ollama(client, root, model)
            return Announced(window, OLLAMA_V1_SETTING) if window is not None else None
    except (httpx2.HTTPError, ValueError) as e:
        log.info("could not ask %s for the context window of %s: %s", base, model, e)
        return None


async def ollama_window(
    root: str,
    model: str,
    headers: dict[str, str],
    network: NetworkSettings | None = None,
    *,
    settled: bool = False,
) -> tuple[int | None, int | None]:
    """(the window Ollama runs ``model`` with, its trained length), each None where Ollama at
    ``root`` does not say (no such model, not an Ollama, not reachable). ``settled``: a
    setting fixes the window; only the trained length is asked."""
    import httpx2

    make = network.client if network is not None else httpx2.AsyncClient
    try:
        async with make(timeout=TIMEOUT_S, headers=headers) as client:
            show = await _show(client, root, model)
            window = None if settled else await _from_ollama(client, root, model, show)
            return window, _trained(show)
    except (httpx2.HTTPError, ValueError) as e:
        log.info("could not ask %s for the context window of %s: %s", root, model, e)
        return None, None


def _trained(show: dict[str, Any] | None) -> int | None:
    info = (show or {}).get("model_info")
    if not isinstance(info, dict):
        return None
    fields = cast("dict[str, Any]", info)
    return _int(fields.get(f"{fields.get('general.architecture')}.context_length"))


async def _show(client: Any, root: str, model: str) -> dict[str, Any] | None:
    return await _json(client, "POST", f"{root}/api/show", json={"model": model})


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _json(client: Any, method: str, url: str, **kw: Any) -> dict[str, Any] | None:
    response = await client.request(method, url, **kw)
    if response.status_code != 200:
        return None
    data = response.json()
    return cast("dict[str, Any]", data) if isinstance(data, dict) else None


def _items(data: dict[str, Any] | None, key: str) -> list[dict[str, Any]]:
    items = (data or {}).get(key)
    if not isinstance(items, list):
        return []
    return [cast("dict[str, Any]", i) for i in cast("list[Any]", items) if isinstance(i, dict)]


async def _from_models(client: Any, base: str, model: str) -> int | None:
    for card in _items(await _json(client, "GET", f"{base}/models"), "data"):
        if card.get("id") == model and _int(card.get("max_model_len")):
            return _int(card["max_model_len"])
    return None


async def _from_litellm(client: Any, base: str, model: str) -> int | None:
    for deployment in _items(await _json(client, "GET", f"{base}/model/info"), "data"):
        info = deployment.get("model_info")
        if deployment.get("model_name") == model and isinstance(info, dict):
            return _int(cast("dict[str, Any]", info).get("max_input_tokens"))
    return None


async def _from_llamacpp(client: Any, root: str, model: str) -> int | None:
    props = await _json(client, "GET", f"{root}/props")
    settings = (props or {}).get("default_generation_settings")
    if isinstance(settings, dict):
        return _int(cast("dict[str, Any]", settings).get("n_ctx"))
    return None


async def _from_ollama(
    client: Any, root: str, model: str, show: dict[str, Any] | None = None
) -> int | None:
    """``show``: the model's ``/api/show`` answer when it was asked already."""
    show = show if show is not None else await _show(client, root, model)
    if show is None:
        return None
    match = _NUM_CTX.search(str(show.get("parameters") or ""))
    if match:
        return int(match.group(1))
    if show.get("remote_host"):
        # A cloud model runs elsewhere, at its whole length (docs/context-length.mdx: "Cloud
        # models are set to their maximum context length by default"); /api/ps never lists it.
        return _trained(show)
    await client.post(f"{root}/api/generate", json={"model": model}, timeout=LOAD_TIMEOUT_S)
    tagged = model if ":" in model else f"{model}:latest"
    for running in _items(await _json(client, "GET", f"{root}/api/ps"), "models"):
        if tagged in (running.get("name"), running.get("model")):
            return _int(running.get("context_length")) or OLLAMA_OLD_DEFAULT
    return OLLAMA_OLD_DEFAULT
