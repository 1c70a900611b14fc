"""Files that appear where nothing was bound: a ``conftest.py`` in a folder made after the
evidence was recorded, a test file that only a ``criterion`` marker brings in, a file only a
custom ``--doctest-glob`` collects.

The recording run binds, for each folder among the paths it collects, what pytest could collect
there (:func:`pytest_plangraph.vcs.testglob.collect_files`: every ``conftest.py``, test module
and doctest file, with the run's ``python_files``, ``norecursedirs`` and doctest settings); the
gate walks the folder again, and a file found now that was not found then stales every
criterion of the run (``ARTIFACT_CHANGED``). The kept answer of ``plangraph status`` watches
the folders walked, so an addition is never answered from it.

Each case runs real pytest sessions (``pytester``) in a real git repository, and the real
``plangraph`` command.
"""

from __future__ import annotations

import glob
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph
from glob_helpers import SETTINGS, statuses, walks_of, write
from plugin_helpers import MARKED_FAILING, latest, make_project, settle

from pytest_plangraph.vcs.testglob import (
    collect_digest,
    collect_files,
    collect_folder,
    collect_key,
    expand_testpaths,
    is_collect_key,
)

FORCING = """
import pytest

def pytest_collection_modifyitems(items):
    for item in items:  # every test of the session, not only those below this folder
        item.add_marker(pytest.mark.xfail(strict=True, reason="forced"))
"""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def recorded(pytester: pytest.Pytester, *args: str, passed: int = 4) -> Path:
    root = make_project(pytester)
    pytester.runpytest("--plangraph", *args).assert_outcomes(passed=passed)
    assert statuses(root)[0] == "completed"
    return root


# --- the walk --------------------------------------------------------------------------------


def test_the_walk_lists_what_pytest_could_collect_with_the_runs_settings(tmp_path: Path) -> None:
    for rel in (
        "tests/test_a.py",
        "tests/helpers.py",
        "tests/b_test.py",
        "tests/sub/conftest.py",
        "tests/sub/__init__.py",
        "tests/sub/check_c.py",
        "tests/testnotes.txt",
        "tests/guide.rst",
        "tests/.hidden/conftest.py",
        "tests/build/conftest.py",
        "tests/env/pyvenv.cfg",
        "tests/env/conftest.py",
        "tests/__pycache__/conftest.py",
        "src/conftest.py",
    ):
        write(tmp_path, rel, "")
    key = collect_key("tests", SETTINGS)
    assert is_collect_key(key) and collect_folder(key) == "tests"
    found = collect_files(str(tmp_path), key)
    assert found is not None
    assert found.files == (
        "tests/b_test.py",
        "tests/sub/__init__.py",
        "tests/sub/conftest.py",
        "tests/test_a.py",
        "tests/testnotes.txt",
    )
    assert found.listed == ("tests", "tests/sub")
    # the run's own settings: its python_files, a custom doctest glob, --doctest-modules,
    # a norecursedirs that lets pytest into build/, --collect-in-virtualenv
    custom = {
        **SETTINGS,
        "python_files": ["check_*.py"],
        "doctest_glob": ["*.rst"],
        "norecursedirs": [".*"],
        "venv": True,
    }
    found = collect_files(str(tmp_path), collect_key("tests", custom))
    assert found is not None
    assert found.files == (
        "tests/build/conftest.py",
        "tests/env/conftest.py",
        "tests/guide.rst",
        "tests/sub/__init__.py",
        "tests/sub/check_c.py",
        "tests/sub/conftest.py",
    )
    modules = collect_files(
        str(tmp_path), collect_key("tests", {**SETTINGS, "doctest_modules": True})
    )
    assert modules is not None and "tests/helpers.py" in modules.files
    # the whole repository from its root; a key that is not one is never a digest of a walk
    whole = collect_files(str(tmp_path), collect_key("", SETTINGS))
    assert whole is not None and "src/conftest.py" in whole.files and "" in whole.listed
    # a norecursedirs without `.*` lets pytest into every dot folder, the tools' too
    write(tmp_path, ".plangraph/cache/conftest.py", "")
    write(tmp_path, ".pytest_cache/v/conftest.py", "")
    write(tmp_path, ".git/hooks/conftest.py", "")
    hidden = collect_files(str(tmp_path), collect_key("", {**SETTINGS, "norecursedirs": []}))
    assert hidden is not None and "tests/.hidden/conftest.py" in hidden.files
    for planted in (".plangraph/cache", ".pytest_cache/v", ".git/hooks"):
        assert f"{planted}/conftest.py" in hidden.files and planted in hidden.listed
    assert "tests/__pycache__" not in hidden.listed  # pytest never enters it
    default = collect_files(str(tmp_path), collect_key("", SETTINGS))  # `.*`: none of them
    assert default is not None and not any(p.startswith(".") for p in default.files)
    assert collect_digest(collect_files(str(tmp_path), "tests/::collect{")) == "unreadable"
    assert collect_files(str(tmp_path), collect_key("../out", SETTINGS)) is None


def test_the_walk_follows_a_link_to_a_folder_once(tmp_path: Path) -> None:
    write(tmp_path, "shared/conftest.py", "")
    write(tmp_path, "tests/test_a.py", "")
    os.symlink("../shared", tmp_path / "tests/link", target_is_directory=True)
    os.symlink("..", tmp_path / "shared/up", target_is_directory=True)  # a cycle
    found = collect_files(str(tmp_path), collect_key("tests", SETTINGS))
    assert found is not None
    assert "tests/link/conftest.py" in found.files
    assert all(path.count("link") <= 1 for path in found.files)


@pytest.mark.parametrize("entry", ["*/tests", "tests*", "**/tests", "build/*", "missing/x*"])
def test_testpaths_entries_expand_as_pythons_glob_does(tmp_path: Path, entry: str) -> None:
    """What pytest does with a ``testpaths`` entry: ``glob.glob(entry, recursive=True)`` from
    its rootdir, ``norecursedirs`` unread, dot names passed over by ``*``; never above the
    root, and the folders where a later match would appear are watched."""
    for rel in ("pkg/tests/test_p.py", "build/tests/test_b.py", ".hidden/tests/test_h.py"):
        write(tmp_path, rel, "")
    write(tmp_path, "tests2/test_t.py", "")
    found = expand_testpaths(str(tmp_path), "", [entry])
    assert found.files == tuple(sorted(glob.glob(entry, root_dir=tmp_path, recursive=True)))
    assert not any(p.startswith(("..", ".hidden")) for p in found.files)
    assert "" in found.listed or entry.startswith(("build", "missing"))
    key = collect_key("", {**SETTINGS, "testpaths": [entry]})
    walked = collect_files(str(tmp_path), key)
    assert walked is not None
    assert ("build/tests/test_b.py" in walked.files) == (
        "build/tests" in found.files or entry == "build/*"
    )
    assert expand_testpaths(str(tmp_path), "pkg", ["../*"]).files == ("build", "pkg", "tests2")
    assert expand_testpaths(str(tmp_path), "", ["../*"]).files == ()


# --- the evidence and the gate ---------------------------------------------------------------


def test_the_record_binds_what_the_run_could_collect(pytester: pytest.Pytester) -> None:
    root = recorded(pytester)
    records = latest(root)
    for ref in ("step-a/ac-marked", "step-a/ac-pattern"):
        subjects = records[ref].subjects
        [walk] = walks_of(subjects)
        assert collect_folder(walk) == "tests"
        assert subjects[walk] == collect_digest(collect_files(str(root), walk))
    assert '"doctest_glob":["test*.txt"]' in walk and '"python_files":["test_*.py"' in walk
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 0


@pytest.mark.parametrize("workers", [(), ("-n", "2", "-p", "no:randomly")])
def test_a_conftest_in_a_folder_made_since_stales_every_criterion_of_the_run(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    root = recorded(pytester, *workers)
    write(root, "tests/deeper/conftest.py", textwrap.dedent(FORCING))
    status, reasons = statuses(root)
    assert status == "stale"
    for criterion in ("ac-marked", "ac-pattern"):
        [reason] = reasons[criterion]
        assert reason["code"] == "ARTIFACT_CHANGED"
        assert reason["folder"] == "tests"
        assert "tests/" in str(reason["message"])
    refused = plangraph(root, "claim", "step-a", "--by", "agent-7", "--format", "json")
    assert refused.code == 1, refused.err
    assert "ARTIFACT_CHANGED" in refused.out
    # the file does change the verdict: with it, every test fails
    pytester.runpytest("--plangraph", *workers).assert_outcomes(failed=4)
    assert statuses(root)[0] == "failed"
    # and removing the folder again, the run passes: completed
    shutil.rmtree(root / "tests/deeper")
    pytester.runpytest("--plangraph", *workers).assert_outcomes(passed=4)
    assert statuses(root)[0] == "completed"


def test_a_marked_failing_test_file_added_would_pass_unrun(pytester: pytest.Pytester) -> None:
    """A failing test of ``ac-marked`` in a new file: the recorded pass is no lie about the
    tests it ran, yet the criterion's tests fail on the code now. The gate says so."""
    root = recorded(pytester)
    write(root, "tests/test_b.py", textwrap.dedent(MARKED_FAILING))
    status, reasons = statuses(root)
    assert status == "stale"
    assert [r["code"] for r in reasons["ac-marked"]] == ["ARTIFACT_CHANGED"]
    # every criterion of the run: a marker may name any of them
    assert [r["code"] for r in reasons["ac-pattern"]] == ["ARTIFACT_CHANGED"]
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1
    # the criterion's tests do fail on the code now
    pytester.runpytest("--plangraph").assert_outcomes(passed=4, failed=1)
    assert latest(root)["step-a/ac-marked"].outcome == "failed"
    assert statuses(root)[0] == "failed"


@pytest.mark.parametrize("folder", [".plangraph", ".git", ".pytest_cache"])
def test_a_test_file_in_a_dot_folder_pytest_enters_stales_the_run(
    pytester: pytest.Pytester, folder: str
) -> None:
    """A project whose ``norecursedirs`` leaves out no dot name lets pytest into every dot
    folder, plangraph's store folder, git's and pytest's cache included: a failing test file
    put there is collected by the next run, so the walk enters them too."""
    ini = "[pytest]\nnorecursedirs = build\n"  # no testpaths: the run collects the root
    root = make_project(pytester, files={"pytest.ini": ini})
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert statuses(root)[0] == "completed"
    write(root, f"{folder}/planted/test_planted.py", textwrap.dedent(MARKED_FAILING))
    status, reasons = statuses(root)
    assert status == "stale"
    assert [r["code"] for r in reasons["ac-marked"]] == ["ARTIFACT_CHANGED"]
    assert plangraph(root, "claim", "step-a", "--by", "agent-7").code == 1
    # pytest does collect it, and the criterion's test fails there
    pytester.runpytest("--plangraph").assert_outcomes(passed=4, failed=1)
    assert statuses(root)[0] == "failed"


def test_a_file_only_a_custom_doctest_glob_collects(pytester: pytest.Pytester) -> None:
    plan = """
        plangraph: 1
        plan: demo
        nodes:
          - id: step-a
            acceptance:
              - id: ac-docs
                verifier: {type: test, tests: ["tests/*.rst::*"]}
        """
    guide = ">>> 1 + 1\n2\n"
    root = make_project(
        pytester,
        plan=plan,
        tests="def test_ok():\n    assert True\n",
        files={
            "pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --doctest-glob=*.rst\n",
            "tests/guide.rst": guide,
        },
    )
    pytester.runpytest("--plangraph").assert_outcomes(passed=2)
    assert statuses(root)[0] == "completed"
    write(root, "tests/more.rst", ">>> 1 + 1\n3\n")
    status, reasons = statuses(root)
    assert status == "stale"
    assert [r["code"] for r in reasons["ac-docs"]] == ["ARTIFACT_CHANGED"]
    pytester.runpytest("--plangraph").assert_outcomes(passed=2, failed=1)
    assert statuses(root)[0] == "failed"


def test_an_unchanged_repository_is_a_kept_hit_and_an_addition_never_is(
    pytester: pytest.Pytester, derived: list[str]
) -> None:
    root = recorded(pytester)
    # the run made tests/__pycache__: a watched folder is trusted by its mtime only 2 s later;
    # every folder aged, as a slow machine may leave the root or another one younger than that
    settle(root)
    statuses(root)
    before = len(derived)
    assert statuses(root)[0] == "completed"
    assert len(derived) == before  # answered from the kept status
    (root / "tests/deeper/deepest").mkdir(parents=True)
    assert statuses(root)[0] == "completed"  # a folder with nothing pytest collects
    settle(root)
    statuses(root)
    before = len(derived)
    assert statuses(root)[0] == "completed"
    assert len(derived) == before  # kept again, watching the new folders too
    write(root, "tests/deeper/deepest/conftest.py", textwrap.dedent(FORCING))
    assert statuses(root)[0] == "stale"
    assert len(derived) == before + 1  # derived again, not kept
    # files pytest does not collect change nothing
    (root / "tests/deeper/deepest/conftest.py").unlink()
    write(root, "tests/deeper/data.json", "{}\n")
    write(root, "tests/.cache/conftest.py", "")  # norecursedirs leaves it out
    assert statuses(root)[0] == "completed"
