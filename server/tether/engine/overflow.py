"""A turn and its window: no request is sent that Tether's own count says cannot fit, a
prompt the server cut is noticed, and "the prompt is too long" is met by compacting and
retrying while that helps.

* Before each request (``ensure_fit``): the window is asked of the server where it reports
  one; a context over the window (less a little room for the reply) is compacted first,
  whatever the thresholds said; when even that cannot make it fit (the system prompt and
  tools alone may not), the turn stops with the numbers instead of sending a request the
  server would refuse or, worse, cut silently (Ollama does).
* After a response (``counted``): a server that counted far fewer prompt tokens than were
  sent has cut the prompt. Its count is not the context's size (the gauge is not anchored
  to it), the window is asked again, and until the server says, the thresholds stay below
  the size that was cut.
* An empty answer where the API promises a message (``empty``): to a request larger than
  any the server answered, it is taken as a refusal that names no window (LM Studio's GGUF
  runner and LiteLLM proxies answer an over-long prompt so); otherwise it is an error.
* On a refusal (``refused``): the provider has already taken the window the refusal named
  (``providers/windows``); a refusal that names none still bounds it
  (``Compactor.refused``). A refusal that counted the reply's ``max_tokens`` against the
  window with a prompt that fits is retried with a smaller ``max_tokens``, and from then on
  every request leaves the reply only the room the window has. Otherwise the compaction
  ladder runs again (results cut to the window's budget, old results cleared, then a
  summary) and the request is retried, as often as each round makes the context smaller.
  The turn stops, saying so in numbers, when a compaction cannot make it smaller, when what
  is left cannot fit the window, or when a retry is refused at no smaller size than the
  request before it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from tether.context.compaction import Compactor, Conversation, Reduced
from tether.core.messages import Message
from tether.engine.transitions import CompactRetry, OutputLowered, Step, Terminal
from tether.engine.usage import UsageMeter
from tether.errors import EmptyAnswerError, ModelError, PromptTooLongError
from tether.protocol.updates import Notice, SessionUpdate
from tether.providers.base import TokenUsage

Emit = Callable[[SessionUpdate], None]
MIN_OUTPUT = 1_024
"""The room for a reply a request is never sent with less of (less in a tiny window)."""
CUT_SHARE = 0.5
"""A server that counts less than this share of the prompt Tether sent (by Tether's
estimate, which is never that far off on a whole request) has cut it."""
CUT_MIN_TOKENS = 1_000
"""Below this many tokens sent, a low count is an estimate's noise, not a cut."""
Counted = Literal["size", "partial", "cut"]
"""What a response's prompt count is: the context's size; less than that with nothing cut
(a server that refuses rather than cuts, leaving cached tokens out of the count); or a
sign that the server cut the prompt."""


def reply_room(window: int) -> int:
    """Room a request leaves for the reply: ``MIN_OUTPUT``, at most an eighth of the window."""
    return min(MIN_OUTPUT, window // 8)


class OverflowRecovery:
    def __init__(self, compactor: Compactor, conversation: Conversation, meter: UsageMeter):
        self.compactor = compactor
        self.conversation = conversation
        self.meter = meter
        self.refusals = 0
        """Requests of this turn the API refused as too long."""
        self._refused_size: int | None = None
        """The size of the last refused request, until a request is accepted."""
        self._lowered = False
        """The last refusal was met by a smaller ``max_tokens``, not a compaction."""
        self._retried = False
        """The provider was asked to set a learned window aside (once a turn)."""

    def accepted(self, size: int) -> None:
        """The server answered a request of ``size`` tokens."""
        self._refused_size = None
        self._lowered = False
        self.compactor.answered = max(self.compactor.answered, size)

    # -- before a request ----------------------------------------------------------------

    async def ensure_fit(self, turn_id: str, emit: Emit) -> Terminal | None:
        """Compact a context that does not fit the window; a Terminal when it cannot fit."""
        compactor, conversation = self.compactor, self.conversation
        window = compactor.window(conversation)
        room = reply_room(window)
        size = compactor.context_tokens(conversation)
        if size + room <= window:
            return None
        if conversation.provider.limits.learned and not self._retried:
            # A window an earlier session learned may be out of date (the server restarted
            # with more) and this one cannot say: the provider sets it aside for one try.
            self._retried = True
            await conversation.provider.discover_window(again=True)
            window = compactor.window(conversation)
            room = reply_room(window)
            self.meter.context_window = window
            if size + room <= window:
                return None
        try:
            reduced = await compactor.shrink(conversation, turn_id, emit, "auto")
        except ModelError as e:
            return Terminal(
                "prompt_too_long",
                f"The request does not fit the model's window (about {size} tokens for "
                f"{window}) and compaction failed: {e}",
            )
        self.meter.context_window = compactor.window(conversation)
        if reduced.after + room <= reduced.window:
            return None
        return Terminal(
            "prompt_too_long", self._cannot_fit("The request cannot fit", reduced, room)
        )

    def max_tokens(self, wanted: int) -> int:
        """``wanted``, or less where the window bounds prompt and reply together and the
        prompt leaves less room."""
        compactor, conversation = self.compactor, self.conversation
        if not compactor.output_counts:
            return wanted
        window = compactor.window(conversation)
        left = window - compactor.context_tokens(conversation) - max(64, window // 100)
        return max(min(wanted, left), reply_room(window))

    # -- after a response ----------------------------------------------------------------

    def counted(self, sent: int, usage: TokenUsage, emit: Emit) -> Counted:
        """The server counted ``usage`` for a request Tether estimated at ``sent`` tokens:
        "cut" when that count is far below the estimate from a server that may cut the
        prompt (the user hears of it); "partial" when the server refuses rather than cuts,
        so a low count left cached tokens out; either way it is not the context's size."""
        counted = usage.context_tokens
        if counted <= 0 or sent < CUT_MIN_TOKENS or counted >= sent * CUT_SHARE:
            return "size"
        limits = self.conversation.provider.limits
        if limits.refuses_over_window:
            return "partial"
        compactor, conversation = self.compactor, self.conversation
        scaled = round(sent * (compactor.gauge.ratio if compactor.gauge else 1.0))
        compactor.cut_by_server(conversation, scaled)
        self.meter.context_window = compactor.window(conversation)
        setting = f" ({limits.window_setting})" if limits.window_setting else ""
        emit(
            Notice(
                level="warning",
                message=f"The model server counted {counted} tokens of a prompt of about "
                f"{sent}: it cut the prompt to fit a smaller window than it reported. Asking "
                "it for its window again; the context is compacted to fit. Its window is "
                f"set on the server{setting}.",
            )
        )
        return "cut"

    # -- on a refusal --------------------------------------------------------------------

    async def refused(self, error: PromptTooLongError, turn_id: str, emit: Emit) -> Step:
        self.refusals += 1
        compactor, conversation = self.compactor, self.conversation
        size = error.tokens or compactor.context_tokens(conversation)
        previous, self._refused_size = self._refused_size, size
        lowered, self._lowered = self._lowered, False
        if previous is not None and size >= previous and not lowered:
            return Terminal(
                "prompt_too_long",
                f"{error}. Compaction did not make the request smaller ({previous} tokens "
                f"refused before, {size} now)",
            )
        compactor.refused(conversation, error.tokens, error.limit)
        self.meter.context_window = compactor.window(conversation)
        if error.output is not None:
            compactor.output_counts = True
            if error.tokens and error.limit and not lowered:
                room = error.limit - error.tokens
                if room >= reply_room(error.limit) and error.output > room:
                    self._lowered = True
                    return OutputLowered(self.max_tokens(error.output))
        try:
            reduced = await compactor.shrink(conversation, turn_id, emit, "reactive")
        except ModelError as e:
            return Terminal("prompt_too_long", f"{error}; compaction failed too: {e}")
        if reduced.after >= reduced.before or reduced.after > reduced.window:
            return Terminal(
                "prompt_too_long",
                self._cannot_fit(f"{error}. The context cannot be made to fit", reduced),
            )
        return CompactRetry()

    async def empty(self, error: EmptyAnswerError, turn_id: str, emit: Emit) -> Step:
        """The server answered with nothing where its API promises a message. Larger than
        any request it answered before, that is how some servers say the prompt is over
        their window: met like a refusal that names none. Otherwise it is an error."""
        compactor, conversation = self.compactor, self.conversation
        size = compactor.context_tokens(conversation)
        if size <= compactor.answered:
            return Terminal(
                "model_error",
                f"{error}. The request (about {size} tokens) was no larger than others it "
                "answered, so it is not a full window; the server may be failing.",
            )
        emit(
            Notice(
                level="warning",
                message=f"{error}. The request (about {size} tokens) is larger than any it "
                "answered before: taking that as a window it does not report, and compacting.",
            )
        )
        step = await self.refused(PromptTooLongError(str(error)), turn_id, emit)
        if isinstance(step, Terminal) and step.reason == "prompt_too_long":
            return Terminal(
                "model_error",
                f"{step.message}. If the server did not mean a full window, it may be failing.",
            )
        return step

    def _cannot_fit(self, lead: str, reduced: Reduced, room: int = 0) -> str:
        conversation = self.conversation
        limits = conversation.provider.limits
        reply = f", with {room} left for the reply" if room else ""
        size = f"about {reduced.after} tokens"
        if reduced.after < reduced.before:
            size += f" after compaction (from {reduced.before})"
        else:
            size += " (nothing left to compact)"
        text = (
            f"{lead}: {size} for a window of {reduced.window} tokens{reply}; the system "
            f"prompt and tools take about {reduced.prefix}."
        )
        prompt = _prompt(conversation.messages)
        own = self.compactor.counter.message(prompt) if prompt is not None else 0
        fixed = reduced.prefix + room
        if fixed <= reduced.window < fixed + own:  # the message is what does not fit
            text += (
                f" Your message alone takes about {own}: attach its text as a file instead "
                "(the model reads a file in parts), or shorten it."
            )
        else:
            text += " Fewer tools (MCP servers) leave more room."
        learned = f" {limits.learned}." if limits.learned else ""
        if limits.window_setting:
            return f"{text}{learned} A larger window: {limits.window_setting}."
        return f"{text}{learned} The model's window is fixed by its provider."


def _prompt(messages: list[Message]) -> Message | None:
    """The user's latest message of their own (not tool results)."""
    for message in reversed(messages):
        if message.role == "user" and not message.tool_results:
            return message
    return None
