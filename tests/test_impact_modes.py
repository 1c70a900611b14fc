"""``plangraph impact --since REV`` (the diff alone, no store) and ``plangraph impact`` (the
store's evidence against the files now) blame the same nodes for the same change, on the same
repository at the same commit (DESIGN §5 "What binds", §6): a file a node's verifiers only read
(a test file, a schema that is not an output, a conftest file) stales that node alone; what a
node makes flows downstream."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import plangraph_main
from conftest import git

PLAN = """
plangraph: 1
plan: modes
nodes:
  - id: A
    outputs: [src/a.py]
    acceptance:
      - id: ac
        verifier: {type: test, tests: ["tests/test_a.py::test_a"]}
  - id: B
    outputs: [src/b.py]
    acceptance:
      - id: ac
        verifier: {type: test, tests: ["tests/test_b.py::test_b"]}
      - id: shape
        verifier: {type: schema, schema: schemas/b.json, artifact: data/b.json}
  - id: W
    outputs: [tests/test_c.py]
    acceptance:
      - id: written
        verifier: {type: artifact, path: tests/test_c.py}
  - id: C
    outputs: [src/c.py]
    acceptance:
      - id: ac
        verifier: {type: test, tests: ["tests/test_c.py::test_c"]}
edges:
  - {from: A, to: B, type: requires}
  - {from: B, to: C, type: consumes}
  - {from: W, to: C, type: requires}
"""

FILES = {
    "plangraph.yaml": PLAN,
    "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = src\n",
    ".gitignore": ".plangraph/\n__pycache__/\n",
    "src/a.py": "A = 1\n",
    "src/b.py": "B = 2\n",
    "src/c.py": "C = 3\n",
    "schemas/b.json": '{"type": "object"}\n',
    "data/b.json": '{"b": 2}\n',
    "tests/conftest.py": "",
    "tests/test_a.py": "from a import A\n\n\ndef test_a():\n    assert A == 1\n",
    "tests/test_b.py": "from b import B\n\n\ndef test_b():\n    assert B == 2\n",
    "tests/test_c.py": "from c import C\n\n\ndef test_c():\n    assert C == 3\n",
}


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, every node verified by ``pytest --plangraph`` and committed."""
    root = tmp_path_factory.mktemp("modes")
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "pytest", "--plangraph", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    return root


def _sets(data: dict[str, Any]) -> tuple[dict[str, list[str]], list[str], list[str]]:
    changed = {c["path"]: sorted(c["nodes"]) for c in data["changed"]}
    return (
        changed,
        [i["node"] for i in data["invalidated"]],
        [n["node"] for n in data["review_recommended"]],
    )


@pytest.mark.parametrize(
    ("path", "nodes", "invalidated"),
    [
        pytest.param("tests/test_a.py", ["A"], ["A"], id="test-file-stales-its-node-only"),
        pytest.param("schemas/b.json", ["B"], ["B"], id="schema-read-stales-its-node-only"),
        pytest.param("tests/conftest.py", ["A", "B", "C"], ["A", "B", "C"], id="conftest"),
        pytest.param("data/b.json", ["B"], ["B", "C"], id="checked-artifact-flows"),
        pytest.param("src/a.py", ["A"], ["A", "B", "C"], id="output-flows"),
        # a test file another node writes: listed under the node whose criterion maps it too
        pytest.param("tests/test_c.py", ["C", "W"], ["W", "C"], id="mapped-test-file-listed"),
    ],
)
def test_since_without_a_store_and_the_store_blame_the_same_nodes(
    verified: Path, tmp_path: Path, path: str, nodes: list[str], invalidated: list[str]
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(verified, root)
    with (root / path).open("a", encoding="utf-8") as file:
        file.write("\n" if path.endswith(".json") else "# a comment\n")
    git(root, "commit", "-q", "-am", f"edit {path}")

    stored = plangraph_main(root, "impact", "--format", "json", "--no-commits")
    assert stored.code == 0, stored.err
    shutil.move(root / ".plangraph", tmp_path / "kept")  # the diff alone
    since = plangraph_main(root, "impact", "--since", "HEAD~1", "--format", "json")
    assert since.code == 0, since.err
    assert not (root / ".plangraph/store.db").exists()

    assert _sets(since.json()) == _sets(stored.json())
    changed, found, _ = _sets(since.json())
    assert changed == {path: nodes}
    assert found == invalidated
