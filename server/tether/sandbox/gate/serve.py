"""The supervisor's answer to each call: resolve, decide, and perform the call itself.

The kernel would read the path again if the supervisor let the call go on
(``SECCOMP_USER_NOTIF_FLAG_CONTINUE``), and by then another thread of the caller may have
put a different path in the same buffer: a decision on what was read first would not hold.
So the gate never lets a call go on. It reads each path once, resolves every component
but the last to a directory descriptor with the kernel's own lookup (starting from the
caller's working directory or the descriptor it passed, taken from ``/proc/PID/``; the
supervisor shares the sandbox's root and mounts, so absolute paths and symlinks lead to the
same place), decides on that directory's canonical path and the final name, and makes the
entry itself relative to the descriptor: ``mkdirat``, ``mknodat``, ``symlinkat``,
``linkat``, ``renameat2``, or ``openat`` with ``O_NOFOLLOW`` (a final symlink is followed
here, one link at a time, when the caller did not forbid it), whose descriptor is then
installed in the caller (``SECCOMP_IOCTL_NOTIF_ADDFD``). A rename or swap of any component
after the lookup changes nothing: the call acts on the directory that was decided on.

Opening an existing file for writing comes here too (``O_WRONLY``, ``O_RDWR``,
``O_TRUNC``): a protected entry the sandbox could not mount read-only (beyond its walk) is
refused by name all the same. Modes get the caller's umask (``/proc/PID/status``). An open
that may block (a FIFO) is finished on a thread of its own, so one reader waiting for a
writer does not stall every other process of the command.
"""

from __future__ import annotations

import _thread
import errno
import os
import stat

from . import abi
from .notify import Listener, Notification, read_path, status
from .policy import Policy
from .resolve import Place, Refused, follow, in_proc, lexists, lstat, resolve

MAX_REPORTS = 32


class Report:
    """What was refused, for the daemon: ``op NUL path NUL why NUL`` records on a pipe
    that never blocks the gate (records beyond ``MAX_REPORTS`` are only counted)."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.sent = 0
        self.dropped = 0

    def add(self, op: str, path: str, why: str) -> None:
        if self.fd is None:
            return
        if self.sent >= MAX_REPORTS:
            self.dropped += 1
            return
        record = "\0".join((op, path[:1000], why[:1000], "")).encode("utf-8", "surrogateescape")
        try:
            os.write(self.fd, record)
            self.sent += 1
        except OSError:
            self.dropped += 1

    def close(self) -> None:
        if self.fd is not None and self.dropped:
            self.sent = 0
            self.add("more", "", str(self.dropped))
        self.dropped = 0


class Gate:
    def __init__(self, libc: abi.Libc, listener: Listener, policy: Policy, arch: str) -> None:
        self.libc = libc
        self.listener = listener
        self.policy = policy
        self.report = Report(None)
        self.audit = abi.AUDIT_ARCH[arch]
        self.nr = abi.SYSCALLS[arch]
        names = {number: name for name, number in self.nr.items()}
        self.handlers = {
            number: getattr(self, f"_{name}")
            for number, name in names.items()
            if hasattr(self, f"_{name}")
        }

    # -- one notification --------------------------------------------------------------------

    def handle(self, n: Notification) -> None:
        handler = self.handlers.get(n.nr)
        if handler is None or n.arch != self.audit:
            self.listener.reply(n, error=errno.ENOSYS)
            return
        try:
            handler(n)
        except Refused as e:
            self.report.add(e.op, e.path, e.why)
            self.listener.reply(n, error=errno.EACCES)
        except OSError as e:
            self.listener.reply(n, error=e.errno or errno.EIO)
        except Exception as e:  # a bug here must refuse the call, not end the gate
            self.report.add("error", "", f"the gate failed on this call: {e!r}")
            self.listener.reply(n, error=errno.EACCES)

    def _begin(self, n: Notification) -> tuple[int, int]:
        """The caller's thread group and umask (0 if it is gone)."""
        tgid, umask = status(n.pid)
        return tgid, umask

    def _path(self, n: Notification, index: int) -> str:
        return os.fsdecode(read_path(self.libc, n.pid, n.args[index]))

    def _place(self, n: Notification, tgid: int, dirfd: int, path: str) -> Place:
        """Resolve all but the last component of ``path`` as the caller would."""
        if not path:
            raise OSError(errno.ENOENT, "empty path")
        start: int | None = None
        if not path.startswith("/"):
            where = "cwd" if dirfd == abi.AT_FDCWD else f"fd/{dirfd}"
            start = os.open(f"/proc/{n.pid}/{where}", os.O_PATH | os.O_CLOEXEC)
        try:
            return resolve(start, path, (tgid, n.pid))
        finally:
            if start is not None:
                os.close(start)

    def _check(self, n: Notification) -> None:
        if not self.listener.valid(n):
            raise OSError(errno.ENOENT, "the caller is gone")

    def _decide(self, op: str, place: Place, *, brings: bool, exists_ok: bool) -> None:
        why = self.policy.refusal(place.path, place.fd, place.name, brings=brings)
        if why is None:
            return
        if exists_ok and lexists(place):
            raise OSError(errno.EEXIST, "exists")
        raise Refused(op, place.path, why)

    # -- the calls -------------------------------------------------------------------------

    def _mkdir(self, n: Notification) -> None:
        self._make(n, abi.AT_FDCWD, 0, "mkdir")

    def _mkdirat(self, n: Notification) -> None:
        self._make(n, _int(n.args[0]), 1, "mkdir")

    def _mknod(self, n: Notification) -> None:
        self._make(n, abi.AT_FDCWD, 0, "mknod")

    def _mknodat(self, n: Notification) -> None:
        self._make(n, _int(n.args[0]), 1, "mknod")

    def _make(self, n: Notification, dirfd: int, index: int, op: str) -> None:
        path = self._path(n, index)
        tgid, umask = self._begin(n)
        place = self._place(n, tgid, dirfd, path)
        try:
            self._check(n)
            self._decide(op, place, brings=False, exists_ok=True)
            os.umask(umask)
            mode = n.args[index + 1] & 0xFFFFFFFF
            if op == "mkdir":
                os.mkdir(place.name, mode & 0o7777, dir_fd=place.fd)
            else:
                os.mknod(place.name, mode, n.args[index + 2], dir_fd=place.fd)
            self.listener.reply(n)
        finally:
            place.close()

    def _symlink(self, n: Notification) -> None:
        self._link_symbolic(n, abi.AT_FDCWD, 1)

    def _symlinkat(self, n: Notification) -> None:
        self._link_symbolic(n, _int(n.args[1]), 2)

    def _link_symbolic(self, n: Notification, dirfd: int, index: int) -> None:
        target = self._path(n, 0)
        if not target:
            raise OSError(errno.ENOENT, "empty target")
        path = self._path(n, index)
        tgid, umask = self._begin(n)
        place = self._place(n, tgid, dirfd, path)
        try:
            self._check(n)
            self._decide("symlink", place, brings=True, exists_ok=True)
            self._link_target(place, target, (tgid, n.pid))
            os.umask(umask)
            os.symlink(target, place.name, dir_fd=place.fd)
            self.listener.reply(n)
        finally:
            place.close()

    def _link_target(self, place: Place, target: str, caller: tuple[int, int]) -> None:
        """A symlink to a directory that holds protected configuration the sandbox does not
        see to (a repository out of the walk's reach) would bring it into view."""
        try:
            where = resolve(None if target.startswith("/") else place.fd, target, caller)
        except (OSError, Refused):
            return  # dangling: whatever appears there later is checked when it appears
        try:
            st = lstat(where, follow=True)
            if st is None or not stat.S_ISDIR(st.st_mode):
                return
            why = self.policy.holds(where.path, where.fd, where.name, linking=True)
        except OSError:
            return
        finally:
            where.close()
        if why is not None:
            raise Refused("symlink", place.path, f"it would lead to {where.path}: {why}")

    def _link(self, n: Notification) -> None:
        self._hard_link(n, abi.AT_FDCWD, 0, abi.AT_FDCWD, 1, 0)

    def _linkat(self, n: Notification) -> None:
        args = n.args
        self._hard_link(n, _int(args[0]), 1, _int(args[2]), 3, args[4] & 0xFFFFFFFF)

    def _hard_link(
        self, n: Notification, old_dirfd: int, old_index: int, dirfd: int, index: int, flags: int
    ) -> None:
        old_path = self._path(n, old_index)
        path = self._path(n, index)
        tgid, umask = self._begin(n)
        follow = bool(flags & abi.AT_SYMLINK_FOLLOW)
        old: Place | None = None
        place: Place | None = None
        if not old_path and flags & abi.AT_EMPTY_PATH:
            source = os.open(f"/proc/{n.pid}/fd/{old_dirfd}", os.O_PATH | os.O_CLOEXEC)
        else:
            old = self._place(n, tgid, old_dirfd, old_path)
            nofollow = 0 if follow else os.O_NOFOLLOW
            try:
                source = os.open(old.name, os.O_PATH | os.O_CLOEXEC | nofollow, dir_fd=old.fd)
            except OSError:
                old.close()
                raise
        try:
            place = self._place(n, tgid, dirfd, path)
            self._check(n)
            self._decide("link", place, brings=True, exists_ok=True)
            # Another name for a protected file would let writes reach it by that name
            # (a repository deeper than the walk is not bound read-only).
            real = os.readlink(f"/proc/self/fd/{source}")
            why = self.policy.refusal(real, -1, "", brings=False)
            if why is not None:
                raise Refused("link", place.path, f"it would be another name for {real}: {why}")
            os.umask(umask)
            if old is not None and stat.S_ISLNK(os.fstat(source).st_mode):
                os.link(
                    old.name,
                    place.name,
                    src_dir_fd=old.fd,
                    dst_dir_fd=place.fd,
                    follow_symlinks=False,
                )
            else:
                # The inode just checked, whatever the name leads to now; the one way to
                # give a descriptor a name again without privileges.
                os.link(f"/proc/self/fd/{source}", place.name, dst_dir_fd=place.fd)
            self.listener.reply(n)
        finally:
            for item in (old, place):
                if item is not None:
                    item.close()
            os.close(source)

    def _rename(self, n: Notification) -> None:
        self._move(n, abi.AT_FDCWD, 0, abi.AT_FDCWD, 1, 0)

    def _renameat(self, n: Notification) -> None:
        self._move(n, _int(n.args[0]), 1, _int(n.args[2]), 3, 0)

    def _renameat2(self, n: Notification) -> None:
        args = n.args
        self._move(n, _int(args[0]), 1, _int(args[2]), 3, args[4] & 0xFFFFFFFF)

    def _move(
        self, n: Notification, old_dirfd: int, old_index: int, dirfd: int, index: int, flags: int
    ) -> None:
        old_path = self._path(n, old_index)
        path = self._path(n, index)
        tgid, _ = self._begin(n)
        old = self._place(n, tgid, old_dirfd, old_path)
        place: Place | None = None
        try:
            place = self._place(n, tgid, dirfd, path)
            self._check(n)
            self._decide("rename", place, brings=True, exists_ok=False)
            moved = [old]
            if flags & abi.RENAME_EXCHANGE:
                self._decide("rename", old, brings=True, exists_ok=False)
                moved.append(place)
            for item in moved:
                st = lstat(item)
                if st is not None and stat.S_ISDIR(st.st_mode):
                    why = self.policy.holds(item.path, item.fd, item.name)
                    if why is not None:
                        raise Refused("move", item.path, why)
            self.libc.renameat2(self.nr["renameat2"], old.fd, old.name, place.fd, place.name, flags)
            self.listener.reply(n)
        finally:
            old.close()
            if place is not None:
                place.close()

    def _open(self, n: Notification) -> None:
        self._open_creating(n, abi.AT_FDCWD, 0, n.args[1], n.args[2])

    def _creat(self, n: Notification) -> None:
        flags = os.O_CREAT | os.O_WRONLY | os.O_TRUNC
        self._open_creating(n, abi.AT_FDCWD, 0, flags, n.args[1])

    def _openat(self, n: Notification) -> None:
        self._open_creating(n, _int(n.args[0]), 1, n.args[2], n.args[3])

    def _open_creating(
        self, n: Notification, dirfd: int, index: int, flags: int, mode: int
    ) -> None:
        flags &= 0xFFFFFFFF
        writes = flags & os.O_ACCMODE != os.O_RDONLY or bool(flags & os.O_TRUNC)
        path = self._path(n, index)
        tgid, umask = self._begin(n)
        place: Place | None = follow(self._place(n, tgid, dirfd, path), flags, (tgid, n.pid))
        try:
            self._check(n)
            procfs = in_proc(place)
            st = lstat(place, follow=procfs)
            cloexec = bool(flags & os.O_CLOEXEC)
            if procfs:
                flags &= ~(os.O_CREAT | os.O_EXCL)  # nothing can be made in procfs
                if writes:
                    self._decide_reopen(place)
            elif place.slash or place.name in (".", ".."):
                flags &= ~(os.O_CREAT | os.O_EXCL)  # only an existing directory is named so
            else:
                why = self.policy.refusal(place.path, place.fd, place.name, brings=False)
                if why is not None and (writes or (st is None and flags & os.O_CREAT)):
                    raise Refused("write" if st is not None else "create", place.path, why)
                if why is not None:
                    flags &= ~os.O_CREAT  # it exists, opened to read: as it is
            if st is not None and flags & os.O_EXCL and flags & os.O_CREAT:
                raise OSError(errno.EEXIST, "exists")
            if st is not None and stat.S_ISFIFO(st.st_mode) and not flags & os.O_NONBLOCK:
                flags &= ~os.O_CREAT
                if not procfs:
                    flags |= os.O_NOFOLLOW
                _thread.start_new_thread(self._open_late, (n, place, flags, cloexec))
                place = None
                return
            os.umask(umask)
            name = place.name + ("/" if place.slash else "")
            if not procfs:
                flags |= os.O_NOFOLLOW  # a symlink put there since is not followed
            fd = os.open(name, flags, mode & 0o7777, dir_fd=place.fd)
            try:
                self.listener.send_fd(n, fd, cloexec=cloexec)
            finally:
                os.close(fd)
        finally:
            if place is not None:
                place.close()

    def _decide_reopen(self, place: Place) -> None:
        """Opening ``/proc/PID/fd/N`` for writing reopens the file that descriptor holds
        (an ``O_PATH`` one too): decided on that file's path."""
        try:
            target = os.readlink(place.name, dir_fd=place.fd)
        except OSError:
            return
        if not target.startswith("/") or target.endswith(" (deleted)"):
            return  # a pipe, a socket, an anonymous or unlinked file: nobody's configuration
        parent, _, name = target.rpartition("/")
        try:
            fd = os.open(parent or "/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            raise Refused("write", target, "it cannot be checked") from None
        try:
            why = self.policy.refusal(target, fd, name, brings=False)
        finally:
            os.close(fd)
        if why is not None:
            raise Refused("write", target, why)

    def _open_late(self, n: Notification, place: Place, flags: int, cloexec: bool) -> None:
        try:
            fd = os.open(place.name, flags, dir_fd=place.fd)
        except OSError as e:
            self.listener.reply(n, error=e.errno or errno.EIO)
            return
        finally:
            place.close()
        try:
            self.listener.send_fd(n, fd, cloexec=cloexec)
        finally:
            os.close(fd)


def _int(value: int) -> int:
    """A register holding a C int (a descriptor, AT_FDCWD)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value
