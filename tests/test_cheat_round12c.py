"""Lint's kept answer attacked (twelfth round): each test makes a change the kept answer's key
and watch must see, then checks that a ``pytest --plangraph`` run gives what a run with every
cache deleted gives. Each run is a separate process, as a user's run is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from plugin_helpers import PLAN, make_project, settle
from test_lint_kept import CLASH, TEST_ONLY, _hit, _miss, _own_user_cache, _run

__all__ = ["_own_user_cache"]  # the runs' user cache is each test's own


def test_a_plugin_edited_under_the_same_version_is_a_miss(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plug-in's code edited in place (an editable install, or the same version installed
    again: its metadata folder is the same) so that it registers a built-in type's name too:
    the run refuses the plan, as one without any cache does, and never takes the answer kept
    while the plug-in registered another name."""
    root = make_project(pytester, plan=TEST_ONLY)
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(site))
    module = site / "plangraph_clash.py"
    module.write_text(CLASH.replace('name = "test"', 'name = "unused"'))
    info = site / "plangraph_clash-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plangraph-clash\n")
    (info / "entry_points.txt").write_text("[plangraph]\nclash = plangraph_clash\n")
    _run(pytester)
    settle(root)
    assert _run(pytester) == (0, [])
    assert _hit(pytester, root) == (0, [])
    module.write_text(CLASH)  # the same version, other code: it registers `test` now
    code, lines = _miss(pytester, root, tmp_path / "user-cache")
    assert code != 0 and any("VERIFIER_CONFIG" in line for line in lines)


DEEP_PLAN = PLAN.replace("out/b.txt", "out/deep/er/b.txt")


def test_a_folder_on_the_way_made_a_link_loop_is_a_miss(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """A folder between two watched ones replaced by a link to itself: looking at the folder
    below it fails (too many levels of links) before the folder above is looked at; the run
    says what a run without any cache says (the path escapes), not the error of the look."""
    root = make_project(pytester, plan=DEEP_PLAN, files={"out/deep/er/b.txt": "b\n"})
    _run(pytester)
    settle(root)
    assert _run(pytester) == (0, [])
    assert _hit(pytester, root) == (0, [])
    shutil.rmtree(root / "out/deep")
    (root / "out/deep").symlink_to("deep")
    code, lines = _miss(pytester, root, tmp_path / "user-cache")
    assert code != 0 and any("PATH_OUTSIDE_ROOT" in line for line in lines)
