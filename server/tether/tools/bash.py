"""Bash: run a shell command in the workspace, streaming its output to the editor.

The command runs in its own process group (see ``shell.py``) so a timeout or a cancelled turn
stops everything it started, and inside the shell sandbox (``ctx.config.shell_sandbox``)
unless the user approved running this exact command outside it. Long-running commands go
to the background as tasks that write to a file; TaskOutput reads it and TaskStop ends them.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tether import prompts
from tether.errors import ToolError
from tether.permissions.shell import is_read_only_command, parse_command
from tether.protocol.content import TerminalContent, TextToolContent, ToolContent
from tether.protocol.updates import ToolCallUpdate
from tether.tasks.registry import Task, TaskOutcome
from tether.tools.base import PermissionCheck, Tool, ToolResult, build_tool
from tether.tools.context import Confined, ToolContext
from tether.tools.shell import ShellResult, Wrap, run_shell, run_shell_to_file

# Exit status 1 from these means "no match" / "differs" / "false", an answer and not a failure.
_ANSWERING_COMMANDS = frozenset({"grep", "rg", "diff", "cmp", "test", "[", "find"})


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    command: str = Field(description="The command to run (bash syntax).")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description="Timeout in milliseconds (default 120000, at most 600000).",
    )
    description: str | None = Field(
        default=None,
        description="What the command does, in 5-10 words (shown to the user).",
    )
    run_in_background: bool = Field(
        default=False,
        description="Run in the background and return at once; read the output with "
        "TaskOutput and stop it with TaskStop.",
    )
    dangerously_disable_sandbox: bool = Field(
        default=False,
        alias="dangerouslyDisableSandbox",
        description="Run outside the shell sandbox (network, writes outside the workspace). "
        "The user is asked every time; use only when the sandbox blocks a needed command.",
    )


def _is_failure(command: str, exit_code: int) -> bool:
    if exit_code == 0:
        return False
    commands = parse_command(command) or []
    argv = commands[0].argv if len(commands) == 1 else ()
    return not (exit_code == 1 and argv and argv[0] in _ANSWERING_COMMANDS)


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g}s" if ms < 60_000 else f"{ms // 60_000}m {ms % 60_000 / 1000:g}s"


SANDBOX_SYMPTOMS = (
    "Read-only file system",
    "Device or resource busy",  # removing a protected entry (a mount point)
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "Could not resolve proxy",
)
SANDBOX_NOTE = (
    "This command ran in the shell sandbox: it has no direct network (HTTP, HTTPS and SOCKS "
    "go through the sandbox's proxy named in HTTP_PROXY, HTTPS_PROXY and ALL_PROXY, which "
    "allows hosts the user allowed; raw sockets, SSH and name lookups fail), and nothing "
    "outside the workspace (nor .git, .tether and editor settings inside it) is writable. If "
    "it must do that, run it again with dangerouslyDisableSandbox: true; the user will be "
    "asked to approve it."
)


def render_result(
    command: str,
    result: ShellResult,
    timeout_ms: int,
    *,
    sandboxed: bool = False,
    refused: Sequence[str] = (),
) -> ToolResult:
    """``refused``: what the sandbox refused the command, in words for the model."""
    body = result.output.rstrip() or "(no output)"
    code = result.exit_code
    terminal = TerminalContent(output=result.output, exit_code=code)
    # What the sandbox refused or undid is the user's to see too, under the output.
    display: list[ToolContent] = [terminal, *(TextToolContent(text=note) for note in refused)]
    # Claude Code's tool_response fields (hooks may hand a changed copy back), and ours.
    raw = {
        "stdout": result.output,
        "stderr": "",
        "interrupted": result.timed_out,
        "exit_code": code,
        "timed_out": result.timed_out,
    }
    notes: list[str] = list(refused)
    if sandboxed and code and not refused and any(s in result.output for s in SANDBOX_SYMPTOMS):
        notes.append(SANDBOX_NOTE)
    if result.stopped_stragglers:
        notes.append(
            "Background processes still holding the output were stopped after the command "
            "exited. Use run_in_background for long-running processes."
        )
    if result.timed_out:
        head = (
            f"Command timed out after {_seconds(timeout_ms)}; "
            "it and its child processes were stopped."
        )
        return ToolResult(f"{head}\n{body}", is_error=True, display=display, raw_output=raw)
    assert code is not None
    if code < 0:
        text = f"Command was killed by signal {-code}.\n{body}"
        return ToolResult(text, is_error=True, display=display, raw_output=raw)
    if _is_failure(command, code):
        text = "\n\n".join([f"Exit code {code}\n{body}", *notes])
        return ToolResult(text, is_error=True, display=display, raw_output=raw)
    tail = [f"Exit code {code}"] if code else []
    return ToolResult("\n\n".join([body, *tail, *notes]), display=display, raw_output=raw)


@contextlib.asynccontextmanager
async def _confined(
    inp: BashInput, ctx: ToolContext, wrap: Wrap | None
) -> AsyncGenerator[Wrap | None]:
    """The argv wrapper for this call: an explicit one (tests), else the sandbox's, unless
    the user approved running outside it (the permission pipeline always asks for that).
    The sandbox's layout is made on the session's tool threads, off the event loop."""
    sandbox = ctx.config.shell_sandbox
    if wrap is not None or inp.dangerously_disable_sandbox or not ctx.config.sandbox:
        yield wrap
    elif sandbox is None or not sandbox.active:
        yield None  # the permission pipeline had the user approve running unconfined
    else:
        network = ctx.network.for_command(inp.command) if ctx.network is not None else None
        caller = ctx.config.caller_env
        async with sandbox.confine(ctx.cwd, caller, network, threads=ctx.threads) as sandboxed:
            yield sandboxed


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(text)


def _start_background(inp: BashInput, ctx: ToolContext, wrap: Wrap | None) -> ToolResult:
    async def run(task: Task) -> TaskOutcome:
        async with _confined(inp, ctx, wrap) as confined:
            code = await run_shell_to_file(
                inp.command,
                cwd=ctx.cwd,
                output_path=task.output_path,
                wrap=confined,
                env=ctx.config.shell_env,
                caller=ctx.config.caller_env,
                pass_fds=confined.pass_fds if isinstance(confined, Confined) else (),
                started=confined.started if isinstance(confined, Confined) else None,
            )
            # git's state looked at off the loop (after a commit, git itself runs)
            refused = (
                await ctx.threads.run(confined.notes) if isinstance(confined, Confined) else []
            )
            if refused:
                text = "\n" + "\n\n".join(refused) + "\n"
                await ctx.threads.run(_append, task.output_path, text)
        status = "completed" if code == 0 else "failed"
        return TaskOutcome(status=status, summary=f"exited with code {code}", exit_code=code)

    try:
        task = ctx.tasks.start(
            kind="bash",
            description=inp.description or inp.command[:120],
            tool_use_id=ctx.tool_use_id,
            run=run,
        )
    except RuntimeError as e:
        raise ToolError(str(e))
    return ToolResult(
        f"Command running in background with ID: {task.id}\n"
        f"Output is being written to: {task.output_path}\n"
        "Read it with TaskOutput and stop the command with TaskStop.",
        raw_output={"task_id": task.id, "output_path": str(task.output_path)},
    )


def make_bash_tool(wrap: Wrap | None = None) -> Tool[BashInput]:
    """The Bash tool; an explicit ``wrap`` replaces the configured sandbox (tests)."""

    async def call(inp: BashInput, ctx: ToolContext) -> ToolResult:
        if not inp.command.strip():
            raise ToolError("The command is empty.")
        if inp.run_in_background:
            return _start_background(inp, ctx, wrap)
        cfg = ctx.config
        timeout_ms = min(inp.timeout or cfg.bash_default_timeout_ms, cfg.bash_max_timeout_ms)

        def stream(text: str) -> None:
            update = ToolCallUpdate(
                tool_call_id=ctx.tool_use_id, content=[TerminalContent(output=text)]
            )
            ctx.emit(update)

        try:
            async with _confined(inp, ctx, wrap) as confined:
                sandboxed = confined is not None and wrap is None
                session = confined if isinstance(confined, Confined) else None
                result = await run_shell(
                    inp.command,
                    cwd=ctx.cwd,
                    timeout_s=timeout_ms / 1000,
                    max_output_chars=cfg.bash_max_output_chars,
                    on_output=stream,
                    wrap=confined,
                    env=cfg.shell_env,
                    caller=cfg.caller_env,
                    prepared=session.prepared if session else None,
                    pass_fds=session.pass_fds if session else (),
                    started=session.started if session else None,
                )
                # git's state looked at off the loop (after a commit, git itself runs)
                refused = await ctx.threads.run(session.notes) if session else []
        except OSError as e:  # no bash, or the sandbox wrapper is missing
            raise ToolError(f"Could not start the shell: {e}.")
        return render_result(inp.command, result, timeout_ms, sandboxed=sandboxed, refused=refused)

    return build_tool(
        name="Bash",
        description=prompts.load("tools/Bash.md"),
        input_model=BashInput,
        call=call,
        kind="execute",
        is_read_only=lambda inp: is_read_only_command(inp.command),
        is_concurrency_safe=lambda inp: is_read_only_command(inp.command),
        check_permissions=_check_permissions,
        title=lambda inp: inp.description or inp.command,
        rule_content=lambda inp: inp.command,
    )


async def _check_permissions(inp: BashInput, _ctx: ToolContext) -> PermissionCheck:
    # The decision is permissions.bash_policy's: a read-only command may still read a file
    # outside the workspace, which only a look at its paths can tell.
    return PermissionCheck("passthrough")


BASH_TOOL = make_bash_tool()
