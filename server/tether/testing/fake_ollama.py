"""A fake Ollama that plays a script through its native chat API, ``POST /api/chat``.

The Ollama flavour of the OpenAI-compatible fake (``fake_openai``; its discovery routes
``/api/show``, ``/api/generate``, ``/api/ps``, ``/api/tags``, ``/api/version`` are served
here too), answering the native API as Ollama does. Each rule names its evidence (Ollama's
source: ``api/types.go``, ``server/routes.go`` ``ChatHandler``, ``server/prompt.go``,
``llm/llama_server.go``; its docs: docs/api.md, docs/api/errors.mdx, docs/api/streaming.mdx):

* The body decodes into ``api.ChatRequest`` or is answered 400 ``{"error": "json: ..."}``:
  a message's ``content`` is a string, ``images`` base64 strings, a tool call's
  ``function.arguments`` an object (``ToolCallFunctionArguments``), ``options`` an object
  whose ``num_ctx`` is a number.
* A model it does not have: 404 ``{"error": "model 'x' not found"}`` (a name without a tag
  is ``x:latest``).
* ``think: true`` to a model without the ``thinking`` capability: 400 ``"x" does not
  support thinking``; ``tools`` to one without ``tools``: 400 ``<name> does not support
  tools`` (``capabilities``, as ``/api/show`` lists them).
* The context is ``options.num_ctx`` when sent (no more than the trained length,
  ``server/sched.go`` ``effectiveContext``), else the Modelfile's, else the server's own
  (``context_window``: what Ollama picks by memory or ``OLLAMA_CONTEXT_LENGTH``). A prompt
  of more than ``num_ctx - 1`` tokens (the token rule of ``openai_rules``):

  - with ``truncate`` unset or true (the default): the oldest messages are dropped, the
    system messages and the last one kept, until it fits (``chatPrompt``); if the last
    still does not fit, it is cut to ``num_ctx - (num_ctx - 5) // 2`` tokens
    (``contextShiftPromptLimit``), or with ``shift: false`` refused, 400 ``the prompt is
    longer than the context length currently available to the model; ...``. Either cut is
    silent to the client: the fake records it in ``truncated`` (a problem);
  - with ``truncate: false``: refused as llama-server refuses it, its error object relayed
    as Ollama's error text (400, ``request (N tokens) exceeds the available context size
    (M tokens), try increasing it``).

* Streaming (the default; ``stream: false`` for one object): ``application/x-ndjson``, one
  ``ChatResponse`` a line: text in ``message.content`` pieces, thinking in
  ``message.thinking``, each tool call whole (``id``, ``function.index``, ``name``,
  ``arguments``), then ``done: true`` with ``done_reason`` (``stop``, ``length``) and
  ``prompt_eval_count`` (the prompt it kept), ``eval_count``. An error after the stream
  began is a line ``{"error": "..."}`` (docs/api/errors.mdx).
* A message's ``images`` cost ``IMAGE_TOKENS`` (768) each, whatever their pixels, not the
  length of their base64: what Ollama's ``chatPrompt`` counts for each image of a model
  with a projector when it fits a prompt to ``num_ctx`` (``server/prompt.go``:
  ``imageNumTokens := 768``, "Clip images are represented as 768 tokens"); the text of the
  request is counted by ``openai_rules``'s rule without the images.
* ``counts_cached=False``: ``prompt_eval_count`` leaves out the prompt's front that the
  previous request shared (the KV cache's hit), as Ollama 0.30's llama-server backend did
  before ollama/ollama#16428 ("preserve Ollama's pre-0.30 full-context prompt_eval_count
  semantics") and older runners did too (ollama/ollama#3427, #5370): a low count with
  nothing cut.

Every chat request's ``options.num_ctx`` is kept in ``num_ctx`` (None: not sent); a request
without one ran with a context Tether did not choose, and is a problem.

Process mode: ``python -m tether.testing.fake_ollama --script FILE [--port N]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from tether.providers.script import (
    Script,
    ScriptRedactedThinking,
    ScriptText,
    ScriptThinking,
    ScriptToolUse,
    ScriptTurn,
    tool_use_id,
)
from tether.testing.fake_openai import FakeOpenAIServer
from tether.testing.openai_discovery import TRAINED_CONTEXT
from tether.testing.openai_rules import ServerError
from tether.testing.openai_rules import count_prompt_tokens as count_text_tokens
from tether.testing.serve import serve_main
from tether.testing.sse import Refusal, Reply

NDJSON = "application/x-ndjson"
KEEP = 5
"""``num_keep`` (4) plus the BOS token: what a cut keeps of the prompt's front."""
SHIFT_REFUSAL = (
    "the prompt is longer than the context length currently available to the model; "
    "shorten the prompt, adjust the context length in settings, or use a model with a longer "
    "context length"
)
MID_STREAM_ERROR = "an error was encountered while running the model"
FAULTS: dict[str, tuple[int, str]] = {
    "429": (429, "rate limit exceeded"),
    "529": (503, "server busy, please try again.  maximum pending requests exceeded"),
    "500": (500, "model runner has unexpectedly stopped"),
}
_PIECES = 3
IMAGE_TOKENS = 768
"""What Ollama counts for each image of a message (``server/prompt.go`` ``chatPrompt``)."""


@dataclass(frozen=True)
class Fit:
    """How a request meets its context: ``prompt`` tokens kept of ``sent``."""

    num_ctx: int
    sent: int
    prompt: int
    refusal: ServerError | None = None


class FakeOllamaServer(FakeOpenAIServer):
    route = "/api/chat"
    label = "fake Ollama API"

    def __init__(
        self,
        script: Script | list[Any] | dict[str, Any],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        context_window: int | None = None,
        served_model: str | None = None,
        capabilities: tuple[str, ...] = ("completion", "tools"),
        trained_context: int = TRAINED_CONTEXT,
        knows_truncate: bool = True,
        remote: bool = False,
        counts_cached: bool = True,
    ):
        super().__init__(
            script,
            host=host,
            port=port,
            flavor="ollama",
            context_window=context_window,
            served_model=served_model,
        )
        self.capabilities = capabilities
        self.trained_context = trained_context
        """The model's trained length: ``/api/show`` says it, and no context exceeds it."""
        self.remote = remote
        self.knows_truncate = knows_truncate
        """False: an Ollama before 0.12.6, which has no ``truncate`` or ``shift`` (Go's JSON
        decoder drops fields it does not know): it cuts whatever a request says."""
        self.num_ctx: list[int | None] = []
        """``options.num_ctx`` of every chat request (None: it sent none)."""
        self.counts_cached = counts_cached
        """False: ``prompt_eval_count`` leaves out what the previous request shared."""
        self._previous: list[Any] = []

    @property
    def base_url(self) -> str:
        return self.url  # Ollama's root: the native API is under /api

    # -- checks -----------------------------------------------------------------------

    def reject(self, body: dict[str, Any], headers: dict[str, str]) -> Refusal | None:
        error = self._check(body)
        fit = self.fit(body) if error is None else None
        error = error or (fit.refusal if fit is not None else None)
        if error is not None or fit is None:
            assert error is not None
            self.rejected.append(error)
            return error.status, {"error": error.message}
        self.prompt_tokens.append(fit.prompt)
        if fit.prompt < fit.sent:
            self.truncated.append(fit.sent)
        return None

    def _check(self, body: dict[str, Any]) -> ServerError | None:
        def fail(message: str, status: int = 400) -> ServerError:
            return ServerError(status, message, "ollama")

        problem = _decode_problem(body)
        if problem is not None:
            return fail(f"json: {problem}")
        model = str(body.get("model") or "")
        if not model:
            return fail("model is required")
        if self.served_model is not None and _tagged(model) != _tagged(self.served_model):
            return fail(f"model '{model}' not found", 404)
        if body.get("think") is True and "thinking" not in self.capabilities:
            return fail(f'"{model}" does not support thinking')
        if body.get("tools") and "tools" not in self.capabilities:
            return fail(f"registry.ollama.ai/library/{_tagged(model)} does not support tools")
        options = cast("dict[str, Any]", body.get("options") or {})
        self.num_ctx.append(options.get("num_ctx"))
        return None

    def fit(self, body: dict[str, Any]) -> Fit:
        """What Ollama makes of the request's prompt in its context (see the docstring)."""
        options = cast("dict[str, Any]", body.get("options") or {})
        asked = options.get("num_ctx")
        num_ctx = asked if isinstance(asked, int) and asked > 0 else self.context_window
        num_ctx = min(num_ctx, self.trained_context)
        sent = count_prompt_tokens(body)
        if sent <= num_ctx - 1:
            return Fit(num_ctx, sent, sent)
        known = self.knows_truncate
        if known and body.get("truncate") is False:
            return Fit(num_ctx, sent, sent, ServerError(400, exceeds(sent, num_ctx), "ollama"))
        kept = _drop_oldest(body, num_ctx)
        if kept <= num_ctx - 1:
            return Fit(num_ctx, sent, kept)
        if known and body.get("shift") is False:
            return Fit(num_ctx, sent, kept, ServerError(400, SHIFT_REFUSAL, "ollama"))
        return Fit(num_ctx, sent, num_ctx - max((num_ctx - KEEP) // 2, 1))

    def problems(self) -> list[str]:
        unsized = sum(1 for n in self.num_ctx if n is None)
        without = (
            [
                f"{unsized} chat request(s) sent no options.num_ctx: Ollama ran them with a "
                "context of its own choosing"
            ]
            if unsized
            else []
        )
        return [*super().problems(), *without]

    def error_body(self, status: int, message: str) -> Any:
        return {"error": message}

    # -- answers ----------------------------------------------------------------------

    def respond(self, index: int, turn: ScriptTurn, body: dict[str, Any], reply: Reply) -> None:
        fault = turn.fault
        self.loaded = not self.remote
        fit = self.fit(body)
        if fault == "prompt_too_long":
            over = max(fit.sent, fit.num_ctx)
            return reply.json(400, {"error": exceeds(over, fit.num_ctx)})
        if fault in FAULTS:
            status, message = FAULTS[fault]
            headers = {"retry-after": "0.01"} if status in (429, 503) else {}
            return reply.json(status, {"error": message}, headers)
        if any(isinstance(b, ScriptRedactedThinking) for b in turn.blocks):
            return self.fail(reply, 500, f"turn {index + 1}: Ollama has no redacted thinking")
        model = str(body.get("model"))
        prompt = fit.prompt if turn.usage.input_tokens is None else turn.usage.input_tokens
        if not self.counts_cached:
            prompt = max(prompt - self._cached(body), 1)
        counts = {"prompt_eval_count": prompt, "eval_count": turn.usage.output_tokens}
        if body.get("stream") is False:
            if fault == "overloaded_mid_stream":
                return reply.json(503, {"error": FAULTS["529"][1]}, {"retry-after": "0.01"})
            if fault is not None:
                return reply.cut()
            return reply.json(200, _whole(index, model, turn, counts))
        _stream(index, model, turn, counts, reply)

    def _cached(self, body: dict[str, Any]) -> int:
        """The tokens of the messages this request shares with the previous one's front."""
        messages = cast("list[Any]", body.get("messages") or [])
        shared = 0
        for before, now in zip(self._previous, messages, strict=False):
            if before != now:
                break
            shared += 1
        self._previous = messages
        if not shared:
            return 0
        return count_prompt_tokens({"messages": messages[:shared], "tools": body.get("tools")})


def exceeds(sent: int, num_ctx: int) -> str:
    """Ollama's error text for a prompt llama-server refused: its error object, as is
    (``llm/llama_server.go`` ``Completion``: ``statusErrorMessage`` of the body)."""
    detail = {
        "code": 400,
        "message": f"request ({sent} tokens) exceeds the available context size "
        f"({num_ctx} tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": sent,
        "n_ctx": num_ctx,
    }
    return json.dumps({"error": detail}, separators=(",", ":"))


def _stream(index: int, model: str, turn: ScriptTurn, counts: dict[str, int], reply: Reply) -> None:
    reply.start_events(NDJSON)
    fault = turn.fault
    calls = 0
    for b_index, block in enumerate(turn.blocks):
        if isinstance(block, ScriptText | ScriptThinking):
            field = "content" if isinstance(block, ScriptText) else "thinking"
            pieces = _split(block.text if isinstance(block, ScriptText) else block.thinking)
            if fault == "cut_mid_text" and isinstance(block, ScriptText):
                for piece in pieces[: max(len(pieces) // 2, 1)]:
                    reply.line(_line(model, {field: piece}))
                return reply.cut()
            for piece in pieces:
                reply.line(_line(model, {field: piece}))
        elif isinstance(block, ScriptToolUse):
            if fault == "cut_mid_tool_input":
                return reply.cut()  # a call comes whole: the line never came
            if _cut_off(turn, b_index):
                continue  # the parser never saw the call complete: nothing of it is sent
            call = _call(index, b_index, calls, block)
            reply.line(_line(model, {"tool_calls": [call]}))
            calls += 1
        if fault == "overloaded_mid_stream":
            reply.line({"error": MID_STREAM_ERROR})
            return reply.end()
    if fault is not None:
        return reply.cut()
    reply.line(_final(model, turn, counts))
    reply.end()


def _whole(index: int, model: str, turn: ScriptTurn, counts: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    message["content"] = "".join(b.text for b in turn.blocks if isinstance(b, ScriptText))
    thinking = "".join(b.thinking for b in turn.blocks if isinstance(b, ScriptThinking))
    if thinking:
        message["thinking"] = thinking
    calls = [
        _call(index, b_index, n, block)
        for n, (b_index, block) in enumerate(
            (i, b)
            for i, b in enumerate(turn.blocks)
            if isinstance(b, ScriptToolUse) and not _cut_off(turn, i)
        )
    ]
    if calls:
        message["tool_calls"] = calls
    return {**_final(model, turn, counts), "message": message}


def _line(model: str, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": model,
        "created_at": _now(),
        "message": {"role": "assistant", "content": "", **message},
        "done": False,
    }


def _final(model: str, turn: ScriptTurn, counts: dict[str, int]) -> dict[str, Any]:
    reason = "length" if turn.effective_stop_reason == "max_tokens" else "stop"
    return {
        "model": model,
        "created_at": _now(),
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": reason,
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_duration": 500_000,
        "eval_duration": 400_000,
        **counts,
    }


def _call(index: int, b_index: int, n: int, block: ScriptToolUse) -> dict[str, Any]:
    function = {"index": n, "name": block.name, "arguments": block.input}
    return {"id": block.id or tool_use_id(index, b_index), "function": function}


def _cut_off(turn: ScriptTurn, b_index: int) -> bool:
    """A tool call the length limit cut (the script's last block, stopped at max_tokens)."""
    return turn.effective_stop_reason == "max_tokens" and b_index == len(turn.blocks) - 1


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _split(text: str) -> list[str]:
    if not text:
        return [""]
    size = max(-(-len(text) // _PIECES), 1)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _tagged(model: str) -> str:
    return model if ":" in model.rsplit("/", 1)[-1] else f"{model}:latest"


def count_prompt_tokens(body: dict[str, Any]) -> int:
    """The request's prompt tokens as Ollama counts them: the text (without the images'
    base64) by the fakes' rule, and ``IMAGE_TOKENS`` per image."""
    images = 0
    messages: list[Any] = []
    for message in cast("list[Any]", body.get("messages") or []):
        if isinstance(message, dict) and "images" in message:
            fields = dict(cast("dict[str, Any]", message))
            found = fields.pop("images")
            images += len(cast("list[Any]", found)) if isinstance(found, list) else 0
            message = fields
        messages.append(message)
    text = count_text_tokens({"messages": messages, "tools": body.get("tools")})
    return text + IMAGE_TOKENS * images


def _drop_oldest(body: dict[str, Any], num_ctx: int) -> int:
    """The prompt's tokens once the oldest messages are dropped to fit (system messages and
    the last message are always kept: ``chatPrompt``)."""
    messages = cast("list[dict[str, Any]]", body.get("messages") or [])
    tools = body.get("tools")
    kept = count_prompt_tokens(body)
    for start in range(1, len(messages)):
        system = [m for m in messages[:start] if m.get("role") == "system"]
        kept = count_prompt_tokens({"messages": [*system, *messages[start:]], "tools": tools})
        if kept <= num_ctx - 1:
            return kept
    return kept


def _decode_problem(body: dict[str, Any]) -> str | None:
    """Where ``body`` does not decode into ``api.ChatRequest`` (None: it does)."""
    messages = body.get("messages")
    if messages is not None and not isinstance(messages, list):
        return "cannot unmarshal into Go struct field ChatRequest.messages of type []api.Message"
    for i, raw in enumerate(cast("list[Any]", messages or [])):
        if not isinstance(raw, dict):
            return f"messages[{i}]: cannot unmarshal into Go value of type api.Message"
        message = cast("dict[str, Any]", raw)
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            kind = type(content).__name__
            return f"cannot unmarshal {kind} into Go struct field Message.content of type string"
        images = message.get("images")
        if images is not None and not (
            isinstance(images, list) and all(isinstance(x, str) for x in cast("list[Any]", images))
        ):
            return "cannot unmarshal into Go struct field Message.images of type api.ImageData"
        for call in cast("list[Any]", message.get("tool_calls") or []):
            function = (
                cast("dict[str, Any]", call).get("function") if isinstance(call, dict) else None
            )
            arguments = cast("dict[str, Any]", function or {}).get("arguments")
            if not isinstance(function, dict) or not isinstance(arguments, dict | None):
                kind = type(arguments).__name__
                return (
                    f"cannot unmarshal {kind} into Go struct field "
                    "ToolCallFunction.messages.tool_calls.function.arguments of type object"
                )
    options = body.get("options")
    if options is not None and not isinstance(options, dict):
        return "cannot unmarshal into Go struct field ChatRequest.options of type map[string]any"
    num_ctx = cast("dict[str, Any]", options or {}).get("num_ctx")
    if num_ctx is not None and (isinstance(num_ctx, bool) or not isinstance(num_ctx, int | float)):
        return f"invalid int option 'num_ctx': {num_ctx!r}"
    return None


if __name__ == "__main__":
    raise SystemExit(serve_main(FakeOllamaServer))
