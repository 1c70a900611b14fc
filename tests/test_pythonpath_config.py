"""The folders a pytest configuration's ``pythonpath`` puts on ``sys.path``
(:mod:`pytest_plangraph.vcs.pythonpath`): a module a test file imports is looked for there
too."""

from __future__ import annotations

from pathlib import Path

import pytest
from glob_helpers import SETTINGS, write

from pytest_plangraph.vcs.pythonpath import PythonPath
from pytest_plangraph.vcs.quotes import CollectValues, quotes_key
from pytest_plangraph.vcs.testglob import GlobFiles, collect_digest, collect_key

REF = "step-a/ac-pattern"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\npythonpath = lib  other/deep\n"),
        (".pytest.ini", "[pytest]\npythonpath =\n    lib\n    other/deep\n"),
        ("tox.ini", "[tox]\n[pytest]\npythonpath = lib other/deep\n"),
        ("setup.cfg", "[tool:pytest]\npythonpath = lib other/deep\n"),
        ("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["lib", "other/deep"]\n'),
        ("pyproject.toml", '[tool.pytest]\npythonpath = ["lib", "other/deep"]\n'),
    ],
)
def test_each_configuration_files_pythonpath_is_read(tmp_path: Path, name: str, text: str) -> None:
    write(tmp_path, f"sub/{name}", text)
    found = PythonPath(str(tmp_path))
    assert found.folders("sub/tests") == {"sub/lib", "sub/other/deep"}
    assert list(found.read) == [f"sub/{name}"]  # read once, watched by a kept answer
    assert found.folders("") == set()  # a file below the walk's folder is not its run's


def test_an_entry_that_leaves_the_repository_or_a_broken_file_names_nothing(
    tmp_path: Path,
) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\npythonpath = .. /abs . lib/../src\n")
    write(tmp_path, "tests/setup.cfg", "[tool:pytest\npythonpath = lib\n")  # no section end
    write(tmp_path, "tests/pyproject.toml", "[tool.pytest\n")
    assert PythonPath(str(tmp_path)).folders("tests") == {"", "src"}


def test_a_module_on_the_pythonpath_of_a_walks_configuration_counts(tmp_path: Path) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\npythonpath = lib\n")
    write(tmp_path, "tests/test_a.py", "from marks import PATTERN\n")
    write(tmp_path, "lib/marks.py", f"PATTERN = '{REF}'\n")
    values = CollectValues(str(tmp_path))
    value = values.value(quotes_key(collect_key("tests", SETTINGS), REF))
    assert value == collect_digest(GlobFiles(("tests/test_a.py",)))
    assert values.read["pytest.ini"] is not None and "lib/marks.py" in values.read
