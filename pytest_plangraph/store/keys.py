"""Ed25519 key files: making a key pair, reading a private key, reading the trusted-keys file.

This module owns every file that holds a key and every call into ``cryptography``, which is
imported only when a key is made, read or used. A key's id is the first 16 hex digits of the
sha256 of its 32 raw public bytes: it is computed, never taken from a file, so a file cannot
name one key with another's id.

Files (documented for users in ``docs/trust.md``):

* private key (``plangraph keygen`` writes ``PREFIX``): PKCS#8 PEM, unencrypted, mode 0600;
  named by ``PLANGRAPH_SIGNING_KEY_FILE`` where evidence is recorded.
* public key (``PREFIX.pub``): one line ``ed25519 <base64 of the 32 raw bytes> <key id>``.
* trusted keys (``PLANGRAPH_TRUSTED_KEYS``), JSON or YAML::

      format: 1
      keys:
        - public_key: <base64 of the 32 raw bytes, or a whole .pub line>
          roles: [ci]                # what this key may vouch for
          id: <key id>               # optional; checked against the key when given

Every problem with one of these files is a :class:`~pytest_plangraph.errors.UsageError`
(exit 2) saying what is wrong, where, and how to fix it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import TOO_LONG_NUMBER, UsageError
from ..hashes import sha256_hex
from ..regularfile import read_regular
from ..values import dataclass

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

KEYS_FORMAT = 1
"""The ``format`` of the trusted-keys file this release reads."""


@dataclass(frozen=True)
class TrustedKey:
    """One public key of the trusted-keys file and the roles it may vouch for."""

    id: str
    public: bytes
    roles: frozenset[str]


@dataclass(frozen=True)
class SigningKey:
    """A private key read from a file, with the id of its public half."""

    id: str
    private: Ed25519PrivateKey

    def sign(self, message: bytes) -> str:
        """The signature of *message* as stored: ``ed25519:<key id>:<base64>``."""
        return f"ed25519:{self.id}:{base64.b64encode(self.private.sign(message)).decode()}"


def key_id(public: bytes) -> str:
    """The id of a public key: the first 16 hex digits of sha256 of its raw bytes."""
    return sha256_hex(public)[:16]


_verifiers: dict[bytes, Callable[[bytes, bytes], None]] = {}


def verify(public: bytes, signature: bytes, message: bytes) -> bool:
    """Whether *signature* is an Ed25519 signature of *message* by *public* (each public key
    is decoded once per process: a status may check tens of thousands of signatures)."""
    from cryptography.exceptions import InvalidSignature

    check = _verifiers.get(public)
    if check is None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        check = _verifiers[public] = Ed25519PublicKey.from_public_bytes(public).verify
    try:
        check(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def generate(prefix: Path) -> tuple[Path, Path]:
    """Write a new key pair: the private key at *prefix* (mode 0600) and the public key at
    ``<prefix>.pub``; an existing file is never overwritten. Returns both paths."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not prefix.name or prefix.name in (".", "..") or prefix.is_dir():
        raise UsageError(
            f"--output {prefix} is a directory; give a file prefix such as {prefix / 'ci-key'}"
        )
    public_path = prefix.with_name(f"{prefix.name}.pub")
    for path in (prefix, public_path):
        if os.path.lexists(path):
            raise UsageError(
                f"refusing to overwrite {path}: a key file is never replaced (evidence signed "
                "with the old key would lose its signer); choose another --output PREFIX"
            )
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    line = f"ed25519 {base64.b64encode(raw).decode()} {key_id(raw)}\n"
    written: list[Path] = []
    try:
        for path, data, mode in ((prefix, pem, 0o600), (public_path, line.encode(), 0o644)):
            _write_new(path, data, mode)
            written.append(path)
    except OSError as exc:
        for path in written:  # half a pair would only make the next try refuse to overwrite
            with contextlib.suppress(OSError):
                path.unlink()
        raise UsageError(f"cannot write the key pair at {prefix}: {exc.strerror}") from None
    return prefix, public_path


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create *path* with *mode* (it must not exist yet) and write *data*."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


_MAX_KEY_FILE = 1 << 20
"""Bytes read of a key file at most: a key or a trusted-keys file is far smaller."""


def _read_key_file(path: Path) -> tuple[os.stat_result, bytes]:
    """The stat and the first ``_MAX_KEY_FILE + 1`` bytes of *path*, which must be a regular
    file: a FIFO, a device or a directory is refused before it is read (reading a FIFO blocks
    until a writer comes, which may be never). OSError when it cannot be read."""
    return read_regular(path, _MAX_KEY_FILE + 1, cut=True, with_stat=True)


def load_private(path: Path, variable: str) -> SigningKey:
    """The Ed25519 private key in the file at *path* (named by the environment *variable*)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    where = f"{variable}={path}"
    try:
        info, data = _read_key_file(path)
    except OSError as exc:
        raise UsageError(
            f"{where}: the private key cannot be read ({exc.strerror}); point {variable} at the "
            "file `plangraph keygen` wrote"
        ) from None
    if os.name == "posix" and stat.S_IMODE(info.st_mode) & 0o077:
        raise UsageError(
            f"{where}: the private key may be read by others (mode "
            f"{stat.S_IMODE(info.st_mode):04o}); run `chmod 600 {path}`"
        )
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise UsageError(
            f"{where}: not an unencrypted PEM private key ({exc}); make one with `plangraph keygen`"
        ) from None
    if not isinstance(private, Ed25519PrivateKey):
        raise UsageError(f"{where}: not an Ed25519 key; make one with `plangraph keygen`")
    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return SigningKey(key_id(raw), private)


def load_trusted(path: Path, variable: str) -> dict[str, TrustedKey]:
    """The keys of the trusted-keys file at *path*, by id."""
    where = f"{variable}={path}"
    try:
        info, data = _read_key_file(path)
        if len(data) > _MAX_KEY_FILE:  # only its first MiB was read: not to be told as cut off
            raise UsageError(
                f"{where}: the trusted-keys file is larger than 1 MiB ({info.st_size:,} bytes), "
                "more than a list of trusted public keys needs (over 10,000 keys); list only "
                "the keys this repository trusts"
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        what = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise UsageError(
            f"{where}: the trusted-keys file cannot be read ({what}); point {variable} at a "
            "readable file (format in docs/trust.md)"
        ) from None
    data = _parse(text, where)
    if not isinstance(data, Mapping) or data.get("format") != KEYS_FORMAT:
        raise UsageError(
            f"{where}: expected a mapping with `format: {KEYS_FORMAT}` and `keys: [...]` "
            "(see docs/trust.md)"
        )
    entries = data.get("keys")
    if not isinstance(entries, list) or set(data) - {"format", "keys"}:
        raise UsageError(f"{where}: expected only `format` and a list `keys` (see docs/trust.md)")
    keys: dict[str, TrustedKey] = {}
    for i, entry in enumerate(entries):
        key = _entry(entry, f"{where}: keys[{i}]")
        keys[key.id] = TrustedKey(key.id, key.public, keys.get(key.id, key).roles | key.roles)
    return keys


def _parse(text: str, where: str) -> Any:
    import yaml

    from ..plan.yaml_reader import libyaml_loader

    fast = libyaml_loader()  # libyaml, when PyYAML was built with it (and it is usable)
    if fast is not None:  # a file of thousands of keys: read in C, not in pure Python
        try:
            return yaml.load(text, Loader=_loader(fast))
        except (yaml.YAMLError, RecursionError, ValueError):
            pass  # told below as PyYAML's own reader tells it: one message, libyaml or not
    try:
        return yaml.load(text, Loader=_loader(yaml.SafeLoader))  # a safe loader; JSON is YAML too
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None)
        why = f" ({problem})" if isinstance(problem, str) and "twice" in problem else ""
        raise UsageError(f"{where}: not valid YAML or JSON{at}{why}; fix the file") from None
    except RecursionError:
        raise UsageError(
            f"{where}: nested too deeply to be a trusted-keys file; fix the file"
        ) from None
    except ValueError:  # a whole number of more digits than Python converts
        raise UsageError(f"{where}: {TOO_LONG_NUMBER}; fix the file") from None


@functools.cache
def _loader(base: Any) -> Any:
    """The safe loader *base* (PyYAML's, or libyaml's ``CSafeLoader``), refusing a key written
    twice in one mapping: a reader of the file would see two entries where YAML keeps only the
    last."""
    import yaml

    class _Loader(base):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, str) and key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} is written twice", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return _Loader


def _entry(entry: Any, where: str) -> TrustedKey:
    if not isinstance(entry, Mapping) or set(entry) - {"id", "public_key", "roles"}:
        raise UsageError(f"{where}: expected a mapping of public_key, roles and optionally id")
    text = entry.get("public_key")
    parts = text.split() if isinstance(text, str) else []
    encoded = parts[1] if len(parts) >= 2 and parts[0] == "ed25519" else "".join(parts)
    try:
        public = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        public = b""
    if len(public) != 32:
        raise UsageError(
            f"{where}.public_key: expected the base64 of a 32-byte Ed25519 public key (the "
            "second word of a .pub file `plangraph keygen` wrote)"
        )
    roles = entry.get("roles")
    if not (
        isinstance(roles, list) and roles and all(isinstance(r, str) and r.strip() for r in roles)
    ):
        raise UsageError(f"{where}.roles: expected a non-empty list of role names, e.g. [ci]")
    found = key_id(public)
    given = entry.get("id")
    if given is not None and (not isinstance(given, str) or given != found):
        raise UsageError(
            f"{where}.id: {given!r} is not this key's id {found!r}; remove the id or write it "
            f"as quoted text, id: '{found}'"
        )
    return TrustedKey(found, public, frozenset(roles))
