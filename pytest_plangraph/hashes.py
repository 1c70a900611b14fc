"""sha256 and BLAKE2b without importing :mod:`hashlib` where the input is small.

Importing :mod:`hashlib` loads OpenSSL (``_hashlib``), which costs a command answered from
what it kept (``impact``'s or ``status``'s kept answer) more than all the hashing it does: a
few kilobytes of cache keys and tags. CPython's own modules compute the same digests without
it: ``_sha2`` (``_sha256`` before Python 3.12) and ``_blake2``, which is what
``hashlib.blake2b`` is. Where the interpreter was built without them, :mod:`hashlib`'s are
used. The digests are the same bytes either way; only the cost differs.

OpenSSL's sha256 takes fewer instructions a byte, so :func:`sha256` takes :mod:`hashlib`'s
when it is imported already, or once the bytes the process hashed are :data:`LARGE` enough
to pay for importing it (a file hashed in full, a plan's texts hashed on a miss).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import _Hash
    from hashlib import blake2b as blake2b
    from hashlib import sha256 as _own_sha256
else:
    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256 as _own_sha256
        else:
            from _sha256 import sha256 as _own_sha256
    except ImportError:  # an interpreter built without it
        from hashlib import sha256 as _own_sha256
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b

__all__ = ["LARGE", "blake2b", "sha256", "sha256_hex"]

LARGE = 1 << 19
"""How many bytes a process hashes with the builtin sha256 before :func:`sha256` imports
:mod:`hashlib` (about where importing it costs less than the builtin module's extra
instructions on the bytes)."""


_openssl: Callable[[bytes], _Hash] | None = None
""":mod:`hashlib`'s sha256 once it is imported: from then on every input takes it, at the cost
of one look-up a call (a derivation hashes tens of thousands of small texts)."""


def sha256(data: bytes = b"", *, expected: int = 0) -> _Hash:
    """A sha256 object fed *data*, for *data* and about *expected* more bytes to come (see
    the module docstring: which implementation does not change the digest)."""
    made = _openssl or _choose(len(data) + expected)
    return made(data)


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of *data*."""
    made = _openssl or _choose(len(data))
    return made(data).hexdigest()


_own_bytes = 0
"""How many bytes the builtin sha256 was given (or promised) in this process."""


def _choose(size: int) -> Callable[[bytes], _Hash]:
    """The sha256 for *size* more bytes while :data:`_openssl` is unset: :mod:`hashlib`'s when
    it is imported (then kept in :data:`_openssl`) or when the bytes hashed in this process
    reach :data:`LARGE` (many small texts cost the builtin module's extra instructions as one
    large one does); the builtin one otherwise."""
    global _openssl
    global _own_bytes
    _own_bytes += size
    if "hashlib" not in sys.modules and _own_bytes < LARGE:
        return _own_sha256
    import hashlib

    _openssl = hashlib.sha256
    return hashlib.sha256
