"""The git state reader (one ``git status`` call) against real repositories, and against what
GitPython's repository object says of the same tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git

from pytest_plangraph.vcs.history import git_state
from pytest_plangraph.vcs.status import GitStatus, parse_status, read_git_status


def _gitpython(root: Path, ignore: tuple[str, ...] = ()) -> GitStatus:
    """The same question answered through GitPython, as the reference."""
    import git as gitpython

    try:
        repo = gitpython.Repo(root, search_parent_directories=False)
    except (gitpython.exc.InvalidGitRepositoryError, gitpython.exc.NoSuchPathError):
        return GitStatus(None, None, False, False)
    with repo:
        commit = repo.head.commit.hexsha if repo.head.is_valid() else None
        branch = None if repo.head.is_detached else repo.active_branch.name
        untracked = [p for p in repo.untracked_files if not (ignore and p.startswith(ignore))]
        dirty = repo.is_dirty(untracked_files=False) or bool(untracked)
    return GitStatus(commit, branch, dirty, True)


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("a\n", encoding="utf-8")
    (path / ".gitignore").write_text("*.log\n", encoding="utf-8")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def _same_as_gitpython(root: Path, ignore: tuple[str, ...] = ()) -> GitStatus:
    ours = read_git_status(root, ignore)
    assert ours == _gitpython(root, ignore) == git_state(root, ignore)
    return ours


def test_clean_repository(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    state = _same_as_gitpython(root)
    assert state == GitStatus(git(root, "rev-parse", "HEAD").strip(), "main", False, True)


@pytest.mark.parametrize(
    ("change", "dirty"),
    [
        ("edit", True),
        ("stage", True),
        ("untracked", True),
        ("untracked in a new directory", True),
        ("ignored", False),
        ("store", False),
        ("rename", True),
        ("delete", True),
    ],
)
def test_dirty(tmp_path: Path, change: str, dirty: bool) -> None:
    root = _repo(tmp_path / "r")
    if change == "edit":
        (root / "a.txt").write_text("changed\n", encoding="utf-8")
    elif change == "stage":
        (root / "a.txt").write_text("staged\n", encoding="utf-8")
        git(root, "add", "a.txt")
    elif change == "untracked":
        (root / "new ü.txt").write_text("n\n", encoding="utf-8")
    elif change == "untracked in a new directory":
        (root / "deep" / "er").mkdir(parents=True)
        (root / "deep" / "er" / "x.txt").write_text("x\n", encoding="utf-8")
    elif change == "ignored":
        (root / "run.log").write_text("log\n", encoding="utf-8")
    elif change == "store":
        (root / ".evidence").mkdir()
        (root / ".evidence" / "store.db").write_bytes(b"db")
        (root / ".evidence" / "store.db-wal").write_bytes(b"wal")
    elif change == "rename":
        git(root, "mv", "a.txt", "b.txt")
    elif change == "delete":
        (root / "a.txt").unlink()
    assert _same_as_gitpython(root, (".evidence/store.db",)).dirty is dirty


def test_unborn_branch_and_detached_head(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "trunk")
    assert _same_as_gitpython(fresh) == GitStatus(None, "trunk", False, True)
    (fresh / "s.txt").write_text("s\n", encoding="utf-8")
    git(fresh, "add", "s.txt")
    assert _same_as_gitpython(fresh).dirty

    root = _repo(tmp_path / "r")
    git(root, "checkout", "-q", "--detach")
    state = _same_as_gitpython(root)
    assert state.branch is None
    assert state.commit == git(root, "rev-parse", "HEAD").strip()


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _same_as_gitpython(plain) == GitStatus(None, None, False, False)
    # a directory inside a working tree is not the top of one
    root = _repo(tmp_path / "r")
    (root / "sub").mkdir()
    assert _same_as_gitpython(root / "sub").is_repo is False


def test_parse_status_reads_every_record_kind() -> None:
    output = "\0".join(
        [
            "# branch.oid " + "a" * 40,
            "# branch.head feature/x",
            "2 R. N... 100644 100644 100644 " + "b" * 40 + " " + "b" * 40 + " R100 new.txt",
            "# branch.head old",  # the rename's old path (a legal file name), not a header
            "? .plangraph/store.db-wal",
            "",
        ]
    )
    assert parse_status(output, (".plangraph/store.db",)) == GitStatus(
        "a" * 40, "feature/x", True, True
    )
    untracked_only = "# branch.oid (initial)\0# branch.head main\0? .plangraph/store.db\0"
    assert parse_status(untracked_only, (".plangraph/store.db",)).dirty is False
    assert parse_status(untracked_only).dirty is True


@pytest.mark.parametrize("inside", ["clean", "untracked", "edited"])
def test_a_submodule_seen_from_its_superproject(tmp_path: Path, inside: str) -> None:
    library = _repo(tmp_path / "library")
    root = _repo(tmp_path / "r")
    url = f"file://{library}"
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", url, "vendor/lib")
    git(root, "commit", "-q", "-m", "add the submodule")
    sub = root / "vendor" / "lib"
    if inside == "untracked":
        (sub / "new.txt").write_text("n\n", encoding="utf-8")
    elif inside == "edited":
        (sub / "a.txt").write_text("changed\n", encoding="utf-8")
    # an untracked file in the submodule changes nothing the superproject tracks
    assert _same_as_gitpython(root).dirty is (inside == "edited")
    assert _same_as_gitpython(sub).dirty is (inside != "clean")
