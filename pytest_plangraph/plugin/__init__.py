"""The pytest entry point of pytest-plangraph: options, the ``criterion`` marker and the switch.

Every pytest run in an environment that has pytest-plangraph installed imports this module, so it
imports nothing heavy (no plan models, YAML, git, jsonschema, SQLite or coverage). Only when
``--plangraph`` is given does :func:`pytest_configure` import and register one
:class:`~pytest_plangraph.plugin.session.PlangraphSession`, which holds the run's state and does
the work; the hooks here stay a few lines each.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .fixture import PlangraphFixture
    from .session import PlangraphSession
    from .soundness import BytecodeGuard

SESSION_KEY: pytest.StashKey[PlangraphSession] = pytest.StashKey()
"""Where the running :class:`PlangraphSession` is kept in ``config.stash``."""
GUARD_KEY: pytest.StashKey[BytecodeGuard] = pytest.StashKey()
"""Where this process's private bytecode cache is kept in ``config.stash``."""
STARTED_KEY: pytest.StashKey[int] = pytest.StashKey()
"""When this process began loading conftests (``time.time_ns()``): a bound file written since
may not be what the run imported (:class:`~pytest_plangraph.plugin.binding.FileBinder`)."""

PACKAGE = __name__.partition(".")[0]
"""This package's top-level name (``pytest_plangraph``)."""
PLAN_SUFFIXES = (".yaml", ".yml", ".json")
MARKER = (
    "criterion(*refs): the test verifies these acceptance criteria of the plan, each written "
    "'node-id/criterion-id' (pytest-plangraph)"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``--plangraph*`` options and the ``plangraph_plan`` ini key."""
    group = parser.getgroup("plangraph", "plan graph evidence (pytest-plangraph)")
    group.addoption(
        "--plangraph",
        nargs="?",
        const="",
        default=None,
        metavar="PLAN",
        help="record the run's verdicts as evidence for the plan's acceptance criteria and "
        "print the plan's state. PLAN defaults to the plangraph_plan ini value, else "
        "plangraph.yaml at the rootdir. A following argument that is not a .yaml/.yml/.json "
        "file is taken as a test path, not as PLAN.",
    )
    group.addoption(
        "--plangraph-store",
        metavar="PATH",
        default=None,
        help="evidence store to write (default: .plangraph/store.db under the repository "
        "root, or $PLANGRAPH_STORE).",
    )
    group.addoption(
        "--plangraph-gate",
        action="store_true",
        default=False,
        help="fail the session (exit 1) when a claimed node, or a --plangraph-require node, "
        "is not completed after the run. Without it the exit code is pytest's own.",
    )
    group.addoption(
        "--plangraph-require",
        action="append",
        default=[],
        metavar="NODE",
        help="a node that must be completed after the run (repeatable); checked by "
        "--plangraph-gate and shown in the summary.",
    )
    group.addoption(
        "--plangraph-coverage",
        action="store_true",
        default=False,
        help="learn which source files (inside the repository) each criterion's tests execute, "
        "bind them as evidence subjects and keep them for `plangraph lint` "
        "(IMPLICIT_DEPENDENCY). Reuses pytest-cov's measurement when --cov is active.",
    )
    group.addoption(
        "--plangraph-stale",
        action="store_true",
        default=False,
        help="collect the whole suite but run only the tests and verifier items of criteria "
        "whose evidence is missing, stale or failed (the rest is deselected); a criterion "
        "records a pass only when its whole test set ran.",
    )
    parser.addini(
        "plangraph_plan",
        help="plan file used by --plangraph, relative to the rootdir (default plangraph.yaml).",
        default="plangraph.yaml",
    )


# a wrapper runs before every plain implementation, pytest-cov's (which builds its Coverage) too
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, args: list[str]
) -> Generator[None, object, object]:
    """Keep ``pytest --plangraph tests/`` from reading ``tests/`` as the plan file; under
    ``--plangraph`` compile every module imported from now on from its source; under
    ``--plangraph-coverage`` make coverage.py use a core that records per-test contexts and
    start recording the import graph."""
    split_plan_argument(args)
    if getattr(early_config.known_args_namespace, "plangraph", None) is not None:
        early_config.stash[STARTED_KEY] = time.time_ns()
        import_plainly()  # before the guard and the session import this package's modules
        from ..bundle import install, uninstall

        install()  # the package's modules read from one file until pytest ends
        early_config.add_cleanup(uninstall)
        # before any conftest, test module or module under test is imported (an xdist worker
        # runs this hook too), so none of them can run bytecode older than its source
        install_guard(early_config)
    if "--plangraph-coverage" in args:
        from .coverage import force_ctrace, observe_imports

        force_ctrace(early_config)
        if getattr(early_config.known_args_namespace, "plangraph", None) is not None:
            observe_imports(early_config)  # before the first conftest imports anything
    return (yield)


def import_plainly() -> None:
    """Let this package's modules be imported as any installed module is, not through pytest's
    assertion rewriter.

    pytest marks every module of a distribution with a ``pytest11`` entry point for assertion
    rewriting, so each module a ``--plangraph`` run imports from this package (the session,
    the API, the store, the derivation: about a hundred) would be loaded by the rewriter, which
    hashes the source and reads its cached bytecode through ``marshal.load`` on an open file,
    about twice the cost of a plain import. The package's own ``assert`` statements are
    type narrowing, never a test's; the bytecode guard leaves this package to the standard
    import as well (:func:`~.coverage.excluded_dirs`). A pytest whose rewriter is laid out
    differently is left as it is."""
    for finder in sys.meta_path:
        if type(finder).__name__ != "AssertionRewritingHook":
            continue
        marked = getattr(finder, "_must_rewrite", None)
        answers = getattr(finder, "_marked_for_rewrite_cache", None)
        if isinstance(marked, set) and isinstance(answers, dict) and PACKAGE in marked:
            marked.discard(PACKAGE)
            answers.clear()


def install_guard(config: pytest.Config) -> BytecodeGuard:
    """This process's :class:`~pytest_plangraph.plugin.soundness.BytecodeGuard`, installed on
    first use and removed when pytest ends."""
    guard = config.stash.get(GUARD_KEY, None)
    if guard is None:
        from ..vcs.roots import find_root
        from .soundness import BytecodeGuard

        root = find_root(config.rootpath)
        if root.parent == root:  # the purge would walk (and delete the bytecode of) every disk
            raise pytest.UsageError(
                f"--plangraph: the rootdir {root} is the file system's root; a run deletes the "
                "cached bytecode under its repository (or under the rootdir outside one) "
                "before it starts: pass the project's folder as --rootdir"
            )
        guard = config.stash[GUARD_KEY] = BytecodeGuard.install(config.rootpath)
        config.add_cleanup(guard.remove)
        worker = getattr(config, "workerinput", None) is not None  # the controller purges
        guard.unpurged = not worker and not _plan_found(config)
        guard.secure(config, root, purge=not worker and not guard.unpurged)
    return guard


def _plan_found(config: pytest.Config) -> bool:
    """Whether the plan file the run names is there. A run without it stops before any test
    (nothing is recorded), so nothing of the tree is purged for it: ``pytest --plangraph``
    started by mistake in a large folder (a home folder outside any repository) deletes no
    cached bytecode (a plan file that appears later stops the run). A path that cannot be
    resolved is taken as found (the purge runs)."""
    from .config import plan_path

    given = getattr(config.known_args_namespace, "plangraph", None) or ""  # parsed early
    # parsed before split_plan_argument: `--plangraph tests/x.py::t` may leave the default
    candidates = [given]
    if given and ("::" in given or Path(given).suffix.lower() not in PLAN_SUFFIXES):
        candidates.append("")
    try:
        return any(os.path.lexists(plan_path(config, value)) for value in candidates)
    except (OSError, RuntimeError, ValueError):  # a link loop, a name the system refuses
        return True


def split_plan_argument(args: list[str]) -> None:
    """Rewrite ``--plangraph X`` to ``--plangraph= X`` (in place) when X is not a plan file."""
    for index, arg in enumerate(args[:-1]):
        if arg != "--plangraph":
            continue
        following = args[index + 1]
        if following.startswith("-"):
            continue
        if "::" in following or Path(following).suffix.lower() not in PLAN_SUFFIXES:
            args[index] = "--plangraph="


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker always; start the session object only under ``--plangraph``."""
    config.addinivalue_line("markers", MARKER)
    if config.getoption("plangraph") is None:
        if config.getoption("plangraph_gate") or config.getoption("plangraph_require"):
            raise pytest.UsageError("--plangraph-gate and --plangraph-require need --plangraph")
        if config.getoption("plangraph_coverage"):
            raise pytest.UsageError("--plangraph-coverage needs --plangraph")
        if config.getoption("plangraph_stale"):
            raise pytest.UsageError("--plangraph-stale needs --plangraph")
        return
    import_plainly()  # done already unless the plug-in was loaded late
    from .origin import SkipOrigin
    from .session import PlangraphSession

    session = PlangraphSession.start(config)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "plangraph-session")
    origin = SkipOrigin(session.plangraph.root, config, session.origins)
    config.pluginmanager.register(origin, "plangraph-origin")
    if session.worker:  # what a worker sends the controller: text execnet can carry
        from .sendable import SendableReports

        config.pluginmanager.register(SendableReports(), "plangraph-sendable")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Before the first test, purge the bytecode tree of a ``PYTHONPYCACHEPREFIX`` a conftest
    or test module set while they were loaded
    (:meth:`~.soundness.BytecodeGuard.purge_new_prefix`)."""
    guard = session.config.stash.get(GUARD_KEY, None)
    if guard is not None:
        guard.purge_new_prefix()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the session object (its store connection) when there is one."""
    if config.getoption("plangraph_coverage", False):
        from .coverage import restore_core

        restore_core(config)
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        del config.stash[SESSION_KEY]
        config.pluginmanager.unregister(session)
        session.close()


@pytest.fixture
def plangraph(request: pytest.FixtureRequest) -> PlangraphFixture:
    """The plan under test, and ``plangraph.artifact(path)`` to bind a file the test produced
    as a subject of this test's evidence."""
    from .fixture import PlangraphFixture

    return PlangraphFixture.for_request(request, request.config.stash.get(SESSION_KEY, None))
