"""``impact``'s printed answer: the report as text or Markdown, and what a format prints
(:func:`printed`), without the command line's parser: a report made from a kept basis
(:mod:`.impact_basis`) is printed before :mod:`argparse` is imported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .tables import table

if TYPE_CHECKING:
    from ..impact.basis import ChangedPath, ImpactReport

__all__ = ["markdown", "plain", "printed"]


def printed(report: ImpactReport, fmt: str) -> str:
    """What ``impact --format fmt`` prints for *report* (``json``: the report's JSON with
    ``"format"``, as every command's JSON output carries)."""
    if fmt == "json":
        import json

        from ..plan.formats import FORMAT_VERSION

        data = {"format": FORMAT_VERSION, **report.to_json()}
        return json.dumps(data, indent=2, ensure_ascii=False)
    return markdown(report) if fmt == "markdown" else plain(report)


def plain(report: ImpactReport) -> str:
    """The report as text."""
    reaching = [c for c in report.changed if c.nodes]
    lines = [f"changed: {len(report.changed)} path(s), {len(reaching)} reach the plan"]
    rows = [[c.change, _shown(c), ", ".join(c.nodes)] for c in reaching]
    if rows:
        lines.append(_indent(table(rows, ["change", "path", "nodes"])))
    lines.append(f"invalidated: {len(report.invalidated)} node(s)")
    for entry in report.invalidated:
        evidence = ", ".join(e[:12] for e in entry.evidence) or "no evidence yet"
        lines.append(f"  {entry.node} ({evidence})")
        lines += [f"    - {reason}" for reason in entry.reasons]
    for title, notices in (
        ("review recommended", report.review_recommended),
        ("blocked", report.blocked),
    ):
        if notices:
            lines.append(f"{title}: {len(notices)} node(s)")
            lines += [f"  {n.node}: {n.reason}" for n in notices]
    return "\n".join(lines)


def markdown(report: ImpactReport) -> str:
    """The report as GitHub-flavoured Markdown (for ``$GITHUB_STEP_SUMMARY``)."""
    count = len(report.invalidated)
    verdict = f"**{count} node(s) invalidated**" if count else "**Nothing invalidated**"
    lines = ["## plangraph impact", "", f"{verdict} by {len(report.changed)} changed path(s)."]
    reaching = [c for c in report.changed if c.nodes]
    if reaching:
        lines += ["", "| change | path | nodes |", "| --- | --- | --- |"]
        lines += [
            f"| {c.change} | {_code(_shown(c))} | {_cell(', '.join(c.nodes))} |" for c in reaching
        ]
    if report.invalidated:
        lines += ["", "### Invalidated", "", "| node | evidence | reasons |", "| --- | --- | --- |"]
        for entry in report.invalidated:
            evidence = " ".join(f"`{e[:12]}`" for e in entry.evidence) or "—"
            reasons = "<br>".join(_cell(r) for r in entry.reasons)
            lines.append(f"| {_cell(entry.node)} | {evidence} | {reasons} |")
    for title, notices in (
        ("Review recommended", report.review_recommended),
        ("Blocked", report.blocked),
    ):
        if notices:
            lines += ["", f"### {title}", ""]
            lines += [f"- **{_cell(n.node)}**: {_cell(n.reason)}" for n in notices]
    return "\n".join(lines)


def _shown(changed: ChangedPath) -> str:
    if changed.old_path:
        return f"{changed.old_path} → {changed.path}"
    return changed.path


def _cell(text: str) -> str:
    """*text* as plain table-cell text: a file name from a pull request is shown, never read as
    HTML (or as a code span)."""
    import html  # imported here: a kept answer prints without it

    plain = html.escape(text, quote=False).replace("`", "\\`")
    return plain.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """*text* as an inline code span in a table cell, whatever backticks it holds (a longer
    fence, padded; HTML is not read inside one)."""
    import re

    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence, pad = "`" * (longest + 1), " " if longest else ""
    inner = text.replace("|", "\\|").replace("\n", " ")
    return f"{fence}{pad}{inner}{pad}{fence}"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
