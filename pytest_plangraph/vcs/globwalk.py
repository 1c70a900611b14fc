"""Finding the paths a plan's glob names on disk, in time linear in what it lists.

:meth:`pathlib.Path.glob` builds one selector per name of the pattern, recursively, and tries
every way its ``**`` can split a path: a pattern of 300 ``*/`` names overflows the stack, and
one of 100 ``**/`` names never ends. :func:`matches` lists each directory under the pattern's
fixed start at most once, keeping the places in the pattern it can have reached
(:func:`~pytest_plangraph.plan.paths.glob_step`), and enters it only while some place is left; so
it names exactly the paths :func:`~pytest_plangraph.plan.paths.glob_match` accepts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from ..plan.paths import glob_start, glob_step, is_glob


def matches(
    root: Path,
    pieces: tuple[str, ...],
    skipped: Callable[[str, str], bool],
    escapes: Callable[[str], bool],
) -> Iterator[tuple[str, bool]]:
    """``(path, is a directory)`` for each path under *root* that the glob *pieces* (from
    :func:`~pytest_plangraph.plan.paths.glob_pieces`) names, leaving out the paths *skipped* says
    so of (given the path and its name) and never entering a directory that *escapes* the
    root. A symlinked directory is entered only on the way to a name matched by ``*``, never
    by ``**`` (a link back up would make ``**`` endless), as :meth:`pathlib.Path.glob` does."""
    fixed = next((i for i, piece in enumerate(pieces) if is_glob(piece)), len(pieces))
    base = "/".join(pieces[:fixed]) or "."
    if base != "." and escapes(base):
        return
    if fixed == len(pieces):  # `a/*/..` is `a`: the wildcard went with normalizing
        if os.path.exists(os.path.join(root, base)):
            yield base, os.path.isdir(os.path.join(root, base))
        return
    end = len(pieces)
    stack = [(base, glob_start(pieces, fixed))]
    while stack:
        current, states = stack.pop()
        prefix = "" if current == "." else f"{current}/"
        try:
            with os.scandir(os.path.join(root, current)) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:  # once per entry of every directory listed: kept flat
            rel = prefix + entry.name
            if skipped(rel, entry.name):
                continue
            reached = glob_step(pieces, states, entry.name)
            if not reached:
                continue
            directory = entry.is_dir(follow_symlinks=False)
            linked = not directory and entry.is_symlink() and entry.is_dir()
            if end in reached:
                yield rel, directory or linked
            elif directory or (
                linked and all(pieces[i] != "**" for i in states) and not escapes(rel)
            ):
                stack.append((rel, reached))
