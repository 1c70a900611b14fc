"""Reading a file of the workspace, refused when it resolves outside the repository or is not
a regular file (a FIFO would block, a device never end)."""

from __future__ import annotations

from ..regularfile import NotRegularFileError, read_regular
from .workspace import Workspace

__all__ = ["read_bytes", "read_text"]


def read_bytes(workspace: Workspace, rel: str) -> bytes:
    """The content of the regular file *rel* in *workspace*. Raises OSError: PermissionError
    when it resolves outside the repository, IsADirectoryError for a directory,
    :class:`~pytest_plangraph.regularfile.NotRegularFileError` for anything else but a regular
    file (a FIFO is refused at once, never waited on), FileNotFoundError …"""
    if workspace.escapes(rel):
        raise PermissionError(f"{rel} resolves outside the repository")
    try:
        return read_regular(workspace.root / rel)
    except NotRegularFileError as exc:  # named as the workspace names it
        raise NotRegularFileError(rel, exc.mode) from None


def read_text(workspace: Workspace, rel: str) -> str:
    """The UTF-8 text of a file in *workspace* (raises OSError, as :func:`read_bytes` does,
    or UnicodeDecodeError)."""
    return read_bytes(workspace, rel).decode("utf-8")
