"""The start-up warm-up makes, in its own thread, what a session's first request would
otherwise make on the event loop once per process: the input schema of every tool a new
session offers, and the HTTP client's trust store."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tether.editor.disk import DiskEditor
from tether.providers.network import trust_store
from tether.providers.script import parse_script
from tether.providers.scripted import ScriptedProvider
from tether.settings.trust import TrustStore
from tether.tools import base
from tether.transcript.store import TranscriptStore
from tether.warmup import warm_first_request
from tether.workspace import Workspace
from tether.workspace.options import SessionOptions


async def test_every_tool_a_new_session_offers_has_its_schema_made(tmp_path: Path) -> None:
    base._SCHEMAS.clear()  # pyright: ignore[reportPrivateUsage]
    trust_store.cache_clear()
    await asyncio.to_thread(warm_first_request)  # as the front doors run it
    made = set(base._SCHEMAS)  # pyright: ignore[reportPrivateUsage]
    assert trust_store.cache_info().currsize >= 1

    root = tmp_path / "ws"
    root.mkdir()
    workspace = Workspace(
        root,
        store=TranscriptStore(tmp_path / "data"),
        provider_factory=lambda _m, _r: ScriptedProvider(parse_script([]), model="scripted"),
        user_settings=False,
        trust=TrustStore(tmp_path / "trust.json"),
        watch_settings=False,
    )
    try:
        session = workspace.new_session(DiskEditor(), SessionOptions())
        offered = session.engine.tools.specs()
        pool = session.engine.tools
        models = {tool.input_model for tool in [*pool.core, *pool.deferred]}
        assert offered and models
        assert models <= made, f"not warmed: {sorted(m.__name__ for m in models - made)}"
    finally:
        await workspace.close()
