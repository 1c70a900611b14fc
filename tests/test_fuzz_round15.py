"""What fuzzing the fifteenth round's changes (a run's record text spliced from pieces kept
per run, node and base; a node's shared checks made once per set of test files; events sealed
by a function written once per set of given fields) checked, each kept as a test: real
sessions whose test folders sort before, between and after the subjects their records share,
nodes sharing test files, odd text, a signing key and a store already holding events store
records whose text is their canonical JSON and whose ids are their content addresses, a file
changed during the run voids the records of every node that binds it, and records spliced
with any text (lone surrogates too) are those joined member by member."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import Result, plangraph_main
from conftest import git
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_plangraph import PlanGraph
from pytest_plangraph.canonical import canonical_json, text_digest
from pytest_plangraph.judge.inputs import input_digests
from pytest_plangraph.judge.records import RecordMaker
from pytest_plangraph.plan.evidence import OUTCOMES, Evidence, evidence_id
from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.chain import event_id, seal, seal_many
from pytest_plangraph.vcs.environment import git_info, now, run_info

PLAN = """plangraph: 1
plan: round15
nodes:
  - id: a
    title: "shares its tests \u00e9"
    outputs: [out/a.txt, "data/\u00e9 q.txt"]
    acceptance:
      - {id: c0, assertion: x, verifier: {type: test}}
      - {id: c1, assertion: x, verifier: {type: test}}
      - {id: c2, assertion: x, verifier: {type: test}}
      - {id: c3, assertion: x, verifier: {type: test}}
      - {id: c4, assertion: x, verifier: {type: test, tests: ["t*/**/*.py"]}}
  - id: b
    title: no files of its own
    acceptance:
      - {id: c0, assertion: x, verifier: {type: test}}
      - {id: c1, assertion: x, verifier: {type: test}}
  - id: z.z
    title: after both
    outputs: [out/z.txt]
    acceptance:
      - {id: c0, assertion: x, verifier: {type: test}}
edges:
  - {from: a, to: z.z, type: consumes}
"""

# test folders whose paths sort before ("+p", "-d") and after ("0", "A", "t"..., "\u00e9") each
# record's own subject (the walk's quotes subject, "./::collect..."), and around the node's own
# files ("data/...", "out/...")
ACCENT = "\u00e9"
FOLDERS = ["+p", "-d", "0", "A", "tests", "tests/sub", "t\u200b", "\u00e9", "\U0001f600 d", 'q"d']

TESTS = r"""import pytest

@pytest.mark.criterion("a/c0")
@pytest.mark.criterion("b/c0")
@pytest.mark.parametrize("p", [0, 1], ids=["\ud800", "\U0001f600\\\""])
def test_shared(p):
    assert p == 0, "\udfff\u2028"

@pytest.mark.criterion("a/c1")
@pytest.mark.criterion("z.z/c0")
def test_skipped():
    pytest.skip("\x01 skipped \u00e9")

@pytest.mark.criterion("a/c2")
@pytest.mark.xfail(reason="\\ expected")
def test_xfail():
    assert False

@pytest.mark.criterion("a/c3")
@pytest.mark.criterion("b/c1")
def test_passes():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("\ud800 set-up")

@pytest.mark.criterion("a/c4")
def test_errored(broken):
    pass
"""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    as_tester(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def _project(pytester: pytest.Pytester) -> Path:
    root = pytester.path
    (root / "plangraph.yaml").write_text(PLAN, encoding="utf-8")
    for number, folder in enumerate(FOLDERS):
        (root / folder).mkdir(parents=True, exist_ok=True)
        name = f"test_{ACCENT if number % 2 else 'x'}{number}.py"
        (root / folder / name).write_text(TESTS, encoding="utf-8")
    (root / "out").mkdir()
    (root / "out" / "a.txt").write_text("made\n")
    (root / "data").mkdir()
    (root / "data" / "\u00e9 q.txt").write_text("data\n", encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "round 15")
    return root


def _stored(root: Path) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(root / ".plangraph" / "store.db")
    try:
        return con.execute("SELECT * FROM events ORDER BY seq").fetchall()
    finally:
        con.close()


def _records_sound(root: Path) -> int:
    """Every evidence event stored: its payload text is the record's canonical JSON, the
    record's id its content address, the event's id its content's; returns how many."""
    count = 0
    for row in _stored(root):
        _, stored_id, kind, node, criterion, at, by, plan_digest, payload, key = row[:10]
        if kind != "evidence":
            continue
        count += 1
        record = Evidence.from_data(json.loads(payload))
        assert canonical_json(record.to_json()) == payload
        assert record.id == evidence_id(record)
        assert (record.node, record.criterion) == (node, criterion)
        without_id = {k: v for k, v in json.loads(payload).items() if k != "id"}
        assert record.id == text_digest(canonical_json(without_id))
        event = Event(
            kind=kind,
            node=node,
            criterion=criterion,
            at=at,
            by=by,
            plan_digest=plan_digest,
            payload=json.loads(payload),
            idempotency_key=key,
        )
        assert event_id(event) == stored_id
    return count


def _answers(root: Path, env: dict[str, str] | None = None) -> list[Result]:
    return [
        plangraph_main(root, "status", "--format", "json", env=env),
        plangraph_main(root, "status", env=env),
        plangraph_main(root, "claim", "a", "--by", "tester", env=env),
    ]


def _chain_sound(root: Path, env: dict[str, str] | None = None) -> None:
    audit = plangraph_main(root, "audit", env=env)
    assert audit.code in (0, 1) and not audit.err, audit
    lines = audit.out.splitlines()
    assert lines and lines[-1].startswith("audit:"), audit
    assert all(
        line.startswith(("phantom completion:", "stale:", "needs a person:")) for line in lines[:-1]
    ), audit


@pytest.mark.parametrize("key", [None, "s\u00e9cret"])
def test_a_run_of_odd_folders_and_shared_tests_stores_sound_records(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str | None
) -> None:
    """Test folders sorting before, between and after the shared subjects, two nodes and
    many criteria binding the same test files, a node with no files, odd text in test ids
    and messages, a signing key or none, a store already holding events: every stored record
    is its canonical JSON under its content address, the chain audits clean, and the answers
    kept are the answers with every cache deleted."""
    if key is not None:
        monkeypatch.setenv("PLANGRAPH_SIGNING_KEY", key)
    root = _project(pytester)
    for _ in range(2):  # the second into a store that holds the first's events
        result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider")
        assert result.ret == 1
        assert "Traceback" not in result.stdout.str()
    stored = _stored(root)
    assert all((row[12] is not None) == (key is not None) for row in stored)
    assert _records_sound(root) == 2 * 8  # each test criterion, each run
    payloads = [json.loads(row[8]) for row in stored if row[2] == "evidence"]
    quotes = [[p for p in record["subjects"] if '"quotes":' in p] for record in payloads]
    assert all(len(found) == 1 for found in quotes)  # each record its own quotes subject
    for record in payloads:  # every test folder bound by every record of a test criterion
        assert all(
            any(path.startswith(folder + "/test_") for path in record["subjects"])
            for folder in FOLDERS
        ), record["subjects"]
    env = None if key is None else {"PLANGRAPH_SIGNING_KEY": key}
    _chain_sound(root, env)
    kept = _answers(root, env)
    kept = _answers(root, env)
    assert all(answer.code in (0, 1) and "Traceback" not in answer.err for answer in kept), [
        (answer.code, answer.out[-300:], answer.err[:300]) for answer in kept
    ]
    shutil.rmtree(root / ".plangraph" / "cache", ignore_errors=True)
    shutil.rmtree(tmp_path / "user-cache", ignore_errors=True)
    assert kept[:2] == _answers(root, env)[:2]
    _chain_sound(root, env)


def test_a_test_file_changed_during_the_run_voids_every_node_binding_it(
    pytester: pytest.Pytester,
) -> None:
    """A test that rewrites a test file (shared by two nodes and many criteria) during the
    run: every record binding that file is voided with it named, whatever node or criterion
    (the node's shared checks are made once per set of test files, not once per record);
    and a node's own output rewritten during the run voids that node's records only."""
    root = _project(pytester)
    rewrite = (
        "\n\n@pytest.mark.criterion('a/c3')\ndef test_zz_rewrites():\n"
        "    import pathlib\n"
        "    path = pathlib.Path('tests/test_x4.py')\n"
        "    path.write_text(path.read_text() + '# changed\\n')\n"
        "    pathlib.Path('out/z.txt').write_text('made late')\n"
    )
    with (root / "\U0001f600 d" / "test_x8.py").open("a", encoding="utf-8") as handle:
        handle.write(rewrite)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a test that rewrites a file")
    result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider", "-p", "no:randomly")
    assert "Traceback" not in result.stdout.str()
    records = {
        (row[3], row[4]): json.loads(row[8]) for row in _stored(root) if row[2] == "evidence"
    }
    assert len(records) == 8
    for (node, criterion), record in records.items():
        moved = record["details"].get("changed_during_run")
        if criterion == "c4" and node == "a":  # its glob binds the tests folder too
            assert moved is not None and "tests/test_x4.py" in moved
        else:
            assert moved is not None and "tests/test_x4.py" in moved, (node, criterion)
        assert record["reason"] == "ARTIFACT_CHANGED_DURING_RUN", (node, criterion)
        assert ("out/z.txt" in moved) == (node == "z.z"), (node, criterion, moved)
    _records_sound(root)
    _chain_sound(root)


class _Kept(RecordMaker):
    """A maker that keeps what it hands on of each record made from plain values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kept: list[tuple[Evidence, dict[str, Any], str]] = []

    def made_plain(self, record: Evidence, payload: dict[str, Any], text: str) -> None:
        self.kept.append((record, payload, text))


TOKEN = "step-token-endpoint"
ANY_TEXT = st.text(max_size=8)  # any code point: lone surrogates, quotes, controls


def test_records_spliced_with_any_text_are_those_joined_member_by_member(
    project: Any,
) -> None:
    """Records spliced on a base whose paths the own subject sorts before, between, after
    or equal to the start of (any text in paths, reasons and details, lone surrogates too):
    the same record, payload and text as made with their subjects merged, and the text is
    the record's canonical JSON under its content address."""
    plangraph = PlanGraph.open(project("jwt-login"))
    snapshot = plangraph.snapshot()
    shared: dict[str, Any] = {
        "snapshot": snapshot,
        "plan": plangraph.plan_ref(),
        "git": git_info(plangraph.root, plangraph.store_path),
        "run": run_info(now(), now(), "8.0"),
        "recorded_by": "c\u00e9 \U0001f600",
    }
    digests = input_digests(plangraph.graph, snapshot)
    on_base = _Kept(plangraph, digests=digests, **shared)
    merged = _Kept(plangraph, digests=digests, **shared)
    spliced = 0
    base_paths = st.sampled_from(["tests/a.py", "tests/a", "tests/b.py", "tests", "t", "~"])
    walk = 'tests/::collect{"python_files":["test_*.py"],"quotes":'
    own = (
        st.sampled_from(["tests/a.p", "tests/a.py\x00", "tests/", "", "~~", "tests/a"])
        | st.builds(lambda prefix, more: prefix + more, base_paths, ANY_TEXT)
        | st.builds(lambda ref: f'{walk}"{ref}","venv":false}}', ANY_TEXT)
    )
    sha = st.sampled_from(["absent", "a" * 64, '\\\u00e9"\ud800'])
    mapping = st.dictionaries(base_paths, sha, max_size=5)
    details = st.dictionaries(
        ANY_TEXT, ANY_TEXT | st.lists(st.dictionaries(ANY_TEXT, ANY_TEXT, max_size=2)), max_size=3
    )

    @settings(max_examples=200, deadline=None)
    @given(
        mapping,
        mapping,
        st.sampled_from([(TOKEN, "ac-http-200"), ("step-user-schema", "ac-schema-valid")]),
        st.sampled_from(sorted(OUTCOMES)),
        st.none() | ANY_TEXT,
        details,
        own,
        sha,
    )
    def check(
        before: dict[str, str],
        after: dict[str, str],
        ref: tuple[str, str],
        outcome: str,
        reason: str | None,
        detail: dict[str, Any],
        path: str,
        value: str,
    ) -> None:
        nonlocal spliced
        if path in before or path in after:
            return
        on_base.kept.clear()
        merged.kept.clear()
        base = on_base.base(ref[0], before, after)
        full = {**base.head, path: value, **after}
        try:
            two = merged.make(*ref, outcome=outcome, reason=reason, details=detail, subjects=full)
        except UnicodeEncodeError as exc:  # text UTF-8 cannot carry: refused alike
            with pytest.raises(UnicodeEncodeError) as raised:
                on_base.make(
                    *ref,
                    outcome=outcome,
                    reason=reason,
                    details=detail,
                    subjects={path: value},
                    base=base,
                )
            assert str(raised.value) == str(exc)
            return
        one = on_base.make(
            *ref,
            outcome=outcome,
            reason=reason,
            details=detail,
            subjects={path: value},
            base=base,
        )
        assert one == two and list(one.subjects.items()) == list(two.subjects.items())
        assert one.fields_set == two.fields_set and one.id == evidence_id(two)
        assert bool(on_base.kept) == bool(merged.kept)
        if on_base.kept:
            spliced += 1
            [(_, payload, text)] = on_base.kept
            assert text == merged.kept[0][2] == canonical_json(one.to_json())
            assert list(payload.items()) == list(merged.kept[0][1].items())

    check()
    assert spliced
    plangraph.close()


FIELDS = ["node", "criterion", "payload", "idempotency_key", "id", "seq", "prev", "hash"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sets(st.sampled_from(FIELDS)),
            ANY_TEXT.filter(lambda text: text.isprintable() or not text),
            st.dictionaries(ANY_TEXT, ANY_TEXT | st.integers() | st.none(), max_size=3),
        ),
        min_size=1,
        max_size=6,
    ),
    st.none() | st.binary(min_size=1, max_size=8),
)
def test_events_of_any_given_fields_sealed_together_are_sealed_one_by_one(
    batch: list[tuple[set[str], str, dict[str, Any]]], key: bytes | None
) -> None:
    """Events given any set of the optional fields (the chain's among them), with any text,
    sealed together: each the event, fields given, id, link and signature that sealing it
    on its own gives, whatever events of other given sets come between."""
    events = []
    for number, (names, text, payload) in enumerate(batch):
        values: dict[str, Any] = {
            "kind": "claim",
            "at": f"2026-01-01T00:00:{number:02d}Z",
            "by": "by " + text,
            "plan_digest": "d",
        }
        chosen = {
            "node": "n" + text,
            "criterion": "c" + text,
            "payload": payload,
            "idempotency_key": "k" + text,
            "id": "given",
            "seq": 7,
            "prev": "p",
            "hash": "h",
        }
        values.update({name: chosen[name] for name in names})
        events.append(Event(**values))
    fresh = [(event, event_id(event)) for event in events]
    together = seal_many(fresh, 11, "e" * 64, key)
    single, prev = [], "e" * 64
    for seq, (event, content_id) in enumerate(fresh, start=12):
        single.append(seal(event, seq, prev, key, content_id))
        prev = single[-1].hash
    assert together == single
    assert [(e.to_json(), e.fields_set) for e in together] == [
        (e.to_json(), e.fields_set) for e in single
    ]
    for made, event in zip(together, events, strict=True):
        assert made.payload == event.payload
        if "payload" not in event.fields_set:  # a new value made for each event, as built
            assert made.payload is not event.payload


def _contents(root: Path) -> list[dict[str, Any]]:
    """The evidence records stored, without what differs from run to run (the run, the id,
    the paths of the temporary folder pytester makes inside the project for each run)."""
    found = []
    for row in _stored(root):
        if row[2] == "evidence":
            record = json.loads(row[8])
            del record["run"], record["id"]
            subjects = record["subjects"]  # not the folders pytester makes for each run
            record["subjects"] = {p: v for p, v in subjects.items() if "runpytest-" not in p}
            found.append(record)
    return sorted(found, key=lambda record: (record["node"], record["criterion"]))


@pytest.mark.parametrize("options", [["-n", "2"], ["--plangraph-coverage"]])
def test_records_of_workers_or_coverage_are_those_of_one_process(
    pytester: pytest.Pytester, options: list[str]
) -> None:
    """The same project run in one process and with two workers: the same records (nodes
    sharing test files, odd folders around each record's own subject), apart from the run's
    own members; with coverage (records built member by member), each record's text is its
    canonical JSON under its address, as in one process."""
    root = _project(pytester)
    pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    plain = _contents(root)
    assert _records_sound(root) == 8
    shutil.rmtree(root / ".plangraph")
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", *options)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert _records_sound(root) == 8
    if options == ["--plangraph-coverage"]:  # records of their own kind: sound, not compared
        return
    other = _contents(root)
    for mine, theirs in zip(other, plain, strict=True):
        extra = {p: v for p, v in mine["subjects"].items() if theirs["subjects"].get(p) != v}
        lost = {p: v for p, v in theirs["subjects"].items() if mine["subjects"].get(p) != v}
        assert (extra, lost) == ({}, {})
        assert {k: v for k, v in mine.items() if v != theirs[k]} == {}, theirs


SHADOWED = """plangraph: 1
plan: shadowed
nodes:
  - id: s
    title: its output would shadow the tests' modules
    outputs: [tests/conftest.py]
    acceptance:
      - {id: c0, assertion: x, verifier: {type: test}}
      - {id: c1, assertion: x, verifier: {type: test}}
  - id: t
    title: shares the test file
    acceptance:
      - {id: c0, assertion: x, verifier: {type: test}}
"""


def test_a_node_whose_output_would_shadow_the_tests_and_one_sharing_them(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """A node whose own output is a shadowing path of the test modules, absent (its records
    built member by member), and a node sharing its test file (spliced): every record binds
    that path as absent, and once the file appears every node is stale, the kept answer
    as the answer with every cache deleted."""
    root = pytester.path
    (root / "plangraph.yaml").write_text(SHADOWED, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text(
        "import pytest\n\n@pytest.mark.criterion('s/c0')\n@pytest.mark.criterion('s/c1')\n"
        "@pytest.mark.criterion('t/c0')\ndef test_passes():\n    pass\n"
    )
    (root / "pytest.ini").write_text("[pytest]\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "shadowed")
    result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider")
    assert result.ret == 0
    records = [json.loads(row[8]) for row in _stored(root) if row[2] == "evidence"]
    assert len(records) == 3
    assert all(record["subjects"]["tests/conftest.py"] == "absent" for record in records)
    assert _records_sound(root) == 3
    (root / "tests" / "conftest.py").write_text("x = 1\n")
    kept = plangraph_main(root, "status", "--format", "json")
    kept = plangraph_main(root, "status", "--format", "json")
    states = {node["id"]: node["status"] for node in kept.json()["nodes"]}
    assert states == {"s": "stale", "t": "stale"}
    shutil.rmtree(root / ".plangraph" / "cache", ignore_errors=True)
    shutil.rmtree(tmp_path / "user-cache", ignore_errors=True)
    assert plangraph_main(root, "status", "--format", "json") == kept
