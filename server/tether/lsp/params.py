"""Params of Tether's custom methods. They arrive as dicts and are validated here, so a bad
field gets a -32602 naming it."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import Field, ValidationError

from tether.protocol.base import LenientWireModel
from tether.protocol.content import ContentBlock
from tether.protocol.updates import Mode
from tether.transcript.payloads import HunkState

M = TypeVar("M", bound=LenientWireModel)


class InvalidParamsError(ValueError):
    """Params failed validation; the message names the field."""


class NewSessionParams(LenientWireModel):
    workspace_folder: str | None = None
    title: str | None = None
    model: str | None = None
    permission_mode: Mode | None = None


class PromptParams(LenientWireModel):
    session_id: str
    prompt: list[ContentBlock] = Field(min_length=1)
    work_done_token: int | str | None = None


class SessionParams(LenientWireModel):
    session_id: str


class LoadSessionParams(LenientWireModel):
    session_id: str
    recover: bool = False
    """Continue a damaged transcript from its last good point."""


class StopTaskParams(LenientWireModel):
    session_id: str
    task_id: str


class CompactParams(LenientWireModel):
    session_id: str
    instructions: str = ""


class ListSessionsParams(LenientWireModel):
    workspace_folder: str | None = None
    limit: int | None = Field(default=None, ge=1)


class SetModeParams(LenientWireModel):
    session_id: str
    mode: Mode


class RewindParams(LenientWireModel):
    session_id: str
    turn_id: str


class ListChangesParams(LenientWireModel):
    session_id: str
    turn_id: str | None = None
    uri: str | None = None
    states: list[HunkState] = Field(default_factory=lambda: list[HunkState](["pending"]))


class ChangesParams(LenientWireModel):
    """Which hunks to keep or undo: all criteria given must hold; without ``hunkIds``, the
    pending hunks of the file and/or turn."""

    session_id: str
    hunk_ids: list[str] = Field(default_factory=lambda: list[str]())
    turn_id: str | None = None
    uri: str | None = None


class DiagnosticsParams(LenientWireModel):
    uri: str
    diagnostics: list[dict[str, Any]]


def parse_params(model: type[M], params: Any) -> M:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParamsError("params must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as e:
        problems: list[str] = []
        for err in e.errors(include_url=False):
            loc = ".".join(str(p) for p in err["loc"]) or "params"
            problems.append(f"{loc}: {err['msg']}")
        raise InvalidParamsError("invalid params: " + "; ".join(problems)) from None
