"""MCP server configuration in Claude Code's format, from ``.mcp.json`` and settings.

    {"mcpServers": {
        "files":  {"command": "npx", "args": ["-y", "@acme/files"], "env": {"TOKEN": "${TOKEN}"}},
        "search": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
        "legacy": {"type": "sse", "url": "https://example.com/sse"}}}

``type`` is ``stdio`` when absent (``command`` given), ``http`` (alias ``streamable-http``)
or ``sse``. ``${VAR}`` and ``${VAR:-default}`` are expanded from the environment in the
command, args, env, url and headers. ``env`` and ``headers`` may also be lists of
``{"name", "value"}`` (the ACP form), so a front door can hand its client's servers over
as dicts. An entry that does not parse is a problem reported by name, never a reason to
drop the others.

Sources: the settings' ``mcpServers`` (already merged by the settings loader, and empty
of project entries until the workspace is trusted) win over ``.mcp.json``, which is read
only for a trusted workspace: it names programs to run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from tether.core.files import read_regular_text
from tether.core.json_input import parse_json

SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_vars(text: str, env: Mapping[str, str] | None = None) -> str:
    """``${VAR}`` / ``${VAR:-default}`` from ``env``; an unset variable without a default
    becomes empty (Claude Code warns and does the same)."""
    source = os.environ if env is None else env

    def sub(m: re.Match[str]) -> str:
        value = source.get(m.group(1))
        return value if value else (m.group(2) or "")

    return _VAR.sub(sub, text)


def _pairs(value: Any) -> Any:
    """Accept ``[{"name": k, "value": v}]`` (ACP) as well as ``{k: v}``."""
    if isinstance(value, list):
        out: dict[str, Any] = {}
        for item in cast(list[Any], value):
            if isinstance(item, Mapping):
                pair = cast(Mapping[str, Any], item)
                out[str(pair.get("name"))] = pair.get("value")
        return out
    return value


class _Server(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class StdioServer(_Server):
    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=lambda: list[str]())
    env: dict[str, str] = Field(default_factory=lambda: dict[str, str]())
    cwd: str | None = None

    @field_validator("env", mode="before")
    @classmethod
    def _env_pairs(cls, value: Any) -> Any:
        return _pairs(value)

    def expanded(self, env: Mapping[str, str] | None = None) -> StdioServer:
        return self.model_copy(
            update={
                "command": expand_vars(self.command, env),
                "args": [expand_vars(a, env) for a in self.args],
                "env": {k: expand_vars(v, env) for k, v in self.env.items()},
                "cwd": expand_vars(self.cwd, env) if self.cwd else None,
            }
        )


class RemoteServer(_Server):
    type: Literal["http", "streamable-http", "sse"] = "http"
    url: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=lambda: dict[str, str]())

    @field_validator("headers", mode="before")
    @classmethod
    def _header_pairs(cls, value: Any) -> Any:
        return _pairs(value)

    def expanded(self, env: Mapping[str, str] | None = None) -> RemoteServer:
        return self.model_copy(
            update={
                "url": expand_vars(self.url, env),
                "headers": {k: expand_vars(v, env) for k, v in self.headers.items()},
            }
        )


ServerConfig = Annotated[StdioServer | RemoteServer, Field(union_mode="left_to_right")]
_ADAPTER: TypeAdapter[StdioServer | RemoteServer] = TypeAdapter(ServerConfig)


@dataclass(frozen=True)
class NamedServer:
    name: str
    config: StdioServer | RemoteServer
    source: str

    @property
    def transport(self) -> str:
        return "http" if self.config.type == "streamable-http" else self.config.type


@dataclass
class McpConfig:
    servers: list[NamedServer] = field(default_factory=lambda: list[NamedServer]())
    problems: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    """Server name (or source) -> why it was skipped."""


def parse_server(
    name: str, raw: Any, source: str = "config", env: Mapping[str, str] | None = None
) -> NamedServer:
    """One entry, its ``${VAR}`` expanded from ``env`` (the caller's variables; None: this
    process's); raises ValueError with a readable reason."""
    if not SERVER_NAME.fullmatch(name):
        raise ValueError(f"the name {name!r} may use only letters, digits, '_' and '-'")
    if not isinstance(raw, Mapping):
        raise ValueError("expected an object with `command` or `url`")
    data = dict(cast(Mapping[str, Any], raw))
    kind = data.get("type")
    if kind is None:
        data["type"] = "stdio" if "command" in data else "http"
    elif kind not in ("stdio", "http", "streamable-http", "sse"):
        raise ValueError(f"unknown type {kind!r} (expected stdio, http or sse)")
    try:
        config = _ADAPTER.validate_python(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or '(entry)'}: {err['msg']}"
            for err in e.errors(include_url=False)
        )
        raise ValueError(problems) from None
    return NamedServer(name, config.expanded(env), source)


def read_mcp_json(root: Path) -> tuple[dict[str, Any], str | None]:
    """The ``mcpServers`` object of ``root/.mcp.json`` and a problem, if any."""
    path = root / ".mcp.json"
    try:
        data = parse_json(read_regular_text(path))
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as e:
        return {}, f"cannot read {path.name}: {e}"
    servers: Any = cast(dict[str, Any], data).get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, f"{path.name} has no `mcpServers` object"
    return dict(cast(dict[str, Any], servers)), None


def load_config(
    root: Path,
    settings_servers: Mapping[str, Any] | None = None,
    *,
    project_file: bool = True,
    env: Mapping[str, str] | None = None,
) -> McpConfig:
    """Every configured server. ``project_file``: read ``.mcp.json`` (trusted workspace);
    ``env``: the variables ``${VAR}`` comes from (the caller's; None: this process's)."""
    config = McpConfig()
    entries: dict[str, tuple[Any, str]] = {}
    if project_file:
        servers, problem = read_mcp_json(root)
        if problem is not None:
            config.problems[".mcp.json"] = problem
        entries.update({n: (raw, ".mcp.json") for n, raw in servers.items()})
    entries.update({n: (raw, "settings") for n, raw in (settings_servers or {}).items()})
    for name, (raw, source) in entries.items():
        try:
            config.servers.append(parse_server(name, raw, source, env))
        except ValueError as e:
            config.problems[name] = f"{source}: {e}"
    return config
