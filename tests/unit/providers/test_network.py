"""A caller's proxy variables mean to Tether what they mean to httpx2 reading its own
environment, and its CA settings are the ones loaded."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from httpx2._utils import get_environment_proxies

from tether.core.environ import process_env
from tether.errors import ConfigError
from tether.providers.network import NetworkSettings, proxy_mounts

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"HTTP_PROXY": "http://proxy:3128"},
        {"HTTPS_PROXY": "proxy:3128", "ALL_PROXY": "socks5://s:1080"},
        {"http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2"},
        {"HTTP_PROXY": "http://p:1", "NO_PROXY": "*"},
        {
            "HTTP_PROXY": "http://p:1",
            "NO_PROXY": "localhost, .example.com,example.org,*.corp,10.0.0.0/8,::1,"
            "fe80::/10,[::2],http://direct.test,192.168.1.1",
        },
    ],
)
def test_the_same_mounts_as_httpx2_reading_the_environment(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert dict(proxy_mounts(env)) == get_environment_proxies()


def test_a_ca_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "bundle.pem"
    settings = NetworkSettings.of({"REQUESTS_CA_BUNDLE": str(missing)})
    assert settings.ca_file == str(missing)
    with pytest.raises(ConfigError, match="fix the path or unset it") as caught:
        settings.client()
    assert str(missing) in str(caught.value)


async def test_a_client_uses_the_given_settings_and_not_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://the-process:1")
    client = NetworkSettings.of({"HTTP_PROXY": "http://the-caller:2"}).client()
    try:
        assert not client.trust_env
        mounts = {str(p.pattern): t for p, t in client._mounts.items()}
        assert set(mounts) == {"http://"}
        assert isinstance(mounts["http://"], httpx2.AsyncHTTPTransport)
    finally:
        await client.aclose()


def test_a_callers_environment_replaces_the_daemons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://the-daemon:1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "the-daemons-key")
    monkeypatch.setenv("HOME", "/home/someone")
    env = process_env({"VIRTUAL_ENV": "/venv", "OPENAI_API_KEY": "k"}, credentials=False)
    # The caller's whole environment and nothing else: not even the daemon's HOME.
    assert env == {"VIRTUAL_ENV": "/venv"}  # Bash never gets model keys
    with_keys = process_env({"OPENAI_API_KEY": "k"}, credentials=True)
    assert with_keys == {"OPENAI_API_KEY": "k"}
    # The settings' env goes on top; model keys it sets still stay out of Bash.
    layered = process_env(
        {"PATH": "/caller/bin", "KUBECONFIG": "/caller/kube"},
        credentials=False,
        settings={"KUBECONFIG": "/settings/kube", "ANTHROPIC_API_KEY": "from-settings"},
    )
    assert layered == {"PATH": "/caller/bin", "KUBECONFIG": "/settings/kube"}
