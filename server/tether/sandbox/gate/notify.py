"""The supervisor's side of a seccomp user-notification listener (seccomp_unotify(2)), and
what it reads of the process that made a call.

A notification names the thread (``pid``, a thread id in the sandbox's PID namespace) and
its registers. What the registers point to is read once, and only acted on after
``SECCOMP_IOCTL_NOTIF_ID_VALID`` says the call is still waiting: if the thread died
meanwhile its id could name another process, whose memory would have been read instead.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct

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
    """The ioctls go through ``fcntl.ioctl`` on a mutable buffer, which returns what the
    kernel returned (ADDFD's new descriptor number)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def receive(self) -> Notification | None:
        """The next call waiting (None: it went away before it could be read)."""
        buffer = bytearray(abi.NOTIF.size)  # the kernel wants it zeroed
        try:
            fcntl.ioctl(self.fd, abi.IOCTL_NOTIF_RECV, buffer, True)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.EINTR):
                return None
            raise
        return Notification(bytes(buffer))

    def valid(self, notification: Notification) -> bool:
        try:
            fcntl.ioctl(self.fd, abi.IOCTL_NOTIF_ID_VALID, _ID.pack(notification.id))
        except OSError:
            return False
        return True

    def reply(self, notification: Notification, value: int = 0, error: int = 0) -> None:
        """Answer for the kernel: ``value`` as the call's result, or fail with ``error``."""
        raw = bytearray(abi.RESP.pack(notification.id, value, -error if error else 0, 0))
        try:
            fcntl.ioctl(self.fd, abi.IOCTL_NOTIF_SEND, raw, True)
        except OSError as e:
            if e.errno != errno.ENOENT:  # the caller is gone (killed): nothing to answer
                raise

    def send_fd(self, notification: Notification, fd: int, *, cloexec: bool) -> None:
        """Install ``fd`` in the caller and answer with its number there, in one step (the
        ioctl returns once the caller has taken it)."""
        flags = os.O_CLOEXEC if cloexec else 0
        raw = bytearray(abi.ADDFD.pack(notification.id, abi.SECCOMP_ADDFD_FLAG_SEND, fd, 0, flags))
        try:
            fcntl.ioctl(self.fd, abi.IOCTL_NOTIF_ADDFD, raw, True)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return
            self.reply(notification, error=e.errno or errno.EIO)


_ID = struct.Struct("=Q")


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
    fd = os.open(f"/proc/{pid}/status", os.O_RDONLY | os.O_CLOEXEC)
    try:
        text = os.read(fd, 4096)
    finally:
        os.close(fd)
    return int(_field(text, b"\nTgid:")), int(_field(text, b"\nUmask:") or b"022", 8)


def _field(text: bytes, name: bytes) -> bytes:
    start = text.find(name)
    if start < 0:
        return b""
    start += len(name)
    return text[start : text.find(b"\n", start)].strip()
