"""The folder a run would work in: is it trusted (what its settings ask for that waits for
trust), and do its settings files read cleanly."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from tether.cli.doctor.report import Finding
from tether.settings.load import LoadedSettings
from tether.transcript.store import data_dir

AREA = "workspace"


def check_trust(
    root: Path, trusted: bool, loaded: LoadedSettings, store: Path, damage: str | None = None
) -> Finding:
    if damage is not None:
        return Finding(
            AREA,
            "fail",
            f"the list of trusted folders is damaged: {damage}",
            (f"this folder is {'trusted' if trusted else 'not trusted'} as far as it can be read",),
            f"correct or delete {store}; answering yes to a trust question keeps a copy of it "
            f"as {store.name}.damaged and writes it anew with the folders it could read",
        )
    if trusted:
        return Finding(AREA, "ok", f"{root} is trusted: its own settings apply in full")
    if not loaded.withheld:
        summary = f"{root} is not trusted; its settings ask for nothing that needs trust"
        return Finding(AREA, "ok", summary)
    return Finding(
        AREA,
        "warn",
        f"{root} is not trusted: its settings ask for things that wait until you trust it",
        tuple(f"withheld: {item}" for item in loaded.withheld),
        "run a prompt here from a terminal (tether -p …) or an editor and answer yes to the "
        f"trust question; trusted folders are listed in {store}",
    )


def check_settings(loaded: LoadedSettings) -> Finding:
    files = tuple(f"read: {path}" for path in loaded.sources)
    if not loaded.warnings:
        said = "read cleanly" if loaded.sources else "none (the defaults apply)"
        return Finding("settings", "ok", said, files)
    return Finding(
        "settings",
        "warn",
        f"{len(loaded.warnings)} problem(s); each bad value falls back to its default",
        (*loaded.warnings, *files),
        f"correct {', '.join(str(p) for p in loaded.unreadable)}: each is ignored whole until "
        "it reads as a JSON object"
        if loaded.unreadable
        else "correct the keys named above (docs: README, Configuration)",
    )


def check_data_dir(env: Mapping[str, str]) -> Finding:
    """Sessions are saved in the data directory: it is made (as a first run would) and a
    file written in it, which is the only sure test (a user without a home has neither)."""
    path = data_dir(env)
    chosen = "TETHER_DATA_DIR" if env.get("TETHER_DATA_DIR") else "the default, in your home"
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        return Finding(
            "data",
            "fail",
            f"sessions cannot be saved in {path} ({chosen}): {e.strerror or e}",
            fix="set TETHER_DATA_DIR to a directory you can write (or give this user a home "
            "directory)",
        )
    return Finding("data", "ok", f"sessions are saved in {path}")
