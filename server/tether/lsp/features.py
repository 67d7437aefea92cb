"""What the client declared at ``initialize`` that changes how the daemon talks to it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
from lsprotocol import types
from pygls.capabilities import get_capability

from tether.core.files import read_regular_text
from tether.core.json_input import parse_json
from tether.lsp.textedits import Encoding
from tether.providers.registry import parse_model_spec


@dataclass(frozen=True)
class ClientFeatures:
    permission_request: bool = False
    session_updates: bool = True
    save_documents: bool = False
    diagnostics: bool = False
    apply_edit: bool = True
    create_files: bool = False
    delete_files: bool = False
    work_done_progress: bool = False
    encoding: Encoding = "utf-16"
    plugin: bool = False
    """The client declared ``experimental.tether``: a Tether plugin, which has its own
    commands and views (the plain-LSP code actions and commands are not advertised to it)."""
    show_document: bool = False
    code_action_literals: bool = False
    """Code actions may be returned as ``CodeAction`` literals (else as plain Commands)."""


def detect(caps: types.ClientCapabilities, encoding: Any) -> ClientFeatures:
    raw: Any = caps.experimental
    experimental: dict[str, Any] = raw if isinstance(raw, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    found: Any = experimental.get("tether")
    plugin = isinstance(found, dict)
    ours: dict[str, Any] = found if isinstance(found, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    ops = get_capability(caps, "workspace.workspace_edit.resource_operations", None) or []
    names = {str(getattr(op, "value", op)) for op in ops}
    enc = str(getattr(encoding, "value", encoding) or "utf-16")
    return ClientFeatures(
        permission_request=bool(ours.get("permissionRequest", False)),
        session_updates=bool(ours.get("sessionUpdates", True)),
        save_documents=bool(ours.get("saveDocuments", False)),
        diagnostics=bool(ours.get("diagnostics", False)),
        apply_edit=bool(get_capability(caps, "workspace.apply_edit", False)),
        create_files="create" in names,
        delete_files="delete" in names,
        work_done_progress=bool(get_capability(caps, "window.work_done_progress", False)),
        encoding=enc if enc in ("utf-8", "utf-16", "utf-32") else "utf-16",  # type: ignore[arg-type]
        plugin=plugin,
        show_document=bool(get_capability(caps, "window.show_document.support", False)),
        code_action_literals=get_capability(
            caps, "text_document.code_action.code_action_literal_support", None
        )
        is not None,
    )


NO_MODEL = (
    'no model is configured: set ANTHROPIC_API_KEY, or "model" (e.g. '
    '"anthropic:claude-sonnet-4-6" or "openai:<model>@<base URL>") in initializationOptions, '
    ".tether/settings.json or the user's tether/settings.json"
)


def startup_facts(
    root: Path | None, init_options: dict[str, Any], env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """What ``initialize`` reports for health checks, computed cheaply (no engine import):
    the model that will be used and whether the shell sandbox can run. ``env``: the
    client's variables (an editor of the warm daemon sends its own), else this process's."""
    env = os.environ if env is None else env
    model: str | None = (
        init_options.get("model") if isinstance(init_options.get("model"), str) else None
    )
    source = "initializationOptions" if model else None
    if model is None and root is not None:
        for path in (
            root / ".tether" / "settings.local.json",
            root / ".tether" / "settings.json",
            platformdirs.user_config_path("tether", appauthor=False) / "settings.json",
        ):
            try:
                value = parse_json(read_regular_text(path)).get("model")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(value, str) and value:
                model, source = value, str(path)
                break
    if model is None and (env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")):
        # The model a session will use, named as a spec (the header of an editor shows it).
        default = parse_model_spec(None, env=env)
        model, source = str(default), "ANTHROPIC_API_KEY"
    bwrap = shutil.which("bwrap")
    return {
        "model": model,
        "modelSource": source,
        "modelReason": None if model else NO_MODEL,
        "sandbox": "bwrap" if bwrap else None,
        "sandboxReason": None if bwrap else "bubblewrap (bwrap) is not installed",
    }
