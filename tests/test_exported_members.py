"""The public surface of pytest_plangraph: its names are pinned, so that moving modules inside
the package never changes what users import."""

from __future__ import annotations

import pytest_plangraph


def test_the_public_names_are_pinned() -> None:
    assert pytest_plangraph.__all__ == ["PlanGraph", "__version__"]


def test_every_public_name_resolves() -> None:
    for name in pytest_plangraph.__all__:
        assert getattr(pytest_plangraph, name) is not None
    assert pytest_plangraph.PlanGraph.__name__ == "PlanGraph"
    assert isinstance(pytest_plangraph.__version__, str)
