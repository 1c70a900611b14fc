"""``plangraph init``: a starter plan from the code, through the real command, that lints
clean and on which ``pytest --plangraph`` records evidence for every criterion."""

from __future__ import annotations

import ast
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml
from cli_helpers import plangraph, plangraph_main
from conftest import FIXTURES, ROOT
from plugin_helpers import latest
from repo_helpers import git

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.scaffold.scan import imported_modules, marked_criteria
from pytest_plangraph.scaffold.starter import cycles

pytest_plugins = ["pytester"]


def commit_all(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")


def criteria_of(plan: Path) -> set[str]:
    data = yaml.safe_load(plan.read_text(encoding="utf-8"))
    return {f"{n['id']}/{c['id']}" for n in data["nodes"] for c in n.get("acceptance", [])}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


@pytest.mark.parametrize("fixture", ["jwt-login", "plangraph-linecount"])
def test_init_then_pytest_records_evidence_for_every_criterion(
    pytester: pytest.Pytester, fixture: str
) -> None:
    root = pytester.path
    shutil.copytree(FIXTURES / fixture, root, dirs_exist_ok=True)
    (root / "plangraph.yaml").unlink(missing_ok=True)
    (root / ".gitignore").write_text(".plangraph/\n__pycache__/\n")
    commit_all(root)
    made = plangraph(root, "init")
    assert made.code == 0, made.err
    plan = root / "plangraph.yaml"
    assert plan.read_text().startswith("# yaml-language-server: $schema=")
    linted = plangraph(root, "lint")
    assert linted.code == 0 and "0 error(s), 0 warning(s)" in linted.out, linted.out
    expected = criteria_of(plan)
    assert expected
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert set(latest(root)) == expected
    assert all(record.outcome == "passed" for record in latest(root).values())


def test_jwt_login_steps_map_tests_by_import_and_keep_marker_criteria(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "jwt-login", tmp_path / "p")
    root = tmp_path / "p"
    (root / "plangraph.yaml").unlink()
    PlanGraph.init(root)
    data = yaml.safe_load((root / "plangraph.yaml").read_text())
    nodes = {n["id"]: n for n in data["nodes"]}
    assert nodes["step-auth"]["outputs"] == ["src/auth/**/*.py"]
    assert nodes["step-auth"]["acceptance"][0]["verifier"] == {
        "type": "test",
        "tests": ["tests/test_login.py"],
    }
    assert nodes["step-token-endpoint"]["acceptance"] == [
        {"id": "ac-invalid-401", "verifier": {"type": "test"}}
    ]
    assert nodes[f"objective-{data['plan']}"]["kind"] == "objective"
    assert all(n.get("parent") == f"objective-{data['plan']}" for n in data["nodes"][1:])


PARTS = ("pytest_plangraph", "tests", "pyproject.toml")


def test_init_on_this_repository_lints_clean_with_a_step_per_module(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    listed = subprocess.run(  # the working tree as a clone would have it, new files too
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *PARTS],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, root / rel)
    made = plangraph(root, "init")
    assert made.code == 0, made.err
    linted = plangraph(root, "lint")
    assert linted.code == 0 and "0 error(s), 0 warning(s)" in linted.out, linted.out
    data = yaml.safe_load((root / "plangraph.yaml").read_text())
    nodes = {n["id"]: n for n in data["nodes"]}
    package = ROOT / "pytest_plangraph"
    for entry in package.iterdir():
        if entry.name.endswith(".py") and entry.name != "__init__.py":
            assert f"step-{entry.name[:-3]}" in nodes
        elif (entry / "__init__.py").is_file():
            assert nodes[f"step-{entry.name}"]["outputs"] == [
                f"pytest_plangraph/{entry.name}/**/*.py"
            ]
    edges = {(e["from"], e["to"], e["type"]) for e in data["edges"]}
    assert ("step-replan", "step-api", "consumes") in edges  # api imports replan
    assert ("step-api", "step-repository", "consumes") not in edges
    tested = nodes["step-scaffold"]["acceptance"][0]["verifier"]["tests"]
    assert "tests/test_init.py" in tested  # by import, and only files under testpaths
    every = {
        t
        for n in nodes.values()
        for c in n.get("acceptance", [])
        for t in c["verifier"].get("tests", [])
    }
    assert every and all(t.startswith("tests/test_") and (root / t).is_file() for t in every)


C_MODULE = """
import pkg.a
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from pkg import d
"""


def test_import_cycles_become_related_edges_with_a_comment(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": '"""Module a."""\nfrom . import b\n',
            "pkg/b.py": "from .a import thing\n",
            "pkg/c.py": C_MODULE,
            "pkg/d.py": "",
            "tests/test_c.py": "def test_c():\n    import pkg.c\n",
        },
    )
    result = plangraph_main(tmp_path, "init", "--root", str(tmp_path))
    assert result.code == 0, result.err
    text = (tmp_path / "plangraph.yaml").read_text()
    assert "# import cycle among step-a <-> step-b" in text
    data = yaml.safe_load(text)
    edges = {(e["from"], e["to"], e["type"]) for e in data["edges"]}
    assert edges == {
        ("step-a", "step-b", "related"),
        ("step-b", "step-a", "related"),
        ("step-a", "step-c", "consumes"),
    }
    titles = {n["id"]: n.get("title") for n in data["nodes"]}
    assert titles["step-a"] == "Module a"
    assert plangraph_main(tmp_path, "lint", "--root", str(tmp_path)).code == 0


def test_from_tests_keeps_only_tested_modules(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/tested.py": "",
            "pkg/untested.py": "from . import tested\n",
            "tests/test_tested.py": "def test_it():\n    pass\n",
        },
    )
    out = tmp_path / "starter.yaml"
    result = plangraph_main(tmp_path, "init", "--from-tests", "--output", str(out))
    assert result.code == 0, result.err
    data = yaml.safe_load(out.read_text())
    assert [n["id"] for n in data["nodes"][1:]] == ["step-tested"]
    assert data["edges"] == []


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": "", "plangraph.yaml": "mine\n"})
    result = plangraph(tmp_path, "init")
    assert result.code == 2
    assert "exists already" in result.err and "--output FILE" in result.err
    assert "Traceback" not in result.err
    assert (tmp_path / "plangraph.yaml").read_text() == "mine\n"


@pytest.mark.parametrize(
    ("args", "files", "expected"),
    [
        ((), {"README.md": "x"}, "no Python package or module found"),
        (("--package", "nowhere"), {"mod.py": ""}, "--package 'nowhere': no such directory"),
        (("--package", "../up"), {"mod.py": ""}, "--package '../up': climbs out"),
        (("--from-tests",), {"mod.py": ""}, "--from-tests: no test file"),
        (("--output", "missing/dir/plan.yaml"), {"mod.py": ""}, "its directory does not exist"),
    ],
)
def test_bad_input_is_one_message_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], files: dict[str, str], expected: str
) -> None:
    write_tree(tmp_path, files)
    result = plangraph(tmp_path, "init", *args)
    assert result.code == 2, result.out
    assert expected in result.err and "Traceback" not in result.err
    assert not (tmp_path / "plangraph.yaml").exists()


def test_unparsable_modules_still_become_steps(tmp_path: Path) -> None:
    write_tree(tmp_path, {"good.py": "import bad\n", "bad.py": "def (:\n"})
    assert plangraph_main(tmp_path, "init", "--root", str(tmp_path)).code == 0
    data = yaml.safe_load((tmp_path / "plangraph.yaml").read_text())
    assert {n["id"] for n in data["nodes"][1:]} == {"step-bad", "step-good"}
    assert data["edges"] == [{"from": "step-bad", "to": "step-good", "type": "consumes"}]


def test_relative_imports_resolve_against_the_module() -> None:
    tree = ast.parse("from . import x\nfrom ..y import z\nfrom ...far import q\nimport a.b\n")
    assert imported_modules(tree, "pkg.sub.mod", False) == {"pkg.sub.x", "pkg.y.z", "a.b"}
    assert imported_modules(tree, "pkg.sub", True) == {"pkg.sub.x", "pkg.y.z", "a.b"}


def test_marker_refs_are_read_from_the_tests() -> None:
    tree = ast.parse(
        "import pytest\npytestmark = pytest.mark.criterion('n/a')\n"
        "@pytest.mark.criterion('n/b', 'm/c', 'bad ref')\ndef test_x(): pass\n"
    )
    assert marked_criteria(tree) == ["n/a", "n/b", "m/c"]


def test_cycles_are_the_strongly_connected_components() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_odd_trees_still_give_a_plan_that_lints_clean(tmp_path: Path) -> None:
    root = tmp_path / "odd project"
    deep = "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n"  # too deep for the parser
    write_tree(
        root,
        {
            "pkg/__init__.py": "",
            "pkg/my module.py": "",  # a name no id can hold
            "pkg/my_module.py": "",
            "pkg/deep.py": deep,
            "pkg/nested.py": "if a:\n"
            + "".join("  " * i + " if b:\n" for i in range(1, 60))
            + "  " * 60
            + " import pkg.deep\n",
            "tests/test_marks.py": (
                "import pytest\n"
                "@pytest.mark.criterion('objective-odd-project/ac-all')\n"
                "def test_all():\n    pass\n"
            ),
        },
    )
    outside = tmp_path / "outside"
    write_tree(outside, {"__init__.py": "", "far.py": ""})
    (root / "pkg" / "linked").symlink_to(outside, target_is_directory=True)
    result = plangraph_main(root, "init", "--root", str(root))
    assert result.code == 0, result.err
    linted = plangraph_main(root, "lint", "--root", str(root))
    assert linted.code == 0 and "0 warning(s)" in linted.out, linted.out
    data = yaml.safe_load((root / "plangraph.yaml").read_text())
    ids = [n["id"] for n in data["nodes"]]
    assert len(ids) == len(set(ids))
    assert {"step-my-module", "step-my_module", "step-deep", "step-nested"} <= set(ids)
    assert not any("linked" in i for i in ids)
    assert data["plan"] == "odd-project"
    assert data["nodes"][0]["acceptance"] == [{"id": "ac-all", "verifier": {"type": "test"}}]
    assert {"from": "step-deep", "to": "step-nested", "type": "consumes"} in data["edges"]


def test_json_output_and_the_api_refuses_a_text_as_packages(tmp_path: Path) -> None:
    write_tree(tmp_path, {"mod.py": ""})
    result = plangraph_main(tmp_path, "init", "--root", str(tmp_path), "--format", "json")
    assert result.code == 0 and result.json() == {
        "format": 1,
        "plan": str(tmp_path / "plangraph.yaml"),
    }
    from pytest_plangraph.errors import UsageError

    with pytest.raises(UsageError, match="packages must be a list"):
        PlanGraph.init(tmp_path, output=tmp_path / "other.yaml", packages="pkg")  # type: ignore[arg-type]
    assert not (tmp_path / "other.yaml").exists()


def test_packages_are_named_one_by_one_or_together(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a/__init__.py": "", "a/x.py": "", "b/y.py": "", "c/__init__.py": ""})
    for args in (("--package", "a", "b"), ("--package", "a", "--package", "b")):
        out = tmp_path / f"plan{len(args)}.yaml"
        result = plangraph_main(tmp_path, "init", "--output", str(out), *args)
        assert result.code == 0, result.err
        ids = {n["id"] for n in yaml.safe_load(out.read_text())["nodes"][1:]}
        assert ids == {"step-a", "step-a.x", "step-y"}  # c is not named: not a step
