"""Each caller of the warm daemon gets its own environment, and nothing of the daemon's:
proxies and CA certificates for the model's HTTP client, hooks, stdio MCP servers, Bash,
WebFetch's small model. The daemon is started with values of its own for every variable,
so a session that reads the daemon's environment instead of its caller's is caught."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.core.environ import is_session_variable
from tether.daemon.paths import INSTANCE_VARIABLES
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_proxy import FakeProxy
from tether.testing.fake_web import FakeWebServer

SUPPORT = Path(__file__).resolve().parents[1] / "support"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KEPT = ("PATH", "LANG", "LC_ALL", "TERM")


def clean_env(values: dict[str, str]) -> dict[str, str]:
    """This process's environment without anything that belongs to a caller, plus ``values``."""
    base = {k: v for k, v in os.environ.items() if not is_session_variable(k) or k in KEPT}
    return {**base, **values}


def tether(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", *args],
        env=clean_env(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
    )


@pytest.fixture
def daemon_proxy() -> Iterator[FakeProxy]:
    with FakeProxy() as proxy:
        yield proxy


@pytest.fixture
def common(daemon_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """What every call shares: the daemon's socket and the data directories."""
    return {
        **daemon_env,
        "TETHER_RUNTIME_DIR": str(tmp_path / "run"),
        "TETHER_NO_DAEMON": "0",
    }


@pytest.fixture
def daemon(common: dict[str, str], daemon_proxy: FakeProxy) -> Iterator[dict[str, str]]:
    """A warm daemon whose own environment has a value for everything a caller might set."""
    own = {
        **common,
        "ANTHROPIC_API_KEY": "the-daemons-key",
        "HTTP_PROXY": daemon_proxy.url,
        "HTTPS_PROXY": daemon_proxy.url,
        "VIRTUAL_ENV": "/the-daemons-venv",
        "ANTHROPIC_SMALL_FAST_MODEL": "claude-the-daemons-small-model",
    }
    started = tether(own, "daemon", "start")
    assert started.returncode == 0, started.stderr
    yield common
    tether(common, "daemon", "stop")


def daemon_pid(env: dict[str, str]) -> int:
    return int(json.loads(tether(env, "daemon", "status", "--json").stdout)["pid"])


def test_each_caller_reaches_the_api_through_its_own_proxy(
    daemon: dict[str, str],
    daemon_proxy: FakeProxy,
    workspace: Path,
    fake_api: Callable[[list[Any]], FakeAnthropicServer],
) -> None:
    pid = daemon_pid(daemon)
    api = fake_api([[{"type": "text", "text": f"answer {n}"}] for n in range(3)])
    endpoint = f"POST {api.base_url}/v1/messages"
    with FakeProxy() as first, FakeProxy() as second:
        callers = [
            {"HTTP_PROXY": first.url},
            {"http_proxy": second.url},  # lowercase, as curl and urllib also read it
            {},  # no proxy: straight to the API, not through the daemon's
        ]
        for n, variables in enumerate(callers):
            done = tether(
                {**daemon, **variables, "ANTHROPIC_BASE_URL": api.base_url},
                "-p",
                "hi",
                "--model",
                "claude-sonnet-4-6",
                cwd=workspace,
            )
            assert (done.returncode, done.stdout) == (0, f"answer {n}\n"), done.stderr
        assert [r.split("?")[0] for r in first.requests] == [endpoint]
        assert [r.split("?")[0] for r in second.requests] == [endpoint]
        assert not first.errors and not second.errors
    assert daemon_proxy.requests == []
    api.assert_complete()
    assert daemon_pid(daemon) == pid


def test_no_proxy_of_the_caller_is_honoured(
    daemon: dict[str, str],
    daemon_proxy: FakeProxy,
    workspace: Path,
    fake_api: Callable[[list[Any]], FakeAnthropicServer],
) -> None:
    api = fake_api([[{"type": "text", "text": "direct"}]])
    with FakeProxy() as proxy:
        done = tether(
            {
                **daemon,
                "HTTP_PROXY": proxy.url,
                "NO_PROXY": "example.com,127.0.0.1",
                "ANTHROPIC_BASE_URL": api.base_url,
            },
            "-p",
            "hi",
            "--model",
            "claude-sonnet-4-6",
            cwd=workspace,
        )
        assert (done.returncode, done.stdout) == (0, "direct\n"), done.stderr
        assert proxy.requests == []
    assert daemon_proxy.requests == []
    api.assert_complete()


def test_the_callers_ca_certificates_are_the_ones_loaded(
    daemon: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    fake_api: Callable[[list[Any]], FakeAnthropicServer],
) -> None:
    api = fake_api([[{"type": "text", "text": "trusted"}]])
    missing = tmp_path / "no-such-bundle.pem"
    bad = tether(
        {**daemon, "SSL_CERT_FILE": str(missing), "ANTHROPIC_BASE_URL": api.base_url},
        "-p",
        "hi",
        "--model",
        "claude-sonnet-4-6",
        cwd=workspace,
    )
    assert bad.returncode != 0
    assert f"SSL_CERT_FILE (or REQUESTS_CA_BUNDLE) {missing}" in bad.stderr, bad.stderr
    assert "fix the path or unset it" in bad.stderr
    # The next caller has no such setting: the daemon did not keep the first one's.
    good = tether(
        {**daemon, "ANTHROPIC_BASE_URL": api.base_url},
        "-p",
        "hi",
        "--model",
        "claude-sonnet-4-6",
        cwd=workspace,
    )
    assert (good.returncode, good.stdout) == (0, "trusted\n"), good.stderr
    api.assert_complete()


def _probe(name: str) -> str:
    """A shell line writing what a process sees of the variables to ``name``."""
    return 'printf "%s|%s|%s" "$VIRTUAL_ENV" "$ANTHROPIC_API_KEY" "$HTTPS_PROXY" > ' + name


def test_hooks_mcp_servers_and_bash_run_with_the_callers_environment(
    daemon: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    seen: dict[str, dict[str, str]] = {}
    callers = {
        "one": {"VIRTUAL_ENV": "/venv-one", "ANTHROPIC_API_KEY": "key-one"},
        "two": {"HTTPS_PROXY": "http://proxy-two.invalid:3128"},
    }
    for name, variables in callers.items():
        turns = [
            [{"type": "tool_use", "name": "Bash", "input": {"command": _probe(f"bash-{name}")}}],
            [{"type": "text", "text": "Done."}],
        ]
        script = tmp_path / f"{name}.json"
        script.write_text(json.dumps(turns))
        hook = {"type": "command", "command": _probe(f"hook-{name}")}
        settings = {"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}
        mcp = {
            "mcpServers": {
                "probe": {
                    "command": "sh",
                    "args": [
                        "-c",
                        # $2: the configuration's ${VIRTUAL_ENV}, expanded by Tether.
                        f'{_probe(f"mcp-{name}")}; printf "|%s" "$2" >> mcp-{name}; exec "$0" "$1"',
                        sys.executable,
                        str(SUPPORT / "mcp_server.py"),
                        "${VIRTUAL_ENV}",
                    ],
                }
            }
        }
        env = {k: v for k, v in daemon.items() if k != "ANTHROPIC_API_KEY"}
        done = tether(
            {**env, **variables},
            "-p",
            "probe",
            "--model",
            f"scripted:{script}",
            "--allowedTools",
            "Bash",
            "--settings",
            json.dumps(settings),
            "--mcp-config",
            json.dumps(mcp),
            cwd=workspace,
        )
        assert done.returncode == 0, done.stderr
        seen[name] = {
            kind: (workspace / f"{kind}-{name}").read_text() for kind in ("hook", "mcp", "bash")
        }
    # Bash runs in the sandbox: its proxy variables name the sandbox's filtering proxy
    # (which goes on through the caller's own proxy: tests/unit/permissions/
    # test_network_proxy.py), never the other caller's.
    bash = {name: seen[name].pop("bash") for name in seen}
    assert re.fullmatch(r"/venv-one\|\|http://127\.0\.0\.1:\d+", bash["one"]), bash
    assert re.fullmatch(r"\|\|http://127\.0\.0\.1:\d+", bash["two"]), bash
    assert seen == {
        # Hooks and MCP servers get the caller's keys, as in Claude Code; Bash never does.
        "one": {"hook": "/venv-one|key-one|", "mcp": "/venv-one|key-one||/venv-one"},
        "two": {
            "hook": "||http://proxy-two.invalid:3128",
            "mcp": "||http://proxy-two.invalid:3128|",
        },
    }


def test_webfetch_asks_the_callers_small_model(
    daemon: dict[str, str],
    workspace: Path,
    fake_api: Callable[[list[Any]], FakeAnthropicServer],
) -> None:
    docs = (FIXTURES / "web" / "docs.html").read_bytes()
    callers = {
        "claude-small-one": {"ANTHROPIC_SMALL_FAST_MODEL": "claude-small-one"},
        "claude-haiku-two": {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "claude-haiku-two"},
    }
    with FakeWebServer({"/docs.html": docs}) as web:
        for model, variables in callers.items():
            fetch = {
                "type": "tool_use",
                "name": "WebFetch",
                "input": {"url": web.url("/docs.html"), "prompt": "What is the default speed?"},
            }
            api = fake_api(
                [
                    [fetch],
                    [{"type": "text", "text": "42 rpm."}],
                    [{"type": "text", "text": "Done."}],
                ]
            )
            done = tether(
                {**daemon, **variables, "ANTHROPIC_BASE_URL": api.base_url},
                "-p",
                "check the docs",
                "--model",
                "claude-sonnet-4-6",
                "--allowedTools",
                "WebFetch(domain:127.0.0.1)",
                cwd=workspace,
            )
            assert (done.returncode, done.stdout) == (0, "Done.\n"), done.stderr
            api.assert_complete()
            assert [r["model"] for r in api.requests] == [
                "claude-sonnet-4-6",
                model,
                "claude-sonnet-4-6",
            ]


# -- two callers at once: each one's whole world, nothing of the other's -------------------

SHELL_BOOKKEEPING = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})
"""Variables a shell sets for itself (in every process it starts)."""
ADDED = {
    "bash": {
        "GIT_TERMINAL_PROMPT",
        "GIT_PAGER",
        "PAGER",
        "TMPDIR",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_OPTIONAL_LOCKS",
        # The sandbox's filtering proxy (sandbox/gate/forward.py), in place of the caller's.
        *(f"{k}_proxy" for k in ("http", "https", "all", "no")),
        *(f"{k}_PROXY" for k in ("HTTP", "HTTPS", "ALL", "NO")),
        "npm_config_proxy",
        "npm_config_https_proxy",
        "CARGO_HTTP_PROXY",
    },
    "hook": {"CLAUDE_PROJECT_DIR", "TETHER_PROJECT_DIR"},
    "mcp": {"FROM_CONFIG"},
}
"""What each kind of process gets on top of its caller's environment: the shell runner's
quiet settings, the sandbox's temporary directory and read-only git status; the project directory of hooks; the
server's configured ``env``."""


def _dump(kind: str) -> str:
    """A shell line writing this process's whole environment and umask (name: ``$PROBE``)."""
    return f'env -0 > {kind}-"$PROBE".env; umask > {kind}-"$PROBE".umask'


def _read_env(path: Path) -> dict[str, str]:
    assert path.exists(), (
        f"{path.name} was not written: {sorted(p.name for p in path.parent.iterdir())}"
    )
    pairs = [item.split("=", 1) for item in path.read_text().split("\0") if item]
    return {name: value for name, value in pairs}


def test_two_callers_at_once_each_get_exactly_their_own_world(
    common: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    base_path = os.environ["PATH"]
    own = {
        "MY_SECRET_TOKEN": "the-daemons-secret",
        "KUBECONFIG": "/the-daemon/kube",
        "PYTHONPATH": "/the-daemon/py",
        "PATH": f"/the-daemon/bin:{base_path}",
        "LAYERED": "the-daemon",
    }
    started = tether({**common, **own}, "daemon", "start")
    assert started.returncode == 0, started.stderr
    try:
        _two_callers(common, workspace, tmp_path, base_path)
    finally:
        tether(common, "daemon", "stop")


def _two_callers(common: dict[str, str], workspace: Path, tmp_path: Path, base_path: str) -> None:
    callers = {
        "first": (
            {
                "MY_SECRET_TOKEN": "first",
                "KUBECONFIG": "/first/kube",
                "PYTHONPATH": "/first/py",
                "PATH": f"/first/bin:{base_path}",
                "ANTHROPIC_API_KEY": "key-first",
                "LAYERED": "first",
                "LANG": "C.UTF-8",
            },
            0o027,
        ),
        "second": (
            {
                "MY_SECRET_TOKEN": "second",
                # No KUBECONFIG at all: not the daemon's, not the first caller's.
                "PYTHONPATH": "/second/py",
                "PATH": f"/second/bin:{base_path}",
                "ANTHROPIC_API_KEY": "key-second",
                "LAYERED": "second",
                "LC_ALL": "C",
            },
            0o002,
        ),
    }
    # The project's .mcp.json, expanded from each caller's variables.
    (workspace / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "probe": {
                        "command": "sh",
                        "args": [
                            "-c",
                            _dump("mcp") + ' ; printf %s "$2" > mcp-"$PROBE".arg; exec "$0" "$1"',
                            sys.executable,
                            str(SUPPORT / "mcp_server.py"),
                            "${KUBECONFIG:-no kubeconfig}",
                        ],
                        "env": {"FROM_CONFIG": "${MY_SECRET_TOKEN}"},
                    }
                }
            }
        )
    )
    trusted = Path(common["XDG_CONFIG_HOME"]) / "tether" / "trusted-workspaces.json"
    trusted.parent.mkdir(parents=True, exist_ok=True)
    trusted.write_text(json.dumps({"trusted": [os.path.realpath(workspace)]}))
    settings = {
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": _dump("hook") + "; echo $PPID > ppid"}]}
            ]
        },
        "env": {"LAYERED": "from-settings"},
    }
    runs: dict[str, tuple[subprocess.Popen[str], dict[str, str]]] = {}
    for name, (variables, umask) in callers.items():
        script = tmp_path / f"{name}.json"
        bash = {"type": "tool_use", "name": "Bash", "input": {"command": _dump("bash")}}
        script.write_text(json.dumps([[bash], [{"type": "text", "text": f"done {name}"}]]))
        # The daemon serves one home: the variables naming it are the same for both.
        home = {k: os.environ[k] for k in INSTANCE_VARIABLES if k in os.environ}
        env = {**home, **common, **variables, "PROBE": name}
        argv = ["-p", "probe", "--model", f"scripted:{script}", "--allowedTools", "Bash"]
        argv += ["--settings", json.dumps(settings)]
        process = subprocess.Popen(
            [sys.executable, "-m", "tether", *argv],
            env=env,
            cwd=workspace,
            umask=umask,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        runs[name] = (process, env)
    for name, (process, _env) in runs.items():
        out, err = process.communicate(timeout=90)
        assert (process.returncode, out) == (0, f"done {name}\n"), err
    for name, (_process, env) in runs.items():
        umask = f"{callers[name][1]:04o}"
        for kind in ("bash", "hook", "mcp"):
            seen = _read_env(workspace / f"{kind}-{name}.env")
            expected = {
                k: v for k, v in env.items() if k not in SHELL_BOOKKEEPING and k not in ADDED[kind]
            }
            expected["LAYERED"] = "from-settings"  # the settings' env over the caller's
            if kind == "bash":
                del expected["ANTHROPIC_API_KEY"]  # Bash never gets model keys
            got = {k: v for k, v in seen.items() if k not in SHELL_BOOKKEEPING | ADDED[kind]}
            assert got == expected, (kind, name)
            assert (workspace / f"{kind}-{name}.umask").read_text().strip() == umask, (kind, name)
        mcp = _read_env(workspace / f"mcp-{name}.env")
        assert mcp["FROM_CONFIG"] == name  # ${MY_SECRET_TOKEN} in .mcp.json: the caller's
    # Run by the daemon, not in-process: the hooks' parent is the daemon.
    assert (workspace / "ppid").read_text().strip() == str(daemon_pid(common))
    assert (workspace / "mcp-first.arg").read_text() == "/first/kube"
    assert (workspace / "mcp-second.arg").read_text() == "no kubeconfig"


async def test_an_editor_session_works_for_its_owner_until_the_owner_says_otherwise(
    common: dict[str, str], workspace: Path, fake_api: Callable[[list[Any]], FakeAnthropicServer]
) -> None:
    """Sessions an editor creates through ``serve --connect`` run in that editor's world;
    another client following one and prompting it does not bring its own; the owner's new
    ``tether/clientEnvironment`` applies from the next turn."""
    from tether.lsp.testing.editor_client import EditorOptions

    from .conftest import MODEL, make_editor

    started = tether({**common, "MY_VAR": "the-daemon"}, "daemon", "start")
    assert started.returncode == 0, started.stderr
    probe = {
        "type": "tool_use",
        "name": "Bash",
        "input": {"command": 'printf %s "$MY_VAR" >> seen'},
    }
    api = fake_api([[probe], [{"type": "text", "text": "ok"}]] * 3)
    home = {k: os.environ[k] for k in INSTANCE_VARIABLES if k in os.environ}

    async def editor(value: str) -> Any:
        client = make_editor(EditorOptions(init_options={"model": MODEL}))
        env = {**home, **common, "MY_VAR": value, "ANTHROPIC_BASE_URL": api.base_url}
        await client.start([sys.executable, "-m", "tether", "serve", "--connect"], [workspace], env)
        return client

    owner = await editor("owner")
    follower = await editor("follower")
    try:
        session = await owner.new_session()
        assert (await owner.prompt(session, "one"))["stopReason"] == "end_turn"
        await follower.request("tether/loadSession", {"sessionId": session})
        assert (await follower.prompt(session, "two"))["stopReason"] == "end_turn"
        again = {**home, **common, "MY_VAR": "owner-again", "ANTHROPIC_BASE_URL": api.base_url}
        caller = {"cwd": str(workspace), "env": again}
        owner.client.protocol.notify("tether/clientEnvironment", caller)
        assert (await owner.prompt(session, "three"))["stopReason"] == "end_turn"
    finally:
        await follower.stop()
        await owner.stop()
        tether(common, "daemon", "stop")
    assert (workspace / "seen").read_text() == "ownerownerowner-again"
    api.assert_complete()
