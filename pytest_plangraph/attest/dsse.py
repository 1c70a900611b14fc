"""DSSE envelopes (Dead Simple Signing Envelope, v1.0): PAE, signing and checking.

The signature covers ``PAE(payloadType, payload)``::

    "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body

with ``LEN`` the byte length as ASCII decimal and ``SP`` one space. The envelope is JSON:
``{"payload": <base64>, "payloadType": ..., "signatures": [{"keyid": ..., "sig": <base64>}]}``.
Key ids are this project's (the first 16 hex digits of sha256 of the raw public key, as
``plangraph keygen`` prints them).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..store.keys import SigningKey, TrustedKey, verify

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
"""The payload type of an in-toto statement."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """The DSSE pre-authentication encoding of *payload* of *payload_type*."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def sign(payload: bytes, payload_type: str, key: SigningKey) -> dict[str, Any]:
    """An envelope of *payload* signed with *key*."""
    signature = key.private.sign(pae(payload_type, payload))
    return {
        "payload": base64.b64encode(payload).decode("ascii"),
        "payloadType": payload_type,
        "signatures": [{"keyid": key.id, "sig": base64.b64encode(signature).decode("ascii")}],
    }


@dataclass(frozen=True)
class Opened:
    """What an envelope's signatures say: the payload, and the trusted key that signed it (None
    with *problem* saying why no signature counts)."""

    payload: bytes
    payload_type: str
    signer: TrustedKey | None
    problem: str | None


def open_envelope(envelope: Any, trusted: Mapping[str, TrustedKey]) -> Opened:
    """Check *envelope* (parsed JSON) against the *trusted* keys. A malformed envelope, a
    signature by no trusted key or one that does not verify gives an :class:`Opened` whose
    ``signer`` is None and whose ``problem`` says which."""
    if not isinstance(envelope, Mapping) or set(envelope) - {
        "payload",
        "payloadType",
        "signatures",
    }:
        return Opened(b"", "", None, "not a DSSE envelope (payload, payloadType, signatures)")
    payload_type = envelope.get("payloadType")
    payload = _b64(envelope.get("payload"))
    signatures = envelope.get("signatures")
    if not isinstance(payload_type, str) or payload is None:
        return Opened(b"", "", None, "the envelope's payload or payloadType is malformed")
    if not isinstance(signatures, list) or not signatures:
        return Opened(payload, payload_type, None, "the envelope carries no signature")
    message = pae(payload_type, payload)
    unknown: list[str] = []
    for entry in signatures:
        keyid = entry.get("keyid") if isinstance(entry, Mapping) else None
        raw = _b64(entry.get("sig")) if isinstance(entry, Mapping) else None
        key = trusted.get(keyid) if isinstance(keyid, str) else None
        if key is None:
            unknown.append(str(keyid))
            continue
        if raw is not None and verify(key.public, raw, message):
            return Opened(payload, payload_type, key, None)
    if unknown and len(unknown) == len(signatures):
        return Opened(
            payload,
            payload_type,
            None,
            f"signed by no trusted key (key id {', '.join(unknown)} is not in "
            "PLANGRAPH_TRUSTED_KEYS)",
        )
    return Opened(
        payload,
        payload_type,
        None,
        "the signature does not verify: the payload or the signature was changed after signing",
    )


def _b64(value: Any) -> bytes | None:
    """Strict base64 (standard or URL-safe alphabet, as DSSE allows), or None."""
    if not isinstance(value, str):
        return None
    try:
        text = value.replace("-", "+").replace("_", "/")
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def dumps(envelope: Mapping[str, Any]) -> str:
    """One envelope as a JSON line (no newline)."""
    return json.dumps(envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
