"""Attacks on the gate (round eighteen), by an agent that wants ``pytest --plangraph`` or
``plangraph status`` to answer a node completed while a test of its criterion fails.

* ``pytest --plangraph`` now takes the repository root's ``plangraph.yaml`` when the rootdir
  has none. A run started in a folder of a repository with no pytest configuration file
  (``cd pkg && pytest --plangraph``) takes that folder for its rootdir, found the root's plan
  and collected that folder's tests alone: a criterion whose other marked test, outside the
  folder, fails was recorded passed and its node completed (``--plangraph=../plangraph.yaml``
  did the same before). Such a run now records no pass.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_helpers import plangraph
from plugin_helpers import latest
from repo_helpers import git

MARKED_PLAN = """
plangraph: 1
plan: whole
nodes:
  - id: step-a
    acceptance:
      - id: ac-a
        verifier: {type: test}
"""


def _repository(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")


MARKED = {
    ".gitignore": ".plangraph/\n__pycache__/\n",
    "plangraph.yaml": MARKED_PLAN,
    "pkg/tests/test_a.py": """
        import pytest

        @pytest.mark.criterion("step-a/ac-a")
        def test_a():
            pass
        """,
    "tests/test_b.py": """
        import pytest

        @pytest.mark.criterion("step-a/ac-a")
        def test_b():
            assert False, "broken"
        """,
}


@pytest.mark.parametrize("plan_option", [[], ["--plangraph=../plangraph.yaml"]])
def test_a_run_in_a_folder_with_no_configuration_records_no_pass_for_the_plan_above(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, plan_option: list[str]
) -> None:
    _repository(pytester.path, MARKED)
    monkeypatch.chdir(pytester.path)
    result = pytester.runpytest("--plangraph")
    assert latest(pytester.path)["step-a/ac-a"].outcome == "failed", result.stdout.str()
    monkeypatch.chdir(pytester.path / "pkg")
    result = pytester.runpytest(*(plan_option or ["--plangraph"]))
    out = result.stdout.str()
    assert latest(pytester.path)["step-a/ac-a"].outcome == "failed", out
    assert "a folder below the plan file's, with no configuration file" in out
    assert "step-a  step  completed" not in plangraph(pytester.path, "status").out
