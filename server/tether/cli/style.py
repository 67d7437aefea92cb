"""Colours and the spinner of the terminal output.

Colour is on only where a person looks at it: the stream is a terminal, ``NO_COLOR`` is
unset (https://no-color.org) and ``TERM`` is not ``dumb``. The spinner runs on stderr when
stderr is such a terminal, and is wiped before anything else is written there or on stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TextIO

from tether.cli.callenv import caller_env

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
FRAME_S = 0.08
CLEAR_LINE = "\r\x1b[K"


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def colour_wanted(stream: TextIO) -> bool:
    env = caller_env()
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    return is_terminal(stream)


class Style:
    """SGR sequences when ``enabled``, the plain text otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _sgr(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and text else text

    def dim(self, text: str) -> str:
        return self._sgr("2", text)

    def bold(self, text: str) -> str:
        return self._sgr("1", text)

    def red(self, text: str) -> str:
        return self._sgr("31", text)

    def green(self, text: str) -> str:
        return self._sgr("32", text)

    def yellow(self, text: str) -> str:
        return self._sgr("33", text)

    def cyan(self, text: str) -> str:
        return self._sgr("36", text)

    def magenta(self, text: str) -> str:
        return self._sgr("35", text)


class Spinner:
    """``⠋ Running tests…`` on one line of ``stream``, redrawn until paused or stopped."""

    def __init__(self, stream: TextIO, style: Style, *, enabled: bool) -> None:
        self._stream = stream
        self._style = style
        self.enabled = enabled
        self._label: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._shown = False

    def show(self, label: str) -> None:
        """Spin with ``label`` (the current step)."""
        if not self.enabled:
            return
        self._label = label
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._spin())

    def hide(self) -> None:
        """Wipe the line and stop drawing (call before writing anything else)."""
        self._label = None
        if self._shown:
            self._stream.write(CLEAR_LINE)
            self._stream.flush()
            self._shown = False

    async def _spin(self) -> None:
        frame = 0
        while self._label is not None:
            text = f"{FRAMES[frame % len(FRAMES)]} {self._label}…"
            self._stream.write(CLEAR_LINE + self._style.magenta(text))
            self._stream.flush()
            self._shown = True
            frame += 1
            await asyncio.sleep(FRAME_S)

    async def stop(self) -> None:
        self.hide()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
