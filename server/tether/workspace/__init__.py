"""One Workspace per workspace root: settings, rules, sessions and their engines."""

from tether.workspace.workspace import Workspace

__all__ = ["Workspace"]
