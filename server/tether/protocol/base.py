"""Base model for wire types: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """A pydantic model serialised with camelCase keys and without unset optionals."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class LenientWireModel(WireModel):
    """Like WireModel, but tolerates extra keys sent by newer clients."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")
