"""A run's evidence records spliced from pieces of text kept per maker (DESIGN §4).

The records of one ``pytest --plangraph`` run share most of their canonical JSON: the plan,
git and run members, each node's own files and the subjects its test files bind. A record
made on a :class:`SubjectsBase` (those subjects, their members encoded once) with one own
subject — nearly every record of a run — has its text spliced from those pieces
(:meth:`Splicing._spliced`), and its :class:`~pytest_plangraph.plan.evidence.Evidence` stored
straight into its slots: the same record, payload and text, byte for byte, as
:class:`~pytest_plangraph.judge.records.RecordMaker` joins member by member (tests compare
both). :func:`is_plain` says which values a record may be joined from as they are.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any

from ..canonical import canonical_json, text_digest
from ..plan.evidence import OUTCOMES, Evidence
from ..plan.frozen import builder_source

_TEXT = {str}
"""The types of a record's own values joined in one pass."""
_EVERY_FIELD = frozenset(Evidence.FIELDS)
"""The ``fields_set`` of a record made from every field (as the record builder makes it
of the fields :meth:`~pytest_plangraph.judge.records.RecordMaker._made` maps)."""
_new = object.__new__
_TWINS: list[type] = []


def _twin() -> type:
    """The class a record is stored into before it becomes an :class:`Evidence` (the
    builder's, :func:`~pytest_plangraph.plan.frozen.builder_source`), made once."""
    if not _TWINS:
        twin = builder_source(Evidence)[1]["twin"]
        if twin is None or set(Evidence.FIELDS) != _SPLICED_FIELDS:
            raise AssertionError("the records spliced store every field of Evidence")
        _TWINS.append(twin)
    return _TWINS[0]


BODY_FIELDS = (
    "plan",
    "node",
    "criterion",
    "criterion_digest",
    "input_digest",
    "verifier",
    "outcome",
    "reason",
    "details",
    "subjects",
    "git",
    "run",
    "recorded_by",
)
"""The fields of an evidence record's content address (every field but ``id``)."""
_SPLICED_FIELDS = {"id", *BODY_FIELDS}
"""The fields :meth:`Splicing._spliced` stores (a field added to :class:`Evidence` and
not there is told at once, not left out of the records)."""
_QUOTES_MEMBER = '"quotes":'
"""Where the path of a walk's quotes subject stops being the same for every criterion."""


class SubjectsBase:
    """Subjects many records of one maker share, kept with their canonical JSON members: a
    node's own files and the subjects *before* each record's own (those a set of test files
    binds), and those *after* them (the shadowing paths of its modules). Made once by
    :meth:`RecordMaker.base`; a record made on it adds its own few subjects in between
    (:meth:`RecordMaker.make`), and its subjects' text is the base's members with its own
    put in their sorted places, not every member looked up and sorted again."""

    __slots__ = ("after", "head", "joined", "merged", "nones", "offsets", "paths", "pieces")

    def __init__(
        self,
        head: dict[str, str | None],
        after: Mapping[str, str | None],
        paths: list[str] | None,
        pieces: list[str],
    ) -> None:
        self.head = head
        """The node's own files, then the subjects before a record's own."""
        self.after = after
        self.merged = {**head, **after}
        self.nones = None in head.values() or None in after.values()
        """Whether a subject of the base names a missing file (None): else a record made on
        it has one only among its own subjects."""
        self.paths: list[str] | None = None
        """The paths of :attr:`merged` that name a file (a value that is not None), sorted;
        None when a path or value is not text (a record's text is then joined in full)."""
        self.pieces: list[str] = []
        """``"path":"sha256"`` of each of :attr:`paths`, in that order."""
        self.joined = ""
        """:attr:`pieces` comma-separated."""
        self.offsets: list[int] = []
        """Where each of :attr:`pieces` begins in :attr:`joined`: a record's own member is
        put in its sorted place by cutting the text there, not by joining every piece."""
        if paths is not None:
            self.spelled(paths, pieces)

    def spelled(self, paths: list[str], pieces: list[str]) -> None:
        """Keep the text of the base's members: *paths* (:attr:`paths`) and the member of
        each (*pieces*), with their joined text and where each begins in it, set together."""
        self.paths = paths
        self.pieces = pieces
        self.joined = ",".join(pieces)
        offsets = self.offsets = []
        at = 0
        for piece in pieces:
            offsets.append(at)
            at += len(piece) + 1


class Splicing:
    """The splicing of :class:`~pytest_plangraph.judge.records.RecordMaker`: what it keeps
    (set by its constructor) and the methods that splice a record from it."""

    criteria: Mapping[tuple[str, str], str]
    digests: Mapping[str, str]
    shared: dict[str, Any]
    shared_json: dict[str, Any]
    _shared_texts: dict[str, str]
    _pieces: dict[tuple[str, str], str]
    _around: dict[tuple[str, str, str, str], tuple[str, str]]
    _heads: dict[str, str]
    _middle: str

    def made_plain(self, record: Evidence, payload: dict[str, Any], text: str) -> None:
        """See :meth:`~pytest_plangraph.judge.records.RecordMaker.made_plain`."""

    def _spliced(
        self,
        node: str,
        criterion: str,
        definition: Any,
        outcome: str,
        reason: str | None,
        details: Mapping[str, Any],
        subjects: Mapping[str, str | None],
        base: SubjectsBase,
    ) -> Evidence | None:
        """:meth:`_made` of a record made on *base* (all text, no missing file) with one own
        subject that the base does not hold, every value plain (a run's records, nearly all):
        its text spliced from pieces kept per maker — the members from the input digest to
        the reason once per node and outcome, those from ``recorded_by`` to the subjects once
        per maker, the base's subjects joined once per base and cut where the own member
        sorts — and its own members (a criterion has one record a run), and its fields
        given as :meth:`_made` gives them. None when the record is not of that kind (then
        :meth:`_made` makes it member by member)."""
        [(path, sha)] = subjects.items()
        if (
            type(path) is not str
            or type(sha) is not str
            or path in base.merged
            or outcome not in OUTCOMES
            or not (reason is None or type(reason) is str)
            or not is_plain(details)
        ):
            return None
        criterion_digest = self.criteria[(node, criterion)]
        if type(criterion_digest) is not str:
            return None
        input_digest = self.digests[node]
        verifier = definition.verifier.type
        around = self._around.get((input_digest, node, outcome, verifier))
        if around is None:
            if type(input_digest) is not str or type(verifier) is not str:
                return None
            around = self._around_of(input_digest, node, outcome, verifier)
        piece = self._pieces.get((path, sha))
        if piece is None:
            piece = self._pieces[(path, sha)] = self._path_text(path) + ":" + encode_basestring(sha)
        at = bisect_left(base.paths, path)  # type: ignore[arg-type]
        if at == len(base.offsets):  # after every member of the base (or none)
            joined, before, after = base.joined, "," if base.joined else "", ""
        else:
            cut = base.offsets[at]
            joined, before, after = base.joined[:cut], "", "," + base.joined[cut:]
        copied = dict(details)
        head = "".join(
            [
                '"criterion":',
                encode_basestring(criterion),
                ',"criterion_digest":',
                encode_basestring(criterion_digest),
                ',"details":',
                canonical_json(copied),
                ",",
                self._shared_texts["git"],
            ]
        )
        tail = "".join(
            [
                around[0],
                "null" if reason is None else encode_basestring(reason),
                self._middle,
                joined,
                before,
                piece,
                after,
                "}",
                around[1],
            ]
        )
        subjects_of = {**base.head, **subjects, **base.after}
        record_id = text_digest("".join(("{", head, ",", tail, "}")))
        shared, json = self.shared, self.shared_json
        # stored straight into the slots, every field given (what the builder makes of the
        # fields that _made maps), and the payload in the order of _made's, the shared values
        # in their JSON form
        record: Any = _new(_twin())
        record.id = record_id
        record.plan = shared["plan"]
        record.node = node
        record.criterion = criterion
        record.criterion_digest = criterion_digest
        record.input_digest = input_digest
        record.verifier = verifier
        record.outcome = outcome
        record.reason = reason
        record.details = copied
        record.subjects = subjects_of
        record.git = shared["git"]
        record.run = shared["run"]
        record.recorded_by = shared["recorded_by"]
        record.fields_set = _EVERY_FIELD
        record.__class__ = Evidence
        payload = {
            "plan": json["plan"],
            "git": json["git"],
            "run": json["run"],
            "recorded_by": shared["recorded_by"],
            "node": node,
            "criterion": criterion,
            "criterion_digest": criterion_digest,
            "input_digest": input_digest,
            "verifier": verifier,
            "outcome": outcome,
            "reason": reason,
            "details": copied,
            "subjects": subjects_of,
            "id": record_id,
        }
        text = "".join(["{", head, ',"id":"', record_id, '",', tail, "}"])
        made: Evidence = record
        self.made_plain(made, payload, text)
        return made

    def _path_text(self, path: str) -> str:
        """``encode_basestring(path)``, the text before a member ``"quotes":`` in it (what a
        walk's quotes subject holds before the criterion's reference: the same for every
        criterion of the walk) encoded once per maker. The escapes of a JSON string are
        character by character, so the text of two parts joined is the two texts joined
        (their quotes between them taken off)."""
        cut = path.find(_QUOTES_MEMBER)
        if cut < 0:
            return encode_basestring(path)
        cut += len(_QUOTES_MEMBER)
        head = path[:cut]
        text = self._heads.get(head)
        if text is None:
            text = self._heads[head] = encode_basestring(head)[:-1]
        return text + encode_basestring(path[cut:])[1:]

    def _around_of(
        self, input_digest: str, node: str, outcome: str, verifier: str
    ) -> tuple[str, str]:
        """The text of a record's members from ``input_digest`` to ``reason`` (its value left
        out) and of its ``verifier``, joined once per maker for these values (all text)."""
        around = self._around[(input_digest, node, outcome, verifier)] = (
            "".join(
                [
                    '"input_digest":',
                    encode_basestring(input_digest),
                    ',"node":',
                    encode_basestring(node),
                    ',"outcome":',
                    encode_basestring(outcome),
                    ",",
                    self._shared_texts["plan"],
                    ',"reason":',
                ]
            ),
            ',"verifier":' + encode_basestring(verifier),
        )
        return around


def _plain_text(value: object) -> bool:
    return value is None or type(value) is str


def is_plain(value: object) -> bool:
    """True when *value* is JSON made of dicts with text keys, lists, text, integers, finite
    floats, booleans and None, so its canonical JSON is what pydantic's JSON dump gives."""
    kind = type(value)
    if kind is dict:  # first: a record's details
        if not _TEXT.issuperset(map(type, value)):  # type: ignore[call-overload]
            return False
        items = value.values()  # type: ignore[attr-defined]
    elif kind is list:
        items = value
    elif value is None or kind in _LEAVES:
        return True
    elif kind is float:
        return math.isfinite(value)  # type: ignore[arg-type]
    else:
        return False
    kinds = set(map(type, items))
    if _LEAVES.issuperset(kinds):  # text, whole numbers, booleans, None: in C
        return True
    if kinds == _DICT:  # as a record's details: objects of text, looked at here
        for item in items:
            if not (
                _TEXT.issuperset(map(type, item)) and _LEAVES.issuperset(map(type, item.values()))
            ):
                break
        else:
            return True
    return all(map(is_plain, items))  # no generator: most hold one nested object


_DICT = {dict}


_LEAVES = frozenset((str, int, bool, type(None)))
"""The types of the values :func:`is_plain` takes as they are (no float: it must be finite)."""
