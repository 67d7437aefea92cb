"""Start-up work done off the start-up path, and, for a one-shot run, a heap the cyclic GC
can skip.

A process imports a few hundred thousand objects (the engine, the model SDKs, pydantic's
schemas) that live as long as it does, and CPython's full collections walk every one of
them. ``gc.freeze()`` moves what exists into a permanent generation those collections skip,
which suits a run that ends with its one command (``import_for_run``). A process that lives
on (the warm daemon, an editor's server) freezes once, when its start-up warm-up is done and
right after a full collection (``settle_start_up``): nothing frozen is garbage then, and what
is frozen (modules, their caches, the SDKs' types) lives as long as the process anyway.
Without it every full collection of a busy daemon walks that heap again: 60-130 ms on the
event loop while the editor waits for an answer. After that it never freezes again: what
exists later, garbage of other sessions included, would never be collected;
``bench/soak.py`` measures its memory over a long day.
"""

from __future__ import annotations

import gc
import importlib
import logging
import threading
from collections.abc import Sequence

log = logging.getLogger(__name__)

ENGINE_MODULES = (
    "tether.workspace",
    "tether.transcript.replay",
    "tether.providers.anthropic",
    "tether.providers.openai_compat",
    "tether.providers.ollama",
    "openai",
    "httpcore2",
    "anyio._backends._asyncio",
)
"""What an editor's first prompt needs. Not the Anthropic SDK: a key or a token never needs
it (``providers/anthropic_transport.py``); the OpenAI-compatible provider does use its SDK.
The HTTP client imports its transport and async backend at its first request, on the event
loop (about 100 ms in one callback, while the editor waits): imported here instead."""


def warm_imports(modules: Sequence[str]) -> None:
    """Import ``modules`` (best effort), for a process that lives on: nothing is frozen."""
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:  # warming is best effort
            log.debug("warming %s failed", module, exc_info=True)


def settle_start_up() -> None:
    """For a process that lives on, once, at the end of its start-up warm-up: a full
    collection, then what survives it (start-up's own objects, all live) is frozen out of
    later collections' way. A second call freezes nothing more."""
    global _settled
    with _settle_lock:
        if _settled:
            return
        _settled = True
        gc.collect()
        gc.freeze()


_settled = False
_settle_lock = threading.Lock()


def one_shot() -> bool:
    """Whether this process is a run that ends with its one command (``import_for_run``):
    only such a process freezes what it makes later (a big session it loads)."""
    return _one_shot


_one_shot = False


def warm_engine() -> None:
    """The engine's imports, then what its first request does once per process, then the
    start-up heap frozen (``settle_start_up``)."""
    warm_imports(ENGINE_MODULES)
    warm_first_request()
    settle_start_up()


def warm_first_request() -> None:
    """What the first prompt would otherwise do once per process on the event loop (best
    effort): the tools' input schemas (pydantic makes each in milliseconds: about 15 ms for
    the built-in tools) and the HTTP client's trust store (the system's CA bundle: 20 to
    50 ms)."""
    warm_tool_schemas()
    warm_network()


def warm_tool_schemas() -> None:
    """The input schemas of the built-in tools, made and cached (``tools/base.py``)."""
    try:
        from tether.agents.tool import AgentInput
        from tether.permissions.plan_mode import EXIT_PLAN_MODE_TOOL
        from tether.tools.base import input_schema
        from tether.tools.registry import core_tools
        from tether.tools.web_search import WebSearchInput

        for tool in [*core_tools(), EXIT_PLAN_MODE_TOOL]:
            input_schema(tool.input_model)
            tool.spec()
        input_schema(AgentInput)
        input_schema(WebSearchInput)
    except Exception:  # warming is best effort: the first request makes them then
        log.debug("warming the tools' schemas failed", exc_info=True)


def warm_network() -> None:
    """The trust stores the model clients most likely use, and the HTTP client's own TLS
    defaults, loaded once (``providers/network.py`` keeps them)."""
    try:
        import asyncio
        import os

        from tether.providers.network import NetworkSettings, trust_store

        trust_store(None, None)  # the system's CA store
        # And the CA settings callers most likely share: those of whoever started this
        # process (a store is kept per setting; a caller's own decides which it gets).
        own = NetworkSettings.of(os.environ)
        trust_store(own.ca_file, own.ca_dir)

        async def client() -> None:
            await NetworkSettings.of({}).client().aclose()

        asyncio.run(client())
    except Exception:
        log.debug("warming the HTTP client failed", exc_info=True)


RUN_MODULES = (
    "tether.cli.inprocess",
    "tether.cli.run",
    "tether.cli.render",
    "tether.providers.anthropic",
)
"""What a ``tether -p`` run in this process needs before its first request."""


def import_for_run(modules: Sequence[str] = RUN_MODULES) -> None:
    """A run in this process: import what it needs with the cyclic GC off, then freeze the
    result. The hundreds of thousands of objects imports create live as long as the
    process; without this, collections walk them again and again while they pile up (about
    160 collections and 100 ms of a cold ``tether -p --resume``, one full collection of
    50 ms among them). Only for a process of its own: ``gc`` is process-wide."""
    global _one_shot
    _one_shot = True
    enabled = gc.isenabled()
    gc.disable()
    try:
        for module in modules:
            try:
                importlib.import_module(module)
            except ImportError:  # the run itself reports what is missing
                log.debug("importing %s failed", module, exc_info=True)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
