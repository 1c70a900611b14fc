"""The runtime classes' builders compiled ahead of time (``plan/_prebuilt.py``): the module on
disk is the one the generator writes now, every class of a plan takes its builder from it, and
a builder whose source no longer matches is compiled as before and builds the same values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_plan_builders import FIXTURE_PLANS, _reference, _same

from pytest_plangraph.plan import _prebuilt, frozen, prebuild
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.model import Plan


def test_the_module_on_disk_is_the_one_the_generator_writes() -> None:
    command = [sys.executable, "-m", "pytest_plangraph.plan.prebuild", "--check"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_module_out_of_date_is_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "_prebuilt.py"
    stale.write_text(prebuild.render().replace("value.id =", "value.ident ="), encoding="utf-8")
    monkeypatch.setattr(prebuild, "TARGET", stale)
    assert prebuild.main(["--check"]) == 1
    assert prebuild.main([]) == 0  # written anew
    assert prebuild.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == prebuild.render()


def test_every_class_takes_its_builder_from_the_module() -> None:
    classes = prebuild._classes()
    assert {cls.__name__ for cls in classes} >= {"Plan", "Node", "Criterion", "Edge"}
    for cls in classes:
        source, scope = frozen.builder_source(cls)
        assert frozen._prebuilt(cls, source, scope) is not None, cls
        assert frozen._prebuilt(cls, source + "\n", scope) is None  # another source: compiled


@pytest.mark.parametrize("path", FIXTURE_PLANS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_builders_compiled_here_build_what_the_module_builds(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = json.loads(json.dumps(load_plan(path).plan.to_data()))
    taken = Plan.from_data(data)
    # every source changed since the module was written: each builder compiled here
    changed = {key: (source + "#", made) for key, (source, made) in _prebuilt.BUILDERS.items()}
    monkeypatch.setattr(_prebuilt, "BUILDERS", changed)
    monkeypatch.setattr(frozen, "_BUILDERS", {})
    compiled = Plan.from_data(data)
    _same(compiled, taken)
    _same(compiled, _reference(Plan, data))
