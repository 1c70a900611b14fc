"""The names and literal types of the plan format and of events, shared by the runtime classes
(:mod:`.model`) and the pydantic models of the boundary (:mod:`.boundary`)."""

from __future__ import annotations

from typing import Literal

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
"""Ids are ASCII: letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit."""
SHA256_PATTERN = r"^[0-9A-Fa-f]{64}$"
"""A pinned sha256: 64 hexadecimal digits, either case (kept lowercase)."""

NodeKind = Literal["objective", "step", "milestone"]
EdgeType = Literal["requires", "consumes", "validates", "conflicts", "related", "contains"]
Strength = Literal["strong", "weak"]
Effect = Literal["read", "write", "irreversible"]


BUILTIN_VERIFIERS: tuple[str, ...] = ("test", "schema", "artifact", "approval", "command")


EventKind = Literal[
    "evidence",  # payload: an Evidence record
    "claim",  # a claimed completion: payload {}
    "approval",  # payload {"input_digest", "note", "role"}
    "revoke",  # an approval withdrawn
    "cancel",  # the node is cancelled (it never settles a parent: only the plan file does)
    "retry",  # a person grants a fresh retry budget after RETRY_BUDGET_EXHAUSTED
    "change",  # an observed change: payload {"path", "change", "old", "new", "commit"}
    "patch",  # a plan patch tried on this node: payload {"outcome", "patch", versions, ...}
]
