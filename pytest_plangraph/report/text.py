"""The report as plain text for a terminal: the state table, the stale chains and what to run."""

from __future__ import annotations

from .view import ReportView

__all__ = ["text"]


def text(view: ReportView) -> str:
    """*view* as lines of text."""
    header = ["node", "kind", "status", "criteria"]
    rows = [[n.id, n.kind, n.status, n.counts] for n in view.nodes]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [f"plan {view.plan} v{view.version}: {view.completed}/{len(view.nodes)} completed"]
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]
    for node in view.nodes:
        if node.status == "stale":
            lines.append(f"stale {node.id}:")
            lines += [f"  - {chain}" for chain in node.stale_chains or node.reasons]
    for node in view.nodes:
        if node.fixes or node.waits_on:
            lines.append(f"to move {node.id} on ({node.status}):")
            lines += [f"  $ {fix}" for fix in node.fixes]
            if node.waits_on:
                lines.append(f"  first complete {', '.join(node.waits_on)}")
    if view.audit is not None:
        found = {kind: len(items) for kind, items in view.audit.items() if items}
        said = ", ".join(f"{kind} {count}" for kind, count in found.items())
        lines.append(f"audit: {said or 'clean'}")
    return "\n".join(lines) + "\n"
