"""The records of a run built with the subjects their test files bind hashed, merged and
compared once per set of modules (and a node's own files once per node) are, byte for byte,
the records built with every subject merged and compared record by record: in a real
``pytest --plangraph`` session (pytester) whose tests change a node's output and a conftest
while they run, so that some records are voided and some are not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin_helpers import latest, make_project

from pytest_plangraph.judge.records import CHANGED_DURING_RUN
from pytest_plangraph.plugin import SESSION_KEY
from pytest_plangraph.plugin.evidence import decide
from pytest_plangraph.plugin.mapping import policies_by_criterion

PLAN = """\
plangraph: 1
plan: groups
nodes:
  - id: step
    outputs: [src/a.py]
    acceptance:
      - {id: ac-0, verifier: {type: test}}
      - {id: ac-1, verifier: {type: test}}
  - id: other
    outputs: [src/b.py]
    acceptance:
      - {id: ac-0, verifier: {type: test}}
      - {id: ac-1, verifier: {type: test}}
"""

F0 = """\
import pathlib
import pytest

@pytest.mark.criterion("step/ac-0")
def test_step_0():
    assert True

@pytest.mark.criterion("other/ac-0")
def test_other_0():
    pathlib.Path("src/b.py").write_text("B = 2\\n")  # the node's output, while the run goes on
"""

F1 = """\
import pathlib
import pytest

@pytest.mark.criterion("step/ac-1")
def test_step_1():
    module = pathlib.Path("tests/sub/test_f1.py")  # this module, a subject of its records
    module.write_text(module.read_text() + "# changed\\n")

@pytest.mark.criterion("other/ac-1")
def test_other_1():
    assert True
"""


class Rebuild:
    """At the session's end, decides the run's verdicts again and builds each record both
    ways with the run's own record builder."""

    def __init__(self) -> None:
        self.pairs: list[tuple[Any, Any, str, str]] = []

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        run = session.config.stash[SESSION_KEY]
        builder = run.builder
        plan = run.plangraph.plan
        decided, _ = decide(run.mapping, run.results, (), {}, {}, None, policies_by_criterion(plan))
        made = builder.maker.made
        for item in decided:
            assert item.shared is not None
            fast, plain = builder.build(item), builder.build_plain(item)
            self.pairs.append((fast, plain, made[id(fast)][2], made[id(plain)][2]))


def test_records_bound_once_per_set_of_modules_are_those_bound_one_by_one(
    pytester: pytest.Pytester,
) -> None:
    files = {
        "src/b.py": "B = 1\n",
        "tests/test_f0.py": F0,
        "tests/sub/conftest.py": "X = 1\n",
        "tests/sub/test_f1.py": F1,
    }
    root: Path = make_project(pytester, plan=PLAN, tests="", files=files)
    probe = Rebuild()
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider", plugins=[probe])
    passed, _, failed = result.listoutcomes()
    assert not failed and len(passed) == 4
    assert len(probe.pairs) == 4
    for fast, plain, fast_text, plain_text in probe.pairs:
        assert fast == plain and fast_text == plain_text
    stored = latest(root)
    assert {record.id for record in stored.values()} == {pair[1].id for pair in probe.pairs}
    # the output written during the run voids its node's records; the second module, written
    # by one of its tests, voids the records of that module; the rest pass
    reasons = {ref: record.reason for ref, record in stored.items()}
    assert reasons == {
        "step/ac-0": None,
        "other/ac-0": CHANGED_DURING_RUN,
        "step/ac-1": CHANGED_DURING_RUN,
        "other/ac-1": CHANGED_DURING_RUN,
    }
    assert stored["other/ac-0"].details["changed_during_run"] == ["src/b.py"]
    both = ["src/b.py", "tests/sub/test_f1.py"]
    assert stored["other/ac-1"].details["changed_during_run"] == both
    assert stored["step/ac-1"].details["changed_during_run"] == ["tests/sub/test_f1.py"]
