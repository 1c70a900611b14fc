"""Lint of a plan whose meaning changed, with the rules that read one node alone run only on
the nodes not kept as passing them (``lint/nodecache.py``): the findings are those of the
whole lint without any cache after every edit (a node made wrong, made right, another edited,
a damaged file), a one-node edit looks at that node's settings alone, and ``plangraph status``
(which checks the plan first) says the same with the cache and with it deleted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_plan_items import _big

import pytest_plangraph.verifiers as verifiers
from pytest_plangraph.lint.findings import ERRORS
from pytest_plangraph.lint.nodecache import FILE_NAME, plan_findings_by_node
from pytest_plangraph.lint.runner import plan_findings
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import BUILTIN_VERIFIERS

GOOD = "{type: artifact, path: out/n%d.txt}"
BAD = "{type: artifact, path: out/n%d*.txt}"  # a glob: "name one file"


def _set(plan: Path, node: int, verifier: str) -> None:
    text = plan.read_text()
    old = next(form % node for form in (GOOD, BAD) if form % node in text)
    plan.write_text(text.replace(old, verifier % node, 1))


def _both(plan: Path, cache: Path) -> tuple[list[Any], list[Any]]:
    """The plan-only findings by node (with the cache) and of the whole lint (without)."""
    loaded = load_plan(plan, cache_dir=cache)
    assert loaded.node_keys is not None  # validated item by item
    by_node = plan_findings_by_node(
        loaded,
        cache,
        verifier_types=BUILTIN_VERIFIERS,
        graph=Graph.of(loaded.plan),
        severities=ERRORS,
    )
    fresh = load_plan(plan)
    whole = plan_findings(fresh, verifier_types=BUILTIN_VERIFIERS, severities=ERRORS)
    return by_node, whole


def _config(findings: list[Any]) -> list[str]:
    return sorted(f.node for f in findings if f.code == "VERIFIER_CONFIG")


def _lines(cache: Path) -> int:
    return len((cache / FILE_NAME).read_text().splitlines())


def test_findings_by_node_are_the_whole_lint_after_each_edit(tmp_path: Path) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    _set(plan, 5, BAD)
    by_node, whole = _both(plan, cache)
    assert by_node == whole and _config(whole) == ["n5"]
    assert _lines(cache) == 299  # every node but the wrong one kept as passing
    _set(plan, 9, BAD)  # a node made wrong: its content is new, so it is looked at
    by_node, whole = _both(plan, cache)
    assert by_node == whole and _config(whole) == ["n5", "n9"]
    _set(plan, 5, GOOD)  # the wrong one made right
    by_node, whole = _both(plan, cache)
    assert by_node == whole and _config(whole) == ["n9"]
    plan.write_text(plan.read_text().replace("- id: n9\n", "- id: n9\n  risk: high\n", 1))
    by_node, whole = _both(plan, cache)  # the wrong node edited otherwise: still wrong
    assert by_node == whole and _config(whole) == ["n9"]
    assert any("n9/ac: path" in f.hint for f in by_node)


def test_a_one_node_edit_looks_at_that_node_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    _both(plan, cache)
    seen: list[str] = []
    real = verifiers.builtin_settings_problems

    def counting(verifier: Any) -> list[str] | None:
        seen.append(verifier.path)
        return real(verifier)

    monkeypatch.setattr(verifiers, "builtin_settings_problems", counting)
    plan.write_text(plan.read_text().replace("- id: n7\n", "- id: n7\n  risk: high\n", 1))
    by_node, whole = _both(plan, cache)
    assert by_node == whole == []
    assert seen.count("out/n7.txt") == 2 and len(seen) == 1 + 300  # by node, then whole


DAMAGES = [
    lambda text: text[: len(text) // 2],
    lambda text: text.replace("\tclean", "\tdirty", 5),
    lambda text: "garbage\n" * 3,
]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_file_is_a_miss(tmp_path: Path, damage: Any) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    _set(plan, 5, BAD)
    _both(plan, cache)
    (cache / FILE_NAME).write_text(damage((cache / FILE_NAME).read_text()))
    _set(plan, 11, BAD)
    by_node, whole = _both(plan, cache)
    assert by_node == whole and _config(whole) == ["n11", "n5"]


def _status(root: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_plangraph", "status"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_plangraph_status_says_the_same_with_and_without_the_cache(tmp_path: Path) -> None:
    plan = tmp_path / "plangraph.yaml"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _big(plan)
    _set(plan, 5, BAD)
    first = _status(tmp_path)  # keeps the items and the nodes that pass
    assert (tmp_path / ".plangraph/cache" / FILE_NAME).exists()
    assert first[0] != 0 and "n5/ac" in first[1]
    _set(plan, 12, BAD)
    warm = _status(tmp_path)
    shutil.rmtree(tmp_path / ".plangraph/cache")
    cold = _status(tmp_path)
    assert warm == cold and warm[0] != 0
    assert "n5/ac" in warm[1] and "n12/ac" in warm[1]
    _set(plan, 5, GOOD)
    _set(plan, 12, GOOD)
    assert _status(tmp_path)[0] == 0


def test_paths_outside_the_root_are_found_in_nodes_and_edges_after_edits(tmp_path: Path) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    _big(plan)
    text = plan.read_text().replace("outputs: [out/n4.txt]", "outputs: [../n4.txt]", 1)
    plan.write_text(text)
    by_node, whole = _both(plan, cache)
    assert by_node == whole and [f.node for f in whole if f.code == "PATH_OUTSIDE_ROOT"] == ["n4"]
    edge = "- {from: n20, to: n21, type: consumes, artifacts: [/abs.txt]}\n"
    plan.write_text(plan.read_text().replace("edges:\n", "edges:\n" + edge, 1))
    plan.write_text(plan.read_text().replace("- id: n8\n", "- id: n8\n  risk: high\n", 1))
    by_node, whole = _both(plan, cache)
    assert by_node == whole
    assert sorted(f.node for f in whole if f.code == "PATH_OUTSIDE_ROOT") == ["n21", "n4"]
    _set(plan, 30, "{type: artifact, path: ../n%d.txt}")
    by_node, whole = _both(plan, cache)
    assert by_node == whole
    assert sorted(f.node for f in whole if f.code == "PATH_OUTSIDE_ROOT") == ["n21", "n30", "n4"]
