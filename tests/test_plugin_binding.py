"""The files that shape every test of a run bind to every test's evidence: the configuration
file pytest read, and the repository modules it loaded as plugins (``-p``, ``PYTEST_PLUGINS``,
``pytest_plugins``, every ``conftest.py`` it loaded). A change to one makes the evidence stale.

Each case is made on a real copy of the JWT-login sample in a real git repository, checked with
the real ``plangraph status``.
"""

from __future__ import annotations

import hashlib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from cli_helpers import plangraph_main
from conftest import git
from plugin_helpers import jwt_project, latest

from pytest_plangraph.plan.evidence import ABSENT
from pytest_plangraph.plan.paths import COLLECT

TOKEN = "step-token-endpoint"
INVALID = f"{TOKEN}/ac-invalid-401"
FAILING_TEST = f"""

@pytest.mark.criterion("{INVALID}")
def test_lockout_after_three_failures():
    assert login("alice", "wrong")[0] == 401
    assert login("alice", "alice123")[0] == 423, "the account is not locked yet"
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def reasons(root: Path, ref: str) -> list[tuple[str, str | None]]:
    """(code, path) of each reason ``plangraph status`` gives for the criterion *ref*."""
    node_id, _, criterion_id = ref.partition("/")
    status = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in status["nodes"] if n["id"] == node_id]
    [criterion] = [c for c in node["criteria"] if c["id"] == criterion_id]
    return [(r["code"], r.get("path")) for r in criterion["reasons"]]


def test_a_configuration_that_hides_a_failing_test_binds_the_evidence(
    pytester: pytest.Pytester,
) -> None:
    root = jwt_project(pytester)
    test_file = root / "tests/test_login.py"
    test_file.write_text(test_file.read_text() + FAILING_TEST)
    git(root, "commit", "-qam", "a test of the lockout, which is not written yet")
    assert pytester.runpytest("--plangraph").parseoutcomes()["failed"] == 1

    ini = root / "pytest.ini"
    ini.write_text("[pytest]\ntestpaths = tests\npython_functions = test_login_s* test_login_w*\n")
    pytester.runpytest("--plangraph").assert_outcomes(passed=3)
    record = latest(root)[INVALID]
    assert record.outcome == "passed"  # the run's own configuration defines its suite …
    assert record.subjects["pytest.ini"] == sha256(ini)  # … so that configuration binds
    assert reasons(root, INVALID) == []

    git(root, "checkout", "pytest.ini")
    assert reasons(root, INVALID) == [("ARTIFACT_CHANGED", "pytest.ini")]
    # every test's evidence depends on what the configuration collects
    assert reasons(root, f"{TOKEN}/ac-http-200") == [("ARTIFACT_CHANGED", "pytest.ini")]


CONFIGURATIONS = {
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "tox.ini": "[pytest]\ntestpaths = tests\n",
    "setup.cfg": "[tool:pytest]\ntestpaths = tests\n",
    ".pytest.ini": "[pytest]\ntestpaths = tests\n",
}


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_whichever_file_holds_the_settings_binds(pytester: pytest.Pytester, name: str) -> None:
    root = jwt_project(pytester)
    git(root, "rm", "-q", "pytest.ini")
    (root / name).write_text(CONFIGURATIONS[name])
    git(root, "add", name)
    git(root, "commit", "-qm", f"settings in {name}")
    result = pytester.runpytest("--plangraph")
    result.assert_outcomes(passed=3)
    assert f"configfile: {name}" in result.stdout.str()
    record = latest(root)[INVALID]
    assert record.subjects[name] == sha256(root / name)
    with (root / name).open("a") as settings:
        settings.write("# edited\n")
    assert reasons(root, INVALID) == [("ARTIFACT_CHANGED", name)]


@pytest.mark.skipif(
    int(pytest.__version__.split(".")[0]) < 9, reason="pytest.toml is read since pytest 9"
)
def test_a_pytest_toml_binds_and_naming_it_is_no_narrowing(pytester: pytest.Pytester) -> None:
    root = jwt_project(pytester)
    git(root, "rm", "-q", "pytest.ini")
    (root / "pytest.toml").write_text('[pytest]\ntestpaths = ["tests"]\n')
    git(root, "add", "pytest.toml")
    git(root, "commit", "-qm", "settings in pytest.toml")
    pytester.runpytest("--plangraph", "-c", "pytest.toml").assert_outcomes(passed=3)
    record = latest(root)[INVALID]
    assert (record.outcome, record.subjects["pytest.toml"]) == (
        "passed",
        sha256(root / "pytest.toml"),
    )


PLUGIN = "import pytest\n\n@pytest.fixture\ndef unused():\n    return 1\n"


@pytest.mark.parametrize(
    ("how", "path", "args", "env"),
    [
        ("-p", "authplugin.py", ["-p", "authplugin"], {}),
        ("PYTEST_PLUGINS", "authplugin.py", [], {"PYTEST_PLUGINS": "authplugin"}),
        ("a conftest loaded with -p", "tools/conftest.py", ["-p", "tools.conftest"], {}),
        ("a conftest beside the tests", "checks/conftest.py", [], {}),
    ],
)
def test_a_plugin_module_of_the_repository_binds_every_test(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
    path: str,
    args: list[str],
    env: dict[str, str],
) -> None:
    root = jwt_project(pytester)
    (root / path).parent.mkdir(exist_ok=True)
    (root / path).write_text(PLUGIN)
    if how == "a conftest beside the tests":
        # its collection hooks see the tests of tests/ too, though it is not above them
        (root / "checks/test_noop.py").write_text("def test_noop():\n    pass\n")
        (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests checks\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"a plugin module ({how})")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = pytester.runpytest_subprocess("--plangraph", *args)
    assert result.parseoutcomes()["passed"] >= 3
    record = latest(root)[INVALID]
    assert record.outcome == "passed"
    assert record.subjects[path] == sha256(root / path)
    (root / path).write_text(PLUGIN.replace("return 1", "return 2"))
    assert reasons(root, INVALID) == [("ARTIFACT_CHANGED", path)]


def test_a_plugin_from_outside_the_repository_does_not_bind(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = jwt_project(pytester)
    elsewhere = tmp_path_factory.mktemp("site")
    (elsewhere / "outsideplugin.py").write_text(PLUGIN)
    monkeypatch.setenv("PYTHONPATH", str(elsewhere))
    result = pytester.runpytest_subprocess("--plangraph", "-p", "outsideplugin")
    result.assert_outcomes(passed=3)
    subjects = latest(root)[INVALID].subjects
    # (what the run could collect under tests/ is no file: tests/test_plugin_new_folders.py)
    assert sorted(p for p, sha in subjects.items() if sha != ABSENT and COLLECT not in p) == [
        "conftest.py",
        "pytest.ini",
        "src/auth/login.py",
        "src/auth/user_schema.json",
        "tests/test_login.py",
    ]
    # the paths where a file would change the verdict, bound absent
    absent = sorted(p for p, sha in subjects.items() if sha == ABSENT)
    ext = EXTENSION_SUFFIXES
    assert absent == sorted(
        [
            ".pytest.toml",
            "__init__.py",
            "pytest.toml",
            "tests/__init__.py",
            "tests/conftest.py",
            # where a module would shadow one pytest imported: a package or an extension
            # module beside it, the same name in tests/, which pytest put first on sys.path
            *(f"{name}{suffix}" for name in ("conftest", "tests/conftest") for suffix in ext),
            *(f"tests/test_login{suffix}" for suffix in ext),
            "tests/conftest.pyc",  # the root's conftest, sourceless in tests/ (searched first)
            # a package of that name, its __init__ in any import suffix (a sourceless .pyc too)
            *(
                f"{name}/__init__{suffix}"
                for name in ("conftest", "tests/conftest", "tests/test_login")
                for suffix in (*ext, ".py", ".pyc")
            ),
            # what Python's start imports from the folder pytest was started in
            "sitecustomize.py",
            "usercustomize.py",
        ]
    )
