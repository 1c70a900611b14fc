"""``plangraph status`` answered from what it printed last time (``derived/kept.py``): on every
fixture and in every format the answer of a hit is the answer with the cache deleted; each
kind of change (a file edited, deleted or added under an output, a new event, a plan edit, a
setting) is a miss whose answer is the derived one; a touch that leaves the bytes alone is
still a hit; a record planted without this user's key is not believed; a store edited by hand
still stops the command."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cache_helpers import as_tester, fixture_projects
from cli_helpers import Result, plangraph_main
from conftest import git
from repo_helpers import edit_store

from pytest_plangraph.store.derived import read_tagged, write_tagged

CACHE = Path(".plangraph/cache")
FORMATS = ("text", "json", "markdown")
_PERSON = b"plangraph-status"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def _status(root: Path, *args: str) -> Result:
    return plangraph_main(root, "status", *args)


def _fresh(root: Path, *args: str) -> Result:
    """The answer with every cache deleted (derived, and kept again)."""
    shutil.rmtree(root / CACHE, ignore_errors=True)
    return _status(root, *args)


def _projects(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """Every fixture project and plan: (name, root, plan file)."""
    return fixture_projects(tmp_path)


def test_every_fixture_and_format_answers_the_same_from_the_kept_status(
    tmp_path: Path, derived: list[str]
) -> None:
    hits = 0
    for name, root, plan in _projects(tmp_path):
        git(root, "init", "-q", "-b", "main")
        plangraph_main(root, "verify", "--plan", str(plan))
        for fmt in FORMATS:
            for check in ((), ("--check",)):
                args = ("--plan", str(plan), "--format", fmt, *check)
                first = _status(root, *args)
                _status(root, *args)  # reads the checkpoint, if one was written just now
                before = len(derived)
                warm = _status(root, *args)
                hits += len(derived) == before
                fresh = _fresh(root, *args)
                assert warm == first == fresh, (name, fmt, check)
    assert hits >= 12  # jwt-login and seed-000, in every format, with and without --check


def test_each_kind_of_change_is_a_miss_with_the_derived_answer(
    project: Callable[[str], Path], derived: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    json_status = ("--format", "json", "--check")
    _status(root, *json_status)

    def changed(expect_hit: bool) -> dict[str, str]:
        before = len(derived)
        answer = _status(root, *json_status)
        assert (len(derived) == before) is expect_hit
        assert answer == _fresh(root, *json_status)
        return {n["id"]: n["status"] for n in json.loads(answer.out)["nodes"]}

    assert changed(expect_hit=True)["T5"] == "completed"
    artifact = root / "out/t5.txt"
    artifact.write_text("changed\n")
    assert changed(expect_hit=False)["T5"] == "stale"
    assert plangraph_main(root, "verify", "T5").code == 0  # a new event
    assert changed(expect_hit=False)["T5"] == "completed"
    os.utime(artifact)  # touched, bytes unchanged: hashed again, and still a hit
    assert changed(expect_hit=True)["T5"] == "completed"
    # other bytes of the same size with the old times put back: the ctime still tells
    info = artifact.stat()
    artifact.write_text("CHANGED\n")
    os.utime(artifact, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert changed(expect_hit=False)["T5"] == "stale"
    artifact.unlink()
    assert changed(expect_hit=False)["T5"] != "completed"
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text() + "\n# a comment\n")
    changed(expect_hit=False)
    plan.write_text(plan.read_text().replace("out/t2.txt", "out/t2-renamed.txt"))
    changed(expect_hit=False)
    monkeypatch.setenv("PLANGRAPH_SOME_SETTING", "on")
    changed(expect_hit=False)
    assert changed(expect_hit=True)


PLAN = """\
plangraph: 1
plan: outputs
nodes:
  - id: docs
    outputs: [docs]
    acceptance:
      - id: ac-index
        verifier: {type: artifact, path: docs/index.md}
  - id: gen
    outputs: ["gen/*.txt"]
    acceptance:
      - id: ac-a
        verifier: {type: artifact, path: gen/a.txt}
  - id: user
    acceptance:
      - id: ac-user
        verifier: {type: artifact, path: user.txt}
edges:
  - {from: docs, to: user, type: requires}
  - {from: gen, to: user, type: requires}
"""


def test_a_file_added_under_a_directory_or_glob_output_is_a_miss(
    tmp_path: Path, derived: list[str]
) -> None:
    root = tmp_path / "outputs"
    (root / "docs/deep").mkdir(parents=True)
    (root / "gen").mkdir()
    (root / "docs/index.md").write_text("index\n")
    (root / "gen/a.txt").write_text("a\n")
    (root / "user.txt").write_text("user\n")
    (root / "plangraph.yaml").write_text(PLAN)
    git(root, "init", "-q", "-b", "main")
    assert plangraph_main(root, "verify").code == 0
    # directories made just now are too young to be trusted by their mtime: made older
    old = (os.stat(root).st_mtime_ns - 10**10,) * 2
    for folder in ("docs", "docs/deep", "gen"):
        os.utime(root / folder, ns=old)
    _status(root, "--format", "json")
    before = len(derived)
    kept = _status(root, "--format", "json")
    assert len(derived) == before  # a hit, directories watched
    for new in ("docs/deep/more.md", "gen/b.txt"):
        (root / new).write_text("new\n")
        before = len(derived)
        answer = _status(root, "--format", "json")
        assert len(derived) == before + 1, new
        assert answer == _fresh(root, "--format", "json")
        assert answer.out != kept.out
        kept = answer
        os.utime(root / Path(new).parent, ns=old)


def test_a_record_is_believed_only_when_this_user_wrote_it(
    project: Callable[[str], Path], derived: list[str]
) -> None:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    right = _status(root)
    path = root / CACHE / "status-text.json"
    record = read_tagged(path, _PERSON)
    assert isinstance(record, dict)
    assert record["answer"][0] == right.out.rstrip("\n")
    forged = json.loads(json.dumps(record))
    forged["answer"][0] = "every node completed"
    tag = path.read_bytes().partition(b"\n")[0]
    path.write_bytes(tag + b"\n" + json.dumps(forged).encode())
    assert _status(root) == right  # the tag does not match: derived again
    write_tagged(path, forged, _PERSON)  # what this user's plangraph kept is printed
    assert _status(root).out == "every node completed\n"
    write_tagged(path, {**forged, "answer": "not an answer"}, _PERSON)
    assert _status(root) == right  # damaged: derived again, and kept anew
    assert read_tagged(path, _PERSON)["answer"] == record["answer"]
    path.unlink()
    os.mkfifo(path)  # a FIFO is a miss, not a wait
    assert _status(root) == right
    path.unlink()
    before = len(derived)
    plangraph_main(root, "status", env={**os.environ, "PLANGRAPH_SIGNING_KEY": "sesame"})
    assert not path.exists()  # with keys configured nothing is kept
    assert len(derived) == before + 1


def test_a_store_edited_by_hand_stops_status_after_a_kept_answer(
    project: Callable[[str], Path], derived: list[str]
) -> None:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    _status(root)
    before = len(derived)
    assert _status(root).code == 0
    assert len(derived) == before
    edit_store(
        root / ".plangraph/store.db",
        "UPDATE events SET by_ = 'someone else' WHERE seq = (SELECT max(seq) FROM events)",
    )
    result = _status(root)
    assert result.code == 2
    assert "STORE_TAMPERED" in result.err or "edited" in result.err
    assert "Traceback" not in result.err


def test_a_comment_added_to_the_plan_keeps_the_derived_state(
    project: Callable[[str], Path], derived: list[str]
) -> None:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    _status(root)
    kept = read_tagged(root / CACHE / "derived.json")
    plan = root / "plangraph.yaml"
    plan.write_text(plan.read_text() + "\n# a comment: other bytes, the same plan\n")
    before = len(derived)
    answer = _status(root)
    assert len(derived) == before + 1  # the printed answer is not kept for other bytes
    assert read_tagged(root / CACHE / "derived.json") == kept  # the derived state answered
    assert answer == _fresh(root)
    # the nodes in another order: the same digest, another state order; not the kept one
    text = plan.read_text()
    first, second = text.index("  - id: T1"), text.index("  - id: T2")
    reordered = text[:first] + text[second : text.index("  - id: T3")] + text[first:second]
    plan.write_text(reordered + text[text.index("  - id: T3") :])
    assert _status(root) == _fresh(root)


def test_a_distribution_installed_since_is_a_miss(
    project: Callable[[str], Path], derived: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project("seed-000")
    packages = root.parent / "site-packages"
    packages.mkdir()
    monkeypatch.syspath_prepend(str(packages))
    assert plangraph_main(root, "verify").code == 0
    _status(root)
    before = len(derived)
    assert _status(root) == _fresh(root)
    assert len(derived) == before + 1  # the fresh one
    os.utime(packages, ns=(packages.stat().st_atime_ns, packages.stat().st_mtime_ns - 10**10))
    _status(root)  # kept under the folder's new mtime
    before = len(derived)
    _status(root)
    assert len(derived) == before
    (packages / "a_plugin-1.0.dist-info").mkdir()  # a plug-in installed: its folder changes
    _status(root)
    assert len(derived) == before + 1


@pytest.mark.parametrize(
    "shape",
    [[1, [], []], ["x", [2], []], ["x", [], [["n"]]], ["x", [], [[1, 2]]], ["x", [], "ab"], "abc"],
)
def test_a_kept_answer_of_another_shape_is_derived_again(
    project: Callable[[str], Path], derived: list[str], shape: object
) -> None:
    root = project("seed-000")
    assert plangraph_main(root, "verify").code == 0
    right = _status(root, "--check")
    path = root / CACHE / "status-text.json"
    record = read_tagged(path, _PERSON)
    assert isinstance(record, dict)
    write_tagged(path, {**record, "answer": shape}, _PERSON)
    before = len(derived)
    assert _status(root, "--check") == right  # printed as derived, not as the file says
    assert len(derived) == before + 1


GLOB_DIR_PLAN = """\
plangraph: 1
plan: globbed
nodes:
  - id: pkg
    outputs: ["pkg*"]
    acceptance:
      - id: ac-data
        verifier: {type: artifact, path: pkg1/data.txt}
"""


def test_a_file_added_inside_a_directory_a_glob_output_matches_is_a_miss(
    tmp_path: Path, derived: list[str]
) -> None:
    root = tmp_path / "globbed"
    (root / "pkg1/deep").mkdir(parents=True)
    (root / "pkg1/data.txt").write_text("data\n")
    (root / "plangraph.yaml").write_text(GLOB_DIR_PLAN)
    git(root, "init", "-q", "-b", "main")
    assert plangraph_main(root, "verify").code == 0
    old = (os.stat(root).st_mtime_ns - 10**10,) * 2
    for folder in (".", "pkg1", "pkg1/deep"):  # made just now: too young to be trusted
        os.utime(root / folder, ns=old)
    assert _status(root, "--check").code == 0
    before = len(derived)
    assert _status(root, "--check").code == 0
    assert len(derived) == before  # a hit, the matched directory watched
    for new in ("pkg1/new.py", "pkg1/deep/more.py"):
        (root / new).write_text("new\n")  # the output expands to one more file
        before = len(derived)
        answer = _status(root, "--check")
        assert len(derived) == before + 1, new
        assert answer.code == 1 and "stale" in answer.out
        assert answer == _fresh(root, "--check")
        (root / new).unlink()
        os.utime(root / Path(new).parent, ns=old)
        assert plangraph_main(root, "verify").code == 0
        os.utime(root / Path(new).parent, ns=old)
        _status(root, "--check")


LINKED_PLAN = """\
plangraph: 1
plan: linked
nodes:
  - id: out
    outputs: [out, "gen*"]
    acceptance:
      - id: ac-data
        verifier: {type: artifact, path: data.txt}
"""


@pytest.mark.parametrize("link", ["out", "gen1"])
def test_an_output_through_a_link_to_an_empty_directory_is_not_kept(
    tmp_path: Path, derived: list[str], link: str
) -> None:
    root = tmp_path / "linked"
    (root / "target").mkdir(parents=True)
    (root / "data.txt").write_text("data\n")
    (root / link).symlink_to("target", target_is_directory=True)
    (root / "plangraph.yaml").write_text(LINKED_PLAN)
    git(root, "init", "-q", "-b", "main")
    assert plangraph_main(root, "verify").code == 0
    old = (os.stat(root).st_mtime_ns - 10**10,) * 2
    for folder in (".", "target"):
        os.utime(root / folder, ns=old, follow_symlinks=False)
    first = _status(root, "--check")
    assert first.code == 0 and "completed" in first.out
    (root / "target/new.py").write_text("new\n")  # the output expands to one more file
    os.utime(root / "target", ns=old)
    before = len(derived)
    answer = _status(root, "--check")
    assert len(derived) == before + 1  # the link's target is not watched: no answer kept
    assert answer == _fresh(root, "--check")
