"""Record schema versions. A record written by an older Tether is upgraded step by step
(``MIGRATIONS[v]`` turns a version-v dict into version v+1) before validation, so frozen
fixtures of every version keep loading. Bump SCHEMA_VERSION only together with a migration."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.errors import SessionError

Migration = Callable[[dict[str, Any]], dict[str, Any]]

MIGRATIONS: dict[int, Migration] = {}
"""version -> function upgrading a record of that version to the next one."""


def migrate(raw: dict[str, Any], current: int) -> dict[str, Any]:
    version = raw.get("v", 1)
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"bad record version {version!r}")
    if version > current:
        raise SessionError(
            f"this transcript was written by a newer Tether (record version {version}, "
            f"this one reads up to {current}); upgrade Tether to resume it"
        )
    while version < current:
        step = MIGRATIONS.get(version)
        if step is None:
            raise ValueError(f"no migration from record version {version}")
        raw = step(raw)
        version += 1
        raw["v"] = version
    return raw
