"""Doors committed through git's object store: what a command stages or commits at a door
path is undone after it.

A sandboxed command may write a repository's objects, refs and index (``git add`` and
``git commit`` work), but not the door paths of its work tree (``doors.py``). Through the
object store it could still put a door there later: ``git hash-object -w`` with
``git update-index --cacheinfo`` (or ``read-tree``, ``commit-tree`` with ``update-ref``,
a stash, a replace ref) leaves content at ``.envrc`` or ``.husky/pre-commit`` in the index
or in a commit, and the user's own ``git checkout -- .``, ``reset --hard``, ``stash``,
``switch`` or ``reset --hard ORIG_HEAD`` writes it into the tree.

So after each command, for every repository whose git directory it could write:

- the index: an entry at a door path that differs from the one before the command is
  put back (or removed), unless it is what the work tree holds there now (which the user
  or an approved file edit wrote: the sandbox cannot);
- the commits new since the command started (reachable from any ref, reflog entry or
  ``ORIG_HEAD``-like file, not from what was there before): one that adds or changes a door
  path, other than to the work tree's content or to what a parent already had, is
  *tainted*, and so is every new commit above it. Refs and ``HEAD`` pointing at a tainted
  commit go back to where they were (the commits stay in the object store, unreferenced;
  the agent's files stay in the work tree), reflog entries naming one are deleted, and a
  pseudo-ref naming one is removed. An annotated tag counts as the commit it names; a
  new or moved ref naming a tree (``git tag v1 <tree>``, which ``checkout v1 -- .`` writes)
  is judged like a commit without parents. A new or moved replace ref (``refs/replace/``,
  which swaps any object for another on the host) is undone whatever it names.

What was undone is reported to the model and the user. The cost per command when git's
state did not change is a walk of ``stat`` calls over the git directory's refs and logs
(``bench/sandbox.py``); git itself runs only when it did, or when the user changed it
between commands. Git runs here with hooks off, no ``fsmonitor``, and no user or system
configuration (only plumbing: it executes nothing of the repository's).

Limits: a blob compared with the work tree is hashed as it is on disk (no clean filter or
line-ending conversion), so a door file committed through such a filter is undone too, and
so are the intermediate versions of a door file when the command rebases or cherry-picks
commits that changed it (only the work tree's version, the index's and the parents' count);
a commit that is not reachable from any ref, reflog or pseudo-ref is not looked at (a
host command must name it by its hash); a background command is looked at when it ends;
repositories the sandbox does not look into (``protect.SKIPPED_DIRS``) are not watched;
reflogs are read from their files, so a repository in the reftable format has its refs
checked but not its reflog entries.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether.core.files import read_regular

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 20.0
PSEUDO_REFS = ("ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_HEAD")
"""Files at the top of a git directory naming commits a host command may go to
(``reset --hard ORIG_HEAD`` undoes a merge or rebase)."""
FETCH_HEAD = "FETCH_HEAD"

IsDoor = Callable[[str], str | None]
"""A path relative to the work tree -> why it is a door, or None."""

Entry = tuple[str, str]
"""(mode, object id) of an index or tree entry."""


@dataclass(frozen=True)
class Watched:
    git_dir: Path
    worktree: Path | None
    is_door: IsDoor


@dataclass
class _Refs:
    refs: dict[str, str]
    """Every ref's object (``for-each-ref``), and ``HEAD`` as ``ref: …`` or an id."""
    tips: frozenset[str]
    """Every commit a ref, a reflog entry or a pseudo-ref names."""
    peeled: dict[str, tuple[str, str]] = field(default_factory=lambda: dict[str, tuple[str, str]]())
    """What each ref names once annotated tags are peeled: (object type, id)."""


@dataclass
class _Before:
    watched: Watched
    stamp: tuple[tuple[str, int, int, int], ...]
    refs: _Refs | None
    index_fd: int | None
    index_stat: tuple[int, int, int] | None
    notes: list[str] = field(default_factory=lambda: list[str]())


def _git(
    w: Watched, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    # A work tree is named so that git never looks for one around this process; plumbing
    # that reads or writes the index does not touch it.
    worktree = w.worktree or w.git_dir.parent
    return subprocess.run(
        [
            *("git", "--git-dir", str(w.git_dir), "--work-tree", str(worktree)),
            *("-c", "core.fsmonitor=false"),
            *("-c", "core.hooksPath=/dev/null", "-c", "core.useReplaceRefs=false", *args),
        ],
        input=stdin.encode() if stdin is not None else None,
        capture_output=True,
        timeout=GIT_TIMEOUT_S,
        check=False,
        env={
            "PATH": os.environ.get("PATH", os.defpath),
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_TERMINAL_PROMPT": "0",
            **(env or {}),
        },
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def _stamp(git_dir: Path) -> tuple[tuple[str, int, int, int], ...]:
    """What changes whenever a ref, a reflog or a pseudo-ref does: names, inodes, sizes and
    mtimes of their files and folders (the index is watched apart)."""
    out: list[tuple[str, int, int, int]] = []
    for name in ("HEAD", "packed-refs", FETCH_HEAD, *PSEUDO_REFS):
        try:
            st = os.lstat(git_dir / name)
        except OSError:
            continue
        out.append((name, st.st_ino, st.st_size, st.st_mtime_ns))
    for top in ("refs", "logs", "reftable"):
        stack = [git_dir / top]
        while stack:
            here = stack.pop()
            try:
                with os.scandir(here) as it:
                    entries = list(it)
                st = os.lstat(here)
            except OSError:
                continue
            out.append((str(here), st.st_ino, st.st_size, st.st_mtime_ns))
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    s = entry.stat(follow_symlinks=False)
                    out.append((entry.path, s.st_ino, s.st_size, s.st_mtime_ns))
    return tuple(out)


def _pseudo_refs(git_dir: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in (*PSEUDO_REFS, FETCH_HEAD):
        try:
            text = read_regular(git_dir / name, 1 << 20).decode("ascii", errors="replace")
        except OSError:
            continue
        ids = [line.split()[0] for line in text.splitlines() if line.split()]
        out[name] = [i for i in ids if all(c in "0123456789abcdef" for c in i)]
    return out


def _reflogs(git_dir: Path) -> dict[str, list[str]]:
    """Each reflog (``HEAD``, ``refs/heads/main``…) -> the ids its entries moved to, oldest
    first, read from the files (git would stop at the first entry naming a missing object)."""
    out: dict[str, list[str]] = {}
    top = git_dir / "logs"
    stack = [top]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
                continue
            try:
                text = read_regular(Path(entry.path)).decode("utf-8", errors="replace")
            except OSError:
                continue
            name = Path(entry.path).relative_to(top).as_posix()
            out[name] = [line.split()[1] for line in text.splitlines() if len(line.split()) > 1]
    return out


def _read_refs(w: Watched) -> _Refs | None:
    """Every ref and what it names. Robust to refs naming missing objects (a command can
    write one): nothing here stops at them, and they name no commit."""
    listed = _git(w, "for-each-ref", "--format=%(objectname) %(refname)")
    if listed.returncode != 0:
        return None
    refs: dict[str, str] = {}
    for line in listed.stdout.decode(errors="replace").splitlines():
        oid, _, name = line.partition(" ")
        refs[name] = oid
    try:
        refs["HEAD"] = read_regular(w.git_dir / "HEAD", 4096).decode(errors="replace").strip()
    except OSError:
        pass
    named = [oid for name, oid in refs.items() if name != "HEAD"]
    if not refs.get("HEAD", "").startswith("ref:"):
        named.append(refs.get("HEAD", ""))
    for ids in (*_reflogs(w.git_dir).values(), *_pseudo_refs(w.git_dir).values()):
        named += ids
    named = [oid for oid in dict.fromkeys(named) if oid and all(c in _HEX for c in oid)]
    done = _git(
        w,
        "cat-file",
        "--batch-check=%(objecttype) %(objectname)",
        stdin="".join(f"{oid}^{{}}\n" for oid in named),
    )
    if done.returncode != 0:
        return None
    kinds: dict[str, tuple[str, str]] = {}
    for oid, line in zip(named, done.stdout.decode(errors="replace").splitlines(), strict=False):
        fields = line.split()
        if len(fields) == 2 and fields[1] != "missing":
            kinds[oid] = (fields[0], fields[1])
    tips = frozenset(peeled for kind, peeled in kinds.values() if kind == "commit")
    peeled = {name: kinds.get(oid, ("missing", oid)) for name, oid in refs.items()}
    return _Refs(refs, tips, peeled)


_HEX = frozenset("0123456789abcdef")


def _index_stat(git_dir: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(git_dir / "index")
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _index_entries(w: Watched, fd: int | None, is_door: IsDoor) -> dict[str, list[str]]:
    """The door paths of an index (``fd``: an old one kept open; None: the current one) ->
    its ``mode oid stage`` entries."""
    if fd is None and not os.path.exists(w.git_dir / "index"):
        return {}
    env = {"GIT_INDEX_FILE": f"/proc/{os.getpid()}/fd/{fd}"} if fd is not None else None
    done = _git(w, "ls-files", "--stage", "-z", env=env)
    if done.returncode != 0:
        log.debug("cannot read the index of %s: %s", w.git_dir, done.stderr[:200])
        return {}
    out: dict[str, list[str]] = {}
    for record in done.stdout.split(b"\0"):
        head, tab, path = os.fsdecode(record).partition("\t")
        if tab and is_door(path) is not None:
            out.setdefault(path, []).append(head)
    return out


def _old_index(b: _Before) -> dict[str, list[str]]:
    """The door entries of the index as the command found it: read through the descriptor
    kept open on it (git replaces the index by renaming a new one onto it). One written in
    place (same file, new contents) is not known any more: ``HEAD``'s tree as it was
    stands in for it (a door the user had staged and not committed is put back to that)."""
    w = b.watched
    if b.index_fd is None:
        return {}
    now = _index_stat(w.git_dir)
    if now is None or b.index_stat is None or now[0] != b.index_stat[0] or now == b.index_stat:
        return _index_entries(w, b.index_fd, w.is_door)
    head = b.refs.refs.get("HEAD", "") if b.refs is not None else ""
    if head.startswith("ref:") and b.refs is not None:
        head = b.refs.refs.get(head[4:].strip(), "")
    if not head:
        return {}
    done = _git(w, "ls-tree", "-r", "-z", "--full-tree", head)
    out: dict[str, list[str]] = {}
    for record in done.stdout.split(b"\0"):
        meta, tab, path = os.fsdecode(record).partition("\t")
        fields = meta.split()
        if tab and len(fields) == 3 and w.is_door(path) is not None:
            out.setdefault(path, []).append(f"{fields[0]} {fields[2]} 0")
    return out


def _blob_id(data: bytes, sha256: bool) -> str:
    header = b"blob %d\0" % len(data)
    return (hashlib.sha256 if sha256 else hashlib.sha1)(header + data).hexdigest()


def _on_disk(worktree: Path | None, path: str, sha256: bool) -> Entry | None:
    """The work tree's file at ``path`` as an index entry would record it (``sha256``: the
    repository's object format, told by the length of its ids)."""
    if worktree is None:
        return None
    where = worktree / path
    try:
        st = os.lstat(where)
        if stat.S_ISLNK(st.st_mode):
            return ("120000", _blob_id(os.fsencode(os.readlink(where)), sha256))
        if not stat.S_ISREG(st.st_mode):
            return None
        data = where.read_bytes()
    except OSError:
        return None
    mode = "100755" if st.st_mode & 0o100 else "100644"
    return (mode, _blob_id(data, sha256))


class StoreWatch:
    """Per repository: git's state after the last look, so that a command that leaves it
    alone costs no git process."""

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[tuple[tuple[str, int, int, int], ...], _Refs]] = {}
        self._after_lock = threading.Lock()
        """``after`` runs on a thread (it may run git); two commands' ends take turns."""

    def warm(self, watched: Sequence[Watched]) -> None:
        """Read the refs of the repositories whose state changed since the last look, so
        that ``before``, right before the command, runs no git process when nothing changes
        meanwhile (any thread: ``before`` reads them again if anything did)."""
        for w in watched:
            self._refs(w, _stamp(w.git_dir))

    def _refs(self, w: Watched, stamp: tuple[tuple[str, int, int, int], ...]) -> _Refs | None:
        seen = self._seen.get(w.git_dir)
        refs = seen[1] if seen is not None and seen[0] == stamp else _read_refs(w)
        if refs is not None:
            self._seen[w.git_dir] = (stamp, refs)
        return refs

    def before(self, watched: Sequence[Watched]) -> list[_Before]:
        out: list[_Before] = []
        for w in watched:
            stamp = _stamp(w.git_dir)
            refs = self._refs(w, stamp)
            try:
                fd: int | None = os.open(w.git_dir / "index", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                fd = None
            out.append(_Before(w, stamp, refs, fd, _index_stat(w.git_dir)))
        return out

    def after(self, befores: Sequence[_Before]) -> list[str]:
        """Undo what the command put at door paths; one line per thing undone."""
        lines: list[str] = []
        for b in befores:
            try:
                with self._after_lock:
                    lines += self._after(b)
            except (OSError, subprocess.SubprocessError) as e:
                log.warning("could not check git's state in %s: %s", b.watched.git_dir, e)
                lines.append(f"- could not check {b.watched.git_dir} for staged doors: {e}")
            finally:
                if b.index_fd is not None:
                    os.close(b.index_fd)
                    b.index_fd = None
        return lines

    def _after(self, b: _Before) -> list[str]:
        w = b.watched
        lines: list[str] = []
        stamp = _stamp(w.git_dir)
        old_index: dict[str, list[str]] | None = None

        def before_index() -> dict[str, list[str]]:
            nonlocal old_index
            if old_index is None:
                old_index = _old_index(b)
            return old_index

        if stamp != b.stamp or b.refs is None:
            refs = _read_refs(w)
            if refs is not None and b.refs is not None:
                lines += self._commits(w, b.refs, refs, before_index)
                refs = _read_refs(w) if lines else refs
            if refs is not None:
                self._seen[w.git_dir] = (_stamp(w.git_dir), refs)
        if _index_stat(w.git_dir) != b.index_stat:
            lines += _undo_index(w, before_index)
        return lines

    def _commits(
        self,
        w: Watched,
        old: _Refs,
        new: _Refs,
        before_index: Callable[[], dict[str, list[str]]],
    ) -> list[str]:
        replaced = [
            name
            for name, oid in new.refs.items()
            if name.startswith("refs/replace/") and old.refs.get(name) != oid
        ]
        tainted: dict[str, str] = {}
        for name, (kind, oid) in new.peeled.items():
            if kind == "tree" and old.peeled.get(name) != (kind, oid):
                why = _tree_door(w, oid, before_index)
                if why is not None:
                    tainted[oid] = why
        if new.tips <= old.tips and not replaced and not tainted:
            return []
        stdin = "".join(f"^{oid}\n" for oid in sorted(old.tips))
        stdin += "".join(f"{oid}\n" for oid in sorted(new.tips - old.tips))
        done = _git(
            w,
            *("log", "--stdin", "--ignore-missing", "-z", "--raw", "--no-abbrev", "-m"),
            *("--root", "--no-renames"),
            *("--topo-order", "--format=%x01%H %P"),
            stdin=stdin,
        )
        if done.returncode != 0:  # cannot be looked through (an object removed): undone
            why = f"what could not be checked ({done.stderr.decode(errors='replace')[:120]})"
            tainted.update(dict.fromkeys(new.tips - old.tips, why))
        commits = _parse_log(done.stdout) if done.returncode == 0 else []
        for oid, parents, diffs in reversed(commits):  # oldest first
            why = _door_change(w, parents, diffs, before_index)
            if why is None:
                why = next((tainted[p] for p in parents if p in tainted), None)
            if why is not None:
                tainted[oid] = why
        if not tainted and not replaced:
            return []
        return _undo_refs(w, old, new, tainted, replaced)


Commit = tuple[str, list[str], list[dict[str, Entry | None]]]
"""(id, parents, per parent: changed path -> new entry, None when deleted)."""


def _parse_log(data: bytes) -> list[Commit]:
    out: list[Commit] = []
    for chunk in data.split(b"\x01")[1:]:
        head, _, rest = chunk.partition(b"\0")
        ids = head.decode().split()
        if not ids:
            continue
        diff: dict[str, Entry | None] = {}
        fields = rest.lstrip(b"\n").split(b"\0")
        for i in range(0, len(fields) - 1, 2):
            meta = fields[i].decode(errors="replace").lstrip("\n").split()
            if len(meta) < 5 or not meta[0].startswith(":"):
                continue
            path = os.fsdecode(fields[i + 1])
            diff[path] = None if meta[4].startswith("D") else (meta[1], meta[3])
        if out and out[-1][0] == ids[0]:
            out[-1][2].append(diff)  # ``-m``: the same merge against its next parent
        else:
            out.append((ids[0], ids[1:], [diff]))
    return out


def _door_change(
    w: Watched,
    parents: list[str],
    diffs: list[dict[str, Entry | None]],
    before_index: Callable[[], dict[str, list[str]]],
) -> str | None:
    """Why this commit puts something new at a door path, or None."""
    changed: dict[str, int] = {}
    entries: dict[str, Entry] = {}
    for diff in diffs:
        for path, entry in diff.items():
            if entry is not None and entry[0] != "160000":
                changed[path] = changed.get(path, 0) + 1
                entries[path] = entry
    for path, count in changed.items():
        if count < max(1, len(parents)):
            continue  # a merge took it from a parent as it was
        why = w.is_door(path)
        if why is None:
            continue
        entry = entries[path]
        if entry == _on_disk(w.worktree, path, len(entry[1]) == 64):
            continue
        staged = {tuple(e.split()[:2]) for e in before_index().get(path, [])}
        if entry in staged:
            continue
        return f"{path} ({why})"
    return None


def _tree_door(
    w: Watched, tree: str, before_index: Callable[[], dict[str, list[str]]]
) -> str | None:
    """Why a tree a ref names (``git tag v1 <tree>``; ``checkout v1 -- .`` writes it) holds
    something new at a door path, or None."""
    done = _git(w, "ls-tree", "-r", "-z", "--full-tree", tree)
    diff: dict[str, Entry | None] = {}
    for record in done.stdout.split(b"\0"):
        meta, tab, path = os.fsdecode(record).partition("\t")
        fields = meta.split()
        if tab and len(fields) == 3 and w.is_door(path) is not None:
            diff[path] = (fields[0], fields[2])
    return _door_change(w, [], [diff], before_index)


def _undo_refs(
    w: Watched, old: _Refs, new: _Refs, tainted: Mapping[str, str], replaced: list[str]
) -> list[str]:
    lines = [f"- new commits put {why} in place" for why in dict.fromkeys(tainted.values())]
    lines += [f"- {name} replaces objects on the host" for name in replaced]
    commands: list[str] = []
    for name, oid in sorted(new.refs.items()):
        if name == "HEAD":
            continue
        if oid in tainted or new.peeled.get(name, ("", ""))[1] in tainted or name in replaced:
            before = old.refs.get(name)
            if before is not None and before not in tainted:
                commands.append(f"update {name} {before}\n")
                lines.append(f"- {name} moved back to {before[:12]}")
            else:
                commands.append(f"delete {name}\n")
                lines.append(f"- {name} deleted")
    if commands:
        done = _git(w, "update-ref", "--stdin", stdin="".join(commands))
        if done.returncode != 0:
            lines.append(f"- git could not undo it: {done.stderr.decode(errors='replace')[:200]}")
    head, old_head = new.refs.get("HEAD", ""), old.refs.get("HEAD", "")
    if head != old_head and (
        head in tainted or (head.startswith("ref:") and head[4:].strip() not in _current_refs(w))
    ):
        _restore_head(w, old_head, tainted)
        lines.append("- HEAD put back where it was")
    for name, ids in _pseudo_refs(w.git_dir).items():
        if any(i in tainted for i in ids):
            (w.git_dir / name).unlink(missing_ok=True)
            lines.append(f"- {name} removed")
    lines += _drop_reflog(w, tainted)
    return lines


def _current_refs(w: Watched) -> set[str]:
    done = _git(w, "for-each-ref", "--format=%(refname)")
    return set(done.stdout.decode(errors="replace").split())


def _restore_head(w: Watched, old_head: str, tainted: Mapping[str, str]) -> None:
    if old_head.startswith("ref:"):
        _git(w, "symbolic-ref", "HEAD", old_head[4:].strip())
    elif old_head and old_head not in tainted:
        _git(w, "update-ref", "--no-deref", "HEAD", old_head)


def _drop_reflog(w: Watched, tainted: Mapping[str, str]) -> list[str]:
    dropped = 0
    for name, moved_to in _reflogs(w.git_dir).items():
        newest_first = list(reversed(moved_to))
        # Later entries first, so that the numbers of the ones left do not shift.
        selectors = [
            f"{name}@{{{n}}}"
            for n in reversed(range(len(newest_first)))
            if newest_first[n] in tainted
        ]
        if selectors:
            _git(w, "reflog", "delete", "--rewrite", *selectors)
            dropped += len(selectors)
    return [f"- {dropped} reflog entries naming those commits deleted"] if dropped else []


def _undo_index(w: Watched, before_index: Callable[[], dict[str, list[str]]]) -> list[str]:
    new = _index_entries(w, None, w.is_door)
    lines: list[str] = []
    fixes: list[str] = []
    for path, entries in sorted(new.items()):
        sha256 = len(entries[0].split()[1]) == 64
        disk = _on_disk(w.worktree, path, sha256)
        if all(tuple(e.split()[:2]) == disk for e in entries):
            continue  # what the work tree holds (the sandbox cannot write it)
        was = sorted(before_index().get(path, []))  # read only when needed
        if sorted(entries) == was:
            continue  # as it was
        fixes.append(f"0 {'0' * (64 if sha256 else 40)}\t{path}\n")
        fixes += [f"{e}\t{path}\n" for e in was]
        why = w.is_door(path)
        lines.append(
            f"- the index entry of {path} put back ({why}): a host checkout would write it"
        )
    if fixes:
        done = _git(w, "update-index", "--index-info", stdin="".join(fixes))
        if done.returncode != 0:
            lines.append(f"- git could not undo it: {done.stderr.decode(errors='replace')[:200]}")
    return lines
