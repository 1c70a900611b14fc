"""End to end: ``pytest --plangraph`` turns a run into evidence and prints the plan's state."""

from __future__ import annotations

import pytest
from conftest import git
from plugin_helpers import PLAN, evidence, latest, make_project, section
from run_helpers import SPLIT, sha256

from pytest_plangraph import PlanGraph, __version__


def test_a_run_records_evidence_bound_to_the_files(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, files={"tests/conftest.py": "X = 1\n", "conftest.py": ""})
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=4)
    assert result.ret == 0
    records = latest(root)
    assert sorted(records) == ["step-a/ac-marked", "step-a/ac-pattern", "step-b/ac-exists"]
    marked = records["step-a/ac-marked"]
    assert marked.outcome == "passed"
    assert marked.details["tests"] == {"tests/test_a.py::test_marked": "passed"}
    for path in ("tests/test_a.py", "tests/conftest.py", "conftest.py", "src/a.py"):
        assert marked.subjects[path] == sha256(root / path)
    assert records["step-b/ac-exists"].subjects["out/b.txt"] == sha256(root / "out/b.txt")
    assert marked.git.commit == git(root, "rev-parse", "HEAD").strip()
    assert (marked.run.pytest, marked.run.plugin) == (pytest.__version__, __version__)
    assert marked.plan.id == "demo" and marked.plan.version == 1


def test_evidence_binds_plugin_modules_and_the_module_a_test_is_inherited_from(
    pytester: pytest.Pytester,
) -> None:
    tests = """
import pytest
from tests.base import Contract

class TestSmall(Contract):
    x = 1

def test_pattern_one(value):
    assert value == 3
"""
    files = {
        "conftest.py": 'pytest_plugins = ["tests.fixtures"]\n',
        "tests/__init__.py": "",
        "tests/fixtures.py": "import pytest\n@pytest.fixture\ndef value():\n    return 3\n",
        "tests/base.py": (
            "import pytest\nclass Contract:\n"
            '    @pytest.mark.criterion("step-a/ac-marked")\n'
            "    def test_contract(self):\n        assert self.x == 1\n"
        ),
    }
    root = make_project(pytester, tests=tests, files=files)
    pytester.runpytest("--plangraph").assert_outcomes(passed=3)
    records = latest(root)
    marked, pattern = records["step-a/ac-marked"], records["step-a/ac-pattern"]
    assert marked.outcome == pattern.outcome == "passed"
    assert marked.subjects["tests/base.py"] == sha256(root / "tests/base.py")
    for record in (marked, pattern):
        assert record.subjects["tests/fixtures.py"] == sha256(root / "tests/fixtures.py")
    (root / "tests/fixtures.py").write_text(
        "import pytest\n@pytest.fixture\ndef value():\n    return 4\n"
    )
    (root / "tests/base.py").write_text((root / "tests/base.py").read_text() + "\n")
    with PlanGraph.open(root) as graph:
        state = graph.status()
    criteria = {c.id: c.state for c in state.nodes["step-a"].criteria}
    assert criteria == {"ac-marked": "stale", "ac-pattern": "stale"}


def test_evidence_carries_the_git_state_of_the_tree(
    pytester: pytest.Pytester,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pytester's home is the project itself: the user's cache (``~/.cache/plangraph``) is
    # kept outside it, as a user's is, or it would be an untracked folder of the tree
    user_cache = tmp_path_factory.mktemp("user-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))
    root = make_project(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    clean = latest(root)["step-a/ac-marked"].git
    assert (clean.branch, clean.dirty) == ("main", False)  # the store never makes it dirty
    (root / "src/a.py").write_text("A = 2\n", encoding="utf-8")
    git(root, "checkout", "-q", "--detach")
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    edited = latest(root)["step-a/ac-marked"].git
    assert (edited.commit, edited.branch, edited.dirty) == (clean.commit, None, True)


def test_the_summary_shows_the_state_table_and_the_changes(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    lines = section(pytester.runpytest("--plangraph").stdout.str())
    assert lines[0] == "plan demo v1: 2/2 nodes completed; evidence recorded: 3 passed"
    assert lines[1].split() == ["node", "status", "criteria"]
    assert lines[2].split() == ["step-a", "completed", "2/2"]
    assert lines[3].split() == ["step-b", "completed", "1/1"]
    assert "changed in this run:" in lines
    assert "  step-a: ready -> completed" in lines
    again = section(pytester.runpytest("--plangraph", "-q").stdout.str())
    assert again == [
        "plan demo v1: 2/2 nodes completed; evidence recorded: 3 passed",
        "no node changed status in this run",
    ]


def test_verbose_summary_lists_criteria_and_records(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    lines = section(pytester.runpytest("--plangraph", "-v").stdout.str())
    assert "    ac-marked: valid" in lines
    assert "  step-b/ac-exists: passed" in lines


def test_parametrized_tests_match_by_marker_and_by_pattern(pytester: pytest.Pytester) -> None:
    tests = """
        import pytest

        @pytest.mark.criterion("step-a/ac-marked")
        @pytest.mark.parametrize("n", [1, 2])
        def test_marked(n):
            assert n

        @pytest.mark.parametrize("n", [1, 2])
        def test_pattern(n):
            assert n
    """
    plan = PLAN.replace('"tests/test_a.py::test_pattern*"', '"tests/test_a.py::test_pattern[2]"')
    root = make_project(pytester, plan=plan, tests=tests)
    pytester.runpytest("--plangraph").assert_outcomes(passed=5)
    records = latest(root)
    assert records["step-a/ac-marked"].details["tests"] == {
        "tests/test_a.py::test_marked[1]": "passed",
        "tests/test_a.py::test_marked[2]": "passed",
    }
    assert records["step-a/ac-pattern"].details["tests"] == {
        "tests/test_a.py::test_pattern[2]": "passed"
    }


VERDICT_PLAN = """
plangraph: 1
plan: verdicts
nodes:
  - id: step
    acceptance:
      - {id: ac-all, verifier: {type: test}}
      - {id: ac-skip, verifier: {type: test}}
      - {id: ac-xfail, verifier: {type: test}}
      - {id: ac-xpass-strict, verifier: {type: test}}
      - {id: ac-fail, verifier: {type: test}}
      - {id: ac-teardown, verifier: {type: test}}
"""

VERDICT_TESTS = """
import pytest

pytestmark = pytest.mark.criterion("step/ac-all")

@pytest.fixture
def broken():
    yield
    raise RuntimeError("teardown broke")

@pytest.mark.criterion("step/ac-skip")
def test_skip():
    pytest.skip("later")

@pytest.mark.criterion("step/ac-xfail")
@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

@pytest.mark.criterion("step/ac-xpass-strict")
@pytest.mark.xfail(strict=True)
def test_xpass_strict():
    pass

@pytest.mark.criterion("step/ac-fail")
def test_fail():
    assert False

@pytest.mark.criterion("step/ac-teardown")
def test_teardown(broken):
    pass
"""


def test_only_tests_that_pass_in_every_phase_give_passing_evidence(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester, plan=VERDICT_PLAN, tests=VERDICT_TESTS)
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=1, skipped=1, xfailed=1, failed=2, errors=1)
    found = {ref: (r.outcome, r.reason, r.details["tests"]) for ref, r in latest(root).items()}
    test = "tests/test_a.py::test_"
    assert found == {
        "step/ac-all": (
            "failed",
            "TEST_FAILED",
            {
                f"{test}skip": "skipped",
                f"{test}xfail": "xfailed",
                f"{test}xpass_strict": "failed",
                f"{test}fail": "failed",
                f"{test}teardown": "error",
            },
        ),
        "step/ac-skip": ("error", "TEST_SKIPPED", {f"{test}skip": "skipped"}),
        "step/ac-xfail": ("failed", "TEST_XFAILED", {f"{test}xfail": "xfailed"}),
        "step/ac-xpass-strict": ("failed", "TEST_FAILED", {f"{test}xpass_strict": "failed"}),
        "step/ac-fail": ("failed", "TEST_FAILED", {f"{test}fail": "failed"}),
        "step/ac-teardown": ("error", "TEST_ERROR", {f"{test}teardown": "error"}),
    }


def test_an_interrupted_run_records_only_what_finished(pytester: pytest.Pytester) -> None:
    tests = """
        import pytest

        @pytest.mark.criterion("step-a/ac-marked")
        def test_marked():
            assert False

        def test_pattern_one():
            pass
    """
    root = make_project(pytester, tests=tests)
    result = pytester.runpytest("--plangraph", "-x", "-p", "no:randomly")
    assert result.ret == 1
    records = latest(root)
    assert records["step-a/ac-marked"].outcome == "failed"
    assert "step-a/ac-pattern" not in records
    assert "step-b/ac-exists" not in records
    assert "not verified in this run: 2 (2 NOT_RUN)" in section(result.stdout.str())


def test_deselected_criteria_are_not_verified(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    result = pytester.runpytest("--plangraph", "-k", "marked")
    result.assert_outcomes(passed=1)
    assert sorted(latest(root)) == ["step-a/ac-marked"]
    assert "not verified in this run: 2 (2 DESELECTED)" in section(result.stdout.str())


def test_explicit_paths_leave_other_criteria_unverified(pytester: pytest.Pytester) -> None:
    plan = PLAN.replace('"tests/test_a.py::test_pattern*"', '"tests/test_b.py::test_b"')
    root = make_project(pytester, plan=plan, files={"tests/test_b.py": "def test_b(): pass\n"})
    # `--plangraph PATH` with a non-plan PATH: the path is a test path, not the plan.
    result = pytester.runpytest("--plangraph", "tests/test_a.py")
    result.assert_outcomes(passed=3)
    # ac-marked's tests all passed, but a file left out could hold more of them
    assert latest(root) == {}
    assert "not verified in this run: 3 (3 NOT_COLLECTED)" in section(result.stdout.str())


@pytest.mark.parametrize(
    "narrowed",
    [
        ["tests/test_a.py"],
        ["tests/test_a.py::test_marked_a"],
        ["--lf"],
        ["--ignore=tests/test_b.py"],
        ["--ignore-glob", "*_b.py"],
        ["-o", "python_files=test_a.py"],
        ["--override-ini=testpaths=tests/test_a.py"],
    ],
    ids=["a-file", "a-test-id", "last-failed", "ignore", "ignore-glob", "python-files", "paths"],
)
def test_a_narrowed_run_records_no_pass_for_tests_it_left_out(
    pytester: pytest.Pytester, narrowed: list[str]
) -> None:
    """A criterion's failing test in another file: running only the passing one must not
    record a pass; a failure the narrowed run sees is still recorded."""
    files = {
        "tests/test_a.py": SPLIT.format(name="a", ok=True),
        "tests/test_b.py": SPLIT.format(name="b", ok=False),
    }
    root = make_project(pytester, files=files)
    pytester.runpytest("--plangraph", "-p", "cacheprovider")
    assert latest(root)["step-a/ac-marked"].outcome == "failed"
    if narrowed == ["--lf"]:  # the failing test now passes, the other one now fails
        (root / "tests/test_b.py").write_text(SPLIT.format(name="b", ok=True))
        (root / "tests/test_a.py").write_text(SPLIT.format(name="a", ok=False))
    result = pytester.runpytest("--plangraph", "-p", "cacheprovider", *narrowed)
    assert result.ret == 0
    assert latest(root)["step-a/ac-marked"].outcome == "failed"  # nothing newer recorded
    (root / "tests/test_a.py").write_text(SPLIT.format(name="a", ok=False))
    pytester.runpytest("--plangraph", "tests/test_a.py")
    record = latest(root)["step-a/ac-marked"]
    assert (record.outcome, list(record.details["tests"])) == (
        "failed",
        ["tests/test_a.py::test_marked_a"],
    )


def test_a_pattern_matching_no_test_is_test_not_found(pytester: pytest.Pytester) -> None:
    plan = PLAN.replace("test_pattern*", "test_renamed")
    root = make_project(pytester, plan=plan)
    assert pytester.runpytest("--plangraph").ret == 0
    record = latest(root)["step-a/ac-pattern"]
    assert (record.outcome, record.reason) == ("error", "TEST_NOT_FOUND")
    assert record.details["unmatched"] == ["tests/test_a.py::test_renamed"]
    assert record.details["message"] == "no collected test matches tests/test_a.py::test_renamed"


UNKNOWN_REF = """
    import pytest

    @pytest.mark.criterion("step-a/ac-markd")
    def test_marked():
        pass
"""

NO_REF = """
    import pytest

    @pytest.mark.criterion()
    def test_bare():
        pass

    @pytest.mark.criterion(criterion="step-a/ac-marked")
    def test_keyword():
        pass
"""


@pytest.mark.parametrize(
    ("tests", "says"),
    [
        (
            UNKNOWN_REF,
            [
                "*'step-a/ac-markd': node 'step-a' has no criterion 'ac-markd'; "
                "did you mean 'ac-marked'? valid: ac-marked, ac-pattern*",
            ],
        ),
        (
            NO_REF,
            [
                "*test_bare: criterion marker @pytest.mark.criterion(): name the criterion as "
                "its argument, e.g. @pytest.mark.criterion('node-id/criterion-id')*",
                "*test_keyword: criterion marker "
                "@pytest.mark.criterion(criterion='step-a/ac-marked'):*",
            ],
        ),
    ],
    ids=["unknown-reference", "no-reference"],
)
def test_a_miswritten_marker_is_a_collection_error(
    pytester: pytest.Pytester, tests: str, says: list[str]
) -> None:
    root = make_project(pytester, tests=tests)
    result = pytester.runpytest("--plangraph")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting tests/test_a.py*", *says])
    assert "Traceback" not in result.stdout.str()
    assert evidence(root) == []


def test_marker_and_fixture_work_without_plangraph(pytester: pytest.Pytester) -> None:
    tests = """
        import pytest

        @pytest.mark.criterion("step-a/ac-marked")
        def test_marked(plangraph):
            assert not plangraph.active
            assert plangraph.plan.nodes[0].id == "step-a"
            assert plangraph.artifact("out/b.txt") == "out/b.txt"
    """
    make_project(pytester, tests=tests)
    result = pytester.runpytest("--strict-markers", "-W", "error")
    result.assert_outcomes(passed=1)
    assert " plangraph " not in result.stdout.str()
    assert not (pytester.path / ".plangraph").exists()


def test_the_plugin_can_be_disabled(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    unknown_marker = "ignore::pytest.PytestUnknownMarkWarning"
    result = pytester.runpytest("-p", "no:plangraph", "-W", unknown_marker)
    result.assert_outcomes(passed=3)
    assert " plangraph " not in result.stdout.str()
    assert not (pytester.path / ".plangraph").exists()
