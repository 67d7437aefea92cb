"""Which Tether a process is: the version plus the newest source file of the installed
package, so a daemon left running by an older install (or an edited checkout) is noticed
and replaced by the client that finds it. Standard library only."""

from __future__ import annotations

import os
from pathlib import Path

from tether import __version__


def build_id() -> str:
    override = os.environ.get("TETHER_BUILD_ID")
    if override:
        return override
    package = Path(__file__).resolve().parent.parent
    newest = 0
    for directory, _dirs, files in os.walk(package):
        for name in files:
            if name.endswith(".py"):
                newest = max(newest, os.stat(os.path.join(directory, name)).st_mtime_ns)
    return f"{__version__}+{newest}"
