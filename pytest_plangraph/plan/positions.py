"""Positions in a plan read the fast way, found only when a message needs one.

A plan read from the plan cache, or as JSON, carries no positions: walking its text as YAML for
them costs far more than reading the data, and a run whose plan has no error never asks for one.
:class:`LazyPositions` keeps the file's bytes (or text) and finds the positions on the first
look-up, block by block (:mod:`~pytest_plangraph.plan.blocks`, imported then) when the text
splits, else from the whole text; nothing of that is imported or decoded before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import PlanError

if TYPE_CHECKING:
    from .blocks import BlockPositions
    from .messages import FieldPath


class LazyPositions(dict["FieldPath", tuple[int, int]]):
    """Positions in a plan read the fast way (from the plan cache, or as JSON), found only when
    a message needs one (walking the text as YAML for positions costs far more than reading
    the data): block by block when the text splits, else from the whole text (JSON is nearly
    YAML: its walker serves). *text* is the plan's text, or its bytes (read as UTF-8 with an
    optional byte-order mark, as a plan file is, when first needed); *read* reads a text as
    YAML and gives its positions."""

    def __init__(
        self, text: str | bytes, read: Callable[[str], dict[FieldPath, tuple[int, int]]]
    ) -> None:
        super().__init__()
        self._text: str | bytes | None = text
        self._read = read
        self._blocks: BlockPositions | None = None

    def get(self, key: FieldPath, default: Any = None) -> Any:
        if self._text is not None:
            from .blocks import BlockPositions, split

            raw, self._text = self._text, None
            text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
            found = split(text)
            if found is not None and len(found) > 1:
                self._blocks = BlockPositions(text, found, self._read)
            else:
                with contextlib.suppress(PlanError):
                    self.update(self._read(text))
        if self._blocks is not None:  # only the block that holds the field is read
            return self._blocks.get(key, default)
        return super().get(key, default)
