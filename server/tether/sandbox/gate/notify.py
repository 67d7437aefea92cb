"""The supervisor's side of a seccomp user-notification listener (seccomp_unotify(2)), and
what it reads of the process that made a call.

A notification names the thread (``pid``, a thread id in the sandbox's PID namespace) and
its registers. What the registers point to is read once, and only acted on after
``SECCOMP_IOCTL_NOTIF_ID_VALID`` says the call is still waiting: if the thread died
meanwhile its id could name another process, whose memory would have been read instead.
"""

from __future__ import annotations

import ctypes
import errno
import os

from . import abi


class Notification:
    __slots__ = ("arch", "args", "id", "nr", "pid")

    def __init__(self, raw: bytes) -> None:
        fields = abi.NOTIF.unpack(raw)
        self.id: int = fields[0]
        self.pid: int = fields[1]
        self.nr: int = fields[3]
        self.arch: int = fields[4]
        self.args: tuple[int, ...] = fields[6:12]


class Listener:
    def __init__(self, libc: abi.Libc, fd: int) -> None:
        self.fd = fd
        self._libc = libc

    def receive(self) -> Notification | None:
        """The next call waiting (None: it went away before it could be read)."""
        buffer = ctypes.create_string_buffer(abi.NOTIF.size)
        try:
            self._libc.ioctl(self.fd, abi.IOCTL_NOTIF_RECV, buffer)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.EINTR):
                return None
            raise
        return Notification(buffer.raw)

    def valid(self, notification: Notification) -> bool:
        buffer = ctypes.create_string_buffer(abi.RESP.size)
        ctypes.c_uint64.from_buffer(buffer).value = notification.id
        try:
            self._libc.ioctl(self.fd, abi.IOCTL_NOTIF_ID_VALID, buffer)
        except OSError:
            return False
        return True

    def reply(self, notification: Notification, value: int = 0, error: int = 0) -> None:
        """Answer for the kernel: ``value`` as the call's result, or fail with ``error``."""
        raw = abi.RESP.pack(notification.id, value, -error if error else 0, 0)
        buffer = ctypes.create_string_buffer(raw, len(raw))
        try:
            self._libc.ioctl(self.fd, abi.IOCTL_NOTIF_SEND, buffer)
        except OSError as e:
            if e.errno != errno.ENOENT:  # the caller is gone (killed): nothing to answer
                raise

    def send_fd(self, notification: Notification, fd: int, *, cloexec: bool) -> None:
        """Install ``fd`` in the caller and answer with its number there, in one step."""
        flags = os.O_CLOEXEC if cloexec else 0
        raw = abi.ADDFD.pack(notification.id, abi.SECCOMP_ADDFD_FLAG_SEND, fd, 0, flags)
        buffer = ctypes.create_string_buffer(raw, len(raw))
        try:
            self._libc.ioctl(self.fd, abi.IOCTL_NOTIF_ADDFD, buffer)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return
            self.reply(notification, error=e.errno or errno.EIO)


def read_path(libc: abi.Libc, pid: int, address: int) -> bytes:
    """The NUL-terminated string at ``address`` in ``pid`` (EFAULT, ENAMETOOLONG like the
    kernel)."""
    if address == 0:
        raise OSError(errno.EFAULT, "bad address")
    out = b""
    while len(out) < abi.PATH_MAX:
        # Read to the end of the page first: the next one may not be mapped.
        size = min(4096 - (address % 4096), abi.PATH_MAX - len(out))
        try:
            chunk = libc.read_memory(pid, address, size)
        except OSError as e:
            raise OSError(errno.EFAULT, "bad address") if e.errno == errno.EFAULT else e
        if not chunk:
            raise OSError(errno.EFAULT, "bad address")
        end = chunk.find(b"\0")
        if end >= 0:
            return out + chunk[:end]
        out += chunk
        address += len(chunk)
    raise OSError(errno.ENAMETOOLONG, "file name too long")


def status(pid: int) -> tuple[int, int]:
    """The thread group id and the umask of thread ``pid``."""
    with open(f"/proc/{pid}/status", "rb") as f:
        text = f.read()
    tgid = umask = -1
    for line in text.split(b"\n"):
        if line.startswith(b"Tgid:"):
            tgid = int(line[5:])
        elif line.startswith(b"Umask:"):
            umask = int(line[6:], 8)
    if tgid < 0:
        raise OSError(errno.ESRCH, "no such process")
    return tgid, 0o022 if umask < 0 else umask
