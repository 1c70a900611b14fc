"""``impact``'s kept answer, looked for before a parser is built: a repeated question is
answered from what it printed last time (see "The derived state" in
``docs/evidence-and-status.md``) with the imports a hit needs alone — this module, the kept
record's reader and the git runner; not :mod:`argparse`, the command's module or the plan.

:func:`kept_impact` reads the command line itself, but only its plainest forms (the options
written out in full, each once, a value after the option or after ``=``); anything else —
``--apply``, ``--select``, ``--help``, an abbreviation, a value that starts with ``-``, text
that is not UTF-8 — goes to the parser, which looks for the kept answer as before. What it
read for the key (the diff from ``--since``, ``HEAD``'s commit) is handed to the command on a
miss, so a miss starts no more git processes than without this module. A miss of ``--since``
whose kept basis stands is answered here too, from the basis (:mod:`.impact_basis`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..vcs.history import SinceDiff
    from ..vcs.revcache import RevisionCache
    from ..vcs.spawn import GitTimeoutError

__all__ = ["KeptKey", "keep_printed", "kept_impact", "kept_key", "kept_shape", "print_kept"]

_BACKDATE_NS = 10_000_000_000
"""How far in the past a printed answer's file is dated when it is written: any later write
to it dates it now, so its signature cannot stay what was kept (see :func:`keep_printed`)."""

_VALUED = {"--since": "since", "--format": "format", "--root": "root", "--plan": "plan"}
_VALUED["--store"] = "store"
_FLAGS = {"--check": "check", "--no-commits": "no_commits"}


class KeptKey:
    """The key of the kept answer of one ``impact`` (:func:`kept_key`): its *name* (None:
    nothing may be kept), *extra* (what it depends on besides a kept status's inputs) and the
    *diff* read for it, for the options it was made for (:meth:`made_for`); *failed*: git
    did not finish in its bound while the key was made (the command raises it: no miss, which
    would wait for git as long again, and told in the command's format)."""

    __slots__ = ("basis_looked", "cache", "diff", "extra", "failed", "name", "options")

    def __init__(
        self,
        options: tuple[Any, ...],
        name: str | None,
        extra: Any,
        diff: SinceDiff | None,
        cache: Path | None = None,
    ) -> None:
        self.options = options
        self.name = name
        self.extra = extra
        self.diff = diff
        self.cache = cache  # the cache folder: where the printed answer's file is
        self.basis_looked = False  # whether the kept basis was looked for (.impact_basis)
        self.failed: GitTimeoutError | None = None

    def made_for(self, args: Any, fmt: str) -> bool:
        """Whether this key was made for the options *args* (parsed) and the format *fmt*."""
        return self.options == _options(
            args.root, getattr(args, "plan", None), args.store, args.since, args.commits, fmt
        )


def kept_impact(argv: list[str]) -> int | KeptKey | None:
    """Print the kept answer of ``impact ARGV`` and return its exit code, when *argv* is one
    of the plain forms and nothing the answer depends on changed; otherwise print nothing and
    return the key made (for the command to go on from) or None (*argv* is for the parser)."""
    found = _plain(argv)
    if found is None:
        return None
    root, plan, store, since, fmt, commits, check = found
    key = kept_key(root, plan, store, since, commits, fmt)
    if key.name is None:
        return key
    from ..derived.kept import kept_answer

    answer = kept_shape(kept_answer(root, plan, store, key.name, key.extra))
    code = None if answer is None else print_kept(key, answer, check=check)
    if code is None and key.diff is not None and key.cache is not None:
        from .impact_basis import basis_answer  # another diff: made from the kept basis

        code = basis_answer(key.options, key.diff, key.cache, fmt, commits=commits, check=check)
        key.basis_looked = True
    return key if code is None else code


def _plain(argv: list[str]) -> tuple[Any, ...] | None:
    """The options of *argv* (root, plan, store, since, format, commits, check) when it is
    written in the plain forms :func:`kept_impact` reads; None otherwise."""
    given: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        option, equals, text = arg.partition("=")
        value: str | bool = text
        if option in _VALUED:
            if not equals:
                if i + 1 == len(argv):
                    return None
                i += 1
                text = argv[i]
            if not text or text.startswith("-"):
                return None
            name, value = _VALUED[option], text
        elif arg in _FLAGS:
            name, value = _FLAGS[arg], True
        else:
            return None
        if name in given or not _utf8(value if isinstance(value, str) else ""):
            return None
        given[name] = value
        i += 1
    fmt = given.get("format", "text")
    if fmt not in ("text", "json", "markdown"):
        return None
    paths = [Path(given[n]) if n in given else None for n in ("root", "plan", "store")]
    since = given.get("since")
    return (*paths, since, fmt, not given.get("no_commits", False), given.get("check", False))


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _options(
    root: Path | None,
    plan: Path | None,
    store: Path | None,
    since: str | None,
    commits: bool,
    fmt: str,
) -> tuple[Any, ...]:
    return (root, plan, store, since, commits, fmt)


def kept_key(
    root: Path | None,
    plan: Path | None,
    store: Path | None,
    since: str | None,
    commits: bool,
    fmt: str,
) -> KeptKey:
    """The name of the kept answer of this ``impact`` and what it depends on besides what a
    kept status does (:mod:`...derived.kept`): the diff from *since* (both ends' commits, the
    changed paths of the working tree), or without it ``HEAD``'s commit (what names the
    commits behind the changes). The diff is handed on to the command on a miss. No name when
    nothing may be kept: git cannot say (the command says why), or the commits behind the
    changes are named and git may show them otherwise for the same ids (replace refs, grafts,
    a shallow history: :func:`~...vcs.run.rewritable`)."""
    from ..errors import PlangraphError
    from ..plan.cache import cache_dir_of
    from ..vcs.environment import resolve_paths
    from ..vcs.spawn import GitTimeoutError  # imported by the git this runs in any case

    options = _options(root, plan, store, since, commits, fmt)
    if fmt not in ("text", "json", "markdown"):  # derived.kept.FORMATS
        return KeptKey(options, None, None, None)
    try:
        root_path, _, store_path = resolve_paths(root, plan, store)
        cache = cache_dir_of(store_path)
        if since is not None:
            from ..vcs.environment import store_files
            from ..vcs.history import diff_since

            diff = diff_since(root_path, since, _revisions(cache, store_path))
            if commits and diff.rewritable:
                return KeptKey(options, None, None, diff, cache)  # commits named anew
            own = [*store_files(root_path, store_path)]  # what the report leaves out
            if cache.is_relative_to(root_path):
                own.append(f"{cache.relative_to(root_path).as_posix()}/")
            extra = [commits, diff.key(own)]
            return KeptKey(options, f"impact-since-{fmt}", extra, diff, cache)
        from ..vcs.run import head_commit

        head = head_commit(root_path, _revisions(cache, store_path)) if commits else ""
    except GitTimeoutError as exc:
        key = KeptKey(options, None, None, None)
        key.failed = exc
        return key
    except (PlangraphError, OSError, ValueError):
        return KeptKey(options, None, None, None)
    name = None if head is None else f"impact-{fmt}"
    return KeptKey(options, name, [commits, head], None, cache)


def _revisions(cache: Path, store: Path) -> RevisionCache | None:
    """The revision cache in the cache folder (:mod:`...vcs.revcache`), or None: there is
    neither a store nor the folder (a preview elsewhere writes nothing), or keys are
    configured (no cache of this user's counts then)."""
    from ..derived.look import KEY_SETTINGS

    if any(os.environ.get(name) for name in KEY_SETTINGS):
        return None
    if not cache.is_dir() and not store.exists():
        return None
    from ..store.localkey import local_key
    from ..vcs.revcache import RevisionCache

    return RevisionCache(cache / "revisions.json", local_key())


def keep_printed(key: KeptKey, printed: str | None) -> list[int] | None:
    """Keep what ``impact`` printed (None: nothing) in its own file beside the kept record
    (``<name>.out``: an answer at 10,000 nodes is megabytes of text, which a record of JSON
    values would have to hash, parse and decode on every hit); the reference the record
    keeps instead: its size, inode, mtime and ctime and whether the text is UTF-8 as it stands
    (``[]`` when nothing was printed), or None when it cannot be written (nothing is kept
    then).

    The file is written under another name and renamed (a new inode: a file another
    ``impact`` wrote meanwhile is not this one), dated :data:`_BACKDATE_NS` in the past before
    it is renamed, and its signature read from the open file after: a later write of any kind
    dates it anew (or changes its size, inode or ctime), so a signature that still matches is
    the file as written here, without hashing it."""
    if printed is None:
        return []
    if key.name is None or key.cache is None or not key.cache.is_dir():
        return None  # a repository that keeps nothing gets nothing written
    from ..derived.look import KEY_SETTINGS

    if any(os.environ.get(name) for name in KEY_SETTINGS):
        return None  # nothing is kept with keys configured
    try:
        printed.encode("utf-8")
        utf8 = 1  # its bytes are what print writes to a UTF-8 stdout
    except UnicodeEncodeError:
        utf8 = 0  # a lone surrogate: printed as the command prints it
    final = key.cache / f"{key.name}.out"
    partial = key.cache / f"{key.name}.out.{os.getpid()}.tmp"
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        try:
            data = printed.encode("utf-8", "surrogatepass")
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            past = time.time_ns() - _BACKDATE_NS
            os.utime(fd, ns=(past, past))
            os.replace(partial, final)
            info = os.fstat(fd)
        finally:
            os.close(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        return None
    return [info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, utf8]


def read_printed(key: KeptKey, reference: list[int]) -> bytes | None:
    """The bytes of what ``impact`` printed, from the file :func:`keep_printed` wrote with
    *reference*; None when the file is not that one (missing, replaced, written since, not a
    regular file): a miss."""
    assert key.cache is not None and key.name is not None
    from ..regularfile import read_regular

    path = key.cache / f"{key.name}.out"
    try:  # not through a link, nor waiting on a FIFO; no more than the bytes kept are read
        info, data = read_regular(path, reference[0], follow_symlinks=False, with_stat=True)
    except OSError:
        return None
    held = [info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns]
    if held != reference[:4] or len(data) < info.st_size:  # another file, or cut since
        return None
    return data


def kept_shape(answer: Any) -> tuple[list[int], list[str], int] | None:
    """*answer* as ``impact`` keeps it (the reference to what it printed, the lines on stderr,
    how many nodes were invalidated); None for anything else (a damaged file: the command
    runs)."""
    if not isinstance(answer, list) or len(answer) != 3:
        return None
    printed, lines, invalidated = answer
    if not isinstance(printed, list) or len(printed) not in (0, 5):
        return None
    if not all(type(n) is int for n in printed):
        return None
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        return None
    if type(invalidated) is not int:
        return None
    return printed, lines, invalidated


def print_kept(
    key: KeptKey, answer: tuple[list[int], list[str], int], *, check: bool
) -> int | None:
    """Print a kept *answer* (:func:`kept_shape`) as the command printed it and return its
    exit code; None, having printed nothing, when what it printed is not there as kept.

    Text that is UTF-8 as it stands (the reference's last item) is copied to a UTF-8 stdout
    as the bytes kept (what ``print`` would write: an answer at 10,000 nodes is megabytes,
    which decoding and encoding again would cost more than the rest of a hit); otherwise it
    is decoded and printed, as the command prints it."""
    reference, lines, invalidated = answer
    data = None if reference == [] else read_printed(key, reference)
    if reference != [] and data is None:
        return None
    raw = data is not None and bool(reference[4]) and _utf8_stdout()
    text = None
    if data is not None and not raw:
        try:
            text = data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return None
    for line in lines:
        print(line, file=sys.stderr)
    # A standard output that refuses the bytes (a reader gone, a full disk, a descriptor not
    # open for writing) raises here as ``print`` would: :func:`..cli.main` tells it as it does
    # for every command. With none at all (None), ``_utf8_stdout`` is False and print() is
    # silent, as the command afresh is.
    if raw and data is not None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.write(b"\n")
    elif text is not None:
        print(text)
    return 1 if check and invalidated else 0


def _utf8_stdout() -> bool:
    """Whether stdout takes bytes as ``print`` writes UTF-8 text (a text stream over a
    binary one, encoding UTF-8, no newline translation)."""
    stream = sys.stdout
    encoding = getattr(stream, "encoding", None) or ""
    if encoding.lower().replace("-", "").replace("_", "") != "utf8":
        return False
    return os.linesep == "\n" and hasattr(stream, "buffer")
