"""``hashes``: sha256 and BLAKE2b without importing :mod:`hashlib` for small inputs give the
same digests as :mod:`hashlib` at every size (around :data:`~pytest_plangraph.hashes.LARGE`,
fed at once and in pieces); a process hashing small inputs never loads OpenSSL's
``_hashlib``, one hashing a large input or many small ones adding up to it does; an
interpreter without the builtin sha256 module falls back to :mod:`hashlib`'s."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from pytest_plangraph.hashes import LARGE, blake2b, sha256, sha256_hex

SIZES = [0, 1, 55, 56, 64, 1000, LARGE - 1, LARGE, LARGE + 1, 3 * LARGE + 7]


@pytest.mark.parametrize("size", SIZES)
def test_the_digests_are_hashlibs_at_every_size(size: int) -> None:
    data = bytes(i * 7 % 251 for i in range(size))
    expected = hashlib.sha256(data).hexdigest()
    assert sha256_hex(data) == expected
    assert sha256(data).hexdigest() == expected
    pieces = sha256(expected=size)
    for start in range(0, size, 4096):
        pieces.update(data[start : start + 4096])
    assert pieces.hexdigest() == expected
    key = b"k" * 32
    ours = blake2b(data, key=key, person=b"plangraph-test", digest_size=16).hexdigest()
    assert (
        ours == hashlib.blake2b(data, key=key, person=b"plangraph-test", digest_size=16).hexdigest()
    )


PROBE = """
import json, sys
for name in sys.argv[2:]:
    sys.modules[name] = None  # an interpreter built without it
from pytest_plangraph.hashes import blake2b, sha256, sha256_hex
size = int(sys.argv[1])
small = [sha256_hex(b"abc"), sha256(expected=10).hexdigest(), blake2b(b"abc").hexdigest()]
before = "_hashlib" in sys.modules
large = sha256_hex(b"x" * size)
print(json.dumps([small, large, before, "_hashlib" in sys.modules]))
"""


def _probe(size: int, *missing: str) -> list[object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(size), *missing],
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[object] = json.loads(done.stdout)
    return found


def _expected(size: int) -> list[object]:
    small = [hashlib.sha256(b"abc").hexdigest(), hashlib.sha256().hexdigest()]
    small.append(hashlib.blake2b(b"abc").hexdigest())
    return [small, hashlib.sha256(b"x" * size).hexdigest()]


def test_small_inputs_load_no_openssl_and_a_large_one_does() -> None:
    small, large, before, after = _probe(LARGE - 100)  # 13 bytes hashed before it
    assert [small, large] == _expected(LARGE - 100)
    assert before is False and after is False
    small, large, before, after = _probe(LARGE)
    assert [small, large] == _expected(LARGE)
    assert before is False and after is True


def test_without_the_builtin_modules_hashlibs_are_used() -> None:
    builtin = "_sha2" if sys.version_info >= (3, 12) else "_sha256"
    small, large, before, _ = _probe(10, builtin)
    assert [small, large] == _expected(10)
    assert before is True  # hashlib's own, with OpenSSL's


def test_many_small_inputs_load_openssl_once_they_add_up() -> None:
    code = (
        "import json, sys\n"
        "from pytest_plangraph.hashes import LARGE, sha256_hex\n"
        "seen = []\n"
        "for n in range(LARGE // 1024 + 2):\n"
        "    sha256_hex(n.to_bytes(4, 'big') * 256)\n"
        "    seen.append('_hashlib' in sys.modules)\n"
        "print(json.dumps([seen.index(True), sha256_hex(b'abc')]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, last = json.loads(done.stdout)
    assert first == LARGE // 1024 - 1  # the text that makes the bytes reach LARGE
    assert last == hashlib.sha256(b"abc").hexdigest()
