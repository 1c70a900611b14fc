"""The steps of a claim replay (:func:`.gate.replay_claims`), in a module of their own: a
derivation whose claims all carry their verdict replays none, and does not make the class
(:mod:`.ledger` imports it where it builds the steps)."""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = ["Tick"]


class Tick(NamedTuple):
    """One step of a claim replay: a criterion verdict, a cancel, a retry grant, a claim to
    judge, a claim whose gate verdict was recorded with it (``verdict``, ``ok`` = passed), or
    a node held for a person (``hold``: a patch refused with ``REPLAN_BUDGET_EXHAUSTED``)."""

    kind: Literal["criterion", "cancel", "retry", "claim", "verdict", "hold"]
    node: str
    criterion: str = ""
    ok: bool = False
