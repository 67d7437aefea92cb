"""What the SDK-backed providers share about reaching their API: the connection settings
(where, which key, how patient, through which proxies) and the one SDK client each provider
keeps, made on first use, made again when its key changes, closed with the provider. How a
request body looks is each provider's own (``convert_*``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypedDict, TypeVar, Unpack

from tether.core.environ import environ_of
from tether.providers.models import ModelOptions
from tether.providers.network import NetworkSettings
from tether.providers.patience import Patience
from tether.providers.retry import RetryPolicy
from tether.providers.windows import WindowBook


class SdkClient(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=SdkClient)


class ConnectionArgs(TypedDict, total=False):
    """The constructor keywords every SDK-backed provider takes (defaults in ``Connection.of``)."""

    api_key: str | None
    max_retries: int
    base_delay_s: float
    max_delay_s: float
    caller_env: Mapping[str, str] | None
    windows: WindowBook | None


@dataclass(frozen=True)
class Connection:
    base_url: str | None
    api_key: str | None
    """None: the SDK finds its own (environment variables, profiles)."""
    policy: RetryPolicy
    patience: Patience
    """How long a request may wait for its first event, between events, and in all."""
    options: ModelOptions
    caller_env: Mapping[str, str] | None = None
    """The variables of the warm daemon's client the provider serves; None: this
    process's (the SDK reads them itself)."""
    network: NetworkSettings | None = None
    """The caller's proxies and CA certificates; None: the SDK reads this process's."""
    windows: WindowBook | None = None
    """Where windows learned from refusals are kept (None: only in memory)."""

    @property
    def timeout_s(self) -> float:
        """The HTTP client's timeout (``patience`` keeps the shorter waits itself)."""
        return self.patience.http

    @classmethod
    def of(
        cls,
        base_url: str | None,
        options: ModelOptions | None,
        **args: Unpack[ConnectionArgs],
    ) -> Connection:
        caller_env = args.get("caller_env")
        options = options or ModelOptions()
        return cls(
            base_url,
            args.get("api_key"),
            RetryPolicy(
                args.get("max_retries", 4),
                args.get("base_delay_s", 0.5),
                args.get("max_delay_s", 30.0),
            ),
            options.patience.over(Patience.read(environ_of(caller_env))),
            options,
            caller_env,
            NetworkSettings.of(caller_env) if caller_env is not None else None,
            args.get("windows"),
        )


class ClientCache(Generic[C]):
    """One SDK client, keyed by the API key it was made with. The SDK fixes a client's
    headers at construction, so a new key (an ``apiKeyHelper`` refresh) means a new client."""

    def __init__(self, make: Callable[[str | None], C]) -> None:
        self._make = make
        self._client: C | None = None
        self._key: str | None = None

    async def get(self, key: str | None) -> C:
        if self._client is not None and key != self._key:
            await self.aclose()
        if self._client is None:
            self._client = self._make(key)
            self._key = key
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
