"""The pydantic base every plan, evidence and event model shares: frozen, no extra fields."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FrozenModel", "empty_default"]


def empty_default(kind: type[list[Any]] | type[dict[str, Any]]) -> Any:
    """An empty list or dict default, made new for each model: pydantic deep-copies a literal
    ``[]`` or ``{}`` default every time, which is most of the cost of loading a large plan."""
    return Field(default_factory=kind, json_schema_extra={"default": kind()})


class FrozenModel(BaseModel):
    """A model whose values never change once made, and that takes no field it does not name."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
