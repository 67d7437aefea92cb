"""The script format shared by the scripted provider and the fake API servers.

A script is a JSON list of assistant turns (or ``{"turns": [...]}``). Each turn is either a
plain list of blocks or an object::

    [{"type": "text", "text": "Looking."},
     {"type": "tool_use", "name": "Read", "input": {"file_path": "a.py"}}]

    [{"type": "web_search", "query": "pygls 2.0",      # a server-side search (fake API):
      "results": [{"url": "https://x.dev", "title": "X"}]},  # server_tool_use + its result
     {"type": "text", "text": "X says so.",
      "citations": [{"url": "https://x.dev", "cited_text": "so"}]}]

    {"blocks": [...],                 # as above; tool_use ids are generated when absent
     "stop_reason": "max_tokens",     # default: tool_use if any tool_use block, else end_turn
     "usage": {"input_tokens": 10, "output_tokens": 5},
     "fault": "429",                  # fake servers only: 429 | 529 | 500
                                      #   | overloaded_mid_stream | cut_mid_tool_input
                                      #   | cut_mid_text | prompt_too_long
     "chunk_delay_ms": 50,            # pause between streamed events (to test cancel mid-stream)
     "expect": {"contains": "text"}}  # the request's last user message must contain this text

The object form ``{"turns": [...], "context_window": 200000}`` also sets the window of the
scripted model: requests longer than that are refused as ``prompt is too long``.
``{"type": "redacted_thinking"}`` plays encrypted thinking. Usage ``input_tokens`` left out
is counted from the request by the fakes' token rule.

Every request consumes exactly one turn (a fault turn included). A request after the last
turn, or a turn left over at the end, is an error: scripts fail loudly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from tether.core.files import read_regular_text
from tether.core.json_input import parse_json
from tether.errors import ConfigError

Fault = Literal[
    "429",
    "529",
    "500",
    "overloaded_mid_stream",
    "cut_mid_tool_input",
    "cut_mid_text",
    "prompt_too_long",
]


class ScriptCitation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str
    title: str | None = None
    cited_text: str = ""


class ScriptText(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text"] = "text"
    text: str
    citations: list[ScriptCitation] | None = None
    """Web search citations (the fake API fills in the encrypted index)."""


class ScriptSearchResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str
    title: str = ""
    page_age: str | None = None


class ScriptWebSearch(BaseModel):
    """A search the provider runs itself: a ``server_tool_use`` block and its
    ``web_search_tool_result`` (the results, or ``error`` as the result's error code)."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["web_search"] = "web_search"
    query: str
    results: list[ScriptSearchResult] = Field(default_factory=lambda: list[ScriptSearchResult]())
    error: str | None = None
    id: str | None = None


class ScriptThinking(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["thinking"] = "thinking"
    thinking: str


class ScriptRedactedThinking(BaseModel):
    """Thinking the API returns encrypted (``redacted_thinking``); the server fills ``data``."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["redacted_thinking"] = "redacted_thinking"


class ScriptToolUse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["tool_use"] = "tool_use"
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


ScriptBlock = Annotated[
    ScriptText | ScriptThinking | ScriptRedactedThinking | ScriptToolUse | ScriptWebSearch,
    Field(discriminator="type"),
]


class ScriptUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input_tokens: int | None = None
    """None: counted from the request (the fake servers' documented rule)."""
    output_tokens: int = 20
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class ScriptExpect(BaseModel):
    model_config = ConfigDict(extra="forbid")
    contains: str | None = None
    """Text that must appear in the request's last user message."""


class ScriptTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    blocks: list[ScriptBlock] = Field(default_factory=lambda: list[ScriptBlock]())
    stop_reason: (
        Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"]
        | None
    ) = None
    usage: ScriptUsage = Field(default_factory=ScriptUsage)
    fault: Fault | None = None
    chunk_delay_ms: int = 0
    expect: ScriptExpect | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        if isinstance(data, list):
            blocks: list[Any] = list(data)  # pyright: ignore[reportUnknownArgumentType]
            return {"blocks": blocks}
        return data

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        if any(isinstance(b, ScriptToolUse) for b in self.blocks):
            return "tool_use"
        return "end_turn"


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turns: list[ScriptTurn]
    context_window: int | None = None
    """The window the scripted model has (the fake servers refuse longer prompts); None:
    the model's own (200k for the in-process scripted provider)."""

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        if isinstance(data, list):
            turns: list[Any] = list(data)  # pyright: ignore[reportUnknownArgumentType]
            return {"turns": turns}
        return data


_SCRIPT: TypeAdapter[Script] = TypeAdapter(Script)


def load_script(path: Path) -> Script:
    """The script in ``path``; ``ConfigError`` naming the file and the problem otherwise."""
    try:
        data = parse_json(read_regular_text(path))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read the script {path}: {e}") from None
    except ValueError as e:
        raise ConfigError(f"the script {path} is not valid JSON: {e}") from None
    try:
        return parse_script(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}"
            for err in e.errors(include_url=False)[:3]
        )
        raise ConfigError(f"the script {path} is not a valid script: {problems}") from None


def parse_script(data: Any) -> Script:
    return _SCRIPT.validate_python(data)


def tool_use_id(turn_index: int, block_index: int, run: str = "") -> str:
    """Id for a scripted tool_use without one: deterministic within one play of a script;
    ``run`` names the play (a conversation resumed or another session plays the script
    again, and ids must not repeat in a conversation nor clash between sessions)."""
    return f"toolu_{run}{turn_index:04d}_{block_index:02d}"


def server_tool_use_id(turn_index: int, block_index: int, run: str = "") -> str:
    """Id for a scripted server-side search without one (``run`` as for ``tool_use_id``)."""
    return f"srvtoolu_{run}{turn_index:04d}_{block_index:02d}"
