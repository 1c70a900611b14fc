"""Small projects for end-to-end tests of ``pytest --plangraph`` with the ``pytester`` fixture."""

from __future__ import annotations

import os
import py_compile
import re
import shutil
from importlib.util import cache_from_source
from pathlib import Path

import pytest
from conftest import FIXTURES, git
from repo_helpers import commit_files

# Imported here, before any in-process pytester run: pytester drops the modules a run imported
# when it ends, and libyaml's C loader keeps the classes of the first `yaml` import, so a plan
# loaded in a later run would meet a second `yaml` package and be read without libyaml.
import pytest_plangraph.api  # noqa: F401
from pytest_plangraph.plan.evidence import Evidence
from pytest_plangraph.store.sqlite import Store

PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step-a
    outputs: [src/a.py]
    acceptance:
      - id: ac-marked
        verifier: {type: test}
      - id: ac-pattern
        verifier: {type: test, tests: ["tests/test_a.py::test_pattern*"]}
  - id: step-b
    outputs: [out/b.txt]
    acceptance:
      - id: ac-exists
        verifier: {type: artifact, path: out/b.txt}
edges:
  - {from: step-a, to: step-b, type: requires}
"""

TESTS = """
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    assert True

def test_pattern_one():
    assert True

def test_unmapped():
    assert True
"""


def make_project(
    pytester: pytest.Pytester,
    plan: str = PLAN,
    tests: str = TESTS,
    files: dict[str, str] | None = None,
) -> Path:
    """Write a plan, ``tests/test_a.py`` and *files* into ``pytester.path`` and commit them."""
    root = pytester.path
    contents = {
        "plangraph.yaml": plan,
        "tests/test_a.py": tests,
        "src/a.py": "A = 1\n",
        "out/b.txt": "b\n",
        "pytest.ini": "[pytest]\ntestpaths = tests\n",
        ".gitignore": ".plangraph/\n__pycache__/\n",
        **(files or {}),
    }
    commit_files(root, contents)
    return root


def settle(root: Path) -> None:
    """Every directory of the project at *root* made older than the racy window (as a
    repository's folders are, unless written just now): a watch trusts their times."""
    old = (os.stat(root).st_mtime_ns - 10**10,) * 2
    for folder, names, _ in os.walk(root):
        if ".git" in names:
            names.remove(".git")
        if not os.path.islink(folder):
            os.utime(folder, ns=old)


def evidence(root: Path, store: str = ".plangraph/store.db") -> list[Evidence]:
    """Every evidence record in the project's store, in order."""
    with Store.open(root / store) as opened:
        return [e.evidence for e in opened.events() if e.evidence is not None]


def latest(root: Path, store: str = ".plangraph/store.db") -> dict[str, Evidence]:
    """The latest evidence record per ``node/criterion``."""
    return {record.ref: record for record in evidence(root, store)}


def section(output: str) -> list[str]:
    """The lines of the ``plangraph`` summary section (up to the final pytest line)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if " plangraph " in line and "===" in line)
    end = next((i for i in range(start + 1, len(lines)) if _FINAL_LINE.match(lines[i])), len(lines))
    return lines[start + 1 : end]


MARKED_FAILING = """
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_new_and_broken():
    assert False, "the code is broken now"
"""
"""A failing test of ``step-a/ac-marked`` that only its marker maps: planted where a run's walk
must see it."""

_FINAL_LINE = re.compile(r"^(=+ .*|\d+ \w+.* in [\d.]+s.*)$")


LOGIN = "src/auth/login.py"
CHECK = "if _users().get(username) != digest:"
BROKEN = "if False:"


def jwt_project(pytester: pytest.Pytester) -> Path:
    """A copy of the JWT-login sample in a fresh git repository at ``pytester.path``."""
    root = pytester.path
    shutil.copytree(FIXTURES / "jwt-login", root, dirs_exist_ok=True)
    (root / ".gitignore").write_text(".plangraph/\n__pycache__/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def break_login(root: Path, *, unnoticed: bool = False) -> None:
    """Make the login accept any password. *unnoticed*: first cache the good module's
    bytecode, then keep the file's size (padding the line) and set its old mtime back, so the
    import system takes the cached bytecode of the good code for the broken file's."""
    path = root / LOGIN
    before = path.stat()
    if unnoticed:
        py_compile.compile(
            str(path),
            cfile=cache_from_source(str(path)),
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
        )
    text = path.read_text(encoding="utf-8")
    broken = BROKEN.ljust(len(CHECK)) if unnoticed else BROKEN
    path.write_text(text.replace(CHECK, broken), encoding="utf-8")
    if unnoticed:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_size == before.st_size
