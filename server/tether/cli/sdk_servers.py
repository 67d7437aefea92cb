"""The MCP servers an SDK program brings, and what it asks of them while the session runs.

Two kinds: servers that live in the program (``sdk``: ``cli/sdk_mcp.py`` reaches them over
the control channel), and servers Tether starts or dials for it (stdio, http, sse: from
``--mcp-config``, ``initialize.mcpServers`` or ``mcp_set_servers``, run by the workspace like
its own). ``mcp_set_servers`` replaces the program's set (the workspace's own servers stay),
``mcp_toggle`` takes one out of the session and back, ``mcp_reconnect`` starts one again,
``mcp_status`` lists them all. Per-tool policies (``always_ask``, ``always_deny``) become ask
and deny rules ``mcp__server__tool``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import ValidationError

from tether.cli.control import ControlChannel, ControlError
from tether.cli.driver import HostedServer, SessionDriver
from tether.cli.sdk_mcp import HostedMcpClient, ManifestUse, read_manifest
from tether.cli.sdk_wire import RequestRefused, SdkServerConfig, ToolPolicy


def is_hosted(config: Any) -> bool:
    return isinstance(config, Mapping) and cast(Mapping[str, Any], config).get("type") == "sdk"


def tool_rules(name: str, config: SdkServerConfig) -> tuple[list[str], list[str]]:
    """(ask, deny) rules for a server's per-tool policy."""
    ask: list[str] = []
    deny: list[str] = []
    for policy in config.tools or []:
        rule = f"mcp__{name}__{policy.name}"
        if policy.permission_policy == "always_deny":
            deny.append(rule)
        elif policy.permission_policy not in ("always_allow", None):
            ask.append(rule)  # always_ask, and (as in Claude Code) anything unknown
    return ask, deny


def server_config(raw: Any) -> SdkServerConfig | str:
    """A server's configuration, or why it cannot be read. A tool policy entry that cannot
    be read is dropped (as in Claude Code); a configuration that cannot be read at all (its
    ``tools`` not a list) refuses the server, whose ``always_deny`` policies would otherwise
    be lost while its tools run; a bad ``timeout`` is ignored."""
    fields: dict[str, Any] = dict(cast(Mapping[str, Any], raw)) if isinstance(raw, Mapping) else {}
    tools: Any = fields.get("tools")
    if isinstance(tools, list):
        # As Claude Code: a policy entry that cannot be read is dropped, the others hold.
        kept: list[Any] = []
        for entry in cast(list[Any], tools):
            try:
                kept.append(ToolPolicy.model_validate(entry))
            except ValidationError:
                sys.stderr.write(
                    f"[tether] an SDK MCP server's tool policy {entry!r} is malformed; left out\n"
                )
        fields["tools"] = kept
    try:
        return SdkServerConfig.model_validate(fields)
    except ValidationError as e:
        if all(err["loc"][:1] == ("timeout",) for err in e.errors()):
            sys.stderr.write(
                f"[tether] an SDK MCP server's timeout {fields['timeout']!r} is "
                "not a number of milliseconds; the default applies\n"
            )
            return server_config({k: v for k, v in fields.items() if k != "timeout"})
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(config)'}: {err['msg']}"
            for err in e.errors(include_url=False)[:3]
        )
        return f"its configuration is malformed ({problems}), so it is not started"


@dataclass
class SdkServers:
    channel: ControlChannel
    hosted: dict[str, HostedMcpClient] = field(default_factory=lambda: dict[str, HostedMcpClient]())
    external: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    """The program's servers that Tether runs, by name, as configured."""
    disabled: set[str] = field(default_factory=lambda: set[str]())
    manifests: dict[str, ManifestUse] = field(default_factory=lambda: dict[str, ManifestUse]())
    ask: list[str] = field(default_factory=lambda: list[str]())
    deny: list[str] = field(default_factory=lambda: list[str]())
    refused: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    """The program's in-process servers Tether will not run, and why (``mcp_status``)."""

    # -- before the session opens -----------------------------------------------------

    def announce(
        self,
        servers: Mapping[str, Any],
        *,
        configs: Mapping[str, Any] | None = None,
        manifests: Any = None,
    ) -> None:
        """Servers named by ``--mcp-config``, ``initialize.sdkMcpServers`` (with their
        ``sdkMcpServerConfigs`` and ``sdkMcpServerManifests``) or ``initialize.mcpServers``."""
        found: Mapping[str, Any] = manifests if isinstance(manifests, Mapping) else {}  # pyright: ignore[reportUnknownVariableType]
        for name, raw in servers.items():
            if not is_hosted(raw):
                self.external[name] = raw
                continue
            extra: Any = (configs or {}).get(name)
            config = server_config({**dict(raw), **(extra if isinstance(extra, Mapping) else {})})
            if isinstance(config, str):
                self._refuse(name, config)
                continue
            manifest = read_manifest(found[name]) if name in found else None
            client = HostedMcpClient(
                name, self.channel, timeout_ms=config.timeout, manifest=manifest
            )
            self.hosted[name] = client
            if name in found:
                self.manifests[name] = client.manifest_use or "malformed"
            ask, deny = tool_rules(name, config)
            self.ask += ask
            self.deny += deny

    def _refuse(self, name: str, why: str) -> None:
        sys.stderr.write(f"[tether] the SDK MCP server {name}: {why}\n")
        self.refused[name] = why
        self.hosted.pop(name, None)

    async def connect(self) -> list[HostedServer]:
        """Connect the in-process servers; a server that fails is reported, not fatal (as
        Claude Code lists it as failed)."""
        connected: list[HostedServer] = []
        for name, client in self.hosted.items():
            if name in self.disabled:
                continue
            try:
                connected.append(await client.connect())
            except ControlError as e:
                sys.stderr.write(f"[tether] {e}\n")
        return connected

    # -- while it runs -----------------------------------------------------------------

    def live(self) -> list[HostedServer]:
        return [
            c.hosted()
            for n, c in self.hosted.items()
            if n not in self.disabled and c.error is None and c.server_info is not None
        ]

    def statuses(self, driver: SessionDriver, is_open: bool) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for name, client in self.hosted.items():
            entry: dict[str, Any] = {"name": name, "source": "sdk", "config": {"type": "sdk"}}
            if name in self.disabled:
                entry["status"] = "disabled"
            elif client.error is not None:
                entry |= {"status": "failed", "error": client.error}
            elif client.server_info is None:
                entry["status"] = "pending"
            else:
                entry |= {
                    "status": "connected",
                    "serverInfo": client.server_info,
                    "tools": [
                        {"name": t.name, "description": t.description or ""} for t in client.tools
                    ],
                }
            out.append(entry)
        out += [
            {
                "name": n,
                "source": "sdk",
                "config": {"type": "sdk"},
                "status": "failed",
                "error": why,
            }
            for n, why in self.refused.items()
        ]
        states = {s.name: s for s in driver.facts().mcp_servers} if is_open else {}
        for name, config in self.external.items():
            state = states.get(name)
            entry = {"name": name, "source": "dynamic", "config": config}
            if name in self.disabled:
                entry["status"] = "disabled"
            elif state is None:
                entry["status"] = "pending"
            else:
                entry["status"] = state.status
                if state.error:
                    entry["error"] = state.error
            out.append(entry)
        names = {e["name"] for e in out}
        out += [
            {"name": s.name, "status": s.status, **({"error": s.error} if s.error else {})}
            for s in states.values()
            if s.name not in names
        ]
        return out

    def _running_external(self) -> dict[str, Any]:
        return {n: c for n, c in self.external.items() if n not in self.disabled}

    async def set_servers(
        self, servers: Mapping[str, Any], driver: SessionDriver, is_open: bool
    ) -> dict[str, Any]:
        """``mcp_set_servers``: the program's servers become ``servers``."""
        before = set(self.hosted) | set(self.external)
        errors: dict[str, str] = {}
        for name in [n for n in self.hosted if n not in servers or not is_hosted(servers[n])]:
            del self.hosted[name]
        self.external = {n: c for n, c in servers.items() if not is_hosted(c)}
        fresh: list[str] = []
        for name, raw in servers.items():
            if not is_hosted(raw):
                continue
            config = server_config(raw)
            if isinstance(config, str):
                self._refuse(name, config)
                errors[name] = config
                continue
            self.refused.pop(name, None)
            ask, deny = tool_rules(name, config)
            self.ask += [r for r in ask if r not in self.ask]
            self.deny += [r for r in deny if r not in self.deny]
            if name not in self.hosted:
                self.hosted[name] = HostedMcpClient(name, self.channel, timeout_ms=config.timeout)
                fresh.append(name)
        self.disabled &= set(self.hosted) | set(self.external)
        if is_open:
            for name in fresh:
                try:
                    await self.hosted[name].connect()
                except ControlError as e:
                    errors[name] = str(e)
            driver.set_hosted(self.live(), ask=self.ask, deny=self.deny)
            errors |= await driver.set_mcp_servers(self._running_external())
        after = set(self.hosted) | set(self.external)
        return {
            "added": sorted(after - before),
            "removed": sorted(before - after),
            "errors": errors,
        }

    def _known(self, name: str) -> None:
        if name in self.refused:
            raise RequestRefused(f"the MCP server {name}: {self.refused[name]}")
        if name not in self.hosted and name not in self.external:
            names = ", ".join([*self.hosted, *self.external]) or "none"
            raise RequestRefused(
                f"no MCP server named {name!r} of this program (its servers: {names}); "
                "the workspace's own servers are managed in its settings"
            )

    async def toggle(self, name: str, enabled: bool, driver: SessionDriver, is_open: bool) -> None:
        self._known(name)
        if enabled:
            self.disabled.discard(name)
        else:
            self.disabled.add(name)
        if not is_open:
            return
        client = self.hosted.get(name)
        if client is not None and enabled and client.server_info is None:
            await client.connect()
        driver.set_hosted(self.live(), ask=self.ask, deny=self.deny)
        problems = await driver.set_mcp_servers(self._running_external())
        if name in problems:
            raise RequestRefused(problems[name])

    async def reconnect(self, name: str, driver: SessionDriver, is_open: bool) -> None:
        self._known(name)
        if name in self.disabled:
            raise RequestRefused(f"the MCP server {name} is disabled: enable it (mcp_toggle)")
        if not is_open:
            return
        client = self.hosted.get(name)
        if client is None:
            await driver.restart_mcp(name)
            return
        try:
            await client.connect()
        finally:
            driver.set_hosted(self.live(), ask=self.ask, deny=self.deny)

    async def message(
        self, name: str, message: dict[str, Any], driver: SessionDriver, is_open: bool
    ) -> dict[str, Any]:
        """A message the program's server sends on its own; a tools change is acted on,
        anything else acknowledged."""
        client = self.hosted.get(name)
        if client is None:
            raise RequestRefused(f"no SDK MCP server named {name!r}")
        changed = message.get("method") == "notifications/tools/list_changed"
        if changed and is_open and name not in self.disabled and client.server_info is not None:
            await client.relist()
            driver.set_hosted(self.live(), ask=self.ask, deny=self.deny)
        return {"mcp_response": {"jsonrpc": "2.0", "result": {}}}
