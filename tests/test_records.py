"""Evidence records built in a batch (as PlanGraph.make_evidence and pytest runs build them)
are the records Evidence.create builds and validates field by field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pytest_plangraph import PlanGraph
from pytest_plangraph.canonical import canonical_json, digest
from pytest_plangraph.errors import UsageError
from pytest_plangraph.judge import records
from pytest_plangraph.judge.inputs import input_digests
from pytest_plangraph.judge.records import RecordMaker, is_plain
from pytest_plangraph.plan.boundary import Evidence as EvidenceModel
from pytest_plangraph.plan.evidence import OUTCOMES, Evidence, checked_evidence, evidence_id
from pytest_plangraph.plan.model import criterion_digest
from pytest_plangraph.vcs.environment import git_info, now, run_info

TOKEN = "step-token-endpoint"

CASES: list[tuple[str, str, str, str | None, dict[str, Any], dict[str, str | None]]] = [
    (TOKEN, "ac-http-200", "passed", None, {"tests": {"t::a": "passed"}}, {}),
    (
        TOKEN,
        "ac-invalid-401",
        "error",
        "ARTIFACT_CHANGED_DURING_RUN",
        {"tests": {"t::b": "passed"}, "changed_during_run": ["src/auth/login.py"], "n": 1.5},
        {"tests/test_login.py": "a" * 64, "gone.txt": None},
    ),
    ("step-user-schema", "ac-schema-valid", "failed", "SCHEMA", {"message": "ü", "ok": False}, {}),
    # not plain JSON: built through Evidence.create, still the same record
    (TOKEN, "ac-http-200", "passed", None, {"tests": ("t::a", "t::b"), "path": Path("x")}, {}),
]


@pytest.fixture
def plangraph(project: Any) -> PlanGraph:
    return PlanGraph.open(project("jwt-login"))


def _maker(plangraph: PlanGraph) -> tuple[RecordMaker, dict[str, Any]]:
    snapshot = plangraph.snapshot()
    shared = {
        "snapshot": snapshot,
        "plan": plangraph.plan_ref(),
        "git": git_info(plangraph.root, plangraph.store_path),
        "run": run_info(now(), now(), "8.0"),
        "recorded_by": "ci",
    }
    digests = input_digests(plangraph.graph, snapshot)
    maker = RecordMaker(plangraph, digests=digests, **shared)
    return maker, {**shared, "digests": digests}


def _validated(
    plangraph: PlanGraph,
    node: str,
    criterion: str,
    outcome: str,
    reason: str | None,
    details: dict[str, Any],
    subjects: dict[str, str | None],
    shared: dict[str, Any],
) -> Evidence:
    """The record built field by field through pydantic's validation: the reference."""
    snapshot = shared["snapshot"]
    definition = plangraph.graph.nodes[node].criterion(criterion)
    assert definition is not None
    hashes = {
        path: snapshot.files.get(path) or plangraph.workspace.hash_file(path)
        for path in plangraph.node_files(node, snapshot)
    }
    hashes.update(subjects)
    fields = dict(
        plan=shared["plan"],
        node=node,
        criterion=criterion,
        criterion_digest=criterion_digest(node, definition),
        input_digest=shared["digests"][node],
        verifier=definition.verifier.type,
        outcome=outcome,
        reason=reason,
        details=dict(details),
        subjects={path: sha for path, sha in hashes.items() if sha is not None},
        git=shared["git"],
        run=shared["run"],
        recorded_by=shared["recorded_by"],
    )
    data = {k: v.to_json() if hasattr(v, "to_json") else v for k, v in fields.items()}
    draft = EvidenceModel.model_validate({**data, "id": ""}).model_dump(mode="json")
    draft["id"] = digest({k: v for k, v in draft.items() if k != "id"})
    return Evidence.from_data(draft)


@pytest.mark.parametrize("case", CASES)
def test_batch_records_equal_make_evidence(plangraph: PlanGraph, case: tuple[Any, ...]) -> None:
    node, criterion, outcome, reason, details, subjects = case
    maker, shared = _maker(plangraph)
    ours = maker.make(
        node, criterion, outcome=outcome, reason=reason, details=details, subjects=subjects
    )
    theirs = _validated(plangraph, node, criterion, outcome, reason, details, subjects, shared)
    single = plangraph.make_evidence(
        node,
        criterion,
        outcome=outcome,
        reason=reason,
        details=details,
        subjects=subjects,
        **shared,
    )
    assert single == ours
    assert ours.id == theirs.id == evidence_id(theirs)
    assert canonical_json(ours.to_json()) == canonical_json(theirs.to_json())
    assert ours == theirs
    assert "gone.txt" not in ours.subjects
    plangraph.close()


class _Kept(RecordMaker):
    """A maker that keeps what it hands on of each record made from plain values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kept: list[tuple[Evidence, dict[str, Any], str]] = []

    def made_plain(self, record: Evidence, payload: dict[str, Any], text: str) -> None:
        self.kept.append((record, payload, text))


TEXT = st.text(max_size=10)  # any code point: escapes, quotes, non-ASCII, lone surrogates
PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)


def test_the_text_joined_by_runs_is_the_records_canonical_json(plangraph: PlanGraph) -> None:
    """A record made from plain values: its text, joined in one pass from the members every
    record shares (encoded once) and its own members (each text encoded by the encoder's
    string function), is its canonical JSON and the text joined run by run (each run of own
    members encoded as one object); its payload is its JSON form; it is the record
    ``Evidence.create`` makes, every field given (generated details, subjects, reasons)."""
    _, shared = _maker(plangraph)
    kept = _Kept(
        plangraph,
        digests=shared["digests"],
        **{key: shared[key] for key in ("snapshot", "plan", "git", "run", "recorded_by")},
    )

    @settings(max_examples=150, deadline=None)
    @given(
        st.sampled_from([(TOKEN, "ac-http-200"), ("step-user-schema", "ac-schema-valid")]),
        st.sampled_from(sorted(OUTCOMES)),
        st.none() | TEXT,
        st.dictionaries(TEXT, PLAIN, max_size=4),
        st.dictionaries(TEXT, st.none() | st.sampled_from(["absent", "a" * 64]), max_size=5),
    )
    def check(
        ref: tuple[str, str],
        outcome: str,
        reason: str | None,
        details: dict[str, Any],
        subjects: dict[str, str | None],
    ) -> None:
        kept.kept.clear()
        made = kept.make(*ref, outcome=outcome, reason=reason, details=details, subjects=subjects)
        [(record, payload, text)] = kept.kept
        assert record is made
        assert text == canonical_json(record.to_json())
        assert payload == record.to_json()
        assert record.fields_set == frozenset(Evidence.FIELDS)
        fields = {name: getattr(record, name) for name in Evidence.FIELDS if name != "id"}
        assert record == Evidence.create(**fields)
        # the one join of the members in canonical order is the join run by run
        assert kept._parts(fields) == (
            kept._joined(fields, records._BEFORE_ID),
            kept._joined(fields, records._AFTER_ID),
        )

    check()
    plangraph.close()


def test_subjects_joined_from_members_kept_are_their_canonical_json(
    plangraph: PlanGraph,
) -> None:
    """The subjects' text joined from the members the maker keeps (each encoded once, looked
    up in one pass) is their canonical JSON, made again from the kept members (a second record
    binding the same paths) and with a member that is not text, hashable or not (then encoded
    whole)."""
    maker, _ = _maker(plangraph)

    @settings(max_examples=200, deadline=None)
    @given(
        st.lists(
            st.dictionaries(
                TEXT, TEXT | st.integers() | st.none() | st.lists(TEXT, max_size=2), max_size=6
            )
        )
    )
    def check(batch: list[dict[str, Any]]) -> None:
        for subjects in [*batch, *batch]:
            assert maker._subjects_text(subjects) == canonical_json(subjects)

    check()
    plangraph.close()


def test_a_record_made_on_a_base_is_the_record_made_with_its_subjects_merged(
    plangraph: PlanGraph,
) -> None:
    """A record made on a :class:`SubjectsBase` (a node's own files, the subjects before the
    record's own, those after them) is, byte for byte, the record made with the three merged
    in that order: its fields, its payload and its text (generated paths and values, own
    subjects that the base holds already, none, several, missing files, values not text)."""
    _, shared = _maker(plangraph)
    makers = [
        _Kept(
            plangraph,
            digests=shared["digests"],
            **{key: shared[key] for key in ("snapshot", "plan", "git", "run", "recorded_by")},
        )
        for _ in range(2)
    ]
    on_base, merged = makers
    paths = st.sampled_from(["a.py", "b/c.py", "src/auth/login.py", "z", "é", 'q"x', "m"])
    values = st.none() | st.sampled_from(["absent", "a" * 64, "b" * 64]) | st.integers(0, 2)
    mapping = st.dictionaries(paths | TEXT, values, max_size=4)

    @settings(max_examples=200, deadline=None)
    @given(
        st.sampled_from([(TOKEN, "ac-http-200"), ("step-user-schema", "ac-schema-valid")]),
        st.sampled_from(["passed", "error"]),
        mapping,
        mapping,
        mapping,
    )
    def check(
        ref: tuple[str, str],
        outcome: str,
        before: dict[str, Any],
        own: dict[str, Any],
        after: dict[str, Any],
    ) -> None:
        on_base.kept.clear()
        merged.kept.clear()
        base = on_base.base(ref[0], before, after)
        details = {"tests": {"t::a": outcome}}
        one = on_base.make(
            *ref, outcome=outcome, reason=None, details=details, subjects=own, base=base
        )
        full = {**before, **own, **after}
        two = merged.make(*ref, outcome=outcome, reason=None, details=details, subjects=full)
        assert one == two and list(one.subjects.items()) == list(two.subjects.items())
        assert on_base.kept == merged.kept or (not on_base.kept and not merged.kept)
        if on_base.kept:  # made from plain values: the same payload and text
            [(_, payload, text)] = on_base.kept
            assert text == merged.kept[0][2] == canonical_json(one.to_json())
            assert payload == merged.kept[0][1]

    check()
    plangraph.close()


def test_the_batch_checks_names_and_outcomes(plangraph: PlanGraph) -> None:
    maker, _ = _maker(plangraph)
    with pytest.raises(UsageError, match="no criterion 'nope'"):
        maker.make(TOKEN, "nope", outcome="passed", reason=None, details={}, subjects={})
    with pytest.raises(UsageError, match="unknown node 'nope'"):
        maker.make("nope", "ac-http-200", outcome="passed", reason=None, details={}, subjects={})
    with pytest.raises(UsageError, match="must be text"):
        maker.make(TOKEN, 7, outcome="passed", reason=None, details={}, subjects={})  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        maker.make(TOKEN, "ac-http-200", outcome="green", reason=None, details={}, subjects={})
    plangraph.close()


def test_own_files_are_hashed_once_per_run(plangraph: PlanGraph) -> None:
    maker, _ = _maker(plangraph)
    login = Path(plangraph.root, "src/auth/login.py")
    first = maker.make(TOKEN, "ac-http-200", outcome="passed", reason=None, details={}, subjects={})
    login.write_text("changed during the run\n", encoding="utf-8")
    second = maker.make(
        TOKEN, "ac-invalid-401", outcome="passed", reason=None, details={}, subjects={}
    )
    # both records of the run bind the file as the end-of-run snapshot saw it
    assert first.subjects["src/auth/login.py"] == second.subjects["src/auth/login.py"]
    plangraph.close()


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        ({"a": [1, "b", None, True, 2.5]}, True),
        ({"a": (1, 2)}, False),
        ({1: "a"}, False),
        ({"a": float("inf")}, False),
        ({"a": Path("x")}, False),
    ],
)
def test_is_plain(value: object, plain: bool) -> None:
    assert is_plain(value) is plain


def _plain_one_by_one(value: object) -> bool:
    """:func:`is_plain` as it was written before its types were looked at together: each
    value and key on its own."""
    import math

    kind = type(value)
    if value is None or kind in (str, int, bool):
        return True
    if kind is float:
        return math.isfinite(value)  # type: ignore[arg-type]
    if kind is list:
        return all(_plain_one_by_one(item) for item in value)  # type: ignore[attr-defined]
    if kind is dict:
        return all(
            type(key) is str and _plain_one_by_one(item)
            for key, item in value.items()  # type: ignore[attr-defined]
        )
    return False


class _Text(str):
    """Text that is not a ``str`` itself."""


@settings(max_examples=400, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text(max_size=3)
        | st.builds(_Text, st.text(max_size=2))
        | st.tuples(st.integers()),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.text(max_size=2) | st.builds(_Text, st.text(max_size=2)) | st.integers(),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_is_plain_looks_at_the_types_together_as_one_by_one(value: object) -> None:
    """The types of a list's items and of a dict's keys and values are looked at together
    (in C) before any is looked at on its own: the answer is the one-by-one answer."""
    assert is_plain(value) is _plain_one_by_one(value)


def test_a_record_stored_before_the_interpreter_flags_keeps_its_content_address(
    plangraph: PlanGraph,
) -> None:
    # records of earlier versions have no run.optimize or run.assert_mode: read again, they
    # must keep their id, and `record()` must still take them
    common: dict[str, Any] = {"reason": None, "details": {}, "subjects": {}, "recorded_by": "t"}
    old = plangraph.make_evidence(
        TOKEN, "ac-http-200", outcome="passed", run=run_info(now(), now()), **common
    )
    payload = old.to_json()
    assert set(payload["run"]) == {"id", "started", "finished", "python", "pytest", "plugin", "ci"}
    read = checked_evidence(payload)
    assert (read.run.optimize, read.run.assert_mode) == (None, None)
    assert read.to_json() == payload and evidence_id(read) == read.id
    plangraph.record([read])
    flagged = run_info(now(), now(), "9.0", optimize=1, assert_mode="plain")
    new = plangraph.make_evidence(TOKEN, "ac-http-200", outcome="failed", run=flagged, **common)
    assert (new.to_json()["run"]["optimize"], new.run.assert_mode) == (1, "plain")
    assert new.id == evidence_id(new) != read.id
    plangraph.close()


def test_records_spliced_on_a_base_are_those_joined_member_by_member(
    plangraph: PlanGraph,
) -> None:
    """A run's records (made on a base with one own subject the base does not hold, every
    value plain) have their text spliced from pieces kept per criterion, per node and
    outcome, per base, and their own subject's path encoded in two parts around a walk's
    ``"quotes":`` member: several records made on one base, with the kept pieces reused, are
    byte for byte the records made with their subjects merged (fields, payload, text, id)."""
    _, shared = _maker(plangraph)
    makers = [
        _Kept(
            plangraph,
            digests=shared["digests"],
            **{key: shared[key] for key in ("snapshot", "plan", "git", "run", "recorded_by")},
        )
        for _ in range(2)
    ]
    on_base, merged = makers
    spliced: list[Evidence] = []
    splice = on_base._spliced

    def counted(*args: Any) -> Evidence | None:
        made = splice(*args)
        if made is not None:
            spliced.append(made)
        return made

    on_base._spliced = counted  # type: ignore[method-assign]
    walk = 'tests/::collect{"python_files":["test_*.py"],"quotes":'
    text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=10)  # UTF-8 text
    paths = st.sampled_from(["a.py", "src/auth/login.py", "z", "é", 'q"x', "", walk]) | text
    own_paths = paths | st.builds(lambda ref: f'{walk}"{ref}","venv":false}}', text)
    sha = st.sampled_from(["absent", "a" * 64, "b" * 64, 'x"\\y'])
    mapping = st.dictionaries(paths, sha, max_size=4)
    refs = st.sampled_from(
        [(TOKEN, "ac-http-200"), (TOKEN, "ac-invalid-401"), ("step-user-schema", "ac-schema-valid")]
    )
    record = st.tuples(
        refs,
        st.sampled_from(sorted(OUTCOMES)),
        st.none() | text,
        st.dictionaries(text, st.dictionaries(text, text, max_size=2) | PLAIN, max_size=3),
        own_paths,
        sha,
    )

    @settings(max_examples=150, deadline=None)
    @given(mapping, mapping, st.lists(record, min_size=1, max_size=4))
    def check(before: dict[str, str], after: dict[str, str], batch: list[Any]) -> None:
        bases: dict[str, Any] = {}
        for ref, outcome, reason, details, path, value in batch:
            if path in before or path in after:
                continue
            on_base.kept.clear()
            merged.kept.clear()
            base = bases.get(ref[0]) or bases.setdefault(
                ref[0], on_base.base(ref[0], before, after)
            )
            own = {path: value}
            one = on_base.make(
                *ref, outcome=outcome, reason=reason, details=details, subjects=own, base=base
            )
            full = {**base.head, **own, **after}
            two = merged.make(*ref, outcome=outcome, reason=reason, details=details, subjects=full)
            assert one == two and list(one.subjects.items()) == list(two.subjects.items())
            assert type(one) is Evidence and one.fields_set == two.fields_set
            assert one.id == evidence_id(two)
            if merged.kept:  # made from plain values (text that UTF-8 can carry)
                [(_, payload, text)] = on_base.kept
                assert text == merged.kept[0][2] == canonical_json(one.to_json())
                assert payload == merged.kept[0][1]
                assert list(payload) == list(merged.kept[0][1])

    check()
    assert spliced  # the records were spliced
    plangraph.close()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=8), st.text(max_size=8), st.text(max_size=8))
def test_a_path_encoded_in_two_parts_is_its_json_string(head: str, ref: str, tail: str) -> None:
    """The text of a subject's path encoded in two parts around a ``"quotes":`` member (the
    first part kept per maker) is the path's JSON string, with the marker anywhere or not at
    all, and twice (the kept part reused)."""
    from json.encoder import encode_basestring

    maker = object.__new__(RecordMaker)
    maker._heads = {}
    for path in (head + '"quotes":' + ref + tail, head + ref, head + '"quotes":' + tail):
        assert maker._path_text(path) == encode_basestring(path)
        assert maker._path_text(path) == encode_basestring(path)


def test_a_base_made_with_its_members_keeps_where_each_begins(plangraph: PlanGraph) -> None:
    """A subjects base keeps its members' joined text with where each member begins in it,
    whether the maker spelled them or they were given when it was made."""
    from pytest_plangraph.judge.splicing import SubjectsBase

    maker, _ = _maker(plangraph)
    made = maker.base(TOKEN, {"b.py": "a" * 64, 'q"x': "absent"}, {"z": "b" * 64})
    given = SubjectsBase(made.head, made.after, made.paths, made.pieces)
    assert made.paths is not None and len(made.pieces) >= 3
    for base in (made, given):
        assert base.joined == ",".join(made.pieces)
        assert len(base.offsets) == len(made.pieces)
        pairs = list(zip(made.pieces, base.offsets, strict=True))
        assert all(base.joined.startswith(piece, at) for piece, at in pairs)
        assert all(base.joined[at - 1] == "," for at in base.offsets[1:])
    plangraph.close()
