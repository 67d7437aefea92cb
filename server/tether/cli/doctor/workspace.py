"""The folder a run would work in: is it trusted (what its settings ask for that waits for
trust), and do its settings files read cleanly."""

from __future__ import annotations

from pathlib import Path

from tether.cli.doctor.report import Finding
from tether.settings.load import LoadedSettings

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
