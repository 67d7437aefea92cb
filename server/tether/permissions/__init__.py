"""Permissions: modes, rules, hooks and the sandbox, one pipeline around every tool call."""
