"""Judging, pure: the input digests (Merkle), the fold of the event log, the ledger a
derivation indexes, evidence validity and the completion gate, status derivation and
the building of evidence records. Values in, values out: no git, no SQL, no pytest.
"""
