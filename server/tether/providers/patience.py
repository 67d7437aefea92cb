"""How long a model request may keep the user waiting, and the waiting made visible.

Two waits matter for a stream, and one number cannot serve both:

* **First answer:** from sending the request to the stream's first event. A local model
  that is still loading sends nothing for minutes; a server that took the connection and
  hung sends nothing ever. Default 300 s: Ollama itself gives up on a model load that
  stalls for 5 minutes (``OLLAMA_LOAD_TIMEOUT``), so a longer wait only waits on a dead
  server. ``API_TIMEOUT_MS`` (Claude Code's request timeout, the variable its users already
  raise for slow local models) sets it.
* **Between events:** once the answer streams, a gap means the server or the path to it
  died. Default 90 s, Claude Code's stream watchdog (``CLAUDE_STREAM_IDLE_TIMEOUT_MS``);
  the Messages API sends ``ping`` events in between, so a live stream never goes that long
  silent.

Either comes from the caller's environment, the settings' ``env`` over it. A request that
outlives the first wait is not retried (the same server would keep the user waiting as long
again): it fails with the URL, the wait and the variable that raises it (``watch``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tether.errors import ConfigError

FIRST_ANSWER_VARIABLE = "API_TIMEOUT_MS"
IDLE_VARIABLE = "CLAUDE_STREAM_IDLE_TIMEOUT_MS"
DEFAULT_FIRST_ANSWER_S = 300.0
DEFAULT_IDLE_S = 90.0
DEFAULT_REQUEST_S = 600.0
"""The SDKs' own request timeout: the bound of a whole non-streamed answer."""


def _seconds(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        ms = float(raw)
    except ValueError:
        ms = -1.0
    if not ms > 0 or ms == float("inf"):
        raise ConfigError(
            f"{name}={raw!r} is not a number of milliseconds: write a positive whole number, "
            f"e.g. {name}=600000 for 10 minutes (in the environment or the settings' env)"
        )
    return ms / 1000


@dataclass(frozen=True)
class Patience:
    """The waits, each None where nothing set it (the default holds)."""

    first_answer_s: float | None = None
    idle_s: float | None = None

    @classmethod
    def read(cls, env: Mapping[str, str]) -> Patience:
        """What ``env`` sets; a value that is not milliseconds is a ``ConfigError``."""
        return cls(_seconds(env, FIRST_ANSWER_VARIABLE), _seconds(env, IDLE_VARIABLE))

    def over(self, base: Patience) -> Patience:
        """These waits where set, ``base``'s elsewhere."""
        return Patience(
            self.first_answer_s if self.first_answer_s is not None else base.first_answer_s,
            self.idle_s if self.idle_s is not None else base.idle_s,
        )

    @property
    def first_answer(self) -> float:
        return self.first_answer_s if self.first_answer_s is not None else DEFAULT_FIRST_ANSWER_S

    @property
    def idle(self) -> float:
        return self.idle_s if self.idle_s is not None else DEFAULT_IDLE_S

    @property
    def request(self) -> float:
        """A whole request (a non-streamed answer); never shorter than the first answer."""
        return max(DEFAULT_REQUEST_S, self.first_answer)

    @property
    def http(self) -> float:
        """The HTTP client's own read timeout: longer than any wait here, which are ours."""
        return max(self.request, self.idle)
