"""Probe verifiers, plugins and repositories for the plugin robustness tests."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

from conftest import git

from pytest_plangraph.hooks.specs import hookimpl
from pytest_plangraph.verifiers import VerifierResult, settings_of

BASE_PLAN = """
plangraph: 1
plan: robust
nodes:
  - id: step-b
    outputs: [out/b.txt, out/c.txt]
    acceptance:
      - {id: ac-b, verifier: {type: artifact, path: out/b.txt}}
      - {id: ac-c, verifier: {type: artifact, path: out/c.txt}}
"""

IGNORED = "; ignored (the command's result stands; fix or uninstall the plugin)"


def make_repo(tmp_path: Path, extra_nodes: str = "") -> Path:
    """A git repository with the base plan (plus *extra_nodes*) and its two artifacts."""
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    (root / "plangraph.yaml").write_text(textwrap.dedent(BASE_PLAN).lstrip() + extra_nodes)
    (root / "out" / "b.txt").write_text("b\n")
    (root / "out" / "c.txt").write_text("c\n")
    (root / ".gitignore").write_text(".plangraph/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def node(name: str, *verifiers: str) -> str:
    """A plan node (YAML text) with one criterion per verifier mapping."""
    criteria = "".join(f"      - {{id: ac-{i}, verifier: {v}}}\n" for i, v in enumerate(verifiers))
    return f"  - id: {name}\n    acceptance:\n{criteria}"


class Probe:
    """A plug-in verifier type that misbehaves as its ``mode`` setting says."""

    runs_in_pytest = True

    def __init__(self, name: str = "probe") -> None:
        self.name = name

    def subjects(self, settings: Any) -> Any:
        if settings.get("mode") == "subjects-raise":
            raise ZeroDivisionError("no subjects today")
        declared = {"subjects-int": 42, "declare-dir": ["out"], "declare-outside": ["../s.txt"]}
        return declared.get(settings.get("mode"), ["out/b.txt"])

    def config_problems(self, settings: Any, workspace: Any) -> Any:
        if settings.get("mode") == "problems-exit":
            sys.exit("bye")
        return settings.get("answer", [])

    def run(self, node: Any, criterion: Any, workspace: Any) -> VerifierResult:
        mode = settings_of(criterion.verifier).get("mode")
        if mode == "exit":
            raise SystemExit(3)
        if mode == "interrupt":
            raise KeyboardInterrupt
        if mode == "generator-exit":
            raise GeneratorExit
        return JUNK.get(mode, VerifierResult("passed", subjects=("out/b.txt",)))


JUNK: dict[str, Any] = {  # results that look right but could not be stored as evidence
    "reason-int": VerifierResult("failed", reason=404),  # type: ignore[arg-type]
    "int-keys": VerifierResult("passed", details={1: "a"}),
    "message-object": VerifierResult("passed", message=object()),  # type: ignore[arg-type]
    "subjects-text": VerifierResult("passed", subjects="out/b.txt"),  # type: ignore[arg-type]
    "subject-outside": VerifierResult("passed", subjects=("../secret.txt",)),
    "subject-dir": VerifierResult("passed", subjects=("out",)),
    "no-subjects": VerifierResult("passed"),
    "declare-dir": VerifierResult("passed"),
    "declare-outside": VerifierResult("passed"),
}


class Provides:
    """A plugin that registers the given verifier types."""

    def __init__(self, *types: Any) -> None:
        self.types = list(types)

    @hookimpl
    def plangraph_verifier_types(self) -> list[Any]:
        return self.types


def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("plangraph: warning:")]
