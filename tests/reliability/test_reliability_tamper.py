"""Every tampering measured today is caught by ``plangraph audit`` (a finding, or the store refused
as a whole with ``STORE_TAMPERED``): the cases of the reliability figures. Whether the gate refuses
as well is measured and reported by ``bench/reliability.py``, and docs/reliability.md lists the
cases still pending."""

from __future__ import annotations

from pathlib import Path

from harness_tamper import CASES, measure


def test_every_measured_tampering_is_caught_by_audit(tmp_path: Path) -> None:
    results = [measure(tmp_path, case) for case in CASES]
    missed = [(r.case.name, r.findings) for r in results if not r.audited]
    assert missed == []
    assert all(result.caught for result in results)
