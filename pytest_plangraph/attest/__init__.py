"""Attestations (issue 20 §6): an in-toto Statement v1 about a completed node, in a DSSE envelope
signed with the Ed25519 key of ``PLANGRAPH_SIGNING_KEY_FILE``, and its verification against the
keys of ``PLANGRAPH_TRUSTED_KEYS`` and the files as they are now.

* :mod:`.dsse` — the envelope: PAE, signing, reading and checking signatures.
* :mod:`.statement` — the statement about one node, built from values.
* :mod:`.attesting` — the :class:`~pytest_plangraph.api.PlanGraph` methods over both.
"""
