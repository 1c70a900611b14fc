"""Where a verification runs: the repository's paths, git, the clock, who records, CI.

The plain facts every evidence record and event needs, gathered in one place for the API, the
CLI and the pytest plugin.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .._version import __version__
from ..canonical import encodes_as_utf8
from ..errors import UsageError
from .roots import find_root

TYPE_CHECKING = False
if TYPE_CHECKING:  # resolving paths (a status answered from the kept state) loads no model,
    # no git module and no platform facts: what a run records is imported where it is made
    from ..plan.evidence import GitInfo, RunInfo

DEFAULT_PLAN = "plangraph.yaml"
DEFAULT_STORE = ".plangraph/store.db"
"""Where the store lives, relative to the repository root."""
CI_VARIABLES = (
    "CI",
    "GITHUB_RUN_ID",
    "GITHUB_RUN_ATTEMPT",
    "GITHUB_SHA",
    "GITHUB_REF",
    "GITHUB_WORKFLOW",
    "GITLAB_CI",
    "CI_PIPELINE_ID",
    "CI_JOB_ID",
    "BUILDKITE_BUILD_ID",
    "CIRCLE_BUILD_NUM",
    "JENKINS_URL",
    "BUILD_ID",
)


def now() -> str:
    """The current UTC time in ISO 8601 with microseconds."""
    from datetime import datetime, timezone  # here: a kept answer reads no clock

    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


LOGIN_VARIABLES = ("LOGNAME", "USER", "LNAME", "USERNAME")
"""Where :func:`getpass.getuser` looks for the login name before the password database."""


def actor() -> str:
    """Who records evidence when nobody is named: ``PLANGRAPH_ACTOR``, else the login name.
    A blank ``PLANGRAPH_ACTOR`` names nobody; one with control characters is refused, as
    ``--by`` refuses them (a line break would forge a line of ``history``)."""
    if (name := os.environ.get("PLANGRAPH_ACTOR", "")).strip():
        if (problem := _name_problem(name)) is not None:
            raise UsageError(f"PLANGRAPH_ACTOR: {problem}")
        return name
    # the variables getpass.getuser() reads first, in its order; getpass (with termios and
    # pwd) only when none is set, for the password database
    login = next(filter(None, map(os.environ.get, LOGIN_VARIABLES)), None)
    if login is None:
        import getpass

        try:
            login = getpass.getuser()
        except (KeyError, OSError):
            return "unknown"
    if (problem := _name_problem(login)) is not None:
        raise UsageError(
            f"the login name (LOGNAME, USER or the password database): {problem}; set "
            "PLANGRAPH_ACTOR to name who records"
        )
    return login


def _name_problem(name: str) -> str | None:
    """Why *name*, taken from the environment, cannot name who records (as ``--by`` is
    checked), or None; text that is not UTF-8 could not be stored at all."""
    from ..apicheck import name_problem

    if not encodes_as_utf8(name):
        return "it is not valid UTF-8 text; set it in UTF-8"
    return name_problem(name)


def run_info(
    started: str,
    finished: str,
    pytest_version: str | None = None,
    run_id: str | None = None,
    *,
    optimize: int | None = None,
    assert_mode: str | None = None,
    ci: dict[str, str] | None = None,
) -> RunInfo:
    """A :class:`RunInfo` for a verification run (a fresh id unless *run_id* is given) with the
    CI variables that are set (*ci*: as :func:`ci_variables` read them earlier) and, from a
    pytest run, its interpreter's optimize level and pytest's assertion mode."""
    import platform
    import uuid

    from ..plan.evidence import RunInfo

    if ci is None:
        ci = ci_variables()
    return RunInfo(
        id=run_id or uuid.uuid4().hex,
        started=started,
        finished=finished,
        python=platform.python_version(),
        pytest=pytest_version,
        plugin=__version__,
        ci=ci,
        optimize=optimize,
        assert_mode=assert_mode,
    )


def ci_variables() -> dict[str, str]:
    """The CI variables that are set, each refused when it is not UTF-8 text (it would be
    recorded in every evidence's ``run``)."""
    ci = {name: os.environ[name] for name in CI_VARIABLES if os.environ.get(name)}
    for name, value in ci.items():
        if not encodes_as_utf8(value):
            raise UsageError(f"the environment variable {name} is not valid UTF-8 text; fix it")
    return ci


def git_info(root: Path, store: Path | None = None) -> GitInfo:
    """Commit, branch and dirty flag of the repository at *root* (empty outside git); the
    *store* file and its journal files inside the repository never count as changes. One
    ``git status`` call (:mod:`.status`), no GitPython."""
    from ..plan.evidence import GitInfo
    from .status import read_git_status as git_state

    ignore: tuple[str, ...] = ()
    if store is not None and store.is_relative_to(root):
        ignore = (store.relative_to(root).as_posix(),)
    state = git_state(root, ignore)
    return GitInfo(commit=state.commit, dirty=state.dirty, branch=state.branch)


def resolve_paths(
    root: Path | None, plan: Path | None, store: Path | None
) -> tuple[Path, Path, Path]:
    """Repository root, plan file and store file from what the caller gave (any may be None)."""
    if plan is not None and root is None:
        root = find_root(_resolved(plan, "--plan").parent)
    root = find_root(Path.cwd()) if root is None else _resolved(root, "--root")
    plan_path = _resolved(plan, "--plan") if plan is not None else root / DEFAULT_PLAN
    if store is None and (env := os.environ.get("PLANGRAPH_STORE")):
        store = Path(env)
    store_path = _resolved(store, "--store") if store is not None else root / DEFAULT_STORE
    return root, plan_path, store_path


def _resolved(path: Path, option: str) -> Path:
    """*path* made absolute, symlinks followed; UsageError when they loop."""
    try:
        return path.resolve()
    except RuntimeError:  # Python before 3.13: "Symlink loop from …"
        raise UsageError(f"{option} {path}: its symlinks loop; point it at a real file") from None


def store_files(root: Path, store_path: Path) -> list[str]:
    """The store file, its SQLite journal files and the lock ``plangraph patch`` takes,
    relative to *root* when inside it."""
    if not store_path.is_relative_to(root):
        return []
    rel = store_path.relative_to(root).as_posix()
    return [rel, f"{rel}-wal", f"{rel}-shm", f"{rel}-journal", f"{rel}-lock"]


def ignore_store_dir(store_path: Path) -> None:
    """Keep git from calling the tree dirty because of the store: the default store directory
    gets a ``.gitignore`` of ``*`` (never overwritten; a read-only directory is left alone)."""
    directory = store_path.parent
    if directory.name != ".plangraph":
        return
    marker = directory / ".gitignore"
    with contextlib.suppress(OSError):
        if not marker.exists():
            marker.write_text("# evidence store of pytest-plangraph\n*\n", encoding="utf-8")
