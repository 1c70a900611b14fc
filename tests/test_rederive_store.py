"""A status miss derives again only what changed (pytest_plangraph.derived with
judge/rederive.py), on a real repository and store: the answer is a full derivation's after
each change, a kept state reused in part is the one this log's chain names, and the ways of
making status say ``completed`` over a changed file or an edited event still fail."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph_main
from conftest import git
from repo_helpers import edit_store

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.errors import StoreTamperedError
from pytest_plangraph.judge import rederive as rederive_module
from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.statejson import state_from_json
from pytest_plangraph.judge.states import PlanState
from pytest_plangraph.store.derived import NAME, read_tagged, write_tagged

CACHE = Path(".plangraph/cache")


@pytest.fixture(autouse=True)
def _actor(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _status(root: Path) -> PlanState:
    with PlanGraph.open(root) as graph:
        return graph.status()


def _full(root: Path) -> PlanState:
    with PlanGraph.open(root) as graph:
        fold = graph.fold()
        return derive(graph.graph, fold, graph.snapshot(fold))


def _kept(root: Path) -> dict[str, object]:
    kept = read_tagged(root / CACHE / NAME)
    assert isinstance(kept, dict)
    return kept


def _verified(project: Callable[[str], Path]) -> Path:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    assert _status(root).nodes["T5"].status == "completed"
    return root


def test_each_change_gives_the_full_derivations_answer(project: Callable[[str], Path]) -> None:
    root = _verified(project)
    observed = _kept(root)["observed"]
    assert isinstance(observed, dict)
    assert observed["reads"]["T5"] == ["out/t5.txt"]  # what T5's digest and judgement read
    steps: list[Callable[[], object]] = [
        lambda: (root / "out/t5.txt").write_text("changed\n"),
        lambda: (root / "out/t1.txt").unlink(),
        lambda: (root / "out/t1.txt").write_text("back, but other bytes\n"),
        lambda: plangraph_main(root, "verify", "T5"),
        lambda: plangraph_main(root, "claim", "T1", "--by", "tester"),
        lambda: plangraph_main(root, "cancel", "T2", "--by", "tester"),
        lambda: (root / "plangraph.yaml").write_text(
            (root / "plangraph.yaml").read_text() + "# a comment\n"
        ),
    ]
    for step in steps:
        step()
        assert _status(root) == _full(root)
        assert state_from_json(_kept(root)["data"]) == _full(root)  # what the next miss reuses
        assert plangraph_main(root, "status", "--format", "json").out == _cli_without_cache(root)


def _cli_without_cache(root: Path) -> str:
    for path in (root / CACHE).glob("*.json"):
        if path.name == NAME or path.name.startswith("status-"):
            path.unlink()
    return plangraph_main(root, "status", "--format", "json").out


def test_a_leaf_file_changed_judges_one_node(
    project: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mechanism at work in a real repository: how many nodes a miss judges is counted."""
    root = _verified(project)
    judged: list[int] = []
    real = rederive_module.derive_nodes

    def counting(
        context: Any, fold: Any, nodes: Collection[str], known: Any = None, **done: Any
    ) -> Any:
        judged.append(len(nodes))
        return real(context, fold, nodes, known, **done)

    monkeypatch.setattr(rederive_module, "derive_nodes", counting)
    with PlanGraph.open(root) as graph:
        total = len(graph.graph.nodes)
        leaves = [n for n in graph.graph.nodes if not graph.graph.dependents(n)]
        leaf = leaves[-1]
        output = graph.graph.nodes[leaf].outputs[0]
    (root / output).write_text("changed\n")
    assert _status(root) == _full(root)
    assert judged[0] < total  # the kept state reused in part
    (root / output).write_text("changed again\n")
    judged.clear()
    _status(root)
    assert judged == [1]  # a leaf whose children and partners did not change: itself alone


def test_a_same_size_edit_with_the_old_mtime_is_seen(project: Callable[[str], Path]) -> None:
    root = _verified(project)
    target = root / "out/t5.txt"
    info = target.stat()
    text = target.read_bytes()
    target.write_bytes(bytes([text[0] ^ 1]) + text[1:])  # same size
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the old mtime
    assert _status(root).nodes["T5"].status == "stale"
    assert _status(root) == _full(root)


def test_a_symlink_in_place_of_a_file_is_seen(project: Callable[[str], Path]) -> None:
    root = _verified(project)
    target = root / "out/t5.txt"
    (root / "elsewhere.txt").write_bytes(target.read_bytes() + b"more")
    stamp = target.lstat()
    target.unlink()
    target.symlink_to(root / "elsewhere.txt")
    os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns), follow_symlinks=False)
    assert _status(root).nodes["T5"].status != "completed"
    assert _status(root) == _full(root)


def test_an_edited_event_stops_a_miss_too(project: Callable[[str], Path]) -> None:
    root = _verified(project)
    (root / "out/t5.txt").write_text("changed\n")  # a miss: the kept state is reused in part
    edit_store(
        root / ".plangraph/store.db",
        "UPDATE events SET by_ = 'someone else' WHERE seq = (SELECT max(seq) FROM events)",
    )
    with pytest.raises(StoreTamperedError):
        _status(root)
    result = plangraph_main(root, "status")
    assert result.code == 2
    assert "STORE_TAMPERED" in result.err and "Traceback" not in result.err


def test_a_kept_state_of_another_log_is_not_reused(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    """A kept state from a repository with the same plan and other evidence (its head is not
    an event of this log's chain), planted with this user's tag: derived in full."""
    root = _verified(project)
    other = tmp_path / "other"
    shutil.copytree(root, other)
    (other / "out/t5.txt").write_text("their own\n")
    assert plangraph_main(other, "verify", "T5").code == 0
    _status(other)
    planted = _kept(other)
    (root / "out/t7.txt").write_text("changed here\n")  # a miss here
    write_tagged(root / CACHE / NAME, planted)
    assert _status(root) == _full(root)
    assert _status(root).nodes["T5"].status == "completed"


def test_a_kept_state_that_lies_about_what_was_read_under_another_key_is_not_believed(
    project: Callable[[str], Path],
) -> None:
    """The reads are kept with this user's tag: a file edited by anything else is a miss in
    full, and damaged reads (not a list) are derived in full without a traceback."""
    root = _verified(project)
    (root / "out/t5.txt").write_text("changed\n")
    path = root / CACHE / NAME
    kept = _kept(root)
    observed = kept["observed"]
    assert isinstance(observed, dict)
    observed["reads"] = {n: [] for n in observed["reads"]}  # "nothing was read"
    tag, _, _ = path.read_bytes().partition(b"\n")
    path.write_bytes(tag + b"\n" + json.dumps(kept).encode())  # without this user's key
    (root / "out/t5.txt").write_text("changed again\n")
    assert _status(root).nodes["T5"].status == "stale"
    assert _status(root) == _full(root)
    observed["reads"] = 7
    observed["head"] = [0, ""]
    write_tagged(path, kept)
    (root / "out/t5.txt").write_text("changed a third time\n")
    assert _status(root) == _full(root)


GLOB_PLAN = """\
plangraph: 1
plan: globbed
nodes:
  - id: A
    outputs: [gen/]
    acceptance:
      - id: ac-out
        assertion: A wrote its first file
        verifier: {type: artifact, path: gen/a.txt}
  - id: B
    outputs: [out/b.txt]
    acceptance:
      - id: ac-out
        assertion: B wrote its output
        verifier: {type: artifact, path: out/b.txt}
  - id: C
    outputs: [out/c.txt]
    acceptance:
      - id: ac-out
        assertion: C wrote its output
        verifier: {type: artifact, path: out/c.txt}
edges:
  - {from: A, to: B, type: consumes}
"""


def test_an_output_directory_that_grows_is_seen(tmp_path: Path) -> None:
    """A file added under a directory output: the node's outputs expand to one file more
    (kept only where they differ from the plan's), its input digest and its consumer's
    change, and the answer is a full derivation's."""
    root = tmp_path / "globbed"
    (root / "gen").mkdir(parents=True)
    (root / "out").mkdir()
    (root / "plangraph.yaml").write_text(GLOB_PLAN)
    (root / "gen/a.txt").write_text("a\n")
    for name in ("b", "c"):
        (root / f"out/{name}.txt").write_text(f"{name}\n")
    git(root, "init", "-q", "-b", "main")
    assert plangraph_main(root, "verify").code == 0
    before = _status(root)
    assert before.nodes["B"].status == "completed"
    observed = _kept(root)["observed"]
    assert isinstance(observed, dict)
    assert observed["outputs"] == {"A": ["gen/a.txt"]}  # B's and C's are the plan's
    (root / "gen/more.txt").write_text("more\n")
    after = _status(root)
    assert after == _full(root)
    assert after.nodes["B"].status != "completed"
    assert after.nodes["C"] == before.nodes["C"]
    (root / "gen/more.txt").unlink()
    assert _status(root) == _full(root)


def test_an_older_kept_state_of_this_log_put_back_is_brought_up_to_date(
    project: Callable[[str], Path],
) -> None:
    """The kept state swapped for one this user's plangraph wrote earlier (its head an
    earlier event of this chain): the events since are folded in, as a full derivation does."""
    root = _verified(project)
    path = root / CACHE / NAME
    older = path.read_bytes()
    assert plangraph_main(root, "claim", "T4", "--by", "tester").code == 0
    assert plangraph_main(root, "cancel", "T11", "--by", "tester").code == 0
    _status(root)
    path.write_bytes(older)  # the state kept before the claim and the cancel
    (root / "out/t12.txt").write_text("changed\n")  # a miss: nothing upstream of T4 changed
    assert _status(root) == _full(root)
    assert _status(root).nodes["T4"].claimed
    assert _status(root).nodes["T11"].status == "cancelled"
