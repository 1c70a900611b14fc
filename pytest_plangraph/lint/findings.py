"""Lint findings of the plan format (DESIGN §3.4), as values, and the context the rules read.

Each rule (in :mod:`.rules`, run by :mod:`.runner`) is a generator of :class:`Finding` over one
:class:`LintContext`. Checks that need the
file system (a symlink leading out of the repository, a schema file that is missing) are asked of
an optional :class:`FileCheck` that the caller passes in; without one they are skipped, so the
module never touches the outside world. Severities live in :data:`LINT_CODES`, the one table the
docs and the tests enumerate. "Depends on" means a strong, active requires/consumes/validates
edge (:attr:`Edge.propagates`), as for the completion gate.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import quoted
from ..plan.file import LoadedPlan
from ..plan.graph import Graph
from ..plan.model import Criterion, Node
from ..values import asdict, dataclass

if TYPE_CHECKING:
    from ..plan.messages import FieldPath

Severity = Literal["error", "warning"]
ERRORS: tuple[Severity, ...] = ("error",)
"""``severities`` for :func:`lint_plan` when only errors matter (checking a plan)."""

LINT_CODES: dict[str, tuple[Severity, str]] = {
    "DUPLICATE_ID": ("error", "two nodes, or two criteria of one node, share an id"),
    "MISSING_DEP": ("error", "an edge, a parent or an input names a node that does not exist"),
    "SELF_EDGE": ("error", "an edge goes from a node to itself"),
    "CYCLE": ("error", "strong requires/consumes/validates edges form a cycle"),
    "HIERARCHY_CYCLE": ("error", "a chain of parents loops back to itself"),
    "UNREACHABLE": ("error", "a node is not under any objective although the plan has some"),
    "ORPHAN_MILESTONE": ("error", "a milestone has no children and no incoming dependency"),
    "CONTAINS_EDGE": ("error", "hierarchy written as a contains edge instead of parent"),
    "UNDECLARED_EDGE": ("error", "an input reads a node that has no edge to this one"),
    "TYPE_MISMATCH": ("error", "an input names a field missing from the upstream outputs_schema"),
    "UNKNOWN_ARTIFACT": ("error", "a consumes edge names a path that is not an output of from"),
    "UNKNOWN_VERIFIER": ("error", "a criterion uses a verifier type nobody provides"),
    "VERIFIER_CONFIG": ("error", "a verifier's settings are wrong (e.g. a missing schema file)"),
    "PATH_OUTSIDE_ROOT": ("error", "a path is absolute, climbs out with '..', or escapes by link"),
    "NO_ACCEPTANCE": ("warning", "a step, or an objective gathering nothing, has no criteria"),
    "NO_COMPENSATION": ("warning", "a write step names no compensate (undo) tool"),
    "RETRY_WITHOUT_IDEMPOTENCY": ("warning", "a non-read, non-idempotent step may be retried"),
    "IRREVERSIBLE_NOT_LAST": ("error", "a reversible step depends on an irreversible one"),
    "CONFLICT_REQUIRED": ("error", "two nodes conflict although one depends on the other"),
    "MIN_PASSED_BELOW_ONE": ("error", "a test verifier's min_passed (or its default) is under 1"),
    "EXCLUDES_EVERY_TEST": ("warning", "a criterion's exclude: patterns take out all its tests"),
    "TESTS_NOT_FOUND": (
        "warning",
        "a tests: pattern's file part matches no file, or a glob of files matches no test id",
    ),
    "ARTIFACT_NOT_FOUND": ("warning", "the artifact a schema or artifact check reads is missing"),
    "IMPLICIT_DEPENDENCY": (
        "warning",
        "a node's tests executed another node's output and no edge joins the two (coverage)",
    ),
}
"""Every lint code with its severity and a one-line description."""

RUN_DATA_CODES = frozenset({"IMPLICIT_DEPENDENCY"})
"""Codes found from the data of a run (``pytest --plangraph-coverage``), not from the plan file
alone: :func:`lint_plan` reports them only when the caller passes them in ``extra``."""


@dataclass(frozen=True)
class Finding:
    """One lint finding: what (code), how bad, about which node, how to fix it, and where."""

    code: str
    severity: Severity
    node: str | None
    hint: str
    location: str

    def to_json(self) -> dict[str, Any]:
        """The JSON form: exactly ``code``, ``severity``, ``node``, ``hint``, ``location``."""
        return asdict(self)

    def __str__(self) -> str:
        about = f" [{self.node}]" if self.node else ""
        return f"{self.location}: {self.severity} {self.code}{about}: {self.hint}"


class FileCheck(Protocol):
    """Checks that need the repository on disk; the CLI passes one in, None skips them."""

    def escapes(self, path: str) -> bool:
        """True when *path* (or a symlink on the way) resolves outside the repository root."""

    def escaping(self, paths: Iterable[str]) -> set[str]:
        """Those of *paths* for which :meth:`escapes` is true (asked of every path a plan
        names at once, so a checker may answer them in one pass over each directory)."""

    def settings_on_disk(self, verifier_type: str) -> bool:
        """False when the type's settings check reads the settings alone: the rules that
        read the plan alone check those (see ``_builtin_settings``)."""

    def verifier_problems(self, node: Node, criterion: Criterion) -> list[str]:
        """What is wrong with the criterion's verifier settings on disk (one text each)."""

    def present(self, patterns: Iterable[str]) -> set[str]:
        """Those of *patterns* (paths, directories, globs) that name at least one file or
        directory in the repository."""

    def is_file(self, path: str) -> bool:
        """True when *path*, taken as it is written (glob characters too), names a file."""


def to_kept(findings: Iterable[Finding], file: str) -> list[dict[str, Any]]:
    """*findings* of the plan file shown as *file*, as JSON values to keep: each location
    without the file's name (the same bytes may be read under another name next time; a
    location elsewhere is kept whole, marked by a leading NUL)."""
    kept = []
    for finding in findings:
        where = finding.location
        where = where[len(file) :] if where.startswith(file) else f"\0{where}"
        kept.append({**finding.to_json(), "location": where})
    return kept


def from_kept(kept: Any, file: str) -> list[Finding] | None:
    """The findings :func:`to_kept` made, located in the plan file shown as *file*; None when
    *kept* is not what it makes (an entry damaged or edited by hand)."""
    if not isinstance(kept, list):
        return None
    found = []
    for entry in kept:
        if not isinstance(entry, dict) or set(entry) != _FIELDS:
            return None
        code, node, hint, where = entry["code"], entry["node"], entry["hint"], entry["location"]
        if code not in LINT_CODES or entry["severity"] != LINT_CODES[code][0]:
            return None
        if not (isinstance(hint, str) and isinstance(where, str)) or not (
            node is None or isinstance(node, str)
        ):
            return None
        location = where[1:] if where.startswith("\0") else file + where
        found.append(Finding(code, LINT_CODES[code][0], node, hint, location))
    return found


_FIELDS = frozenset({"code", "severity", "node", "hint", "location"})


def has_errors(findings: Iterable[Finding]) -> bool:
    """True when any finding is an error (warnings alone keep a plan usable)."""
    return any(finding.severity == "error" for finding in findings)


@dataclass(frozen=True)
class LintContext:
    """What every rule reads: the loaded plan, its graph, the known verifier types, files."""

    loaded: LoadedPlan
    graph: Graph
    verifier_types: Collection[str]
    files: FileCheck | None
    wanted: frozenset[Severity] | None = None
    """The severities asked for (None: all); a finding of another is left unlocated."""
    clean: frozenset[int] = frozenset()
    """The indices of the nodes known to give no finding of the rules that read one node
    alone (:data:`~.rules.NODE_RULES`): kept by the node's content
    (:mod:`~pytest_plangraph.lint.nodecache`), so those rules skip them."""
    wrong: set[int] | None = None
    """When given, those rules add to it the index of each node they found something wrong
    with (the others they looked at pass them)."""

    def finding(self, code: str, node: str | None, hint: str, path: FieldPath) -> Finding:
        """A finding of *code* located at the field *path*."""
        severity = LINT_CODES[code][0]
        wanted = self.wanted is None or severity in self.wanted
        return Finding(code, severity, node, hint, self.loaded.location(path) if wanted else "")


def sort_key(finding: Finding) -> tuple[int, str, int, str, str, str]:
    file, line, column = split_location(finding.location)
    return (line, finding.code, column, file, finding.node or "", finding.hint)


def split_location(location: str) -> tuple[str, int, int]:
    """``file:line:column`` → (file, line, column); a location without a line gives 0, 0."""
    parts = location.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0], int(parts[1]), int(parts[2])
    return location, 0, 0


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when an id differs from *name* by a typo or two, else ``""``."""
    import difflib  # only to name a near miss

    for other in difflib.get_close_matches(name, list(known), n=3, cutoff=0.6):
        opcodes = difflib.SequenceMatcher(None, name, other).get_opcodes()
        edits = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")
        if edits <= max(2, len(name) // 5):
            return f" (did you mean {quoted(other)}?)"
    return ""
