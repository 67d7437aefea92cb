"""Ask the user, once, whether a workspace's own configuration may run things.

Front doors that implement ``editor.port.TrustDialog`` get a proper dialog. The others
(or wrappers around them) are asked through the permission question every front door
already answers, phrased as a call of a pseudo-tool ``TrustWorkspace``; "allow" means yes.
A failing or cancelled dialog means no: untrusted is the safe state.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from tether.editor.port import Editor, PermissionRequest, TrustDialog
from tether.permissions.display import visible
from tether.protocol.content import TextToolContent

log = logging.getLogger(__name__)


def find_trust_dialog(editor: Any) -> TrustDialog | None:
    """The editor, or an editor it wraps (``.inner``), that can ask the trust question."""
    for _ in range(4):
        if editor is None:
            return None
        if callable(getattr(editor, "trust_workspace", None)):
            return editor
        editor = getattr(editor, "inner", None)
    return None


async def ask_trust(editor: Editor, root: Path, withheld: list[str], session_id: str) -> bool:
    try:
        dialog = find_trust_dialog(editor)
        if dialog is not None:
            return await dialog.trust_workspace(root, withheld)
        listing = "\n".join(f"- {visible(item)}" for item in withheld)
        request = PermissionRequest(
            session_id=session_id,
            tool_call_id=f"trust-{session_id}",
            tool_name="TrustWorkspace",
            title=f"Trust the workspace {visible(str(root))} and run its configuration",
            tool_kind="other",
            raw_input={"workspace": str(root), "withheld": withheld},
            content=[TextToolContent(text=f"The workspace configuration wants to run:\n{listing}")],
        )
        reply = await editor.ask_permission(request)
        return reply.answer in ("allow_once", "allow_always")
    except asyncio.CancelledError:
        raise
    except Exception as e:
        log.warning("the trust question failed (%s); the workspace stays untrusted", e)
        return False
