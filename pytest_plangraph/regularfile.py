"""Reading a file that must be a regular one: the one place that opens it without waiting, looks
at what it opened, and refuses anything else.

Whatever sits at a path this package reads (a cache file, a key, a plan, a file of the
repository) may be something other than a regular file: a named pipe (FIFO), whose opening for
reading waits for a writer that may never come; a device, ``/dev/zero`` say, read without end; a
terminal, which opening could make the process's controlling terminal; a directory. So the path
is opened without waiting (``O_NONBLOCK``) and without taking a terminal (``O_NOCTTY``), the
opened file is looked at (``fstat``: what was opened, not what the path named a moment before),
and anything but a regular file is refused before a byte is read: a directory with
IsADirectoryError, as opening one for reading is, anything else with :class:`NotRegularFileError`.
A size limit refuses a larger file the same way (:class:`TooLargeError`), from its stat, before
it is read. :mod:`.bundle` keeps its own copy of this, written out: it runs before any other
module of the package is imported.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # typing is not imported at run time (see :mod:`.values`)
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Literal, overload
else:

    def overload(function: Any) -> Any:
        return function


__all__ = ["NotRegularFileError", "TooLargeError", "open_regular", "read_regular"]

_NO_WAIT = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
"""Opening a FIFO for reading waits for a writer, and a terminal could become ours: neither."""


class NotRegularFileError(OSError):
    """What is at the path is no regular file nor a directory (a FIFO, a device, a socket): its
    mode is :attr:`mode`; ``strerror`` says it as a cause (``it is not a regular file``)."""

    def __init__(self, path: Any, mode: int) -> None:
        super().__init__(f"{os.fspath(path)} is not a regular file")
        self.strerror = "it is not a regular file"
        self.mode = mode


class TooLargeError(OSError):
    """The regular file at the path holds more bytes than the limit: :attr:`size` of them, as
    its stat said (once read, when it grew while it was read)."""

    def __init__(self, path: Any, size: int, limit: int) -> None:
        super().__init__(f"{os.fspath(path)} is larger than {limit} bytes")
        self.strerror = f"it is larger than {limit:,} bytes"
        self.size = size


def open_regular(
    path: str | os.PathLike[str], limit: int | None = None, *, follow_symlinks: bool = True
) -> tuple[BinaryIO, os.stat_result]:
    """The regular file at *path* opened for reading (the caller closes it: ``with``), with its
    ``fstat``. Raises IsADirectoryError for a directory (as :func:`open` does),
    :class:`NotRegularFileError` for anything else but a regular file (a FIFO at once, never
    waited on), :class:`TooLargeError` for a file of more than *limit* bytes (None: any size),
    or another OSError when it cannot be opened. With *follow_symlinks* false, a symbolic link
    at *path* is not followed but refused (``O_NOFOLLOW``: an OSError, ``ELOOP``)."""
    flags = os.O_RDONLY | _NO_WAIT
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    descriptor = os.open(path, flags)
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(path, info.st_mode)
        if limit is not None and info.st_size > limit:
            raise TooLargeError(path, info.st_size, limit)
        return open(descriptor, "rb"), info  # the caller closes it
    except BaseException:
        os.close(descriptor)
        raise


@overload
def read_regular(
    path: str | os.PathLike[str],
    limit: int | None = None,
    *,
    follow_symlinks: bool = True,
    cut: bool = False,
    with_stat: Literal[False] = False,
) -> bytes: ...
@overload
def read_regular(  # noqa: F811 (overload is typing's to a checker: see above)
    path: str | os.PathLike[str],
    limit: int | None = None,
    *,
    follow_symlinks: bool = True,
    cut: bool = False,
    with_stat: Literal[True],
) -> tuple[os.stat_result, bytes]: ...


def read_regular(  # noqa: F811
    path: str | os.PathLike[str],
    limit: int | None = None,
    *,
    follow_symlinks: bool = True,
    cut: bool = False,
    with_stat: bool = False,
) -> bytes | tuple[os.stat_result, bytes]:
    """The bytes of the regular file at *path* (with *with_stat*: its ``fstat`` and its bytes),
    opened and checked as :func:`open_regular` does, read to its end.

    With a *limit*, a file of more bytes is refused (:class:`TooLargeError`), by its stat before
    it is read and by what was read when it grew meanwhile; with *cut* too, it is not refused
    but only its first *limit* bytes are read. Raises OSError, as :func:`open_regular` does, or
    when the reading fails."""
    handle, info = open_regular(path, None if cut else limit, follow_symlinks=follow_symlinks)
    with handle:
        # as much as the stat says and one more byte (a buffer of the size asked for is
        # allocated first: never the whole limit for a small file), then on if it grew
        most = None if limit is None else limit + (0 if cut else 1)
        want = info.st_size + 1 if most is None else min(info.st_size + 1, most)
        data = handle.read(want)
        if len(data) == want and want != most:  # grown since the stat: read on, to the end
            rest = handle.read() if most is None else handle.read(most - want)
            data += rest
        if limit is not None and not cut and len(data) > limit:
            raise TooLargeError(path, os.fstat(handle.fileno()).st_size, limit)
    return (info, data) if with_stat else data
