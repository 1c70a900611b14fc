"""``pytest --plangraph --plangraph-stale``: only the closure of a change runs, and the gate
after such a run agrees with the gate after a full run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph
from plugin_helpers import evidence, make_project, section

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: stale
nodes:
  - id: step-a
    outputs: [src/a.txt]
    acceptance:
      - id: ac-a
        verifier: {type: test, tests: ["tests/test_a.py"]}
  - id: step-b
    outputs: [src/b.txt]
    acceptance:
      - id: ac-b
        verifier: {type: test, tests: ["tests/test_b*.py::*"]}
      - id: ac-b-file
        verifier: {type: artifact, path: src/b.txt}
  - id: step-c
    outputs: [src/c.txt]
    acceptance:
      - id: ac-c
        verifier: {type: test}
edges:
  - {from: step-a, to: step-b, type: requires}
"""


def reads(name: str, count: int) -> str:
    """A test module with *count* tests that each check ``src/NAME.txt`` says ``ok``."""
    body = "from pathlib import Path\n\n"
    for i in range(count):
        body += (
            f"def test_{name}{i}():\n"
            f"    assert Path('src/{name}.txt').read_text().strip() == 'ok'\n\n"
        )
    return body


FILES = {
    "src/a.txt": "ok\n",
    "src/b.txt": "ok\n",
    "src/c.txt": "ok\n",
    "tests/test_a.py": reads("a", 2),
    "tests/test_b.py": reads("b", 3),
    "tests/test_c.py": "import pytest\n"
    + reads("c", 2).replace("def test_", "@pytest.mark.criterion('step-c/ac-c')\ndef test_"),
    "tests/test_misc.py": "def test_unmapped():\n    assert True\n",
}


@pytest.fixture
def root(pytester: pytest.Pytester) -> Path:
    """The three-step project, verified once by a full run (every node completed)."""
    made = make_project(pytester, PLAN, reads("a", 2), FILES)
    pytester.runpytest("--plangraph").assert_outcomes(passed=9)
    assert statuses(made) == dict.fromkeys(("step-a", "step-b", "step-c"), "completed")
    return made


def statuses(root: Path) -> dict[str, str]:
    """Every node's status, from the real ``plangraph status``."""
    result = plangraph(root, "status", "--format", "json")
    assert result.code in (0, 1), result.err
    return {node["id"]: node["status"] for node in result.json()["nodes"]}


def counts(root: Path) -> dict[str, int]:
    """How many evidence records each criterion has."""
    found: dict[str, int] = {}
    for record in evidence(root):
        found[record.ref] = found.get(record.ref, 0) + 1
    return found


def stale_run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--plangraph", "--plangraph-stale", *args)


def test_a_change_to_one_output_runs_only_its_criteria(
    pytester: pytest.Pytester, root: Path
) -> None:
    before = counts(root)
    (root / "src/b.txt").write_text("ok\n\n", encoding="utf-8")
    assert statuses(root)["step-b"] == "stale"
    result = stale_run(pytester, "-v")
    # the three tests of ac-b and the artifact item of ac-b-file; the rest is deselected
    result.assert_outcomes(passed=4, deselected=5)
    result.stdout.fnmatch_lines(["*tests/test_b.py::test_b0 PASSED*"])
    for name in ("test_a0", "test_c0", "test_unmapped"):
        assert name not in result.stdout.str()
    lines = section(result.stdout.str())
    assert any("STILL_VALID" in line for line in lines), lines
    after = counts(root)
    assert {ref for ref in after if after[ref] != before.get(ref, 0)} == {
        "step-b/ac-b",
        "step-b/ac-b-file",
    }
    assert statuses(root) == dict.fromkeys(("step-a", "step-b", "step-c"), "completed")


def test_a_change_upstream_reruns_its_closure_only(pytester: pytest.Pytester, root: Path) -> None:
    (root / "src/a.txt").write_text("ok\n\n", encoding="utf-8")
    result = stale_run(pytester)
    result.assert_outcomes(passed=6, deselected=3)  # a's 2 tests, b's 3 and b's artifact item
    assert statuses(root) == dict.fromkeys(("step-a", "step-b", "step-c"), "completed")


def test_nothing_stale_runs_nothing_and_keeps_the_gate(
    pytester: pytest.Pytester, root: Path
) -> None:
    before = counts(root)
    result = stale_run(pytester, "--plangraph-gate", "--plangraph-require", "step-c")
    result.assert_outcomes(deselected=9)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert counts(root) == before
    assert statuses(root)["step-c"] == "completed"


def test_a_gate_after_a_stale_run_agrees_with_one_after_a_full_run(
    pytester: pytest.Pytester, root: Path
) -> None:
    # b breaks (one of its tests fails), c's test file changes; a is untouched
    (root / "src/b.txt").write_text("broken\n", encoding="utf-8")
    (root / "tests/test_c.py").write_text(FILES["tests/test_c.py"] + "\n", encoding="utf-8")
    stale_run(pytester).assert_outcomes(passed=3, failed=3, deselected=3)
    after_stale = statuses(root)
    assert after_stale["step-b"] == "failed" and after_stale["step-c"] == "completed"
    pytester.runpytest("--plangraph").assert_outcomes(passed=6, failed=3)
    assert statuses(root) == after_stale


def test_a_test_added_under_a_valid_criterion_runs_it_again(
    pytester: pytest.Pytester, root: Path
) -> None:
    # a new file under ac-b's glob: ac-b's whole test set is no longer the one its evidence
    # names, so it runs again and fails; and a new test file may hold a criterion marker of
    # any criterion of the run (or hooks that see every test), so every criterion of that run
    # is stale and runs again (docs/evidence-and-status.md, "What a run could collect")
    (root / "tests/test_b_new.py").write_text(
        "def test_new():\n    assert False\n", encoding="utf-8"
    )
    result = stale_run(pytester)
    result.assert_outcomes(passed=7, failed=1, deselected=2)
    assert statuses(root)["step-b"] == "failed"


def test_a_valid_criterion_sharing_a_test_records_nothing_unless_its_whole_set_ran(
    pytester: pytest.Pytester,
) -> None:
    plan = PLAN.replace(
        'tests: ["tests/test_a.py"]', 'tests: ["tests/test_a.py", "tests/test_b.py::test_b0"]'
    )
    root = make_project(pytester, plan, reads("a", 2), FILES)
    pytester.runpytest("--plangraph").assert_outcomes(passed=9)
    before = counts(root)
    (root / "src/b.txt").write_text("ok\n\n", encoding="utf-8")
    result = stale_run(pytester)
    result.assert_outcomes(passed=4, deselected=5)  # test_b0 runs, for ac-b; ac-a's others not
    after = counts(root)
    assert after["step-a/ac-a"] == before["step-a/ac-a"]  # part of its set ran: nothing recorded
    assert after["step-b/ac-b"] == before["step-b/ac-b"] + 1


def test_without_evidence_everything_mapped_runs(pytester: pytest.Pytester) -> None:
    make_project(pytester, PLAN, reads("a", 2), FILES)
    result = stale_run(pytester)
    result.assert_outcomes(passed=8, deselected=1)  # only the unmapped test is left out
    assert "Traceback" not in result.stdout.str()


def test_under_xdist_the_workers_select_the_same_closure(
    pytester: pytest.Pytester, root: Path
) -> None:
    pytest.importorskip("xdist")
    (root / "src/b.txt").write_text("ok\n\n", encoding="utf-8")
    result = pytester.runpytest_subprocess("--plangraph", "--plangraph-stale", "-n", "2")
    result.assert_outcomes(passed=4)
    assert "STILL_VALID" in result.stdout.str()
    assert statuses(root) == dict.fromkeys(("step-a", "step-b", "step-c"), "completed")


def test_the_option_needs_plangraph(pytester: pytest.Pytester) -> None:
    make_project(pytester, PLAN, reads("a", 2), FILES)
    result = pytester.runpytest("--plangraph-stale")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--plangraph-stale needs --plangraph*"])


# --- plangraph impact --select ----------------------------------------------------------------


def select(root: Path, *args: str) -> tuple[list[str], Any]:
    """The text and JSON answers of ``plangraph impact --select``."""
    text = plangraph(root, "impact", "--select", *args)
    assert text.code == 0, text.err
    data = plangraph(root, "impact", "--select", "--format", "json", *args).json()
    return text.out.split(), data


def test_select_names_the_tests_of_the_closure(root: Path) -> None:
    assert select(root)[0] == []
    (root / "src/a.txt").write_text("ok\n\n", encoding="utf-8")
    ids, data = select(root)
    expected = [
        "tests/test_a.py",  # the literal id of the plan, then the tests its evidence names
        "tests/test_a.py::test_a0",
        "tests/test_a.py::test_a1",
        "tests/test_b.py::test_b0",
        "tests/test_b.py::test_b1",
        "tests/test_b.py::test_b2",
        "plangraph.yaml::step-b/ac-b-file",
    ]
    assert ids == expected
    assert data["format"] == 1 and data["select"] == expected
    assert {c["criterion"] for c in data["criteria"]} == {
        "step-a/ac-a",
        "step-b/ac-b",
        "step-b/ac-b-file",
    }
    assert data["unresolved"] == []


def test_select_ids_run_the_same_tests_as_a_stale_run(
    pytester: pytest.Pytester, root: Path
) -> None:
    (root / "src/b.txt").write_text("ok\n\n", encoding="utf-8")
    ids, _ = select(root)
    before = counts(root)
    # the verifier item is collected under --plangraph; the ids narrow the run, so the test
    # criterion records no pass (`--plangraph-stale` is the way to record it)
    result = pytester.runpytest("--plangraph", *ids)
    result.assert_outcomes(passed=4)
    assert counts(root)["step-b/ac-b"] == before["step-b/ac-b"]


def test_select_without_evidence_says_what_it_cannot_resolve(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, PLAN, reads("a", 2), FILES)
    result = plangraph(root, "impact", "--select")
    assert result.code == 0
    assert result.out.split() == ["tests/test_a.py", "plangraph.yaml::step-b/ac-b-file"]
    assert "step-b/ac-b: no evidence names its tests and a tests: pattern is a glob" in result.err
    assert "step-c/ac-c: no evidence names its tests and it is mapped by markers only" in (
        result.err
    )
    assert not (root / ".plangraph").exists()  # reading made no store


@pytest.mark.parametrize(
    "extra", [["--since", "HEAD"], ["--apply"], ["--check"], ["--format", "markdown"]]
)
def test_select_refuses_options_it_cannot_honour(
    pytester: pytest.Pytester, extra: list[str]
) -> None:
    root = make_project(pytester, PLAN, reads("a", 2), FILES)
    result = plangraph(root, "impact", "--select", *extra)
    assert result.code == 2
    assert f"cannot be combined with {extra[0]}" in result.err
    assert "Traceback" not in result.err
