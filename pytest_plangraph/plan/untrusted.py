"""The codes of events the gate does not count, and the sentences that say why (pure).

:mod:`pytest_plangraph.store.trust` decides which events count; status derivation, ``history`` and
``audit`` say why one did not with these codes, without importing anything that checks keys.
They sit below both the store and the judge, which name them.
"""

from __future__ import annotations

from .model import LoggedEvent

UNSIGNED_EVENT = "UNSIGNED_EVENT"
BAD_SIGNATURE = "BAD_SIGNATURE"
UNTRUSTED_KEY = "UNTRUSTED_KEY"
ROLE_NOT_TRUSTED = "ROLE_NOT_TRUSTED"

DECISION_ROLE = "approver"
"""The role a person's decision needs (a retry grant, a cancel, and the approval of a criterion
that names no role)."""

MESSAGES = {
    UNSIGNED_EVENT: "it carries no signature, and a key is configured",
    BAD_SIGNATURE: "its signature does not verify (a wrong key, or an edited or forged event)",
    UNTRUSTED_KEY: "it is signed by a key that is not trusted here",
    ROLE_NOT_TRUSTED: "the key that signed it is not trusted for the role it needs",
}


def describe(code: str, event: LoggedEvent) -> str:
    """A sentence saying why *event* does not count."""
    what = MESSAGES.get(code, code)
    return f"{event.kind} event {event.seq} by {event.by} is ignored: {what}"
