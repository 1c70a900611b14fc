"""``impact``'s kept answer, looked for before a parser is built: a repeated question is
answered from what it printed last time (see "The derived state" in
``docs/evidence-and-status.md``) with the imports a hit needs alone — this module, the kept
record's reader and the git runner; not :mod:`argparse`, the command's module or the plan.

:func:`kept_impact` reads the command line itself, but only its plainest forms (the options
written out in full, each once, a value after the option or after ``=``); anything else —
``--apply``, ``--select``, ``--help``, an abbreviation, a value that starts with ``-``, text
that is not UTF-8 — goes to the parser, which looks for the kept answer as before. What it
read for the key (the diff from ``--since``, ``HEAD``'s commit) is handed to the command on a
miss, so a miss starts no more git processes than without this module.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..vcs.history import SinceDiff

__all__ = ["KeptKey", "kept_impact", "kept_key", "kept_shape", "print_kept"]

_VALUED = {"--since": "since", "--format": "format", "--root": "root", "--plan": "plan"}
_VALUED["--store"] = "store"
_FLAGS = {"--check": "check", "--no-commits": "no_commits"}


class KeptKey:
    """The key of the kept answer of one ``impact`` (:func:`kept_key`): its *name* (None:
    nothing may be kept), *extra* (what it depends on besides a kept status's inputs) and the
    *diff* read for it, for the options it was made for (:meth:`made_for`)."""

    __slots__ = ("diff", "extra", "name", "options")

    def __init__(
        self, options: tuple[Any, ...], name: str | None, extra: Any, diff: SinceDiff | None
    ) -> None:
        self.options = options
        self.name = name
        self.extra = extra
        self.diff = diff

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
    if answer is None:
        return key
    return print_kept(answer, check=check)


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
    nothing may be kept (git cannot say: the command says why)."""
    from ..errors import PlangraphError
    from ..vcs.environment import resolve_paths

    options = _options(root, plan, store, since, commits, fmt)
    if fmt not in ("text", "json", "markdown"):  # derived.kept.FORMATS
        return KeptKey(options, None, None, None)
    try:
        root_path, _, store_path = resolve_paths(root, plan, store)
        if since is not None:
            from ..plan.cache import cache_dir_of
            from ..vcs.environment import store_files
            from ..vcs.history import diff_since

            diff = diff_since(root_path, since)
            cache = cache_dir_of(store_path)  # what the report leaves out, as its own files
            own = [*store_files(root_path, store_path)]
            if cache.is_relative_to(root_path):
                own.append(f"{cache.relative_to(root_path).as_posix()}/")
            return KeptKey(options, f"impact-since-{fmt}", [commits, diff.key(own)], diff)
        from ..vcs.run import head_commit

        head = head_commit(root_path) if commits else ""
    except (PlangraphError, OSError, ValueError):
        return KeptKey(options, None, None, None)
    name = None if head is None else f"impact-{fmt}"
    return KeptKey(options, name, [commits, head], None)


def kept_shape(answer: Any) -> tuple[str | None, list[str], int] | None:
    """*answer* as ``impact`` keeps it (what it printed, the lines on stderr, how many nodes
    were invalidated); None for anything else (a damaged file: the command runs)."""
    if not isinstance(answer, list) or len(answer) != 3:
        return None
    printed, lines, invalidated = answer
    if printed is not None and not isinstance(printed, str):
        return None
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        return None
    if type(invalidated) is not int:
        return None
    return printed, lines, invalidated


def print_kept(answer: tuple[str | None, list[str], int], *, check: bool) -> int:
    """Print a kept *answer* as the command printed it; its exit code."""
    printed, lines, invalidated = answer
    for line in lines:
        print(line, file=sys.stderr)
    if printed is not None:
        print(printed)
    return 1 if check and invalidated else 0
