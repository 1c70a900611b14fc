"""``impact --since`` on a miss, made from the kept basis: when the kept answer does not stand
(another diff: a new commit, an edited file) but the plan, the store and everything else a
report depends on besides the diff are as when the basis was kept, the report of the new
diff is made from it (:class:`~pytest_plangraph.impact.basis.DiffBasis`: which node binds
which path, the edges the walk follows, the evidence ids) — no plan opened, no lint, no state
derived, and neither :mod:`argparse` nor the plan's classes imported.

The basis is kept as ``impact-since-basis`` beside the kept answers, with the same record
(:mod:`pytest_plangraph.derived.kept`: where, the code, the settings, the installation, the
plan file's bytes, the store's head, the watch of the bound files), by every ``impact
--since`` that made its report from the plan; with it the warnings the plan's check printed.
With a store it stands while all of that does; without one (a preview) the bytes of the
bound files may change — a new commit's usual edit — as long as each is still a regular file
or still missing and lint reads no file's bytes
(:func:`~pytest_plangraph.derived.preview.kept_preview`): a preview reads no bound file's bytes.
A diff that changes the plan file is reported from the plan (its edits are read from it).
Deleting the basis changes no answer: the report is made by the same code from the same
values either way (``tests/test_impact_basis.py`` compares them).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..impact.basis import DiffBasis
    from ..vcs.history import SinceDiff

__all__ = ["BASIS", "basis_answer", "basis_extra", "kept_basis"]

BASIS = "impact-since-basis"
"""The name the basis is kept under (in the cache folder, as the answers are)."""


def basis_extra() -> list[Any]:
    """What the kept basis depends on besides a kept answer's inputs: the form of its JSON."""
    from ..impact.basis import BASIS_FORMAT

    return [BASIS_FORMAT]


def kept_basis(
    root: Path | None, plan: Path | None, store: Path | None
) -> tuple[list[str], DiffBasis] | None:
    """The kept basis of ``impact --since`` for the repository the options name, with the
    warnings the plan's check printed, when nothing it depends on changed; None otherwise."""
    from ..derived.preview import kept_preview
    from ..impact.basis import DiffBasis

    answer = kept_preview(root, plan, store, BASIS, basis_extra())
    if not isinstance(answer, list) or len(answer) != 2:
        return None
    warned, data = answer
    if not isinstance(warned, list) or not all(isinstance(line, str) for line in warned):
        return None
    basis = DiffBasis.from_json(data)
    return None if basis is None else (warned, basis)


def basis_answer(
    options: tuple[Any, ...],
    diff: SinceDiff,
    cache: Path,
    fmt: str,
    *,
    commits: bool,
    check: bool,
) -> int | None:
    """Print the answer of ``impact --since`` for *diff* (read for the kept answer's key,
    whose *options* — root, plan, store, since — name the repository; *cache* its cache
    folder), made from the kept basis, and return its exit code; None, having printed
    nothing, when there is no kept basis that stands or the diff changes the plan file (the
    command makes the report from the plan)."""
    root, plan, store, since = options[:4]
    found = kept_basis(root, plan, store)
    if found is None:
        return None
    warned, basis = found
    plan_file = basis.plan_file
    if plan_file is None or any(plan_file in (c.path, c.old_path) for c in diff.changes):
        return None  # the plan edits are read from the plan
    from ..store.localkey import local_key
    from ..vcs.commitcache import CommitCache
    from ..vcs.history import changes_since

    kept = CommitCache(cache / "commits.json", local_key()) if commits else None
    listed, named = changes_since(diff.root, since, commits=commits, cache=kept, diff=diff)
    report = basis.report(listed, commits=named)
    from .impact_text import printed

    text = printed(report, fmt)
    for line in [*warned, *(f"plangraph: note: {note}" for note in report.notes)]:
        print(line, file=sys.stderr)
    print(text)
    return 1 if check and report.invalidated else 0
