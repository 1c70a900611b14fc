"""Per-test work in O(1) at collection: the source path of each test is resolved against the
repository once per path, not once per test. A real ``pytest --plangraph`` session (pytester)
counts the resolutions made while its tests are mapped: no more than its test files, and the
same for one test per file as for two hundred; and the folders looked at for the files bound
absent (``conftest.py``, ``__init__.py``): once per folder."""

from __future__ import annotations

import pytest
from plugin_helpers import make_project

from pytest_plangraph.plugin import SESSION_KEY

PLAN = """
plangraph: 1
plan: cost
nodes:
  - id: step
    outputs: [src/a.py]
    acceptance:
      - id: ac-a
        verifier: {type: test, tests: ["tests/test_a.py"]}
      - id: ac-b
        verifier: {type: test, tests: ["tests/test_b.py"]}
      - id: ac-c
        verifier: {type: test, tests: ["tests/test_c.py"]}
"""

BASE = """
class Base:
    def test_inherited(self):
        assert True
"""


def _tests(count: int) -> str:
    return "".join(f"def test_{i}():\n    assert True\n\n" for i in range(count))


class Probe:
    """Reads the session's resolution count when the run files are known (before any test is
    mapped) and after the tests are mapped."""

    def __init__(self) -> None:
        self.before = self.after = self.folders = -1
        self.bound = 0

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config) -> None:
        binder = config.stash[SESSION_KEY].binder
        binder.run_files()  # the configuration file and the plug-ins: once per run
        self.before = binder.resolutions

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        plangraph = session.config.stash[SESSION_KEY]
        self.after = plangraph.binder.resolutions
        self.folders = plangraph.binder.folders
        mapping = plangraph.mapping
        assert mapping is not None
        self.bound = len(mapping.file_subjects)


def _resolutions(pytester: pytest.Pytester, per_file: int) -> tuple[int, Probe]:
    make_project(
        pytester,
        plan=PLAN,
        tests=_tests(per_file),
        files={
            "tests/test_b.py": _tests(per_file),
            "tests/helpers/base.py": BASE,
            "tests/test_c.py": "import sys, os\n"
            "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'helpers'))\n"
            "from base import Base\n\n"
            "class TestC(Base):\n    pass\n\n" + _tests(per_file),
        },
    )
    probe = Probe()
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider", plugins=[probe])
    passed, _, failed = result.listoutcomes()
    assert not failed
    assert len(passed) == 3 * per_file + 1
    return probe.after - probe.before, probe


def test_each_source_path_is_resolved_once_per_session(pytester: pytest.Pytester) -> None:
    many, probe = _resolutions(pytester, 200)
    assert probe.bound == 3  # the three test files were bound
    # test_a, test_b, test_c and the helper module test_inherited is defined in: at most one
    # resolution each, though 601 tests were mapped
    assert 1 <= many <= 4


def test_the_count_does_not_grow_with_the_tests(pytester: pytest.Pytester) -> None:
    few, one = _resolutions(pytester, 1)
    many, fifty = _resolutions(pytester, 50)  # the same project, with more tests in each file
    assert few == many
    # the folders looked at for a conftest.py or __init__.py, bound or bound absent: the
    # root and tests/, once each, however many tests they hold
    assert one.folders == fifty.folders == 2
