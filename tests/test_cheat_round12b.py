"""Attacks on the twelfth round's session end, by an agent that wants a node completed while a
test of its criterion fails.

A report whose reason holds text that is not valid Unicode (a lone surrogate, ``"\\ud800"``,
in a failure message, a skip or an xfail reason) reached the record's canonical text, which
could not be encoded as UTF-8: the session end raised, nothing was recorded, and the pass
recorded before stood. Broken code under test that is not bound (the code a node's outputs
import, without ``--plangraph-coverage``) could so keep its criterion completed by failing with
such a message; run with xdist, the worker could not send such a report to the controller
and stopped with an internal error, the failure never heard. An artifact declared under such
a name (named by the code under test) stopped the session end with a traceback instead of
the message for a name that is not UTF-8; a schema violation at a member so named, or a test
id so named by a conftest's collector, stopped it with a traceback. Each attack runs through
a real ``pytest --plangraph`` process on a real git repository and is judged by the real
``plangraph claim``.
"""

from __future__ import annotations

import pytest
from cli_helpers import plangraph
from plugin_helpers import latest, make_project

pytest_plugins = ["pytester"]

PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step
    outputs: [src/calc.py]
    acceptance:
      - id: ac-add
        verifier: {type: test, tests: ["tests/test_calc.py"], skips: allow, xfail: allow}
"""

TESTS = """
from calc import add


def test_add():
    assert add(2, 2) == 4
"""

CALC = "from helper import plus\n\n\ndef add(a, b):\n    return plus(a, b)\n"
HELPER = "def plus(a, b):\n    return a + b\n"

BROKEN = {
    "message": "def plus(a, b):\n    raise ValueError('broken \\ud800')\n",
    "skip": "import pytest\n\n\ndef plus(a, b):\n    pytest.skip('skipped \\ud800')\n",
    "xfail": "import pytest\n\n\ndef plus(a, b):\n    pytest.xfail('xfailed \\ud800')\n",
}
"""``helper.py`` of each attack: code under test, imported by the node's output and bound by
no record, that fails, skips or xfails with a reason holding a lone surrogate."""


WAYS = {
    "message": ("message", ()),
    "skip": ("skip", ()),
    "xfail": ("xfail", ()),
    "message-xdist": ("message", ("-n", "2")),
    "skip-xdist": ("skip", ("-n", "2")),
}
"""Each attack: the broken ``helper.py`` and the options of the runs (two xdist workers: the
report's text sent from a worker to the controller)."""


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_reason_that_is_no_valid_unicode_is_recorded(pytester: pytest.Pytester, way: str) -> None:
    """The failure is recorded (the reason shown with the surrogate escaped; a skip or xfail
    the code under test raised is a failure), no traceback or internal error is printed, and
    the node is no longer completed."""
    how, options = WAYS[way]
    files = {
        "src/calc.py": CALC,
        "lib/helper.py": HELPER,
        "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src lib\n",
    }
    root = make_project(pytester, plan=PLAN, tests=TESTS, files=files)
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    first = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", *options)
    assert latest(root)["step/ac-add"].outcome == "passed", first.stdout.str()
    assert plangraph(root, "claim", "step", "--by", "agent").code == 0
    (root / "lib/helper.py").write_text(BROKEN[how], encoding="utf-8")
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", *options)
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output, output
    assert "INTERNALERROR" not in output, output
    record = latest(root)["step/ac-add"]
    assert record.outcome != "passed", record.details
    (entry,) = record.details["not_passed"]
    assert "\\ud800" in entry["reason"], entry
    claim = plangraph(root, "claim", "step", "--by", "agent")
    assert claim.code == 1, claim


ARTIFACT_PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step
    outputs: [src/calc.py]
    acceptance:
      - id: ac-add
        verifier: {type: test, tests: ["tests/test_calc.py"]}
"""

ARTIFACT_TESTS = """
from calc import report


def test_report(plangraph):
    path = report()
    plangraph.artifact(path)
    assert path.endswith(".txt")
"""

REPORT = "def report():\n    return 'out/report.txt'\n"
BROKEN_REPORT = "def report():\n    return 'out/report\\ud800'\n"
"""Code under test naming the artifact its test declares: broken, a name holding a lone
surrogate (no file can be made at it)."""


def test_an_artifact_named_with_no_valid_unicode_is_refused_cleanly(
    pytester: pytest.Pytester,
) -> None:
    """An artifact path that is no valid Unicode stops the record with one clear message (no
    traceback) and the failing test's node is not completed."""
    files = {
        "src/calc.py": REPORT,
        "out/report.txt": "ok\n",
        "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src\n",
    }
    root = make_project(pytester, plan=ARTIFACT_PLAN, tests=ARTIFACT_TESTS, files=files)
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    assert latest(root)["step/ac-add"].outcome == "passed"
    (root / "src/calc.py").write_text(BROKEN_REPORT, encoding="utf-8")
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output, output
    assert "binds a file whose name is not UTF-8: 'out/report\\\\ud800'" in output, output
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    claim = plangraph(root, "claim", "step", "--by", "agent")
    assert claim.code == 1, claim


def test_an_artifact_named_with_no_valid_unicode_is_sent_by_an_xdist_worker(
    pytester: pytest.Pytester,
) -> None:
    """Under xdist, a passing test that declares such an artifact is heard by the controller
    (the name escaped, naming no file: a declared artifact never made), not an internal error
    of the worker that leaves the criterion unverified and the earlier pass standing."""
    files = {
        "src/calc.py": REPORT,
        "out/report.txt": "ok\n",
        "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src\n",
    }
    tests = ARTIFACT_TESTS.replace('    assert path.endswith(".txt")\n', "")
    root = make_project(pytester, plan=ARTIFACT_PLAN, tests=tests, files=files)
    (root / "tests/test_a.py").rename(root / "tests/test_calc.py")
    pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", "-n", "2")
    assert latest(root)["step/ac-add"].outcome == "passed"
    (root / "src/calc.py").write_text(BROKEN_REPORT, encoding="utf-8")
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", "-n", "2")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output, output
    record = latest(root)["step/ac-add"]
    assert (record.outcome, record.reason) == ("failed", "ARTIFACT_MISSING"), record.details
    assert record.details["missing_artifacts"] == ["out/report\\ud800"]
    assert plangraph(root, "claim", "step", "--by", "agent").code == 1


SCHEMA_PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step
    outputs: [out/user.json]
    acceptance:
      - id: ac-schema
        verifier: {type: schema, schema: schema.json, artifact: out/user.json}
"""


def test_a_schema_error_at_a_key_that_is_no_valid_unicode_is_recorded(
    pytester: pytest.Pytester,
) -> None:
    """An artifact whose failing member is named by a lone surrogate (``"\\ud800"`` in its
    JSON) fails its schema check, in ``plangraph verify`` and in ``pytest --plangraph``, the
    path shown escaped: not a traceback with nothing recorded."""
    files = {
        "schema.json": '{"type": "object", "additionalProperties": {"type": "integer"}}\n',
        "out/user.json": '{"name": 1}\n',
        "pytest.ini": "[pytest]\n",  # the plan's verifier items collected too
    }
    root = make_project(pytester, plan=SCHEMA_PLAN, tests="def test_x():\n    pass\n", files=files)
    assert plangraph(root, "verify", "step", "--by", "ci").code == 0
    (root / "out/user.json").write_text('{"\\ud800": "x"}\n', encoding="utf-8")
    verified = plangraph(root, "verify", "step", "--by", "ci")
    assert verified.code == 1, verified
    assert "Traceback" not in verified.err, verified
    record = latest(root)["step/ac-schema"]
    assert (record.outcome, record.reason) == ("failed", "SCHEMA_VIOLATION")
    assert record.details["errors"][0]["path"] == '$["\\ud800"]', record.details
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output, output
    assert latest(root)["step/ac-schema"].id != record.id  # recorded again, by this run
    assert plangraph(root, "claim", "step", "--by", "agent").code == 1


COLLECTOR = """
import pytest


class Case(pytest.Item):
    def runtest(self):
        assert False, "broken"


class Cases(pytest.Module):
    def collect(self):
        yield Case.from_parent(self, name="case_\\ud800")


def pytest_pycollect_makemodule(module_path, parent):
    if module_path.name == "test_cases.py":
        return Cases.from_parent(parent, path=module_path)
"""
"""A conftest collecting a test whose name holds a lone surrogate (a name read from data)."""

CASES_PLAN = """
plangraph: 1
plan: demo
nodes:
  - id: step
    outputs: [src/a.py]
    acceptance:
      - id: ac-cases
        verifier: {type: test, tests: ["tests/test_cases.py"]}
"""


def test_a_test_id_that_is_no_valid_unicode_is_recorded(pytester: pytest.Pytester) -> None:
    """A test whose id holds a lone surrogate does not pass, and its record names it escaped:
    not a traceback with nothing recorded."""
    files = {"tests/conftest.py": COLLECTOR, "tests/test_cases.py": ""}
    root = make_project(pytester, plan=CASES_PLAN, tests="def test_x():\n    pass\n", files=files)
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output, output
    record = latest(root)["step/ac-cases"]
    assert record.outcome != "passed"
    assert list(record.details["tests"]) == ["tests/test_cases.py::case_\\ud800"]
    assert plangraph(root, "audit").code == 0
    assert plangraph(root, "claim", "step", "--by", "agent").code == 1
