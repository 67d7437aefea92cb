"""The first bytes of every line this Tether writes, read without parsing JSON.

``dump_record`` writes each record's fields in one order: ``{"v":1,"uuid":…,"parentUuid":…,
"sessionId":…,"timestamp":…,"turnId":…,"type":…``. One pattern match tells a line's uuid,
parent, turn and type; the live read (``live.py``) indexes a whole file this way, and the
whole read (``load.py``) uses it to tell what a line it cannot parse was.
"""

from __future__ import annotations

import re

from tether.transcript.records import SCHEMA_VERSION

PREFIX = re.compile(
    rb'\{"v":%d,"uuid"'
    % SCHEMA_VERSION
    + rb':"([^"\\]+)",(?:"parentUuid":"([^"\\]+)",)?"sessionId":"[^"\\]*",'
    rb'"timestamp":"[^"\\]*",(?:"turnId":"([^"\\]+)",)?"type":"([a-z_]+)"'
)
OUTSIDE_CHAIN = frozenset({b"meta", b"progress"})
"""Record types no conversation chain runs through."""


def line_type(line: bytes) -> bytes | None:
    """The record type a line's intact prefix names, or None."""
    found = PREFIX.match(line)
    return found[4] if found is not None else None
