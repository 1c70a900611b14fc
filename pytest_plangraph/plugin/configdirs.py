"""Where the run's rootdir and configuration file lie against the plan file's folder and the
repository's other configuration files: the runs that collected only part of the suite the
plan means (:func:`~.config.narrowed_by` names them), though nothing on their command line
narrowed it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CONFIG_NAMES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
"""The names pytest looks for a configuration file by, in the order it prefers them within
one folder (``_pytest.config.findpaths``; ``pytest.toml`` and ``.pytest.toml`` since pytest 9;
the binder binds them absent under an older pytest as well: conservative)."""


ALWAYS_READ = frozenset({"pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"})
"""The configuration files pytest reads whatever they hold (the others need a pytest section)."""


def rootdir_below_plan(config: pytest.Config, plan: Path) -> bool:
    """True when the rootdir lies below the folder of the plan file *plan* and holds no
    configuration file the run read: the run took the folder it was started in (or one
    holding ``setup.py``, or the one ``--rootdir`` names) for its rootdir, and collected the
    tests under it alone, while the plan's other tests (marked, or matched by a glob) lie
    beside it. A project whose own configuration file lies in the rootdir (one package of a
    larger repository) defines its suite there, when it holds pytest's settings: a
    ``pyproject.toml`` with no pytest table (a package's build settings), which pytest reads
    when it finds no other, defines none."""
    rootdir = Path(os.path.realpath(config.rootpath))
    if Path(os.path.realpath(plan.parent)) not in rootdir.parents:
        return False
    inipath = config.inipath
    if inipath is None or Path(os.path.realpath(inipath.parent)) != rootdir:
        return True
    return not _holds_pytest_settings(inipath)


def _holds_pytest_settings(path: Path) -> bool:
    """Whether the configuration file *path* is one pytest reads whatever it holds, or holds a
    pytest section; one that is not read whole (too large, unreadable, no regular file) is
    taken for one that does not, so the run records no pass."""
    from ..judge.sections import has_pytest_section
    from ..regularfile import read_regular
    from ..vcs.pythonpath import MAX_CONFIG_BYTES

    if path.name in ALWAYS_READ:
        return True
    try:  # a regular file (swapped for a FIFO since: not waited on), not too large
        raw = read_regular(path, MAX_CONFIG_BYTES)
    except OSError:  # TooLargeError too
        return False
    return has_pytest_section(path.name, raw.decode("utf-8", "replace"))


def configuration_above(config: pytest.Config, root: Path, plan_file: Path) -> str | None:
    """The path (from the folder searched last) of a pytest configuration file in a folder
    above the one of the file this run read, up to the folder that holds both that folder and
    the plan file's (*root*, the repository's root, bounds it): a run started there reads it
    and collects this run's tests under it, so a run started below it (``cd tests && pytest``
    with a ``tests/pytest.ini``, the plan at the root) left the project's configuration out;
    None when there is none (or the run read no file, or one outside the repository). A
    project whose plan lies beside its own configuration file (one package of a larger
    repository) is not searched above it."""
    from ..judge.sections import has_pytest_section
    from ..regularfile import TooLargeError, read_regular
    from ..vcs.pythonpath import MAX_CONFIG_BYTES

    inipath = config.inipath
    if inipath is None:
        return None
    repository = Path(os.path.realpath(root))
    folder = Path(os.path.realpath(inipath.parent))
    plan = Path(os.path.realpath(plan_file.parent))
    if repository not in folder.parents or (plan != repository and repository not in plan.parents):
        return None
    top = Path(os.path.commonpath([folder, plan]))
    if top == folder:
        return None
    for above in folder.parents:
        for name in CONFIG_NAMES:
            path = above / name
            if not path.is_file():
                continue
            if name not in ALWAYS_READ:
                try:  # a regular file (swapped for a FIFO since: not waited on), not too large
                    raw = read_regular(path, MAX_CONFIG_BYTES)
                except TooLargeError:
                    raw = None  # not read whole: taken as one holding a pytest section
                except OSError:
                    raw = b""  # unreadable: pytest could not read it either
                text = None if raw is None else raw.decode("utf-8", "replace")
                if text is not None and not has_pytest_section(name, text):
                    continue
            return path.relative_to(repository).as_posix()
        if above == top:
            break
    return None
