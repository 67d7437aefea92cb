"""The gate (``sandbox/gate/``): what a sandboxed process can and cannot do to it, and that
ordinary programs see the calls it performs for them exactly as the kernel's own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import MakeHarness, needs_bwrap, text_of

pytestmark = needs_bwrap

PYTHON = os.path.realpath(sys.executable)

RACE = """
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(64)
good, bad = b"sub/okname\\0", b"sub/.git\\0\\0\\0"
os.makedirs("sub", exist_ok=True)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, bad, len(bad)); ctypes.memmove(buf, good, len(good))
threads = [threading.Thread(target=flip) for _ in range(2)]
for t in threads: t.start()
made = 0
deadline = time.monotonic() + float(sys.argv[1])
while time.monotonic() < deadline and not os.path.lexists("sub/.git"):
    made += libc.mkdir(buf, 0o755) == 0
    fd = libc.open(buf, os.O_CREAT | os.O_WRONLY, 0o644)
    if fd >= 0:
        made += 1; os.close(fd)
    made += libc.symlink(b"/tmp", buf) == 0
    made += libc.rename(b"sub/from", buf) == 0
    open("sub/from", "w").close()
    for name in ("sub/okname",):
        try: os.rmdir(name)
        except OSError:
            try: os.unlink(name)
            except OSError: pass
stop = True
for t in threads: t.join()
print("made", made, "protected", os.path.lexists("sub/.git"))
"""


OTHER_ABI = """
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
page = libc.mmap(None, 4096, 7, 0x22 | 0x40, -1, 0)  # RWX, below 4 GiB (MAP_32BIT)
path = os.path.abspath(sys.argv[2]).encode() + b"\\0"
ctypes.memmove(page + 64, path, len(path))
if sys.argv[1] == "i386":  # mov eax, 39 (mkdir); mov ebx, path; mov ecx, 0755; int 0x80; ret
    code = b"\\xb8\\x27\\0\\0\\0\\xbb" + struct.pack("<I", page + 64) + b"\\xb9\\xed\\x01\\0\\0\\xcd\\x80\\xc3"
    ctypes.memmove(page, code, len(code))
    print("i386", ctypes.CFUNCTYPE(ctypes.c_int)(page)())
else:
    print("x32", libc.syscall(ctypes.c_long(0x40000000 | 83), ctypes.c_char_p(path), ctypes.c_long(0o755)))
"""
"""mkdir through the i386 system call table (``int 0x80``) or the x32 one: numbers the
filter's table does not describe."""


def py(code: str, *args: str) -> str:
    """A command line running ``code`` with the daemon's interpreter (readable inside)."""
    quoted = code.replace("'", "'\\''")
    return f"{PYTHON} -c '{quoted}' {' '.join(args)}"


async def test_threads_swapping_the_path_never_create_a_protected_name(
    make_harness: MakeHarness, workspace: Path
) -> None:
    # Without the gate the race is won quickly: the check below is not idle.
    done = subprocess.run(  # noqa: ASYNC221
        [PYTHON, "-c", RACE, "5"], cwd=workspace, capture_output=True, text=True, check=True
    )
    assert "protected True" in done.stdout, done.stdout
    won = workspace / "sub" / ".git"  # a folder, a file, a link or a renamed file
    won.rmdir() if won.is_dir() and not won.is_symlink() else won.unlink()
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command=py(RACE, "1.5"))
    words = text_of(out).split()
    assert words[:4] == ["made", words[1], "protected", "False"], text_of(out)
    assert int(words[1]) > 0  # ordinary names were created all along
    assert not os.path.lexists(workspace / "sub" / ".git")
    assert "sub/.git" in text_of(out) and "refused" in text_of(out)


async def test_performed_calls_look_like_the_kernels_own(
    make_harness: MakeHarness, workspace: Path
) -> None:
    code = textwrap.dedent(
        """
        import ctypes, fcntl, os, stat
        libc = ctypes.CDLL(None, use_errno=True)  # os.open always adds O_CLOEXEC
        fd = libc.open(b"a.txt", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o666)
        print("cloexec", bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC))
        fd = libc.open(b"b.txt", os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o666)
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        print("inherit", not fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC, "append", bool(flags & os.O_APPEND))
        os.umask(0o077)
        os.mkdir("private", 0o777)
        os.close(os.open("secret", os.O_CREAT | os.O_WRONLY, 0o666))
        print("modes", oct(os.stat("private").st_mode & 0o777), oct(os.stat("secret").st_mode & 0o777))
        try:
            os.open("a.txt", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            print("excl EEXIST")
        os.symlink("target-file", "dangling")
        os.close(os.open("dangling", os.O_CREAT | os.O_WRONLY))
        print("followed", os.path.isfile("target-file"))
        try:
            os.open("dangling", os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW)
        except OSError as e:
            print("nofollow", e.errno == 40)
        fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
        os.write(fd, b"tmp")
        here = os.open(".", os.O_RDONLY)
        os.link(f"/proc/self/fd/{fd}", "from-tmpfile", dst_dir_fd=here, follow_symlinks=True)
        print("tmpfile", open("from-tmpfile").read())
        os.mkfifo("fifo")
        """
    )
    h = make_harness(mode="bypassPermissions")
    out = await h.call(
        "Bash",
        command=py(code) + " && echo one > /dev/stdout && echo two >> /proc/self/fd/1"
        " && { cat fifo & echo through-fifo > fifo; wait; }; umask",
    )
    lines = text_of(out).splitlines()
    assert lines[:7] == [
        "cloexec True",
        "inherit True append True",
        "modes 0o700 0o600",
        "excl EEXIST",
        "followed True",
        "nofollow True",
        "tmpfile tmp",
    ], text_of(out)
    assert {"one", "two", "through-fifo"} <= set(lines[7:]), text_of(out)


async def test_a_fifo_waiting_for_a_writer_does_not_stall_other_creations(
    make_harness: MakeHarness, workspace: Path
) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call(
        "Bash",
        command="mkfifo f && (exec 3>>f; sleep 1) & sleep 0.1; touch made && ls made; "
        "timeout 3 cat f; echo done",
        timeout=20_000,
    )
    assert text_of(out).split() == ["made", "done"], text_of(out)


async def test_the_command_cannot_reach_the_gate(
    make_harness: MakeHarness, workspace: Path
) -> None:
    code = textwrap.dedent(
        """
        import ctypes, errno, os
        libc = ctypes.CDLL(None, use_errno=True)
        gate = os.getppid()
        for what in ("mem", "environ", "fd/0"):
            try:
                open(f"/proc/{gate}/{what}", "rb").read(1)
                print(what, "open")
            except OSError as e:
                print(what, errno.errorcode[e.errno])
        print("ptrace", libc.ptrace(16, gate, 0, 0), errno.errorcode[ctypes.get_errno()])
        prog = (ctypes.c_char * 8)(*b"\\x06\\x00\\x00\\x00\\x00\\x00\\xc0\\x7f")
        class F(ctypes.Structure):
            _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))
        fprog = F(1, ctypes.addressof(prog))
        r = libc.syscall(317, 1, 8, ctypes.byref(fprog))
        print("listener", r, errno.errorcode.get(ctypes.get_errno()))
        print("io_uring", libc.syscall(425, 8, ctypes.c_void_p(0)), errno.errorcode[ctypes.get_errno()])
        print("openat2", libc.syscall(437, -100, b"x", ctypes.c_void_p(0), 0), errno.errorcode[ctypes.get_errno()])
        print("userns", os.system("unshare -U true 2>/dev/null"))
        """
    )
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command=py(code))
    lines = dict(line.split(" ", 1) for line in text_of(out).splitlines() if " " in line)
    assert lines["mem"] == "EACCES" and lines["environ"] == "EACCES", text_of(out)
    assert lines["fd/0"] == "EACCES", text_of(out)
    assert lines["ptrace"] == "-1 EPERM", text_of(out)
    assert lines["listener"] == "-1 EBUSY", text_of(out)  # one listener per process tree
    assert lines["io_uring"] == "-1 ENOSYS" and lines["openat2"] == "-1 ENOSYS", text_of(out)
    assert lines["userns"] != "0", text_of(out)


async def test_exit_status_and_signals_pass_through(make_harness: MakeHarness) -> None:
    h = make_harness(mode="bypassPermissions")
    assert "Exit code 7" in text_of(await h.call("Bash", command="exit 7"))
    out = await h.call("Bash", command="kill -TERM $$")
    assert "Exit code 143" in text_of(out), text_of(out)
    out = await h.call(
        "Bash",
        command="gate=$(cut -d' ' -f5 /proc/$PPID/stat); mine=$(cut -d' ' -f5 /proc/$$/stat); "
        '[ "$gate" != "$mine" ] && echo apart; kill -TERM 0',
    )
    assert "apart" in text_of(out).splitlines(), text_of(out)  # `kill 0` misses the gate
    assert "Exit code 143" in text_of(out)


@pytest.mark.parametrize(
    ("command", "refused"),
    [
        ("mkdir -p sub && git init -q sub", "sub/.git"),
        ("mkdir d && touch d/HEAD && mkdir d/objects d/refs", "d/refs"),
        ("mkdir d && printf 'ref: x' > d/HEAD && echo .. > d/commondir", "d/commondir"),
        ("mkdir -p a && ln -s ../.git a/link; mkdir -p x/.VSCODE", "x/.VSCODE"),
        ("mkdir t && mv t .claude", ".claude"),
        ("touch x && ln x .envrc", ".envrc"),
        (f'{PYTHON} -c \'import os; os.rename("a", "b")\' ; touch .idea', ".idea"),
    ],
)
async def test_refusals_are_reported_with_the_path_and_the_way_out(
    make_harness: MakeHarness, workspace: Path, command: str, refused: str
) -> None:
    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command=command)
    text = text_of(out)
    assert "The shell sandbox refused" in text and str(workspace / refused) in text, text
    assert "dangerouslyDisableSandbox" in text and "ask the user" in text
    assert not os.path.lexists(workspace / refused)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the i386 and x32 tables are x86_64's")
async def test_calls_through_another_abi_kill_the_caller(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    done = subprocess.run(  # noqa: ASYNC221
        [PYTHON, "-c", OTHER_ABI, "i386", "sub/plain"],
        cwd=workspace,
        capture_output=True,
        text=True,
    )
    assert done.stdout.split() == ["i386", "0"] and (workspace / "sub" / "plain").is_dir()
    h = make_harness(mode="bypassPermissions")
    for abi in ("i386", "x32"):
        out = await h.call("Bash", command=py(OTHER_ABI, abi, "sub/.git") + "; echo status $?")
        assert "status 159" in text_of(out), text_of(out)  # SIGSYS
        assert not os.path.lexists(workspace / "sub" / ".git")
