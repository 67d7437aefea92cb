"""``tether doctor`` as a user runs it: a real process, real files, the fake model servers
and a real Unix socket. Each broken thing is reported with its cause and its fix, and the
exit code is 1 only when something a user needs is broken."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tether.daemon.paths import instance
from tether.providers.windows import WindowBook
from tether.testing.fake_anthropic import FakeAnthropicServer
from tether.testing.fake_ollama import FakeOllamaServer
from tether.testing.fake_openai import FakeOpenAIServer

Report = dict[str, Any]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "XDG_", "TETHER_"))
    }
    return {
        **base,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "TETHER_RUNTIME_DIR": str(tmp_path / "run"),
        "TETHER_DATA_DIR": str(tmp_path / "data"),
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root.resolve()


def doctor(folder: Path, env: dict[str, str], *args: str) -> tuple[int, Report]:
    done = subprocess.run(
        [sys.executable, "-m", "tether", "doctor", "--json", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def finding(report: Report, area: str, *, containing: str = "") -> dict[str, Any]:
    found = [f for f in report["findings"] if f["area"] == area and containing in f["summary"]]
    assert len(found) == 1, report["findings"]
    return found[0]


def user_settings(env: dict[str, str], data: dict[str, Any]) -> Path:
    path = Path(env["XDG_CONFIG_HOME"]) / "tether" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def path_without_bwrap(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("rg", "git"):
        found = shutil.which(name)
        if found:
            (bin_dir / name).symlink_to(found)
    return str(bin_dir)


def test_no_bubblewrap(folder: Path, env: dict[str, str], tmp_path: Path) -> None:
    env["PATH"] = path_without_bwrap(tmp_path)
    _, report = doctor(folder, env, "--model", "scripted:none.json")
    sandbox = finding(report, "sandbox")
    assert sandbox["status"] == "warn"
    assert sandbox["summary"].startswith("bubblewrap (bwrap) is not installed: commands run")
    assert "bypassPermissions runs it unasked" in sandbox["summary"]
    assert "sudo apt install bubblewrap" in sandbox["fix"]


def test_bubblewrap_that_works(folder: Path, env: dict[str, str]) -> None:
    # CI installs bubblewrap: this must not be skipped where it is missing.
    _, report = doctor(folder, env)
    sandbox = finding(report, "sandbox")
    assert sandbox["status"] == "ok" and sandbox["summary"] == "bubblewrap works", sandbox


def test_the_sandbox_turned_off_in_settings(folder: Path, env: dict[str, str]) -> None:
    path = user_settings(env, {"sandbox": {"enabled": False}})
    _, report = doctor(folder, env)
    sandbox = finding(report, "sandbox")
    assert sandbox["status"] == "warn"
    assert sandbox["summary"].startswith(f"turned off in settings (sandbox in {path})")


def test_an_unreachable_model_url_from_settings(folder: Path, env: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    env["ANTHROPIC_BASE_URL"] = "http://not-what-was-chosen"
    path = user_settings(env, {"model": f"openai:qwen2.5-coder@{url}"})
    code, report = doctor(folder, env)
    model = finding(report, "model")
    assert code == 1 and report["ok"] is False
    assert model["status"] == "fail"
    assert model["summary"].startswith(f"openai:qwen2.5-coder@{url} (chosen by model in {path})")
    assert f"cannot connect to {url}" in model["summary"]
    assert model["details"] == [f"URL: {url} (from model in {path})"]
    assert model["fix"] == f"start the server, or correct the URL (model in {path})"
    assert "ANTHROPIC_BASE_URL" not in json.dumps(model)


def test_a_local_server_that_answers(folder: Path, env: dict[str, str]) -> None:
    with FakeOpenAIServer([], flavor="ollama", served_model="qwen2.5-coder:14b") as api:
        url = env["OPENAI_BASE_URL"] = api.base_url
        _, report = doctor(folder, env, "--model", "openai:qwen2.5-coder:14b")
        served = finding(report, "model")
        _, missing = doctor(folder, env, "--model", "openai:llama3")
    with FakeOpenAIServer([], flavor="ollama", served_model="llama3:latest") as api:
        env["OPENAI_BASE_URL"] = api.base_url
        _, untagged = doctor(folder, env, "--model", "openai:llama3")
    assert served["status"] == "ok", served
    root = url.removesuffix("/v1")
    assert served["details"] == [
        f"URL: {url} (from OPENAI_BASE_URL)",
        f"Ollama answers at {root}: ollama:qwen2.5-coder:14b@{root} uses its native API, which "
        "sends the window with every request (num_ctx); through /v1 a prompt over the context "
        "Ollama loaded is cut silently (docs/models.md)",
    ]
    absent = finding(missing, "model")
    assert absent["status"] == "fail" and "does not list llama3" in absent["summary"]
    assert "it lists: qwen2.5-coder:14b" in absent["details"]
    assert "ollama pull llama3" in absent["fix"]
    assert finding(untagged, "model")["status"] == "ok"  # Ollama's llama3 is llama3:latest


def test_ollama_through_its_native_api(folder: Path, env: dict[str, str]) -> None:
    with FakeOllamaServer([], served_model="qwen2.5-coder:14b") as api:
        spec = f"ollama:qwen2.5-coder:14b@{api.base_url}"
        _, report = doctor(folder, env, "--model", spec)
        _, missing = doctor(folder, env, "--model", f"ollama:llama3@{api.base_url}")
    with FakeOpenAIServer([], flavor="vllm") as other:
        _, not_ollama = doctor(folder, env, "--model", f"ollama:qwen@{other.url}")
    served = finding(report, "model")
    assert (
        served["status"] == "ok" and "Ollama answers and has qwen2.5-coder:14b" in served["summary"]
    ), served
    absent = finding(missing, "model")
    assert absent["status"] == "fail" and "does not have llama3" in absent["summary"]
    assert "it has: qwen2.5-coder:14b" in absent["details"]
    assert absent["fix"].startswith("pull the model (`ollama pull llama3`)")
    wrong = finding(not_ollama, "model")
    assert wrong["status"] == "fail" and "not as Ollama" in wrong["summary"], wrong
    env["OLLAMA_HOST"] = f"127.0.0.1:{closed_port()}"
    _, stopped = doctor(folder, env, "--model", "ollama:qwen")
    down = finding(stopped, "model")
    assert down["status"] == "fail" and "cannot connect to http://127.0.0.1:" in down["summary"]
    assert down["details"][0].endswith("(from OLLAMA_HOST)")
    assert down["fix"].startswith("start Ollama (`ollama serve`), or say where it runs")


def test_learned_windows_are_listed_with_how_to_forget_them(
    folder: Path, env: dict[str, str]
) -> None:
    with FakeOpenAIServer([], flavor="vllm", served_model="qwen") as api:
        book = WindowBook.in_dir(Path(env["TETHER_DATA_DIR"]))
        book.learn(api.base_url, "qwen", 12_000)
        book.learn(api.base_url, "other-model", 8_000)
        _, report = doctor(folder, env, "--model", f"openai:qwen@{api.base_url}")
    details = finding(report, "model")["details"]
    learned = [d for d in details if d.startswith("learned window")]
    assert len(learned) == 1, details
    assert "12000 tokens" in learned[0] and str(book.path) in learned[0]


def test_a_url_without_the_api_path(folder: Path, env: dict[str, str]) -> None:
    with FakeOpenAIServer([], flavor="ollama") as api:
        root = api.base_url.removesuffix("/v1")  # Ollama's root, not its API's
        _, report = doctor(folder, env, "--model", f"openai:m@{root}")
    model = finding(report, "model")
    assert model["status"] == "fail" and "(HTTP 404)" in model["summary"]
    assert "usually ends in /v1" in model["fix"]


class NotAnApi(BaseHTTPRequestHandler):
    """What stands at a wrong URL: a web page, a failing server, a redirect to a login."""

    def do_GET(self) -> None:
        kind = self.path.split("/")[1]
        if kind == "page":
            self._send(200, "text/html", b"<html>Welcome</html>")
        elif kind == "broken":
            self._send(500, "application/json", b'{"error": "boom"}')
        else:
            self._send(302, "text/html", b"moved", ("Location", "http://sso.example/login"))

    def _send(self, status: int, kind: str, body: bytes, *extra: tuple[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("page", "answers with a page (text/html), not the API"),
        ("broken", "the server fails (HTTP 500)"),
        ("login", "redirects (HTTP 302) to http://sso.example/login: not the API itself"),
    ],
)
def test_a_url_where_no_api_answers(
    folder: Path, env: dict[str, str], kind: str, said: str
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotAnApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{kind}/v1"
        code, report = doctor(folder, env, "--model", f"openai:m@{url}")
    finally:
        server.shutdown()
        server.server_close()
    model = finding(report, "model")
    assert code == 1 and model["status"] == "fail", model
    assert said in model["summary"] and model["fix"], model


def test_anthropic_key_accepted_and_refused(folder: Path, env: dict[str, str]) -> None:
    with FakeAnthropicServer([], api_keys={"good"}) as api:
        url = api.base_url
        env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="good")
        _, accepted = doctor(folder, env, "--model", "claude-sonnet-4-6")
        env["ANTHROPIC_API_KEY"] = "stale"
        refused_code, refused = doctor(folder, env)
    ok = finding(accepted, "model")
    assert ok["status"] == "ok" and ok["summary"].startswith(
        "anthropic:claude-sonnet-4-6 (chosen by --model)"
    )
    bad = finding(refused, "model")
    assert refused_code == 1 and bad["status"] == "fail"
    assert "the key was refused (HTTP 401)" in bad["summary"]
    assert "(chosen by the default (ANTHROPIC_API_KEY is set))" in bad["summary"]
    assert bad["details"] == [f"URL: {url} (from ANTHROPIC_BASE_URL)"]


def test_no_model_and_no_key(folder: Path, env: dict[str, str]) -> None:
    code, report = doctor(folder, env)
    model = finding(report, "model")
    assert code == 1 and model["status"] == "fail"
    assert model["summary"].startswith("No model is configured. Set ANTHROPIC_API_KEY")


def test_an_untrusted_folder(folder: Path, env: dict[str, str]) -> None:
    (folder / ".tether").mkdir()
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
    settings = {"model": "openai:m@http://10.9.8.7/v1", "hooks": {"PreToolUse": [hook]}}
    (folder / ".tether" / "settings.json").write_text(json.dumps(settings))
    _, report = doctor(folder, env)
    workspace = finding(report, "workspace")
    assert workspace["status"] == "warn"
    assert workspace["summary"].startswith(f"{folder} is not trusted")
    assert "withheld: .tether/settings.json: PreToolUse hook `./check.sh`" in workspace["details"]
    store = Path(env["XDG_CONFIG_HOME"]) / "tether" / "trusted-workspaces.json"
    assert str(store) in workspace["fix"]
    # The model that waits for trust is said where the model is checked.
    model = finding(report, "model")
    assert any("waits until this folder is trusted" in d for d in model["details"])

    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps({"trusted": [str(folder)]}))
    _, trusted = doctor(folder, env)
    assert (
        finding(trusted, "workspace")["summary"]
        == f"{folder} is trusted: its own settings apply in full"
    )
    assert "10.9.8.7" in finding(trusted, "model")["summary"]


def test_a_damaged_list_of_trusted_folders(folder: Path, env: dict[str, str]) -> None:
    store = Path(env["XDG_CONFIG_HOME"]) / "tether" / "trusted-workspaces.json"
    store.parent.mkdir(parents=True)
    for damaged in ('{"trusted": ["/a", ', json.dumps({"trusted": [str(folder), 7]})):
        store.write_text(damaged)
        code, report = doctor(folder, env)
        workspace = finding(report, "workspace")
        assert code == 1 and workspace["status"] == "fail", workspace
        assert workspace["summary"].startswith("the list of trusted folders is damaged")
        assert str(store) in workspace["summary"] and str(store) in workspace["fix"]


def test_an_unreadable_settings_file_is_named(folder: Path, env: dict[str, str]) -> None:
    path = user_settings(env, {})
    path.write_text('{"model": "openai:qwen@http://127.0.0.1:9/v1",')
    code, report = doctor(folder, env)
    model, settings = finding(report, "model"), finding(report, "settings")
    assert code == 1 and model["status"] == "fail"
    assert model["summary"].startswith(f"{path} cannot be read") and str(path) in model["fix"]
    assert settings["fix"].startswith(f"correct {path}")


def daemon_socket(env: dict[str, str]) -> Path:
    run = Path(env["TETHER_RUNTIME_DIR"])
    run.mkdir(mode=0o700, exist_ok=True)
    return run / f"daemon-{instance(env)}.sock"


def test_a_stale_daemon_socket(folder: Path, env: dict[str, str]) -> None:
    path = daemon_socket(env)
    with socket.socket(socket.AF_UNIX) as dead:  # bound, then closed: nobody listens
        dead.bind(str(path))
    path.with_suffix(".pid").write_text(f"{_finished_pid()}\n")
    _, report = doctor(folder, env, "--model", "scripted:none.json")
    daemon = finding(report, "daemon")
    assert daemon["status"] == "warn"
    assert daemon["summary"].startswith(f"a stale socket: no daemon listens on {path} (pid ")
    assert "is gone" in daemon["summary"] and "the next call starts a daemon" in daemon["fix"]
    assert daemon["details"] == [f"socket: {path}", f"log: {path.with_suffix('.log')}"]


def _finished_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_daemon_that_does_not_answer(folder: Path, env: dict[str, str]) -> None:
    with socket.socket(socket.AF_UNIX) as hung:
        hung.bind(str(daemon_socket(env)))
        hung.listen()  # accepts, never answers
        code, report = doctor(folder, env, "--model", "scripted:none.json")
    daemon = finding(report, "daemon")
    assert code == 1 and daemon["status"] == "fail"
    assert re.match(r"the daemon \(pid \d+\) does not answer within 3 s", daemon["summary"])
    assert "tether daemon stop" in daemon["fix"]


def test_a_running_daemon_and_a_clean_bill(folder: Path, env: dict[str, str]) -> None:
    (folder / "turns.json").write_text("[]")
    tether = [sys.executable, "-m", "tether", "daemon"]
    started = subprocess.run([*tether, "start"], env=env, capture_output=True, timeout=60)
    assert started.returncode == 0, started.stderr
    try:
        code, report = doctor(folder, env, "--model", "scripted:turns.json")
    finally:
        subprocess.run([*tether, "stop"], env=env, capture_output=True, timeout=60)
    assert finding(report, "daemon")["status"] == "ok"
    assert finding(report, "daemon")["summary"].startswith("running: pid ")
    assert finding(report, "model")["status"] == "ok"
    assert code == 0 and report["ok"] is True, report


def test_the_text_report(folder: Path, env: dict[str, str], tmp_path: Path) -> None:
    env["PATH"] = path_without_bwrap(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "tether", "doctor"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 1
    assert lines[0].startswith("tether 0.1.0 · Python ")
    assert any(
        line.startswith("! sandbox    bubblewrap (bwrap) is not installed") for line in lines
    )
    assert any(line.startswith("✗ model      No model is configured") for line in lines)
    assert "             fix: install it: `sudo apt install bubblewrap`" in done.stdout
    assert lines[-1].startswith("1 problem(s), ")
    assert "\x1b[" not in done.stdout  # not a terminal: no colour


def test_settings_that_do_not_read(folder: Path, env: dict[str, str]) -> None:
    path = user_settings(env, {})
    path.write_text('{"model": "sonnet",')  # cut off mid-file
    (folder / ".tether").mkdir()
    (folder / ".tether" / "settings.json").write_text(json.dumps({"maxBudgetUsd": "lots"}))
    _, report = doctor(folder, env, "--model", "scripted:none.json")
    settings = finding(report, "settings")
    assert settings["status"] == "warn" and settings["summary"].startswith("2 problem(s)")
    assert any(str(path) in d and "not readable as JSON" in d for d in settings["details"])
    assert any("maxBudgetUsd" in d for d in settings["details"])


def test_a_data_directory_that_cannot_be_written(folder: Path, env: dict[str, str]) -> None:
    """No home (a service account), or TETHER_DATA_DIR under a file: sessions cannot be
    saved, and doctor says so; tether demo says it too, without a traceback."""
    blocker = folder.parent / "a-file"
    blocker.write_text("")
    env["TETHER_DATA_DIR"] = str(blocker / "data")
    code, report = doctor(folder, env, "--model", "scripted:none.json")
    data = finding(report, "data")
    assert code == 1 and data["status"] == "fail"
    assert data["summary"].startswith(f"sessions cannot be saved in {blocker / 'data'}")
    assert "TETHER_DATA_DIR" in data["summary"] and "TETHER_DATA_DIR" in data["fix"]
    demo = subprocess.run(
        [sys.executable, "-m", "tether", "demo", "--dir", str(folder)],
        env={**env, "TETHER_NO_DAEMON": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert demo.returncode == 1 and "Traceback" not in demo.stderr, demo.stderr
    assert "tether demo: cannot create the session file" in demo.stderr
