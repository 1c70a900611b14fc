"""A generated history for ``bench/evaluate.py``: six modules, their tests, a plan that declares
some of their imports as edges and leaves one out (an implicit dependency), and a sequence of
commits that change outputs, break and fix a module and edit a test file."""

from __future__ import annotations

import subprocess
from pathlib import Path

MODULES = {
    "m0": ("", "def value():\n    return {v}\n"),
    "m1": ("from gen import m0\n", "def value():\n    return m0.value() + 1\n"),
    "m2": ("from gen import m1\n", "def value():\n    return m1.value() * 2\n"),
    "m3": ("from gen import m0\n", "def value():\n    return -m0.value()\n"),  # not declared
    "m4": ("from gen import m2\n", "def value():\n    return m2.value() - 1\n"),
    "m5": ("", "def value():\n    return {v}\n"),
}
EXPECTED = {
    "m0": "{v}",
    "m1": "{v} + 1",
    "m2": "({v} + 1) * 2",
    "m3": "-{v}",
    "m4": "({v} + 1) * 2 - 1",
    "m5": "{v}",
}
EDGES = [("m0", "m1"), ("m1", "m2"), ("m2", "m4")]
"""Declared dependencies; ``m3`` imports ``m0`` without an edge."""


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _commit(root: Path, message: str) -> str:
    identity = ["-c", "user.name=eval", "-c", "user.email=eval@example.invalid"]
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", *identity, "commit", "-qm", message], cwd=root, check=True)
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return out.stdout.strip()


def _module(root: Path, name: str, v: int, *, broken: bool = False) -> None:
    head, body = MODULES[name]
    text = head + body.format(v=v)
    if broken:
        text += "\n\ndef value():  # a regression\n    return 0\n"
    _write(root, f"src/gen/{name}.py", text)


def _test(root: Path, name: str, v: int, note: str = "") -> None:
    expected = EXPECTED[name].format(v=v)
    _write(
        root,
        f"tests/test_{name}.py",
        f"from gen import {name}\n\n\ndef test_{name}():{note}\n"
        f"    assert {name}.value() == {expected}\n",
    )


def generate_history(
    root: Path, steps: int | None = None
) -> tuple[list[str], str, dict[str, list[str]]]:
    """Build the history in *root* (the first *steps* commits after the first, all when None);
    returns its commits oldest first, the plan and node → test files."""
    from evaluate import plan_yaml

    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    _write(root, "pytest.ini", "[pytest]\ntestpaths = tests\npythonpath = src\n")
    _write(root, "src/gen/__init__.py", "")
    base, other = 3, 7
    for name in MODULES:
        _module(root, name, other if name == "m5" else base)
        _test(root, name, other if name == "m5" else base)
    commits = [_commit(root, "initial")]

    def change_m0(v: int) -> None:
        _module(root, "m0", v)
        for name in ("m0", "m1", "m2", "m3", "m4"):
            _test(root, name, v)

    edits = [
        ("change m5 only", lambda: (_module(root, "m5", 8), _test(root, "m5", 8))),
        ("m0 changes, the tests not updated", lambda: _module(root, "m0", 4)),
        ("update the tests of every module that imports m0", lambda: change_m0(4)),
        ("break m2", lambda: _module(root, "m2", 4, broken=True)),
        ("fix m2", lambda: _module(root, "m2", 4)),
        ("comment in m4's test file", lambda: _test(root, "m4", 4, "  # checked")),
        ("change m0 and every test that checks it", lambda: change_m0(6)),
    ]
    for message, edit in edits[:steps]:
        edit()
        commits.append(_commit(root, message))
    nodes = {n: ([f"src/gen/{n}.py"], [f"tests/test_{n}.py"]) for n in MODULES}
    return commits, plan_yaml(nodes, EDGES), {n: [f"tests/test_{n}.py"] for n in MODULES}
