"""What protecting the control plane costs a shell command, against the stand-ins it replaced.

Measured in one run, on the same machine, for this tree and for the ``main`` branch (its
``server/`` extracted with ``git archive``, imported in a process of its own):

- ``true`` run directly, under a fresh sandbox for every command (``linger_s=0``), and
  under the sandbox prepared while the previous command's result goes back (the default);
  main's numbers include making and removing its stand-ins, ours starting the gate;
- the look at git's state before and after a command (a door staged or committed through
  git's object store is undone: ``gitstore``), when git was left alone and after a commit;
- the cost per file creation: a command creating ``--files`` files (each ``O_CREAT`` open
  goes through the gate's supervisor here, straight to the kernel on main), timed inside
  the command, against the same loop run directly;
- how late a 1 ms timer on the event loop fires while four sessions make their commands'
  sandboxes back to back (what an editor's message waits for meanwhile);
- where the time of a sandboxed ``echo`` goes, phase by phase (``--think`` between commands,
  and back to back as an agent with a fast model runs them): the layout (control plane,
  exposure, git's state before; made on a tool thread where the tree can, ``confine``, and
  the CPU it still costs the event loop's thread), the bubblewrap command line, taking a prepared sandbox or
  starting one, the command to its exit (gate, seccomp, the shell), the look at git's state
  after it, and the session's end (protected links, the next sandbox started). Each phase
  is timed by wrapping the function that does it, in the process measuring that tree.

    python bench/sandbox.py [--runs 40] [--files 10000] [--ref main] [--think 0.5]

Wall times: on a loaded machine every process waits for a CPU, and the gate adds processes
and a round trip per file creation, so the load average is printed with the numbers.

The workspace is on ``/dev/shm`` when there is one (a tmpfs: the filesystem's own cost of
creating a file would drown the gate's).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _util import ms

ROOT = Path(__file__).resolve().parents[1]
CREATE = (
    "import os, sys, time\n"
    "n = int(sys.argv[1]); os.makedirs('many', exist_ok=True)\n"
    "start = time.perf_counter()\n"
    "for i in range(n):\n"
    "    os.close(os.open(f'many/f{i}', os.O_CREAT | os.O_WRONLY, 0o644))\n"
    "print('CREATE', time.perf_counter() - start)\n"
)


async def measure(root: Path, runs: int, files: int, think: float) -> dict[str, Any]:
    """Run in the tree under test (``tether`` from ``sys.path``)."""
    from tether.sandbox import BwrapSandbox, probe
    from tether.tools.shell import run_shell

    if not probe().available:
        return {"problem": probe().problem}
    takes_fds = "pass_fds" in inspect.signature(run_shell).parameters

    async def once(command: str, sandbox: BwrapSandbox | None) -> tuple[float, str]:
        started = time.perf_counter()

        if sandbox is None:
            result = await run_shell(command, cwd=root, timeout_s=300, max_output_chars=10_000)
        else:
            with sandbox.session(root) as confined:
                extra: dict[str, Any] = {"prepared": getattr(confined, "prepared", None)}
                if takes_fds:
                    extra["pass_fds"] = getattr(confined, "pass_fds", ())
                result = await run_shell(
                    command,
                    cwd=root,
                    timeout_s=300,
                    max_output_chars=10_000,
                    wrap=confined,
                    **extra,
                )
        assert result.exit_code == 0, result.output
        return time.perf_counter() - started, result.output

    out: dict[str, Any] = {}
    out["direct"] = [(await once("true", None))[0] for _ in range(runs)]
    fresh = BwrapSandbox(root, linger_s=0)
    out["fresh"] = [(await once("true", fresh))[0] for _ in range(runs)]
    fresh.close()
    prepared = BwrapSandbox(root)
    samples: list[float] = []
    await once("true", prepared)
    for _ in range(runs):
        await asyncio.sleep(think)  # the model thinking: the next sandbox starts meanwhile
        samples.append((await once("true", prepared))[0])
    prepared.close()
    out["prepared"] = samples
    python = os.path.realpath(sys.executable)
    command = f"rm -rf many; {shlex.join([python, '-c', CREATE, str(files)])}"
    for name, sandbox in (
        ("create_direct", None),
        ("create_sandboxed", BwrapSandbox(root, linger_s=0)),
    ):
        wall, output = await once(command, sandbox)
        inside = float(output.split("CREATE", 1)[1].split()[0])
        out[name] = {"wall": wall, "inside": inside}
    shutil.rmtree(root / "many", ignore_errors=True)
    out["store"] = store_check(root, runs)
    out["lag"] = await loop_lag(root, runs)
    out["phases"] = {
        "fresh": await phases(root, runs, think, linger_s=0),
        "prepared": await phases(root, runs, think, linger_s=2.0),
        "back to back": await phases(root, runs, 0.005, linger_s=2.0),
    }
    return out


LAG_SESSIONS = 4


async def loop_lag(root: Path, runs: int) -> list[float]:
    """How late a 1 ms timer on the event loop fires while ``LAG_SESSIONS`` sessions enter
    and leave a command's sandbox back to back, ``runs`` times each (what an editor's
    message waits for in a daemon running those sessions): the layout made on a tool
    thread where the tree can (``confine``), on the loop otherwise."""
    from tether.sandbox import BwrapSandbox

    sandbox = BwrapSandbox(root, linger_s=0)
    confine = getattr(sandbox, "confine", None)
    lane = None
    if confine is not None:
        from tether.core.tool_threads import ToolThreads

        lane = ToolThreads().lane(LAG_SESSIONS)
    late: list[float] = []
    done = asyncio.Event()

    async def probe() -> None:
        while not done.is_set():
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            late.append(time.perf_counter() - started - 0.001)

    async def commands() -> None:
        for _ in range(runs):
            if confine is not None:
                async with confine(root, threads=lane):
                    pass
            else:
                with sandbox.session(root):
                    pass
            await asyncio.sleep(0)

    probing = asyncio.create_task(probe())
    await asyncio.gather(*(commands() for _ in range(LAG_SESSIONS)))
    done.set()
    await probing
    sandbox.close()
    return late


PHASES = (
    ("layout", "session enter (layout, git's state before, proxy)"),
    ("loop", "  of which CPU on the event loop's thread"),
    ("plan", "  of which the control plane (protect.plan)"),
    ("exposure", "  of which what is exposed (exposure)"),
    ("argv", "bubblewrap command line"),
    ("take", "taking a prepared sandbox"),
    ("spawn", "starting one (on the loop or a thread)"),
    ("command", "start or take -> exit seen (gate, shell)"),
    ("notes", "git's state after, refusals"),
    ("end", "session end (links, next sandbox)"),
    ("total", "total"),
)


async def phases(root: Path, runs: int, think: float, linger_s: float) -> dict[str, list[float]]:
    """Where the time of ``echo hi`` in the sandbox goes (``PHASES``): each phase's time per
    command (0 when it did not happen)."""
    import tether.sandbox.shell_sandbox as boxed
    import tether.tools.shell as shell
    from tether.sandbox import BwrapSandbox

    spent: dict[str, float] = {}

    def timed(owner: object, name: str, key: str) -> None:
        original = getattr(owner, name)
        if inspect.iscoroutinefunction(original):

            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

            setattr(owner, name, async_wrapper)
            return

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

        setattr(owner, name, wrapper)

    timed(boxed, "plan", "plan")
    timed(boxed, "exposure", "exposure")
    timed(boxed, "bwrap_argv", "argv")
    timed(boxed.Prestarter, "take", "take")
    timed(shell, "_spawn", "spawn")
    sandbox = BwrapSandbox(root, linger_s=linger_s)
    rows: dict[str, list[float]] = {key: [] for key, _ in PHASES}
    # A tree whose sandbox makes the layout off the loop (``confine``) is measured that way.
    confine = getattr(sandbox, "confine", None)
    lane = None
    if confine is not None:
        from tether.core.tool_threads import ToolThreads

        lane = ToolThreads().lane()
    for i in range(runs + 1):
        await asyncio.sleep(think)
        spent.clear()
        t0, c0 = time.perf_counter(), time.thread_time()
        if confine is not None:
            session = confine(root, threads=lane)
            confined = await session.__aenter__()
        else:
            session = sandbox.session(root)
            confined = session.__enter__()
        t1, c1 = time.perf_counter(), time.thread_time()
        try:
            result = await shell.run_shell(
                "echo hi",
                cwd=root,
                timeout_s=60,
                max_output_chars=1000,
                wrap=confined,
                prepared=confined.prepared,
                pass_fds=confined.pass_fds,
                started=confined.started,
            )
            t2 = time.perf_counter()
            confined.notes()
            t3 = time.perf_counter()
        finally:
            if confine is not None:
                await session.__aexit__(None, None, None)
            else:
                session.__exit__(None, None, None)
        t4 = time.perf_counter()
        assert result.exit_code == 0, result.output
        if i == 0:
            continue  # the first has nothing prepared
        run = t2 - t1 - spent.get("argv", 0.0)
        measured = {"layout": t1 - t0, "loop": c1 - c0, "command": run, "notes": t3 - t2}
        measured["end"] = t4 - t3
        measured["total"] = t4 - t0
        for key, _ in PHASES:
            rows[key].append(measured.get(key, spent.get(key, 0.0)))
    sandbox.close()
    return rows


def store_check(root: Path, runs: int) -> dict[str, list[float]] | None:
    """The look at git's state around each command (``gitstore``): when the command left
    it alone (every command but git's own), and after a ``git commit``."""
    try:
        from tether.sandbox.gitstore import StoreWatch, Watched
    except ImportError:
        return None  # a tree without it
    watch = StoreWatch()
    watched = [Watched(root / ".git", root, lambda _p: None)]
    watch.after(watch.before(watched))
    unchanged: list[float] = []
    committed: list[float] = []
    ident = ["-c", "user.name=B", "-c", "user.email=b@example.com"]
    for i in range(runs):
        started = time.perf_counter()
        watch.after(watch.before(watched))
        unchanged.append(time.perf_counter() - started)
        befores = watch.before(watched)
        (root / "src" / "app.py").write_text(f"print({i})\n")
        subprocess.run(
            ["git", *ident, "commit", "-qam", f"c{i}"], cwd=root, check=True, capture_output=True
        )
        started = time.perf_counter()
        watch.after(befores)
        committed.append(time.perf_counter() - started)
    return {"unchanged": unchanged, "committed": committed}


def workspace() -> Path:
    base = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else Path("/var/tmp")
    top = Path(tempfile.mkdtemp(prefix="tether-bench-", dir=base))
    root = top / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    ident = ["-c", "user.name=B", "-c", "user.email=b@example.com"]
    for args in (["init", "-q"], ["add", "-A"], [*ident, "commit", "-qm", "first"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


def run_tree(server: Path, root: Path, runs: int, files: int, think: float) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--measure",
            str(server),
            str(root),
            str(runs),
            str(files),
            str(think),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"measuring {server} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def median(values: list[float]) -> float:
    return statistics.median(values)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(ours: dict[str, Any], base: dict[str, Any], ref: str, files: int) -> None:
    for name, data in (("this tree", ours), (ref, base)):
        if "problem" in data:
            print(f"cannot measure {name}: {data['problem']}")
            return
    print(f"per command, `true` (median of {len(ours['direct'])}):")
    print(f"  {'':<34}{'this tree':>12}{ref:>12}{'ratio':>8}")
    for key, label in (
        ("direct", "directly"),
        ("fresh", "fresh sandbox each time"),
        ("prepared", "sandbox prepared ahead"),
    ):
        a, b = median(ours[key]), median(base[key])
        print(f"  {label:<34}{ms(a):>12}{ms(b):>12}{a / b:>7.2f}x")
    for key in ("fresh", "prepared"):
        a = median(ours[key]) - median(ours["direct"])
        b = median(base[key]) - median(base["direct"])
        print(f"  sandbox overhead, {key:<17}{ms(a):>12}{ms(b):>12}{a / b:>7.2f}x")
    store = ours.get("store")
    if store:
        direct = median(ours["direct"])
        print("\ngit's state looked at around a command (this tree only; median):")
        for key, label in (("unchanged", "git left alone"), ("committed", "after a git commit")):
            a = median(store[key])
            print(f"  {label:<34}{ms(a):>12}  ({a / direct:.2f}x a direct `true`)")
    if "lag" in ours and "lag" in base:
        print(
            f"\nhow late a 1 ms timer on the loop fires while {LAG_SESSIONS} sessions make "
            "their commands' sandboxes back to back:"
        )
        print(f"  {'':<34}{'this tree':>12}{ref:>12}{'ratio':>8}")
        for label, q in (("median", 0.5), ("p99", 0.99)):
            a, b = quantile(ours["lag"], q), quantile(base["lag"], q)
            print(f"  {label:<34}{ms(a):>12}{ms(b):>12}{a / b:>7.2f}x")
    for kind in ("fresh", "prepared", "back to back"):
        print(f"\nwhere a sandboxed `echo hi` spends its time, {kind} (median):")
        print(f"  {'':<52}{'this tree':>11}{ref:>11}")
        for key, label in PHASES:
            a = median(ours["phases"][kind][key])
            b = median(base["phases"][kind][key]) if "phases" in base else float("nan")
            print(f"  {label:<52}{ms(a):>11}{ms(b):>11}")
    print(f"\nper file creation ({files} files, timed inside the command):")
    for name, data in (("this tree", ours), (ref, base)):
        direct = data["create_direct"]["inside"] / files
        boxed = data["create_sandboxed"]["inside"] / files
        print(
            f"  {name:<10} direct {direct * 1e6:7.1f} us, sandboxed {boxed * 1e6:7.1f} us "
            f"({boxed / direct:5.1f}x; +{(boxed - direct) * 1e6:.1f} us each)"
        )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        server, root = sys.argv[2], Path(sys.argv[3])
        runs, files, think = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
        sys.path.insert(0, server)
        print(json.dumps(asyncio.run(measure(root, runs, files, think))))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--ref", default="main")
    parser.add_argument("--think", type=float, default=0.5, help="seconds between commands")
    args = parser.parse_args()
    # Not under /tmp or /dev/shm: the sandbox replaces them with private ones, and a
    # reference tree there would be out of its own gate's sight (older trees bind nothing back).
    extracted = Path(tempfile.mkdtemp(prefix="tether-bench-ref-", dir="/var/tmp"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", args.ref, "server"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(extracted)], input=archive.stdout, check=True)
    root = workspace()
    try:
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        base = run_tree(extracted / "server", root, args.runs, args.files, args.think)
        ours = run_tree(ROOT / "server", root, args.runs, args.files, args.think)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)
        shutil.rmtree(extracted, ignore_errors=True)
    report(ours, base, args.ref, args.files)


if __name__ == "__main__":
    main()
