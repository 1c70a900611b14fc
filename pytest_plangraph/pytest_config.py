"""Where ``pytest --plangraph`` finds its plan and store, and whether a run collects everything.

Read from the pytest configuration only; nothing here imports the plan models, so the
``plangraph`` fixture can use it without ``--plangraph``.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Sequence
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
    """True when *args* (a command line) hold ``--ignore``, ``--ignore-glob``, another
    configuration file (``-c``, ``--config-file``: it defines another suite), or an ``-o``
    override of one of :data:`NARROWING_INI` (also inside a group of short flags: ``-vo``)."""
    given = iter(args)
    for arg in given:
        if arg == "--":
            break
        name = arg.split("=", 1)[0]
        if name in ("--ignore", "--ignore-glob", "--config-file"):
            return True
        if name == "--override-ini":
            value = arg.split("=", 1)[1] if "=" in arg else next(given, "")
        elif arg.startswith("-") and not arg.startswith("--"):
            option, value = _short_option(arg, given)
            if option == "c":
                return True
            if option != "o":
                continue
        else:
            continue
        if value.split("=", 1)[0].strip() in NARROWING_INI:
            return True
    return False


_SHORT_WITH_VALUE = frozenset("ckmoprnW")
"""pytest's (and pytest-xdist's) short options that take a value."""


def _short_option(arg: str, rest: Iterator[str]) -> tuple[str, str]:
    """The first value-taking option in a group of short flags (``-vo x=y``: ``o``) and its
    value (the rest of the group, or the next argument); ("", "") when there is none."""
    for index, letter in enumerate(arg[1:], start=2):
        if letter in _SHORT_WITH_VALUE:
            return letter, arg[index:] or next(rest, "")
    return "", ""
