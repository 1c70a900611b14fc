"""``--plangraph-coverage`` sees import-time code: the learned subjects of each criterion hold
every repository file that a fresh process running only its tests executes (the ground truth,
measured with coverage.py in a subprocess), whoever imported a module first in the full run."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import coverage.tracer  # noqa: F401  (a C extension: kept in sys.modules across inline runs)
import pytest
from plugin_helpers import latest, make_project

from pytest_plangraph.plugin.imports import ImportGraph, _absolute, _packages_above

NODES = ("a", "b", "c", "d", "e", "f")
PLAN = "plangraph: 1\nplan: imports\nnodes:\n" + "".join(
    f"  - id: n-{n}\n    acceptance:\n      - id: ac\n"
    f'        verifier: {{type: test, tests: ["tests/test_{n}.py::test_{n}"]}}\n'
    for n in NODES
)

FILES = {
    "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src\n",
    "src/pkg/__init__.py": "from .registry import REGISTRY\n",
    "src/pkg/registry.py": """
        REGISTRY = {}

        def register(cls):
            REGISTRY[cls.__name__] = cls
            return cls
        """,
    "src/pkg/plugins.py": """
        from .registry import register
        from .labels import shout


        @register
        class Alpha:
            LABEL = shout("alpha")  # a class body: runs once, at import

            def run(self):
                return 1
        """,
    "src/pkg/labels.py": "def shout(text):\n    return text.upper()\n",
    "src/pkg/lazy.py": "VALUE = 42\n",
    "src/pkg/never.py": "NEVER = 0\n",
    "src/pkg/tools.py": """
        def get():
            from . import lazy  # first run by one test, answered from sys.modules after

            return lazy.VALUE


        def unused():
            from . import never

            return never.NEVER
        """,
    "src/boot.py": """
        from pkg import tools

        BOOTED = tools.get()  # a function importing lazily while boot is imported
        """,
    "src/dyn.py": """
        import importlib


        def load():
            return importlib.import_module("pkg.dynamic")
        """,
    "src/pkg/dynamic.py": "D = 5\n",
    "src/confhelp.py": "SETTING = 3\n",
    "src/other.py": "OTHER = 1\n",
    "src/pool.py": "def connect():\n    return 'connected'\n",
    "tests/conftest.py": """
        import confhelp
        import pytest


        def pytest_configure(config):
            assert confhelp.SETTING == 3


        @pytest.fixture(scope="session")
        def resource():  # set up in the first test that asks for it
            import pool

            return pool.connect()
        """,
    "tests/test_a.py": """
        import boot
        import pkg.plugins


        def test_a():
            assert pkg.plugins.Alpha().run() == 1 and boot.BOOTED == 42
        """,
    "tests/test_b.py": """
        def test_b(resource):
            import pkg.plugins  # collected by test_a first: answered from sys.modules
            from pkg import REGISTRY

            assert REGISTRY["Alpha"] is pkg.plugins.Alpha
        """,
    "tests/test_c.py": """
        def test_c(resource):
            from pkg.tools import get

            assert get() == 42 and resource == "connected"
        """,
    "tests/test_d.py": """
        def test_d():
            import dyn

            assert dyn.load().D == 5
        """,
    "tests/test_e.py": """
        import importlib


        def test_e():
            assert importlib.import_module("pkg.dynamic").D == 5
        """,
    "tests/test_f.py": """
        def test_f():
            from pkg import tools

            assert tools.get() == 42


        def test_other():  # in no criterion: what it imports binds nobody
            import other

            assert other.OTHER == 1
        """,
}


def ground_truth(root: Path, test_id: str, tmp: Path) -> set[str]:
    """The repository files a fresh process running only *test_id* executes."""
    from coverage import CoverageData

    data_file = tmp / f"{test_id.rpartition(':')[2]}.coverage"
    subprocess.run(
        [
            *(sys.executable, "-m", "coverage", "run", f"--data-file={data_file}"),
            *(f"--source={root}", "-m", "pytest", "-p", "no:plangraph", "-q", test_id),
        ],
        cwd=root,
        check=True,
        capture_output=True,
    )
    data = CoverageData(str(data_file))
    data.read()
    return {
        Path(f).resolve().relative_to(root.resolve()).as_posix()
        for f in data.measured_files()
        if data.lines(f)
    }


def test_every_file_a_fresh_process_runs_is_a_learned_subject(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = make_project(pytester, plan=PLAN, tests="", files=FILES)
    result = pytester.runpytest_subprocess("--plangraph", "--plangraph-coverage")
    result.assert_outcomes(passed=7)
    records = latest(root)
    tmp = tmp_path_factory.mktemp("truth")
    escapes = {}
    for node in NODES:
        truth = ground_truth(root, f"tests/test_{node}.py::test_{node}", tmp)
        learned = set(records[f"n-{node}/ac"].subjects)
        if truth - learned:
            escapes[node] = sorted(truth - learned)
        assert f"tests/test_{node}.py" in truth  # the measurement saw something
    assert escapes == {}
    # and the closure is not everything: what no test of a node imports stays out
    assert "src/pkg/never.py" not in records["n-c/ac"].subjects
    assert "src/other.py" not in records["n-f/ac"].subjects
    assert "src/pkg/plugins.py" not in records["n-c/ac"].subjects


@pytest.mark.parametrize(
    ("name", "globals_", "level", "expected"),
    [
        ("pkg.sub", None, 0, "pkg.sub"),
        ("sub", {"__package__": "pkg.inner"}, 1, "pkg.inner.sub"),
        ("", {"__package__": "pkg.inner"}, 2, "pkg"),
        ("x", {"__name__": "pkg.mod"}, 1, "pkg.x"),  # no __package__: from the module name
        ("x", {"__name__": "pkg", "__path__": []}, 1, "pkg.x"),  # a package's own __init__
        ("x", {"__package__": "top"}, 3, None),  # beyond the top-level package
        ("x", None, 1, None),
    ],
)
def test_relative_imports_resolve_to_absolute_names(
    name: str, globals_: dict[str, object] | None, level: int, expected: str | None
) -> None:
    assert _absolute(name, globals_, level) == expected


def test_a_module_closes_over_its_imports_and_its_packages(tmp_path: Path) -> None:
    for path in ("src/pkg/__init__.py", "src/pkg/sub/__init__.py", "src/pkg/sub/m.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    assert _packages_above("src/pkg/sub/m.py", tmp_path) == [
        "src/pkg/sub/__init__.py",
        "src/pkg/__init__.py",
    ]
    assert _packages_above("src/pkg/sub/__init__.py", tmp_path) == ["src/pkg/__init__.py"]
    graph = ImportGraph(lambda filename: filename)
    graph.edges = {"t.py": {"a.py"}, "a.py": {"b.py"}, "b.py": {"a.py"}}  # a cycle too
    graph.lazy = {"a.py": {7: {"lazy.py"}}}
    assert graph.closure(["t.py"], tmp_path) == ["a.py", "b.py", "t.py"]
    assert graph.closure(["t.py"], tmp_path, {"a.py": {7}}) == ["a.py", "b.py", "lazy.py", "t.py"]
    assert graph.closure(["src/pkg/sub/m.py"], tmp_path) == [
        "src/pkg/__init__.py",
        "src/pkg/sub/__init__.py",
        "src/pkg/sub/m.py",
    ]


def test_the_observers_are_removed_after_the_run(pytester: pytest.Pytester) -> None:
    import builtins
    import importlib

    before = (builtins.__import__, importlib.import_module, list(sys.meta_path))
    make_project(pytester, plan=PLAN, tests="", files=FILES)
    pytester.runpytest("--plangraph", "--plangraph-coverage", "-k", "test_c").assert_outcomes(
        passed=1
    )
    assert (builtins.__import__, importlib.import_module, list(sys.meta_path)) == before


def test_observing_never_changes_what_an_import_does(tmp_path: Path) -> None:
    def broken(filename: str) -> str | None:
        raise RuntimeError("the bookkeeping failed")

    graph = ImportGraph(broken)
    graph.install()
    try:
        graph.testing = True
        import json

        assert __import__("json") is json
        assert importlib.import_module("json") is json
        with pytest.raises(ModuleNotFoundError, match="no_such_module_here"):
            import no_such_module_here  # noqa: F401
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("no_such_module_here")
        assert __import__("os", {"__package__": 12}, None, [None], 0).sep  # odd arguments
    finally:
        graph.remove()
    assert graph.edges == {} and graph.lazy == {}


def test_imports_by_the_environment_are_not_looked_at(tmp_path: Path) -> None:
    """An import statement whose importer is outside the repository (pytest, the plug-ins,
    the libraries) costs one lookup: only the repository's own statements are looked at."""
    ours, theirs = str(tmp_path / "src" / "mod.py"), str(tmp_path.parent / "lib" / "lib.py")
    import json

    placed = {ours: "src/mod.py", json.__file__: "src/json.py"}  # json stands in for ours
    graph = ImportGraph(placed.get)
    outside = compile("import json\nfor _ in range(50):\n    import json\n", theirs, "exec")
    inside = compile("import json\nimport pytest\n", ours, "exec")
    graph.install()
    try:
        exec(outside, {"__name__": "lib"})
        assert graph.looked == 1  # its first statement places the file, once
        exec(outside, {"__name__": "lib"})
        exec(inside, {"__name__": "mod"})
    finally:
        graph.remove()
    assert graph.looked == 3  # the repository's two statements, each looked at
    assert graph.edges == {"src/mod.py": {"src/json.py"}}  # pytest is not the repository's
