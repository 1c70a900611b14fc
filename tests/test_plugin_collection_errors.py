"""A collector that fails (a test file that does not import) or is skipped whole never gives
passing evidence to a criterion whose tests it may hold, serially and under pytest-xdist."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_helpers import latest, make_project, section

from pytest_plangraph.plan.model import runtime_plan
from pytest_plangraph.plan.patterns import may_hold
from pytest_plangraph.plugin.mapping import collection_suspects
from pytest_plangraph.plugin.summary import RunReport, render
from pytest_plangraph.plugin.verdicts import TEST_SKIPPED, Unverified, Verdict, criterion_verdict

PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-a
    outputs: [src/a.py]
    acceptance:
      - id: ac-glob
        verifier: {type: test, tests: ["tests/test_*.py::*success*"]}
      - id: ac-file
        verifier: {type: test, tests: ["tests/test_zbroken.py::*"]}
      - id: ac-marked
        verifier: {type: test}
      - id: ac-elsewhere
        verifier: {type: test}
      - id: ac-login
        verifier: {type: test, tests: ["tests/test_a.py::test_login"]}
"""

TESTS = """
import pytest

def test_login_success():
    pass

def test_login():
    pass

@pytest.mark.criterion("step-a/ac-elsewhere")
def test_elsewhere():
    pass
"""

BROKEN = """
import nonexistent_module
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_other_success():
    pass
"""


@pytest.mark.parametrize(
    "args",
    [["--continue-on-collection-errors"], ["-n", "2"]],
    ids=["serial", "xdist"],
)
def test_a_file_that_fails_to_import_voids_the_criteria_it_may_verify(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    run = pytester.runpytest
    if "-n" in args:
        pytest.importorskip("xdist")
        run = pytester.runpytest_subprocess
    root = make_project(pytester, plan=PLAN, tests=TESTS, files={"tests/test_zbroken.py": BROKEN})
    result = run("--plangraph", *args)
    result.assert_outcomes(passed=3, errors=1)
    records = latest(root)
    outcomes = {ref: (r.outcome, r.reason) for ref, r in records.items()}
    not_collected = ("error", "NOT_COLLECTED")
    assert outcomes == {
        "step-a/ac-glob": not_collected,  # its pattern could match a test of the broken file
        "step-a/ac-file": not_collected,
        "step-a/ac-marked": not_collected,  # the broken file's source names it
        "step-a/ac-elsewhere": ("passed", None),
        "step-a/ac-login": ("passed", None),
    }
    glob = records["step-a/ac-glob"].details
    assert glob["tests"] == {"tests/test_a.py::test_login_success": "passed"}
    assert glob["not_collected"] == ["tests/test_zbroken.py"]
    assert "tests/test_zbroken.py" in glob["message"]
    lines = section(result.stdout.str())
    assert lines[0].endswith("evidence recorded: 3 error, 2 passed")
    assert (
        "collection errors in tests/test_zbroken.py: evidence may be incomplete "
        "(their tests never ran)"
    ) in lines


def test_a_run_stopped_by_the_collection_error_records_nothing(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester, plan=PLAN, tests=TESTS, files={"tests/test_zbroken.py": BROKEN})
    result = pytester.runpytest("--plangraph")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert latest(root) == {}  # no test ran: nothing passed and nothing is decided
    lines = section(result.stdout.str())
    assert lines[0].endswith("evidence recorded: none")
    assert "collection errors in tests/test_zbroken.py" in lines[-2]
    assert lines[-1] == "not verified in this run: 5 (2 NOT_COLLECTED, 3 NOT_RUN)"


def test_a_failing_conftest_voids_the_criteria_of_its_directory(
    pytester: pytest.Pytester,
) -> None:
    plan = PLAN.replace("tests/test_zbroken.py::*", "tests/sub/test_s.py::test_s")
    files = {
        "tests/sub/conftest.py": "import nonexistent_module\n",
        "tests/sub/test_s.py": "def test_s():\n    pass\n",
    }
    root = make_project(pytester, plan=plan, tests=TESTS, files=files)
    result = pytester.runpytest("--plangraph", "--continue-on-collection-errors")
    result.assert_outcomes(passed=3, errors=1)
    records = latest(root)
    assert (records["step-a/ac-file"].outcome, records["step-a/ac-file"].reason) == (
        "error",
        "NOT_COLLECTED",
    )
    assert records["step-a/ac-file"].details["not_collected"] == ["tests/sub"]
    assert records["step-a/ac-glob"].outcome == "passed"  # `tests/test_*` cannot reach it
    assert records["step-a/ac-login"].outcome == "passed"
    assert "collection errors in tests/sub" in result.stdout.str()


@pytest.mark.parametrize(
    ("pattern", "collector", "expected"),
    [
        ("tests/test_*.py::*success*", "tests/test_zbroken.py", True),
        ("tests/*success*", "tests/test_zbroken.py", True),  # `*` spans `::`
        ("tests/test_zbroken.py::*", "tests/test_zbroken.py", True),
        ("tests/test_zbroken.py", "tests/test_zbroken.py", True),
        ("tests/test_zbroken.py::test_x[1]", "tests/test_zbroken.py", True),
        ("tests/test_a.py", "tests/test_a.py::TestX", True),  # a class that failed
        ("tests/test_a.py::TestY::test_y", "tests/test_a.py::TestX", False),
        ("tests/sub/test_s.py::test_s", "tests/sub", True),  # a directory that failed
        ("tests/*/test_s.py", "tests/sub", True),
        ("tests/test_[ab].py::*", "tests/test_a.py", True),
        ("tests/test_[!ab].py::*", "tests/test_a.py", False),
        ("tests/test_login.py::test_login_success", "tests/test_zbroken.py", False),
        ("tests/test_a.py", "tests/test_a.py.bak", False),
        ("tests/test_ab.py", "tests/test_a", False),
        ("src/*", "tests/test_zbroken.py", False),
    ],
)
def test_which_patterns_may_hold_a_failed_collectors_tests(
    pattern: str, collector: str, expected: bool
) -> None:
    assert may_hold(pattern, collector) is expected


def test_collection_suspects_read_the_failed_source_for_marker_references(
    tmp_path: Path,
) -> None:
    plan = runtime_plan(
        {
            "plangraph": 1,
            "plan": "demo",
            "nodes": [
                {
                    "id": "step-a",
                    "acceptance": [
                        {"id": "ac-named", "verifier": {"type": "test"}},
                        {"id": "ac-named-too", "verifier": {"type": "test"}},
                        {"id": "ac-pattern", "verifier": {"type": "test", "tests": ["t/*"]}},
                    ],
                }
            ],
        }
    )
    (tmp_path / "t").mkdir()
    (tmp_path / "t/test_x.py").write_text("MARK = 'step-a/ac-named'\n", encoding="utf-8")
    assert collection_suspects(plan, ["t/test_x.py"], tmp_path) == {
        "step-a/ac-named": ["t/test_x.py"],  # not ac-named-too: the quotes bound the reference
        "step-a/ac-pattern": ["t/test_x.py"],
    }
    assert collection_suspects(plan, ["u/missing.py"], tmp_path) == {}
    everything = collection_suspects(plan, ["."], tmp_path)  # the rootdir itself failed
    assert sorted(everything) == ["step-a/ac-named", "step-a/ac-named-too", "step-a/ac-pattern"]
    # a failed class: only its own source (with its decorators) may hold marked tests
    (tmp_path / "t/test_y.py").write_text(
        "import pytest\n\n"
        '@pytest.mark.criterion("step-a/ac-named")\n'
        "def test_fine():\n    pass\n\n"
        "class TestOuter:\n"
        '    @pytest.mark.criterion("step-a/ac-named-too")\n'
        "    class TestBroken:\n"
        "        def test_x(self):\n            pass\n",
        encoding="utf-8",
    )
    broken_class = collection_suspects(plan, ["t/test_y.py::TestOuter::TestBroken"], tmp_path)
    assert sorted(broken_class) == ["step-a/ac-named-too", "step-a/ac-pattern"]
    unknown_class = collection_suspects(plan, ["t/test_y.py::TestGone"], tmp_path)
    assert sorted(unknown_class) == sorted(everything)  # not found: the whole file counts


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ({"t1": "passed"}, Verdict("error", "NOT_COLLECTED")),
        ({}, Verdict("error", "NOT_COLLECTED")),
        ({"t1": "passed", "t2": "failed"}, Verdict("failed", "TEST_FAILED")),  # a fact wins
    ],
)
def test_an_uncollected_file_is_an_error_unless_a_test_failed(
    outcomes: dict[str, str | None], expected: Verdict | Unverified
) -> None:
    verdict = criterion_verdict(outcomes, uncollected=["tests/test_b.py"])
    assert verdict == expected


def test_the_summary_warns_of_collection_errors_even_when_quiet() -> None:
    report = RunReport(collection_errors=["tests/test_b.py", "tests/sub"])
    texts = ["".join(text for text, _ in line) for line in render(report, -1)]
    assert (
        "collection errors in tests/test_b.py, tests/sub: evidence may be incomplete "
        "(their tests never ran)"
    ) in texts
    assert not any("collection errors" in text for line in render(RunReport(), 0) for text in line)


SKIPPED = """
import pytest

pytest.importorskip("a_module_nobody_installed")

@pytest.mark.criterion("step-a/ac-marked")
def test_other_success():
    pass
"""


@pytest.mark.parametrize("args", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_file_skipped_whole_gives_its_criteria_no_pass(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    """``pytest.importorskip`` at the top of a file: its tests never run, like a skipped test."""
    run = pytester.runpytest_subprocess if args else pytester.runpytest
    files = {"tests/test_zbroken.py": SKIPPED}
    root = make_project(pytester, plan=PLAN, tests=TESTS, files=files)
    result = run("--plangraph", *args)
    result.assert_outcomes(passed=3, skipped=1)
    records = latest(root)
    outcomes = {ref: (r.outcome, r.reason) for ref, r in records.items()}
    skipped = ("error", TEST_SKIPPED)
    assert outcomes == {
        "step-a/ac-glob": skipped,  # its pattern could match a test of the skipped file
        "step-a/ac-file": skipped,  # all its tests are there (not TEST_NOT_FOUND)
        "step-a/ac-marked": skipped,  # the skipped file's source names it
        "step-a/ac-elsewhere": ("passed", None),
        "step-a/ac-login": ("passed", None),
    }
    glob = records["step-a/ac-glob"].details
    assert glob["tests"] == {"tests/test_a.py::test_login_success": "passed"}
    assert glob["skipped_whole"] == ["tests/test_zbroken.py"]
    assert "tests/test_zbroken.py was skipped whole" in glob["message"]
    lines = section(result.stdout.str())
    assert (
        "skipped whole: tests/test_zbroken.py (their tests never ran; criteria they may hold "
        "are TEST_SKIPPED)"
    ) in lines


def test_a_failure_outweighs_a_file_skipped_whole() -> None:
    skipped_whole = ["tests/test_z.py"]
    failed = criterion_verdict({"t::a": "failed"}, skipped_whole=skipped_whole)
    assert failed == Verdict("failed", "TEST_FAILED")
    passed = criterion_verdict({"t::a": "passed"}, skipped_whole=skipped_whole)
    assert passed == Verdict("error", TEST_SKIPPED)
    assert criterion_verdict({"t::a": "passed"}) == Verdict("passed")


def test_a_mistyped_pattern_is_not_excused_by_a_file_skipped_whole() -> None:
    skipped_whole = ["tests/test_z.py"]
    held = ["tests/test_z.py::test_a"]  # a pattern the skipped file could hold
    assert criterion_verdict({}, unmatched=held, skipped_whole=skipped_whole) == Verdict(
        "error", TEST_SKIPPED
    )
    typo = ["tests/test_y.py::test_a"]  # nothing skipped could hold it: it matches nothing
    for unmatched in (typo, [*held, *typo]):
        verdict = criterion_verdict({}, unmatched=unmatched, skipped_whole=skipped_whole)
        assert verdict == Verdict("error", "TEST_NOT_FOUND")
    # a test that failed still outweighs a pattern whose tests sit in the skipped file
    failed = criterion_verdict({"t::a": "failed"}, unmatched=held, skipped_whole=skipped_whole)
    assert failed == Verdict("failed", "TEST_FAILED")


def test_a_typo_beside_tests_in_a_file_skipped_whole_is_test_not_found(
    pytester: pytest.Pytester,
) -> None:
    typo = """
      - id: ac-typo
        verifier: {type: test, tests: ["tests/test_zbroken.py::*", "tests/test_a.py::test_lgoin"]}
"""
    plan = PLAN.rstrip("\n") + typo
    root = make_project(pytester, plan=plan, tests=TESTS, files={"tests/test_zbroken.py": SKIPPED})
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3, skipped=1)
    records = latest(root)
    assert (records["step-a/ac-typo"].outcome, records["step-a/ac-typo"].reason) == (
        "error",
        "TEST_NOT_FOUND",
    )
    assert records["step-a/ac-typo"].details["unmatched"] == [
        "tests/test_zbroken.py::*",
        "tests/test_a.py::test_lgoin",
    ]
    # the criterion whose only pattern points into the skipped file stays TEST_SKIPPED
    assert records["step-a/ac-file"].reason == TEST_SKIPPED


@pytest.mark.parametrize(
    "args", [["--continue-on-collection-errors"], ["-n", "2"]], ids=["serial", "xdist"]
)
def test_a_typo_is_test_not_found_beside_a_file_that_cannot_hold_it(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    """A failed collector voids only the criteria whose tests it may hold: a pattern it could
    not hold still matched nothing anywhere."""
    run = pytester.runpytest_subprocess if "-n" in args else pytester.runpytest
    typo = """
      - id: ac-typo
        verifier: {type: test, tests: ["tests/test_zzz.py::test_x"]}
"""
    plan = PLAN.rstrip("\n") + typo
    root = make_project(pytester, plan=plan, tests=TESTS, files={"tests/test_zbroken.py": BROKEN})
    run("--plangraph", *args)
    records = latest(root)
    assert (records["step-a/ac-typo"].outcome, records["step-a/ac-typo"].reason) == (
        "error",
        "TEST_NOT_FOUND",
    )
    assert records["step-a/ac-file"].reason == "NOT_COLLECTED"  # the broken file may hold it


def test_a_run_stopped_by_a_collection_error_records_nothing_for_skipped_files_either(
    pytester: pytest.Pytester,
) -> None:
    files = {"tests/test_zbroken.py": BROKEN, "tests/test_zskipped.py": SKIPPED}
    root = make_project(pytester, plan=PLAN, tests=TESTS, files=files)
    result = pytester.runpytest("--plangraph")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert latest(root) == {}


def test_a_deselected_criterion_is_not_decided_by_a_file_skipped_whole(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester, plan=PLAN, tests=TESTS, files={"tests/test_zbroken.py": SKIPPED})
    result = pytester.runpytest("--plangraph", "-k", "login and not success")
    result.assert_outcomes(passed=1, deselected=2, skipped=1)
    records = latest(root)
    assert "step-a/ac-glob" not in records  # its only test was deselected: DESELECTED
    assert (records["step-a/ac-login"].outcome, records["step-a/ac-login"].reason) == (
        "passed",
        None,
    )
