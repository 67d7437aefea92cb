"""Where each OpenAI-compatible server reports its window, as the fake serves it (the
shapes and their evidence are in ``openai_rules``):

* every flavour: ``GET /v1/models`` (vLLM's cards add ``max_model_len``);
* ``litellm``: ``GET /model/info`` (and ``/v1/model/info``), ``model_info.max_input_tokens``;
* ``llamacpp``: ``GET /props``, ``default_generation_settings.n_ctx``;
* ``ollama``: ``POST /api/show`` (``num_ctx`` in ``parameters`` only when the Modelfile sets
  it; the trained length in ``model_info``), ``POST /api/generate`` without a prompt loads
  the model, ``GET /api/ps`` lists loaded models with the ``context_length`` they run with,
  ``GET /api/tags`` the models it has, ``GET /api/version`` its version.

Other servers answer an unknown route with 404 (vLLM's FastAPI ``{"detail": "Not Found"}``).
With ``announce_window`` off, no route reports the window.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from tether.testing.openai_rules import Flavor
from tether.testing.sse import Reply


class Served(Protocol):
    """What discovery needs of the fake server."""

    served_model: str | None
    context_window: int
    announce_window: bool
    flavor: Flavor
    modelfile_num_ctx: bool
    loaded: bool
    trained_context: int
    remote: bool


OLLAMA_VERSION = "0.13.5"
"""What ``GET /api/version`` says: one with ``truncate`` and ``shift`` (0.12.6 and later)."""
TRAINED_CONTEXT = 131_072
"""The ``<arch>.context_length`` the fake's Ollama model reports (not what it runs with)."""


def serve_discovery(
    server: Served, method: str, path: str, body: dict[str, Any] | None, reply: Reply
) -> bool:
    name = server.served_model or "fake-model"
    window = server.context_window if server.announce_window else None
    flavor = server.flavor
    if method == "GET" and path == "/v1/models":
        card: dict[str, Any] = {
            "id": name,
            "object": "model",
            "created": int(time.time()),
            "owned_by": {"vllm": "vllm", "ollama": "library", "llamacpp": "llamacpp"}.get(
                flavor, "openai"
            ),
        }
        if flavor == "vllm":
            card.update(root=name, parent=None)
            if window is not None:
                card["max_model_len"] = window
        reply.json(200, {"object": "list", "data": [card]})
        return True
    if flavor == "litellm" and method == "GET" and path in ("/model/info", "/v1/model/info"):
        info: dict[str, Any] = {"id": "deployment-1", "mode": "chat", "max_output_tokens": 4096}
        if window is not None:
            info["max_input_tokens"] = window
        deployment = {"model_name": name, "litellm_params": {"model": f"openai/{name}"}}
        reply.json(200, {"data": [{**deployment, "model_info": info}]})
        return True
    if flavor == "llamacpp" and method == "GET" and path == "/props":
        settings: dict[str, Any] = {"n_predict": -1, "temperature": 0.8}
        if window is not None:
            settings["n_ctx"] = window
        reply.json(200, {"default_generation_settings": settings, "total_slots": 1})
        return True
    if flavor == "ollama" and path.startswith("/api/"):
        return _ollama(server, method, path, body, reply, name, window)
    if path.startswith("/api/") or path in ("/props", "/model/info", "/v1/model/info"):
        reply.json(404, {"detail": "Not Found"})
        return True
    return False


def _ollama(
    server: Served,
    method: str,
    path: str,
    body: dict[str, Any] | None,
    reply: Reply,
    name: str,
    window: int | None,
) -> bool:
    wanted = (body or {}).get("model") or (body or {}).get("name")
    if method == "POST" and path in ("/api/show", "/api/generate") and wanted != name:
        reply.json(404, {"error": f"model '{wanted}' not found"})
        return True
    if method == "POST" and path == "/api/show":
        parameters = 'stop                           "<|im_end|>"'
        if server.modelfile_num_ctx and window is not None:
            parameters += f"\nnum_ctx                        {window}"
        info = {"general.architecture": "qwen2", "qwen2.context_length": server.trained_context}
        answer: dict[str, Any] = {
            "parameters": parameters,
            "model_info": info,
            "capabilities": ["completion"],
        }
        if server.remote:
            answer.update(remote_host="https://ollama.com:443", remote_model=name)
        reply.json(200, answer)
        return True
    if method == "POST" and path == "/api/generate" and not (body or {}).get("prompt"):
        server.loaded = not server.remote
        reply.json(200, {"model": name, "response": "", "done": True, "done_reason": "load"})
        return True
    if method == "GET" and path == "/api/tags":  # the models it has (to run, or to pull)
        tagged = name if ":" in name else f"{name}:latest"
        reply.json(200, {"models": [{"name": tagged, "model": tagged, "size": 4_683_087_332}]})
        return True
    if method == "GET" and path == "/api/version":
        reply.json(200, {"version": OLLAMA_VERSION})
        return True
    if method == "GET" and path == "/api/ps":
        models: list[dict[str, Any]] = []
        if server.loaded:
            tagged = name if ":" in name else f"{name}:latest"
            running: dict[str, Any] = {"name": tagged, "model": tagged}
            if window is not None:
                running["context_length"] = window
            models.append(running)
        reply.json(200, {"models": models})
        return True
    reply.json(404, {"error": f"unknown route {path}"})
    return True
