"""Many evidence records of one run, built at once (DESIGN §4).

:meth:`PlanGraph.make_evidence` builds one record; a run of
``pytest --plangraph`` makes hundreds that share the plan reference, the git state, the run
information, the criterion digests, the input digests and each node's own files.
:class:`RecordMaker` computes those once, writes each record's canonical JSON body from values
that are already valid, takes its content address from that body, and builds the record without
checking it again. The records are the same, byte for byte, as :meth:`Evidence.create` would
make (tests compare both); whatever this module cannot vouch for — details that are not plain
JSON values, an outcome outside the record's choices — goes through :meth:`Evidence.create`
instead.

:func:`changed_during_run` and :func:`voided` are the one rule both ``plangraph verify`` and
``pytest --plangraph`` apply to a verdict: every subject is hashed before the run and again at
its end, and a subject that changed in between voids the verdict
(``ARTIFACT_CHANGED_DURING_RUN``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any, Protocol

from ..canonical import (
    canonical_json,
    encoded_members,
    member_name,
    text_digest,
    utf8_safe,
)
from ..plan.evidence import OUTCOMES, Evidence
from ..plan.frozen import builder_of
from .inputs import criterion_digests, node_files
from .splicing import BODY_FIELDS as BODY_FIELDS
from .splicing import Splicing, _plain_text
from .splicing import SubjectsBase as SubjectsBase
from .splicing import is_plain as is_plain

if TYPE_CHECKING:
    from ..plan.evidence import GitInfo, PlanRef, RunInfo
    from ..plan.graph import Graph
    from ..vcs.workspace import Workspace
    from .inputs import Snapshot

_SHARED_FIELDS = ("git", "plan", "recorded_by", "run")
"""The body fields every record of one maker shares."""


_ALONE = (*_SHARED_FIELDS, "subjects")
"""The body fields joined on their own: the shared ones (encoded once per maker) and the
subjects (joined from their members, each encoded once per maker)."""


def _runs(names: list[str]) -> tuple[tuple[str, ...], ...]:
    """*names* (sorted) cut into runs: each of :data:`_ALONE` alone, the own fields between
    them together (a run of own fields is encoded as one object, in one call of the
    encoder)."""
    runs: list[tuple[str, ...]] = []
    for name in names:
        if name in _ALONE or not runs or runs[-1][0] in _ALONE:
            runs.append((name,))
        else:
            runs[-1] += (name,)
    return tuple(runs)


_BEFORE_ID = _runs(sorted(f for f in BODY_FIELDS if f < "id"))
_AFTER_ID = _runs(sorted(f for f in BODY_FIELDS if f > "id"))
"""The body fields in canonical order, split where ``id`` sorts among them, in runs
(:func:`_runs`)."""
_TEXT = {str}
"""The types of a record's own values joined in one pass (:meth:`RecordMaker._parts`)."""
CHANGED_DURING_RUN = "ARTIFACT_CHANGED_DURING_RUN"
"""The reason of a verdict voided because a subject changed while it was being reached."""


def changed_during_run(
    before: Mapping[str, str | None],
    after: Mapping[str, str | None],
    *,
    produced: Collection[str] = (),
) -> list[str]:
    """The subjects, sorted, whose sha256 (None: no file) at the end of the run, *after*,
    differs from the one before it, *before*; a path hashed only once is not compared, nor is
    one the run was declared to make (*produced*). The pairs of *after* that *before* holds
    as they are are taken out in one pass (nearly all of them): only the rest are looked at.
    That pass goes over *after*, each pair looked up in *before*, when *after* is the smaller
    (a node's few files against every file the run started with), else as a set difference."""
    differ: Iterable[tuple[str, str | None]]
    if len(after) < len(before) and isinstance(before, dict):
        held = before.items()
        differ = [item for item in after.items() if item not in held]
    else:
        try:
            differ = after.items() - before.items()
        except TypeError:  # a value that cannot be hashed: compared one by one
            differ = after.items()
    if not differ:  # as nearly always: nothing changed
        return []
    return sorted(
        path
        for path, digest in differ
        if path in before and path not in produced and before[path] != digest
    )


def voided(details: Mapping[str, Any], moved: Sequence[str]) -> tuple[str, str, dict[str, Any]]:
    """Outcome, reason and details of a verdict voided because the subjects *moved* (from
    :func:`changed_during_run`) changed during the run: an error that names them."""
    return "error", CHANGED_DURING_RUN, {**details, "changed_during_run": list(moved)}


class PlanFiles(Protocol):
    """What records are made from: the plan's graph and the workspace its files are read
    from (a :class:`~pytest_plangraph.api.PlanGraph` has both)."""

    @property
    def graph(self) -> Graph: ...

    @property
    def workspace(self) -> Workspace: ...


class RecordMaker(Splicing):
    """Makes the evidence records of one run against one end-of-run snapshot.

    *source* gives the plan's graph and the workspace; *digests* are the nodes' input digests
    for that snapshot; *criteria* the criterion digests
    (:func:`~pytest_plangraph.judge.inputs.criterion_digests`) when the caller has them already.
    """

    def __init__(
        self,
        source: PlanFiles,
        snapshot: Snapshot,
        *,
        plan: PlanRef,
        git: GitInfo,
        run: RunInfo,
        recorded_by: str,
        digests: Mapping[str, str],
        criteria: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        self.graph = source.graph
        self.workspace = source.workspace
        self.snapshot = snapshot
        self.shared: dict[str, Any] = {
            "plan": plan,
            "git": git,
            "run": run,
            "recorded_by": recorded_by,
        }
        self.shared_json = {"plan": plan.to_json(), "git": git.to_json(), "run": run.to_json()}
        self.shared_members = encoded_members({**self.shared_json, "recorded_by": recorded_by})
        """The canonical JSON of the members every record of this maker shares, encoded once."""
        self._shared_texts = {
            name: member_name(name) + text for name, text in self.shared_members.items()
        }
        """``"name":value`` of each shared member, as it is joined into a record's text."""
        self.digests = digests
        self.criteria = criterion_digests(self.graph) if criteria is None else criteria
        self._own: dict[str, dict[str, str | None]] = {}
        self._definitions: dict[tuple[str, str], Any] | None = None
        """(node, criterion) → the criterion, for every criterion of the plan: found once
        per maker (the first of an id in its node, as :meth:`Node.criterion` finds it)."""
        self._pieces: dict[tuple[str, str], str] = {}
        """``"path":"sha256"`` of each subject of the records made, by (path, sha256)."""
        self._around: dict[tuple[str, str, str, str], tuple[str, str]] = {}
        """The text of a record's members from ``input_digest`` to ``reason`` (its value
        left out) and of its ``verifier``, by input digest, node, outcome and verifier."""
        self._middle = (
            "".join([",", self._shared_texts["recorded_by"], ",", self._shared_texts["run"]])
            + ',"subjects":{'
        )
        """The text of a record's members after its reason up to its subjects' first."""
        self._heads: dict[str, str] = {}
        """The text of the start of a subject's path (:meth:`_path_text`), by that start."""

    def make(
        self,
        node: str,
        criterion: str,
        *,
        outcome: str,
        reason: str | None,
        details: Mapping[str, Any],
        subjects: Mapping[str, str | None],
        base: SubjectsBase | None = None,
    ) -> Evidence:
        """The record of one verdict: the node's own files and *subjects* with their sha256
        (paths whose file is missing are left out), as :meth:`PlanGraph.make_evidence`. Made
        on a *base* (:meth:`base`, for the same node), the subjects are the base's before
        *subjects* and its after them, merged in that order. Text of its *details* that no
        UTF-8 text can carry (a test id or message holding a lone surrogate) is written as
        its escape (:func:`~..canonical.utf8_safe`)."""
        try:
            return self._made(node, criterion, outcome, reason, details, subjects, base)
        except UnicodeEncodeError:
            safe = utf8_safe(details)
            if safe is details:  # not the details: a value the plugin and the plan refuse
                raise
            return self._made(node, criterion, outcome, reason, safe, subjects, base)

    def base(
        self, node: str, before: Mapping[str, str | None], after: Mapping[str, str | None]
    ) -> SubjectsBase:
        """The subjects records of *node* share (see :class:`SubjectsBase`), with each
        member of their text encoded (once per maker, as :meth:`_subjects_text` does)."""
        head = dict(self.own_files(node))
        head.update(before)
        base = SubjectsBase(head, after, None, [])
        present = {path: sha for path, sha in base.merged.items() if sha is not None}
        if _TEXT.issuperset(map(type, present)) and _TEXT.issuperset(map(type, present.values())):
            paths = sorted(present)
            pieces = self._pieces
            members = []
            for item in zip(paths, map(present.__getitem__, paths), strict=True):
                if item not in pieces:
                    pieces[item] = encode_basestring(item[0]) + ":" + encode_basestring(item[1])
                members.append(pieces[item])
            base.spelled(paths, members)
        return base

    def _made(
        self,
        node: str,
        criterion: str,
        outcome: str,
        reason: str | None,
        details: Mapping[str, Any],
        subjects: Mapping[str, str | None],
        base: SubjectsBase | None = None,
    ) -> Evidence:
        """:meth:`make`, the details as given."""
        definitions = self._definitions
        if definitions is None:
            definitions = self._definitions = {}
            for name, each in self.graph.nodes.items():
                for made in each.acceptance:
                    definitions.setdefault((name, made.id), made)
        try:
            definition = definitions.get((node, criterion))
        except TypeError:  # a value that cannot be hashed: not a node or criterion id
            definition = None
        if definition is None or type(node) is not str or type(criterion) is not str:
            from .lookup import require_criterion

            require_criterion(self.graph, node, criterion)  # says what is wrong
            raise AssertionError("unreachable: the criterion was not found above")
        if base is None:
            hashes = dict(self.own_files(node))
            hashes.update(subjects)
        else:
            if base.paths is not None and not base.nones and len(subjects) == 1:
                spliced = self._spliced(
                    node, criterion, definition, outcome, reason, details, subjects, base
                )
                if spliced is not None:
                    return spliced
            hashes = {**base.head, **subjects, **base.after}
        fields: dict[str, Any] = {
            **self.shared,
            "node": node,
            "criterion": criterion,
            "criterion_digest": self.criteria[(node, criterion)],
            "input_digest": self.digests[node],
            "verifier": definition.verifier.type,
            "outcome": outcome,
            "reason": reason,
            "details": dict(details),
            "subjects": hashes,
        }
        if (
            base is None or base.nones or None in subjects.values()
        ) and None in hashes.values():  # a missing file: left out (one pass, in C)
            fields["subjects"] = {path: sha for path, sha in hashes.items() if sha is not None}
        if not (outcome in OUTCOMES and _plain_text(reason) and is_plain(details)):
            checked = Evidence.create(**fields)
            self.made_checked(checked)
            return checked
        # the body's text in two parts, the members before and after where "id" sorts: the
        # id is the digest of the two joined, the record's text the two around the id
        head, tail = self._parts(fields, None if base is None else self._on_base(base, subjects))
        record_id = text_digest("".join(("{", head, ",", tail, "}")))  # one string made, not four
        fields["id"] = record_id
        # built from its fields as they are: every one given, none compared with its default
        record: Evidence = builder_of(Evidence)(fields)
        payload = {**fields, **self.shared_json}  # the shared values in their JSON form
        text = "".join(["{", head, ',"id":"', record_id, '",', tail, "}"])
        self.made_plain(record, payload, text)
        return record

    def _on_base(self, base: SubjectsBase, own: Mapping[str, str | None]) -> str | None:
        """The canonical JSON of the subjects of a record made on *base* with its *own*
        subjects: the base's members with the one own member put in its sorted place; None
        (the text joined in full) when the base is not all text, or the record adds more
        than one subject or one the base holds already."""
        paths = base.paths
        if paths is None or not base.merged.keys().isdisjoint(own):
            return None
        if len(own) == 1:  # as a run's records: one own subject (its quotes), no list made
            [(path, sha)] = own.items()
            present = [] if sha is None else [(path, sha)]
        else:
            present = [(path, sha) for path, sha in own.items() if sha is not None]
        if not present:
            return "{" + ",".join(base.pieces) + "}"
        if len(present) > 1:
            return None
        item = present[0]
        path, sha = item
        if type(path) is not str or type(sha) is not str:
            return None
        piece = self._pieces.get(item)
        if piece is None:
            piece = self._pieces[item] = encode_basestring(path) + ":" + encode_basestring(sha)
        at = bisect_left(paths, path)
        pieces = base.pieces
        return "{" + ",".join([*pieces[:at], piece, *pieces[at:]]) + "}"

    def _parts(self, fields: Mapping[str, Any], subjects: str | None = None) -> tuple[str, str]:
        """The members of a record's canonical text before and after where ``id`` sorts: in
        one join of the members in canonical order (:data:`BODY_FIELDS` sorted), each text
        value encoded by the encoder's own string function, the details by the encoder, the
        shared members as encoded once, the subjects from their kept members (or as
        *subjects* gives their text); a record whose own values are not all text (a reason
        that is None aside) is joined run by run."""
        reason = fields["reason"]
        own = (
            fields["criterion"],
            fields["criterion_digest"],
            fields["input_digest"],
            fields["node"],
            fields["outcome"],
            fields["verifier"],
        )
        if set(map(type, own)) != _TEXT or not _plain_text(reason):
            return self._joined(fields, _BEFORE_ID), self._joined(fields, _AFTER_ID)
        criterion, criterion_digest, input_digest, node, outcome, verifier = own
        shared = self._shared_texts
        head = "".join(
            [
                '"criterion":',
                encode_basestring(criterion),
                ',"criterion_digest":',
                encode_basestring(criterion_digest),
                ',"details":',
                canonical_json(fields["details"]),
                ",",
                shared["git"],
            ]
        )
        # the members from the input digest to the plan's, and the verifier's, are the same for
        # the records of one node and outcome: each joined once per maker
        around = self._around.get((input_digest, node, outcome, verifier))
        if around is None:
            around = self._around_of(input_digest, node, outcome, verifier)
        tail = "".join(
            [
                around[0],
                "null" if reason is None else encode_basestring(reason),
                ",",
                shared["recorded_by"],
                ",",
                shared["run"],
                ',"subjects":',
                self._subjects_text(fields["subjects"]) if subjects is None else subjects,
                around[1],
            ]
        )
        return head, tail

    def _joined(self, fields: Mapping[str, Any], runs: tuple[tuple[str, ...], ...]) -> str:
        """The members of *runs* of a record's canonical text, comma-separated: a shared one
        as encoded once, the record's own fields between two shared ones encoded together
        (one object, its braces taken off: the same members in the same order)."""
        shared = self._shared_texts
        return ",".join(
            [
                shared[run[0]]
                if run[0] in shared
                else '"subjects":' + self._subjects_text(fields["subjects"])
                if run[0] == "subjects"
                else canonical_json({name: fields[name] for name in run})[1:-1]
                for run in runs
            ]
        )

    def _subjects_text(self, subjects: Mapping[str, Any]) -> str:
        """The canonical JSON of a record's *subjects*: its members in the encoder's order
        (the paths sorted: no two members share one), each ``"path":"sha256"`` encoded once
        per maker and looked up with the rest in one pass (the records of a run share most of
        their subjects: the shadowing paths, the configuration files); any member that is not
        text and text is encoded with the whole object, as it is."""
        pieces = self._pieces
        try:
            paths = sorted(subjects)
            items = list(zip(paths, map(subjects.__getitem__, paths), strict=True))
        except TypeError:  # paths that do not sort: the encoder says what it says
            return canonical_json(subjects)
        try:
            texts = list(map(pieces.__getitem__, items))
        except KeyError:  # members no record of this maker had: encoded once, and kept
            try:
                new = set(items).difference(pieces)
            except TypeError:  # a value that cannot be hashed: no text
                return canonical_json(subjects)
            for item in new:
                path, sha = item
                if type(path) is not str or type(sha) is not str:
                    return canonical_json(subjects)
                pieces[item] = encode_basestring(path) + ":" + encode_basestring(sha)
            texts = list(map(pieces.__getitem__, items))
        except TypeError:  # a value that cannot be hashed: no text
            return canonical_json(subjects)
        return "{" + ",".join(texts) + "}"

    def made_plain(self, record: Evidence, payload: dict[str, Any], text: str) -> None:
        """Called with each record made from plain values, its JSON *payload* (built from
        the values as they are: nothing dumped again) and that payload's canonical JSON
        *text*, joined from the members the record's id was computed from; a maker that
        keeps payloads overrides it."""

    def made_checked(self, record: Evidence) -> None:
        """Called with each record the record model checked (made by
        :meth:`Evidence.create`, its values not all plain); a maker that keeps payloads
        overrides it."""

    def own_files(self, node: str) -> dict[str, str | None]:
        """sha256 of the node's outputs and consumed files, from the snapshot (hashed once;
        None for a file that is missing)."""
        if node not in self._own:
            files = self.snapshot.files
            workspace = self.workspace
            self._own[node] = {
                path: files.get(path) or workspace.hash_file(path)
                for path in node_files(self.graph, node, self.snapshot)
            }
        return self._own[node]
