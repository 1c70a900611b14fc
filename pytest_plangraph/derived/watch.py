"""The watch of :mod:`.kept`: :mod:`pytest_plangraph.vcs.watch`, where lint's kept answer
(:mod:`pytest_plangraph.lint.kept`), below this package, watches its files too."""

from __future__ import annotations

from ..vcs.watch import (
    Seen,
    changed_files,
    file_entry,
    file_holds,
    file_signature,
    make_watch,
    sha256_of,
)

__all__ = [
    "Seen",
    "changed_files",
    "file_entry",
    "file_holds",
    "file_signature",
    "make_watch",
    "sha256_of",
]
