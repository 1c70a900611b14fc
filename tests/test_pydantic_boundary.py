"""pydantic at the boundary only: it validates a plan file whose bytes are new; a command or a
``pytest --plangraph`` run on a known plan (its validated form in the plan cache) imports no
pydantic at all. Each run is a separate process, and what it imported is read from its
``sys.modules`` at exit."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import plangraph
from module_probe import imported


def _pydantic(root: Path, tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    """Run *args* (``pytest …`` or a ``plangraph`` command) in a new process in *root*: its
    exit code and the pydantic modules it had imported at exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    code, modules, output = imported(
        root, tmp_path, *args, env={**env, "PLANGRAPH_ACTOR": "tester"}
    )
    assert "pytest_plangraph.plan.model" in modules, output
    return code, [m for m in modules if m.split(".")[0].startswith("pydantic")]


@pytest.fixture
def jwt(project: Callable[[str], Path]) -> Path:
    return project("jwt-login")


def test_a_known_plan_is_judged_without_pydantic(jwt: Path, tmp_path: Path) -> None:
    assert plangraph(jwt, "verify").code == 0  # a store: the project keeps what it reads
    plan_file = jwt / "plangraph.yaml"
    plan_file.write_text(plan_file.read_text() + "# new bytes\n")
    claim = ("claim", "step-user-schema", "--by", "agent")
    code, loaded = _pydantic(jwt, tmp_path, *claim)
    assert code in (0, 1)
    assert "pydantic" in loaded  # new bytes: validated at the boundary
    code, loaded = _pydantic(jwt, tmp_path, *claim)
    assert code in (0, 1) and loaded == []  # the same bytes again: none
    run = ("pytest", "--plangraph", "-q", "-p", "no:cacheprovider")
    code, loaded = _pydantic(jwt, tmp_path, *run)
    assert code == 0 and loaded == []
    code, loaded = _pydantic(jwt, tmp_path, "status", "--format", "json")
    assert code in (0, 1) and loaded == []
    status = plangraph(jwt, "status", "--format", "json").json()
    assert {n["id"]: n["status"] for n in status["nodes"]}["step-user-schema"] == "completed"


def test_an_edited_plan_is_validated_again(jwt: Path, tmp_path: Path) -> None:
    plan_file = jwt / "plangraph.yaml"
    assert plangraph(jwt, "verify").code == 0
    _pydantic(jwt, tmp_path, "status")  # validated by verify or now: kept either way
    assert _pydantic(jwt, tmp_path, "status")[1] == []
    plan_file.write_text(plan_file.read_text() + "# a comment: other bytes\n")
    assert "pydantic" in _pydantic(jwt, tmp_path, "status")[1]
    assert _pydantic(jwt, tmp_path, "status")[1] == []


def test_a_bad_plan_gets_the_same_message_after_a_good_one_was_kept(jwt: Path) -> None:
    plan_file = jwt / "plangraph.yaml"
    good = plan_file.read_text()
    assert plangraph(jwt, "status").code in (0, 1)  # its validated form is kept
    plan_file.write_text(good.replace("kind: objective", "kind: objectiv"))
    first = plangraph(jwt, "status")
    again = plangraph(jwt, "status")
    assert first.code == again.code == 2
    assert "objectiv" in first.err and "Traceback" not in first.err
    assert first.err == again.err
    fresh = plangraph(jwt, "status", env={"XDG_CACHE_HOME": str(jwt / "other-home")})
    assert fresh.err == first.err
    plan_file.write_text(good)
    assert plangraph(jwt, "status").code in (0, 1)
