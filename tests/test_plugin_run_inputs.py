"""A pytest run with the plugin, what it binds and narrows: declared artifacts, outputs changed
during the run, stale nodes in the summary, the configuration that is the suite, a plan edited
mid-run.
"""

from __future__ import annotations

import pytest
from plugin_helpers import TESTS, evidence, latest, make_project, section
from run_helpers import SPLIT, sha256


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
    shown = "\n".join(section(result.stdout.str()))
    assert "not verified in this run: 3 (3 NOT_COLLECTED)" in shown
    assert "no pass recorded: the suite is narrowed by " in shown


def test_a_narrowed_run_says_what_narrowed_it(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    whole = "\n".join(section(pytester.runpytest("--plangraph").stdout.str()))
    assert "narrowed" not in whole and "no pass recorded" not in whole
    recorded = len(evidence(root))
    for args, words in (
        (["tests"], "test paths or ids on the command line"),
        (["--ignore=tests/none"], "--ignore or --ignore-glob"),
        (["-p", "no:doctest"], "an option that loosens the configuration, one of -p no:NAME"),
        (
            ["--ignore=tests/none", "-W", "ignore"],
            "--ignore or --ignore-glob, and an option that loosens",
        ),
    ):
        shown = "\n".join(section(pytester.runpytest("--plangraph", *args).stdout.str()))
        assert f"no pass recorded: the suite is narrowed by {words}" in shown
    assert len(evidence(root)) == recorded  # nothing passed, nothing failed: none recorded


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
        (["-o", "strict_xfail = On"], False),
        (["-o", "xfail_strict=false"], True),  # a strict XPASS the project fails, let through
        (["-o=xfail_strict=false"], True),  # argparse: the value after "-o="
        (["-o=xfail_strict=true"], False),
        (["-W=error"], False),
        (["-vo=xfail_strict=false"], False),  # argparse: the name "=xfail_strict", unknown
        (["--override-ini=strict_xfail=0"], True),
        (["-o", "strict=no"], True),
        (["-vostrict_markers="], True),
        (["-o", "doctest_optionflags=ELLIPSIS"], True),
        (["-o", "markers=unknown: registered"], True),
        (["-o", "empty_parameter_set_mark=skip"], True),
        (["-o", "junit_family=xunit2"], False),
        (["--disable-plugin-autoload", "-p", "pytest_plangraph.plugin"], True),
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
