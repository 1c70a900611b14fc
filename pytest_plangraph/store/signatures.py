"""The two kinds of event signature and how a stored signature says which it is.

``signature`` holds one of:

* ``<64 hex digits>`` — HMAC-SHA256(``PLANGRAPH_SIGNING_KEY``, hash), as :mod:`.chain` makes it.
  It vouches for the event at its place in one store's chain, so a merge signs it anew.
* ``ed25519:<key id>:<base64 signature>`` — an Ed25519 signature, by the private key in
  ``PLANGRAPH_SIGNING_KEY_FILE``, of ``plangraph-event-v1`` NUL ``<content id>``. It vouches for
  the event's content (its id is the sha256 of that content, recording time included) wherever
  the event is stored, so it survives ``plangraph merge`` unchanged and anyone holding the
  public key can check it.

The signature is outside the content id and the chain hash: signing changes neither, and a store
written before Ed25519 signatures existed reads as it did.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .keys import SigningKey

SIGNING_KEY_FILE_ENV = "PLANGRAPH_SIGNING_KEY_FILE"
"""Names the Ed25519 private key that signs every event appended (where evidence is recorded)."""

ED25519_PREFIX = "ed25519:"

_EVENT_DOMAIN = b"plangraph-event-v1\0"
_CHECKPOINT_DOMAIN = b"plangraph-checkpoint-v1\0"

_loaded: dict[tuple[str, int, int], SigningKey] = {}


def event_message(content_id: str) -> bytes:
    """What an Ed25519 event signature signs: a domain tag and the event's content id."""
    return _EVENT_DOMAIN + content_id.encode("utf-8")


def checkpoint_message(text: str) -> bytes:
    """What an Ed25519 checkpoint signature signs (never mistaken for an event's)."""
    return _CHECKPOINT_DOMAIN + text.encode("utf-8")


def signer_from_env() -> SigningKey | None:
    """The private key named by ``PLANGRAPH_SIGNING_KEY_FILE`` (read again when the file
    changes), or None when the variable is unset or empty."""
    value = os.environ.get(SIGNING_KEY_FILE_ENV)
    if not value:
        return None
    from .keys import load_private  # the keys' module: only with a key named

    path = Path(value)
    try:
        info = path.stat()
        memo = (str(path.resolve()), info.st_mtime_ns, info.st_mode)
    except (OSError, RuntimeError):
        return load_private(path, SIGNING_KEY_FILE_ENV)  # says why it cannot be read
    found = _loaded.get(memo)
    if found is None:
        found = _loaded[memo] = load_private(path, SIGNING_KEY_FILE_ENV)
    return found


def is_ed25519(signature: str | None) -> bool:
    """Whether a stored signature is an Ed25519 one (else HMAC, or none)."""
    return bool(signature) and str(signature).startswith(ED25519_PREFIX)


def parse_ed25519(signature: str) -> tuple[str, bytes] | None:
    """The key id and signature bytes of an ``ed25519:`` signature, None when malformed."""
    parts = signature.split(":")
    if len(parts) != 3 or parts[0] != ED25519_PREFIX[:-1] or not parts[1]:
        return None
    try:
        raw = base64.b64decode(parts[2], validate=True)
    except (binascii.Error, ValueError):
        return None
    return (parts[1], raw) if len(raw) == 64 else None
