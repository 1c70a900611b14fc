"""The ``artifact`` verifier: a file exists inside the repository, optionally with a pinned
sha256 and a minimum size.

Reasons (all outcome ``failed``): ``ARTIFACT_MISSING`` (absent, or not a regular file),
``PATH_OUTSIDE_ROOT`` (the path or a symlink on it leads out of the repository),
``TOO_SMALL``, ``HASH_MISMATCH``; ``ARTIFACT_UNREADABLE`` when the file cannot be read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import (
    ARTIFACT_MISSING,
    ARTIFACT_UNREADABLE,
    HASH_MISMATCH,
    PATH_OUTSIDE_ROOT,
    TOO_SMALL,
    VerifierResult,
    path_setting_problems,
    settings_of,
)

if TYPE_CHECKING:
    from ..plan.model import Criterion, Node
    from ..vcs.workspace import Workspace

_SHA256 = r"[0-9A-Fa-f]{64}"  # compiled (and kept by re) when a pinned sha256 is checked
"""A pinned sha256 as the plan model takes it: either case (the model keeps it lowercase)."""


class ArtifactType:
    """Built-in ``artifact`` verifier type (settings ``path``, ``sha256``, ``min_bytes``)."""

    name = "artifact"
    runs_in_pytest = True

    def subjects(self, settings: Mapping[str, Any]) -> list[str]:
        """The artifact itself."""
        return [str(settings["path"])]

    def config_problems(self, settings: Mapping[str, Any], workspace: Workspace) -> list[str]:
        """A bad path, a malformed ``sha256`` or a negative ``min_bytes``.

        A missing file is not a configuration problem: artifacts are often made later.
        """
        return self._problems(settings, workspace)

    @staticmethod
    def settings_problems(settings: Mapping[str, Any]) -> list[str]:
        """:meth:`config_problems` from the settings alone: whether the path escapes through
        a symlink is not looked at (lint checks every path of the plan for that itself)."""
        return ArtifactType._problems(settings, None)

    @staticmethod
    def _problems(settings: Mapping[str, Any], workspace: Workspace | None) -> list[str]:
        problems = path_setting_problems(settings, ("path",), workspace)
        pinned = settings.get("sha256")
        if pinned is not None and not (isinstance(pinned, str) and re.fullmatch(_SHA256, pinned)):
            problems.append("sha256: expected 64 hexadecimal digits (sha256sum's output)")
        minimum = settings.get("min_bytes")
        if minimum is not None and (type(minimum) is not int or minimum < 0):
            problems.append("min_bytes: expected a whole number of bytes, 0 or more")
        return problems

    def run(self, node: Node, criterion: Criterion, workspace: Workspace) -> VerifierResult:
        """Check existence, size and hash of the artifact, in that order."""
        settings = settings_of(criterion.verifier)
        rel = str(settings["path"])
        result = _check(workspace, rel, settings.get("sha256"), settings.get("min_bytes"))
        return VerifierResult(result.outcome, result.reason, result.message, result.details, (rel,))


def _check(
    workspace: Workspace, rel: str, pinned: str | None, minimum: int | None
) -> VerifierResult:
    if workspace.escapes(rel):
        return VerifierResult("failed", PATH_OUTSIDE_ROOT, f"{rel} resolves outside the repository")
    path = workspace.root / rel
    if not path.is_file():
        what = "is not a regular file" if path.exists() else "does not exist"
        return VerifierResult("failed", ARTIFACT_MISSING, f"{rel} {what}")
    size = path.stat().st_size
    if minimum is not None and size < minimum:
        message = f"{rel} has {size} bytes, fewer than min_bytes {minimum}"
        return VerifierResult("failed", TOO_SMALL, message, {"size": size, "min_bytes": minimum})
    actual = workspace.hash_file(rel)
    if actual is None:
        return VerifierResult("failed", ARTIFACT_UNREADABLE, f"{rel} cannot be read")
    if pinned is not None and actual != (pinned := pinned.lower()):  # hashes print lowercase
        message = f"{rel} has sha256 {actual}, but the plan pins {pinned}"
        details = {"expected": pinned, "actual": actual, "size": size}
        return VerifierResult("failed", HASH_MISMATCH, message, details)
    return VerifierResult(
        "passed", None, f"{rel} exists ({size} bytes)", {"sha256": actual, "size": size}
    )
