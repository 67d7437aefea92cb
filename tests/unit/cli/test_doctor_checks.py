"""``tether doctor``'s reasons, one per cause, from the host facts that decide them (read
from a ``/proc`` laid out here), and where it looks for the editors' clients."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tether.cli.doctor.clients import check_neovim, check_on_path, check_vscode
from tether.cli.doctor.report import Finding, Header, Report, render_text
from tether.cli.doctor.sandbox import HostFacts, check_sandbox, read_host
from tether.sandbox import Probe

BLOCKED = Probe(
    False, "bubblewrap does not work here (bwrap: setting up uid map: Permission denied)"
)


@pytest.fixture
def bwrap_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``bwrap`` that is there but (as the probe says) cannot run."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir))


def proc(tmp_path: Path, **values: str) -> Path:
    root = tmp_path / "proc"
    for name, value in values.items():
        path = root / name.replace(".", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    return root


def sandbox(host: HostFacts, probe: Probe = BLOCKED) -> Finding:
    return check_sandbox(probe, host, enabled=True, enabled_origin=None)


@pytest.mark.usefixtures("bwrap_on_path")
def test_apparmor_restriction_is_named_with_its_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    host = read_host(
        proc(
            tmp_path,
            **{"sys.kernel.apparmor_restrict_unprivileged_userns": "1"},
            **{"sys.kernel.osrelease": "6.8.0-45-generic"},
        ),
        root=tmp_path,
    )
    assert host.apparmor_restrict_userns == 1 and host.wsl is None
    found = sandbox(host)
    assert found.status == "warn"
    assert "AppArmor restricts unprivileged user namespaces" in found.summary
    assert "kernel.apparmor_restrict_unprivileged_userns = 1" in found.summary
    assert found.details == (BLOCKED.problem,)
    assert found.fix is not None and "/etc/apparmor.d/bwrap" in found.fix and "userns," in found.fix


@pytest.mark.usefixtures("bwrap_on_path")
@pytest.mark.parametrize(
    ("facts", "said", "fix"),
    [
        (
            {"unprivileged_userns_clone": 0},
            "kernel.unprivileged_userns_clone = 0",
            "sysctl kernel.unprivileged_userns_clone=1",
        ),
        ({"max_user_namespaces": 0}, "user.max_user_namespaces = 0", "max_user_namespaces="),
        ({"kernel_release": "4.4.0-19041-Microsoft"}, "WSL 1", "WSL 2"),
        ({"in_container": True}, "inside a container", "run Tether on the host"),
    ],
)
def test_each_cause_of_a_blocked_bwrap(facts: dict[str, object], said: str, fix: str) -> None:
    found = sandbox(HostFacts("linux", **facts))  # type: ignore[arg-type]
    assert found.status == "warn" and said in found.summary
    assert found.fix is not None and fix in found.fix


def test_wsl_versions() -> None:
    assert HostFacts("linux", kernel_release="5.15.153.1-microsoft-standard-WSL2").wsl == 2
    assert HostFacts("linux", kernel_release="4.4.0-19041-Microsoft").wsl == 1


def test_other_systems() -> None:
    mac = sandbox(HostFacts("darwin"))
    assert mac.status == "info" and "macOS" in mac.summary and "asks first" in mac.summary
    windows = sandbox(HostFacts("win32"))
    assert windows.status == "warn" and "WSL 2" in windows.summary


def test_read_host_without_the_files(tmp_path: Path) -> None:
    host = read_host(tmp_path / "nothing", root=tmp_path)
    assert host.apparmor_restrict_userns is None and not host.in_container
    (tmp_path / ".dockerenv").write_text("")
    assert read_host(tmp_path / "nothing", root=tmp_path).in_container


def test_vscode_extension_found_where_editors_keep_them(tmp_path: Path) -> None:
    assert check_vscode(tmp_path, {}).status == "info"
    installed = tmp_path / ".vscode-server" / "extensions" / "tether.tether-0.1.0"
    installed.mkdir(parents=True)
    found = check_vscode(tmp_path, {})
    assert found.status == "ok" and found.details == (str(installed),)


def test_neovim_plugin_found_under_lazy_and_pack(tmp_path: Path) -> None:
    nvim = tmp_path / "bin" / "nvim"
    nvim.parent.mkdir()
    nvim.write_text("#!/bin/sh\necho 'NVIM v0.11.4'\n")
    nvim.chmod(0o755)
    env = {"PATH": str(nvim.parent)}
    data = tmp_path / "share"
    missing = check_neovim(data, env)
    assert missing.status == "info" and missing.summary.startswith("Neovim 0.11.4; the plugin")
    lazy = data / "nvim" / "lazy" / "tether" / "clients" / "neovim"
    pack = data / "nvim" / "site" / "pack" / "core" / "opt" / "tether.nvim"
    for plugin in (lazy, pack):
        (plugin / "lua" / "tether").mkdir(parents=True)
        (plugin / "lua" / "tether" / "health.lua").write_text("")
    found = check_neovim(data, env)
    assert found.status == "ok" and found.summary == "Neovim 0.11.4 with the plugin"
    assert found.details == (str(nvim), f"plugin: {lazy}", f"plugin: {pack}")
    nvim.write_text("#!/bin/sh\necho 'NVIM v0.9.5'\n")
    assert check_neovim(data, env).status == "warn"


def test_exit_code_and_the_closing_line() -> None:
    header = Header("0.1.0", "3.11.7", "/x")
    fine = Report(header, [Finding("a", "ok", "fine"), Finding("b", "info", "note")])
    assert fine.exit_code == 0 and render_text(fine).endswith(
        "Everything Tether needs works here.\n"
    )
    warned = Report(header, [Finding("a", "warn", "meh")])
    assert warned.exit_code == 0 and render_text(warned).endswith("0 problem(s), 1 warning(s)\n")
    assert Report(header, [Finding("a", "fail", "broken")]).exit_code == 1


def test_the_path_fix_fits_the_install(tmp_path: Path) -> None:
    """A virtualenv of one's own (a checkout's .venv) is not fixed by uv's or pipx's PATH
    commands: its fix links the command into a folder on PATH."""
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "tether").write_text("")
    own = check_on_path({"PATH": "/nowhere"}, str(venv / "bin" / "tether"))
    assert own.status == "warn" and own.fix is not None
    assert f"ln -s {venv / 'bin' / 'tether'} ~/.local/bin/tether" in own.fix
    assert "update-shell" not in own.fix
    tool = tmp_path / "uv" / "tools" / "tether"
    (tool / "bin").mkdir(parents=True)
    (tool / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tool / "bin" / "tether").write_text("")
    installed = check_on_path({"PATH": "/nowhere"}, str(tool / "bin" / "tether"))
    assert installed.fix is not None and "uv tool update-shell" in installed.fix
