"""Files changed outside the agent: one observer for every session, one watch per directory,
and a change reaches only the sessions that read that file."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tether.context.watcher import ChangeWatcher, DirectoryEvents
from tether.editor.port import Document
from tether.tools.context import FileState


def read(files: FileState, path: Path) -> None:
    files.record(Document(path=path, text=path.read_text(encoding="utf-8")))


async def settled(watchers: list[ChangeWatcher], files: list[FileState]) -> None:
    """Until every watcher saw its event (bounded)."""
    deadline = time.monotonic() + 10
    while not all(w.dirty(f) for w, f in zip(watchers, files, strict=True)):
        assert time.monotonic() < deadline, "no event reached a watcher in 10 s"
        await asyncio.sleep(0.01)


async def test_sessions_share_one_watch_and_hear_only_of_their_files(tmp_path: Path) -> None:
    mine, theirs, other = tmp_path / "mine.py", tmp_path / "theirs.py", tmp_path / "other.py"
    for path in (mine, theirs, other):
        path.write_text("x = 1\n", encoding="utf-8")
    events = DirectoryEvents()
    a, b = ChangeWatcher(events), ChangeWatcher(events)
    files_a, files_b = FileState(), FileState()
    read(files_a, mine)
    read(files_b, theirs)
    a.follow(files_a.paths())
    b.follow(files_b.paths())
    assert len(events._directories) == 1  # pyright: ignore[reportPrivateUsage]

    other.write_text("x = 2\n", encoding="utf-8")  # read by nobody
    mine.write_text("x = 2\n", encoding="utf-8")
    theirs.write_text("x = 3\n", encoding="utf-8")
    await settled([a, b], [files_a, files_b])
    assert a.changed_since_read(files_a) == [mine]
    assert b.changed_since_read(files_b) == [theirs]
    # Reported once: a late event of the same write (inotify gives several) finds nothing new.
    assert a.changed_since_read(files_a) == []

    a.close()
    assert len(events._directories) == 1  # pyright: ignore[reportPrivateUsage]
    b.close()
    assert events._directories == {}  # pyright: ignore[reportPrivateUsage]


async def test_the_agents_own_write_is_no_change(tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text("a\n", encoding="utf-8")
    watcher, files = ChangeWatcher(DirectoryEvents()), FileState()
    read(files, path)
    watcher.follow(files.paths())
    path.write_text("b\n", encoding="utf-8")
    files.record(Document(path=path, text="b\n"))  # what an Edit records
    await settled([watcher], [files])
    assert watcher.changed_since_read(files) == []
    watcher.close()


async def test_a_watch_set_up_in_a_thread_after_its_session_closed_is_not_left(
    tmp_path: Path,
) -> None:
    """The turn sets up watches in a thread; a session closed meanwhile (the thread goes on
    after its turn was cancelled) leaves no watch behind."""
    path = tmp_path / "late.py"
    path.write_text("x = 1\n", encoding="utf-8")
    events = DirectoryEvents()
    watcher, files = ChangeWatcher(events), FileState()
    read(files, path)
    assert watcher.unfollowed(files.paths()) == {path}
    watcher.close()
    await asyncio.to_thread(watcher.follow, files.paths())
    assert events._directories == {}  # pyright: ignore[reportPrivateUsage]


async def test_a_write_reaches_only_the_sessions_following_that_file(tmp_path: Path) -> None:
    """Sessions whose files share a folder are not each handed every write in it (per write,
    work growing with the number of sessions)."""
    events = DirectoryEvents()
    paths = [tmp_path / f"s{n}.py" for n in range(20)]
    watchers = [ChangeWatcher(events) for _ in paths]
    states = [FileState() for _ in paths]
    for path, files in zip(paths, states, strict=True):
        path.write_text("x = 1\n", encoding="utf-8")
        read(files, path)
    for watcher, files in zip(watchers, states, strict=True):
        watcher.follow(files.paths())
    paths[3].write_text("x = 2\n", encoding="utf-8")
    await settled([watchers[3]], [states[3]])
    handed = [w for w in watchers if w._dirty]  # pyright: ignore[reportPrivateUsage]
    assert handed == [watchers[3]]
    for watcher in watchers:
        watcher.close()
    assert events._directories == {} and events._files == {}  # pyright: ignore[reportPrivateUsage]
