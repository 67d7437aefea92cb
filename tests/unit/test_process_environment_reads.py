"""Nothing a caller's session decides reads this process's own environment: in the warm
daemon that is whoever started it. Every reach for it (``os.environ``, ``os.getenv``,
``getpass``, the home or working directory of this process, ``~`` expanded by it) is listed
here with the reason it is right; a new one fails until it goes through the session's
caller (``tether.core.environ.environ_of``, ``ToolConfig.caller_env``) or is listed."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server"
REACH = re.compile(
    r"os\.environ|os\.getenv|getpass|Path\.home\(\)|os\.getcwd\(\)|expanduser|Path\.cwd\(\)"
)

FALLBACK = "``os.environ if env is None else env``: None is in-process, where this is the caller"
CLIENT = "runs in the client process (the caller itself), before any daemon"
DAEMON = "the daemon's own business (its socket, build, idle time, lock), not a session's"

ALLOWED: dict[str, tuple[int, str]] = {
    "tether/acp/agent.py": (1, "the ACP front door runs in its client's process"),
    "tether/acp/config.py": (1, "the ACP front door runs in its client's process"),
    "tether/acp/mapping.py": (1, "the ACP front door runs in its client's process"),
    "tether/cli/attach.py": (2, CLIENT),
    "tether/cli/callenv.py": (2, FALLBACK),
    "tether/cli/doctor/clients.py": (1, CLIENT),
    "tether/cli/doctor/command.py": (2, CLIENT),
    "tether/cli/flags.py": (5, "flags are read in the client, from its directory and home"),
    "tether/cli/inprocess.py": (1, FALLBACK),
    "tether/cli/main.py": (2, CLIENT),
    "tether/cli/remote.py": (2, CLIENT),
    "tether/cli/sdk_choices.py": (1, "flags are read in the client, from its home"),
    "tether/core/environ.py": (5, "the one place that builds a caller's world; None fallback"),
    "tether/daemon/build.py": (1, DAEMON),
    "tether/daemon/channel.py": (1, CLIENT),
    "tether/daemon/client.py": (3, CLIENT),
    "tether/daemon/commands.py": (3, DAEMON),
    "tether/daemon/paths.py": (2, FALLBACK),
    "tether/daemon/proxy.py": (2, CLIENT),
    "tether/daemon/warm.py": (2, DAEMON),
    "tether/lsp/features.py": (1, FALLBACK),
    "tether/mcp/config.py": (1, FALLBACK),
    "tether/providers/anthropic.py": (6, FALLBACK),
    "tether/providers/auth.py": (1, FALLBACK),
    "tether/providers/choice.py": (1, FALLBACK),
    "tether/providers/ollama.py": (2, FALLBACK),
    "tether/providers/openai_compat.py": (2, FALLBACK),
    "tether/providers/registry.py": (3, f"{FALLBACK}; a --model file path of the client"),
    "tether/providers/side.py": (1, FALLBACK),
    "tether/permissions/rules.py": (1, f"{FALLBACK} (a ~/ rule)"),
    "tether/sandbox/gitstore.py": (
        1,
        "the git the daemon runs itself, after a command, to check it",
    ),
    "tether/sandbox/home_entries.py": (2, FALLBACK),
    "tether/sandbox/doors.py": (6, f"{FALLBACK}; ``~user`` from the account database"),
    "tether/sandbox/shell_sandbox.py": (2, FALLBACK),
    "tether/sandbox/outbound.py": (1, "the daemon's own runtime directory, for its sockets"),
    "tether/sandbox/gate/main.py": (1, "inside the sandbox: the command's, given the proxy"),
    "tether/transcript/store.py": (1, FALLBACK),
    "tether/warmup.py": (
        1,
        "warming the CA store of whoever started this process, not a session's",
    ),
    # Known, not yet the caller's: ``~`` in paths and rules is this process's home (the
    # same user's, but a caller may set another HOME).
    "tether/permissions/shell/lexical.py": (1, "open: ~ in a shell word"),
    "tether/sandbox/exposure.py": (5, "open: the home the sandbox hides and exposes"),
}


def test_every_reach_for_this_processs_environment_is_listed_with_its_reason() -> None:
    found: Counter[str] = Counter()
    for path in sorted((SERVER / "tether").rglob("*.py")):
        if "testing" in path.parts:
            continue  # fakes and test clients, not the product
        hits = len(REACH.findall(path.read_text(encoding="utf-8")))
        if hits:
            found[path.relative_to(SERVER).as_posix()] = hits
    grown = {name: n for name, n in found.items() if n > ALLOWED.get(name, (0, ""))[0]}
    assert not grown, (
        f"new reaches for this process's environment in {grown}: a session's decision reads "
        "its caller's (environ_of(caller), ToolConfig.caller_env); list it here with its "
        "reason only when it is not a session's"
    )
    stale = {name for name, (n, _) in ALLOWED.items() if found.get(name, 0) < n}
    assert not stale, f"fewer reaches than listed in {stale}: lower their counts"
