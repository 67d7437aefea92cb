"""The gate's entry point: the parent of every sandboxed command.

Started by bubblewrap as ``python -I -S -c BOOT --report FD JOB`` (``launch.py`` builds it),
where JOB is the policy, ``--``, then the command's argv, or ``--stdin`` to read the same
strings NUL-terminated from standard input (a sandbox prepared before its command was
known). A policy may start with ``proxy SOCKET``: the command's network then goes through
the daemon's filtering proxy at SOCKET (``forward.py``). It forks; the child puts itself in
a process group of its own, installs the filter (``bpf.py``), hands the listener to the
parent over a socket pair and execs the command with standard input on ``/dev/null``; the
parent makes itself non-dumpable (the command cannot ptrace it or read its memory), serves
notifications until the child exits, and exits with the child's status (128 + the signal
that killed it).
"""

from __future__ import annotations

import _socket
import os
import select
import stat
import struct
import sys

from . import abi, bpf, forward
from .notify import Listener
from .policy import Policy
from .serve import Gate, Report

EXIT_SETUP = 125
"""The gate could not start the command (the reason is on standard error)."""


def _job(argv: list[str]) -> tuple[int | None, list[str]]:
    report: int | None = None
    if argv[:1] == ["--report"]:
        report = int(argv[1])
        argv = argv[2:]
    if argv == ["--stdin"]:
        data = b""
        while chunk := os.read(0, 1 << 16):
            data += chunk
        if not data.endswith(b"\0"):
            raise SystemExit(EXIT_SETUP)  # the daemon let go of this sandbox
        argv = [os.fsdecode(part) for part in data[:-1].split(b"\0")]
    return report, argv


def _fail(why: str) -> None:
    os.write(2, f"tether sandbox: {why}\n".encode("utf-8", "replace"))
    os._exit(EXIT_SETUP)


def _child(
    libc: abi.Libc,
    code: bytes,
    arch: str,
    sock: _socket.socket,
    command: list[str],
    env: dict[str, str],
) -> None:
    try:
        os.environ.update(env)
        os.setpgid(0, 0)  # a `kill 0` of the command's own does not reach the gate
        listener = bpf.install(libc, code, arch)
        sock.sendmsg([b"L"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("i", listener))])
        os.close(listener)  # the command must never hold it
        sock.recv(1)
        sock.close()
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.execvp(command[0], command)
    except OSError as e:
        os.write(2, f"tether sandbox: cannot run {command[0]}: {e.strerror}\n".encode())
        os._exit(127 if isinstance(e, FileNotFoundError) else 126)
    except BaseException:
        os._exit(126)


def run(argv: list[str]) -> None:
    arch = abi.machine()
    if arch is None:
        _fail(f"this architecture ({os.uname().machine}) is not supported")
        return
    # What does not depend on the job, done before it is read: a prepared sandbox's gate
    # does it while it waits. (``warnings``: what ``os.execvp`` imports to search PATH.)
    import warnings as _warnings  # noqa: F401  # pyright: ignore[reportUnusedImport]

    libc = abi.Libc()
    code = bpf.program(arch)
    report_fd, tokens = _job(argv)
    if report_fd is not None:
        try:
            if not stat.S_ISFIFO(os.fstat(report_fd).st_mode):
                raise OSError("not a pipe")
            os.set_blocking(report_fd, False)
            os.set_inheritable(report_fd, False)
        except OSError:
            report_fd = None  # not handed over: refusals go unreported, still refused
    proxy: str | None = None
    if tokens[:1] == ["proxy"] and len(tokens) > 1:
        proxy, tokens = tokens[1], tokens[2:]
    policy, command = Policy.parse(tokens)
    if not command:
        _fail("no command")
    loopback = None
    env: dict[str, str] = {}
    if proxy is not None:
        try:
            loopback = forward.listen()
        except OSError as e:
            _fail(f"cannot open the network proxy's port on loopback: {e.strerror}")
            return
        env = forward.proxy_env(loopback.getsockname()[1])
    parent, child = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        parent.close()
        _child(libc, code, arch, child, command, env)
    child.close()
    if loopback is not None and proxy is not None:
        forward.serve(loopback, proxy)
    try:
        libc.prctl(abi.PR_SET_DUMPABLE, 0)
    except OSError:
        os.kill(pid, 9)
        _fail("cannot make the gate non-dumpable")
    listener = _receive_listener(parent)
    pidfd = os.pidfd_open(pid)
    if listener is None:
        os._exit(_wait(pid))
    parent.send(b"k")
    parent.close()
    gate = Gate(libc, Listener(listener), policy, arch)
    gate.report = Report(report_fd)
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    poller.register(pidfd, select.POLLIN)
    exited = False
    while not exited:
        for fd, _events in poller.poll():
            if fd == listener:
                notification = gate.listener.receive()
                if notification is not None:
                    gate.handle(notification)
            else:
                exited = True
    gate.report.close()
    sys.stdout.flush()
    os._exit(_wait(pid))


def _receive_listener(sock: _socket.socket) -> int | None:
    size = _socket.CMSG_SPACE(4)
    try:
        _data, ancillary, _flags, _address = sock.recvmsg(1, size)
    except OSError:
        return None
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS and len(payload) >= 4:
            fd: int = struct.unpack("i", payload[:4])[0]
            os.set_inheritable(fd, False)
            return fd
    return None


def _wait(pid: int) -> int:
    _pid, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)
