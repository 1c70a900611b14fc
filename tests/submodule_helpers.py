"""Git repositories with a plan, for the submodule and shallow clone tests."""

from __future__ import annotations

from pathlib import Path

from conftest import git

PLAN = """\
plangraph: 1
plan: submodules
title: A plan whose first step writes into a submodule
nodes:
  - id: A
    title: Write into the submodule
    outputs: [sub/out/s.txt]
    acceptance:
      - id: ac-out
        assertion: the submodule holds the output
        verifier: {type: artifact, path: sub/out/s.txt}
  - id: B
    title: Use it
    acceptance:
      - id: ac-out
        assertion: the output is there
        verifier: {type: artifact, path: sub/out/s.txt}
edges:
  - {from: A, to: B, type: requires}
"""


def _repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    _write(path, files)
    _commit(path, "initial")
    return path


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()
