"""A secret kept for this user outside every repository and store, for what plangraph keeps
beside the store without a signing key: the log's checkpoint and the rows of the hash cache.

The key is 32 random bytes in ``$XDG_CACHE_HOME/plangraph/key`` (``~/.cache/…`` by default),
created with mode 0600 in a folder of mode 0700. What it vouches for was written by a plangraph
process of this user: a checkpoint or a hash-cache row written by anyone who cannot read the key
— an ``INSERT`` into the store file, a store or cache folder copied from another machine or user,
a CI artifact — does not match and is not used. It does not stand against a process of this very
user that reads the key (that process could rewrite an unsigned hash chain as well); a signing
key (``PLANGRAPH_SIGNING_KEY``) kept where agents cannot read it, and ``plangraph head`` published
elsewhere, are what stand against that.

Where the key cannot be kept, a key for this process alone is used: checkpoints and cache rows
then serve this process only, which costs time, never an answer.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path

from ..regularfile import NotRegularFileError, read_regular
from ..usercache import folder

_SIZE = 32


def key_path() -> Path:
    """Where the key is kept: ``plangraph/key`` in ``$XDG_CACHE_HOME`` or ``~/.cache``."""
    return Path(folder()) / "key"


@functools.cache
def local_key() -> bytes:
    """This user's key (see the module docstring); read once per process."""
    path = key_path()
    if not path.is_absolute():  # no home directory to keep it in
        return os.urandom(_SIZE)
    for _ in range(2):
        found = _read(path)
        if found is not None:
            return found
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _create(path)
        except FileExistsError:  # another process made it meanwhile: read theirs
            continue
        except OSError:
            break
    return os.urandom(_SIZE)


def _read(path: Path) -> bytes | None:
    """The key at *path*, or None when there is none, it is damaged, or others may read it
    (a key readable by other users is no secret: it is replaced), or is no regular file."""
    try:  # a FIFO put in its place is not waited for
        info, raw = read_regular(path, 4 * _SIZE, cut=True, with_stat=True)
        data, mode = bytes.fromhex(raw.decode("ascii").strip()), info.st_mode
    except NotRegularFileError:
        data, mode = b"", 0  # damaged: replaced
    except (OSError, ValueError):
        return None
    if len(data) != _SIZE or mode & 0o077:
        with contextlib.suppress(OSError):  # one that cannot be removed is never used
            path.unlink()
        return None
    return data


def _create(path: Path) -> None:
    """Write a new key at *path*, readable by this user only; FileExistsError when another
    process wrote one first (whole: a temporary file, then a link that fails if one exists)."""
    partial = path.with_name(f"key.{os.getpid()}.tmp")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(os.urandom(_SIZE).hex())
        os.link(partial, path)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
