"""``tether doctor [--cwd DIR] [--model SPEC] [--json]``: every check, one report."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether import __version__
from tether.cli.doctor.clients import all_client_checks, check_on_path, check_ripgrep
from tether.cli.doctor.daemon import check_daemon
from tether.cli.doctor.model import check_model, resolve
from tether.cli.doctor.report import Finding, Header, Report, package_dir, render_json, render_text
from tether.cli.doctor.sandbox import check_sandbox, read_host
from tether.cli.doctor.workspace import check_data_dir, check_settings, check_trust
from tether.sandbox import probe
from tether.settings.load import load_settings, origin_of
from tether.settings.trust import TrustStore


def add_parser(sub: Any) -> None:
    """Add ``doctor`` to the ``tether`` subcommands (argparse's subparsers action)."""
    doctor = sub.add_parser(
        "doctor", help="check the setup: sandbox, model, daemon, trust, clients"
    )
    doctor.add_argument("--cwd", help="the folder to check (default: the current directory)")
    doctor.add_argument("--model", help="check this model spec instead of the configured one")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")


def diagnose(root: Path, model: str | None, env: Mapping[str, str]) -> Report:
    store = TrustStore()
    trusted = store.is_trusted(root)
    loaded = load_settings(root, trusted=trusted)
    findings: list[Finding] = [check_on_path(env), check_ripgrep(env)]
    findings.append(
        check_sandbox(
            probe(),
            read_host(),
            enabled=loaded.settings.sandbox.enabled,
            enabled_origin=origin_of(loaded, "sandbox"),
        )
    )
    choice = resolve(model, loaded, root, env)
    if isinstance(choice, Finding):
        findings.append(choice)
    else:
        findings.append(asyncio.run(check_model(choice, loaded, env)))
    findings += [
        check_daemon(env),
        check_trust(root, trusted, loaded, store.path, store.problem()),
        check_settings(loaded),
        check_data_dir(env),
        *all_client_checks(env),
    ]
    header = Header(__version__, platform.python_version(), package_dir())
    return Report(header, findings)


def doctor_command(args: argparse.Namespace) -> int:
    root = Path(args.cwd or os.getcwd()).resolve()
    if not root.is_dir():
        print(f"tether: {root} is not a directory", file=sys.stderr)
        return 2
    report = diagnose(root, args.model, os.environ)
    text = render_json(report) if args.json else render_text(report)
    sys.stdout.write(text)
    return report.exit_code
