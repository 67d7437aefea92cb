"""The settings tree. Every field has a default; unknown keys are ignored with a warning."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from tether.protocol.updates import Mode


class _Section(BaseModel):
    # camelCase keys in the JSON files; an alias generator keeps pyright's view simple
    model_config = ConfigDict(extra="ignore", populate_by_name=True, alias_generator=to_camel)


class PermissionSettings(_Section):
    allow: list[str] = Field(default_factory=lambda: list[str]())
    ask: list[str] = Field(default_factory=lambda: list[str]())
    deny: list[str] = Field(default_factory=lambda: list[str]())
    default_mode: Mode = "default"
    additional_directories: list[str] = Field(default_factory=lambda: list[str]())


class SandboxSettings(_Section):
    enabled: bool = True
    allow_network: bool = False
    writable_paths: list[str] = Field(default_factory=lambda: list[str]())


class Settings(_Section):
    model: str | None = None
    permissions: PermissionSettings = Field(default_factory=lambda: PermissionSettings())
    sandbox: SandboxSettings = Field(default_factory=lambda: SandboxSettings())
    max_turns: int | None = None
    max_budget_usd: float | None = None
    env: dict[str, str] = Field(default_factory=lambda: dict[str, str]())
    hooks: dict[str, Any] = Field(default_factory=lambda: dict[str, Any]())


LIST_KEYS = {
    ("permissions", "allow"),
    ("permissions", "ask"),
    ("permissions", "deny"),
    ("permissions", "additionalDirectories"),
    ("sandbox", "writablePaths"),
}
