"""End to end: ``pytest --plangraph`` turns a run into evidence and prints the plan's state."""

from __future__ import annotations

import hashlib

import pytest
from conftest import git
from plugin_helpers import PLAN, TESTS, evidence, latest, make_project, section

from pytest_plangraph import PlanGraph, __version__


def sha256(path: object) -> str:
    with open(str(path), "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


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


def test_evidence_carries_the_git_state_of_the_tree(pytester: pytest.Pytester) -> None:
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


SPLIT = """
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked_{name}():
    assert {ok}
"""


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


def test_a_declared_artifact_is_a_subject(pytester: pytest.Pytester) -> None:
    tests = """
        import pytest

        @pytest.mark.criterion("step-a/ac-marked")
        def test_marked(plangraph):
            assert plangraph.plan.plan == "demo"
            with open("out/made.txt", "w") as handle:
                handle.write("made")
            assert plangraph.artifact("out/made.txt") == "out/made.txt"

        def test_pattern_one():
            pass
    """
    root = make_project(pytester, tests=tests)
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3)
    record = latest(root)["step-a/ac-marked"]
    assert record.outcome == "passed"
    assert record.subjects["out/made.txt"] == sha256(root / "out/made.txt")


def test_an_artifact_outside_the_repository_or_a_directory_is_a_value_error(
    pytester: pytest.Pytester,
) -> None:
    tests = """
        import pytest

        @pytest.mark.parametrize("path", ["/etc/passwd", "../elsewhere.txt"])
        def test_outside(plangraph, path):
            with pytest.raises(ValueError, match="plangraph.artifact"):
                plangraph.artifact(path)

        def test_a_directory(plangraph):
            with pytest.raises(ValueError, match="is a directory; declare each file"):
                plangraph.artifact("tests")
    """
    make_project(pytester, tests=tests)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)


def test_a_declared_artifact_never_made_gives_no_pass(pytester: pytest.Pytester) -> None:
    tests = """
        import pytest

        @pytest.mark.criterion("step-a/ac-marked")
        def test_marked(plangraph):
            plangraph.artifact("build/never-made.txt")

        def test_pattern_one():
            pass
    """
    root = make_project(pytester, tests=tests)
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3)  # the tests and the artifact item of step-b
    record = latest(root)["step-a/ac-marked"]
    assert (record.outcome, record.reason) == ("failed", "ARTIFACT_MISSING")
    assert record.details["missing_artifacts"] == ["build/never-made.txt"]
    assert "plangraph.artifact()" in record.details["message"]
    assert latest(root)["step-a/ac-pattern"].outcome == "passed"


DURING_RUN = """
    import os

    import pytest

    @pytest.mark.criterion("step-a/ac-marked")
    def test_marked():
        {action}

    def test_pattern_one():
        pass
"""


@pytest.mark.parametrize(
    ("action", "kept"),
    [
        ("open('src/a.py', 'a').write('B = 2\\n')", True),
        ("os.remove('src/a.py')", False),  # missing at the end: not a subject
    ],
    ids=["changed", "deleted"],
)
def test_an_output_changed_or_deleted_during_the_run_voids_the_evidence(
    pytester: pytest.Pytester, action: str, kept: bool
) -> None:
    root = make_project(pytester, tests=DURING_RUN.replace("{action}", action))
    pytester.runpytest("--plangraph")
    record = latest(root)["step-a/ac-marked"]
    assert (record.outcome, record.reason) == ("error", "ARTIFACT_CHANGED_DURING_RUN")
    assert record.details["changed_during_run"] == ["src/a.py"]
    assert ("src/a.py" in record.subjects) is kept


def test_the_summary_says_which_nodes_are_stale_and_why(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    pytester.runpytest("--plangraph")
    (root / "src" / "a.py").write_text("A = 2\n", encoding="utf-8")
    lines = section(pytester.runpytest("--plangraph", "-k", "ac-exists").stdout.str())
    assert lines[2].split() == ["step-a", "stale", "0/2"]
    start = lines.index("stale, to verify again:")
    assert lines[start + 1].startswith("  step-a: ac-marked: ")
    assert "src/a.py" in lines[start + 1]


def test_what_the_projects_own_configuration_leaves_out_is_the_suite(
    pytester: pytest.Pytester,
) -> None:
    files = {
        "tests/test_a.py": SPLIT.format(name="a", ok=True),
        "tests/vendor/test_v.py": "def test_v():\n    assert False\n",
        "pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --ignore=tests/vendor\n",
    }
    root = make_project(pytester, files=files)
    result = pytester.runpytest("--plangraph")
    assert result.ret == 0
    assert latest(root)["step-a/ac-marked"].outcome == "passed"


@pytest.mark.parametrize(
    "loosening",
    [["-W", "ignore::UserWarning"], ["-p", "no:warnings"], ["-o", "filterwarnings=default"]],
)
def test_a_command_line_that_loosens_the_configuration_records_no_pass(
    pytester: pytest.Pytester, loosening: list[str]
) -> None:
    tests = TESTS.replace("    assert True\n", "    warnings.warn('deprecated call')\n", 1)
    files = {"pytest.ini": "[pytest]\ntestpaths = tests\nfilterwarnings = error\n"}
    root = make_project(pytester, tests=f"import warnings\n{tests}", files=files)
    pytester.runpytest("--plangraph").assert_outcomes(passed=3, failed=1)
    assert latest(root)["step-a/ac-marked"].reason == "TEST_FAILED"
    recorded = len(evidence(root))
    result = pytester.runpytest_subprocess("--plangraph", *loosening)
    assert result.parseoutcomes()["passed"] == 3  # the warning no longer fails the test
    assert evidence(root)[recorded:] == []
    assert "not verified in this run: 3 (3 NOT_COLLECTED)" in section(result.stdout.str())


@pytest.mark.parametrize(
    ("args", "narrowed"),
    [
        (["--ignore=a"], True),
        (["--ignore", "a"], True),
        (["--ignore-glob=*x*"], True),
        (["-o", "testpaths=x"], True),
        (["-onorecursedirs=x"], True),
        (["--override-ini", "python_functions = check_*"], True),
        (["-vo", "python_functions=x"], True),
        (["-qopython_files=x"], True),
        (["-c", "alt.ini"], True),
        (["--config-file=alt.ini"], True),
        (["-k", "-otestpaths=x"], False),  # the value of -k
        (["-n", "2", "-vx"], False),
        (["-o", "xfail_strict=true"], False),
        (["-o", "addopts=--ignore=tests/b"], True),
        (["-o", "collect_imported_tests=false"], True),
        (["-x", "-q", "--plangraph"], False),
        (["--", "--ignore=a"], False),
        # what loosens the project's configuration: a test could pass that would not
        (["-W", "ignore::UserWarning"], True),
        (["-Wdefault"], True),
        (["--pythonwarnings=always"], True),
        (["-W", "error::DeprecationWarning"], False),
        (["-p", "no:warnings"], True),
        (["-pno:skipping"], True),
        (["-p", "no:tests.fixtures"], True),
        (["-p", "no:cacheprovider", "-p", "no:cov"], False),
        (["-p", "tests.fixtures"], False),
        (["--runxfail"], True),
        (["--noconftest"], True),
        (["--confcutdir=tests"], True),
        (["-o", "filterwarnings=ignore"], True),
        (["-o", "pythonpath=elsewhere"], True),
    ],
)
def test_narrowing_options(args: list[str], narrowed: bool) -> None:
    from pytest_plangraph.plugin.config import narrowing_options

    assert bool(narrowing_options(args)) is narrowed


def test_a_plan_edited_during_the_run_loses_none_of_its_records(pytester: pytest.Pytester) -> None:
    tests = """
import pathlib
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    plan = pathlib.Path("plangraph.yaml")
    # a broken edit: the edge now names a node that is not there
    plan.write_text(plan.read_text().replace("from: step-a,", "from: step-x,"))

def test_pattern_one():
    pass
"""
    root = make_project(pytester, tests=tests)
    result = pytester.runpytest("--plangraph")
    assert result.ret == 0, result.stdout.str()
    assert "evidence recorded: 3 passed" in result.stdout.str()
    assert sorted(latest(root)) == ["step-a/ac-marked", "step-a/ac-pattern", "step-b/ac-exists"]


def test_an_actor_the_records_could_not_carry_is_refused_before_any_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(pytester)
    monkeypatch.setenv("PLANGRAPH_ACTOR", "ci\nforged")
    result = pytester.runpytest_subprocess("--plangraph")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "PLANGRAPH_ACTOR" in result.stderr.str()
    assert "passed" not in result.stdout.str()  # no test ran


def test_an_argument_file_is_read_and_the_projects_own_config_file_is_the_suite(
    pytester: pytest.Pytester,
) -> None:
    files = {
        "tests/test_a.py": SPLIT.format(name="a", ok=True),
        "tests/test_b.py": SPLIT.format(name="b", ok=False),
        "args.txt": "--ignore=tests/test_b.py\n",
    }
    root = make_project(pytester, files=files)
    pytester.runpytest("--plangraph", "@args.txt")
    assert "step-a/ac-marked" not in latest(root)  # the failing test was left out: no pass
    (root / "tests/test_b.py").write_text(SPLIT.format(name="b", ok=True))
    result = pytester.runpytest("--plangraph", "-c", "pytest.ini")  # as CI and tox name it
    assert result.ret == 0
    assert latest(root)["step-a/ac-marked"].outcome == "passed"
