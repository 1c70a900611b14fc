"""Which events the gate counts: the one filter between the store's log and status derivation.

Without keys configured every event counts, as it always did. With a key configured —
``PLANGRAPH_SIGNING_KEY`` (HMAC) or ``PLANGRAPH_TRUSTED_KEYS`` (a file of Ed25519 public keys and
their roles, see :mod:`pytest_plangraph.store.keys`) — an event that could make a node count as done
or lift a refusal counts only when its signature verifies with a key trusted for it:

============  ===========================================================================
kind          counted when signed by
============  ===========================================================================
evidence      a key with role ``ci``
approval      a key with the role the approval names (``approve --role``); ``approver``
              when it names none
retry/cancel  a key with role ``approver`` (a person's decision)
============  ===========================================================================

The HMAC key stands for every role: whoever holds it can sign anything. Claims and revokes count
unsigned: they can only hold a node back, and the agent that claims holds no key (its refused
claims must still count against its retry budget). An event that does not count is kept out of
the fold (:meth:`~..judge.logfold.LogFold.ignore`), which remembers it with its code so
that status, ``history`` and ``audit`` show it: ``UNSIGNED_EVENT``, ``BAD_SIGNATURE``,
``UNTRUSTED_KEY`` (signed by a key not in the trusted-keys file, or an HMAC signature where no
HMAC key is set), ``ROLE_NOT_TRUSTED`` (a trusted key without the role).

:func:`screen` is where every read of the log for derivation passes (the checkpoint's reads,
``audit``, ``history``). A checkpoint of a fold is only as good as the filter it was made with,
so it carries :meth:`Policy.fingerprint` and a signature :meth:`Policy.sign_checkpoint` makes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StoreTamperedError
from ..hashes import sha256_hex
from ..values import dataclass, field
from .chain import chain_hash, sign, signing_key_from_env
from .signatures import (
    checkpoint_message,
    event_message,
    is_ed25519,
    parse_ed25519,
    signer_from_env,
)
from .tail import tampered

if TYPE_CHECKING:
    from ..plan.model import LoggedEvent
    from . import Store
    from .keys import TrustedKey

TRUSTED_KEYS_ENV = "PLANGRAPH_TRUSTED_KEYS"

EVIDENCE_ROLE = "ci"
VOUCHED_KINDS = ("evidence", "approval", "retry", "cancel")
"""The kinds of event that count only when signed, once a key is configured."""


def required_role(kind: str, payload: Mapping[str, Any]) -> str:
    """The role a key needs to vouch for an event of *kind* with *payload*."""
    if kind == "evidence":
        return EVIDENCE_ROLE
    from ..plan.untrusted import DECISION_ROLE  # with keys configured alone (as below)

    role = payload.get("role") if kind == "approval" else None
    return role if isinstance(role, str) and role else DECISION_ROLE


@dataclass(frozen=True)
class Policy:
    """The keys this process trusts: an HMAC key and Ed25519 public keys with their roles."""

    hmac_key: bytes | None = None
    trusted: Mapping[str, TrustedKey] = field(default_factory=dict)
    keys_file: bool = False

    @property
    def configured(self) -> bool:
        """True when only signed events count (a key, or a trusted-keys file, is set)."""
        return self.hmac_key is not None or self.keys_file

    def fingerprint(self) -> str:
        """What a fold filtered with this policy depends on (no secret can be read from it)."""
        if not self.configured:
            return "none"
        parts = [sign(self.hmac_key, "plangraph-trust") if self.hmac_key is not None else "-"]
        for key in sorted(self.trusted.values(), key=lambda k: k.id):
            parts.append(f"{key.public.hex()}:{','.join(sorted(key.roles))}")
        return sha256_hex("\n".join(parts).encode("utf-8"))

    def check(
        self, kind: str, payload: Mapping[str, Any], content_id: str, chain: Sequence[str]
    ) -> str | None:
        """The code that keeps an event out of derivation, or None when it counts. *chain*
        is the event's (prev, hash, signature) as stored."""
        if not self.configured or kind not in VOUCHED_KINDS:
            return None
        import hmac  # with keys configured alone (as the keys module)

        from ..plan.untrusted import BAD_SIGNATURE, ROLE_NOT_TRUSTED, UNSIGNED_EVENT, UNTRUSTED_KEY
        from .keys import verify

        prev, link, signature = chain
        if not signature:
            return UNSIGNED_EVENT
        if not is_ed25519(signature):
            if self.hmac_key is None:
                return UNTRUSTED_KEY
            good = chain_hash(prev, content_id) == link and hmac.compare_digest(
                signature.encode(), sign(self.hmac_key, link).encode()
            )
            return None if good else BAD_SIGNATURE
        parsed = parse_ed25519(signature)
        if parsed is None:
            return BAD_SIGNATURE
        key = self.trusted.get(parsed[0])
        if key is None:
            return UNTRUSTED_KEY
        if not verify(key.public, parsed[1], event_message(content_id)):
            return BAD_SIGNATURE
        return None if required_role(kind, payload) in key.roles else ROLE_NOT_TRUSTED

    def sign_checkpoint(self, text: str) -> str | None:
        """A signature of a checkpoint's *text* that this policy will accept again: HMAC with
        the HMAC key, else Ed25519 with ``PLANGRAPH_SIGNING_KEY_FILE`` when that key is trusted
        here with role ``ci``; None when neither can be made (the checkpoint is not written)."""
        if self.hmac_key is not None:
            return sign(self.hmac_key, text)
        signer = signer_from_env()
        key = None if signer is None else self.trusted.get(signer.id)
        if signer is None or key is None or EVIDENCE_ROLE not in key.roles:
            return None
        return signer.sign(checkpoint_message(text))

    def checkpoint_holds(self, text: str, signature: object) -> bool:
        """Whether *signature* vouches for a checkpoint's *text* under this policy."""
        import hmac

        from .keys import verify

        if not isinstance(signature, str):
            return False
        if self.hmac_key is not None and not is_ed25519(signature):
            return hmac.compare_digest(signature.encode(), sign(self.hmac_key, text).encode())
        parsed = parse_ed25519(signature) if is_ed25519(signature) else None
        key = None if parsed is None else self.trusted.get(parsed[0])
        if parsed is None or key is None or EVIDENCE_ROLE not in key.roles:
            return False
        return verify(key.public, parsed[1], checkpoint_message(text))


_files: dict[tuple[str, int, int], Mapping[str, TrustedKey]] = {}


def policy_from_env() -> Policy:
    """The policy of ``PLANGRAPH_SIGNING_KEY`` and ``PLANGRAPH_TRUSTED_KEYS`` (a file read
    again when it changes); UsageError when the trusted-keys file is missing or wrong."""
    hmac_key = signing_key_from_env()
    value = os.environ.get(TRUSTED_KEYS_ENV)
    if not value:
        return Policy(hmac_key)
    path = Path(value)
    try:
        info = path.stat()
        memo = (str(path.resolve()), info.st_mtime_ns, info.st_size)
    except (OSError, RuntimeError):
        memo = None
    trusted = _files.get(memo) if memo is not None else None
    if trusted is None:
        from .keys import load_trusted  # with a trusted-keys file alone

        trusted = load_trusted(path, TRUSTED_KEYS_ENV)
        if memo is not None:
            _files[memo] = trusted
    return Policy(hmac_key, trusted, keys_file=True)


def local_caches_count() -> bool:
    """Whether what this user's caches hold (file hashes, parsed plans, lint results) may stand
    in for reading the files: only without keys configured. Those caches are authenticated with
    this user's key, which any process of this user can read — an agent included — so with keys
    configured the gate believes none of them: every file is hashed and the plan parsed anew
    (docs/trust.md). The log's checkpoint is signed with a configured key and still counts."""
    return not policy_from_env().configured


def screen(
    store: Store, events: Sequence[LoggedEvent], policy: Policy, after_seq: int = 0
) -> dict[int, str]:
    """The events of *events* (read after *after_seq*) that do not count under *policy*: their
    seq and code. Only events of the vouched kinds are looked up and checked.

    Which events need a signature is decided by the kind the fold reads (the ``log`` row's),
    and that kind must be the stored event's: an event of a vouched kind with no such event
    stored at its seq is not taken as one that needs no signature, but raises
    :class:`~pytest_plangraph.errors.StoreTamperedError` (the log and the events disagree, as
    a log row edited by hand does)."""
    if not policy.configured or not events:
        return {}
    chains = store.signatures(after_seq, VOUCHED_KINDS)
    found: dict[int, str] = {}
    for event in events:
        if event.kind not in VOUCHED_KINDS:  # the kind the fold reads: claims count unsigned
            continue
        chain = chains.get(event.seq)
        if chain is None or chain[0] != event.kind:  # fail closed: no event of this kind
            stored = "no kind that needs a signature" if chain is None else f"kind {chain[0]}"
            problem = tampered(
                event.seq, event.id, f"its log row says {event.kind}, but its event has {stored}"
            )
            raise StoreTamperedError(problem.message, problem.seq, problem.event_id)
        code = policy.check(event.kind, event.payload, event.id, chain[1:])
        if code is not None:
            found[event.seq] = code
    return found


def screen_stored(store: Store, events: Sequence[LoggedEvent]) -> dict[int, str]:
    """:func:`screen` for events this process just stored, under the environment's policy:
    what it recorded counts only as far as the keys it signed with are trusted."""
    if not events:
        return {}
    return screen(store, events, policy_from_env(), min(e.seq for e in events) - 1)
