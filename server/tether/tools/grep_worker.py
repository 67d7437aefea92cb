"""Grep without ripgrep, in a process of its own.

Python's ``re`` backtracks: a pattern such as ``(a+)+$`` over a line of forty ``a`` runs for
ever, holding the interpreter lock while it does, so no thread of the daemon could stop it
and the event loop itself would stall. The fallback search (``search_python``) therefore
runs in a child interpreter (``grep_child``): the turn's cancellation kills it, and so does
a time limit, with an error the model can act on. ``bench/tools.py`` measures what the
child costs against a thread.
"""

from __future__ import annotations

import asyncio
import json
import sys

from tether.errors import ToolError
from tether.tools.grep_child import hits_from, query_json
from tether.tools.grep_python import FileHits, GrepQuery

TIMEOUT_S = 60.0
"""Longest a fallback search may run (ripgrep, with no backtracking, needs no limit)."""
MAX_OUTPUT = 64 * 1024 * 1024


async def search_in_child(q: GrepQuery) -> list[FileHits]:
    """``search_python(q)`` in a child interpreter, killed when this call is cancelled or
    runs past ``TIMEOUT_S`` (``ToolError``)."""
    timeout = TIMEOUT_S
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tether.tools.grep_child",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(query_json(q)), timeout)
    except TimeoutError:
        raise ToolError(
            f"The search ran for more than {timeout:.0f} seconds and was stopped. Without "
            "ripgrep, Grep uses Python's regular expressions, which can backtrack for ever on "
            "nested repetition such as (a+)+: simplify the pattern, narrow the path, or install "
            "ripgrep."
        ) from None
    finally:
        if proc.returncode is None:  # cancelled or out of time
            proc.kill()
            await proc.wait()
    if len(out) > MAX_OUTPUT:
        raise ToolError("The search produced too much output. Narrow the pattern or path.")
    try:
        answer = json.loads(out)
    except ValueError:
        why = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ToolError(f"The search failed: {why[0]}") from None
    if "error" in answer:
        raise ToolError(answer["error"])
    return hits_from(answer["hits"])
