"""``apiKeyHelper``: a shell command that prints the API key, with Claude Code's semantics.

The command runs through ``/bin/sh -c`` in the workspace; its stdout (stripped) is the key,
sent both as ``X-Api-Key`` and as ``Authorization: Bearer``. The key is cached for five
minutes (``CLAUDE_CODE_API_KEY_HELPER_TTL_MS`` changes that) and fetched again after the API
answers 401. A helper that fails, times out or prints nothing is a ``ModelError`` naming the
command and the cause: the turn stops with that message instead of sending no key.
The settings layer only hands the command over in a trusted workspace.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping

from tether.core.environ import as_caller, process_env, process_umask
from tether.errors import ModelError

DEFAULT_TTL_MS = 5 * 60 * 1000
TIMEOUT_S = 30.0


class ApiKeyHelper:
    def __init__(
        self, command: str, *, cwd: str | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self.command = command
        self.cwd = cwd
        self._env = env
        """The caller's variables (the warm daemon serves several); None: this process's."""
        self._key: str | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    @property
    def ttl_s(self) -> float:
        raw = (os.environ if self._env is None else self._env).get(
            "CLAUDE_CODE_API_KEY_HELPER_TTL_MS", ""
        )
        return (int(raw) if raw.isdigit() else DEFAULT_TTL_MS) / 1000

    def stale(self) -> bool:
        return self._key is None or time.monotonic() - self._fetched_at >= self.ttl_s

    def invalidate(self) -> None:
        """The API refused the key (401): fetch a new one before the next request."""
        self._key = None

    async def key(self) -> str:
        async with self._lock:
            if not self.stale() and self._key is not None:
                return self._key
            self._key = await self._run()
            self._fetched_at = time.monotonic()
            return self._key

    async def _run(self) -> str:
        caller = as_caller(self._env)
        try:
            proc = await asyncio.create_subprocess_exec(
                "/bin/sh",
                "-c",
                self.command,
                # The user's own command, run like a hook: in the caller's directory, with
                # its environment and umask (in-process: this process's, inherited).
                cwd=self.cwd or (caller.cwd if caller is not None else None),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=None if caller is None else process_env(caller, credentials=True),
                umask=process_umask(caller),
            )
        except OSError as e:
            raise ModelError(f"apiKeyHelper `{self.command}` could not start: {e}") from e
        try:
            out, err = await asyncio.wait_for(proc.communicate(), TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise ModelError(
                f"apiKeyHelper `{self.command}` timed out after {TIMEOUT_S:.0f}s"
            ) from None
        if proc.returncode != 0:
            detail = err.decode(errors="replace").strip() or f"exit status {proc.returncode}"
            raise ModelError(f"apiKeyHelper `{self.command}` failed: {detail}")
        key = out.decode(errors="replace").strip()
        if not key:
            raise ModelError(f"apiKeyHelper `{self.command}` printed no key")
        return key
