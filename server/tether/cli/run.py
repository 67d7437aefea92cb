"""Print mode with a text prompt: ``tether -p PROMPT`` / ``tether run PROMPT``.

One turn for the prompt, then a turn for each batch of background tasks that finishes
(Ctrl+C stops them), shown by the front end ``--output-format`` picks. The exit code is 0
when the last turn ended normally, 1 when it did not, 2 when the command line or the
configuration is wrong (nothing ran).
"""

from __future__ import annotations

import sys

from tether.cli.driver import OpenRequest, PermissionAsker, SessionDriver, TurnOutcome
from tether.cli.flags import PrintOptions, UsageError
from tether.cli.permission_tool import mcp_permission_asker
from tether.cli.render import (
    Answerer,
    FrontEnd,
    JsonResultRenderer,
    StreamJsonRenderer,
    TetherJsonRenderer,
    TextRenderer,
    json_lines,
    talkative,
)
from tether.cli.stream_json import StreamJsonEncoder
from tether.cli.style import Spinner
from tether.cli.terminal import TerminalAsker
from tether.protocol.content import TextContent

EMPTY_PROMPT = (
    "no prompt: give it as an argument (tether -p 'fix the tests') or on stdin "
    "(echo 'fix the tests' | tether -p)"
)


def read_prompt(options: PrintOptions) -> tuple[str, bool]:
    """The prompt, and whether it came from stdin (which then cannot answer questions)."""
    if options.prompt and options.prompt != "-":
        return options.prompt, False
    if sys.stdin.isatty():
        raise UsageError(EMPTY_PROMPT)
    text = sys.stdin.read()
    if not text.strip():
        raise UsageError(EMPTY_PROMPT)
    return text, True


def front_end(options: PrintOptions, answerer: Answerer = "you") -> FrontEnd:
    write = json_lines(sys.stdout)
    if options.output_format == "json":
        return JsonResultRenderer(write)
    if options.output_format == "stream-json":
        return StreamJsonRenderer(StreamJsonEncoder(write, partial=options.partial))
    if options.output_format == "tether-json":
        return TetherJsonRenderer(write)
    return TextRenderer(verbose=options.verbose, answerer=answerer)


def open_request(
    options: PrintOptions, ask: PermissionAsker | None, asker: TerminalAsker | None
) -> OpenRequest:
    return OpenRequest(
        cwd=options.cwd,
        resume=options.resume,
        continue_latest=options.continue_latest,
        session_id=options.session_id,
        recover=options.recover,
        model=options.model,
        fallback_model=options.fallback_model,
        mode=options.mode,
        allow=options.allow,
        deny=options.deny,
        builtin_tools=options.builtin_tools,
        max_turns=options.max_turns,
        max_budget_usd=options.max_budget_usd,
        system_prompt=options.system_prompt,
        append_system_prompt=options.append_system_prompt,
        settings=options.settings,
        mcp_servers=options.mcp_servers,
        strict_mcp=options.strict_mcp,
        ask=ask,
        trust=asker.trust if asker is not None else None,
        fork=options.fork,
    )


def exit_code(outcome: TurnOutcome) -> int:
    """0 for a turn that ended as it should (a hook stopping it counts: it did its job)."""
    return 0 if outcome.stop_reason == "end_turn" or outcome.reason == "hook_stopped" else 1


async def run_print(options: PrintOptions, driver: SessionDriver) -> int:
    prompt, from_stdin = read_prompt(options)
    interactive = sys.stdin.isatty() and not from_stdin
    answerer = options.permission_prompt_tool or ("you" if interactive else "nobody")
    shown = front_end(options, answerer)
    spinner = shown.spinner if isinstance(shown, TextRenderer) else None
    talk = talkative(sys.stderr, options.verbose)
    asker = TerminalAsker(interactive, spinner=spinner, talk=talk)
    ask: PermissionAsker = asker
    if options.permission_prompt_tool is not None:
        ask = mcp_permission_asker(options.permission_prompt_tool, driver)
    facts = await driver.open(open_request(options, ask, asker))
    unsubscribe = driver.subscribe(shown.update)
    try:
        shown.start(facts)
        outcome = await driver.prompt([TextContent(text=prompt)])
        shown.finish(outcome)
        code = exit_code(outcome)
        code = await _follow_background(driver, shown, code, spinner, talk)
    finally:
        unsubscribe()
        await shown.aclose()
        problems = await driver.close()
    for problem in problems:
        print(f"[tether] error: {problem}", file=sys.stderr)
    return 1 if problems else code


async def _follow_background(
    driver: SessionDriver, shown: FrontEnd, code: int, spinner: Spinner | None, talk: bool
) -> int:
    """Do not exit while background tasks of the session run: wait for them and answer
    their notifications with turns of their own."""

    def waiting(count: int) -> None:
        if spinner is not None and spinner.enabled:
            spinner.show(f"Waiting for {count} background task(s)")
        elif talk:
            print(f"[tether] waiting for {count} background task(s)...", file=sys.stderr)

    while await driver.background_pending(waiting):
        shown.start(driver.facts())
        outcome = await driver.answer_background()
        if outcome is None:
            continue
        shown.finish(outcome)
        code = exit_code(outcome)
    return code
