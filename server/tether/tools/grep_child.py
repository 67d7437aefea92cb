"""Grep without ripgrep, in the child interpreter ``grep_worker`` starts for each search.

The query comes in on stdin and the hits go out on stdout, as JSON (file names that are not
UTF-8 travel as JSON escapes of their surrogates). It imports only the search and the walk,
not the daemon: the child starts on every call, so its start-up is the cost of the fallback.

    python -m tether.tools.grep_child < query.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tether.errors import ToolError
from tether.tools.grep_python import FileHits, GrepLine, GrepQuery, search_python


def query_json(q: GrepQuery) -> bytes:
    return json.dumps(
        {
            "pattern": q.pattern,
            "root": str(q.root),
            "mode": q.mode,
            "before": q.before,
            "after": q.after,
            "ignore_case": q.ignore_case,
            "file_type": q.file_type,
            "globs": list(q.globs),
            "multiline": q.multiline,
        }
    ).encode()


def query_from(raw: dict[str, Any]) -> GrepQuery:
    return GrepQuery(
        pattern=raw["pattern"],
        root=Path(raw["root"]),
        mode=raw["mode"],
        before=raw["before"],
        after=raw["after"],
        ignore_case=raw["ignore_case"],
        file_type=raw["file_type"],
        globs=tuple(raw["globs"]),
        multiline=raw["multiline"],
    )


def hits_json(hits: list[FileHits]) -> list[Any]:
    return [
        [str(h.path), h.mtime, h.count, [[g.number, g.text, g.is_match] for g in h.lines]]
        for h in hits
    ]


def hits_from(raw: list[Any]) -> list[FileHits]:
    return [
        FileHits(
            Path(path), mtime, count, [GrepLine(n, text, is_match) for n, text, is_match in lines]
        )
        for path, mtime, count, lines in raw
    ]


def main() -> int:
    query = query_from(json.loads(sys.stdin.buffer.read()))
    try:
        answer: dict[str, Any] = {"hits": hits_json(search_python(query))}
    except ToolError as e:
        answer = {"error": str(e)}
    except OSError as e:
        answer = {"error": f"The search failed: {e.strerror or e}."}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
