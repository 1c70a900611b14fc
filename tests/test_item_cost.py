"""Per-test work in O(1): each test's ``criterion`` markers are read once per item, though the
collection check and the mapping both ask for them, and each test meets only the ``tests:``
globs written for the directories above it, whatever number of criteria the plan has. Real
``pytest --plangraph`` sessions (pytester, in process) count the work per item."""

from __future__ import annotations

import pytest
from plugin_helpers import make_project

from pytest_plangraph.plan.patterns import PatternIndex
from pytest_plangraph.plugin import SESSION_KEY
from pytest_plangraph.plugin.mapping import COUNTS


def _plan(directories: int) -> str:
    """One marker criterion, and one glob criterion per test directory."""
    criteria = "\n".join(
        f"      - id: ac-d{d}\n"
        f'        verifier: {{type: test, tests: ["tests/d{d}/test_*.py::test_*"]}}'
        for d in range(directories)
    )
    return (
        "plangraph: 1\nplan: cost\nnodes:\n  - id: step\n    outputs: [src/a.py]\n"
        "    acceptance:\n      - id: ac-marked\n        verifier: {type: test}\n" + criteria + "\n"
    )


def _tests(count: int) -> str:
    return "import pytest\n\n" + "".join(
        f'@pytest.mark.criterion("step/ac-marked")\ndef test_{i}():\n    assert True\n\n'
        for i in range(count)
    )


class Probe:
    """Reads the session's mapping counters once the tests are mapped."""

    def __init__(self) -> None:
        self.globs_tried = -1
        self.mapped = 0

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        plangraph = session.config.stash[SESSION_KEY]
        self.globs_tried = plangraph.globs_tried
        assert plangraph.mapping is not None
        self.mapped = len(plangraph.mapping.criteria["step/ac-marked"].tests)


def _run(pytester: pytest.Pytester, directories: int, per_file: int) -> tuple[int, int, Probe]:
    """(marker reads, items) of one session over *directories* test directories."""
    make_project(
        pytester,
        plan=_plan(directories),
        tests=_tests(per_file),
        files={f"tests/d{d}/test_m{d}.py": _tests(per_file) for d in range(directories)},
    )
    probe = Probe()
    before = COUNTS["marker reads"]
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider", plugins=[probe])
    passed, _, failed = result.listoutcomes()
    assert not failed
    items = (directories + 1) * per_file
    assert len(passed) == items
    assert probe.mapped == items  # every test was mapped by its marker
    return COUNTS["marker reads"] - before, items, probe


def test_markers_are_read_once_per_item(pytester: pytest.Pytester) -> None:
    reads, items, _ = _run(pytester, 3, 20)
    # the collection check and the mapping both asked for every item's references
    assert reads == items


def test_each_test_meets_only_the_globs_of_its_directories(pytester: pytest.Pytester) -> None:
    _, items, few = _run(pytester, 2, 10)
    assert few.globs_tried == items - 10  # tests/test_a.py meets no glob; each other test one


def test_the_glob_work_per_test_does_not_grow_with_the_plan(pytester: pytest.Pytester) -> None:
    _, items, many = _run(pytester, 12, 5)
    assert many.globs_tried == items - 5  # twelve globs in the plan, one tried per test


def test_a_marker_added_after_collection_is_mapped(pytester: pytest.Pytester) -> None:
    """A conftest that adds a ``criterion`` marker in ``pytest_collection_modifyitems`` (after
    the collection check read the item's markers) gets the test mapped: the failing test it
    marks fails the criterion."""
    make_project(
        pytester,
        plan=_plan(0),
        tests=_tests(2) + "def test_added():\n    assert False\n",
        files={
            "tests/conftest.py": "import pytest\n\n"
            "def pytest_collection_modifyitems(items):\n"
            "    for item in items:\n"
            "        if item.name == 'test_added':\n"
            "            item.add_marker(pytest.mark.criterion('step/ac-marked'))\n"
        },
    )
    result = pytester.runpytest("--plangraph", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*step/ac-marked*failed*"])


@pytest.mark.parametrize(
    ("pattern", "test_id", "matches"),
    [
        ("tests/d1/test_*.py", "tests/d1/test_a.py", True),
        ("tests/d1/test_*.py", "tests/d10/test_a.py", False),
        ("tests/d*/test_a.py", "tests/d10/test_a.py", True),
        ("*::test_x", "tests/deep/er/t.py::test_x", True),
        ("tests/t.py::test_[ab]", "tests/t.py::test_b", True),
        ("tests/t.py::test_x[a/b]", "tests/t.py::test_x[a/b]", True),
        ("tests/t.py::*[[]a/*", "tests/t.py::test_x[a/b]", True),
        ("tests/*/test_a.py", "tests/x/y/test_a.py", True),
        ("tests/u/*", "tests/t.py::test_x[tests/u/b]", False),
    ],
)
def test_a_glob_is_tried_below_its_directory_only(
    pattern: str, test_id: str, matches: bool
) -> None:
    """The index gives what matching every glob with fnmatch gives (among other globs)."""
    from fnmatch import fnmatchcase

    others = {f"n/o{i}": [f"tests/o{i}/*", f"other/*{i}"] for i in range(5)}
    index = PatternIndex({"n/c": [pattern], **others})
    assert (("n/c", pattern) in index.match(test_id)) is matches
    assert (fnmatchcase(test_id, pattern) or test_id == pattern) is matches
