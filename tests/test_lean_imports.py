"""Lean imports: GitPython is imported only to read the history of a submodule (``impact`` of
a change inside one); a ``pytest --plangraph`` run, ``plangraph status``, ``claim`` and
``impact`` read the commit, branch and dirty state of the tree, the diff and the commits with
plain ``git`` calls; ``plangraph CMD`` imports the module of CMD alone, and a ``status``
answered from the kept state imports neither pydantic nor YAML; a run without
``--plangraph-stale`` imports none of that option's modules. Each run is a separate
process, and what it imported is read from its ``sys.modules`` at exit."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from module_probe import imported
from plugin_helpers import make_project, settle


def _imports(root: Path, tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    """Run *args* (``pytest …`` or a ``plangraph`` command) in a new process in *root*: its
    exit code and the git modules it had imported at exit."""
    code, seen = _probe(root, tmp_path, *args)
    return code, seen["git"]


def _probe(root: Path, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """Run *args* as :func:`_imports` does: its exit code and what it had imported."""
    code, modules, output = imported(root, tmp_path, *args)
    seen = {
        "git": [m for m in modules if m == "git" or m.startswith("git.")],
        "plangraph": "pytest_plangraph" in modules,
        "heavy": [m for m in ("pydantic", "yaml") if m in modules],
        "commands": [m for m in modules if m.startswith("pytest_plangraph.cli.")],
        "modules": modules,
    }
    assert seen["plangraph"], output
    return code, seen


@pytest.fixture
def jwt(project: Callable[[str], Path]) -> Path:
    return project("jwt-login")


def test_a_plugin_run_and_the_state_commands_import_no_gitpython(jwt: Path, tmp_path: Path) -> None:
    code, loaded = _imports(jwt, tmp_path, "pytest", "--plangraph", "-q", "-p", "no:cacheprovider")
    assert code == 0
    assert loaded == []
    # the evidence still carries the commit and branch, read without GitPython
    head = git(jwt, "rev-parse", "HEAD").strip()
    command = [Path(sys.executable).parent / "plangraph", "history", "step-token-endpoint"]
    history = subprocess.run(
        [*command, "--format", "json"], cwd=jwt, capture_output=True, text=True, check=True
    )
    events = [e for e in json.loads(history.stdout)["events"] if e["kind"] == "evidence"]
    assert events
    assert {e["payload"]["git"]["commit"] for e in events} == {head}
    assert {e["payload"]["git"]["branch"] for e in events} == {"main"}

    for command in (
        ["status"],
        ["status", "--format", "json"],
        ["claim", "step-user-schema", "--by", "agent"],
    ):
        code, loaded = _imports(jwt, tmp_path, *command)
        assert code in (0, 1)
        assert loaded == [], command
    code, loaded = _imports(jwt, tmp_path, "status")  # a warm cache: still none
    assert loaded == []


def test_impact_reads_a_submodule_alone_with_gitpython(jwt: Path, tmp_path: Path) -> None:
    """``impact --since`` runs plain git; the other side of the line: the probe does see
    GitPython where a submodule's history is read."""
    (jwt / "fixtures/user.json").write_text('{"username": "someone else"}\n')
    git(jwt, "commit", "-q", "-am", "edit")
    for command in (["impact", "--since", "HEAD~1"], ["impact", "--since", "HEAD~1", "--check"]):
        code, loaded = _imports(jwt, tmp_path, *command)
        assert code in (0, 1), command
        assert loaded == [], command
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q", "-b", "main")
    (library / "lib.txt").write_text("one\n")
    git(library, "add", "lib.txt")
    git(library, "commit", "-q", "-m", "library")
    git(jwt, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(jwt, "commit", "-q", "-m", "add the library")
    (jwt / "lib/lib.txt").write_text("two\n")
    code, loaded = _imports(jwt, tmp_path, "impact", "--since", "HEAD~1")
    assert code == 0
    assert "git" in loaded


def test_a_command_imports_its_own_module_and_the_table_names_every_command() -> None:
    import argparse
    import importlib

    from pytest_plangraph.cli import COMMANDS, MODULES

    registered = {}
    for name in MODULES:
        parser = argparse.ArgumentParser()
        commands = parser.add_subparsers()
        importlib.import_module(f"pytest_plangraph.cli.{name}").register(commands)
        registered.update(dict.fromkeys(commands.choices, name))
    assert registered == COMMANDS


def test_a_kept_status_imports_no_pydantic_yaml_or_git(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    from pytest_plangraph.api import PlanGraph
    from pytest_plangraph.checkpoint import FIRST_AT
    from pytest_plangraph.plan.model import Event

    root = project("seed-000")
    with PlanGraph.open(root) as graph:  # a log long enough to be kept in a checkpoint
        records = graph.verify(by="tester")
        copies = [
            Event(
                kind="evidence",
                node=r.node,
                criterion=r.criterion,
                at=f"2030-01-01T00:00:{n // 1000:02d}.{n % 1000:03d}000+00:00",
                by="tester",
                plan_digest=graph.plan.digest,
                payload=r.to_json(),
            )
            for n, r in enumerate(records * (FIRST_AT // len(records) + 1))
        ]
        graph.store.append_many(copies)
    for _ in range(2):  # derives and writes the checkpoint; reads it and keeps the answer
        code, seen = _probe(root, tmp_path, "status")
        assert code == 0
        # a derivation imports more: the probe sees what was imported
        assert "pytest_plangraph.judge.derive" in seen["modules"]
    code, seen = _probe(root, tmp_path, "status")
    assert code == 0
    assert seen["heavy"] == [] and seen["git"] == []
    # nor OpenSSL: its hashes of cache keys and tags need no hashlib (``hashes``)
    assert {"hashlib", "_hashlib", "hmac"}.isdisjoint(seen["modules"])
    assert seen["commands"] == [
        "pytest_plangraph.cli.common",
        "pytest_plangraph.cli.report_formats",
        "pytest_plangraph.cli.state_cmds",
        "pytest_plangraph.cli.tables",
    ]


CLAIM_NEEDS_NONE_OF = (
    "cryptography",  # attesting, signatures
    "ruamel",  # re-planning's round-trip editor
    "yaml",  # the starters, a plan's new bytes
    "pydantic",  # a known plan is read into the runtime classes
    "jsonschema",  # a schema compiled once is remembered
    "importlib.metadata",  # the plug-ins' entry points are kept between runs
    "email",  # what importlib.metadata reads metadata with
    "tempfile",  # a command verifier's output file
    "difflib",  # a lint message's near miss
    "pytest_plangraph.attest.dsse",
    "pytest_plangraph.attest.statement",
    "pytest_plangraph.importers.starter",
    "pytest_plangraph.judge.records",
    "pytest_plangraph.lint.coverage",
    "pytest_plangraph.plan.jsonpatch",
    "pytest_plangraph.plan.patch",
)
"""What ``plangraph claim`` on a known plan does not import: the machinery of other commands."""


def test_a_claim_on_a_known_plan_imports_only_what_a_claim_needs(
    jwt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    claim = ("claim", "step-user-schema", "--by", "agent")
    code, verified = _probe(jwt, tmp_path, "verify")
    assert code == 0
    assert "pytest_plangraph.verifiers.run" in verified["modules"]  # what a run defers
    (tmp_path / "user-cache/plangraph/plugins.json").unlink(missing_ok=True)  # whatever verify kept
    code, first = _probe(jwt, tmp_path, *claim)  # the plug-ins' entry points scanned, kept
    assert code == 0
    assert "importlib.metadata" in first["modules"]  # the probe sees a scan
    code, seen = _probe(jwt, tmp_path, *claim)
    assert code == 0
    unwanted = [
        m
        for m in seen["modules"]
        if any(m == name or m.startswith(f"{name}.") for name in CLAIM_NEEDS_NONE_OF)
    ]
    assert unwanted == []
    assert seen["commands"] == [
        "pytest_plangraph.cli.common",
        "pytest_plangraph.cli.report_formats",
        "pytest_plangraph.cli.state_cmds",
        "pytest_plangraph.cli.tables",
    ]


STALE_ONLY = ("pytest_plangraph.plugin.selection", "pytest_plangraph.judge.rerun")
"""The modules of ``--plangraph-stale`` alone: a run without the option imports none."""


def test_a_plugin_run_imports_the_stale_selection_only_when_asked(
    jwt: Path, tmp_path: Path
) -> None:
    base = ("pytest", "--plangraph", "-q", "-p", "no:cacheprovider")
    code, plain = _probe(jwt, tmp_path, *base)
    assert code == 0
    assert "pytest_plangraph.plugin.session" in plain["modules"]
    assert [m for m in STALE_ONLY if m in plain["modules"]] == []
    code, stale = _probe(jwt, tmp_path, *base, "--plangraph-stale")
    assert code == pytest.ExitCode.NO_TESTS_COLLECTED  # all evidence valid: all deselected
    assert [m for m in STALE_ONLY if m in stale["modules"]] == list(STALE_ONLY)


DEFERRED = (
    "pytest_plangraph.hooks.specs",  # the hook specifications: a plugin manager built
    "pytest_plangraph.verifiers.run",  # `plangraph verify` runs verifiers outside pytest
    "pytest_plangraph.judge.budgets",  # why a node never completes: a budget spent, no criterion
    "pytest_plangraph.judge.payloads",  # a record made or changed by hand, checked
    "pytest_plangraph.judge.lookup",  # a node or criterion an API caller named, checked
    "pytest_plangraph.judge.ticks",  # a claim replay: a claim that carries no verdict
    "pytest_plangraph.plan.digests",  # a plan read from its cache carries its digests
    "pytest_plangraph.plan.order",  # and its order
    "pytest_plangraph.plan.messages",  # a problem's place in the plan file
    "pytest_plangraph.plan.untrusted",  # an event that does not count (keys configured)
    "pytest_plangraph.plugin.github",  # a GitHub Actions job's summary and annotations
    "pytest_plangraph.plugin.junit",  # the evidence ids of a JUnit XML report
    "pytest_plangraph.plugin.outcomes",  # a test that did not plainly pass
)
"""The modules of what a run of passing tests on a known plan never meets (see
:data:`RUN_NEEDS_NONE_OF`), each imported by the function that meets it."""

RUN_NEEDS_NONE_OF = (
    "getpass",  # the login name is read from the environment first, as getpass reads it
    "termios",  # getpass's
    "pwd",  # getpass's, for the password database
    "graphlib",  # a cycle looked for: a plan read from its cache was checked when kept
    "hmac",  # a kept checkpoint or a kept-bytecode entry vouched for; keys configured
    "cryptography",
    "pydantic",  # a known plan is read from its cache
    "yaml",
    "pytest_plangraph.planwrite",  # re-planning writes the plan file
    "pytest_plangraph.plan.blocks",  # a plan read from its cache splits only for a position
    "encodings.utf_8_sig",  # its bytes are decoded then, not before
    "pytest_plangraph.progress",  # `plangraph verify`'s progress lines
    "pytest_plangraph.store.keys",  # signing keys and trusted keys, when configured
    "pytest_plangraph.vcs.globwalk",  # a plan that names no glob walks none
    "pytest_plangraph.vcs.reading",  # the schema verifier's files, the documents' parsers
    "pytest_plangraph.verifiers.documents",  # and the formats: where a schema is checked
    "pytest_plangraph.verifiers.formats",
    "pytest_plangraph.attest.dsse",
    "pytest_plangraph.judge.rerun",
    "pytest_plangraph.plugin.selection",
    *DEFERRED,
)
"""What a ``pytest --plangraph`` run on a known plan (read from its cache) of test criteria
that all pass, with no keys configured, a login name in the environment, outside a GitHub
Actions job and without a JUnit XML report, does not import (:data:`DEFERRED`: the modules of
what such a run never meets, imported by the function that meets it)."""

TEST_PLAN = """
plangraph: 1
plan: lean
nodes:
  - id: step-a
    outputs: [src/a.py]
    acceptance:
      - id: ac-marked
        verifier: {type: test}
      - id: ac-named
        verifier: {type: test, tests: ["tests/test_a.py::test_pattern_one"]}
"""


KEPT_TEST_PLAN = TEST_PLAN + "# a plan large enough for its facts to be kept\n" * 400
""":data:`TEST_PLAN` past the size from which the plan cache keeps a plan's facts (its digests
and order: ``pytest_plangraph.plan.file.CACHE_MIN_BYTES``), as a real plan's are."""


def test_a_plugin_run_on_a_known_plan_imports_only_what_it_uses(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(pytester, plan=KEPT_TEST_PLAN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.delenv("PLANGRAPH_ACTOR", raising=False)
    monkeypatch.delenv("LOGNAME", raising=False)
    monkeypatch.setenv("USER", "runner")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    # the same in every environment: where bytecode is written, pytest's rewrite of a test
    # module kept from an earlier run is vouched for by an entry checked with hmac
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    run = ("pytest", "--plangraph", "-q", "-p", "no:cacheprovider")
    assert _probe(root, tmp_path, *run)[0] == 0  # the plan read, then kept in its cache
    settle(root)  # what is kept by the folders' times kept by the next run, as the benchmark's
    assert _probe(root, tmp_path, *run)[0] == 0
    first = _probe(root, tmp_path, *run)
    for kept in (root / ".plangraph").iterdir():  # a fresh store, as the benchmark counts
        if kept.is_file() and kept.name != ".gitignore":
            kept.unlink()
    code, seen = _probe(root, tmp_path, *run)
    assert (root / ".plangraph/store.db").is_file()
    assert code == 0
    assert "pytest_plangraph.plugin.session" in seen["modules"]  # the probe sees the run
    for probed in (first[1], seen):
        unwanted = [
            m
            for m in probed["modules"]
            if any(m == name or m.startswith(f"{name}.") for name in RUN_NEEDS_NONE_OF)
        ]
        assert unwanted == []
    # the login name read without getpass is the one getpass reads: the records say who
    history = subprocess.run(
        [Path(sys.executable).parent / "plangraph", "history", "step-a", "--format", "json"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    recorded = [e for e in json.loads(history.stdout)["events"] if e["kind"] == "evidence"]
    assert len(recorded) == 2  # two criteria, the run after the store was deleted
    assert {e["by"] for e in recorded} == {"runner"}


LINT_RULES = (
    "pytest_plangraph.lint.check",
    "pytest_plangraph.lint.effects",
    "pytest_plangraph.lint.files",
    "pytest_plangraph.lint.hierarchy",
    "pytest_plangraph.lint.nodecache",
    "pytest_plangraph.lint.rules",
    "pytest_plangraph.lint.runner",
    "pytest_plangraph.lint.testpolicy",
    # the built-in verifier types, imported when the registry is built: a run whose criteria
    # are all of built-in types that run in pytest, which the kept answer shows no plug-in
    # registers too, asks no registry which criteria run as items
    "pytest_plangraph.verifiers.approval",
    "pytest_plangraph.verifiers.artifact",
    "pytest_plangraph.verifiers.command",
    "pytest_plangraph.verifiers.schema",
    "pytest_plangraph.verifiers.test",
)
"""Lint's rules and the checks that run them, and the verifier registry's types: a run of
test criteria that takes lint's kept answer imports none of them."""


def test_a_plugin_run_taking_the_kept_lint_answer_imports_no_lint_rule(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(pytester, plan=TEST_PLAN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    run = ("pytest", "--plangraph", "-q", "-p", "no:cacheprovider")
    assert _probe(root, tmp_path, *run)[0] == 0
    checked = _probe(root, tmp_path, *run)[1]["modules"]
    assert {"pytest_plangraph.lint.rules", "pytest_plangraph.verifiers.test"} <= set(checked)
    settle(root)  # the answer kept by the next run: its folders are old enough to watch
    assert _probe(root, tmp_path, *run)[0] == 0
    code, seen = _probe(root, tmp_path, *run)
    assert code == 0
    assert "pytest_plangraph.lint.kept" in seen["modules"]
    assert [m for m in seen["modules"] if m in LINT_RULES] == []


FAILING_TESTS = """
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked():
    assert False, "not yet"

def test_pattern_one():
    assert True
"""


def test_a_plugin_run_imports_what_it_deferred_where_it_meets_it(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side of :data:`DEFERRED`: a failing test, a JUnit XML report and a GitHub
    Actions job's summary import their modules, and each still does its part."""
    root = make_project(pytester, plan=TEST_PLAN, tests=FAILING_TESTS)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    report = tmp_path / "junit.xml"
    run = ("pytest", "--plangraph", "-p", "no:cacheprovider", f"--junitxml={report}")
    code, modules, output = imported(root, tmp_path, *run)
    assert code == pytest.ExitCode.TESTS_FAILED
    wanted = {
        "pytest_plangraph.plugin.outcomes",
        "pytest_plangraph.plugin.github",
        "pytest_plangraph.plugin.junit",
    }
    assert wanted <= set(modules)
    assert "step-a/ac-marked: failed" in output  # the summary lists the test that failed
    assert "test_marked" in output
    assert "## plangraph: lean" in summary.read_text(encoding="utf-8")
    assert 'name="plangraph_evidence"' in report.read_text(encoding="utf-8")


REFUSING_CONFTEST = """
import pathlib

import pluggy

from pytest_plangraph.hooks.manager import get_plugin_manager

hookimpl = pluggy.HookimplMarker("plangraph")


class Misnamed:
    @hookimpl
    def plangraph_verifier_types(self, no_such_argument):
        return []


def pytest_configure(config):
    try:
        get_plugin_manager().register(Misnamed(), name="misnamed")
    except pluggy.PluginValidationError as exc:
        pathlib.Path("refused.txt").write_text(str(exc))
"""


def test_a_plugin_run_building_the_plugin_manager_imports_the_hook_specifications(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side of deferring ``hooks.specs``: a run that builds the manager (a
    ``conftest.py`` registers a plugin with it) imports the specifications and registers them
    before any plugin, so a plugin whose hook does not match its specification is refused, and
    the built-in types still run their criteria."""
    root = make_project(pytester)
    (root / "out").mkdir(exist_ok=True)
    (root / "out/b.txt").write_text("made\n", encoding="utf-8")
    (root / "conftest.py").write_text(REFUSING_CONFTEST, encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    run = ("pytest", "--plangraph", "-v", "-p", "no:cacheprovider")
    code, modules, output = imported(root, tmp_path, *run)
    assert code == 0, output
    assert "pytest_plangraph.hooks.specs" in modules
    assert "plangraph.yaml::step-b/ac-exists PASSED" in output
    refused = (root / "refused.txt").read_text(encoding="utf-8")
    assert "no_such_argument" in refused
