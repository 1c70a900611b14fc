"""A ``criterion`` marker added to a test file the run collected, whose tests verified nothing.

The walk of what a run could collect binds the names of the files under its folders, not their
bytes: a failing test carrying ``@pytest.mark.criterion("step-a/ac-pattern")`` added to an
existing test file that held no test of that criterion changes no name. So each record of a
``test`` criterion also binds which collected test modules quote its reference (``"n/c"`` or
``'n/c'``, :func:`pytest_plangraph.vcs.quotes.quoted_refs`): a key of the folder's walk with
``"quotes"`` in its settings, whose value is the digest of that list. Adding the marker changes
the list of that criterion alone.

Each case runs real pytest sessions (``pytester``) in a real git repository, and the real
``plangraph`` command.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph
from glob_helpers import SETTINGS, statuses, walks_of, write
from plugin_helpers import latest, make_project

import pytest_plangraph.vcs.quotes as quotes_module
from pytest_plangraph.vcs.quotes import (
    CollectValues,
    quoted_reference,
    quoted_refs,
    quotes_key,
)
from pytest_plangraph.vcs.testglob import collect_key, is_collect_key

OTHER = "tests/test_other.py"
OTHER_TEXT = "def test_other():\n    assert True\n"
"""A collected test file none of whose tests verifies a criterion: no record binds its bytes."""

MARKED = """

@pytest.mark.criterion("REF")
def test_added_and_broken():
    assert False, "the code is broken now"
"""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def recorded(pytester: pytest.Pytester, *args: str) -> Path:
    """The demo project with :data:`OTHER` beside its tests, recorded complete."""
    text = "import pytest\n\n" + OTHER_TEXT
    root = make_project(pytester, files={OTHER: text})
    pytester.runpytest("--plangraph", *args).assert_outcomes(passed=5)
    assert statuses(root)[0] == "completed"
    return root


def add_marked(root: Path, ref: str) -> None:
    with open(root / OTHER, "a", encoding="utf-8") as handle:
        handle.write(MARKED.replace("REF", ref))


# --- the quoted references of a text ----------------------------------------------------------


def test_the_quoted_references_of_a_text_are_those_the_suspects_test_finds() -> None:
    text = textwrap.dedent("""
        @pytest.mark.criterion("n/c")
        @pytest.mark.criterion('n.2/c-3', "a/b")
        # "x/y'  'p/q"  "r/s"t/u"  f"v/w"  '''k/l'''  "two words/c"  "a/b/c"
    """)
    found = quoted_refs(text)
    assert found == {"n/c", "n.2/c-3", "a/b", "r/s", "t/u", "v/w", "k/l"}
    for ref in ("n/c", "n.2/c-3", "a/b", "r/s", "t/u", "v/w", "k/l", "x/y", "p/q", "b/c"):
        assert (ref in found) == (f'"{ref}"' in text or f"'{ref}'" in text), ref


@pytest.mark.parametrize(
    "spec",
    [
        SETTINGS,
        {**SETTINGS, "any_file": True, "any_folder": True},
        {**SETTINGS, "testpaths": ["*/tests", 'odd"name']},
    ],
)
@pytest.mark.parametrize("folder", ["", "tests", 'a"b'])
def test_a_quotes_key_is_the_walks_settings_with_the_reference(
    spec: dict[str, object], folder: str
) -> None:
    """Made from the walk's key text, read back without decoding it: the same text as the
    settings encoded whole, and the walk's key again."""
    base = collect_key(folder, spec)
    for ref in ("n/c", "a.1/b-2", "zz/zz", 'not "a"/reference'):
        key = quotes_key(base, ref)
        assert key == collect_key(folder, {**spec, "quotes": ref})
        assert quoted_reference(key) == (base, ref)


def test_a_quotes_key_is_its_walks_key_with_the_reference(tmp_path: Path) -> None:
    base = collect_key("tests", SETTINGS)
    key = quotes_key(base, "step-a/ac-marked")
    assert is_collect_key(key) and key != base
    assert quoted_reference(key) == (base, "step-a/ac-marked")
    assert quoted_reference(base) is None
    write(tmp_path, "tests/test_a.py", '@mark("step-a/ac-marked")\n')
    write(tmp_path, "tests/test_b.py", "'step-a/ac-marked'\n")
    write(tmp_path, "tests/test_c.py", "step-a/ac-marked\n")  # not quoted
    write(tmp_path, "tests/notes.py", '"step-a/ac-marked"\n')  # not collected
    values = CollectValues(str(tmp_path))
    marked = values.value(key)
    assert marked == values.value(quotes_key(base, "step-a/ac-marked"))
    read = [path for path, sha in sorted(values.read.items()) if sha]
    assert read == ["tests/test_a.py", "tests/test_b.py", "tests/test_c.py"]
    other = values.value(quotes_key(base, "step-a/ac-other"))
    assert other != marked
    # a new walk finds the same; a file's quote taken away changes the marked one alone
    write(tmp_path, "tests/test_b.py", "'step-a'\n")
    again = CollectValues(str(tmp_path))
    assert again.value(quotes_key(base, "step-a/ac-other")) == other
    assert again.value(key) != marked
    assert again.value(base) == values.value(base)


def test_a_content_read_again_is_not_scanned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run reads its test files after collection and at its end: the second read hashes the
    bytes and takes the references found in the same content; changed bytes are scanned."""
    scanned: list[bytes] = []
    real = quotes_module.quoted_refs

    def counted(source: str | bytes) -> frozenset[str]:
        scanned.append(source if isinstance(source, bytes) else source.encode())
        return real(source)

    monkeypatch.setattr(quotes_module, "quoted_refs", counted)
    unique = f"step-a/ac-{tmp_path.name[-12:].replace('_', '-')}"  # no content another test read
    write(tmp_path, "tests/test_a.py", f'@mark("{unique}")\n')
    key = quotes_key(collect_key("tests", SETTINGS), unique)
    first = CollectValues(str(tmp_path)).value(key)
    assert CollectValues(str(tmp_path)).value(key) == first
    assert len(scanned) == 1
    write(tmp_path, "tests/test_a.py", f"# no marker now: {unique}\n")
    assert CollectValues(str(tmp_path)).value(key) != first
    assert len(scanned) == 2


# --- the gap, end to end ----------------------------------------------------------------------


@pytest.mark.parametrize("workers", [(), ("-n", "2", "-p", "no:randomly")])
def test_a_marked_failing_test_added_to_a_collected_file_stales_its_criterion(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """``ac-pattern`` is verified by ``tests/test_a.py::test_pattern*``; its record binds
    ``tests/test_a.py``. A failing test marked for it, added to ``tests/test_other.py``, is
    one of its tests now: the criterion is stale, ``ac-marked`` is not."""
    root = recorded(pytester, *workers)
    record = latest(root)["step-a/ac-pattern"]
    [key] = [p for p in record.subjects if quoted_reference(p) is not None]
    [walk] = [p for p in record.subjects if is_collect_key(p) and p != key]
    assert quoted_reference(key) == (walk, "step-a/ac-pattern")
    assert record.subjects[key] == CollectValues(str(root)).value(key)
    assert OTHER not in record.subjects  # its tests verified nothing: bound by name alone
    add_marked(root, "step-a/ac-pattern")
    status, reasons = statuses(root)
    assert status == "stale"
    assert reasons["ac-marked"] == []  # a test of another criterion: not this one's
    [reason] = reasons["ac-pattern"]
    assert (reason["code"], reason["path"], reason["quotes"]) == (
        "ARTIFACT_CHANGED",
        key,
        "step-a/ac-pattern",
    )
    assert "quote step-a/ac-pattern" in str(reason["message"])
    refused = plangraph(root, "claim", "step-a", "--by", "agent-7")
    assert refused.code == 1, refused.out
    # the criterion's tests do fail on the code now
    pytester.runpytest("--plangraph", *workers).assert_outcomes(passed=5, failed=1)
    assert latest(root)["step-a/ac-pattern"].outcome == "failed"
    assert statuses(root)[0] == "failed"


def test_a_marker_of_another_criterion_stales_that_one_alone(pytester: pytest.Pytester) -> None:
    root = recorded(pytester)
    add_marked(root, "step-a/ac-marked")
    status, reasons = statuses(root)
    assert status == "stale"
    assert reasons["ac-pattern"] == []
    assert [r["quotes"] for r in reasons["ac-marked"]] == ["step-a/ac-marked"]
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1


def test_an_edit_that_keeps_the_quotes_stales_nothing_and_one_that_drops_a_quote_does(
    pytester: pytest.Pytester,
) -> None:
    """What binds is the list of files that quote the reference: other edits of a file no
    record binds change nothing; a quote taken away (a mention in a comment, a marker) changes
    the list, and stales its criterion (the tests it ran may not be those its markers name
    now)."""
    text = "import pytest\n\n# see 'step-a/ac-marked'\n" + OTHER_TEXT
    root = make_project(pytester, files={OTHER: text})
    pytester.runpytest("--plangraph").assert_outcomes(passed=5)
    assert statuses(root)[0] == "completed"
    write(root, OTHER, text + "\n\ndef test_more():\n    assert True\n")
    assert statuses(root)[0] == "completed"
    write(root, OTHER, text.replace("'step-a/ac-marked'", "the marked criterion"))
    status, reasons = statuses(root)
    assert status == "stale"
    assert reasons["ac-pattern"] == []
    assert [r["quotes"] for r in reasons["ac-marked"]] == ["step-a/ac-marked"]


def test_a_test_file_that_cannot_be_read_stales_every_criterion(
    pytester: pytest.Pytester,
) -> None:
    """A collected test file that cannot be read may quote any reference: it counts in the
    list of every criterion, so each record of the run is stale until it can be read (pytest
    cannot import it either). Reading ``/proc/self/mem`` at its start fails for every user."""
    assert os.path.isfile("/proc/self/mem")
    root = recorded(pytester)
    (root / OTHER).unlink()
    os.symlink("/proc/self/mem", root / OTHER)
    status, reasons = statuses(root)
    assert status == "stale"
    for criterion in ("ac-marked", "ac-pattern"):
        assert [r["quotes"] for r in reasons[criterion]] == [f"step-a/{criterion}"]
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1


WRITES_A_MARKER = """
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    assert True

def test_pattern_one():
    late = '@pytest.mark.criterion("step-a/ac-marked")\\ndef test_late():\\n    assert False\\n'
    with open("tests/test_other.py", "a", encoding="utf-8") as handle:
        handle.write("\\n\\n" + late)
"""


def test_a_marker_written_during_the_run_voids_the_record_of_its_criterion(
    pytester: pytest.Pytester,
) -> None:
    """The quotes were read when the run bound its subjects, before a test wrote a marker
    for ``ac-marked`` into ``tests/test_other.py``: that record is voided, not stored as a
    pass; ``ac-pattern``'s, whose list did not change, stands."""
    files = {OTHER: "import pytest\n\n" + OTHER_TEXT}
    root = make_project(pytester, tests=WRITES_A_MARKER, files=files)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)  # the artifact item too
    records = latest(root)
    marked = records["step-a/ac-marked"]
    assert (marked.outcome, marked.reason) == ("error", "ARTIFACT_CHANGED_DURING_RUN")
    [key] = marked.details["changed_during_run"]
    [walk] = walks_of(marked.subjects)
    assert quoted_reference(key) == (walk, "step-a/ac-marked")
    assert records["step-a/ac-pattern"].outcome == "passed"
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1


# --- the kept answers -------------------------------------------------------------------------


def test_the_kept_status_is_not_answered_when_a_quote_is_added(
    pytester: pytest.Pytester, derived: list[str]
) -> None:
    """The kept answer watches each file the walk read for its quotes (by its ``lstat``
    signature, untrusted within the racy window): status twice (the second answered from
    what was kept), a marker added in between, the same answer as with the caches
    deleted."""
    root = recorded(pytester)
    aged = os.stat(root / "tests").st_mtime_ns - 10_000_000_000
    for path in (root / "tests", root / OTHER, root / "tests/test_a.py"):
        os.utime(path, ns=(aged, aged))  # old enough for their stat to be trusted
    statuses(root)
    before = len(derived)
    assert statuses(root)[0] == "completed"
    assert len(derived) == before  # answered from the kept status
    add_marked(root, "step-a/ac-pattern")
    os.utime(root / OTHER, ns=(aged, aged))  # its mtime set back: its ctime still moved
    kept = statuses(root)
    assert kept[0] == "stale"
    assert len(derived) == before + 1  # derived again, not kept
    again = statuses(root)
    shutil.rmtree(root / ".plangraph/cache")
    assert statuses(root) == kept == again
