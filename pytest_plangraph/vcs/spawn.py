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

Every git process has a bound (:func:`git_timeout`, ``PLANGRAPH_GIT_TIMEOUT`` seconds, 600 by
default): git blocks for good opening a ``.gitignore`` that is a FIFO, reads a huge sparse one
whole, waits on a network file system or on a hook that does not end. git runs in a process
group of its own; past the bound the whole group is killed (hooks, filters and the
``core.fsmonitor`` command git started with it), git is reaped, the pipes are closed and a
:class:`GitTimeoutError` says what did not finish, where, why it may be and how to raise the
bound. The poll loop asks the clock once a wake-up, nothing more.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import os
import select
from collections.abc import Mapping, Sequence
from time import monotonic, sleep

from ..errors import GIT_TIMEOUT_SETTING, GitError, UsageError, quoted

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "GitTimeoutError", "git_timeout", "run_git_process"]


class GitTimeoutError(GitError):
    """A git process did not finish within its bound (``PLANGRAPH_GIT_TIMEOUT``) and was
    stopped. Never an answer: whoever takes a failed git command for "no" (a kept answer's
    miss, a revision that names nothing) lets this one through, so the command stops at once.
    (Made here, not in :mod:`pytest_plangraph.errors`: a class costs its import, and only a
    command that runs git meets it.)"""


DEFAULT_TIMEOUT = 600.0
"""The seconds a git process may take when ``PLANGRAPH_GIT_TIMEOUT`` is not set. A bound on a
hang, never on work: ``git status --untracked-files=all`` of 100,000 files took 0.2-0.4 s
and ``git log --name-only`` over 20,000 commits 6 s on two shared cores
(docs/performance.md), so ten times either, or a cold disk cache, stays within a minute or
two; a CI job is stopped after an hour or more (GitHub Actions: six by default) without
saying why. Ten minutes is the ``command`` verifier's default too."""

MAX_TIMEOUT = 86_400.0
"""The largest bound ``PLANGRAPH_GIT_TIMEOUT`` may give: a day (``poll`` counts in
milliseconds of a C ``int``: about 24 days)."""

_CHUNK = 1 << 16
_DEFAULTS = tuple(
    getattr(_signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, name)
)
"""The signals :mod:`subprocess` sets back to their defaults in the child (``restore_signals``)."""
_SHOWN = 200
"""The most characters of a git command line a message shows."""
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0"}
"""git never asks at the terminal (for a password, say): it has none to answer it here."""


def git_timeout(env: Mapping[str, str] | None = None) -> float:
    """The seconds each git process may take: ``PLANGRAPH_GIT_TIMEOUT`` in *env* (None: this
    process's environment) as a plain decimal number above 0 and at most :data:`MAX_TIMEOUT`,
    or :data:`DEFAULT_TIMEOUT` when it is not set or empty. Any other value is a
    :class:`~pytest_plangraph.errors.UsageError`."""
    # a plain dict answers a name it lacks at once; os.environ raises and catches a KeyError
    # (9 K instructions, a third of what the bound adds to each git process)
    text = (os.environ if env is None else env).get(GIT_TIMEOUT_SETTING)
    if not text:
        return DEFAULT_TIMEOUT
    value = text.strip()
    whole, _, fraction = value.partition(".")
    digits = whole + fraction
    if digits.isascii() and digits.isdigit() and len(value) <= 20:  # not nan, inf, -1, 1e3
        seconds = float(value)
        if 0 < seconds <= MAX_TIMEOUT:
            return seconds
    raise UsageError(
        f"{GIT_TIMEOUT_SETTING}={quoted(text)} is not a time git may take: give the seconds "
        f"each git process may run, a number above 0 and at most {MAX_TIMEOUT:.0f} "
        f"(such as 30 or 1.5; {DEFAULT_TIMEOUT:.0f} when it is not set)"
    )


def timed_out(args: Sequence[str], where: str, bound: float) -> GitTimeoutError:
    """The error of ``git ARGS`` stopped in *where* after *bound* seconds."""
    command = " ".join(["git", *args])
    if len(command) > _SHOWN:  # git log of many commits named one by one, say
        command = f"{command[:_SHOWN]}… ({len(args)} arguments)"
    return GitTimeoutError(
        f"{command} did not finish in {bound:g} s in {where} and was stopped. Likely causes: "
        "a FIFO, device or huge file where git reads (a .gitignore or .gitattributes file of "
        "the working tree, .git/info/exclude, core.excludesFile, a file under .git); a "
        "network file system that does not answer; a hook, filter or core.fsmonitor command "
        "that does not end; a lock another process holds. Fix the cause, or give git more "
        f"time with {GIT_TIMEOUT_SETTING}=SECONDS ({DEFAULT_TIMEOUT:g} by default)."
    )


def run_git_process(
    args: Sequence[str], cwd: str, env: Mapping[str, str], stdin: bytes | None = None
) -> tuple[int, bytes, bytes]:
    """``git ARGS`` run in the directory *cwd* with the environment *env* and *stdin* as its
    input: its exit code (negative: the signal that ended it), stdout and stderr. An
    :class:`OSError` when git cannot be started (not on this process's ``PATH``, which every
    caller hands on in *env*; *cwd* missing); a
    :class:`GitTimeoutError` when it does not end within
    :func:`git_timeout` (its process group killed); a
    :class:`~pytest_plangraph.errors.UsageError` for a bound that is not a time."""
    bound = git_timeout(env)  # env: this process's environment, copied by every caller
    if not hasattr(os, "posix_spawnp"):  # not a POSIX system: what subprocess does there
        return _by_subprocess(args, cwd, env, stdin, bound)
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
            {**env, **_NO_PROMPT},
            file_actions=actions,
            setsigdef=_DEFAULTS,
            setpgroup=0,  # a group of its own: what git starts is stopped with it
        )
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    for fd in (in_read, out_write, err_write):
        os.close(fd)
    deadline = monotonic() + bound
    try:
        out, err = _communicate(in_write, out_read, err_read, stdin or b"", deadline)
        status = _reaped(pid, deadline)
    except BaseException as exc:  # past the bound, or interrupted (Ctrl-C reaches us alone)
        _kill_group(pid)
        if isinstance(exc, TimeoutError) and not exc.args:  # raised here, not by the system
            raise timed_out(args, cwd, bound) from None
        raise
    return os.waitstatus_to_exitcode(status), out, err


def _kill_group(pid: int) -> None:
    """Kill git's process group (git is its leader: the group's id is *pid*) and reap git."""
    try:
        os.killpg(pid, _signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):  # reaped already (interrupted just then)
        pass


def _reaped(pid: int, deadline: float) -> int:
    """The wait status of git, whose pipes are closed: it has ended or is ending (exiting
    closes them first); waited for until *deadline*, then :class:`TimeoutError`."""
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        return status
    if _exit_polled(pid, deadline):  # a third of the time: git was still on its way out
        return os.waitpid(pid, 0)[1]
    pause = 0.0005
    while not done:  # no pidfd here: looked at every few milliseconds
        if monotonic() >= deadline:
            raise TimeoutError
        sleep(pause)
        pause = min(pause * 2, 0.05)
        done, status = os.waitpid(pid, os.WNOHANG)
    return status


def _exit_polled(pid: int, deadline: float) -> bool:
    """Wait for git *pid* to end through its pidfd (Linux 5.3 and later), until *deadline*
    (then :class:`TimeoutError`); False when there is no pidfd to wait on."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or an older kernel
        return False
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        left = deadline - monotonic()
        if left <= 0 or not poller.poll(int(left * 1000) + 1):
            raise TimeoutError
    finally:
        os.close(fd)
    return True


def _communicate(
    in_write: int, out_read: int, err_read: int, data: bytes, deadline: float
) -> tuple[bytes, bytes]:
    """Write *data* to *in_write* (-1: none) while reading *out_read* and *err_read* to their
    ends, until *deadline* (then :class:`TimeoutError`); each of the three is closed on the way
    out, whatever happens."""
    waiting = {out_read, err_read} | ({in_write} if in_write != -1 else set())
    try:
        return _pump(waiting, in_write, out_read, err_read, data, deadline)
    finally:
        for fd in waiting:
            os.close(fd)


def _pump(
    waiting: set[int], in_write: int, out_read: int, err_read: int, data: bytes, deadline: float
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
        left = deadline - monotonic()
        ready = poller.poll(int(left * 1000) + 1) if left > 0 else []
        if not ready:  # poll waits again by itself when a signal interrupts it (PEP 475)
            raise TimeoutError
        for fd, event in ready:
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
    args: Sequence[str], cwd: str, env: Mapping[str, str], stdin: bytes | None, bound: float
) -> tuple[int, bytes, bytes]:
    """:func:`run_git_process` through :mod:`subprocess` (a system without ``posix_spawn``):
    git alone is killed past the bound (no process groups there)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env={**env, **_NO_PROMPT},
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            check=False,
            timeout=bound,
        )
    except subprocess.TimeoutExpired:
        raise timed_out(args, cwd, bound) from None
    return done.returncode, done.stdout, done.stderr
