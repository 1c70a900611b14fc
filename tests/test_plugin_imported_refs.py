"""A ``criterion`` reference or marker a test file takes from another module of the repository.

``tests/marks.py`` holds ``PATTERN = "step-a/ac-pattern"`` (or ``mark_login =
pytest.mark.criterion(...)``); a collected test file none of whose tests verified
``ac-pattern`` gets ``from marks import PATTERN`` and a failing test marked with it. Its text
quotes nothing and ``marks.py`` did not change, yet the run marks the failing test for
``ac-pattern``: a test file counts as quoting what the repository modules it imports quote,
transitively (:mod:`pytest_plangraph.vcs.imports`).

The end-to-end cases run real pytest sessions (``pytester``) in a real git repository, and the
real ``plangraph`` command.
"""

from __future__ import annotations

import os
import py_compile
import shutil
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from cache_helpers import as_tester
from glob_helpers import SETTINGS, pattern_stale, statuses, write
from plugin_helpers import latest, make_project
from test_plugin_quoted_refs import OTHER, OTHER_TEXT

from pytest_plangraph.vcs.modulefinder import ModuleFinder
from pytest_plangraph.vcs.quotes import UNREADABLE, CollectValues, quoted_refs, quotes_key
from pytest_plangraph.vcs.testglob import GlobFiles, collect_digest, collect_key

REF = "step-a/ac-pattern"
MARKER = 'import pytest\n\nmark_login = pytest.mark.criterion("step-a/ac-pattern")\n'
CONSTANT = 'PATTERN = "step-a/ac-pattern"\n'
BROKEN = "\n\ndef test_added_and_broken():\n    assert False, 'the code is broken now'\n"

FORMS: dict[str, tuple[dict[str, str], str]] = {
    "a constant": (
        {"tests/marks.py": CONSTANT},
        "from marks import PATTERN\n\n@pytest.mark.criterion(PATTERN)",
    ),
    "a marker": ({"tests/marks.py": MARKER}, "from marks import mark_login\n\n@mark_login"),
    "the module": ({"tests/marks.py": MARKER}, "import marks\n\n@marks.mark_login"),
    "a relative import": (
        {"tests/__init__.py": "", "tests/marks.py": MARKER},
        "from .marks import mark_login\n\n@mark_login",
    ),
    "a package's module": (
        {"tests/helpers/__init__.py": "", "tests/helpers/marks.py": CONSTANT},
        "from helpers import marks\n\n@pytest.mark.criterion(marks.PATTERN)",
    ),
    "a chain": (
        {
            "tests/refs.py": CONSTANT,
            "tests/marks.py": "import pytest\nfrom refs import PATTERN\n\n"
            "mark_login = pytest.mark.criterion(PATTERN)\n",
        },
        "from marks import mark_login\n\n@mark_login",
    ),
    "a parenthesised list in a try block": (
        {"tests/marks.py": "OTHER = 1\n" + CONSTANT},
        "try:\n    from marks import (\n        OTHER,\n        PATTERN,  # the reference\n    )\n"
        "except ImportError:\n    raise\n\n@pytest.mark.criterion(PATTERN)",
    ),
    "an import inside a function": (
        {"tests/marks.py": CONSTANT},
        "def pattern():\n    from marks import PATTERN\n    return PATTERN\n\n"
        "@pytest.mark.criterion(pattern())",
    ),
}
"""Each form: the modules beside the tests (there when the run was recorded) and the lines
that mark the failing test added to :data:`OTHER` (its text quotes no reference)."""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def recorded(pytester: pytest.Pytester, files: dict[str, str], more: str = "", *args: str) -> Path:
    """The demo project with *files* and :data:`OTHER` (*more* before its passing test),
    recorded complete (pytest given *args*)."""
    text = f"import pytest\n\n{more}\n\n{OTHER_TEXT}"
    root = make_project(pytester, files={OTHER: text, **files})
    outcomes = pytester.runpytest("--plangraph", *args).parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] >= 5, outcomes
    assert statuses(root)[0] == "completed"
    return root


def marked_and_broken(
    pytester: pytest.Pytester, files: dict[str, str], marking: str
) -> tuple[Path, str]:
    """The project recorded complete with *files*, then :data:`OTHER` given a failing test
    that *marking* marks (checked failing without the plug-in), and ``ac-pattern`` checked
    stale; the project and the test file's new text."""
    root = recorded(pytester, files)
    text = f"import pytest\n{marking}\n{BROKEN.lstrip()}\n" + OTHER_TEXT
    write(root, OTHER, text)
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=4, failed=1)
    pattern_stale(root)
    return root, text


@pytest.mark.parametrize("form", FORMS)
def test_a_failing_test_marked_through_an_imported_module_stales_its_criterion(
    pytester: pytest.Pytester, form: str
) -> None:
    files, marking = FORMS[form]
    root, text = marked_and_broken(pytester, files, marking)
    assert REF not in quoted_refs(text)  # the test file's own text quotes nothing
    assert pytester.runpytest("--plangraph").parseoutcomes()["failed"] == 1
    assert latest(root)[REF].outcome == "failed"  # the run of the marked test judges it


@pytest.mark.parametrize("workers", [(), ("-n", "2", "-p", "no:randomly")])
def test_an_edit_of_the_imported_module_alone_stales_the_criterion(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """The test file is not touched: ``marks.py`` turns the skip it gave a failing test into
    the criterion's marker."""
    files = {"tests/marks.py": "import pytest\n\nmark_login = pytest.mark.skip('later')\n"}
    more = "from marks import mark_login\n\n@mark_login" + BROKEN
    root = recorded(pytester, files, more, *workers)
    write(root, "tests/marks.py", MARKER)
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=4, failed=1)
    pattern_stale(root)
    assert pytester.runpytest("--plangraph", *workers).parseoutcomes()["failed"] == 1
    assert latest(root)[REF].outcome == "failed"


def test_a_changed_reference_in_the_imported_module_stales_both_criteria(
    pytester: pytest.Pytester,
) -> None:
    """``PATTERN`` marks a passing test of ``ac-pattern``; made ``ac-marked``'s reference,
    the test belongs to the other criterion: both lists changed."""
    mine = (
        "from marks import PATTERN\n\n@pytest.mark.criterion(PATTERN)\ndef test_mine():\n    ...\n"
    )
    root = recorded(pytester, {"tests/marks.py": CONSTANT}, mine)
    assert OTHER in latest(root)[REF].subjects
    write(root, "tests/marks.py", CONSTANT.replace("ac-pattern", "ac-marked"))
    status, reasons = statuses(root)
    assert status == "stale"
    assert [r["quotes"] for r in reasons["ac-marked"]] == ["step-a/ac-marked"]
    assert [r["quotes"] for r in reasons["ac-pattern"]] == [REF]


def test_an_edit_of_an_imported_module_that_keeps_its_quotes_stales_nothing(
    pytester: pytest.Pytester,
) -> None:
    """Only which files quote a reference binds: a module that quotes none may change; a
    quote added to it is seen."""
    helper = "tests/helper.py"
    root = recorded(pytester, {helper: "VALUE = 1\n"}, "import os\nimport helper\n")
    write(root, helper, "VALUE = 2  # the helpers may change\n")
    assert statuses(root)[0] == "completed"
    write(root, helper, "VALUE = 2\n" + CONSTANT)
    pattern_stale(root)


def test_an_imported_module_that_cannot_be_read_stales_every_criterion(
    pytester: pytest.Pytester,
) -> None:
    """It may quote any reference, as a test file that cannot be read (reading
    ``/proc/self/mem`` at its start fails for every user)."""
    root = recorded(pytester, {"tests/marks.py": CONSTANT}, "import marks\n")
    (root / "tests/marks.py").unlink()
    os.symlink("/proc/self/mem", root / "tests/marks.py")
    status, reasons = statuses(root)
    assert status == "stale"
    for criterion in ("ac-marked", "ac-pattern"):
        assert [r["quotes"] for r in reasons[criterion]] == [f"step-a/{criterion}"]


def test_the_kept_status_is_not_answered_when_an_imported_module_changes(
    pytester: pytest.Pytester, derived: list[str]
) -> None:
    """The kept answer watches each module read for its quotes: status twice (the second
    answered from what was kept), ``marks.py`` given the marker in between (its mtime set
    back: its ctime still moved), the same answer as with the caches deleted."""
    files = {"tests/marks.py": "import pytest\n\nmark_login = pytest.mark.skip('later')\n"}
    root = recorded(pytester, files, "from marks import mark_login\n\n@mark_login" + BROKEN)
    kept = _kept_then_stale(root, derived, [root / "tests"], "tests/marks.py", "tests/marks.py")
    shutil.rmtree(root / ".plangraph/cache")
    assert statuses(root) == kept


def _kept_then_stale(
    root: Path, derived: list[str], folders: list[Path], written: str, aged_again: str
) -> list[str]:
    """The statuses after *written* is given :data:`MARKER`: *folders* and the test files
    made old enough for their stat to be trusted, status answered from the kept answer, then
    *written* written (*aged_again* set back to the old mtime) and status derived again, stale."""
    aged = os.stat(root / "tests").st_mtime_ns - 10_000_000_000
    for path in (*folders, *(root / "tests").glob("*.py")):
        os.utime(path, ns=(aged, aged))
    statuses(root)
    before = len(derived)
    assert statuses(root)[0] == "completed"
    assert len(derived) == before  # answered from the kept status
    write(root, written, MARKER)
    os.utime(root / aged_again, ns=(aged, aged))
    kept = statuses(root)
    assert kept[0] == "stale"
    assert len(derived) == before + 1  # derived again, not kept
    return kept


OPTIONAL = """
try:
    from marks import mark_login
except ImportError:
    mark_login = pytest.mark.skip("no marks yet")

@mark_login
def test_added_and_broken():
    assert False, "the code is broken now"
"""
"""A test that takes its marker from a module ``marks`` when there is one."""


def test_the_kept_status_is_not_answered_when_a_module_appears_where_none_was(
    pytester: pytest.Pytester, derived: list[str]
) -> None:
    """``marks`` was found nowhere in the repository when the answer was kept: each place it
    was looked for is watched, so ``src/marks.py`` made since (on the run's ``pythonpath``;
    ``src/``'s mtime set back) is read by the next status."""
    ini = {"pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src\n"}
    root = recorded(pytester, ini, OPTIONAL)
    kept = _kept_then_stale(root, derived, [root / "tests", root / "src"], "src/marks.py", "src")
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=4, failed=1)
    shutil.rmtree(root / ".plangraph/cache")
    assert statuses(root) == kept


def test_a_module_beside_another_folders_tests_stales_its_criterion(
    pytester: pytest.Pytester,
) -> None:
    """pytest puts ``tests/integration`` on ``sys.path`` to import its test module (collected
    before ``tests/unit``): ``tests/integration/marks.py``, made since (no file a run
    collects), is what ``from marks import PATTERN`` in ``tests/unit/test_other.py`` finds."""
    unit = "tests/unit/test_other.py"
    files = {"tests/integration/test_i.py": OTHER_TEXT, unit: "import pytest\n\n" + OTHER_TEXT}
    root = make_project(pytester, files=files)
    pytester.runpytest("--plangraph").assert_outcomes(passed=6)
    assert statuses(root)[0] == "completed"
    write(root, "tests/integration/marks.py", CONSTANT)
    marking = "from marks import PATTERN\n\n@pytest.mark.criterion(PATTERN)\n"
    write(root, unit, f"import pytest\n{marking}{BROKEN.lstrip()}\n{OTHER_TEXT}")
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=5, failed=1)
    pattern_stale(root)


def test_a_module_on_the_configured_pythonpath_stales_its_criterion(
    pytester: pytest.Pytester,
) -> None:
    """``pythonpath = lib`` puts ``lib/`` on ``sys.path``: ``lib/marks.py``, made since, is
    what ``from marks import PATTERN`` finds."""
    ini = {"pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = lib\n", "lib/a.txt": "a\n"}
    root = recorded(pytester, ini)
    write(root, "lib/marks.py", CONSTANT)
    marking = "from marks import PATTERN\n\n@pytest.mark.criterion(PATTERN)\n"
    write(root, OTHER, f"import pytest\n{marking}{BROKEN.lstrip()}\n{OTHER_TEXT}")
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=4, failed=1)
    pattern_stale(root)


# --- the value of a quotes subject -------------------------------------------------------------


def _value(root: Path, ref: str = REF) -> tuple[str, CollectValues]:
    values = CollectValues(str(root))
    return values.value(quotes_key(collect_key("tests", SETTINGS), ref)), values


def _digest(*files: str) -> str:
    return collect_digest(GlobFiles(tuple(sorted(files))))


def test_files_that_import_no_module_quoting_a_reference_keep_their_digest(
    tmp_path: Path,
) -> None:
    """The value is still the digest of the test files whose own text quotes the reference
    when the modules they import quote none: the evidence recorded before keeps its digest."""
    write(tmp_path, "tests/test_a.py", f'import os, pytest\nimport helper\n"{REF}"\n')
    write(tmp_path, "tests/test_b.py", "from helper import VALUE\nfrom . import helper\n")
    write(tmp_path, "tests/helper.py", "import json\nVALUE = 'step-a'\n")
    write(tmp_path, "src/lib.py", "X = 1\n")
    value, values = _value(tmp_path)
    assert value == _digest("tests/test_a.py")
    assert "tests/helper.py" in values.read
    # where a module `os` was looked for in vain: a kept answer watches that none appears
    assert {values.read[p] for p in ("tests/os.py", "os/__init__.py", "src/os.py")} == {None}


def test_a_cycle_of_imports_is_read_once_each(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_a.py", "import one\n")
    write(tmp_path, "tests/one.py", "import two\n")
    write(tmp_path, "tests/two.py", f"import one\nfrom one import *\nX = '{REF}'\n")
    write(tmp_path, "tests/test_b.py", "import two\n")
    value, values = _value(tmp_path)
    assert value == _digest("tests/test_a.py", "tests/test_b.py")
    assert {"tests/one.py", "tests/two.py"} <= set(values.read)
    assert _value(tmp_path, "step-a/ac-marked")[0] == _digest()


def test_a_module_in_a_folder_pytest_puts_on_sys_path_counts(tmp_path: Path) -> None:
    """Each folder of a collected module (or the first above it without ``__init__.py``) is
    on ``sys.path``: a module there may be imported from any file of the run."""
    write(tmp_path, "tests/unit/test_a.py", "from marks import PATTERN\n")
    write(tmp_path, "tests/pkg/__init__.py", "")
    write(tmp_path, "tests/pkg/sub/__init__.py", "")
    write(tmp_path, "tests/pkg/sub/test_b.py", "")  # its sys.path folder: tests
    write(tmp_path, "tests/other/test_c.py", "")
    write(tmp_path, "tests/other/marks.py", CONSTANT)
    assert _value(tmp_path)[0] == _digest("tests/unit/test_a.py")
    finder = ModuleFinder(str(tmp_path))
    files = ["tests/unit/test_a.py", "tests/pkg/sub/test_b.py", "tests/other/test_c.py"]
    assert finder.path_folders(files) == {"tests/unit", "tests", "tests/other"}


def test_a_module_found_from_the_root_or_src_counts(tmp_path: Path) -> None:
    write(tmp_path, "tests/deep/test_a.py", "from pkg.marks import PATTERN\n")
    write(tmp_path, "src/pkg/__init__.py", "")
    write(tmp_path, "src/pkg/marks.py", CONSTANT)
    write(tmp_path, "tests/deep/test_b.py", "import shared\n")
    write(tmp_path, "shared.py", f"'{REF}'\n")
    assert _value(tmp_path)[0] == _digest("tests/deep/test_a.py", "tests/deep/test_b.py")


def test_a_module_whose_real_path_leaves_the_repository_is_not_read(tmp_path: Path) -> None:
    """It may quote anything: the test file that imports it is in every list."""
    root = tmp_path / "repo"
    write(root, "tests/test_a.py", "from marks import PATTERN\n")
    write(tmp_path, "outside/marks.py", "PATTERN = 'x/y'\n")
    os.symlink(tmp_path / "outside/marks.py", root / "tests/marks.py")
    value, values = _value(root)
    assert value == _digest("tests/test_a.py\0")
    assert values.read["tests/marks.py"] == UNREADABLE
    assert _value(root, "step-a/ac-marked")[0] == value


def test_a_relative_import_above_the_repository_root_finds_nothing(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, "tests/test_a.py", "from ... import marks\n")
    write(tmp_path, "marks.py", CONSTANT)  # above the root: not read
    value, values = _value(root)
    assert value == _digest()
    assert [path for path, sha in sorted(values.read.items()) if sha] == ["tests/test_a.py"]
    write(root, "tests/test_b.py", "from ..tests import other\n")  # the root is a package
    write(root, "tests/other.py", CONSTANT)
    assert _value(root)[0] == _digest("tests/test_b.py")


def test_a_module_loaded_from_bytecode_or_an_extension_counts(tmp_path: Path) -> None:
    """Bytecode is not read: a file that imports it may quote anything. An extension module
    is read as a file that is not Python: each reference its bytes mention."""
    write(tmp_path, "tests/test_a.py", "import ext\n")
    ext = f"ext{EXTENSION_SUFFIXES[0]}"
    (tmp_path / "tests" / ext).write_bytes(b"\x7fELF\0" + REF.encode() + b"\0")
    assert _value(tmp_path)[0] == _digest("tests/test_a.py")
    assert _value(tmp_path, "step-a/ac-marked")[0] == _digest()
    write(tmp_path, "tests/test_b.py", "from marks import PATTERN\n")
    write(tmp_path, "tests/marks.py", "PATTERN = 'x/y'\n")
    py_compile.compile(str(tmp_path / "tests/marks.py"), str(tmp_path / "tests/marks.pyc"))
    (tmp_path / "tests/marks.py").unlink()
    value, values = _value(tmp_path, "step-a/ac-marked")
    assert value == _digest("tests/test_b.py\0")
    assert values.read["tests/marks.pyc"] == UNREADABLE


def test_a_failing_test_marked_through_sourceless_bytecode_stales_every_criterion(
    pytester: pytest.Pytester,
) -> None:
    root = recorded(pytester, {})
    marks = root / "tests/marks.py"
    write(root, "tests/marks.py", CONSTANT)
    py_compile.compile(str(marks), str(root / "tests/marks.pyc"))
    marks.unlink()
    marking = "from marks import PATTERN\n\n@pytest.mark.criterion(PATTERN)\n"
    write(root, OTHER, f"import pytest\n{marking}{BROKEN.lstrip()}\n{OTHER_TEXT}")
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=4, failed=1)
    status, reasons = statuses(root)
    assert status == "stale"
    for criterion in ("ac-marked", "ac-pattern"):
        assert [r["quotes"] for r in reasons[criterion]] == [f"step-a/{criterion}"]


def test_the_value_of_a_walk_and_reference_is_the_value_of_their_key(tmp_path: Path) -> None:
    """What a run binds for each criterion (:meth:`CollectValues.quoted_value`) is what the
    end of the run and a later check read from the subject's key (:meth:`CollectValues.value`),
    for references the plan allows and one it does not."""
    write(tmp_path, "tests/test_a.py", f'"{REF}"\n')
    write(tmp_path, "tests/test_b.py", '"step-b/ac"\n')
    walks = [collect_key("tests", SETTINGS), collect_key("", {**SETTINGS, "any_file": True})]
    refs = [REF, "step-b/ac", "step-c/none", 'odd "ref', "é/ü"]
    for walk in walks:
        for ref in refs:
            by_key, by_parts = CollectValues(str(tmp_path)), CollectValues(str(tmp_path))
            assert by_parts.quoted_value(walk, ref) == by_key.value(quotes_key(walk, ref))
    values = CollectValues(str(tmp_path))
    assert values.quoted_value(walks[0], REF) == _digest("tests/test_a.py")
    assert values.quoted_value(walks[0], "step-c/none") == _digest()
