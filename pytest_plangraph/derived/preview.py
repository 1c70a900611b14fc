"""A preview's kept answer when only the bytes of the files it watches changed
(:func:`kept_preview`: ``impact --since``'s basis, :mod:`pytest_plangraph.cli.impact_basis`),
beside :mod:`.kept`, whose record it reads."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..codehash import code_fingerprint
from ..errors import PlangraphError
from ..store.derived import read_tagged
from ..vcs.environment import resolve_paths
from . import settings
from .kept import KEPT_FORMAT, STATUS_PERSON, kept_answer
from .look import MISSED, checkpoint_of, keys_configured, where_of
from .look import answer_path as _path
from .look import installed as _installed
from .watch import changed_files, file_holds

__all__ = ["kept_preview"]


def kept_preview(
    root: Path | None, plan: Path | None, store: Path | None, name: str, extra: Any = None
) -> Any:
    """:func:`kept_answer`, but an answer kept without a store (a preview's: ``impact
    --since``'s basis) also stands when the watched files changed in their bytes alone — each
    still a regular file, or still missing — while lint's check of the plan reads no file's
    bytes (its findings are about paths and presence): for an answer made from the plan
    alone, which reads the bytes of no watched file either. With a store, or when lint reads
    a file's bytes (a ``schema`` verifier), :func:`kept_answer`."""
    if keys_configured() or (root is not None and not Path(root).is_dir()):
        return None
    MISSED.clear()
    try:
        root_path, plan_path, store_path = resolve_paths(root, plan, store)
        if os.path.lexists(store_path):
            return kept_answer(root, plan, store, name, extra)
        record = read_tagged(_path(store_path, name), STATUS_PERSON)
        if not isinstance(record, dict) or record.get("format") != KEPT_FORMAT:
            return None
        if record["head"] is not None or record["extra"] != extra:
            return None
        if record["lint_reads"]:  # lint reads a file's bytes: every watched file must hold
            return kept_answer(root, plan, store, name, extra)
        if record["where"] != where_of(root_path, plan_path, store_path):
            return None
        if record["code"] != code_fingerprint() or record["settings"] != settings():
            return None
        if record["installed"] != _installed() or checkpoint_of(store_path).exists():
            return None
        if not file_holds(str(plan_path.parent), plan_path.name, *record["plan"]):
            return None
        watch = record["watch"]
        if changed_files(str(root_path), {**watch, "files": []}) != []:  # the directories
            return None
        return record["answer"] if _kinds_hold(str(root_path), watch["files"]) else None
    except (PlangraphError, OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _kinds_hold(root: str, files: Sequence[Any]) -> bool:
    """Whether each watched file is what it was, bytes aside: a regular file still one, a
    missing file still missing, anything else still neither a regular file nor a link."""
    prefix = os.path.join(root, "")
    for rel, sig, sha, _ in files:
        try:
            mode = os.lstat(prefix + rel).st_mode
        except (FileNotFoundError, NotADirectoryError):
            mode = None
        if sha is not None:
            same = mode is not None and stat.S_ISREG(mode)
        elif sig is None:
            same = mode is None
        else:
            same = mode is not None and not stat.S_ISREG(mode) and not stat.S_ISLNK(mode)
        if not same:
            return False
    return True
