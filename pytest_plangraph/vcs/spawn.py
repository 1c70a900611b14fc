"""One ``git`` process run to its end, its output read whole: what :mod:`.run` and
:mod:`.status` ask git with, without :mod:`subprocess`.

Importing :mod:`subprocess` (with :mod:`signal`, :mod:`threading`, :mod:`selectors` and
:mod:`locale`) costs a command that answers from a kept answer more than the git processes
it runs; this module starts git with :func:`os.posix_spawnp` and reads its pipes with
:func:`select.poll`, as :func:`subprocess.run` with ``capture_output=True`` does: *stdin* (or
nothing: ``/dev/null``), stdout and stderr read together so that neither pipe can fill and
block git, the signals :mod:`subprocess` restores (``SIGPIPE``, ``SIGXFSZ``) at their
defaults in git, and git killed when the wait is interrupted. The working directory is given
as ``git -C DIR`` (``posix_spawn`` cannot change it), checked first so that a missing one is
the :class:`OSError` :mod:`subprocess` raised.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import os
import select
from collections.abc import Mapping, Sequence

__all__ = ["run_git_process"]

_CHUNK = 1 << 16
_DEFAULTS = tuple(
    getattr(_signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, name)
)
"""The signals :mod:`subprocess` sets back to their defaults in the child (``restore_signals``)."""


def run_git_process(
    args: Sequence[str], cwd: str, env: Mapping[str, str], stdin: bytes | None = None
) -> tuple[int, bytes, bytes]:
    """``git ARGS`` run in the directory *cwd* with the environment *env* and *stdin* as its
    input: its exit code (negative: the signal that ended it), stdout and stderr. An
    :class:`OSError` when git cannot be started (not on this process's ``PATH``, which every
    caller hands on in *env*; *cwd* missing)."""
    if not hasattr(os, "posix_spawnp"):  # not a POSIX system: what subprocess does there
        return _by_subprocess(args, cwd, env, stdin)
    if not os.path.isdir(cwd):
        os.stat(cwd)  # the error naming why (missing, not allowed)
        raise NotADirectoryError(20, "Not a directory", cwd)
    opened: list[int] = []
    try:
        out_read, out_write = os.pipe()
        opened += [out_read, out_write]
        err_read, err_write = os.pipe()
        opened += [err_read, err_write]
        if stdin is None:
            in_read, in_write = os.open(os.devnull, os.O_RDONLY), -1
            opened.append(in_read)
        else:
            in_read, in_write = os.pipe()
            opened += [in_read, in_write]
        actions = [
            (os.POSIX_SPAWN_DUP2, in_read, 0),
            (os.POSIX_SPAWN_DUP2, out_write, 1),
            (os.POSIX_SPAWN_DUP2, err_write, 2),
        ]
        pid = os.posix_spawnp(
            "git",
            ["git", "-C", cwd, *args],
            dict(env),
            file_actions=actions,
            setsigdef=_DEFAULTS,
        )
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    for fd in (in_read, out_write, err_write):
        os.close(fd)
    try:
        out, err = _communicate(in_write, out_read, err_read, stdin or b"")
    except BaseException:
        os.kill(pid, _signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out, err


def _communicate(in_write: int, out_read: int, err_read: int, data: bytes) -> tuple[bytes, bytes]:
    """Write *data* to *in_write* (-1: none) while reading *out_read* and *err_read* to their
    ends; each of the three is closed on the way out, whatever happens."""
    waiting = {out_read, err_read} | ({in_write} if in_write != -1 else set())
    try:
        return _pump(waiting, in_write, out_read, err_read, data)
    finally:
        for fd in waiting:
            os.close(fd)


def _pump(
    waiting: set[int], in_write: int, out_read: int, err_read: int, data: bytes
) -> tuple[bytes, bytes]:
    """:func:`_communicate`'s loop; a descriptor is taken out of *waiting* as it is closed."""
    poller = select.poll()
    chunks: dict[int, list[bytes]] = {out_read: [], err_read: []}
    for fd in chunks:
        poller.register(fd, select.POLLIN | select.POLLPRI)
    if in_write != -1:
        os.set_blocking(in_write, False)
        poller.register(in_write, select.POLLOUT)
    offset = 0

    def done(fd: int) -> None:
        poller.unregister(fd)
        waiting.discard(fd)
        os.close(fd)

    while waiting:
        for fd, event in poller.poll():
            if fd == in_write:
                try:
                    offset += os.write(fd, data[offset : offset + _CHUNK])
                except BlockingIOError:
                    pass
                except BrokenPipeError:
                    offset = len(data)  # git stopped reading: what it read is its input
                if offset >= len(data):
                    done(fd)
                continue
            chunk = os.read(fd, _CHUNK) if event & (select.POLLIN | select.POLLPRI) else b""
            if chunk:
                chunks[fd].append(chunk)
            else:
                done(fd)
    return b"".join(chunks[out_read]), b"".join(chunks[err_read])


def _by_subprocess(
    args: Sequence[str], cwd: str, env: Mapping[str, str], stdin: bytes | None
) -> tuple[int, bytes, bytes]:
    """:func:`run_git_process` through :mod:`subprocess` (a system without ``posix_spawn``)."""
    import subprocess

    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=dict(env),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr
