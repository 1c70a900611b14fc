"""The reasons a node can never complete on its evidence alone (pure): nothing could show it
is done, its retry budget is spent, or its replan rounds are (see :mod:`.derive`)."""

from __future__ import annotations

from ..plan.model import LoggedEvent, Node
from .states import Reason

__all__ = ["no_acceptance", "replan_budget_exhausted", "retry_budget_exhausted"]


def no_acceptance(node: Node) -> Reason:
    """``NO_ACCEPTANCE``: *node* has nothing that could show it is done."""
    what = (
        "a step without required acceptance criteria"
        if node.kind == "step"
        else f"{'an' if node.kind == 'objective' else 'a'} {node.kind} without "
        "children, strong prerequisites or required acceptance criteria"
    )
    message = (
        f"{what} is never completed: nothing could show it is done; add a criterion to the plan"
    )
    return Reason("NO_ACCEPTANCE", message, {})


def retry_budget_exhausted(node_id: str, node: Node, refused: int) -> Reason:
    """``RETRY_BUDGET_EXHAUSTED``: more claims of *node* refused than its ``max_retry``."""
    message = (
        f"{refused} claims refused since the last retry grant (max_retry {node.max_retry}): "
        "the gate refuses this node whatever its evidence until a person runs "
        f"`plangraph retry {node_id}`"
    )
    return Reason(
        "RETRY_BUDGET_EXHAUSTED", message, {"refused": refused, "max_retry": node.max_retry}
    )


def replan_budget_exhausted(node_id: str, event: LoggedEvent, limit: int) -> Reason:
    """``REPLAN_BUDGET_EXHAUSTED``: the node's replan rounds are spent and a further patch
    was refused; it needs a person until a retry grant."""
    message = (
        f"needs a person: re-planned {limit} round(s) (max_replan_rounds) and a further patch "
        f"by {event.by} was refused; narrow the goal or hand it over — the gate refuses this "
        f"node whatever its evidence until a person runs `plangraph retry {node_id}`"
    )
    data = {"by": event.by, "seq": event.seq, "max_replan_rounds": limit}
    return Reason("REPLAN_BUDGET_EXHAUSTED", message, data)
