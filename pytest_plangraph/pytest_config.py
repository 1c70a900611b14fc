"""Where ``pytest --plangraph`` finds its plan and store, and whether a run collects everything.

Read from the pytest configuration only; nothing here imports the plan models, so the
``plangraph`` fixture can use it without ``--plangraph``.
"""

from __future__ import annotations

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
    """True when the command line narrowed the collection (paths, ``--lf``, ``--sw``), so a
    plan pattern that matches nothing is not ``TEST_NOT_FOUND``."""
    source = config.args_source
    if source == pytest.Config.ArgsSource.ARGS:
        return True
    invocation = config.invocation_params.dir
    if source == pytest.Config.ArgsSource.INVOCATION_DIR and invocation != config.rootpath:
        return True
    return any(config.getoption(name, False) for name in ("lf", "stepwise"))
