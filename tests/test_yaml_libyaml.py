"""YAML that is not a plan edited by the round-trip editor (a trusted-keys file, a ``schema``
verifier's YAML artifact) is read by libyaml when PyYAML was built with it, and a bad file is
told in the same words, line and column as by PyYAML's own reader: each case is run both
ways, the second with ``yaml.CSafeLoader`` taken away, through the real command or the real
reader."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml
from cli_helpers import plangraph_main
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from pytest_plangraph.verifiers.documents import parse_document


def _both_ways(monkeypatch: pytest.MonkeyPatch, ask):  # type: ignore[no-untyped-def]
    """What *ask()* answers with libyaml, and without it (pure-Python PyYAML)."""
    assert getattr(yaml, "CSafeLoader", None) is not None, "PyYAML here is built with libyaml"
    fast = ask()
    with monkeypatch.context() as patched:
        patched.delattr(yaml, "CSafeLoader")
        slow = ask()
    return fast, slow


def _public() -> str:
    raw = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return base64.b64encode(raw).decode()


BAD_KEYS = {
    "unclosed": ("format: 1\nkeys: [\n  {public_key: K, roles: [ci]},\n", "at line 4"),
    "indented": ("format: 1\nkeys: []\n bad: 2\n", "at line 3"),
    "twice": ("format: 1\nformat: 1\nkeys: []\n", "(the key 'format' is written twice)"),
    "control": ("format: 1\x01\nkeys: []\n", "not valid YAML or JSON"),
    "deep": ("[" * 3000 + "]" * 3000, "nested too deeply"),
    "long-number": ("format: " + "1" * 5000 + "\nkeys: []\n", "a number too long"),
}


@pytest.mark.parametrize("case", list(BAD_KEYS))
def test_a_bad_trusted_keys_file_is_told_the_same_with_or_without_libyaml(
    jwt: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    text, expected = BAD_KEYS[case]
    path = jwt.parent / "trusted.yaml"
    path.write_text(text.replace("K", _public()), encoding="utf-8")
    env = {"PLANGRAPH_TRUSTED_KEYS": str(path)}
    fast, slow = _both_ways(monkeypatch, lambda: plangraph_main(jwt, "status", env=env))
    assert fast == slow
    assert fast.code == 2 and "Traceback" not in fast.err
    assert fast.err.startswith(f"plangraph: error: PLANGRAPH_TRUSTED_KEYS={path}: ")
    assert expected in fast.err, fast.err


def test_a_large_trusted_keys_file_reads_the_same_with_or_without_libyaml(
    jwt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = jwt.parent / "trusted.yaml"
    keys = "".join(f"  - {{public_key: {_public()}, roles: [ci, approver]}}\n" for _ in range(500))
    path.write_text(f"format: 1\nkeys:\n{keys}", encoding="utf-8")
    env = {"PLANGRAPH_TRUSTED_KEYS": str(path)}
    fast, slow = _both_ways(
        monkeypatch, lambda: plangraph_main(jwt, "status", "--format", "json", env=env)
    )
    assert fast.code == slow.code == 0, fast.err
    assert fast.json() == slow.json()


BAD_ARTIFACTS = [
    "email: [unclosed\n",
    "a: 1\n b: 2\n",
    "{a: 1",
    "a: \x01\n",
    "a: &x [*x]\n",
    "a: .nan\n",
    "1: one\n",
    "[" * 3000 + "]" * 3000,
]


@pytest.mark.parametrize("text", BAD_ARTIFACTS)
def test_a_bad_yaml_artifact_is_told_the_same_with_or_without_libyaml(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    def told() -> str:
        with pytest.raises(ValueError) as refused:
            parse_document(text.encode("utf-8"), "user.yaml")
        return str(refused.value)

    fast, slow = _both_ways(monkeypatch, told)
    assert fast == slow and fast.startswith("user.yaml: ")


def test_a_yaml_artifact_reads_the_same_with_or_without_libyaml(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = b"name: alice\nborn: 2001-02-03\ntags: &t [a, b]\nagain: *t\nn: 1.5e3\nok: yes\n"
    fast, slow = _both_ways(monkeypatch, lambda: parse_document(text, "user.yaml"))
    assert fast == slow
    assert fast["born"] == "2001-02-03" and fast["again"] == ["a", "b"] and fast["ok"] is True


def test_a_good_trusted_keys_file_is_read_by_libyaml_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that reads well is not read again by PyYAML's pure-Python reader (the one that
    takes four times as long: bench, not here): its ``Reader`` is never made with libyaml
    there, and is without it."""
    from pytest_plangraph.store.keys import load_trusted

    path = tmp_path / "trusted.yaml"
    keys = "".join(f"  - {{public_key: {_public()}, roles: [ci]}}\n" for _ in range(50))
    path.write_text(f"format: 1\nkeys:\n{keys}", encoding="utf-8")
    made: list[object] = []
    pure = yaml.reader.Reader.__init__

    def counted(self: object, stream: object) -> None:
        made.append(self)
        pure(self, stream)  # type: ignore[arg-type]

    monkeypatch.setattr(yaml.reader.Reader, "__init__", counted)

    def read() -> tuple[int, int]:
        before = len(made)
        found = load_trusted(path, "PLANGRAPH_TRUSTED_KEYS")
        return len(found), len(made) - before

    (fast_keys, fast_readers), (slow_keys, slow_readers) = _both_ways(monkeypatch, read)
    assert fast_keys == slow_keys == 50
    assert fast_readers == 0 and slow_readers == 1


def test_a_trusted_keys_file_over_a_mib_is_told_by_its_size_not_as_bad_yaml(jwt: Path) -> None:
    path = jwt.parent / "trusted.yaml"
    keys = "".join(f"  - {{public_key: {_public()}, roles: [ci]}}\n" for _ in range(15_000))
    path.write_text(f"format: 1\nkeys:\n{keys}", encoding="utf-8")
    size = path.stat().st_size
    assert size > 1 << 20
    result = plangraph_main(jwt, "status", env={"PLANGRAPH_TRUSTED_KEYS": str(path)})
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err == (
        f"plangraph: error: PLANGRAPH_TRUSTED_KEYS={path}: the trusted-keys file is larger "
        f"than 1 MiB ({size:,} bytes), more than a list of trusted public keys needs (over "
        "10,000 keys); list only the keys this repository trusts\n"
    )
