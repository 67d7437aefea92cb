"""What the model is told when the gate refused something: what, why, and what it can do."""

from __future__ import annotations

from collections.abc import Sequence

from tether.sandbox.launch import Refusal

SHOWN = 8
VERBS = {
    "mkdir": "creating the directory",
    "mknod": "creating",
    "create": "creating",
    "write": "writing",
    "symlink": "creating the symlink",
    "link": "creating the link",
    "rename": "renaming onto",
    "lookup": "creating an entry in",
    "move": "moving",
    "error": "a call",
}
ADVICE = (
    "The sandbox never creates or replaces these: they hold configuration that git, the "
    "editor, direnv or the agent itself read or run on the host. Do not work around it. If "
    "the task really needs it, ask the user, or run the command again with "
    "dangerouslyDisableSandbox: true (the user is asked to approve it every time)."
)


def explain(refusals: Sequence[Refusal], more: int = 0) -> list[str]:
    """Notes for the Bash tool's result (none when nothing was refused)."""
    if not refusals and not more:
        return []
    lines = [f"- {VERBS.get(r.op, r.op)} {r.path}: {r.why}" for r in refusals[:SHOWN]]
    hidden = len(refusals) - SHOWN + more
    if hidden > 0:
        lines.append(f"- and {hidden} more")
    head = "The shell sandbox refused (Permission denied):"
    return ["\n".join([head, *lines, ADVICE])]


UNDONE_ADVICE = (
    "A door path is a file git, the editor, direnv or the agent read or run on the host; a "
    "host checkout, reset, stash or switch would have written what the command put there "
    "into the work tree. Do not work around it. To commit such a file, write it with the "
    "file tools (the user is asked), then stage and commit it."
)


def undone_note(lines: Sequence[str]) -> list[str]:
    """The note for what the sandbox undid in git after the command (``gitstore``)."""
    if not lines:
        return []
    head = "The shell sandbox undid what the command put at door paths in git:"
    return [
        "\n".join(
            [
                head,
                *lines[:SHOWN],
                *([f"- and {len(lines) - SHOWN} more"] if len(lines) > SHOWN else []),
                UNDONE_ADVICE,
            ]
        )
    ]
