"""Command hooks with Claude Code's contract (PreToolUse, PostToolUse, UserPromptSubmit,
Stop, SubagentStop, PreCompact, SessionStart, SessionEnd)."""

from tether.hooks.command_hooks import CommandHooks

__all__ = ["CommandHooks"]
