"""GitHub Actions: workflow-command annotations (``::error file=…,line=…::…``) and the job's
step summary (``$GITHUB_STEP_SUMMARY``, Markdown appended).

Workflow commands are parsed from the step's output line by line, so every value is escaped
as the runner expects: ``%``, CR and LF in the message; also ``:`` and ``,`` in properties.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from ..errors import UsageError

__all__ = ["annotation", "append_summary", "in_actions"]


def in_actions() -> bool:
    """True inside a GitHub Actions job (``GITHUB_ACTIONS=true``)."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


def annotation(
    message: str,
    *,
    level: str = "error",
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> str:
    """One workflow-command line that GitHub shows as an annotation."""
    props = {"file": file, "line": line, "col": col, "title": title}
    said = ",".join(f"{k}={_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{level}{' ' + said if said else ''}::{_data(message)}"


def _data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: str) -> str:
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def append_summary(
    markdown: str, path: str | None = None, *, protected: Collection[Path] = ()
) -> Path | None:
    """Append *markdown* to the step summary file named by *path* or
    ``$GITHUB_STEP_SUMMARY``; None when neither names one. UsageError when the file cannot
    be written (a folder, a missing folder, no permission) or is one of the *protected* files
    (the plan, the store: appending text to them would break them)."""
    name = path if path is not None else os.environ.get("GITHUB_STEP_SUMMARY", "")
    if not name:
        return None
    target = Path(name)
    real = os.path.realpath(target)
    for kept in protected:
        if real in {os.path.realpath(kept) + s for s in ("", "-wal", "-shm", "-journal")}:
            raise UsageError(
                f"$GITHUB_STEP_SUMMARY names {target}, which is the plan or the evidence store; "
                "the summary was not written there: point the variable at a file of its own"
            )
    try:
        with target.open("a", encoding="utf-8") as out:
            out.write(markdown if markdown.endswith("\n") else markdown + "\n")
    except OSError as exc:
        raise UsageError(
            f"cannot append the plangraph summary to $GITHUB_STEP_SUMMARY ({target}): "
            f"{exc.strerror or exc}; point it at a writable file or unset it"
        ) from exc
    return target
