"""The shell sandbox: bubblewrap around every Bash command (Linux)."""

from tether.sandbox.bwrap import Probe, SandboxPolicy, bwrap_argv, probe
from tether.sandbox.shell_sandbox import BwrapSandbox

__all__ = ["BwrapSandbox", "Probe", "SandboxPolicy", "bwrap_argv", "probe"]
