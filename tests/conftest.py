"""Shared helpers of the test suite: plan files written into tmp_path, real git repositories, the
real plugin manager cleaned up after a test, the JWT-login sample verified; after each test, what
pytester's in-process runs left of the package's modules taken off."""

from __future__ import annotations

import shutil
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Imported before any pytester run takes its snapshot of sys.modules, so that every in-process
# run reads YAML with libyaml: a `yaml` imported during a run is dropped after it, and a fresh
# `yaml` cannot use libyaml's C parser, which stays loaded with the first import's classes (the
# package then reads with PyYAML's own reader: test_pytester_reruns.py).
import yaml  # noqa: F401
from cli_helpers import plangraph_main
from repo_helpers import git

from pytest_plangraph.hooks import manager as plugins

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown() -> Iterator[None]:
    """After each test (pytester's restore of ``sys.modules`` included), forget the dropped
    modules of the package (:func:`forget_dropped_submodules`)."""
    try:
        return (yield)
    finally:
        forget_dropped_submodules()


def forget_dropped_submodules(prefix: str = "pytest_plangraph") -> None:
    """Take off each package named *prefix* or under it the attributes that name a submodule
    ``sys.modules`` no longer holds (the next import of one imports it anew).

    A pytester run in this process takes out of ``sys.modules`` every module first imported
    during it (at its end, and at the end of the test), but not the attribute the import set
    on the module's package, which stays in ``sys.modules`` when an earlier test imported it.
    A later ``from pytest_plangraph.cli import state_cmds`` (a spy fixture) then gets that old
    module while the command imports ``state_cmds`` anew through ``sys.modules``: the spy
    patches a module nothing runs, and what it counts depends on which tests ran before."""
    for name, module in list(sys.modules.items()):
        if module is None or not hasattr(module, "__path__"):
            continue
        if name != prefix and not name.startswith(f"{prefix}."):
            continue
        for attr, value in list(vars(module).items()):
            full = f"{name}.{attr}"
            if not isinstance(value, types.ModuleType) or getattr(value, "__name__", "") != full:
                continue
            if sys.modules.get(full) is not value:
                delattr(module, attr)


@pytest.fixture
def write_plan(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write dedented YAML text to a file in tmp_path and return its path."""

    def write(text: str, name: str = "plangraph.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write


@pytest.fixture
def project(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a fixture project into tmp_path/<name>, make it a git repository with one commit."""

    def make(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target)
        git(target, "init", "-q", "-b", "main")
        git(target, "add", "-A")
        git(target, "commit", "-q", "-m", "initial")
        return target

    return make


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The real shared plugin manager (no entry points); what a test registers goes away."""
    monkeypatch.setenv(plugins.AUTOLOAD_OFF, "1")
    plugins.clear_cache()
    pm = plugins.get_plugin_manager()
    yield pm
    for name, _ in list(pm.list_name_plugin()):
        if name != plugins.BUILTIN_PLUGIN:
            pm.unregister(name=name)
    plugins.clear_cache()


@pytest.fixture
def jwt(project) -> Path:
    root = project("jwt-login")
    assert plangraph_main(root, "verify").code == 0
    return root


@pytest.fixture
def serve() -> Iterator[Callable[..., Any]]:
    """Start ``plangraph serve`` in a repository (``serve(root, *args, env=None)``, a
    :class:`server_helpers.Server`); every server started is stopped after the test."""
    from server_helpers import start  # httpx: imported by the HTTP API's tests alone

    started: list[Any] = []

    def run(root: Path, *args: str, env: dict[str, str] | None = None) -> Any:
        server = start(root, *args, env=env, name=f"serve{len(started)}")
        started.append(server)
        return server

    yield run
    for server in started:
        server.stop()


@pytest.fixture
def derived(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The formats of the ``plangraph status`` calls that derived (a kept answer adds
    nothing)."""
    from pytest_plangraph.cli import state_cmds

    calls: list[str] = []
    real = state_cmds._derived_status

    def counting(args: object, out: state_cmds.Output) -> list[tuple[str, str]]:
        calls.append(out.fmt)
        return real(args, out)  # type: ignore[arg-type]

    monkeypatch.setattr(state_cmds, "_derived_status", counting)
    return calls


@pytest.fixture
def patched(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each plan read with a cache that missed by its bytes, whether it was patched by
    title (``plan/retitle.py``)."""
    from pytest_plangraph.plan import retitle

    found: list[bool] = []
    real = retitle._retitled

    def spying(*args: Any) -> Any:
        result = real(*args)
        found.append(result is not None)
        return result

    monkeypatch.setattr(retitle, "_retitled", spying)
    return found


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The ``plangraph impact`` calls that opened the plan and made a report (a kept answer
    adds nothing)."""
    from pytest_plangraph.cli import impact_cmds

    calls: list[object] = []
    real = impact_cmds.open_plangraph

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(impact_cmds, "open_plangraph", counting)
    return calls


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """What each plan-free status judgement gave (None: it fell back), and ``"opened"`` for
    each plan opened (:mod:`pytest_plangraph.derived.planfree`)."""
    from pytest_plangraph.derived import planfree
    from pytest_plangraph.repository import Repository

    found: list[Any] = []
    real, opened = planfree._judge, Repository.open

    def judging(*args: Any) -> Any:
        result = real(*args)
        found.append(result)
        return result

    def opening(cls: Any, *args: Any, **kwargs: Any) -> Any:
        found.append("opened")
        return opened.__func__(cls, *args, **kwargs)  # type: ignore[attr-defined]

    monkeypatch.setattr(planfree, "_judge", judging)
    monkeypatch.setattr(Repository, "open", classmethod(opening))
    yield found


@pytest.fixture
def make_immutable() -> Iterator[Callable[..., None]]:
    """Make files or folders immutable with ``chattr +i`` (which binds root too, unlike the
    permission bits): ``make_immutable(*paths)``; every one is made mutable again after."""
    import subprocess

    if shutil.which("chattr") is None:
        pytest.fail("chattr is needed to make a file read-only for root")
    frozen: list[str] = []

    def freeze(*paths: Path) -> None:
        subprocess.run(["chattr", "+i", *map(str, paths)], check=True)
        frozen.extend(map(str, paths))

    yield freeze
    if frozen:
        subprocess.run(["chattr", "-i", *frozen], check=True)
