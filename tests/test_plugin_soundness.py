"""A run whose tests could not fail records no pass: stripped asserts (``python -O``,
``PYTHONOPTIMIZE``) and bytecode older than its source, in serial runs and under xdist.

Each attack is made on a real copy of the JWT-login sample in a real git repository: the login
is broken so that any password gets a token, and the test of the 401 answer would catch it.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from plugin_helpers import LOGIN, break_login, evidence, jwt_project, latest, section

from pytest_plangraph.plugin.soundness import join_facts, no_pass_reasons

TOKEN = "step-token-endpoint"
REFS = [f"{TOKEN}/ac-http-200", f"{TOKEN}/ac-invalid-401", "step-user-schema/ac-schema-valid"]


def unverified_line(result: pytest.RunResult) -> str:
    """The summary's ``not verified in this run`` line."""
    return next(
        line for line in section(result.stdout.str()) if line.startswith("not verified in this")
    )


@pytest.fixture(autouse=True)
def _bytecode_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # The runs below start from a clean environment as far as bytecode goes: a user's shell
    # neither forbids writing it nor redirects it.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.delenv("PYTHONOPTIMIZE", raising=False)


@pytest.mark.parametrize(
    ("how", "args", "env", "ini"),
    [
        ("PYTHONOPTIMIZE", ["--assert=plain"], {"PYTHONOPTIMIZE": "1"}, ""),
        ("-O", ["--assert=plain"], {}, ""),
        ("-OO", ["--assert=plain"], {}, ""),
        ("PYTEST_ADDOPTS", [], {"PYTHONOPTIMIZE": "2", "PYTEST_ADDOPTS": "--assert=plain"}, ""),
        ("ini addopts", [], {"PYTHONOPTIMIZE": "1"}, "addopts = --assert=plain\n"),
    ],
)
def test_a_run_whose_asserts_are_stripped_records_no_pass(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
    args: list[str],
    env: dict[str, str],
    ini: str,
) -> None:
    root = jwt_project(pytester)
    if ini:
        (root / "pytest.ini").write_text(f"[pytest]\ntestpaths = tests\n{ini}")
    break_login(root)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    flags = [how] if how.startswith("-O") else []
    result = pytester.run(sys.executable, *flags, "-m", "pytest", "--plangraph", *args)
    result.assert_outcomes(passed=3, warnings=1)  # the broken login passes: no assert ran
    assert "ASSERTIONS ARE NOT EXECUTED" in result.stdout.str()
    assert evidence(root) == []
    assert unverified_line(result) == "not verified in this run: 3 (3 ASSERTS_DISABLED)"
    assert any(
        line.startswith("no pass recorded: the interpreter strips assert statements")
        for line in section(result.stdout.str())
    )
    assert result.ret == 0  # pytest's own exit code; without --plangraph-gate it is kept


def test_with_rewritten_asserts_an_optimized_run_records_failures_but_no_pass(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest rewrites the asserts of test modules into plain `if` statements, which -O keeps,
    # but the asserts of the code under test are stripped all the same
    root = jwt_project(pytester)
    (root / "src/auth/checks.py").write_text("def positive(n):\n    assert n > 0\n    return n\n")
    (root / "tests/test_checks.py").write_text(
        "import pytest\nfrom src.auth.checks import positive\n\n"
        f'@pytest.mark.criterion("{TOKEN}/ac-http-200")\n'
        "def test_positive_refuses_zero():\n"
        "    with pytest.raises(AssertionError):\n        positive(0)\n"
    )
    break_login(root)
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")
    result = pytester.runpytest_subprocess("--plangraph")
    result.assert_outcomes(passed=2, failed=2, warnings=1)
    records = latest(root)
    assert sorted(records) == [f"{TOKEN}/ac-http-200", f"{TOKEN}/ac-invalid-401"]
    assert {r.outcome for r in records.values()} == {"failed"}
    assert [(r.run.optimize, r.run.assert_mode) for r in records.values()] == [(1, "rewrite")] * 2
    assert unverified_line(result) == "not verified in this run: 1 (1 ASSERTS_DISABLED)"


def test_a_normal_run_records_its_interpreter_flags(pytester: pytest.Pytester) -> None:
    root = jwt_project(pytester)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    records = latest(root)
    assert sorted(records) == sorted(REFS)
    assert {(r.outcome, r.run.optimize, r.run.assert_mode) for r in records.values()} == {
        ("passed", 0, "rewrite")
    }
    # plain asserts still run when nothing strips them: that run decides as any other
    break_login(root)
    pytester.runpytest_subprocess("--plangraph", "--assert=plain").assert_outcomes(
        passed=2, failed=1
    )
    record = latest(root)[f"{TOKEN}/ac-invalid-401"]
    assert (record.outcome, record.run.optimize, record.run.assert_mode) == ("failed", 0, "plain")


@pytest.mark.parametrize("where", ["environment", "workers only"])
def test_optimized_xdist_workers_record_no_pass(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    root = jwt_project(pytester)
    break_login(root)
    if where == "environment":
        monkeypatch.setenv("PYTHONOPTIMIZE", "1")
        workers = ["-n", "2"]
    else:  # the controller runs no test; workers started with -O strip their asserts
        workers = ["--dist", "load", "--tx", f"2*popen//python={sys.executable} -O"]
    result = pytester.runpytest_subprocess("--plangraph", "--assert=plain", *workers)
    assert result.parseoutcomes()["passed"] == 3
    assert evidence(root) == []
    assert unverified_line(result) == "not verified in this run: 3 (3 ASSERTS_DISABLED)"


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_broken_source_behind_stale_bytecode_is_run_from_source(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    root = jwt_project(pytester)
    break_login(root, unnoticed=True)
    # the attack works without the plugin: the cached bytecode of the good login runs
    pytester.runpytest_subprocess(*workers).assert_outcomes(passed=2)
    cached = root / "src/auth/__pycache__" / f"login.{sys.implementation.cache_tag}.pyc"
    result = pytester.runpytest_subprocess("--plangraph", *workers)
    result.assert_outcomes(passed=2, failed=1)
    record = latest(root)[f"{TOKEN}/ac-invalid-401"]
    assert (record.outcome, record.reason) == ("failed", "TEST_FAILED")
    # the run cached the module again, checked against the hash of its source (PEP 552) …
    data = cached.read_bytes()
    assert data[4:8] == (0b11).to_bytes(4, "little")
    assert data[8:16] == importlib.util.source_hash((root / LOGIN).read_bytes())
    # … which a later run without the plugin takes only for exactly this source
    pytester.runpytest_subprocess(*workers).assert_outcomes(passed=1, failed=1)


@pytest.mark.parametrize(
    ("workers", "outcomes", "refused"),
    [
        # the process that imported the stale module ran the tests: nothing fails
        ([], {"passed": 3}, 3),
        # the controller imported it and runs no test; the workers start after the stale
        # bytecode is gone and fail the test, but the run still records no pass
        (["-n", "2"], {"passed": 2, "failed": 1}, 2),
    ],
)
def test_a_module_imported_before_the_run_from_stale_bytecode_records_no_pass(
    pytester: pytest.Pytester, workers: list[str], outcomes: dict[str, int], refused: int
) -> None:
    root = jwt_project(pytester)
    # a plugin named with -p is imported before any conftest, and imports the code under test
    (root / "authplugin.py").write_text("from src.auth.login import login  # noqa: F401\n")
    break_login(root, unnoticed=True)
    result = pytester.runpytest_subprocess("--plangraph", "-p", "authplugin", *workers)
    result.assert_outcomes(**outcomes)
    assert [(r.ref, r.outcome) for r in evidence(root)] == (
        [(f"{TOKEN}/ac-invalid-401", "failed")] if workers else []
    )
    assert unverified_line(result) == (
        f"not verified in this run: {refused} ({refused} STALE_BYTECODE)"
    )
    assert f"no pass recorded: bytecode that does not match its source ran for {LOGIN}" in (
        result.stdout.str()
    )
    # the run removed the bytecode that only size and mtime vouched for: the same command
    # now imports the plugin's module from its source, and records the failure
    again = pytester.runpytest_subprocess("--plangraph", "-p", "authplugin", *workers)
    again.assert_outcomes(passed=2, failed=1)
    assert latest(root)[f"{TOKEN}/ac-invalid-401"].reason == "TEST_FAILED"
    assert "no pass recorded" not in again.stdout.str()


CHILD_TEST = f"""
import subprocess
import sys

import pytest

@pytest.mark.criterion("{TOKEN}/ac-invalid-401")
def test_wrong_password_in_a_process_of_its_own():
    code = "from src.auth.login import login; print(login('alice', 'wrong')[0])"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.strip() == "401"
"""


def test_a_process_a_test_starts_runs_the_source_too(pytester: pytest.Pytester) -> None:
    root = jwt_project(pytester)
    (root / "tests/test_child.py").write_text(CHILD_TEST)
    break_login(root, unnoticed=True)
    # without the plugin the new process takes the cached bytecode of the good login
    pytester.runpytest_subprocess("tests/test_child.py").assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess("--plangraph")
    result.assert_outcomes(passed=2, failed=2)
    record = latest(root)[f"{TOKEN}/ac-invalid-401"]
    assert (record.outcome, record.details["tests"]) == (
        "failed",
        {
            "tests/test_child.py::test_wrong_password_in_a_process_of_its_own": "failed",
            "tests/test_login.py::test_login_wrong_password": "failed",
        },
    )


def test_the_guard_is_in_place_during_the_run_and_removed_after(
    pytester: pytest.Pytester,
) -> None:
    root = jwt_project(pytester)
    (root / "tests/test_guard.py").write_text(
        "import pathlib\nimport sys\n\ndef test_where():\n"
        "    names = [type(f).__name__ for f in sys.meta_path]\n"
        "    pathlib.Path('finders.txt').write_text(' '.join(names))\n"
    )
    finders, prefix = list(sys.meta_path), sys.pycache_prefix
    # this suite may itself run under ``pytest --plangraph``: its own guard is already there
    outer = [type(f).__name__ for f in finders].count("ProjectFinder")
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    during = (root / "finders.txt").read_text().split()
    assert during.count("ProjectFinder") == outer + 1
    # after pytest's assertion rewriters (this process's own and the inner run's), before
    # every other finder; first of all the finder of this package's own modules alone
    # (pytest_plangraph.bundle)
    before = during[: during.index("ProjectFinder")]
    assert before[0] == "BundleFinder"
    assert before[1:] and set(before[1:]) == {"AssertionRewritingHook"}
    assert (sys.meta_path, sys.pycache_prefix) == (finders, prefix)
    pytester.runpytest().assert_outcomes(passed=3)  # without --plangraph there is no guard
    assert (root / "finders.txt").read_text().split().count("ProjectFinder") == outer


@pytest.mark.parametrize(
    ("facts", "codes"),
    [
        ([{"optimize": 0, "assert_mode": "rewrite", "stale_bytecode": []}], []),
        ([{"optimize": 0, "assert_mode": "plain", "stale_bytecode": []}], []),
        ([{"optimize": 1, "assert_mode": "rewrite", "stale_bytecode": []}], ["ASSERTS_DISABLED"]),
        (
            [
                {"optimize": 0, "assert_mode": "rewrite", "stale_bytecode": ["a.py"]},
                {"optimize": 2, "assert_mode": "plain", "stale_bytecode": []},
            ],
            ["ASSERTS_DISABLED", "STALE_BYTECODE"],
        ),
    ],
)
def test_the_facts_of_every_process_count(facts: list[dict[str, object]], codes: list[str]) -> None:
    joined = join_facts(facts)
    assert [code for code, _ in no_pass_reasons(joined)] == codes
    assert joined["optimize"] == max(int(str(f["optimize"])) for f in facts)
