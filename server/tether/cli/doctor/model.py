"""Which model a run here would use, what chose it, and whether it answers.

The model is resolved as print mode resolves it (``providers.choice``); the server is asked
something that costs nothing: ``GET <base>/models`` on an OpenAI-compatible server (Ollama,
LM Studio, vLLM, llama.cpp, LiteLLM), ``GET /v1/models/<model>`` (the Models API's "Get a
Model") on Anthropic's, through the same proxies and CA certificates a session uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from tether.cli.doctor.report import Finding
from tether.errors import ConfigError
from tether.providers.choice import ModelChoice, choose_model
from tether.providers.network import NetworkSettings
from tether.providers.windows import WindowBook
from tether.settings.load import LoadedSettings, origin_of
from tether.transcript.store import data_dir

AREA = "model"
TIMEOUT_S = 5.0
ANTHROPIC_VERSION = "2023-06-01"
_SHOWN_MODELS = 8


def resolve(
    model_flag: str | None, loaded: LoadedSettings, root: Path, env: Mapping[str, str]
) -> ModelChoice | Finding:
    """The model a run in ``root`` would use, or a ``fail`` saying why there is none."""
    chosen_by = "--model" if model_flag else origin_of(loaded, "model")
    try:
        choice = choose_model(model_flag or loaded.settings.model, chosen_by, cwd=root, env=env)
    except ConfigError as e:
        waiting = tuple(
            f"waits until this folder is trusted: {item}"
            for item in loaded.withheld
            if ": model endpoint " in item
        )
        if loaded.unreadable and not model_flag:
            files = ", ".join(str(p) for p in loaded.unreadable)
            return Finding(
                AREA,
                "fail",
                f"{files} cannot be read, so the model it may choose is not known; {e}",
                waiting,
                f"correct {files} (see the settings line below)",
            )
        return Finding(AREA, "fail", str(e), waiting, "see docs/models.md (choosing a model)")
    if choice.spec.provider != "anthropic" or loaded.settings.api_key_helper:
        return choice
    if not (env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")):
        return Finding(
            AREA,
            "fail",
            f"{choice.spec} (chosen by {choice.chosen_by}) has no API key",
            fix="set ANTHROPIC_AUTH_TOKEN (or ANTHROPIC_API_KEY) to the key the gateway at "
            "ANTHROPIC_BASE_URL wants, any value if it wants none"
            if env.get("ANTHROPIC_BASE_URL")
            else "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or choose a local model "
            "(ollama:<model>, or openai:<model>@<base-url>; see docs/models.md)",
        )
    return choice


async def check_model(
    choice: ModelChoice, loaded: LoadedSettings, env: Mapping[str, str]
) -> Finding:
    spec = choice.spec
    head = f"{spec} (chosen by {choice.chosen_by})"
    if spec.provider == "scripted":
        assert spec.path is not None
        if spec.path.is_file():
            return Finding(AREA, "ok", f"{head}: a scripted model, offline")
        return Finding(AREA, "fail", f"{head}: the script {spec.path} does not exist")
    assert choice.endpoint is not None
    url_from = choice.endpoint_chosen_by or "the provider's default"
    details = (f"URL: {choice.endpoint} (from {url_from})", *_learned(choice, env))
    try:
        answer = await _ask(choice, env)
    except ConfigError as e:  # a CA file that cannot be loaded, a bad proxy
        return Finding(AREA, "fail", f"{head}: {e}", details)
    if isinstance(answer, Exception):
        return _unreachable(head, choice, answer, details)
    wrong = _not_the_api(head, choice, answer, details)
    if wrong is not None:
        return wrong
    if spec.provider == "openai":
        found = _openai_answer(head, choice, answer.status, answer.body, details)
        native = await _ollama_root(choice, env) if found.status == "ok" else None
        if native is not None:
            advice = (
                f"Ollama answers at {native}: ollama:{spec.model}@{native} uses its native API, "
                "which sends the window with every request (num_ctx); through /v1 a prompt over "
                "the context Ollama loaded is cut silently (docs/models.md)"
            )
            return replace(found, details=(*found.details, advice))
        return found
    if spec.provider == "ollama":
        return _ollama_answer(head, choice, answer.status, answer.body, details)
    helper = bool(loaded.settings.api_key_helper) and not env.get("ANTHROPIC_API_KEY")
    return _anthropic_answer(head, choice, answer.status, details, helper)


def _learned(choice: ModelChoice, env: Mapping[str, str]) -> tuple[str, ...]:
    """The windows servers' refusals taught for this model and endpoint (one per credential,
    named by a digest), and how to forget them."""
    book = WindowBook.in_dir(data_dir(env))
    found = book.entries(choice.endpoint or "", choice.spec.model)
    return tuple(
        f"learned window: {window} tokens (credential {key.rsplit(' ', 1)[-1]}; a refusal "
        f"said so; to forget it, delete its line in {book.path})"
        for key, window in sorted(found.items())
    )


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    """The JSON body; None if it is not JSON."""
    content_type: str
    location: str | None
    """Where a redirect points."""


def _not_the_api(
    head: str, choice: ModelChoice, answer: Answer, details: tuple[str, ...]
) -> Finding | None:
    """Answers no API gives: a redirect, a failing server, a web page. Each is a ``fail``:
    a run there cannot work."""
    where = choice.endpoint_chosen_by or "the provider's default"
    if 300 <= answer.status < 400:
        return Finding(
            AREA,
            "fail",
            f"{head}: {choice.endpoint} redirects (HTTP {answer.status}) to "
            f"{answer.location or 'another address'}: not the API itself",
            details,
            f"use the API's own URL in {where} (a redirect to a login page means a proxy or "
            "gateway in front of it wants a sign-in)",
        )
    if answer.status >= 500:
        return Finding(
            AREA,
            "fail",
            f"{head}: the server fails (HTTP {answer.status})",
            details,
            "see the server's own log, and restart it",
        )
    if answer.status < 300 and answer.body is None:
        kind = answer.content_type.split(";")[0].strip() or "no content type"
        return Finding(
            AREA,
            "fail",
            f"{head}: {choice.endpoint} answers with a page ({kind}), not the API",
            details,
            f"use the root of the API in {where}; an OpenAI-compatible one usually ends in /v1 "
            "(Ollama: http://localhost:11434/v1)",
        )
    return None


async def _ask(choice: ModelChoice, env: Mapping[str, str]) -> Answer | Exception:
    """The server's answer, or what stopped the request."""
    import httpx2

    base = (choice.endpoint or "").rstrip("/")
    if choice.spec.provider == "openai":
        url = f"{base}/models"
        headers = {"Authorization": f"Bearer {env.get('OPENAI_API_KEY') or 'not-needed'}"}
    elif choice.spec.provider == "ollama":
        url = f"{base}/api/tags"  # the models it has (docs/api.md "List Local Models")
        key = env.get("OLLAMA_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
    else:
        url = f"{base}/v1/models/{choice.spec.model}"
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if env.get("ANTHROPIC_API_KEY"):
            headers["x-api-key"] = env["ANTHROPIC_API_KEY"]
        elif env.get("ANTHROPIC_AUTH_TOKEN"):
            headers["authorization"] = f"Bearer {env['ANTHROPIC_AUTH_TOKEN']}"
    network = NetworkSettings.of(env)
    try:
        async with network.client(timeout=TIMEOUT_S) as client:
            response = await client.get(url, headers=headers)
    except httpx2.HTTPError as e:
        return e
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    headers = response.headers
    return Answer(
        response.status_code, body, headers.get("content-type", ""), headers.get("location")
    )


async def _ollama_root(choice: ModelChoice, env: Mapping[str, str]) -> str | None:
    """Ollama's root when the OpenAI-compatible URL is Ollama's ``/v1`` (its
    ``GET /api/version`` answers), else None."""
    import httpx2

    root = (choice.endpoint or "").rstrip("/").removesuffix("/v1")
    try:
        async with NetworkSettings.of(env).client(timeout=TIMEOUT_S) as client:
            response = await client.get(f"{root}/api/version")
            version = response.json() if response.status_code == 200 else None
    except (httpx2.HTTPError, ValueError):
        return None
    return root if isinstance(version, dict) and "version" in version else None


def _unreachable(
    head: str, choice: ModelChoice, error: Exception, details: tuple[str, ...]
) -> Finding:
    import httpx2

    if isinstance(error, httpx2.TimeoutException):
        what = f"no answer from {choice.endpoint} within {TIMEOUT_S:.0f} s"
    else:
        what = f"cannot connect to {choice.endpoint} ({type(error).__name__}: {error})"
    if choice.spec.provider == "ollama":
        fix = "start Ollama (`ollama serve`), or say where it runs: OLLAMA_HOST, or "
        fix += f"ollama:{choice.spec.model}@<url> in {choice.chosen_by}"
    elif choice.endpoint_chosen_by is None:
        fix = "check the network and the proxy variables (HTTPS_PROXY, NO_PROXY)"
    else:
        fix = f"start the server, or correct the URL ({choice.endpoint_chosen_by})"
    return Finding(AREA, "fail", f"{head}: {what}", details, fix)


def _openai_answer(
    head: str, choice: ModelChoice, status: int, body: Any, details: tuple[str, ...]
) -> Finding:
    model = choice.spec.model
    if status in (401, 403):
        fix = "set OPENAI_API_KEY to a key this server accepts"
        summary = f"{head}: the server refused the key (HTTP {status})"
        return Finding(AREA, "fail", summary, details, fix)
    if status == 404:
        return Finding(
            AREA,
            "fail",
            f"{head}: the server answers, but not at {choice.endpoint}/models (HTTP 404)",
            details,
            "use the root of its OpenAI-compatible API, which usually ends in /v1 "
            "(Ollama: http://localhost:11434/v1)",
        )
    ids = _model_ids(body) if status == 200 else None
    if ids is None:
        summary = f"{head}: unexpected answer to GET /models (HTTP {status})"
        fix = "use the root of its OpenAI-compatible API, which usually ends in /v1"
        return Finding(AREA, "fail", summary, details, fix)
    if model in ids or f"{model}:latest" in ids:  # Ollama: a name without a tag is :latest
        return Finding(AREA, "ok", f"{head}: the server answers and serves {model}", details)
    listed = ", ".join(ids[:_SHOWN_MODELS]) + (", …" if len(ids) > _SHOWN_MODELS else "")
    return Finding(
        AREA,
        "fail",
        f"{head}: the server answers, but does not list {model}",
        (*details, f"it lists: {listed or 'nothing'}"),
        f"load or pull the model (Ollama: `ollama pull {model}`), or use a listed name in "
        f"{choice.chosen_by}",
    )


def _ollama_answer(
    head: str, choice: ModelChoice, status: int, body: Any, details: tuple[str, ...]
) -> Finding:
    model = choice.spec.model
    models = cast(dict[str, Any], body).get("models") if isinstance(body, dict) else None
    if status != 200 or not isinstance(models, list):
        return Finding(
            AREA,
            "fail",
            f"{head}: {choice.endpoint} answers, but not as Ollama (GET /api/tags: HTTP {status})",
            details,
            "use Ollama's root URL (http://localhost:11434), or openai:<model>@<base-url> "
            "for another server",
        )
    entries = [cast(dict[str, Any], m) for m in cast(list[Any], models) if isinstance(m, dict)]
    names = [str(m.get("name")) for m in entries if m.get("name")]
    if model in names or f"{model}:latest" in names:  # a name without a tag is :latest
        return Finding(AREA, "ok", f"{head}: Ollama answers and has {model}", details)
    listed = ", ".join(names[:_SHOWN_MODELS]) + (", …" if len(names) > _SHOWN_MODELS else "")
    return Finding(
        AREA,
        "fail",
        f"{head}: Ollama answers, but does not have {model}",
        (*details, f"it has: {listed or 'nothing'}"),
        f"pull the model (`ollama pull {model}`), or use a name it has in {choice.chosen_by}",
    )


def _model_ids(body: Any) -> list[str] | None:
    if not isinstance(body, dict):
        return None
    data = cast(dict[str, Any], body).get("data")
    if not isinstance(data, list):
        return None
    cards = [cast(dict[str, Any], c) for c in cast(list[Any], data) if isinstance(c, dict)]
    return [str(c["id"]) for c in cards if "id" in c]


def _anthropic_answer(
    head: str, choice: ModelChoice, status: int, details: tuple[str, ...], helper: bool
) -> Finding:
    if status == 200:
        return Finding(AREA, "ok", f"{head}: the API answers and accepts the key", details)
    if status == 401 and helper:
        summary = f"{head}: the API answers (the key comes from apiKeyHelper, not run here)"
        return Finding(AREA, "ok", summary, details)
    if status in (401, 403):
        fix = "set ANTHROPIC_API_KEY to a valid key (console.anthropic.com)"
        return Finding(AREA, "fail", f"{head}: the key was refused (HTTP {status})", details, fix)
    if status == 404:
        fix = f"check the model name in {choice.chosen_by}"
        summary = f"{head}: {choice.spec.model} is not known there (HTTP 404)"
        # A gateway (ANTHROPIC_BASE_URL) may not offer the Models API at all: not proof.
        status_of = "fail" if choice.endpoint_chosen_by is None else "warn"
        return Finding(AREA, status_of, summary, details, fix)
    fix = f"check the URL ({choice.endpoint_chosen_by or 'the default'}): it must be the API's root"
    return Finding(AREA, "fail", f"{head}: unexpected answer (HTTP {status})", details, fix)
