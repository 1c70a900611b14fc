"""What a run could collect is bound by a digest of the sorted paths found: a path may hold a
newline, so the list must be encoded so that no other list of paths gives the same bytes.

The attack: the run collected ``tests/test_b.py`` and ``tests/test_c.py`` (tests of no
criterion); they are removed, and a failing test of a criterion is put at
``tests/test_b.py<newline>tests/test_c.py`` (a folder whose name holds a newline). Joined by
newlines, both lists are the same text; the next run of pytest collects the failing test.

Real pytest sessions (``pytester``) in a real git repository, and the real ``plangraph``
command.
"""

from __future__ import annotations

import hashlib
import textwrap

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph, plangraph_main
from glob_helpers import write
from plugin_helpers import MARKED_FAILING, make_project

from pytest_plangraph.vcs.testglob import GlobFiles, collect_digest

OTHER = "def test_other():\n    assert True\n"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def test_no_two_lists_of_paths_give_the_same_digest() -> None:
    apart = GlobFiles(("tests/test_a.py", "tests/test_b.py", "tests/test_c.py"), ())
    joined = GlobFiles(("tests/test_a.py", "tests/test_b.py\ntests/test_c.py"), ())
    assert collect_digest(apart) != collect_digest(joined)
    # a list without such a name keeps the digest it always had (records stay valid)
    plain = "\n".join(apart.files).encode("utf-8")
    assert collect_digest(apart) == hashlib.sha256(plain).hexdigest()


def test_a_failing_test_under_a_name_with_a_newline_stales_the_run(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester, files={"tests/test_b.py": OTHER, "tests/test_c.py": OTHER})
    pytester.runpytest("--plangraph").assert_outcomes(passed=6)
    answer = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in answer["nodes"] if n["id"] == "step-a"]
    assert node["status"] == "completed"
    (root / "tests/test_b.py").unlink()
    (root / "tests/test_c.py").unlink()
    write(root, "tests/test_b.py\ntests/test_c.py", textwrap.dedent(MARKED_FAILING))
    answer = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in answer["nodes"] if n["id"] == "step-a"]
    assert node["status"] == "stale"
    [criterion] = [c for c in node["criteria"] if c["id"] == "ac-marked"]
    assert [r["code"] for r in criterion["reasons"]] == ["ARTIFACT_CHANGED"]
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1
    # pytest does collect the planted test, and it fails (the plan's own item left out)
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=3, failed=1)
