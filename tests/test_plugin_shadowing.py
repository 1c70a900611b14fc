"""Files that change what pytest reads or Python imports though no path of theirs was bound
absent: a configuration file pytest passed over for want of a pytest section, given one later;
a module that shadows one the run imported (a package folder or an extension module beside it,
the same name earlier on ``sys.path``). The evidence binds them; the real ``plangraph status``
and ``plangraph claim`` say the node is stale once they change, and a new run fails.

Each case runs real pytest sessions (``pytester``) in a real git repository.
"""

from __future__ import annotations

import hashlib
import importlib
import py_compile
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import coverage  # noqa: F401  (imported before any in-process run, which drops what it imports)
import pytest
from cli_helpers import plangraph, plangraph_main
from conftest import git
from plugin_helpers import latest, make_project

from pytest_plangraph.plan.evidence import ABSENT

IMPORTING = """
import pytest
from a import A

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    assert A == 1

def test_pattern_one():
    assert True
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def reasons(root: Path, ref: str) -> list[dict[str, object]]:
    """The reasons the real ``plangraph status`` gives for the criterion *ref*."""
    node_id, _, criterion_id = ref.partition("/")
    status = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in status["nodes"] if n["id"] == node_id]
    [criterion] = [c for c in node["criteria"] if c["id"] == criterion_id]
    return list(criterion["reasons"])


def node_status(root: Path, node_id: str = "step-a") -> str:
    status = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in status["nodes"] if n["id"] == node_id]
    return str(node["status"])


def assert_stale_by(root: Path, path: str, old: str) -> None:
    """``step-a/ac-marked`` is stale because of *path* alone, and ``claim`` refuses step-a."""
    found = [(r["code"], r["path"], r["old"]) for r in reasons(root, "step-a/ac-marked")]
    assert found == [("ARTIFACT_CHANGED", path, old)]
    assert node_status(root) == "stale"
    refused = plangraph(root, "claim", "step-a", "--by", "agent-7", "--format", "json")
    assert refused.code == 1, refused.err
    assert "ARTIFACT_CHANGED" in refused.out and path in refused.out


def without_pytest_ini(pytester: pytest.Pytester, files: dict[str, str]) -> Path:
    root = make_project(pytester, files=files)
    git(root, "rm", "-q", "pytest.ini")
    git(root, "commit", "-qm", "the configuration in other files")
    return root


def test_a_pyproject_given_a_pytest_table_later_stales_the_evidence(
    pytester: pytest.Pytester,
) -> None:
    """pytest prefers ``pyproject.toml`` over ``tox.ini`` in one folder, when it holds a
    pytest table: the table of one it passed over binds absent (``pyproject.toml#pytest``),
    not its bytes (a version bump changes nothing pytest reads)."""
    project = '[project]\nname = "demo"\ndependencies = ["pytest>=8"]\n'
    root = without_pytest_ini(
        pytester,
        {
            "tox.ini": "[pytest]\ntestpaths = tests\n",
            "pyproject.toml": project,
            "setup.cfg": "[metadata]\nname = demo\n",
        },
    )
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert node_status(root) == "completed"
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["tox.ini"] == sha256(root / "tox.ini")
    assert subjects["pyproject.toml#pytest"] == ABSENT
    assert "pyproject.toml" not in subjects
    assert subjects["pytest.ini"] == ABSENT
    assert "setup.cfg" not in subjects and "setup.cfg#pytest" not in subjects  # after tox.ini

    (root / "pyproject.toml").write_text(project + 'version = "2.0"\n\n[tool.ruff]\nfix = true\n')
    assert reasons(root, "step-a/ac-marked") == []
    table = '\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\npython_functions = "nothing_*"\n'
    (root / "pyproject.toml").write_text(project + table)
    assert_stale_by(root, "pyproject.toml#pytest", ABSENT)

    # and pytest reads it now: no test of the criterion is collected, no pass recorded
    pytester.runpytest("--plangraph")
    assert latest(root)["step-a/ac-marked"].outcome != "passed"
    assert node_status(root) != "completed"


def test_a_pyproject_naming_pytest_outside_a_table_binds_by_its_hash(
    pytester: pytest.Pytester,
) -> None:
    """Where the text test sees a pytest key that pytest did not take for its table, the
    file binds by its sha256: any change of it stales the evidence."""
    poetry = '[tool.poetry.dependencies]\npytest = "^8"\n'
    root = without_pytest_ini(
        pytester, {"tox.ini": "[pytest]\ntestpaths = tests\n", "pyproject.toml": poetry}
    )
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["pyproject.toml"] == sha256(root / "pyproject.toml")
    assert "pyproject.toml#pytest" not in subjects
    (root / "pyproject.toml").write_text(poetry + '\n[tool.pytest.ini_options]\naddopts = "-x"\n')
    assert_stale_by(root, "pyproject.toml", subjects["pyproject.toml"])


def test_a_setup_cfg_in_a_folder_searched_first_binds_its_section_absent(
    pytester: pytest.Pytester,
) -> None:
    """Without any pytest section, pytest searched every folder up to the file system's root
    and read no file: the section of each one it passed over binds absent, not that of a file
    in a folder it did not search."""
    root = without_pytest_ini(
        pytester, {"setup.cfg": "[metadata]\nname = demo\n", "tests/tox.ini": "[tox]\n"}
    )
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["setup.cfg#pytest"] == ABSENT
    assert "tests/tox.ini#pytest" not in subjects  # a run from the root does not look there
    (root / "setup.cfg").write_text("[metadata]\nname = demo\nversion = 2\n")
    assert reasons(root, "step-a/ac-marked") == []
    (root / "setup.cfg").write_text("[tool:pytest]\npython_functions = nothing_*\n")
    assert_stale_by(root, "setup.cfg#pytest", ABSENT)
    pytester.runpytest("--plangraph").assert_outcomes(passed=1)  # step-b's artifact check
    assert node_status(root) != "completed"


def test_with_c_no_configuration_file_is_searched(pytester: pytest.Pytester) -> None:
    root = without_pytest_ini(
        pytester,
        {"tox.ini": "[pytest]\ntestpaths = tests\n", "pyproject.toml": '[project]\nname = "d"\n'},
    )
    pytester.runpytest("--plangraph", "-c", "tox.ini").assert_outcomes(passed=4)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["tox.ini"] == sha256(root / "tox.ini")
    assert "pytest.ini" not in subjects
    assert "pyproject.toml" not in subjects and "pyproject.toml#pytest" not in subjects


def importing_project(pytester: pytest.Pytester) -> Path:
    """Tests that import ``a`` from ``src`` (``pythonpath = src``), their evidence recorded
    with ``--plangraph-coverage``: ``src/a.py`` is bound."""
    root = make_project(
        pytester,
        tests=IMPORTING,
        files={"pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src\n"},
    )
    pytester.runpytest("--plangraph", "--plangraph-coverage").assert_outcomes(passed=3)
    assert node_status(root) == "completed"
    return root


SHADOWS = [
    "src/a/__init__.py",  # a package folder beside src/a.py
    f"src/a{EXTENSION_SUFFIXES[0]}",  # an extension module beside it
    "tests/a.py",  # pytest put tests/ on sys.path before src/ to import test_a
]


@pytest.mark.parametrize("shadow", SHADOWS)
def test_a_module_that_shadows_an_imported_one_stales_the_evidence(
    pytester: pytest.Pytester, shadow: str
) -> None:
    root = importing_project(pytester)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["src/a.py"] == sha256(root / "src/a.py")
    assert all(subjects[p] == ABSENT for p in SHADOWS)
    assert f"src/a{EXTENSION_SUFFIXES[-1]}" in subjects
    assert "a.py" not in subjects  # the root comes after src/ on sys.path

    if shadow.endswith(".py"):
        (root / shadow).parent.mkdir(exist_ok=True)
        (root / shadow).write_text("A = 2\n")
    else:  # a file by that name: Python fails to load it, and the test fails too
        (root / shadow).write_bytes(b"\x7fELF not really\n")
    assert_stale_by(root, shadow, ABSENT)
    importlib.invalidate_caches()  # as a new process finds the folders: no listing kept
    # the tests fail now (the extension module fails to load: a collection error)
    assert pytester.runpytest("--plangraph", "--plangraph-coverage").ret != 0
    assert node_status(root) != "completed"


SOURCELESS_SHADOWS = [
    "src/a/__init__.pyc",  # a sourceless package beside src/a.py
    f"src/a/__init__{EXTENSION_SUFFIXES[0]}",  # a package whose __init__ is an extension
    "tests/a.pyc",  # a sourceless module in tests/, searched before src/
    "tests/a/__init__.pyc",  # a sourceless package there
]


@pytest.mark.parametrize("shadow", SOURCELESS_SHADOWS)
def test_a_package_init_of_any_suffix_or_a_sourceless_module_stales_the_evidence(
    pytester: pytest.Pytester, shadow: str
) -> None:
    """Python's finder takes a package's ``__init__`` in any import suffix (extension, source,
    bytecode) and a sourceless ``.pyc`` where no source is: each shadows ``src/a.py``."""
    root = importing_project(pytester)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert all(subjects[p] == ABSENT for p in SOURCELESS_SHADOWS)
    (root / shadow).parent.mkdir(parents=True, exist_ok=True)
    if shadow.endswith(".pyc"):  # bytecode of a module that says A = 2
        source = root / "shadow_source.py"
        source.write_text("A = 2\n")
        py_compile.compile(str(source), cfile=str(root / shadow), doraise=True)
        source.unlink()
    else:  # a file by that name: Python fails to load it
        (root / shadow).write_bytes(b"\x7fELF not really\n")
    assert_stale_by(root, shadow, ABSENT)
    importlib.invalidate_caches()
    # Python does load it: the test of A == 1 fails, or the import does
    assert pytester.runpytest("--plangraph", "--plangraph-coverage").ret != 0
    assert node_status(root) != "completed"


def test_a_package_folder_beside_a_test_module_stales_the_evidence(
    pytester: pytest.Pytester,
) -> None:
    """Without coverage too: pytest imports the test module by name, and a package of that
    name beside it is what it finds (a collection error)."""
    root = make_project(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert latest(root)["step-a/ac-marked"].subjects["tests/test_a/__init__.py"] == ABSENT
    (root / "tests/test_a").mkdir()
    (root / "tests/test_a/__init__.py").write_text("")
    assert_stale_by(root, "tests/test_a/__init__.py", ABSENT)
    pytester.runpytest("--plangraph")
    assert node_status(root) != "completed"


def test_under_xdist_the_shadowing_paths_bind_the_same(pytester: pytest.Pytester) -> None:
    root = make_project(
        pytester,
        tests=IMPORTING,
        files={"pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src\n"},
    )
    pytester.runpytest("--plangraph", "--plangraph-coverage", "-n", "2").assert_outcomes(passed=3)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert [subjects.get(p) for p in SHADOWS] == [ABSENT] * len(SHADOWS)


def test_a_sitecustomize_in_a_pythonpath_folder_stales_the_evidence(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's start imports ``sitecustomize`` from the first ``sys.path`` folder that has
    it: one put in a ``PYTHONPATH`` folder of the repository runs before every test."""
    root = make_project(pytester, tests=IMPORTING)
    monkeypatch.setenv("PYTHONPATH", str(root / "src"))
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    subjects = latest(root)["step-a/ac-marked"].subjects
    assert subjects["src/sitecustomize.py"] == subjects["src/usercustomize.py"] == ABSENT
    assert "tests/sitecustomize.py" not in subjects  # tests/ is on no PYTHONPATH

    (root / "src/sitecustomize.py").write_text("import a\na.A = 2\n")
    assert_stale_by(root, "src/sitecustomize.py", ABSENT)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=2, failed=1)
    assert node_status(root) != "completed"
