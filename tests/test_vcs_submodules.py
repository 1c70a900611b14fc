"""Changes inside git submodules: vcs/history.py directly and the ``plangraph impact`` command, in
real repositories built with git in tmp_path (shallow clones are in test_vcs_shallow.py)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from conftest import git
from submodule_helpers import PLAN, _commit, _repo, _write

from pytest_plangraph.errors import GitError
from pytest_plangraph.impact.report import diff_impact
from pytest_plangraph.plan.graph import Graph
from pytest_plangraph.plan.model import runtime_plan
from pytest_plangraph.vcs.changes import Change
from pytest_plangraph.vcs.history import changed_paths, commits_since, last_commits


def _sub(cwd: Path, *args: str) -> str:
    """git with local file submodules allowed (recent git refuses them by default)."""
    return git(cwd, "-c", "protocol.file.allow=always", *args)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with the plan (first commit) and a submodule at ``sub`` (second commit),
    built once: each test works on a copy (the submodule's links inside are relative)."""
    where = tmp_path_factory.mktemp("template")
    lib = _repo(
        where / "lib",
        {"out/s.txt": "one\n", "old name.txt": "renamed later\n" * 20, ".gitignore": "*.log\n"},
    )
    root = _repo(where / "parent", {"plangraph.yaml": PLAN})
    _sub(root, "submodule", "add", "-q", str(lib), "sub")
    _commit(root, "add the submodule")
    return root


@pytest.fixture
def parent(template: Path, tmp_path: Path) -> Path:
    """A copy of the template repository of its own."""
    return Path(shutil.copytree(template, tmp_path / "parent", symlinks=True))


def _commit_in_sub(root: Path) -> str:
    """Edit, add, delete and rename inside the submodule, commit there, then move the pointer
    in *root*; the commit of *root* that moved it."""
    _work_in_sub(root)
    return _commit(root, "move the submodule pointer")


def _work_in_sub(root: Path) -> None:
    """Edit, add, delete and rename inside the submodule, and commit there."""
    sub = root / "sub"
    _write(sub, {"out/s.txt": "two\n", "dir ü/new é.txt": "new\n"})
    (sub / ".gitignore").unlink()
    git(sub, "mv", "old name.txt", "new name.txt")
    _commit(sub, "work in the submodule")


SUB_CHANGES = [
    Change("sub/.gitignore", "deleted"),
    Change("sub/dir ü/new é.txt", "added"),
    Change("sub/new name.txt", "renamed", "sub/old name.txt"),
    Change("sub/out/s.txt", "modified"),
]


# --- vcs/history.py--------------------------------------------------------------------------------


def test_commits_inside_a_submodule_are_listed_under_its_path(parent: Path) -> None:
    bump = _commit_in_sub(parent)

    assert changed_paths(parent, "HEAD~1", "HEAD") == SUB_CHANGES
    assert changed_paths(parent, "HEAD~1", working_tree=False) == SUB_CHANGES
    assert changed_paths(parent, "HEAD~1") == SUB_CHANGES
    assert changed_paths(parent, "HEAD", "HEAD~1")[0] == Change("sub/.gitignore", "added")
    # the parent's commit that moved the pointer stands for the paths inside the submodule
    wanted = ["sub/out/s.txt", "sub/new name.txt", "elsewhere.txt"]
    assert last_commits(parent, "HEAD~1", wanted) == {p: bump for p in wanted[:2]}
    assert commits_since(parent, [("sub/out/s.txt", "HEAD~1")]) == ({"sub/out/s.txt": bump}, [])


def test_a_submodule_added_between_revisions_adds_its_files(parent: Path) -> None:
    assert changed_paths(parent, "HEAD~1", "HEAD") == [
        Change(".gitmodules", "added"),
        Change("sub/.gitignore", "added"),
        Change("sub/old name.txt", "added"),
        Change("sub/out/s.txt", "added"),
    ]


def test_working_tree_of_a_submodule(parent: Path) -> None:
    sub = parent / "sub"
    _write(sub, {"out/s.txt": "edited\n", "loose ä.txt": "untracked\n", "debug.log": "ignored"})
    (sub / "old name.txt").unlink()
    _write(sub, {"staged.txt": "staged\n"})
    git(sub, "add", "staged.txt")

    assert changed_paths(parent, "HEAD") == [
        Change("sub/loose ä.txt", "untracked"),
        Change("sub/old name.txt", "deleted"),
        Change("sub/out/s.txt", "modified"),
        Change("sub/staged.txt", "added"),
    ]
    assert changed_paths(parent, "HEAD", working_tree=False) == []

    _commit(sub, "committed in the submodule, pointer not moved")
    assert changed_paths(parent, "HEAD") == [
        Change("sub/loose ä.txt", "added"),
        Change("sub/old name.txt", "deleted"),
        Change("sub/out/s.txt", "modified"),
        Change("sub/staged.txt", "added"),
    ]


def test_a_submodule_that_is_not_checked_out_is_its_own_path_with_a_note(
    parent: Path, tmp_path: Path
) -> None:
    _commit_in_sub(parent)
    git(parent / "sub", "push", "-q", "origin", "HEAD:refs/heads/work")  # for the update below
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(parent), str(clone))

    [change] = changed_paths(clone, "HEAD~1", "HEAD")
    assert (change.path, change.change, change.subtree) == ("sub", "modified", True)
    assert change.note is not None
    assert "not checked out" in change.note
    assert "as a change of every path under it" in change.note
    assert "git submodule update --init" in change.note

    _sub(clone, "submodule", "update", "-q", "--init")
    assert changed_paths(clone, "HEAD~1", "HEAD") == SUB_CHANGES


def test_a_submodule_that_lacks_a_commit_is_its_own_path_with_a_note(parent: Path) -> None:
    missing = "1234567" + "0" * 33
    git(parent, "update-index", "--cacheinfo", f"160000,{missing},sub")
    git(parent, "commit", "-q", "-m", "point at a commit nobody has")

    [change] = changed_paths(parent, "HEAD~1", "HEAD")
    assert (change.path, change.change, change.subtree) == ("sub", "modified", True)
    assert change.note is not None
    assert "lacks commit 1234567" in change.note
    assert "git -C sub fetch" in change.note


def test_nested_submodules_are_looked_into(parent: Path, tmp_path: Path) -> None:
    deep = _repo(tmp_path / "deep", {"x.txt": "x\n"})
    _sub(parent / "sub", "submodule", "add", "-q", str(deep), "deep")
    _commit(parent / "sub", "nest a submodule")
    _commit(parent, "move the pointer")
    before = git(parent, "rev-parse", "HEAD").strip()
    _write(parent / "sub/deep", {"x.txt": "changed deep down\n"})

    assert changed_paths(parent, "HEAD") == [Change("sub/deep/x.txt", "modified")]
    _commit(parent / "sub/deep", "deep")
    _commit(parent / "sub", "move the nested pointer")
    _commit(parent, "move the pointer again")
    assert changed_paths(parent, before, "HEAD") == [Change("sub/deep/x.txt", "modified")]

    git(parent, "mv", "sub", "sub2")
    _commit(parent, "rename the submodule holding another")
    assert Change("sub2/deep/x.txt", "renamed", "sub/deep/x.txt") in changed_paths(
        parent, "HEAD~1", "HEAD"
    )


def test_a_removed_submodule_deletes_each_of_its_files(parent: Path) -> None:
    git(parent, "rm", "-q", "sub")
    _commit(parent, "remove the submodule")
    deleted = [
        Change(".gitmodules", "modified"),
        Change("sub/.gitignore", "deleted"),
        Change("sub/old name.txt", "deleted"),
        Change("sub/out/s.txt", "deleted"),
    ]

    # the checkout is gone: the files are read from the history kept under .git/modules
    assert not (parent / "sub").exists()
    assert changed_paths(parent, "HEAD~1", "HEAD") == deleted
    assert changed_paths(parent, "HEAD~1") == deleted

    shutil.rmtree(parent / ".git/modules/sub")
    changes = changed_paths(parent, "HEAD~1", "HEAD")
    assert [(c.path, c.change, c.subtree) for c in changes] == [
        (".gitmodules", "modified", False),
        ("sub", "deleted", True),
    ]
    assert changes[1].note is not None
    assert "it was removed and its history is gone" in changes[1].note


def test_a_renamed_submodule_renames_each_of_its_files(parent: Path) -> None:
    git(parent, "mv", "sub", "sub2")
    _commit(parent, "rename the submodule")
    renamed = [
        Change(".gitmodules", "modified"),
        Change("sub2/.gitignore", "renamed", "sub/.gitignore"),
        Change("sub2/old name.txt", "renamed", "sub/old name.txt"),
        Change("sub2/out/s.txt", "renamed", "sub/out/s.txt"),
    ]

    assert changed_paths(parent, "HEAD~1", "HEAD") == renamed
    assert changed_paths(parent, "HEAD~1") == renamed
    _write(parent / "sub2", {"loose.txt": "untracked\n"})
    assert Change("sub2/loose.txt", "untracked") in changed_paths(parent, "HEAD~1")
    # the commit that moved the pointer stands for the files under both paths
    bump = git(parent, "rev-parse", "HEAD").strip()
    wanted = ["sub2/out/s.txt", "sub/out/s.txt"]
    assert last_commits(parent, "HEAD~1", wanted) == {p: bump for p in wanted}


def test_a_submodule_renamed_with_new_commits_inside(parent: Path) -> None:
    _work_in_sub(parent)
    git(parent, "mv", "sub", "sub2")
    _commit(parent, "rename the submodule and move its pointer")

    assert changed_paths(parent, "HEAD~1", "HEAD") == [
        Change(".gitmodules", "modified"),
        Change("sub/.gitignore", "deleted"),
        Change("sub2/dir ü/new é.txt", "added"),
        Change("sub2/new name.txt", "renamed", "sub/old name.txt"),
        Change("sub2/out/s.txt", "renamed", "sub/out/s.txt"),
    ]


def test_a_deinitialized_submodule_is_read_from_its_kept_history(parent: Path) -> None:
    _commit_in_sub(parent)
    git(parent, "submodule", "deinit", "-q", "sub")

    assert not (parent / "sub/.git").exists()
    assert changed_paths(parent, "HEAD~1", "HEAD") == SUB_CHANGES
    assert changed_paths(parent, "HEAD~1") == SUB_CHANGES


def test_a_renamed_submodule_that_is_not_checked_out_stands_for_both_paths(
    parent: Path, tmp_path: Path
) -> None:
    git(parent, "mv", "sub", "sub2")
    _commit(parent, "rename the submodule")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(parent), str(clone))

    [_, change] = changed_paths(clone, "HEAD~1", "HEAD")
    assert (change.path, change.change, change.old_path) == ("sub2", "renamed", "sub")
    assert change.subtree
    assert change.note is not None
    assert "not checked out" in change.note


# --- plangraph impact -------------------------------------------------------------------------


def test_impact_since_reaches_the_nodes_of_files_inside_a_submodule(parent: Path) -> None:
    short = _commit_in_sub(parent)[:7]

    result = plangraph_main(parent, "impact", "--since", "HEAD~1", "--check", "--format", "json")
    assert result.code == 1, result.err
    data = result.json()
    # B's artifact check reads the file too: it is listed under both (and B also downstream)
    assert {"path": "sub/out/s.txt", "change": "modified", "nodes": ["A", "B"]} in data["changed"]
    assert [entry["node"] for entry in data["invalidated"]] == ["A", "B"]
    assert data["invalidated"][0]["reasons"] == [f"ARTIFACT_CHANGED sub/out/s.txt (commit {short})"]

    assert plangraph_main(parent, "impact", "--since", "HEAD", "--check").code == 0
    (parent / "sub/out/s.txt").write_text("not committed anywhere\n")
    uncommitted = plangraph_main(parent, "impact", "--since", "HEAD", "--check")
    assert uncommitted.code == 1
    assert "modified  sub/out/s.txt  A" in uncommitted.out


def test_store_mode_names_the_commit_that_moved_the_pointer(parent: Path) -> None:
    assert plangraph_main(parent, "verify").code == 0
    short = _commit_in_sub(parent)[:7]

    result = plangraph_main(parent, "impact", "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["invalidated"][0]["reasons"] == [
        f"ARTIFACT_CHANGED sub/out/s.txt (commit {short})"
    ]


def test_impact_counts_a_submodule_it_cannot_look_into_as_every_path_under_it(
    parent: Path, tmp_path: Path
) -> None:
    short = _commit_in_sub(parent)[:7]
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(parent), str(clone))

    result = plangraph_main(clone, "impact", "--since", "HEAD~1", "--check", "--format", "json")
    assert result.code == 1, result.err
    data = result.json()
    assert data["changed"] == [{"path": "sub", "change": "modified", "nodes": ["A", "B"]}]
    assert [entry["node"] for entry in data["invalidated"]] == ["A", "B"]
    assert data["invalidated"][0]["reasons"] == [f"ARTIFACT_CHANGED sub (commit {short})"]
    assert "plangraph: note: submodule sub changed, but the files" in result.err
    assert "git submodule update --init --recursive" in result.err


def test_impact_of_a_renamed_submodule(parent: Path) -> None:
    git(parent, "mv", "sub", "sub2")
    short = _commit(parent, "rename the submodule")[:7]

    result = plangraph_main(parent, "impact", "--since", "HEAD~1", "--check", "--format", "json")
    assert result.code == 1, result.err
    data = result.json()
    renamed = {"path": "sub2/out/s.txt", "change": "renamed", "nodes": ["A", "B"]}
    assert {**renamed, "old_path": "sub/out/s.txt"} in data["changed"]
    assert [entry["node"] for entry in data["invalidated"]] == ["A", "B"]
    assert data["invalidated"][0]["reasons"] == [
        f"ARTIFACT_CHANGED sub2/out/s.txt (renamed from sub/out/s.txt, commit {short})"
    ]


def test_impact_of_a_removed_submodule(parent: Path) -> None:
    git(parent, "rm", "-q", "sub")
    short = _commit(parent, "remove the submodule")[:7]

    result = plangraph_main(parent, "impact", "--since", "HEAD~1", "--check", "--format", "json")
    assert result.code == 1, result.err
    assert result.json()["invalidated"][0]["reasons"] == [
        f"ARTIFACT_DELETED sub/out/s.txt (commit {short})"
    ]
    assert "note" not in result.err


@pytest.mark.parametrize(
    ("output", "reached"),
    [
        ("sub/out/s.txt", True),
        ("sub/out/*.txt", True),
        ("sub", True),
        ("s*/x", True),
        ("**/*.txt", True),
        ("subway/s.txt", False),
        ("other/*.txt", False),
        ("su/b/*.txt", False),
    ],
)
def test_a_change_standing_for_a_subtree_reaches_every_path_under_it(
    output: str, reached: bool
) -> None:
    criterion = {"id": "ac", "verifier": {"type": "artifact", "path": output}}
    node = {"id": "A", "outputs": [output], "acceptance": [criterion]}
    plan = runtime_plan({"plangraph": 1, "plan": "p", "nodes": [node], "edges": []})
    whole = diff_impact(Graph.of(plan), [Change("sub", "modified", subtree=True)])
    assert [i.node for i in whole.invalidated] == (["A"] if reached else [])
    # a listed change reaches only the paths that name it or a folder above it
    alone = diff_impact(Graph.of(plan), [Change("sub", "modified")])
    assert [i.node for i in alone.invalidated] == (["A"] if output == "sub" else [])


# --- unknown revisions ------------------------------------------------------------------------


def test_outside_a_shallow_clone_nothing_is_said_about_one(parent: Path) -> None:
    for rev, reason in [
        ("nosuchref", "no commit, branch or tag has that name"),
        ("HEAD~9", "the history of HEAD does not go back that far"),
        ("HEAD~1^2", "a commit on the way has no such parent (not a merge)"),
        ("1234567", "no commit, branch or tag"),
    ]:
        with pytest.raises(GitError, match=re.escape(f"unknown revision '{rev}'")) as caught:
            changed_paths(parent, rev)
        assert reason in str(caught.value)
        assert "shallow clone" not in str(caught.value)
