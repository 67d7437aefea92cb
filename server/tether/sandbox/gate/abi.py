"""The kernel interface of the gate: system call numbers per architecture, the seccomp
structures and ioctls of ``linux/seccomp.h``, and raw system calls through ctypes.

Only the standard library: this module runs inside the sandbox with ``python -I -S``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

SYSCALLS = {
    "x86_64": {
        **{"open": 2, "creat": 85, "mkdir": 83, "rename": 82, "link": 86, "symlink": 88},
        **{"mknod": 133, "openat": 257, "mkdirat": 258, "mknodat": 259, "renameat": 264},
        **{"linkat": 265, "symlinkat": 266, "renameat2": 316, "openat2": 437},
        **{"io_uring_setup": 425, "seccomp": 317},
    },
    "aarch64": {
        **{"openat": 56, "mkdirat": 34, "mknodat": 33, "renameat": 38, "linkat": 37},
        **{"symlinkat": 36, "renameat2": 276, "openat2": 437, "io_uring_setup": 425},
        "seccomp": 277,
    },
}
"""The calls the gate cares about (aarch64 has only the ``*at`` forms)."""
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000
"""x86_64's x32 ABI: the same architecture value, other call numbers; refused outright."""

SECCOMP_SET_MODE_FILTER = 1
SECCOMP_GET_NOTIF_SIZES = 3
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV = 1 << 5
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_USER_NOTIF = 0x7FC00000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_ADDFD_FLAG_SEND = 1 << 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38

NOTIF = struct.Struct("=QIIiIQ6Q")
"""struct seccomp_notif: id, pid, flags, then struct seccomp_data (nr, arch, ip, args)."""
RESP = struct.Struct("=QqiI")
"""struct seccomp_notif_resp: id, val, error, flags."""
ADDFD = struct.Struct("=QIIII")
"""struct seccomp_notif_addfd: id, flags, srcfd, newfd, newfd_flags."""


def _ioc(direction: int, nr: int, size: int) -> int:
    return (direction << 30) | (size << 16) | (ord("!") << 8) | nr


IOCTL_NOTIF_RECV = _ioc(3, 0, NOTIF.size)
IOCTL_NOTIF_SEND = _ioc(3, 1, RESP.size)
IOCTL_NOTIF_ID_VALID = _ioc(1, 2, 8)
IOCTL_NOTIF_ADDFD = _ioc(1, 3, ADDFD.size)

AT_FDCWD = -100
AT_SYMLINK_FOLLOW = 0x400
AT_EMPTY_PATH = 0x1000
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
PATH_MAX = 4096


def machine() -> str | None:
    """The architecture the gate knows, or None (then the sandbox cannot guard)."""
    name = os.uname().machine
    if name not in SYSCALLS or sys.byteorder != "little" or sys.maxsize < 2**32:
        return None
    return name


class _Iovec(ctypes.Structure):
    _fields_ = (("base", ctypes.c_void_p), ("len", ctypes.c_size_t))


class Libc:
    """The few C library entry points the gate needs."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long
        self._prctl = libc.prctl
        self._prctl.restype = ctypes.c_int
        self._readv = libc.process_vm_readv
        self._readv.restype = ctypes.c_ssize_t

    def syscall(self, nr: int, *args: int | ctypes.c_void_p) -> int:
        wide = [a if isinstance(a, ctypes.c_void_p) else ctypes.c_long(a) for a in args]
        result = int(self._syscall(ctypes.c_long(nr), *wide))
        if result < 0:
            raise _error()
        return result

    def renameat2(self, nr: int, old_fd: int, old: str, new_fd: int, new: str, flags: int) -> None:
        args = (ctypes.c_long(old_fd), os.fsencode(old), ctypes.c_long(new_fd), os.fsencode(new))
        if int(self._syscall(ctypes.c_long(nr), *args, ctypes.c_long(flags))) < 0:
            raise _error()

    def prctl(self, option: int, value: int) -> None:
        zero = ctypes.c_ulong(0)
        if self._prctl(ctypes.c_int(option), ctypes.c_ulong(value), zero, zero, zero) != 0:
            raise _error()

    def read_memory(self, pid: int, address: int, size: int) -> bytes:
        """Up to ``size`` bytes of another process's memory at ``address`` (fewer when an
        unmapped page follows)."""
        buffer = ctypes.create_string_buffer(size)
        local = _Iovec(ctypes.addressof(buffer), size)
        remote = _Iovec(address, size)
        got = int(
            self._readv(
                ctypes.c_int(pid),
                ctypes.byref(local),
                ctypes.c_ulong(1),
                ctypes.byref(remote),
                ctypes.c_ulong(1),
                ctypes.c_ulong(0),
            )
        )
        if got < 0:
            raise _error()
        return buffer.raw[:got]


def _error() -> OSError:
    code = ctypes.get_errno() or errno.EIO
    return OSError(code, os.strerror(code))
