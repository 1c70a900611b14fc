"""``keygen``: an Ed25519 key pair for signing evidence where it is recorded."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import Output

DEFAULT_PREFIX = "plangraph-signing-key"


def register(commands: Any) -> None:
    """Add the key subcommands."""
    keygen = commands.add_parser(
        "keygen",
        help="write an Ed25519 key pair for signing evidence",
        description="Write a private key (PREFIX, mode 0600) and its public key (PREFIX.pub). "
        "Give the private key to the place that records evidence (PLANGRAPH_SIGNING_KEY_FILE) "
        "and list the public key, with its roles, in the trusted-keys file of the places that "
        "judge claims (PLANGRAPH_TRUSTED_KEYS). Existing files are never overwritten.",
    )
    keygen.add_argument("--format", choices=("text", "json"), default="text")
    keygen.add_argument(
        "--output",
        "-o",
        type=_prefix,
        default=Path(DEFAULT_PREFIX),
        metavar="PREFIX",
        help=f"where to write the pair (default: {DEFAULT_PREFIX} and {DEFAULT_PREFIX}.pub)",
    )
    keygen.set_defaults(handler=_keygen)


def _prefix(text: str) -> Path:
    """An argparse ``type`` for ``--output``: an empty text names no file (``Path("")`` would
    be the current directory, and the message would blame a directory not given)."""
    if not text:
        raise argparse.ArgumentTypeError(
            f"'' is empty; give a file prefix such as {DEFAULT_PREFIX} or keys/ci-key"
        )
    return Path(text)


def _keygen(args: argparse.Namespace, out: Output) -> int:
    from ..store.keys import generate

    private, public = generate(args.output)
    line = public.read_text(encoding="utf-8").split()
    data = {"private_key": str(private), "public_key": str(public), "id": line[2]}
    text = "\n".join(
        [
            f"private key: {private} (keep it secret: PLANGRAPH_SIGNING_KEY_FILE={private})",
            f"public key:  {public} (id {line[2]})",
            "trusted-keys entry (PLANGRAPH_TRUSTED_KEYS file, see docs/trust.md):",
            f"  - {{id: '{line[2]}', public_key: {line[1]}, roles: [ci]}}",
        ]
    )
    out.emit(data, text)
    return 0
