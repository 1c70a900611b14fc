"""Shallow clones (a CI checkout of depth 1): impact says the evidence commit may be unfetched, and
a revision beyond the clone or a typo is each named for what it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from conftest import git
from submodule_helpers import PLAN, _commit, _repo, _write

# --- shallow clones ---------------------------------------------------------------------------


@pytest.fixture
def shallow(tmp_path: Path) -> Path:
    """A depth-1 clone of a three-commit history, with a store whose evidence was recorded at
    the first commit (which the clone does not have)."""
    plan = PLAN.replace("sub/out/s.txt", "out/s.txt")
    full = _repo(tmp_path / "full", {"plangraph.yaml": plan, "out/s.txt": "1\n"})
    assert plangraph_main(full, "verify").code == 0
    for text in ("2\n", "3\n"):
        _write(full, {"out/s.txt": text})
        _commit(full, f"write {text.strip()}")
    clone = tmp_path / "depth-1"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{full}", str(clone))
    (clone / ".plangraph").mkdir()
    (clone / ".plangraph/store.db").write_bytes((full / ".plangraph/store.db").read_bytes())
    return clone


def test_shallow_clone_says_the_evidence_commit_may_be_unfetched(shallow: Path) -> None:
    result = plangraph_main(shallow, "impact")
    assert result.code == 0, result.err
    assert "shallow clone" in result.err
    assert "fetch-depth: 0" in result.err
    assert "git fetch --unshallow" in result.err
    assert "(rebased or dropped)" not in result.err
    assert "ARTIFACT_CHANGED out/s.txt" in result.out


def test_a_typo_is_not_blamed_on_a_shallow_clone(shallow: Path) -> None:
    typo = plangraph_main(shallow, "impact", "--since", "nosuchref")
    assert typo.code == 2
    assert "unknown revision 'nosuchref'" in typo.err
    assert "shallow clone" not in typo.err

    for beyond in ("HEAD~1", "1234567"):
        result = plangraph_main(shallow, "impact", "--since", beyond)
        assert result.code == 2
        assert f"revision '{beyond}' is not in this shallow clone" in result.err

    for branch in ("origin/feature", "origin/feature~1", "origin/feature^"):
        remote = plangraph_main(shallow, "impact", "--since", branch)
        assert remote.code == 2
        assert f"unknown revision '{branch}'" in remote.err
        assert "`git fetch origin feature`" in remote.err
