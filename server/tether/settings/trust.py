"""Workspace trust: project settings that would run something wait for the user's yes.

A repository can carry ``.tether/settings.json``. Until the user trusts the workspace
once, everything in the project files that runs a program or widens what runs unasked is
withheld: hooks, MCP servers, ``env`` (it can point the model client elsewhere), a model
spec naming another API endpoint, ``apiKeyHelper``, extra directories for the file tools,
``bypassPermissions`` as the default mode, and any loosening of the shell sandbox. Plain
permission rules still apply — the sandbox contains what they allow — and the user's own
settings file is always trusted.

Trust is remembered per canonical workspace path in the user's config directory, which
the sandbox keeps read-only.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any, cast

import platformdirs

from tether.core.files import read_regular_text
from tether.core.json_input import parse_json

log = logging.getLogger(__name__)


def trust_store_path() -> Path:
    return platformdirs.user_config_path("tether", appauthor=False) / "trusted-workspaces.json"


class TrustStore:
    """The trusted folders, one JSON file. A damaged file is read for what can be read (the
    well-formed entries); before it is next written, the whole file is kept beside it
    (``damaged_copy``) so that nothing the user had is lost."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or trust_store_path()

    @property
    def damaged_copy(self) -> Path:
        return self.path.with_name(self.path.name + ".damaged")

    def read(self) -> tuple[list[str], str | None]:
        """The trusted folders, and what is wrong with the file (None: nothing)."""
        try:
            data = parse_json(read_regular_text(self.path))
        except FileNotFoundError:
            return [], None
        except (OSError, ValueError) as e:
            return [], f"cannot read {self.path} ({e})"
        trusted = _as_dict(data).get("trusted")
        if not isinstance(trusted, list):
            return [], f'{self.path} has no "trusted" list'
        items = cast(list[Any], trusted)
        roots = [p for p in items if isinstance(p, str)]
        if len(roots) < len(items):
            return (
                roots,
                f"{self.path} lists {len(items) - len(roots)} entry(ies) that are not paths",
            )
        return roots, None

    def problem(self) -> str | None:
        """What is wrong with the file, if anything (``tether doctor`` reports it)."""
        return self.read()[1]

    def _load(self) -> list[str]:
        roots, problem = self.read()
        if problem is not None:
            log.warning("%s; the folders it names are trusted as far as they can be read", problem)
        return roots

    def is_trusted(self, root: Path) -> bool:
        return str(Path(os.path.realpath(root))) in self._load()

    def trust(self, root: Path) -> None:
        roots, problem = self.read()
        key = str(Path(os.path.realpath(root)))
        if key in roots:
            return
        roots.append(key)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if problem is not None:  # kept whole before it is replaced by what could be read
            try:
                shutil.copyfile(self.path, self.damaged_copy)
            except OSError as e:
                raise OSError(
                    f"{problem}, and it cannot be kept as {self.damaged_copy}: {e}"
                ) from e
            log.warning("%s; kept as %s, and written anew", problem, self.damaged_copy)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"trusted": roots}, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.path)


def _as_dict(value: Any) -> dict[str, Any]:
    return dict(cast(dict[str, Any], value)) if isinstance(value, dict) else {}


MODEL_ENDPOINT = "model endpoint"
"""How a withheld model spec is listed (``source: model endpoint SPEC``)."""


def withheld_model(withheld: list[str]) -> str | None:
    """The model spec the project's settings name that waits for trust, if any."""
    marker = f": {MODEL_ENDPOINT} "
    for line in withheld:
        if marker in line:
            return line.partition(marker)[2]
    return None


def model_waits_for_trust(spec: str) -> str:
    """What to tell a user whose project's model waits for trust, and how to grant it."""
    return (
        f"this folder's settings choose the model {spec}, which is used once you trust the "
        "folder: run `tether -p` here on a terminal and answer yes to the trust question "
        "(or pass --model)"
    )


def _model_points_elsewhere(model: Any) -> bool:
    return isinstance(model, str) and ("@" in model or "://" in model)


def withhold_untrusted(layer: dict[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """``layer`` without what needs trust, and a line per withheld item for the dialog."""
    out: dict[str, Any] = dict(layer)
    withheld: list[str] = []

    def drop(container: dict[str, Any], key: str, label: str) -> None:
        container.pop(key, None)
        withheld.append(f"{source}: {label}")

    hooks = out.get("hooks")
    if isinstance(hooks, dict) and hooks:
        for event, groups in hooks.items():  # pyright: ignore[reportUnknownVariableType]
            for command in _hook_commands(groups):
                withheld.append(f"{source}: {event} hook `{command}`")
        out.pop("hooks")
    for key, label in (("env", "environment variables"), ("mcpServers", "MCP servers")):
        if out.get(key):
            drop(out, key, label)
    if out.get("apiKeyHelper"):
        drop(out, "apiKeyHelper", f"apiKeyHelper `{out.get('apiKeyHelper')}`")
    if _model_points_elsewhere(out.get("model")):
        drop(out, "model", f"{MODEL_ENDPOINT} {out.get('model')}")
    if isinstance(out.get("permissions"), dict):
        perms = out["permissions"] = _as_dict(out["permissions"])
        if perms.get("additionalDirectories"):
            drop(perms, "additionalDirectories", "additional directories for file tools")
        if perms.get("defaultMode") == "bypassPermissions":
            drop(perms, "defaultMode", "defaultMode bypassPermissions")
    if isinstance(out.get("sandbox"), dict):
        sandbox = out["sandbox"] = _as_dict(out["sandbox"])
        for key, loosening, label in (
            ("enabled", False, "turning the shell sandbox off"),
            ("allowNetwork", True, "network access for shell commands"),
            ("hideHome", False, "your home directory readable by shell commands"),
        ):
            if sandbox.get(key) == loosening:
                drop(sandbox, key, label)
        for key, label in (
            ("writablePaths", "extra writable paths for shell commands"),
            ("readablePaths", "extra readable paths for shell commands"),
        ):
            if sandbox.get(key):
                drop(sandbox, key, label)
        if isinstance(sandbox.get("network"), dict):
            network = sandbox["network"] = _as_dict(sandbox["network"])
            if network.get("allowedDomains"):
                drop(network, "allowedDomains", "hosts shell commands may reach")
    return out, withheld


def _hook_commands(groups: Any) -> list[str]:
    commands: list[str] = []
    for group in groups if isinstance(groups, list) else []:  # pyright: ignore[reportUnknownVariableType]
        hooks = group.get("hooks") if isinstance(group, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        for hook in hooks if isinstance(hooks, list) else []:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(hook, dict) and isinstance(hook.get("command"), str):  # pyright: ignore[reportUnknownMemberType]
                commands.append(str(hook["command"]))  # pyright: ignore[reportUnknownArgumentType]
    return commands


def project_mcp_config(root: Path) -> list[str]:
    """``.mcp.json`` servers start only in a trusted workspace (there is no MCP client yet,
    but the gate is here so that one cannot forget it)."""
    path = root / ".mcp.json"
    return [f"{path.name}: MCP servers"] if path.is_file() else []
