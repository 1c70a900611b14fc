"""Which collected tests verify which criteria: ``criterion`` markers and ``tests:`` patterns.

The mapping is computed where the items are (the only process in a serial run, every worker under
xdist) and kept as plain built-in values, so a worker can hand it to the controller through
``workeroutput`` unchanged. Test ids are node ids relative to the repository root, the same form
the plan's ``tests:`` patterns use.

How a pattern matches a test id is :mod:`pytest_plangraph.plan.patterns`.

:func:`collection_suspects` names the criteria whose tests a collector that failed (a test file
that does not import) may have held: a pattern that could match a test inside it, or the
``node/criterion`` reference written in quotes in its source (a ``criterion`` marker).
"""

from __future__ import annotations

import difflib
import io
import textwrap
import tokenize
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..plan.model import Plan, TestVerifier
from ..plan.patterns import PatternIndex, covers, may_hold
from ..plan.policy import TestPolicy, effective_policy
from ..values import asdict, dataclass, field
from ..vcs.quotes import quoted_refs
from .suite import ProjectSelection

if TYPE_CHECKING:
    from ..plan.evidence import Evidence


_NEW: list[str] = []
"""A list :class:`CriterionTests` was not given (never stored: each gets a new one)."""


@dataclass
class CriterionTests:
    """The tests of one ``test`` criterion in this run."""

    tests: list[str] = field(default_factory=list)
    deselected: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    """Tests its patterns or markers matched that its ``exclude:`` patterns take out."""
    outside: list[str] = field(default_factory=list)
    """Tests it matched that the project's own configuration leaves out of the suite (the
    ``-m``, ``-k`` or ``--deselect`` of its ini ``addopts``): no part of its test set."""

    def __init__(  # its own: one a test criterion (values.dataclass keeps it)
        self,
        tests: list[str] = _NEW,
        deselected: list[str] = _NEW,
        unmatched: list[str] = _NEW,
        excluded: list[str] = _NEW,
        outside: list[str] = _NEW,
    ) -> None:
        fields = self.__dict__  # a list left out: a new one each, as the default factory
        fields["tests"] = [] if tests is _NEW else tests
        fields["deselected"] = [] if deselected is _NEW else deselected
        fields["unmatched"] = [] if unmatched is _NEW else unmatched
        fields["excluded"] = [] if excluded is _NEW else excluded
        fields["outside"] = [] if outside is _NEW else outside


@dataclass
class Mapping:
    """Tests ↔ criteria of one collection, in plain values (see module docstring)."""

    criteria: dict[str, CriterionTests] = field(default_factory=dict)
    verifiers: dict[str, str] = field(default_factory=dict)
    verifiers_deselected: list[str] = field(default_factory=list)
    test_files: dict[str, str] = field(default_factory=dict)
    file_subjects: dict[str, list[str]] = field(default_factory=dict)
    hashes: dict[str, str | None] = field(default_factory=dict)
    partial: bool = False
    """The command line narrowed the collection (paths, test ids, ``--lf``): tests it left
    out may belong to any criterion, so no criterion passes in this run."""

    def to_dict(self) -> dict[str, Any]:
        """Plain built-in values (safe for execnet)."""
        return asdict(self)

    def tests_of(self, prefix: str, evidence: Iterable[Evidence]) -> dict[str, list[str]]:
        """pytest node id (without *prefix*) → ids of the evidence its outcome went into."""
        found: dict[str, list[str]] = {}
        for record in evidence:
            entry = self.criteria.get(record.ref)
            tests = entry.tests if entry else [self.verifiers.get(record.ref, "")]
            for test_id in tests:
                found.setdefault(test_id.removeprefix(prefix), []).append(record.id)
        return found

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Mapping:
        """Inverse of :meth:`to_dict`."""
        criteria = {ref: CriterionTests(**value) for ref, value in data["criteria"].items()}
        return cls(**{**data, "criteria": criteria})

    def subjects_of(self, test_ids: Iterable[str]) -> list[str]:
        """Test files and the conftest.py files above them, for these tests."""
        files = {self.test_files[t] for t in test_ids if t in self.test_files}
        subjects = self.file_subjects
        return sorted(set().union(*(subjects.get(f, (f,)) for f in files)))


def patterns_by_criterion(plan: Plan) -> dict[str, list[str]]:
    """``node/criterion`` → its ``tests:`` patterns, for every test criterion of live nodes."""
    found: dict[str, list[str]] = {}
    for node in plan.nodes:
        if node.cancelled:
            continue
        for criterion in node.acceptance:
            if isinstance(criterion.verifier, TestVerifier):
                found[f"{node.id}/{criterion.id}"] = list(criterion.verifier.tests)
    return found


def excludes_by_criterion(plan: Plan) -> dict[str, list[str]]:
    """``node/criterion`` → its ``exclude:`` patterns, for the test criteria that have any."""
    found: dict[str, list[str]] = {}
    for node in plan.nodes:
        if node.cancelled:
            continue
        for criterion in node.acceptance:
            verifier = criterion.verifier
            if isinstance(verifier, TestVerifier) and verifier.exclude:
                found[f"{node.id}/{criterion.id}"] = list(verifier.exclude)
    return found


def policies_by_criterion(plan: Plan) -> dict[str, TestPolicy]:
    """``node/criterion`` → its effective skip and xfail policy, for every test criterion."""
    found: dict[str, TestPolicy] = {}
    for node in plan.nodes:
        for criterion in node.acceptance:
            if isinstance(criterion.verifier, TestVerifier):
                ref = f"{node.id}/{criterion.id}"
                found.setdefault(ref, effective_policy(criterion.verifier, plan.defaults))
    return found


MARKER_REFS = pytest.StashKey[tuple[tuple[int, ...], tuple[str, ...]]]()
"""The ``criterion`` marker references of an item, read once (:func:`marker_refs`), with the
number of marks on each node above it when they were read."""

COUNTS = {"marker reads": 0}
"""How often the markers of an item were read in this process: once per item, however many
times its references are asked for (collection check, mapping, stale selection)."""


def marker_refs(item: pytest.Item) -> list[str]:
    """Every argument of every ``criterion`` marker on *item* (class and module marks too); a
    marker without a positional argument, or with keyword ones, gives a ref that
    :func:`ref_problems` explains. The markers are read once per item (kept in its stash),
    and again only when a mark was added since (``add_marker`` in a later hook)."""
    counted: list[int] = []
    node: Any = item
    while node is not None:  # the item and its parents (listchain() without its list copy)
        counted.append(len(node.own_markers))
        node = node.parent
    marks = tuple(counted)
    kept = item.stash.get(MARKER_REFS, None)
    if kept is None or kept[0] != marks:
        COUNTS["marker reads"] += 1
        kept = item.stash[MARKER_REFS] = (marks, tuple(_read_marker_refs(item)))
    return list(kept[1])


def _read_marker_refs(item: pytest.Item) -> list[str]:
    refs: list[str] = []
    for mark in item.iter_markers("criterion"):
        refs.extend(str(arg) if not isinstance(arg, str) else arg for arg in mark.args)
        if not mark.args or mark.kwargs:
            keywords = ", ".join(f"{key}={value!r}" for key, value in mark.kwargs.items())
            refs.append(f"{_MISWRITTEN}criterion({keywords})")
    return refs


_MISWRITTEN = "\0"
"""Starts the ref of a marker written without its positional reference (no ref starts so)."""


def ref_problems(refs: Iterable[str], plan: Plan) -> list[str]:
    """One message per marker reference that names no test criterion of *plan*."""
    problems: list[str] = []
    for ref in refs:
        if message := _ref_problem(ref, plan):
            problems.append(message)
    return problems


def _ref_problem(ref: str, plan: Plan) -> str | None:
    if ref.startswith(_MISWRITTEN):
        return (
            f"criterion marker @pytest.mark.{ref[len(_MISWRITTEN) :]}: name the criterion as "
            f"its argument, e.g. @pytest.mark.criterion('node-id/criterion-id')"
        )
    node_id, slash, criterion_id = ref.partition("/")
    if not slash or not node_id or not criterion_id:
        return f"criterion marker {ref!r}: write 'node-id/criterion-id'"
    node = plan.node(node_id)
    if node is None:
        nodes = [n.id for n in plan.nodes]
        return f"criterion marker {ref!r}: unknown node {node_id!r}; {_choices(node_id, nodes)}"
    criterion = node.criterion(criterion_id)
    if criterion is None:
        ids = [c.id for c in node.acceptance]
        return (
            f"criterion marker {ref!r}: node {node_id!r} has no criterion {criterion_id!r}; "
            f"{_choices(criterion_id, ids)}"
        )
    if criterion.verifier.type != "test":
        tests = [c.id for c in node.acceptance if c.verifier.type == "test"]
        return (
            f"criterion marker {ref!r} is verified by {criterion.verifier.type!r}, not by tests; "
            f"test criteria of {node_id!r}: {', '.join(tests) or 'none'}"
        )
    return None


def _choices(name: str, known: Sequence[str]) -> str:
    if not known:
        return "there are none"
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{hint}valid: {', '.join(known)}"


@dataclass
class MappingBuilder:
    """Accumulates selected and deselected tests into a :class:`Mapping`."""

    plan: Plan
    prefix: str = ""
    partial: bool = False
    mapping: Mapping = field(default_factory=Mapping)
    selection: ProjectSelection = field(default_factory=ProjectSelection)
    """What the project's ini ``addopts`` deselects (see :mod:`.suite`)."""

    def __post_init__(self) -> None:
        self.patterns = patterns_by_criterion(self.plan)
        self.index = PatternIndex(self.patterns)
        self.excludes = PatternIndex(excludes_by_criterion(self.plan))
        self.matched: set[str] = set()
        self.mapping.partial = self.partial
        self.mapping.criteria = {ref: CriterionTests() for ref in self.patterns}
        self._file_ids: dict[int, tuple[Any, str | None]] = {}
        """``id(parent)`` → the parent and the id of the file its items are in: found once
        per parent (a module or a class), not once per test."""

    def test_id(self, nodeid: str) -> str:
        """The repository-relative id of a pytest node id."""
        return self.prefix + nodeid

    def _file_id(self, item: pytest.Item) -> str | None:
        """The repository-relative id of the file *item* is in (None when no file holds it),
        found once per parent: every item under one parent is in the same file."""
        parent = item.parent
        kept = self._file_ids.get(id(parent))
        if kept is not None and kept[0] is parent:
            return kept[1]
        # a prefix matches from the test's file on (pytest.File is abstract: no getparent)
        holder = next((n for n in reversed(item.listchain()) if isinstance(n, pytest.File)), None)
        file_id = None if holder is None else self.test_id(holder.nodeid)
        if parent is not None:
            self._file_ids[id(parent)] = (parent, file_id)
        return file_id

    def add(self, item: pytest.Item, test_id: str, file: str, *, selected: bool) -> list[str]:
        """Map one test; returns the refs it verifies. A test a criterion's ``exclude:``
        takes out, or a deselected one the project's configuration leaves out of the suite
        (:attr:`selection`), is only noted: it is no part of that criterion's test set. A test
        the plan names itself (:func:`names_a_test`) stays in its criterion's set whatever the
        ini deselects: it is then ``DESELECTED``, so no ``addopts`` edit takes it out."""
        outside = not selected and self.selection.leaves_out(item)
        refs = [r for r in marker_refs(item) if r in self.mapping.criteria]
        named: set[str] = set()
        file_id = self._file_id(item)
        for ref, pattern in self.index.match(test_id, file_id):
            self.matched.add(pattern)
            refs.append(ref)
            if names_a_test(pattern):
                named.add(ref)
        excluded = {ref for ref, _ in self.excludes.match(test_id)}
        kept: list[str] = []
        for ref in dict.fromkeys(refs):
            entry = self.mapping.criteria[ref]
            if ref in excluded:
                entry.excluded.append(test_id)
            elif outside and ref not in named:
                entry.outside.append(test_id)
            else:
                (entry.tests if selected else entry.deselected).append(test_id)
                kept.append(ref)
        if kept and selected:
            self.mapping.test_files[test_id] = file
        return kept

    def finish(self) -> Mapping:
        """Record the patterns that matched nothing and return the mapping."""
        for ref, patterns in self.patterns.items():
            self.mapping.criteria[ref].unmatched = [p for p in patterns if p not in self.matched]
        return self.mapping


def names_a_test(pattern: str) -> bool:
    """True when a ``tests:`` pattern names tests by id (``file.py::test``, a class, a
    parametrized case), not a whole file or a wildcard: the plan's own, reviewed demand that
    this very test passes, which the project's ini cannot take back."""
    return "::" in pattern and "*" not in pattern and "?" not in pattern


def collection_suspects(plan: Plan, failed: Iterable[str], root: Path) -> dict[str, list[str]]:
    """``node/criterion`` → the failed collectors (repository-relative ids) that may hold its
    tests: one a ``tests:`` pattern could match, or whose source (under *root*) quotes the
    reference as a marker would (:func:`~pytest_plangraph.vcs.quotes.quoted_refs`, the test
    the records' quotes subjects make) — unless its ``exclude:`` takes out every test the collector
    holds. A failure at the repository root (``.``) may hold any test."""
    patterns = patterns_by_criterion(plan)
    excludes = excludes_by_criterion(plan)
    found: dict[str, list[str]] = {}
    for collector in failed:
        everything = collector == "."
        quoted: frozenset[str] = frozenset()
        if not everything:
            try:
                quoted = _source_refs(root, collector)
            except (RecursionError, MemoryError):  # too deep to parse: may hold any test
                everything = True
        for ref, ref_patterns in patterns.items():
            if any(covers(e, collector) for e in excludes.get(ref, ())):
                continue  # every test it could hold is excluded from this criterion
            if everything or ref in quoted or any(may_hold(p, collector) for p in ref_patterns):
                found.setdefault(ref, []).append(collector)
    return found


def _source_refs(root: Path, collector: str) -> frozenset[str]:
    """The references the Python source of a failed collector quotes: its class
    (``file.py::Class``, nested classes too), its file, or each ``.py`` file under its
    directory (none from a file that cannot be read)."""
    file, *classes = collector.split("::")
    path = root / file
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    sources: list[bytes] = []
    for found in files:
        try:
            sources.append(found.read_bytes())
        except OSError:
            continue
    if classes and len(sources) == 1:
        text = _decoded(sources[0])
        return quoted_refs(textwrap.dedent(_class_source(text, classes)))
    return frozenset().union(*map(quoted_refs, sources))


def _decoded(source: bytes) -> str:
    """*source* decoded as Python decodes it (its coding declaration), else as UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding, errors="replace")
    except (SyntaxError, LookupError, UnicodeError):
        return source.decode("utf-8", errors="replace")


def _class_source(text: str, names: list[str]) -> str:
    """The source of the class at *names* (outermost first) in the module *text*; the whole
    text when it cannot be found (a module that does not parse, a parametrized id)."""
    import ast

    try:
        body: list[ast.stmt] = ast.parse(text).body
    except (SyntaxError, ValueError):
        return text
    found: ast.ClassDef | None = None
    for name in names:
        found = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if found is None:
            return text
        body = found.body
    if found is None or found.end_lineno is None:
        return text
    start = min([found.lineno, *(d.lineno for d in found.decorator_list)])  # class markers too
    return "\n".join(text.splitlines()[start - 1 : found.end_lineno])
