"""The pluggy extension API: one plugin manager, entry points, crashing and broken plugins."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_plangraph.errors import VerifierError
from pytest_plangraph.hooks import manager as plugins
from pytest_plangraph.hooks.specs import hookimpl
from pytest_plangraph.plan.model import Node
from pytest_plangraph.vcs.workspace import Workspace
from pytest_plangraph.verifiers import VerifierResult

LINECOUNT = Path(__file__).resolve().parents[1] / "fixtures" / "plangraph-linecount"


@pytest.fixture(autouse=True)
def fresh_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(plugins.AUTOLOAD_OFF, raising=False)
    plugins.clear_cache()
    yield
    plugins.clear_cache()
    for name in ("plangraph_linecount", "plangraph_raises_on_import"):
        sys.modules.pop(name, None)


def install_dist(site: Path, name: str, entry_points: str, module: str | None = None) -> None:
    """A real installed distribution: a dist-info with METADATA and entry_points.txt."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[plangraph]\n{entry_points}\n")
    if module is not None:
        (site / f"{module}.py").write_text("raise RuntimeError('needs a licence server')\n")


def criterion_node(verifier: dict[str, Any]) -> Node:
    return Node.from_data({"id": "step", "acceptance": [{"id": "ac", "verifier": verifier}]})


def run(node: Node, root: Path) -> VerifierResult:
    return plugins.get_registry().run_safely(node, node.acceptance[0], Workspace.at(root))


def test_manager_is_shared_and_holds_the_builtins() -> None:
    pm = plugins.get_plugin_manager()
    assert plugins.get_plugin_manager() is pm
    assert pm.has_plugin(plugins.BUILTIN_PLUGIN)
    assert set(plugins.get_registry().names()) >= {"test", "schema", "artifact", "approval"}


def test_entry_point_plugin_is_loaded_and_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install_dist(site, "plangraph-linecount", "linecount = plangraph_linecount")
    shutil.copy(LINECOUNT / "plangraph_linecount.py", site)
    monkeypatch.syspath_prepend(str(site))
    registry = plugins.get_registry()
    assert "linecount" in registry.names()
    assert registry.runnable("linecount")

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "CHANGELOG.md").write_text("# Changes\n\n## 0.1\n- first\n")
    passing = criterion_node(
        {"type": "linecount", "path": "CHANGELOG.md", "min_lines": 3, "regex": "^## "}
    )
    result = run(passing, repo)
    assert (result.outcome, result.details, result.subjects) == (
        "passed",
        {"lines": 4},
        ("CHANGELOG.md",),
    )
    too_short = criterion_node({"type": "linecount", "path": "CHANGELOG.md", "min_lines": 10})
    assert run(too_short, repo).reason == "TOO_FEW_LINES"
    no_match = criterion_node({"type": "linecount", "path": "CHANGELOG.md", "regex": "^### "})
    assert run(no_match, repo).reason == "NO_MATCH"
    bad = criterion_node(
        {"type": "linecount", "path": "CHANGELOG.md", "regex": "(", "max_lines": -1}
    )
    found = registry.config_problems(bad.acceptance[0], Workspace.at(repo))
    assert [p.split(":")[0] for p in found] == ["max_lines", "regex"]


@pytest.mark.parametrize(
    ("entry", "module", "expected"),
    [
        ("gone = no_such_plangraph_module", None, "ModuleNotFoundError"),
        (
            "raising = plangraph_raises_on_import",
            "plangraph_raises_on_import",
            "needs a licence server",
        ),
    ],
)
def test_broken_entry_point_names_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str, module: str | None, expected: str
) -> None:
    install_dist(tmp_path, "plangraph-broken", entry, module)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(VerifierError) as caught:
        plugins.get_plugin_manager()
    message = str(caught.value)
    assert f"the plangraph plugin {entry.split(' =')[0]!r}" in message
    assert "plangraph-broken 0.1.0" in message
    assert expected in message
    monkeypatch.setenv(plugins.AUTOLOAD_OFF, "1")
    assert plugins.get_registry().names() == ["approval", "artifact", "command", "schema", "test"]


class Crashing:
    name = "crashing"
    runs_in_pytest = True

    def config_problems(self, settings: Any, workspace: Any) -> list[str]:
        raise KeyError("threshold")

    def run(self, node: Any, criterion: Any, workspace: Any) -> VerifierResult:
        raise ZeroDivisionError("division by zero in the line counter")


class Sloppy(Crashing):
    name = "sloppy"

    def run(self, node: Any, criterion: Any, workspace: Any) -> Any:
        return {"outcome": "passed"}


class ThirdParty:
    def __init__(self) -> None:
        self.recorded: list[tuple[Any, str]] = []

    @hookimpl
    def plangraph_verifier_types(self) -> list[Any]:
        return [Crashing(), Sloppy()]

    @hookimpl
    def plangraph_evidence_recorded(self, evidence: Any, store_path: str) -> None:
        self.recorded.append((evidence, store_path))

    @hookimpl
    def plangraph_report_formats(self) -> dict[str, Any]:
        return {"csv": lambda report: "node,status", "json": lambda report: "hijacked"}


def test_a_crashing_verifier_becomes_an_error_outcome(tmp_path: Path) -> None:
    plugins.get_plugin_manager().register(ThirdParty(), name="third-party")
    result = run(criterion_node({"type": "crashing"}), tmp_path)
    assert (result.outcome, result.reason) == ("error", "VERIFIER_CRASHED")
    assert result.message == (
        "verifier 'crashing' crashed: ZeroDivisionError: division by zero in the line counter"
    )
    sloppy = run(criterion_node({"type": "sloppy"}), tmp_path)
    assert (sloppy.outcome, sloppy.reason) == ("error", "VERIFIER_CRASHED")
    assert "returned dict, not a VerifierResult" in sloppy.message
    node = criterion_node({"type": "crashing"})
    found = plugins.get_registry().config_problems(node.acceptance[0], Workspace.at(tmp_path))
    assert found == ["verifier 'crashing' crashed checking its settings: KeyError: 'threshold'"]


def test_other_hooks_reach_plugins() -> None:
    pm = plugins.get_plugin_manager()
    third = ThirdParty()
    pm.register(third, name="third-party")
    pm.hook.plangraph_evidence_recorded(evidence="record", store_path="store.db")
    assert third.recorded == [("record", "store.db")]
    formats = plugins.get_report_formats()
    assert list(formats) == ["csv"]
    assert formats["csv"]({}) == "node,status"


def test_a_plugin_returning_junk_types_is_named() -> None:
    class Junk:
        @hookimpl
        def plangraph_verifier_types(self) -> Any:
            return "linecount"

    plugins.get_plugin_manager().register(Junk(), name="junk")
    with pytest.raises(VerifierError, match="plugin 'junk' returned str"):
        plugins.get_registry()


def test_importing_the_plugin_manager_imports_no_heavy_modules() -> None:
    heavy = ("jsonschema", "pydantic", "git", "sqlite3", "yaml")
    code = (
        "import sys, pytest_plangraph.hooks.manager, pytest_plangraph.hooks.specs;"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
