"""Writing a patched plan file so that the file and the store never disagree: the repository's
patch lock, the new text staged in a temporary file beside the plan, and its move into place.

``plangraph patch`` stages the new plan, records its ``patch`` events (and the plan version
they name) in one store transaction, and only then moves the staged file over the plan with
``os.replace``: a store that refuses the write leaves the plan as it was and the staged file
removed. A move that fails after the events were recorded is told with both names, and the
staged file is kept: moving it over the plan finishes the patch the events describe.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .errors import PlanMoveError, StoreError

__all__ = ["patch_lock", "put_in_place", "stage"]


@contextmanager
def patch_lock(store_path: Path) -> Iterator[None]:
    """Hold the repository's patch lock (``STORE-lock`` beside the store): two patches written
    against the same plan version are applied one after the other, so the second finds the
    plan changed (``PLAN_VERSION_CONFLICT``) instead of overwriting the first. Where the
    system has no ``fcntl`` (Windows) there is no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock = f"{store_path}-lock"
    try:
        handle = open(lock, "a+b")  # noqa: SIM115 - closed below, after the error is told
    except OSError as exc:
        raise StoreError(
            f"cannot take the patch lock {lock}: {exc.strerror or exc}; nothing was written — "
            "check the permissions of the store's folder, or pass --store to use another"
        ) from None
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def stage(path: Path, text: str) -> tuple[Path, Path]:
    """Write *text* to a new temporary file beside the plan at *path* (where a symbolic link
    leads: the link stays), with the plan's permission bits and as it will be read (line ends
    and a byte order mark as *text* has them); return the plan's real path and the staged
    file. Nothing is left behind when writing fails."""
    import tempfile  # a patch alone needs it: not imported by the commands that only read

    target = Path(os.path.realpath(path))
    mode = target.stat().st_mode & 0o7777
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".patch")
    staged = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(staged, mode)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return target, staged


def put_in_place(staged: Path, target: Path, version: int, events: Sequence[str]) -> None:
    """Move the *staged* plan over *target* in one step (a reader sees the old plan or the
    new, whole). When the system refuses, :class:`PlanMoveError` says that plan version
    *version* was recorded (by *events*) and how to finish: the staged file is kept."""
    try:
        os.replace(staged, target)
    except OSError as exc:
        recorded = ", ".join(event[:12] for event in events) or "none"
        raise PlanMoveError(
            f"the patch was recorded (plan version {version}, patch events {recorded}) but "
            f"the plan file {target} could not be replaced: {exc.strerror or exc}; the "
            f"patched plan is kept in {staged} — move it over {target} to finish the patch "
            "(status judges the plan file as it is until then)"
        ) from None
