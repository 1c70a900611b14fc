"""Where ``pytest --plangraph`` finds its plan and store, and whether a run collects everything.

Read from the pytest configuration only; nothing here imports the plan models, so the
``plangraph`` fixture can use it without ``--plangraph``.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

import pytest


def plan_path(config: pytest.Config) -> Path:
    """The plan file: ``--plangraph=PLAN`` (from the invocation dir), else the
    ``plangraph_plan`` ini value (from the rootdir)."""
    value: str = config.getoption("plangraph") or ""
    if value:
        return (config.invocation_params.dir / value).resolve()
    return (config.rootpath / str(config.getini("plangraph_plan"))).resolve()


def store_path(config: pytest.Config) -> Path | None:
    """``--plangraph-store`` (from the invocation dir), or None for the default."""
    value = config.getoption("plangraph_store")
    return (config.invocation_params.dir / value).resolve() if value else None


def partial_args(config: pytest.Config) -> bool:
    """True when this invocation narrowed the collection (paths, ``--lf``, ``--sw``,
    ``--ignore``, ``--ignore-glob``, or ``-o`` overriding where tests are found), so it records
    no pass and a plan pattern that matches nothing is not ``TEST_NOT_FOUND``. What the
    project's own configuration (its ``addopts``, ``testpaths`` …) leaves out is not a
    narrowing: that configuration defines the suite."""
    source = config.args_source
    if source == pytest.Config.ArgsSource.ARGS:
        return True
    invocation = config.invocation_params.dir
    if source == pytest.Config.ArgsSource.INVOCATION_DIR and invocation != config.rootpath:
        return True
    if any(config.getoption(name, False) for name in ("lf", "stepwise")):
        return True
    try:
        extra = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    except ValueError:  # pytest refuses it first
        extra = []
    return narrowing_options([*config.invocation_params.args, *extra])


NARROWING_INI = frozenset(
    {"testpaths", "norecursedirs", "python_files", "python_classes", "python_functions"}
)
"""Configuration values that decide which tests are collected."""


def narrowing_options(args: Sequence[str]) -> bool:
    """True when *args* (a command line) hold ``--ignore``, ``--ignore-glob`` or an ``-o``
    override of one of :data:`NARROWING_INI`."""
    given = iter(args)
    for arg in given:
        if arg == "--":
            break
        if arg.split("=", 1)[0] in ("--ignore", "--ignore-glob"):
            return True
        if arg in ("-o", "--override-ini"):
            value = next(given, "")
        elif arg.startswith("--override-ini="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-o"):
            value = arg[2:]
        else:
            continue
        if value.split("=", 1)[0].strip() in NARROWING_INI:
            return True
    return False
