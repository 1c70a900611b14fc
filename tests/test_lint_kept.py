"""Lint's answer kept for a command (``lint/kept.py``): a ``pytest --plangraph`` run on an
unchanged plan and tree takes it, and each change it depends on — the plan, a path a check
looks at, a link on the way, a plug-in installed or registered by a ``conftest.py``, a damaged
or planted cache file — gives the findings a run gives with every cache deleted. Each run is a
separate process, as a user's run is."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from cli_helpers import plangraph
from conftest import FIXTURES
from plugin_helpers import PLAN, make_project, settle

from pytest_plangraph.lint.findings import LINT_CODES
from pytest_plangraph.lint.kept import NAME

LINECOUNT_PLAN = PLAN.replace(
    "{type: artifact, path: out/b.txt}", '{type: linecount, path: out/b.txt, regex: "^b$"}'
)
SCHEMA_PLAN = PLAN.replace(
    "{type: artifact, path: out/b.txt}", "{type: schema, schema: out/s.json, artifact: out/b.json}"
)
FINDING = re.compile(r"\b(?:error|warning) ([A-Z_]+) \[")
"""How a lint finding is shown: ``plangraph.yaml:12:15: error CODE [node]: hint``."""
CONFTEST = """
import plangraph_linecount
from pytest_plangraph.hooks.manager import get_plugin_manager

get_plugin_manager().register(plangraph_linecount, name="local-linecount")
"""


@pytest.fixture(autouse=True)
def _own_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs' user cache (their key, the entry points kept) is this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def _kept(root: Path) -> Path:
    return root / ".plangraph" / "cache" / NAME


def _run(pytester: pytest.Pytester) -> tuple[int, list[str]]:
    """A ``pytest --plangraph`` run in its own process: its exit code and the lines that
    show a lint finding (run as a user runs it: ``runpytest_subprocess`` would make a
    folder in the project for each run)."""
    result = pytester.run(sys.executable, "-m", "pytest", "--plangraph", "-p", "no:cacheprovider")
    lines = [*result.outlines, *result.errlines]
    found = [(line, FINDING.search(line)) for line in lines]
    return int(result.ret), [line for line, m in found if m and m.group(1) in LINT_CODES]


def _fresh(pytester: pytest.Pytester, root: Path, user_cache: Path) -> tuple[int, list[str]]:
    """:func:`_run` with every cache deleted first (the plan cache, the user cache)."""
    shutil.rmtree(root / ".plangraph" / "cache", ignore_errors=True)
    shutil.rmtree(user_cache, ignore_errors=True)
    return _run(pytester)


def _hit(pytester: pytest.Pytester, root: Path) -> tuple[int, list[str]]:
    """A run that must take the kept answer: the file is there and not written again."""
    before = os.stat(_kept(root))
    found = _run(pytester)
    after = os.stat(_kept(root))
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    return found


def _miss(pytester: pytest.Pytester, root: Path, user_cache: Path) -> tuple[int, list[str]]:
    """A run after a change: the answer it gives is the one without any cache, which the
    change must have made it work out again."""
    found = _run(pytester)
    assert found == _fresh(pytester, root, user_cache)
    return found


def test_an_unchanged_tree_takes_the_kept_answer_and_a_plan_edit_does_not(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = make_project(pytester)
    assert _run(pytester) == (0, [])
    settle(root)
    assert _run(pytester) == (0, [])  # kept now: its folders are old enough to be watched
    kept = json.loads(_kept(root).read_text(encoding="utf-8").split("\n", 1)[1])
    assert {d[0] for d in kept["watch"]["walked"]} == {"", "src", "out", "tests"}
    assert _hit(pytester, root) == (0, [])
    plan = root / "plangraph.yaml"
    plan.write_text(PLAN + "  - {from: step-b, to: step-gone, type: requires}\n")
    code, lines = _miss(pytester, root, tmp_path / "user-cache")
    assert code != 0 and any("MISSING_DEP" in line for line in lines)
    settle(root)
    assert _run(pytester) == (code, lines)
    assert _hit(pytester, root) == (code, lines)  # the errors are kept too


def test_a_link_out_of_the_root_on_the_way_or_in_place_of_a_file_is_found(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = make_project(pytester)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.txt").write_text("b\n")
    (outside / "a.py").write_text("A = 1\n")
    _run(pytester)
    settle(root)
    _run(pytester)
    assert _hit(pytester, root) == (0, [])
    # a file the check looks at replaced by a link leading out of the root
    (root / "out/b.txt").unlink()
    (root / "out/b.txt").symlink_to(outside / "b.txt")
    code, lines = _miss(pytester, root, tmp_path / "user-cache")
    assert code != 0 and any("PATH_OUTSIDE_ROOT" in line and "out/b.txt" in line for line in lines)
    (root / "out/b.txt").unlink()
    (root / "out/b.txt").write_text("b\n")
    assert _miss(pytester, root, tmp_path / "user-cache") == (0, [])
    settle(root)
    _run(pytester)
    assert _hit(pytester, root) == (0, [])
    # a directory on the way replaced by a link leading out of the root
    shutil.rmtree(root / "src")
    (root / "src").symlink_to(outside)
    code, lines = _miss(pytester, root, tmp_path / "user-cache")
    assert code != 0 and any("PATH_OUTSIDE_ROOT" in line and "src/a.py" in line for line in lines)
    # a link on the way is not watched: its target changed is found, never a kept answer
    (root / "inside").mkdir()
    (root / "inside/a.py").write_text("A = 1\n")
    (root / "src").unlink()
    (root / "src").symlink_to(root / "inside")
    settle(root)
    assert _miss(pytester, root, tmp_path / "user-cache") == (0, [])
    assert not _kept(root).exists()
    (root / "src").unlink()
    (root / "src").symlink_to(outside)
    code, lines = _miss(pytester, root, tmp_path / "user-cache")
    assert code != 0 and any("src/a.py" in line for line in lines)


def test_a_settings_check_that_reads_files_is_never_kept(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = make_project(pytester, plan=SCHEMA_PLAN, files={"out/b.json": "{}\n"})
    (root / "out/s.json").write_text('{"type": "object"}\n')
    _run(pytester)
    settle(root)
    assert _run(pytester)[1] == []
    assert not _kept(root).exists()  # a schema's check reads the schema's bytes
    (root / "out/s.json").write_text('{"type": 12}\n')  # no valid schema now: told, goes on
    settle(root)
    lines = _miss(pytester, root, tmp_path / "user-cache")[1]
    assert any("VERIFIER_CONFIG" in line and "the run goes on" in line for line in lines)
    assert not _kept(root).exists()


def test_a_plugin_installed_or_registered_by_a_conftest_is_a_miss(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(pytester, plan=LINECOUNT_PLAN)
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(site))
    _run(pytester)
    settle(root)
    unknown = _run(pytester)
    assert unknown[0] != 0 and any("UNKNOWN_VERIFIER" in line for line in unknown[1])
    assert _hit(pytester, root) == unknown
    # installed as a real distribution: its entry point is on the path the runs read
    info = site / "plangraph_linecount-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plangraph-linecount\n")
    (info / "entry_points.txt").write_text("[plangraph]\nlinecount = plangraph_linecount\n")
    shutil.copy(FIXTURES / "plangraph-linecount" / "plangraph_linecount.py", site)
    assert _miss(pytester, root, tmp_path / "user-cache") == (0, [])
    shutil.rmtree(info)  # uninstalled: unknown again
    assert _miss(pytester, root, tmp_path / "user-cache") == unknown
    settle(root)
    _run(pytester)
    assert _hit(pytester, root) == unknown
    # registered by the project's own conftest.py: no entry point names it
    (root / "conftest.py").write_text(CONFTEST)
    settle(root)
    assert _miss(pytester, root, tmp_path / "user-cache") == (0, [])


def test_a_damaged_or_planted_answer_is_a_miss(pytester: pytest.Pytester, tmp_path: Path) -> None:
    root = make_project(pytester)
    plan = root / "plangraph.yaml"
    plan.write_text(PLAN + "  - {from: step-b, to: step-gone, type: requires}\n")
    _run(pytester)
    settle(root)
    refused = _run(pytester)
    assert refused[0] != 0 and refused[1]
    kept = _kept(root)
    tag, body = kept.read_text(encoding="utf-8").split("\n", 1)
    record = json.loads(body)
    # planted: the same record with no errors, under the tag the other body had
    kept.write_text(tag + "\n" + json.dumps({**record, "errors": []}), encoding="utf-8")
    assert _run(pytester) == refused
    for damaged in ("", "not json", tag + "\n{", tag + "\n" + body[: len(body) // 2]):
        kept.write_text(damaged, encoding="utf-8")
        assert _run(pytester) == refused
    kept.unlink()
    kept.mkdir()  # not a file at all
    assert _run(pytester) == refused
    kept.rmdir()
    assert _run(pytester) == _fresh(pytester, root, tmp_path / "user-cache") == refused


def test_a_command_checking_the_plan_shares_the_kept_answer(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = make_project(pytester)
    _run(pytester)
    settle(root)
    _run(pytester)
    assert _kept(root).exists()
    outside = tmp_path / "outside.txt"
    outside.write_text("b\n")
    (root / "out/b.txt").unlink()
    (root / "out/b.txt").symlink_to(outside)
    status = plangraph(root, "status")
    linted = plangraph(root, "lint")
    assert status.code != 0 and linted.code != 0
    escaping = [line for line in linted.out.splitlines() if "PATH_OUTSIDE_ROOT" in line]
    assert escaping, linted.out
    for line in escaping:  # the same finding, where lint shows it
        assert line.split("]: ", 1)[1] in status.err, (line, status.err)


CLASH = """
from pytest_plangraph.hooks.specs import hookimpl


class Clash:
    name = "test"
    runs_in_pytest = False

    def config_problems(self, settings, workspace):
        return []

    def run(self, node, criterion, workspace):
        raise RuntimeError("never run: the name clashes")


@hookimpl
def plangraph_verifier_types():
    return [Clash()]
"""
TEST_ONLY = """
plangraph: 1
plan: tests
nodes:
  - id: step-a
    outputs: [src/a.py]
    acceptance:
      - id: ac-marked
        verifier: {type: test}
"""


@pytest.mark.parametrize("how", ["entry point", "conftest"])
def test_a_plugin_registering_a_builtin_name_is_seen_by_a_run_of_test_criteria(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A run of test criteria that takes the kept answer asks no registry which criteria run
    as items: a plug-in that registers ``test`` too (its criteria then run, and fail, as the
    name clashes) makes it a miss whichever way it comes."""
    root = make_project(pytester, plan=TEST_ONLY)
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(site))
    _run(pytester)
    settle(root)
    assert _run(pytester) == (0, [])
    assert _hit(pytester, root) == (0, [])
    if how == "entry point":
        (site / "plangraph_clash.py").write_text(CLASH)
        info = site / "plangraph_clash-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plangraph-clash\n")
        (info / "entry_points.txt").write_text("[plangraph]\nclash = plangraph_clash\n")
    else:
        (root / "plangraph_clash.py").write_text(CLASH)
        (root / "conftest.py").write_text(
            "import plangraph_clash\n"
            "from pytest_plangraph.hooks.manager import get_plugin_manager\n\n"
            'get_plugin_manager().register(plangraph_clash, name="local-clash")\n'
        )
        settle(root)  # the folders as kept: the registration alone is new
    code, lines = _miss(pytester, root, tmp_path / "user-cache")
    assert code != 0 and any("VERIFIER_CONFIG" in line for line in lines)
