"""What a client of the warm daemon sends of its environment: the variables that belong to
a caller (``core.environ``), which its sessions run with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.core.environ import session_variables

__all__ = ["client_environment", "session_variables"]


def client_environment(cwd: str, env: Mapping[str, str]) -> dict[str, Any]:
    """The params of ``tether/clientEnvironment``."""
    return {"cwd": cwd, "env": session_variables(env)}
