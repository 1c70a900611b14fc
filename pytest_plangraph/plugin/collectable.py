"""What a ``pytest --plangraph`` run could collect under its paths (DESIGN §5 "What binds").

A folder made after the evidence was recorded, or a test file only a ``criterion`` marker
brings in, has no path to bind absent: each folder among the run's paths (and the folders a
``testpaths`` glob could find) binds one subject,
:func:`~pytest_plangraph.vcs.testglob.collect_key`, whose value is the digest of what pytest
could collect there with the run's settings (:func:`collectable`); the gate walks the folder
again. :func:`collected_folders` lists the folders pytest may enter, where a ``conftest.py``
binds absent (:class:`~pytest_plangraph.plugin.binding.FileBinder`).
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..vcs.quotes import CollectValues
from ..vcs.testglob import DOCTEST_TEXT, collect_key

__all__ = [
    "collect_settings",
    "collectable",
    "collected_folders",
    "collects_any_file",
    "collects_from_directory",
    "enters_any_folder",
    "testpaths_key",
]


def collected_folders(
    config: pytest.Config, relative: Callable[[Path], str | None], limit: int = 10_000
) -> list[str]:
    """The repository folders (``""``: the root) under the paths the run collects
    (``config.args``: the command line's, or ``testpaths``) that pytest may enter: not those
    its ``norecursedirs`` leave out, not ``__pycache__``, no symbolic link followed, none
    outside the repository; at most *limit* of them, in walk order."""
    skipped = [str(p) for p in config.getini("norecursedirs")]
    found: dict[str, None] = {}
    for arg in config.args:
        path = Path(str(arg).split("::", 1)[0])
        if not path.is_absolute():
            path = config.invocation_params.dir / path
        if not path.is_dir():
            path = path.parent
        top = relative(path)
        if top is None:
            continue
        pending = [(path, "" if top == "." else top)]
        while pending and len(found) < limit:  # once per folder: kept flat
            folder, rel = pending.pop()
            if rel in found:
                continue
            found[rel] = None
            try:
                with os.scandir(folder) as listing:
                    names = [e.name for e in listing if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for name in sorted(names, reverse=True):
                if name == "__pycache__" or any(fnmatch.fnmatchcase(name, p) for p in skipped):
                    continue
                pending.append((folder / name, f"{rel}/{name}" if rel else name))
    return list(found)


def collect_settings(config: pytest.Config) -> dict[str, Any]:
    """The settings that say which files under its paths pytest collects, as
    :func:`~pytest_plangraph.vcs.testglob.collect_key` keeps them: ``python_files``,
    ``norecursedirs``, the ``--doctest-glob`` patterns (``test*.txt`` without one; none with
    the doctest plugin off), ``--doctest-modules`` and ``--collect-in-virtualenv``; and
    ``any_file`` when :func:`collects_any_file` (left out otherwise, so that the key of a run
    without such a collector is what it was)."""

    def option(name: str, default: Any) -> Any:
        try:
            return config.getoption(name)
        except ValueError:  # the plugin that adds it is not loaded
            return default

    doctest_on = config.pluginmanager.has_plugin("doctest")
    widest = collects_any_file(config) or collects_from_directory(config)
    any_file = {"any_file": True} if widest else {}
    any_folder = {"any_folder": True} if enters_any_folder(config) else {}
    return {
        **any_file,
        **any_folder,
        "python_files": [str(p) for p in config.getini("python_files")],
        "norecursedirs": [str(p) for p in config.getini("norecursedirs")],
        "doctest_glob": [str(p) for p in option("doctestglob", None) or [DOCTEST_TEXT]]
        if doctest_on
        else [],
        "doctest_modules": bool(option("doctestmodules", False)) and doctest_on,
        "venv": bool(option("collect_in_virtualenv", False)),
    }


OWN_COLLECTORS = ("_pytest.", "pytest_plangraph.")
"""The modules whose ``pytest_collect_file`` collect only what the walk lists already:
pytest's Python modules and doctest files, and the plan file's verifier items."""


def collects_any_file(config: pytest.Config) -> bool:
    """Whether a plug-in or ``conftest.py`` of the run implements ``pytest_collect_file``
    (other than pytest's own and the plan file's collector): it may collect tests from any
    file, so what the run could collect is every file of the folders pytest enters. Asked
    after collection, when every conftest pytest loaded is registered."""
    for hook in config.pluginmanager.hook.pytest_collect_file.get_hookimpls():
        plugin = hook.plugin
        name = getattr(plugin, "__name__", None) or type(plugin).__module__
        if not str(name).startswith(OWN_COLLECTORS):
            return True
    return False


def enters_any_folder(config: pytest.Config) -> bool:
    """Whether a ``conftest.py`` or other module of the repository implements
    ``pytest_ignore_collect`` (answering False for a folder, it lets pytest into one that
    ``norecursedirs``, or the rule for ``__pycache__`` and virtual environments, leaves out)
    or ``pytest_collect_directory`` (its own collector may enter any folder): what the run
    could collect is then found in every folder. Installed plug-ins are left out (the
    environment is the runner's, docs/trust.md). Asked after collection, when every conftest
    pytest loaded is registered."""
    hooks = config.pluginmanager.hook
    return _in_repository(config, hooks.pytest_ignore_collect.get_hookimpls()) or (
        _in_repository(config, hooks.pytest_collect_directory.get_hookimpls())
    )


def collects_from_directory(config: pytest.Config) -> bool:
    """Whether a module of the repository implements ``pytest_collect_directory``: the
    collector it returns may collect tests from any file (``check_*.py``, a ``.yaml`` file)."""
    hooks = config.pluginmanager.hook
    return _in_repository(config, hooks.pytest_collect_directory.get_hookimpls())


def _in_repository(config: pytest.Config, implementations: list[Any]) -> bool:
    """Whether one of the hook *implementations* is a module under the rootdir (a
    ``conftest.py``, a plug-in of the repository), other than plangraph's own."""
    root = os.path.join(os.path.realpath(config.rootpath), "")
    for hook in implementations:
        plugin = hook.plugin
        module = plugin if hasattr(plugin, "__file__") else sys.modules.get(type(plugin).__module__)
        name = str(getattr(module, "__name__", ""))
        path = getattr(module, "__file__", None)
        if name.startswith(OWN_COLLECTORS) or not isinstance(path, str):
            continue
        if os.path.realpath(path).startswith(root):
            return True
    return False


def collectable(
    config: pytest.Config,
    relative: Callable[[Path], str | None],
    root: Path,
    values: CollectValues | None = None,
) -> dict[str, str]:
    """For each folder among the paths the run collects (``config.args``: the command line's,
    or ``testpaths``) inside the repository, the subject that stands for what pytest could
    collect there (:func:`~pytest_plangraph.vcs.testglob.collect_key`) and the digest of the
    files it finds (:func:`~pytest_plangraph.vcs.testglob.collect_files`): the gate walks the
    folder again with the same settings, and a ``conftest.py`` or test file found then that
    was not found now (in a folder made since, say) changes the digest and stales the record.
    A path that names a file is left out: pytest collects that file alone.

    When the paths came from ``testpaths``, the entries that are globs, or that named
    nothing, are bound too (:func:`testpaths_key`): a folder made since that one would find
    holds tests the run did not collect. *values* walks each folder (kept for the walks'
    :func:`~pytest_plangraph.vcs.quotes.quotes_key` subjects)."""
    values = CollectValues(os.fspath(root)) if values is None else values
    settings = collect_settings(config)
    found: dict[str, str] = {}
    for arg in config.args:
        path = Path(str(arg).split("::", 1)[0])
        if not path.is_absolute():
            path = config.invocation_params.dir / path
        if not path.is_dir():
            continue
        top = relative(path)
        if top is None:
            continue
        key = collect_key("" if top == "." else top, settings)
        if key not in found:
            found[key] = values.value(key)
    globbed = testpaths_key(config, relative, settings)
    if globbed is not None and globbed not in found:
        found[globbed] = values.value(globbed)
    return found


def testpaths_key(
    config: pytest.Config, relative: Callable[[Path], str | None], settings: dict[str, Any]
) -> str | None:
    """The subject for the ``testpaths`` entries a run's paths came from that may find more
    later: pytest expands each entry with Python's ``glob`` when the run starts (from its
    rootdir, whatever ``norecursedirs`` says), so an entry with a glob (``tests*``,
    ``*/tests``) or one that named nothing then finds whatever is made later. The key holds
    those entries and the rootdir (:func:`~pytest_plangraph.vcs.testglob.collect_key` with
    ``testpaths``): the walk expands them again as pytest does and lists what pytest could
    collect under each folder found. None when the paths did not come from ``testpaths``
    (or under ``--pyargs``, which reads them as module names), when every entry names a
    path that is there (one of the run's paths, bound as such), or when the rootdir is
    outside the repository."""
    pyargs = getattr(config.option, "pyargs", False)
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS or pyargs:
        return None
    root = config.rootpath
    entries = [
        entry
        for entry in map(str, config.getini("testpaths"))
        if any(c in entry for c in "*?[") or not (root / entry).exists()
    ]
    top = relative(root) if entries else None
    if top is None:
        return None
    return collect_key("" if top == "." else top, {**settings, "testpaths": entries})
