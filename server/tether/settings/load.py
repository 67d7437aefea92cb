"""Load and merge settings files. List keys merge; scalars take the most specific value.

Order, least specific first: user (``~/.config/tether/settings.json``), project
(``.tether/settings.json``), local (``.tether/settings.local.json``), then command-line /
initialization options. ``SettingSources`` picks which of the three files are read
(``--setting-sources``, the Agent SDKs' ``settingSources``). A bad file or value produces a
warning naming the key and falls back to the default; the daemon never refuses to start over
settings. In a workspace the
user has not trusted, the project and local files lose what needs trust (``trust.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import ValidationError

from tether.core.files import read_regular_text
from tether.core.json_input import parse_json
from tether.settings.git_exclude import exclude_local_files
from tether.settings.model import LIST_KEYS, Settings, unknown_keys
from tether.settings.trust import project_mcp_config, withhold_untrusted


def user_settings_path() -> Path:
    return platformdirs.user_config_path("tether", appauthor=False) / "settings.json"


def project_settings_paths(root: Path) -> tuple[Path, Path]:
    return root / ".tether" / "settings.json", root / ".tether" / "settings.local.json"


@dataclass(frozen=True)
class SettingSources:
    """Which settings files load: the user's, the project's shared one, its local one."""

    user: bool = True
    project: bool = True
    local: bool = True

    @classmethod
    def parse(cls, text: str) -> SettingSources:
        """``user,project,local`` (any of them, maybe none); raises ``ValueError`` naming an
        unknown source."""
        names = {n.strip() for n in text.split(",")} - {""}
        unknown = names - {"user", "project", "local"}
        if unknown:
            raise ValueError(
                f"unknown setting source {', '.join(sorted(unknown))} "
                "(the sources are user, project and local)"
            )
        return cls("user" in names, "project" in names, "local" in names)


ALL_SOURCES = SettingSources()


@dataclass
class LoadedSettings:
    settings: Settings
    warnings: list[str] = field(default_factory=lambda: list[str]())
    sources: list[Path] = field(default_factory=lambda: list[Path]())
    withheld: list[str] = field(default_factory=lambda: list[str]())
    """What the project files ask for that waits until the workspace is trusted."""
    origins: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    """Top-level key -> where its value in force came from: a settings file's path, or
    ``OVERRIDES`` (error messages name the setting to fix)."""
    unreadable: list[Path] = field(default_factory=lambda: list[Path]())
    """Settings files that exist but were ignored whole (not JSON, not an object)."""


OVERRIDES = "the command line's settings"


def origin_of(loaded: LoadedSettings, key: str) -> str | None:
    """``<key> in <file>`` for the setting in force, or None when no layer set it."""
    where = loaded.origins.get(key)
    return f"{key} in {where}" if where is not None else None


def _read(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        data = parse_json(read_regular_text(path))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        warnings.append(f"{path}: not readable as JSON ({e}); ignored")
        return {}
    if not isinstance(data, dict):
        warnings.append(f"{path}: the top level must be an object; ignored")
        return {}
    return data  # type: ignore[return-value]


def merge(
    base: dict[str, Any], over: dict[str, Any], prefix: tuple[str, ...] = ()
) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        path = (*prefix, key)
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value, path)  # type: ignore[arg-type]
        elif path in LIST_KEYS and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = [*out[key], *(v for v in value if v not in out[key])]  # type: ignore[union-attr]
        else:
            out[key] = value
    return out


def validate_leniently(data: dict[str, Any], warnings: list[str]) -> Settings:
    """Validate; every bad key is reported and dropped, so the rest still applies."""
    for _ in range(50):
        try:
            return Settings.model_validate(data)
        except ValidationError as e:
            for err in e.errors(include_url=False):
                loc = [str(p) for p in err["loc"]]
                warnings.append(f"setting {'.'.join(loc)}: {err['msg']}; using the default")
                data = _drop(data, loc)
    return Settings()


def _drop(data: dict[str, Any], loc: list[str]) -> dict[str, Any]:
    if not loc:
        return {}
    out = dict(data)
    head = loc[0]
    if len(loc) == 1 or not isinstance(out.get(head), dict):
        if isinstance(out.get(head), list) and len(loc) > 1 and loc[1].isdigit():
            items = list(out[head])  # type: ignore[arg-type]
            idx = int(loc[1])
            if idx < len(items):
                items.pop(idx)
            out[head] = items
        else:
            out.pop(head, None)
        return out
    out[head] = _drop(out[head], loc[1:])  # type: ignore[arg-type]
    return out


def load_settings(
    root: Path,
    overrides: dict[str, Any] | None = None,
    *,
    sources: SettingSources = ALL_SOURCES,
    trusted: bool = False,
) -> LoadedSettings:
    warnings: list[str] = []
    read: list[Path] = []
    withheld: list[str] = []
    unreadable: list[Path] = []
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    project, local = project_settings_paths(root)
    layers: list[tuple[Path, bool]] = [(user_settings_path(), False)] if sources.user else []
    layers += [(project, True)] if sources.project else []
    layers += [(local, True)] if sources.local else []
    for path, from_project in layers:
        said = len(warnings)
        data = _read(path, warnings)
        if len(warnings) > said:
            unreadable.append(path)
        if not data:
            continue
        read.append(path)
        for key in unknown_keys(data):
            warnings.append(f"{path}: setting {key}: unknown key; ignored")
        if from_project and not trusted:
            data, held = withhold_untrusted(data, str(path.relative_to(root)))
            withheld += held
        merged = merge(merged, data)
        origins.update(dict.fromkeys(data, str(path)))
    if not trusted:
        withheld += project_mcp_config(root)
    if overrides:
        merged = merge(merged, overrides)
        origins.update(dict.fromkeys(overrides, OVERRIDES))
    settings = validate_leniently(merged, warnings)
    # Not logged here: every front door shows ``warnings`` its own way (a note, a log
    # message to the editor, the daemon's log); logging them too printed each one twice.
    return LoadedSettings(settings, warnings, read, withheld, origins, unreadable)


def load_user_settings() -> LoadedSettings:
    """The user's own settings file alone (what no project may decide: the daemon's life)."""
    warnings: list[str] = []
    path = user_settings_path()
    data = _read(path, warnings)
    settings = validate_leniently(data, warnings)
    return LoadedSettings(settings, warnings, [path] if data else [])


def add_local_rule(root: Path, kind: str, rule: str) -> Path:
    """Persist an "always" answer as a rule in the workspace's local settings (a file
    git ignores from its first write on: ``git_exclude``)."""
    _, local = project_settings_paths(root)
    warnings: list[str] = []
    first = not local.exists()
    data = _read(local, warnings) if not first else {}
    perms = data.setdefault("permissions", {})
    if not isinstance(perms, dict):
        perms = data["permissions"] = {}
    rules = perms.setdefault(kind, [])  # type: ignore[union-attr]
    if isinstance(rules, list) and rule not in rules:
        rules.append(rule)  # type: ignore[union-attr]
    local.parent.mkdir(parents=True, exist_ok=True)
    tmp = local.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(local)
    if first:
        exclude_local_files(local.parent)
    return local
