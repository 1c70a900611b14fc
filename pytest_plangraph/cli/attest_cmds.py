"""``attest``: a signed in-toto attestation of a completed node, and its verification."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..regularfile import NotRegularFileError, TooLargeError, read_regular
from .common import Output, common_options, open_plangraph
from .writing import check_output, write_text

_MAX_READ = 64 << 20
"""Bytes of an attestation file read at most (one more tells a file too large)."""


def register(commands: Any) -> None:
    """Add the ``attest`` subcommand."""
    attest = commands.add_parser(
        "attest",
        parents=[common_options()],
        help="sign an in-toto attestation of a completed node, or verify one",
        description="Write an in-toto Statement v1 saying NODE is completed (subjects: the "
        "files its evidence is bound to and the plan file, with their sha256; predicate: the "
        "node, its criteria, evidence ids, plan digest and version, commit, verdict), in a DSSE "
        "envelope signed with the Ed25519 key of PLANGRAPH_SIGNING_KEY_FILE. A node that is not "
        "completed is refused (exit 1) with the gate's reasons. With --verify FILE, check an "
        "attestation against PLANGRAPH_TRUSTED_KEYS and the files as they are now (exit 1 when "
        "it does not verify).",
    )
    attest.add_argument("node", nargs="?", metavar="NODE", help="the completed node to attest")
    attest.add_argument(
        "--output",
        "-o",
        type=Path,
        metavar="FILE",
        help="write the envelope here (default: stdout)",
    )
    attest.add_argument(
        "--verify", type=Path, metavar="FILE", help="verify the attestation in FILE instead"
    )
    attest.set_defaults(handler=_attest)


def _attest(args: argparse.Namespace, out: Output) -> int:
    if (args.node is None) == (args.verify is None):
        raise UsageError(
            "give either NODE (to attest it) or --verify FILE (to check an attestation); "
            "e.g. `plangraph attest step-build --output step-build.intoto.json`"
        )
    if args.verify is not None:
        if args.output is not None:
            raise UsageError("--output goes with NODE; --verify only reads FILE")
        return _verify(args, out)
    with open_plangraph(args, reading=True) as plangraph:
        if args.output is not None:
            check_output(args.output, plangraph, "attestation")
        result = plangraph.attest(args.node)
    if result.envelope is None:
        lines = [f"{result.node}: not attested, the node is {result.status} (gate FAILED)"]
        lines += [f"  - {r.code}: {r.message}" for r in result.reasons]
        out.emit(result.to_json(), "\n".join(lines))
        return 1
    line = json.dumps(result.envelope, sort_keys=True, separators=(",", ":"))
    if args.output is None:
        out.emit(result.to_json(), line)
        return 0
    write_text(args.output, line + "\n")
    signer = result.envelope["signatures"][0]["keyid"]
    out.emit(
        {**result.to_json(), "output": str(args.output)},
        f"{result.node}: attested in {args.output} (signed by key {signer})",
    )
    return 0


def _verify(args: argparse.Namespace, out: Output) -> int:
    text = read_text(args.verify)
    with open_plangraph(args, reading=True) as plangraph:
        check = plangraph.verify_attestation(text)
    if check.verified:
        lines = [
            f"{args.verify}: verified: {check.node} attested, signed by key {check.signer}, "
            "every subject unchanged"
        ]
    else:
        lines = [f"{args.verify}: does NOT verify"]
        lines += [f"  - {problem}" for problem in check.problems]
    out.emit(check.to_json(), "\n".join(lines))
    return 0 if check.verified else 1


def read_text(path: Path) -> str:
    """The UTF-8 text of the regular file at *path*; UsageError saying why it cannot be read."""
    try:
        data = read_regular(path, _MAX_READ)
    except NotRegularFileError:  # a FIFO would block, a folder fail
        raise UsageError(f"{path} is not a regular file; name the file to read") from None
    except TooLargeError:
        raise UsageError(
            f"{path} is larger than {_MAX_READ >> 20} MiB; name the right file"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text; name the right file") from None
