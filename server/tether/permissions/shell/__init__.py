"""Shell command analysis: the commands a Bash line would run, and what each would do."""

from tether.permissions.shell.analysis import (
    command_effects,
    is_read_only_command,
    is_read_only_simple,
    parse_command,
    parse_script,
)
from tether.permissions.shell.effects import Effects, effects
from tether.permissions.shell.model import Redirect, Script, SimpleCommand, Word

__all__ = [
    "Effects",
    "Redirect",
    "Script",
    "SimpleCommand",
    "Word",
    "command_effects",
    "effects",
    "is_read_only_command",
    "is_read_only_simple",
    "parse_command",
    "parse_script",
]
