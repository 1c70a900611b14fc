"""Files the commands write for the user (``--output FILE``): written whole or not at all.

Each is written to a temporary file beside its path and renamed over it once complete, so a
command that fails midway (an event that cannot be read, a full disk) leaves an existing file
as it was and no partial one. A symbolic link is followed (its target is written so, the link
stays), and what is not a file (a named pipe, ``/dev/stdout``, a device) is written into as it
is, never replaced.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from ..errors import UsageError

if TYPE_CHECKING:
    from ..api import PlanGraph

__all__ = ["check_output", "standard_output", "write_text", "write_whole"]

_T = TypeVar("_T")


def standard_output(what: str) -> TextIO:
    """The standard output, to print *what* (the events, the plan) on; :class:`UsageError`
    when the command was started with it closed (nothing would be written)."""
    if sys.stdout is None:
        raise UsageError(
            f"standard output is closed, so {what} cannot be printed: name a file with "
            "--output FILE"
        )
    return sys.stdout


def check_output(output: Path, plangraph: PlanGraph, what: str) -> None:
    """Refuse an *output* path that is a folder, the plan, the store or one of the store's
    files (through a link too): writing *what* (a report, an attestation) must never overwrite
    what it was made from."""
    target = os.path.realpath(output)
    if os.path.isdir(target):
        raise UsageError(f"--output {output} is a directory; name a file, e.g. {output}/{what}")
    for path, name in ((plangraph.plan_path, "plan"), (plangraph.store_path, "store")):
        if path is None:
            continue
        real = os.path.realpath(path)
        for suffix in ("", "-wal", "-shm", "-journal") if name == "store" else ("",):
            if target == real + suffix or _same_file(output, Path(real + suffix)):
                raise UsageError(
                    f"--output {output} is the {name} file (or one of its files); write the "
                    f"{what} somewhere else"
                )


def _same_file(one: Path, other: Path) -> bool:
    """Whether *one* and *other* are the same file (a hard link included)."""
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def write_whole(path: Path, write: Callable[[TextIO], _T], *, overwrite: bool = True) -> _T:
    """Run *write* on a temporary file beside *path*, then put it at *path* and return what
    *write* returned. The file gets the mode a new file would get (or the mode of the file it
    replaces). Without *overwrite*, an existing *path* is refused, one that appears meanwhile
    included: it is never replaced."""
    if not overwrite and os.path.lexists(path):
        raise UsageError(f"refusing to overwrite {path}; name another --output FILE")
    if _stream(path):
        return _write_into(path, write)
    if os.path.islink(path):  # the link stays; its target is the file written
        path = Path(os.path.realpath(path))
    folder = path.parent if str(path.parent) else Path(".")
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        mode = 0o666 & ~mask
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            result = write(handle)
        os.chmod(temporary, mode)
        if overwrite:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # fails when a file appeared meanwhile: never replaced
            os.unlink(temporary)
    except OSError as exc:
        if os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(exc, FileExistsError):
            raise UsageError(f"refusing to overwrite {path}; name another --output FILE") from None
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return result


def _stream(path: Path) -> bool:
    """Whether *path* (followed through links) is there and is neither a file nor a folder: a
    named pipe, a terminal, ``/dev/null`` or ``/dev/stdout``, which are written into."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_into(path: Path, write: Callable[[TextIO], _T]) -> _T:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            return write(handle)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def write_text(path: Path, text: str, *, overwrite: bool = True) -> None:
    """Write *text* to *path* whole (:func:`write_whole`)."""
    write_whole(path, lambda handle: handle.write(text), overwrite=overwrite)
