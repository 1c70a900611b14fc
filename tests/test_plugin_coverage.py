"""``pytest --plangraph --plangraph-coverage``: executed files become evidence subjects, lint
proposes the edges coverage saw, pytest-cov keeps its report, xdist learns the same."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import coverage  # noqa: F401  (imported before any in-process run, which drops what it imports)
import pytest
from cli_helpers import plangraph_main
from plugin_helpers import evidence, latest, make_project

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.lint.coverage import executed_by_node, implicit_dependencies
from pytest_plangraph.plan.evidence import ABSENT
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import runtime_plan
from pytest_plangraph.plan.paths import COLLECT
from pytest_plangraph.plugin.coverage import (
    context_test,
    force_ctrace,
    no_origin_stack,
    repository_file,
    restore_core,
)
from pytest_plangraph.plugin.evidence import RunResults, decide
from pytest_plangraph.plugin.mapping import CriterionTests, Mapping

PLAN = """
plangraph: 1
plan: cov
nodes:
  - id: step-lib
    outputs: [src/lib/core.py]
    acceptance:
      - id: ac-lib
        verifier: {type: test, tests: ["tests/test_lib.py"]}
  - id: step-app
    outputs: [src/app/main.py]
    acceptance:
      - id: ac-app
        verifier: {type: test, tests: ["tests/test_app.py::test_run"]}
"""

FILES = {
    "src/lib/__init__.py": "",
    "src/lib/core.py": "def double(x):\n    return 2 * x\n",
    "src/helper.py": "def inc(x):\n    return x + 1\n",
    "src/unused.py": "def never():\n    return 0\n",
    "src/app/__init__.py": "",
    "src/app/main.py": """
        from helper import inc
        from lib.core import double

        def run(x):
            return inc(double(x))
        """,
    "tests/test_lib.py": """
        from lib.core import double

        def test_double():
            assert double(2) == 4
        """,
    "tests/test_app.py": """
        import json

        import outside_mod
        from app.main import run

        def test_run():
            assert json.loads(json.dumps(run(2))) == 5
            assert outside_mod.triple(1) == 3

        def test_unmapped():  # runs next, in no criterion's context
            import unused
            assert unused.never() == 0
        """,
    "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src ../outside-{name}\n",
}


APP_LEARNED = [
    "src/app/__init__.py",  # imported with its module: it ran, whoever imported it first
    "src/app/main.py",
    "src/helper.py",
    "src/lib/__init__.py",
    "src/lib/core.py",
    "tests/test_app.py",
]
"""What step-app's test learns: the files it executed and the modules they import (not
``src/unused.py``, which another test of its file imports inside the test function)."""
LIB_LEARNED = ["src/lib/__init__.py", "src/lib/core.py", "tests/test_lib.py"]


def coverage_project(pytester: pytest.Pytester, plan: str = PLAN) -> Path:
    """The project above, with a module outside the repository on ``sys.path``."""
    outside = pytester.path.parent / f"outside-{pytester.path.name}"
    outside.mkdir()
    (outside / "outside_mod.py").write_text("def triple(x):\n    return 3 * x\n")
    files = {**FILES, "pytest.ini": FILES["pytest.ini"].format(name=pytester.path.name)}
    return make_project(pytester, plan=plan, tests="", files=files)


def test_an_executed_file_no_plan_entry_names_makes_the_evidence_stale(
    pytester: pytest.Pytester,
) -> None:
    root = coverage_project(pytester)
    pytester.runpytest("--plangraph", "--plangraph-coverage").assert_outcomes(passed=3)
    records = latest(root)
    app, lib = records["step-app/ac-app"], records["step-lib/ac-lib"]
    assert app.details["coverage"] == APP_LEARNED
    assert lib.details["coverage"] == LIB_LEARNED
    # and the configuration file the run read, which binds every test's evidence
    present = {p for p, sha in app.subjects.items() if sha != ABSENT and COLLECT not in p}
    assert present == {*app.details["coverage"], "tests/test_app.py", "pytest.ini"}
    assert all((root / path).is_file() for path in present)
    (root / "src/helper.py").write_text("def inc(x):\n    return x + 2\n")
    with PlanGraph.open(root) as graph:
        nodes = graph.status().nodes
    assert nodes["step-lib"].status == "completed"
    assert nodes["step-app"].status == "stale"
    assert "src/helper.py" in str(nodes["step-app"].reasons)


def test_without_the_option_executed_files_are_not_subjects(pytester: pytest.Pytester) -> None:
    root = coverage_project(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=3)
    app = latest(root)["step-app/ac-app"]
    assert "coverage" not in app.details
    assert "src/helper.py" not in app.subjects


def test_the_option_needs_plangraph(pytester: pytest.Pytester) -> None:
    coverage_project(pytester)
    result = pytester.runpytest("--plangraph-coverage")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--plangraph-coverage needs --plangraph*"])


def test_lint_proposes_the_edge_coverage_saw(pytester: pytest.Pytester) -> None:
    root = coverage_project(pytester)
    assert plangraph_main(root, "lint").code == 0
    assert not (root / ".plangraph").exists()  # lint creates no store
    pytester.runpytest("--plangraph", "--plangraph-coverage").assert_outcomes(passed=3)
    result = plangraph_main(root, "lint", "--format", "json")
    assert result.code == 0
    (finding,) = result.json()["findings"]
    assert finding["code"] == "IMPLICIT_DEPENDENCY"
    assert finding["severity"] == "warning"
    assert finding["node"] == "step-app"
    assert finding["location"] == "plangraph.yaml:9:5"
    assert (
        "{from: step-lib, to: step-app, type: consumes, source: coverage, confidence: 1.0, "
        "status: proposed}" in finding["hint"]
    )
    assert "src/lib/core.py" in finding["hint"]
    edge = finding["hint"].rpartition("add ")[2]  # the proposed edge, as written
    (root / "plangraph.yaml").write_text(textwrap.dedent(PLAN).lstrip() + f"edges:\n  - {edge}\n")
    assert plangraph_main(root, "lint", "--format", "json").json()["findings"] == []


def test_pytest_cov_keeps_its_report_and_its_workers_learn_the_same(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("pytest_cov")
    pytest.importorskip("xdist")
    root = coverage_project(pytester)
    serial = ".plangraph/serial.db"
    pytester.runpytest("--plangraph", "--plangraph-coverage", f"--plangraph-store={serial}")
    parallel = ".plangraph/parallel.db"
    result = pytester.runpytest_subprocess(
        *("--plangraph", "--plangraph-coverage", f"--plangraph-store={parallel}", "-n", "2"),
        *("--cov=src", "--cov-report=term-missing"),
    )
    result.assert_outcomes(passed=3)
    result.stdout.re_match_lines(  # pytest-cov's whole report, unmapped tests' lines included
        [r".*coverage: platform.*", r"src/helper\.py +2 +0 +100%", r"src/unused\.py +2 +0 +100%"]
    )

    def learned(store: str) -> dict[str, tuple[list[str], list[str]]]:
        """What each criterion learned under src/ (all that --cov=src measures)."""
        return {
            r.ref: (
                [p for p in r.details["coverage"] if p.startswith("src/")],
                sorted(p for p in r.subjects if p.startswith("src/")),
            )
            for r in evidence(root, store)
        }

    assert learned(parallel) == learned(serial)
    assert learned(parallel)["step-app/ac-app"][0] == [
        p for p in APP_LEARNED if p.startswith("src/")
    ]


def test_two_workers_measuring_on_their_own_learn_the_same(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    root = coverage_project(pytester)
    serial, parallel = ".plangraph/serial.db", ".plangraph/parallel.db"
    pytester.runpytest("--plangraph", "--plangraph-coverage", f"--plangraph-store={serial}")
    pytester.runpytest_subprocess(
        "--plangraph", "--plangraph-coverage", f"--plangraph-store={parallel}", "-n", "2"
    ).assert_outcomes(passed=3)

    def learned(store: str) -> dict[str, tuple[object, dict[str, str]]]:
        return {r.ref: (r.details["coverage"], r.subjects) for r in evidence(root, store)}

    assert learned(parallel) == learned(serial)
    assert "tests/test_lib.py" in learned(parallel)["step-lib/ac-lib"][1]


def test_only_files_inside_the_repository_count(tmp_path: Path) -> None:
    root, venv, elsewhere = tmp_path / "repo", tmp_path / "repo" / ".venv", tmp_path / "else"
    files = [
        root / "src" / "a.py",
        venv / "lib" / "x.py",
        root / "vendor" / "site-packages" / "y.py",
        elsewhere / "z.py",
    ]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (root / "link.py").symlink_to(elsewhere / "z.py")
    found = [repository_file(str(path), root, [venv]) for path in files]
    # a folder merely named site-packages is the repository's: pytest loads conftests from it
    assert found == ["src/a.py", None, "vendor/site-packages/y.py", None]
    assert repository_file(str(root / "link.py"), root) is None
    assert repository_file(str(root / "missing.py"), root) is None
    assert repository_file("<string>", root) is None


GRAPH = Graph.of(
    runtime_plan(
        {
            "plangraph": 1,
            "plan": "p",
            "nodes": [{"id": n} for n in ("a", "b", "c", "d")],
            "edges": [
                {"from": "a", "to": "b", "type": "requires"},
                {"from": "b", "to": "c", "type": "requires"},
                {"from": "d", "to": "c", "type": "related"},
            ],
        }
    )
)
OUTPUTS = {"a": ["a.py"], "b": ["b.py"], "c": ["c.py", "shared.py"], "d": ["d.py", "shared.py"]}


@pytest.mark.parametrize(
    ("executed", "expected"),
    [
        ({"c": ["a.py", "b.py", "c.py", "d.py"]}, []),  # upstream, direct, own, joined by related
        ({"b": ["c.py"]}, []),  # c depends on b: an edge joins them
        ({"a": ["b.py", "d.py"]}, [("a", "{from: d, to: a")]),  # b depends on a: joined
        ({"b": ["shared.py", "other.py"]}, [("b", "{from: d, to: b")]),  # b -> c joins c
        ({"gone": ["a.py"]}, []),  # a node no longer in the plan
    ],
)
def test_implicit_dependencies(
    executed: dict[str, list[str]], expected: list[tuple[str, str]]
) -> None:
    findings = implicit_dependencies(GRAPH, executed, OUTPUTS)
    assert [(f.node, f.hint.split("add ")[1][:15]) for f in findings] == expected
    assert all(f.code == "IMPLICIT_DEPENDENCY" and f.severity == "warning" for f in findings)


def test_lint_reads_the_latest_coverage_of_each_criterion(pytester: pytest.Pytester) -> None:
    root = coverage_project(pytester)
    pytester.runpytest("--plangraph", "--plangraph-coverage").assert_outcomes(passed=3)
    pytester.runpytest("--plangraph", "-k", "test_double").assert_outcomes(passed=1)
    with PlanGraph.open(root) as graph:
        events = [e for e in graph.store.events() if e.evidence is not None]
    assert len(events) == 3  # the second run's evidence of step-lib carries no coverage
    assert executed_by_node(events) == {
        "step-app": APP_LEARNED,
        "step-lib": LIB_LEARNED,
    }


def test_the_ctrace_core_is_forced_and_restored(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COVERAGE_CORE", "sysmon")
    config = pytester.parseconfig()
    force_ctrace(config)
    force_ctrace(config)  # twice: the first saved value is kept
    assert os.environ["COVERAGE_CORE"] == "ctrace"
    restore_core(config)
    assert os.environ["COVERAGE_CORE"] == "sysmon"


@pytest.mark.parametrize(
    ("context", "static", "expected"),
    [
        ("tests/t.py::test_a", None, "tests/t.py::test_a"),  # the plugin's own label
        ("tests/t.py::test_a|run", None, "tests/t.py::test_a"),  # pytest-cov --cov-context=test
        ("tests/t.py::test_a|teardown", None, "tests/t.py::test_a"),
        ("ci|tests/t.py::test_a|setup", "ci", "tests/t.py::test_a"),  # a static context first
        ("tests/t.py::test_b[x|run]", None, "tests/t.py::test_b[x|run]"),
        ("tests/t.py::test_c|run", None, None),  # not a measured test
        ("", None, None),
    ],
)
def test_context_labels_name_their_test(context: str, static: str | None, expected: str) -> None:
    tests = {"tests/t.py::test_a", "tests/t.py::test_b[x|run]"}
    assert context_test(context, tests, static) == expected


def test_decide_joins_the_files_of_a_criterions_tests() -> None:
    passed = [("setup", "passed", False), ("call", "passed", False), ("teardown", "passed", False)]
    mapping = Mapping(
        criteria={"n/c": CriterionTests(tests=["t::a", "t::b", "t::lost"])},
        test_files={"t::a": "t.py", "t::b": "t.py", "t::lost": "t.py"},
    )
    results = RunResults(
        phases={"t::a": passed, "t::b": passed, "t::lost": passed},
        coverage={"t::a": ["src/x.py", "t.py"], "t::b": ["src/y.py", "src/x.py"]},
    )
    (decided,), _ = decide(mapping, results)
    assert decided.details["coverage"] == ["src/x.py", "src/y.py", "t.py"]
    assert decided.details["coverage_missing"] == ["t::lost"]  # its worker never reported
    assert decided.executed == ("src/x.py", "src/y.py", "t.py")
    (without,), _ = decide(mapping, RunResults(phases=results.phases))
    assert "coverage" not in without.details and without.executed == ()


def test_a_proposal_that_would_close_a_cycle_is_related_instead() -> None:
    graph = Graph.of(
        runtime_plan(
            {
                "plangraph": 1,
                "plan": "p",
                "nodes": [{"id": n} for n in ("a", "b", "c", "x", "y")],
                "edges": [
                    {"from": "a", "to": "b", "type": "requires"},
                    {"from": "b", "to": "c", "type": "consumes"},
                ],
            }
        )
    )
    outputs = {"a": ["a.py"], "b": ["b.py"], "c": ["c1.py", "c2.py"], "x": ["x.py"], "y": ["y.py"]}
    # a's tests run c's code: c depends on a through b, so c -> a would close a cycle;
    # x and y run each other's code: the first proposal is made, the second would close it
    executed = {"a": ["c1.py", "c2.py"], "x": ["y.py"], "y": ["x.py"]}
    found = implicit_dependencies(graph, executed, outputs)
    tail = ", source: coverage, confidence: 1.0, status: proposed}"
    proposals = [(f.node, f.hint.rpartition("add ")[2]) for f in found]
    assert proposals == [
        ("a", "{from: c, to: a, type: related" + tail),
        ("x", "{from: y, to: x, type: consumes" + tail),
        ("y", "{from: x, to: y, type: related" + tail),
    ]
    assert "executed c1.py, c2.py, output of c" in found[0].hint  # one per pair, every file
    assert "would close the dependency cycle a -> b -> c -> a (CYCLE)" in found[0].hint
    assert "would close the dependency cycle y -> x -> y (CYCLE)" in found[2].hint
    # every edge proposed, added as written and made active, leaves the plan without a cycle
    edges = list(graph.plan.to_json(by_alias=True)["edges"])
    for node, edge in proposals:
        source, kind = edge.split("from: ")[1].split(",")[0], edge.split("type: ")[1].split(",")[0]
        edges.append({"from": source, "to": node, "type": kind})
    nodes = [{"id": n} for n in graph.nodes]
    plan = runtime_plan({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges})
    assert Graph.of(plan).find_cycle() is None
    edges[-1]["type"] = "consumes"  # as the plain proposal would have been: a cycle
    plan = runtime_plan({"plangraph": 1, "plan": "p", "nodes": nodes, "edges": edges})
    assert Graph.of(plan).find_cycle() is not None


PAUSE_PLAN = """
plangraph: 1
plan: pause
nodes:
  - id: step
    acceptance:
      - id: ac
        verifier:
          type: test
          tests: ["tests/test_a.py::test_first", "tests/test_a.py::test_third"]
"""


def test_unmapped_tests_run_unmeasured_and_what_binds_is_the_same(
    pytester: pytest.Pytester,
) -> None:
    """Our own measurement pauses while a test no criterion maps runs (what it executes
    would count for no test) and resumes for the next mapped one."""
    tests = """
        import sys

        import late


        FIRST = []


        def test_first():
            FIRST.append(sys.gettrace())  # the tracer measuring it
            assert FIRST[0] is not None


        def test_second():  # in no criterion
            import unmapped

            assert sys.gettrace() is not FIRST[0] and unmapped.U == 2


        def test_third():
            assert sys.gettrace() is not None and late.run() == 3
        """
    files = {
        "src/late.py": "def run():\n    return 3\n",
        "src/unmapped.py": "U = 2\n",
        "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src\n",
    }
    root = make_project(pytester, plan=PAUSE_PLAN, tests=tests, files=files)
    pytester.runpytest("--plangraph", "--plangraph-coverage", "-p", "no:randomly").assert_outcomes(
        passed=3
    )
    learned = latest(root)["step/ac"].details["coverage"]
    assert learned == ["src/late.py", "tests/test_a.py"]  # the third test measured again


def test_the_collector_made_for_a_measurement_keeps_no_stack_of_its_origin(
    tmp_path: Path,
) -> None:
    from coverage import Coverage, collector

    original = collector.short_stack  # type: ignore[attr-defined]
    cov = Coverage(data_file=None, config_file=False, include=[f"{tmp_path}/*"])
    with no_origin_stack():
        assert collector.short_stack is not original  # type: ignore[attr-defined]
        cov.start()
    try:
        made = cov._collector
        assert made is not None and made.origin == ""
    finally:
        cov.stop()
    assert collector.short_stack is original  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError), no_origin_stack():
        raise RuntimeError("a failed start")
    assert collector.short_stack is original  # type: ignore[attr-defined]
    assert "test_plugin_coverage" in original()  # the debugging aid itself still works
