"""``tether sessions``: one line per session, newest first."""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.transcript.store import TranscriptStore


def sessions_command(args: argparse.Namespace) -> int:
    store = TranscriptStore()
    workspace = None if args.all else Path(args.cwd or ".").resolve()
    infos = store.list_sessions(workspace, args.limit)
    if not infos:
        where = "anywhere" if workspace is None else str(workspace)
        print(f"No sessions found for {where}.")
        return 0
    for info in infos:
        print(f"{info.session_id}  {info.updated_at}  {info.turns:>3} turn(s)  {info.title}")
    return 0
