"""Where ``pytest --plangraph`` finds its plan and store, and whether a run collects everything.

Read from the pytest configuration only; nothing here imports the plan models, so the
``plangraph`` fixture can use it without ``--plangraph``.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..errors import PlangraphError, StoreTamperedError
from .configdirs import CONFIG_NAMES

if TYPE_CHECKING:
    from ..vcs.workspace import Workspace


DEFAULT_PLAN = "plangraph.yaml"


def plan_path(config: pytest.Config, given: str | None = None) -> Path:
    """The plan file: ``--plangraph=PLAN`` (from the invocation dir; *given* is its value
    when the options are not parsed yet), else the ``plangraph_plan`` ini value (from the
    rootdir). The default, ``plangraph.yaml``, is looked for at the repository root too when
    the rootdir has none (a project in a folder of its repository): there ``plangraph init``
    writes it and the commands read it."""
    value: str = (config.getoption("plangraph") if given is None else given) or ""
    if value:
        return (config.invocation_params.dir / value).resolve()
    named = str(config.getini("plangraph_plan"))
    path = (config.rootpath / named).resolve()
    if named == DEFAULT_PLAN and not os.path.lexists(path):
        from ..vcs.roots import find_root

        top = find_root(config.rootpath) / DEFAULT_PLAN
        if os.path.lexists(top):
            return top
    return path


def store_path(config: pytest.Config) -> Path | None:
    """``--plangraph-store`` (from the invocation dir), or None for the default."""
    value = config.getoption("plangraph_store")
    return (config.invocation_params.dir / value).resolve() if value else None


def partial_args(config: pytest.Config, root: Path | None = None) -> bool:
    """True when this invocation narrowed the collection (paths, ``--lf``, ``--sw``,
    ``--ignore``, ``--ignore-glob``, another configuration file, or ``-o`` overriding what is
    collected), so it records no pass and a plan pattern that matches nothing is not
    ``TEST_NOT_FOUND``. What the project's own configuration (its ``addopts``, ``testpaths``
    …) leaves out is not a narrowing: that configuration defines the suite."""
    return narrowed_by(config, root) is not None


_NARROWING_WORDS = {
    "ignore": "--ignore or --ignore-glob",
    "config": "another configuration file (-c, --config-file)",
    "override": "an -o override of what the suite collects or how it runs",
    "loosen": "an option that loosens the configuration, one of -p no:NAME, -W, --runxfail, "
    "--noconftest and --confcutdir",
    "autoload": "plug-in autoloading disabled (--disable-plugin-autoload, "
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD) while an installed plug-in that may change outcomes is "
    "not loaded",
}
"""How the summary names each kind of :func:`narrowing_options`."""


def narrowed_by(config: pytest.Config, root: Path | None = None) -> str | None:
    """What narrows this invocation's collection, in words for the run's summary (see
    :func:`partial_args`); None for a run of the whole suite. *root*, the repository's root
    when given, is searched for a configuration file above the one the run read
    (:func:`~.configdirs.configuration_above`)."""
    source = config.args_source
    if source == pytest.Config.ArgsSource.ARGS:
        return "test paths or ids on the command line"
    invocation = config.invocation_params.dir
    if source == pytest.Config.ArgsSource.INVOCATION_DIR and invocation != config.rootpath:
        return "running from a folder other than the rootdir"
    from .configdirs import configuration_above, rootdir_below_plan

    plan = plan_path(config)
    if root is not None and (above := configuration_above(config, root, plan)) is not None:
        return f"running under a configuration file below the repository's {above}"
    if rootdir_below_plan(config, plan):
        return "running in a folder below the plan file's, with no configuration file of its own"
    flags = [
        flag
        for name, flag in (("lf", "--lf"), ("stepwise", "--sw"))
        if config.getoption(name, False)
    ]
    if flags:
        return " and ".join(flags)
    try:
        extra = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    except ValueError:  # pytest refuses it first
        extra = []
    try:
        args = _with_argfiles([*config.invocation_params.args, *extra], invocation)
    except RecursionError:
        return "@file arguments nested too deep to read"
    except ArgfileUnreadError as exc:
        return f"an @file argument that cannot be read again ({exc})"
    found = narrowing_options(args)
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):  # any text, as pytest reads it
        found.add("autoload")
    if "autoload" in found and not left_out_plugins(config):
        found.discard("autoload")
    if found == {"config"} and _own_config(config):
        return None
    return ", and ".join(_NARROWING_WORDS[kind] for kind in sorted(found)) or None


NARROWING_INI = frozenset(
    {
        "testpaths",
        "norecursedirs",
        "python_files",
        "python_classes",
        "python_functions",
        "collect_imported_tests",
        "addopts",  # any option at all: --ignore, --deselect …
        # values that decide whether a test fails: which warnings are errors, which fixtures
        # every test uses, where modules are imported from, which conftest files load
        "filterwarnings",
        "usefixtures",
        "pythonpath",
        "confcutdir",
        # whether a doctest's output matches, a test with an unknown marker or an empty
        # parameter set fails, which module a name imports, which plugins must be there
        "doctest_optionflags",
        "doctest_encoding",
        "markers",
        "empty_parameter_set_mark",
        "consider_namespace_packages",
        "required_plugins",
    }
)
"""Configuration values that decide which tests are collected, or whether they can fail."""

STRICT_INI = frozenset(
    {
        "strict",
        "strict_xfail",
        "xfail_strict",
        "strict_markers",
        "strict_parametrization_ids",
        "strict_config",
    }
)
"""Switches that make a test fail (a strict XPASS, an unknown marker …): overriding one to
true tightens the configuration, to anything else may loosen it (a strict XPASS the
project's configuration fails becomes an XPASS that ``xfail: allow`` lets through)."""

_TRUE = frozenset({"y", "yes", "t", "true", "on", "1"})
"""The texts pytest reads a boolean setting as true from."""

LOOSENING_FLAGS = frozenset({"--runxfail", "--noconftest", "--confcutdir"})
"""Options that make a test pass that the project's configuration would not let pass: run
expected failures as ordinary tests, skip the ``conftest.py`` files, stop loading them above a
directory."""

HARMLESS_PLUGINS = frozenset(
    {
        "cacheprovider",
        "pastebin",
        "junitxml",
        "stepwise",
        "faulthandler",
        "cov",
        "xdist",
        "xdist.looponfail",
        "pytest_cov",
        "randomly",
    }
)
"""Plugins that ``-p no:NAME`` may disable without changing any test's outcome; disabling any
other (``warnings`` turns ``filterwarnings = error`` off, ``skipping`` ignores ``xfail``
marks, a project's own plugin takes its fixtures and hooks away) is a narrowing."""


def left_out_plugins(config: pytest.Config) -> list[str]:
    """The installed pytest plug-ins (``pytest11`` entry points) this run did not load, but
    for :data:`HARMLESS_PLUGINS`: with autoloading disabled, each is left out as ``-p
    no:NAME`` would leave it out (one that fails tests the project's suite relies on, say)."""
    from importlib.metadata import entry_points

    manager = config.pluginmanager
    loaded = {getattr(plugin, "__name__", None) for plugin in manager.get_plugins()}
    return sorted(
        {
            point.name
            for point in entry_points(group="pytest11")
            if point.name not in HARMLESS_PLUGINS
            and manager.get_plugin(point.name) is None
            and point.module not in loaded
        }
    )


def _own_config(config: pytest.Config) -> bool:
    """True when the file named by ``-c`` is the project's own configuration file at its
    rootdir (as CI and tox often name it), not another suite's."""
    path = config.inipath
    return path is not None and path.name in CONFIG_NAMES and path.parent == config.rootpath


_ARGFILE_DEPTH = 32
"""How deep ``@file`` arguments naming further ``@file`` arguments are read; a deeper nesting
(pytest's parser reads them all, up to its recursion limit) makes :func:`_with_argfiles`
raise RecursionError, which narrows the run."""


class ArgfileUnreadError(Exception):
    """An ``@file`` argument pytest's parser read could not be read again: a pipe (a shell's
    ``@<(...)``, a named FIFO), whose bytes the parser took, or a file gone since; what it
    held is unknown, so the run is taken as narrowed. The message names the file and why."""


def _with_argfiles(args: Sequence[str], directory: Path, depth: int = 0) -> list[str]:
    """*args* with each ``@file`` replaced by the arguments it holds, one a line, an ``@file``
    among them read in turn (pytest's parser, argparse's, reads them so, each from the
    invocation folder). Its bytes are decoded as the file system's names are (undecodable
    bytes kept as escapes), so that no option on a line of its own is missed for another
    line. A file that is not a regular one is not opened to wait on, nor read: raises
    :class:`ArgfileUnreadError` for it and for one that cannot be read (pytest's parser,
    which read every ``@file`` before, refused the run for one it could not read)."""
    from ..regularfile import read_regular

    if depth > _ARGFILE_DEPTH:
        raise RecursionError("@file arguments nested too deep")
    expanded: list[str] = []
    for arg in args:
        if arg.startswith("@") and len(arg) > 1:
            try:
                raw = read_regular(directory / arg[1:])
            except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
                why = getattr(exc, "strerror", None) or str(exc)
                raise ArgfileUnreadError(f"{arg}: {why}") from None
            lines = raw.decode("utf-8", "surrogateescape").splitlines()  # an empty one too
            expanded.extend(_with_argfiles(lines, directory, depth + 1))
        else:
            expanded.append(arg)
    return expanded


def narrowing_options(args: Sequence[str]) -> set[str]:
    """What in *args* (a command line) narrows the collection or loosens the suite:
    ``"ignore"`` (``--ignore``, ``--ignore-glob``), ``"config"`` (another configuration file:
    ``-c``, ``--config-file``), ``"override"`` (an ``-o`` override of one of
    :data:`NARROWING_INI`, or of :data:`STRICT_INI` to anything but true, also inside a group
    of short flags: ``-vo``), ``"loosen"``
    (:data:`LOOSENING_FLAGS`, ``-p no:NAME`` of a plugin not in :data:`HARMLESS_PLUGINS`, a
    ``-W`` warning filter other than ``error``); empty when nothing does."""
    found: set[str] = set()
    given = iter(args)
    for arg in given:
        if arg == "--":
            break
        name = arg.split("=", 1)[0]
        if name in ("--ignore", "--ignore-glob"):
            found.add("ignore")
            continue
        if name in LOOSENING_FLAGS:
            found.add("loosen")
            continue
        if name == "--disable-plugin-autoload":
            found.add("autoload")
            continue
        if name == "--pythonwarnings":
            value = arg.split("=", 1)[1] if "=" in arg else next(given, "")
            if _loosens(("W", value)):
                found.add("loosen")
            continue
        if name == "--config-file":
            found.add("config")
            if "=" not in arg:
                next(given, "")
            continue
        if name == "--override-ini":
            value = arg.split("=", 1)[1] if "=" in arg else next(given, "")
        elif arg.startswith("-") and not arg.startswith("--"):
            option, value = short_option(arg, given)
            if option == "c":
                found.add("config")
            if _loosens((option, value)):
                found.add("loosen")
            if option != "o":
                continue
        else:
            continue
        name, _, setting = value.partition("=")
        name = name.strip()
        if name in NARROWING_INI:
            found.add("override")
        elif name in STRICT_INI and setting.strip().lower() not in _TRUE:
            found.add("override")
    return found


def _loosens(option: tuple[str, str]) -> bool:
    """True for ``-p no:NAME`` of a plugin that may change outcomes, and for a ``-W`` filter
    whose action is not ``error`` (it may override ``filterwarnings = error``)."""
    letter, value = option
    if letter == "p":
        return value.startswith("no:") and value[3:].strip() not in HARMLESS_PLUGINS
    return letter == "W" and value.split(":", 1)[0].strip() != "error"


_SHORT_WITH_VALUE = frozenset("ckmoprnW")
"""pytest's (and pytest-xdist's) short options that take a value."""


def short_option(arg: str, rest: Iterator[str]) -> tuple[str, str]:
    """The first value-taking option in a group of short flags (``-vo x=y``: ``o``) and its
    value (the rest of the group, or the next argument); ("", "") when there is none. A
    short option alone joined to its value by ``=`` (``-o=x=y``) has the text after the
    ``=`` for its value, as pytest's parser (argparse) reads it."""
    if arg[2:3] == "=" and arg[1:2] in _SHORT_WITH_VALUE:
        return arg[1], arg[3:]
    for index, letter in enumerate(arg[1:], start=2):
        if letter in _SHORT_WITH_VALUE:
            return letter, arg[index:] or next(rest, "")
    return "", ""


def test_id_prefix(workspace: Workspace, rootdir: Path) -> str:
    """What turns a node id (relative to the rootdir) into a repository-relative test id."""
    try:
        relative = workspace.relative(rootdir)
    except PlangraphError:
        return ""
    return "" if relative == "." else f"{relative}/"


def pytest_terms(message: str) -> str:
    """*message* of the store or the plan, its advice given in pytest's options: the store is
    named with ``--plangraph-store`` here, not the command's ``--store``."""
    return re.sub(r"(?<![\w-])--store\b", "--plangraph-store", message)


def refusal(exc: PlangraphError, gated: bool) -> BaseException:
    """What stops a run whose start failed with *exc*: a usage error (exit 4), except for a
    store edited outside plangraph under ``--plangraph-gate`` (*gated*): then the gate
    refuses (exit 1), since nothing can be completed on that store, and no test runs."""
    if gated and isinstance(exc, StoreTamperedError):
        message = "plangraph " + _gate_refused(exc, "no test was run, nothing was recorded")
        return pytest.exit.Exception(message, returncode=pytest.ExitCode.TESTS_FAILED)
    return pytest.UsageError(f"--plangraph: {pytest_terms(str(exc))}")


def unrecorded(exc: PlangraphError, gated: bool) -> tuple[str, pytest.ExitCode]:
    """The summary's error line and the exit status of a run whose evidence could not be
    recorded (*exc*): a usage error, or under ``--plangraph-gate`` (*gated*) the gate's
    refusal when the store was edited outside plangraph."""
    if gated and isinstance(exc, StoreTamperedError):
        return _gate_refused(exc, "evidence was not recorded"), pytest.ExitCode.TESTS_FAILED
    return f"evidence was not recorded: {pytest_terms(str(exc))}", pytest.ExitCode.USAGE_ERROR


def _gate_refused(exc: StoreTamperedError, what: str) -> str:
    return f"gate refused: {pytest_terms(str(exc))} ({what}; the store is left as it is)"
