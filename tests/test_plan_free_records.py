"""``plangraph status`` after files changed, answered without opening the plan
(:mod:`pytest_plangraph.derived.planfree`) on records real ``pytest --plangraph`` runs made:
each binds what its run could collect (``tests/::collect{…}`` subjects) and the kept answer
watches the folders walked to list it. While those folders are found unchanged, the path
runs and gives the answer a status with every cache deleted gives; a test file or a
``conftest.py`` added in a walked folder is a miss of the folder, answered in full (stale).

Each case runs real pytest sessions (``pytester``) in a real git repository, and the real
``plangraph`` command."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph_main, status_without_caches
from glob_helpers import walks_of
from plugin_helpers import make_project

from pytest_plangraph.store.derived import NAME, read_tagged

CACHE = Path(".plangraph/cache")
LEAVES = 4

PLAN = (
    """
plangraph: 1
plan: demo
nodes:
  - id: step-a
    outputs: [src/a.py]
    acceptance:
      - id: ac-marked
        verifier: {type: test}
      - id: ac-glob
        verifier: {type: test, tests: ["tests/test_*.py::test_pattern*"]}
"""
    + "".join(
        f"""  - id: leaf-{i}
    outputs: [out/c{i}.txt]
    acceptance:
      - id: ac-exists
        verifier: {{type: artifact, path: out/c{i}.txt}}
"""
        for i in range(LEAVES)
    )
    + "edges:\n"
    + "".join(f"  - {{from: step-a, to: leaf-{i}, type: requires}}\n" for i in range(LEAVES))
)

FILES = {f"out/c{i}.txt": f"c{i}\n" for i in range(LEAVES)}


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _recorded(pytester: pytest.Pytester) -> Path:
    """A project whose tests ran under ``pytest --plangraph``, every leaf's artifact verified,
    its status kept (the derived state and the kept answer written)."""
    root = make_project(pytester, plan=PLAN, files=FILES)
    assert pytester.runpytest("--plangraph").ret == 0  # the leaves' artifacts checked too
    _aged(root)
    for _ in range(3):
        plangraph_main(root, "status")
    return root


def _aged(root: Path) -> None:
    """The project's folders made older: folders changed just now (the run wrote
    ``__pycache__``) are too young to be watched by their mtime, and nothing would be kept."""
    old = (root.stat().st_mtime_ns - 10**10,) * 2
    for folder in (root / "tests", root / "src", root / "out"):
        os.utime(folder, ns=old)


def test_a_real_record_is_judged_without_opening_the_plan(
    pytester: pytest.Pytester, tmp_path: Path, taken: list[Any]
) -> None:
    root = _recorded(pytester)
    kept = read_tagged(root / CACHE / NAME)
    assert kept["observed"]["globs"]  # the ``tests:`` glob's files, and what a run could collect
    assert any("::collect" in p for p, _ in kept["observed"]["files"])
    taken.clear()
    (root / "out/c3.txt").write_text("changed\n")
    answer = plangraph_main(root, "status", "--check")
    assert "opened" not in taken  # the plan was not opened
    assert len(taken) == 1 and taken[0] is not None
    assert taken[0].states.keys() == {"leaf-3"}
    assert "leaf-3" in answer.out and "changed since the evidence" in answer.out
    assert answer.code == 1
    assert answer == status_without_caches(root, tmp_path)
    assert plangraph_main(root, "status", "--check") == answer  # kept as given
    # back as it was: judged again without the plan, completed as with no cache
    taken.clear()
    (root / "out/c3.txt").write_text("c3\n")
    answer = plangraph_main(root, "status", "--check")
    assert "opened" not in taken and taken[0] is not None
    assert answer.code == 0 and answer == status_without_caches(root, tmp_path)


@pytest.mark.parametrize(
    "added",
    [
        "tests/test_new.py",
        "tests/conftest.py",
        "tests/sub/conftest.py",
    ],
)
def test_a_file_pytest_could_collect_added_in_a_walked_folder_stales(
    pytester: pytest.Pytester, tmp_path: Path, taken: list[Any], added: str
) -> None:
    root = _recorded(pytester)
    taken.clear()
    (root / "out/c3.txt").write_text("changed\n")  # a leaf's file changed too
    (root / added).parent.mkdir(parents=True, exist_ok=True)
    (root / added).write_text("def test_pattern_new():\n    assert True\n")
    answer = plangraph_main(root, "status", "--check")
    assert taken == ["opened"]  # a walked folder changed: no look, the plan is read
    assert answer == status_without_caches(root, tmp_path)
    assert answer.code == 1
    [row] = [line for line in answer.out.splitlines() if line.startswith("step-a ")]
    assert " stale " in row  # what its run could collect is not what it could collect now
    assert plangraph_main(root, "status", "--check") == answer


def test_a_test_file_edited_is_judged_as_without_any_cache(
    pytester: pytest.Pytester, tmp_path: Path, taken: list[Any]
) -> None:
    root = _recorded(pytester)
    taken.clear()
    (root / "tests/test_a.py").write_text("def test_pattern_one():\n    assert False\n")
    answer = plangraph_main(root, "status", "--check")
    assert answer == status_without_caches(root, tmp_path)
    assert answer.code == 1  # step-a's evidence no longer matches, and so its leaves'


@pytest.mark.parametrize("leaf", [False, True])
def test_a_walked_folder_whose_mtime_was_set_back_is_still_a_change(
    pytester: pytest.Pytester, tmp_path: Path, taken: list[Any], leaf: bool
) -> None:
    root = _recorded(pytester)
    folder = os.stat(root / "tests")
    (root / "tests/test_new.py").write_text("def test_pattern_new():\n    assert True\n")
    os.utime(root / "tests", ns=(folder.st_atime_ns, folder.st_mtime_ns))  # the listing hidden
    if leaf:
        (root / "out/c3.txt").write_text("changed\n")
    taken.clear()
    answer = plangraph_main(root, "status", "--check")
    assert answer == status_without_caches(root, tmp_path)
    [row] = [line for line in answer.out.splitlines() if line.startswith("step-a ")]
    assert " stale " in row


ROUNDS = [
    [("out/c1.txt", "edited\n")],
    [("out/c1.txt", "c1\n"), ("out/c2.txt", None)],
    [("tests/conftest.py", "import pytest\n\n@pytest.fixture\ndef extra():\n    return 2\n")],
    [("out/c2.txt", "c2\n")],
    [("tests/test_a.py", "def test_pattern_one():\n    assert True\n")],
    [("out/c0.txt", "again\n"), ("tests/conftest.py", None)],
    [("out/c0.txt", "c0\n")],
]


def test_rounds_of_changes_on_real_records_give_the_answer_without_any_cache(
    pytester: pytest.Pytester, tmp_path: Path, taken: list[Any]
) -> None:
    root = make_project(pytester, plan=PLAN, files={**FILES, "tests/conftest.py": "X = 1\n"})
    assert pytester.runpytest("--plangraph").ret == 0
    _aged(root)
    for _ in range(3):
        plangraph_main(root, "status")
    free = 0
    for changes in ROUNDS:
        taken.clear()
        for rel, text in changes:
            if text is None:
                (root / rel).unlink()
            else:
                (root / rel).write_text(text)
        answer = plangraph_main(root, "status", "--check")
        free += "opened" not in taken
        assert answer == status_without_caches(root, tmp_path), changes
        assert plangraph_main(root, "status", "--check") == answer  # kept as given
    assert free >= 2  # the leaves' rounds judged without the plan


@pytest.mark.parametrize("kind", ["collect", "glob"])
def test_a_kept_state_for_another_listing_falls_back(
    pytester: pytest.Pytester, tmp_path: Path, taken: list[Any], kind: str
) -> None:
    from pytest_plangraph.store.derived import write_tagged

    root = _recorded(pytester)
    kept = read_tagged(root / CACHE / NAME)
    if kind == "collect":  # what a run could collect, as another listing found it
        [entry] = [e for e in kept["observed"]["files"] if e[0] in walks_of([e[0]])]
        entry[1] = "0" * 64
    else:  # a glob's files, as another listing found them
        glob = next(iter(kept["observed"]["globs"]))
        kept["observed"]["globs"][glob] = ["tests/test_gone.py"]
    write_tagged(root / CACHE / NAME, kept)
    (root / "out/c3.txt").write_text("changed\n")
    taken.clear()
    answer = plangraph_main(root, "status", "--check")
    assert taken == ["opened"]  # listed again: not the kept listing, the plan is read
    assert answer == status_without_caches(root, tmp_path)
