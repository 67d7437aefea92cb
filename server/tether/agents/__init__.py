"""Subagents: the Agent tool, agent definitions, and spawning child engines."""
