"""Tether's error planes.

There are three, and each error belongs to exactly one of them::

    1. Wire errors          -> a JSON-RPC error object with a fixed code (tether.lsp.errors).
                               Bad params, unknown sessions, unknown methods, cancellation.
    2. Tool failures        -> an ``is_error`` tool result the model reads and can act on.
                               Raised inside tools as ``ToolError``; never leave the loop.
    3. Programmer errors    -> ordinary exceptions. They crash tests and are reported, never
                               swallowed silently.

Model-provider faults sit between (2) and (3): ``ModelError`` ends a turn with the terminal
reason ``model_error`` (or ``prompt_too_long``) and a message the user sees; the session
stays usable.

    TetherError
    ├── ToolError                 tool failure, rendered to the model
    ├── ModelError                provider could not produce a response
    │   ├── PromptTooLongError    the request exceeds the model's context window
    │   └── ScriptError           the scripted provider was called unexpectedly
    ├── SessionError              unknown or unusable session (wire: -32602)
    │   └── TranscriptWriteError  the session file cannot be written (the turn stops)
    └── ConfigError               bad configuration the user must fix
"""

from __future__ import annotations


class TetherError(Exception):
    """Base of every error Tether raises on purpose."""


class ToolError(TetherError):
    """A tool failed in a way the model should hear about (becomes an is_error result)."""


class ModelError(TetherError):
    """The model provider could not produce a response (after retries)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class PromptTooLongError(ModelError):
    """The request does not fit in the model's context window. ``tokens`` and ``limit`` are
    the request's size and the window when the refusal named them (``providers/overflow``);
    ``output`` the output tokens it counted against the window with the prompt, when it did
    (then a smaller ``max_tokens`` may be all it takes)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        tokens: int | None = None,
        limit: int | None = None,
        output: int | None = None,
    ):
        super().__init__(message, status=status)
        self.tokens = tokens
        self.limit = limit
        self.output = output


class EmptyAnswerError(ModelError):
    """The server answered a request that promised content (a chat completion that
    stopped by itself) with none at all: no text, no reasoning, no tool call. Some servers
    do that instead of refusing a prompt over their window (LM Studio's GGUF runner, a
    LiteLLM proxy). ``tokens``: the prompt tokens the server counted (None: not reported)."""

    def __init__(self, message: str, *, tokens: int | None = None):
        super().__init__(message)
        self.tokens = tokens


class ScriptError(ModelError):
    """The scripted provider was called more often than its script allows, or not enough."""


class SessionError(TetherError):
    """A session id is unknown or the session cannot be used."""


class TranscriptWriteError(SessionError):
    """The session file could not be written (after retries); what was not written is kept
    in memory and written by the next flush that succeeds."""


class ConfigError(TetherError):
    """Configuration the user has to fix (bad model spec, missing file, ...)."""
