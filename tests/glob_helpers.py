"""What the tests of ``tests:`` globs share: a one-criterion plan whose tests are a glob, test
file texts, and the real ``plangraph status`` of its node."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cli_helpers import plangraph, plangraph_main

from pytest_plangraph.vcs.quotes import quoted_reference
from pytest_plangraph.vcs.testglob import is_collect_key

PLAN = """
plangraph: 1
plan: globs
nodes:
  - id: auth
    acceptance:
      - id: ac-auth
        verifier:
          type: test
          tests: ["GLOB"]
EXCLUDE
"""

PASSING = "def test_ok():\n    assert True\n"
FAILING = "def test_broken():\n    assert False, 'the new code is broken'\n"


def glob_plan(glob: str, exclude: str | None = None) -> str:
    """The plan of node ``auth`` whose criterion ``ac-auth`` is verified by the tests *glob*
    matches (less *exclude*)."""
    more = f'          exclude: ["{exclude}"]' if exclude else ""
    return PLAN.replace("GLOB", glob).replace("EXCLUDE\n", f"{more}\n" if more else "")


def write(root: Path, rel: str, text: str) -> None:
    """Write *text* to *rel* under *root*, making its folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def status_of(root: Path) -> tuple[str, list[dict[str, object]]]:
    """The status of node ``auth`` and the reasons of its criterion, from the real command."""
    answer = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in answer["nodes"] if n["id"] == "auth"]
    [criterion] = node["criteria"]
    return str(node["status"]), list(criterion["reasons"])


def walks_of(subjects: Iterable[str]) -> list[str]:
    """The walks among a record's *subjects* (what pytest could collect under a folder), not
    the subjects of which files they list quote the criterion's reference."""
    return [p for p in subjects if is_collect_key(p) and quoted_reference(p) is None]


SETTINGS = {
    "python_files": ["test_*.py", "*_test.py"],
    "norecursedirs": [".*", "build", "venv"],
    "doctest_glob": ["test*.txt"],
    "doctest_modules": False,
    "venv": False,
}
"""The walk settings of a run with pytest's defaults (a collect key's spec)."""


def statuses(root: Path) -> tuple[str, dict[str, list[dict[str, object]]]]:
    """The status of node ``step-a`` and the reasons of each of its criteria (real command)."""
    answer = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in answer["nodes"] if n["id"] == "step-a"]
    return str(node["status"]), {c["id"]: list(c["reasons"]) for c in node["criteria"]}


def pattern_stale(root: Path) -> None:
    """``ac-pattern`` of node ``step-a`` is stale for the files that quote its reference
    (``ac-marked`` untouched), and a claim of ``step-a`` is refused (real commands)."""
    status, reasons = statuses(root)
    assert status == "stale"
    assert reasons["ac-marked"] == []
    [reason] = reasons["ac-pattern"]
    assert (reason["code"], reason["quotes"]) == ("ARTIFACT_CHANGED", "step-a/ac-pattern")
    refused = plangraph(root, "claim", "step-a", "--by", "agent-7")
    assert refused.code == 1, refused.out
