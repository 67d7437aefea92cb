"""One session as the LSP front door holds it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.lsp.checkpoints import CheckpointingEditor, Checkpoints

if TYPE_CHECKING:
    from tether.engine.engine import QueryEngine
    from tether.workspace import Workspace


@dataclass
class SessionEntry:
    workspace: Workspace
    engine: QueryEngine
    editor: CheckpointingEditor
    checkpoints: Checkpoints
    ready: bool = False
    """MCP servers were given their chance to come up before the first turn."""
