"""The seccomp filter: classic BPF, assembled here.

Every call is allowed in the kernel except those that can make a directory entry appear:
they go to the gate's supervisor (``SECCOMP_RET_USER_NOTIF``). ``open``/``openat`` go
there only when their flags create or write (``O_CREAT``, ``O_WRONLY``, ``O_RDWR``,
``O_TRUNC``: BPF can test a register, not a path), so opening to read, and reading and
writing through descriptors already open, never leave the kernel. ``openat2`` answers ENOSYS (its
flags are behind a pointer; callers fall back to ``openat``) and so does
``io_uring_setup`` (io_uring opens and makes files without system calls a filter sees).
A second user-notification listener is refused by the kernel itself (EBUSY), so no
command can interpose its own supervisor. Another architecture's calls (i386 on x86_64)
and x32 calls kill the process: their numbers mean other things.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

from . import abi

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

NOTIFIED = (
    *("creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link"),
    *("linkat", "rename", "renameat", "renameat2"),
)
"""Always sent to the supervisor."""
CREATING_OPENS = (("open", 1), ("openat", 2))
"""Sent to the supervisor when the flags argument (its index) holds one of ``OPEN_FLAGS``."""
OPEN_FLAGS = os.O_CREAT | os.O_WRONLY | os.O_RDWR | os.O_TRUNC
REFUSED = (("openat2", errno.ENOSYS), ("io_uring_setup", errno.ENOSYS))


def _arg_low(index: int) -> int:
    return 16 + 8 * index  # seccomp_data.args[index], low 32 bits (little-endian)


def program(arch: str) -> bytes:
    """The filter for ``arch`` (a key of ``abi.SYSCALLS``)."""
    table = abi.SYSCALLS[arch]
    kill, notify, allow = "kill", "notify", "allow"
    code: list[tuple[int, str | int, str | int, int] | str] = []

    def op(opcode: int, k: int, jt: str | int = 0, jf: str | int = 0) -> None:
        code.append((opcode, jt, jf, k))

    op(_LD_W_ABS, 4)  # arch
    op(_JEQ_K, abi.AUDIT_ARCH[arch], 0, kill)
    op(_LD_W_ABS, 0)  # nr
    if arch == "x86_64":
        op(_JGE_K, abi.X32_SYSCALL_BIT, kill, 0)
    for name in NOTIFIED:
        if name in table:
            op(_JEQ_K, table[name], notify, 0)
    for name, index in CREATING_OPENS:
        if name in table:
            op(_JEQ_K, table[name], f"flags{index}", 0)
    for name, number in REFUSED:
        op(_JEQ_K, table[name], f"errno{number}", 0)
    op(_RET_K, abi.SECCOMP_RET_ALLOW)
    for index in sorted({i for n, i in CREATING_OPENS if n in table}):
        code.append(f"flags{index}")
        op(_LD_W_ABS, _arg_low(index))
        op(_JSET_K, OPEN_FLAGS, notify, allow)
    for number in sorted({n for _, n in REFUSED}):
        code.append(f"errno{number}")
        op(_RET_K, abi.SECCOMP_RET_ERRNO | number)
    code.append(kill)
    op(_RET_K, abi.SECCOMP_RET_KILL_PROCESS)
    code.append(notify)
    op(_RET_K, abi.SECCOMP_RET_USER_NOTIF)
    code.append(allow)
    op(_RET_K, abi.SECCOMP_RET_ALLOW)
    return _assemble(code)


def _assemble(code: list[tuple[int, str | int, str | int, int] | str]) -> bytes:
    labels: dict[str, int] = {}
    count = 0
    for item in code:
        if isinstance(item, str):
            labels[item] = count
        else:
            count += 1
    out: list[bytes] = []
    at = 0
    for item in code:
        if isinstance(item, str):
            continue
        opcode, jt, jf, k = item

        def offset(target: str | int, here: int = at) -> int:
            if isinstance(target, int):
                return target
            distance = labels[target] - here - 1
            assert 0 <= distance < 256, target
            return distance

        out.append(struct.pack("=HBBI", opcode, offset(jt), offset(jf), k))
        at += 1
    return b"".join(out)


class _Fprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def install(libc: abi.Libc, code: bytes, arch: str) -> int:
    """Install the filter ``code`` (``program(arch)``) on this (single-threaded) process;
    returns the listener."""
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _Fprog(len(code) // 8, ctypes.addressof(buffer))
    pointer = ctypes.c_void_p(ctypes.addressof(fprog))
    libc.prctl(abi.PR_SET_NO_NEW_PRIVS, 1)
    nr = abi.SYSCALLS[arch]["seccomp"]
    flags = abi.SECCOMP_FILTER_FLAG_NEW_LISTENER | abi.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
    try:
        return libc.syscall(nr, abi.SECCOMP_SET_MODE_FILTER, flags, pointer)
    except OSError as e:
        if e.errno != errno.EINVAL:
            raise
    # Before Linux 5.19: a signal may interrupt a call the supervisor is performing.
    flags = abi.SECCOMP_FILTER_FLAG_NEW_LISTENER
    return libc.syscall(nr, abi.SECCOMP_SET_MODE_FILTER, flags, pointer)
