"""The test plan text and file hash shared by the plugin run tests."""

from __future__ import annotations

import hashlib


def sha256(path: object) -> str:
    with open(str(path), "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


SPLIT = """
import pytest

@pytest.mark.criterion("step-a/ac-marked")
def test_marked_{name}():
    assert {ok}
"""
