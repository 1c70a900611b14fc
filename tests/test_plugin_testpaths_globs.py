"""A test folder made after the evidence was recorded that the project's ``testpaths`` finds:
pytest expands each ``testpaths`` entry as a glob when a run starts, so an entry with a glob
(``tests*``) or one that named nothing then (``other``) finds a folder made later, whose
failing tests the recorded run never collected. The record binds those entries, expanded
with Python's glob from the rootdir as pytest does (``*/tests`` finds ``build/tests``, which
``norecursedirs`` names), and what pytest could collect under each folder found; the gate
expands and walks them again and stales every criterion of the run. The walk matches a
``python_files`` pattern with a folder as pytest does: against the file's absolute path
(``*/tests/*_check.py``).

Each case runs real pytest sessions (``pytester``) in a real git repository, and the real
``plangraph`` command.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph, plangraph_main
from glob_helpers import walks_of, write
from plugin_helpers import MARKED_FAILING, latest, make_project

from pytest_plangraph.vcs.testglob import collect_folder


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _status(root: Path) -> str:
    answer = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in answer["nodes"] if n["id"] == "step-a"]
    return str(node["status"])


def _refused_until_run_again(pytester: pytest.Pytester, root: Path, passed: int) -> None:
    """The run's evidence is stale, a claim is refused for it, and the suite run again fails
    the planted test."""
    assert _status(root) == "stale"
    refused = plangraph(root, "claim", "step-a", "--by", "agent-7", "--format", "json")
    assert refused.code == 1, refused.err
    assert "ARTIFACT_CHANGED" in refused.out
    pytester.runpytest("--plangraph").assert_outcomes(passed=passed, failed=1)
    assert _status(root) == "failed"


@pytest.mark.parametrize(
    ("testpaths", "folder", "made"),
    [("tests*", ".", "tests2/test_b.py"), ("tests other", ".", "other/test_b.py")],
    ids=["a glob", "a path that named nothing"],
)
def test_a_folder_testpaths_finds_later_stales_the_run(
    pytester: pytest.Pytester, testpaths: str, folder: str, made: str
) -> None:
    root = make_project(pytester, files={"pytest.ini": f"[pytest]\ntestpaths = {testpaths}\n"})
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert _status(root) == "completed"
    walks = walks_of(latest(root)["step-a/ac-marked"].subjects)
    assert sorted(collect_folder(p) for p in walks) == sorted([folder, "tests"])
    write(root, made, textwrap.dedent(MARKED_FAILING))
    # the new folder's test is one of the suite's, and it fails on the code now
    _refused_until_run_again(pytester, root, passed=4)


def test_a_plain_testpaths_binds_its_folders_alone(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)  # testpaths = tests: a folder that is there
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    walks = walks_of(latest(root)["step-a/ac-marked"].subjects)
    assert [collect_folder(p) for p in walks] == ["tests"]
    write(root, "elsewhere/test_b.py", textwrap.dedent(MARKED_FAILING))
    assert _status(root) == "completed"  # no run of the suite collects it
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 0


def test_a_python_files_pattern_with_a_folder_matches_as_pytest_does(
    pytester: pytest.Pytester,
) -> None:
    """pytest matches a pattern holding a ``/`` against the end of the file's absolute path:
    ``*/tests/*_check.py`` collects ``tests/b_check.py``, so a failing one added later stales."""
    ini = "[pytest]\ntestpaths = tests\npython_files = test_*.py */tests/*_check.py\n"
    root = make_project(pytester, files={"pytest.ini": ini})
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert _status(root) == "completed"
    write(root, "tests/b_check.py", textwrap.dedent(MARKED_FAILING))
    assert _status(root) == "stale"
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1
    pytester.runpytest("--plangraph").assert_outcomes(passed=4, failed=1)
    assert _status(root) == "failed"


ONE_CRITERION = """
plangraph: 1
plan: demo
nodes:
  - id: step-a
    acceptance:
      - id: ac-marked
        verifier: {type: test}
"""

MARKED_PASSING = MARKED_FAILING.replace("new_and_broken", "marked").replace(
    'False, "the code is broken now"', "True"
)


def test_a_testpaths_glob_finds_folders_norecursedirs_leaves_out_as_pytest_does(
    pytester: pytest.Pytester,
) -> None:
    """``testpaths = */tests``: pytest expands it with Python's glob from the rootdir, so it
    finds ``build/tests`` though ``build`` is in the default ``norecursedirs`` (the walk of
    what the run could collect must not leave it out), and not ``.hidden/tests`` (``*``
    passes over dot names). The record's key holds the entry, walked from the repository
    root, never from the folder above it."""
    root = make_project(
        pytester,
        plan=ONE_CRITERION,
        files={
            "pytest.ini": "[pytest]\ntestpaths = */tests\n",
            "pkg/tests/test_p.py": textwrap.dedent(MARKED_PASSING),
        },
    )
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)
    assert _status(root) == "completed"
    walks = walks_of(latest(root)["step-a/ac-marked"].subjects)
    assert [p for p in walks if '"testpaths":["*/tests"]' in p]
    assert all(collect_folder(p) in (".", "pkg/tests") for p in walks)
    write(root, ".hidden/tests/test_h.py", textwrap.dedent(MARKED_FAILING))
    assert _status(root) == "completed"  # no run of the suite collects it
    write(root, "build/tests/test_b.py", textwrap.dedent(MARKED_FAILING))
    # pytest does collect build/tests (and not .hidden/tests): its failing test is the suite's
    _refused_until_run_again(pytester, root, passed=1)
