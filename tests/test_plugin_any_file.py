"""A plug-in or ``conftest.py`` that implements ``pytest_collect_file`` can collect tests from
any file (the YAML example of pytest's documentation): what such a run could collect is every
file of the folders pytest enters, not only its Python modules and doctest files. The record's
collect subject says so (``"any_file": true``) and digests every file there, so a new
``.yaml`` test file stales the evidence.

Each case runs real pytest sessions (``pytester``) in a real git repository, and the real
``plangraph`` command.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_helpers import plangraph, plangraph_main
from glob_helpers import walks_of, write
from plugin_helpers import latest, make_project

from pytest_plangraph.vcs.testglob import collect_files, collect_key

CHECKS = """
import pytest


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".yaml" and file_path.name.startswith("check"):
        return CheckFile.from_parent(parent, path=file_path)


class CheckFile(pytest.File):
    def collect(self):
        for line in self.path.read_text().splitlines():
            name, _, value = line.partition(":")
            yield CheckItem.from_parent(self, name=name.strip(), value=value.strip())


class CheckItem(pytest.Item):
    def __init__(self, *, value, **kwargs):
        super().__init__(**kwargs)
        self.value = value
        self.add_marker(pytest.mark.criterion("step-a/ac-marked"))

    def runtest(self):
        assert self.value == "ok", self.value

    def reportinfo(self):
        return self.path, 0, self.name
"""


def _status(root: Path) -> str:
    answer = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in answer["nodes"] if n["id"] == "step-a"]
    return str(node["status"])


@pytest.mark.parametrize("workers", [(), ("-n", "2", "-p", "no:randomly")])
def test_a_new_yaml_test_file_a_conftest_collects_stales_the_run(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """Under xdist too: the workers, which load the conftest, say what the run could collect."""
    root = make_project(
        pytester,
        files={"tests/conftest.py": textwrap.dedent(CHECKS), "tests/check_one.yaml": "one: ok\n"},
    )
    pytester.runpytest("--plangraph", *workers).assert_outcomes(passed=5)
    assert _status(root) == "completed"
    walks = walks_of(latest(root)["step-a/ac-marked"].subjects)
    assert walks and all('"any_file":true' in p for p in walks)
    write(root, "tests/check_two.yaml", "two: broken\n")
    assert _status(root) == "stale"
    refused = plangraph(root, "claim", "step-a", "--by", "agent-7", "--format", "json")
    assert refused.code == 1, refused.err
    assert "ARTIFACT_CHANGED" in refused.out
    # the conftest does collect it, and its test fails
    pytester.runpytest("--plangraph", *workers).assert_outcomes(passed=5, failed=1)
    assert _status(root) == "failed"


def test_without_a_collector_of_its_own_the_key_stays_as_it_was(
    pytester: pytest.Pytester,
) -> None:
    """pytest's own collectors (Python modules, doctests) and the plan's do not make a run
    collect any file: records keep the key they had, and a data file changes nothing."""
    root = make_project(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    walks = walks_of(latest(root)["step-a/ac-marked"].subjects)
    assert walks and not any("any_file" in p for p in walks)
    write(root, "tests/check_two.yaml", "two: broken\n")
    assert _status(root) == "completed"


def test_the_walk_of_a_run_that_collects_any_file_lists_every_file(tmp_path: Path) -> None:
    settings = {
        "python_files": ["test_*.py"],
        "norecursedirs": [".*", "build"],
        "doctest_glob": [],
        "doctest_modules": False,
        "venv": False,
    }
    for rel in ("tests/test_a.py", "tests/data.csv", "tests/sub/check.yaml", "tests/build/x.yaml"):
        write(tmp_path, rel, "")
    plain = collect_files(str(tmp_path), collect_key("tests", settings))
    every = collect_files(str(tmp_path), collect_key("tests", {**settings, "any_file": True}))
    assert plain is not None and plain.files == ("tests/test_a.py",)
    assert every is not None
    assert every.files == ("tests/data.csv", "tests/sub/check.yaml", "tests/test_a.py")
