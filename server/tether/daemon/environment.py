"""What a client of the warm daemon sends of itself: its whole environment, directory and
umask (``core.environ.Caller``), which the processes of its sessions run with. Standard
library only (the thin client imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.core.environ import current_umask


def client_environment(cwd: str, env: Mapping[str, str]) -> dict[str, Any]:
    """The params of ``tether/clientEnvironment``."""
    return {"cwd": cwd, "env": dict(env), "umask": current_umask()}
