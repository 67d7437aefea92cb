"""The package registries a project's files point to: offered in a network question as
hosts the user may want to allow ahead (never allowed because of it).

Only the workspace's top level is read (manifests and the registry settings beside them),
a few small files at most: a question is rare, and this runs only then.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

MAX_READ = 64 * 1024

DEFAULTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("package.json", ("registry.npmjs.org",)),
    ("yarn.lock", ("registry.yarnpkg.com",)),
    ("pyproject.toml", ("pypi.org", "files.pythonhosted.org")),
    ("requirements.txt", ("pypi.org", "files.pythonhosted.org")),
    ("setup.py", ("pypi.org", "files.pythonhosted.org")),
    ("Pipfile", ("pypi.org", "files.pythonhosted.org")),
    ("Cargo.toml", ("index.crates.io", "static.crates.io")),
    ("go.mod", ("proxy.golang.org", "sum.golang.org")),
    ("Gemfile", ("rubygems.org",)),
    ("composer.json", ("repo.packagist.org",)),
)
"""Where each ecosystem's manifest sends its tool by default."""
CONFIGURED: tuple[tuple[str, re.Pattern[str]], ...] = (
    (".npmrc", re.compile(r"^\s*(?:@[\w.-]+:)?registry\s*=\s*(\S+)", re.M)),
    (".yarnrc.yml", re.compile(r"^\s*npmRegistryServer:\s*[\"']?([^\"'\s]+)", re.M)),
    ("requirements.txt", re.compile(r"^\s*(?:--index-url|--extra-index-url|-i)[\s=]+(\S+)", re.M)),
    ("pyproject.toml", re.compile(r"^\s*url\s*=\s*\"(https?://[^\"]+)\"", re.M)),
    ("pip.conf", re.compile(r"^\s*(?:extra-)?index-url\s*=\s*(\S+)", re.M)),
)
"""Registries a project names itself (a mirror, a private index)."""


@dataclass(frozen=True)
class Suggestion:
    host: str
    because: str
    """The file that points there."""


def suggested_hosts(root: Path) -> list[Suggestion]:
    """The registries ``root``'s files point to, each host once, in the order found."""
    found: dict[str, Suggestion] = {}
    for name, pattern in CONFIGURED:
        for url in pattern.findall(_read(root / name)):
            host = urlsplit(url if "://" in url else f"https://{url}").hostname
            if host:
                found.setdefault(host, Suggestion(host, name))
    for name, hosts in DEFAULTS:
        if (root / name).is_file():  # a stat: never opens the file
            for host in hosts:
                found.setdefault(host, Suggestion(host, name))
    return list(found.values())


def _read(path: Path) -> str:
    """A regular file's first bytes, or "": a FIFO or device the workspace's commands made
    under a manifest's name is never read (opening or reading one would block a worker)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, MAX_READ).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)
