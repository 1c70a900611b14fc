"""The shadowing paths of a run are found once per run (DESIGN §5 "What binds"): each path
where a new file would shadow a module the run imported is looked up on disk once, however
many records bind it, and the paths of a set of modules are merged once, however many criteria
have their tests in that set. A real ``pytest --plangraph`` session (pytester) reads the
counts from its record builder at the end of the session; the records still bind every
shadowing path absent, as the paths the run's :class:`ShadowPaths` names."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_helpers import latest, make_project

from pytest_plangraph.plan.evidence import ABSENT
from pytest_plangraph.plugin import SESSION_KEY

FILES, CRITERIA, PER_CRITERION = 4, 12, 6


def _plan() -> str:
    listed = "\n".join(f"      - {{id: ac-{c}, verifier: {{type: test}}}}" for c in range(CRITERIA))
    head = "plangraph: 1\nplan: cost\nnodes:\n  - id: step\n    outputs: [src/a.py]\n"
    return f"{head}    acceptance:\n{listed}\n"


def _tests(file: int) -> str:
    """Test file *file*: for every criterion, the tests that fall into this file (each
    criterion's tests go round the files: criteria share their sets of files)."""
    lines = ["import pytest", ""]
    for c in range(CRITERIA):
        for t in range(PER_CRITERION):
            if (c + t) % FILES == file:
                lines.append(
                    f'@pytest.mark.criterion("step/ac-{c}")\ndef test_{c}_{t}():\n    assert True\n'
                )
    return "\n".join(lines)


class Probe:
    """Reads the record builder's counts when the session has ended."""

    def __init__(self) -> None:
        self.lookups = self.merges = -1
        self.paths: set[str] = set()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        builder = session.config.stash[SESSION_KEY].builder
        assert builder is not None and builder.shadows is not None
        shadows = builder.shadows
        self.lookups, self.merges = shadows.lookups, builder.merges
        modules = [f"tests/test_f{f}.py" for f in range(FILES)]
        self.paths = {p for m in modules for p in shadows.paths_of(m)} | set(shadows.startup)


def test_each_shadowing_path_is_looked_up_once_per_run(pytester: pytest.Pytester) -> None:
    files = {f"tests/test_f{f}.py": _tests(f) for f in range(FILES)}
    root: Path = make_project(pytester, plan=_plan(), tests="", files=files)
    probe = Probe()
    result = pytester.inline_run("--plangraph", "-q", "-p", "no:cacheprovider", plugins=[probe])
    passed, _, failed = result.listoutcomes()
    assert not failed and len(passed) == CRITERIA * PER_CRITERION
    records = latest(root)
    assert len(records) == CRITERIA
    # every criterion's tests are in all four files (six tests round four files): one set
    # of modules, merged once for the twelve records
    assert probe.merges == 1
    # one look on disk per shadowing path of the four test modules (and the start's files),
    # not one per record that binds it
    assert probe.paths and probe.lookups == len(probe.paths)
    # and every record binds each of them absent (none is there)
    for record in records.values():
        assert dict.fromkeys(probe.paths, ABSENT).items() <= record.subjects.items()
