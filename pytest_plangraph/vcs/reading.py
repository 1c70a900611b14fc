"""Reading a file of the workspace, refused when it resolves outside the repository or is not
a regular file (a FIFO would block, a device never end)."""

from __future__ import annotations

import os
import stat

from .workspace import Workspace

__all__ = ["NotRegularFileError", "read_bytes", "read_text"]


class NotRegularFileError(OSError):
    """The path names something other than a regular file: a directory, a FIFO, a device."""


def read_bytes(workspace: Workspace, rel: str) -> bytes:
    """The content of the regular file *rel* in *workspace*. Raises OSError: PermissionError
    when it resolves outside the repository, :class:`NotRegularFileError` for anything but a
    regular file (a FIFO is refused at once, never waited on), FileNotFoundError …"""
    if workspace.escapes(rel):
        raise PermissionError(f"{rel} resolves outside the repository")
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
    descriptor = os.open(workspace.root / rel, os.O_RDONLY | os.O_NONBLOCK)
    with open(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise NotRegularFileError(f"{rel} is not a regular file")
        return handle.read()


def read_text(workspace: Workspace, rel: str) -> str:
    """The UTF-8 text of a file in *workspace* (raises OSError, as :func:`read_bytes` does,
    or UnicodeDecodeError)."""
    return read_bytes(workspace, rel).decode("utf-8")
