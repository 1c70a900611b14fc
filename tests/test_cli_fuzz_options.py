"""Command-line options given empty or odd values through the real ``plangraph``: one usage
message naming the option, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph


@pytest.mark.parametrize("args", [("--output", ""), ("-o=",), ("--output=",)])
def test_keygen_with_an_empty_output_says_so(tmp_path: Path, args: tuple[str, ...]) -> None:
    result = plangraph(tmp_path, "keygen", *args)
    assert result.code == 2 and "Traceback" not in result.err
    assert "plangraph keygen: error: argument --output/-o: '' is empty" in result.err
    assert "give a file prefix" in result.err and "directory" not in result.err
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_long_revision_is_quoted_by_at_most_80_characters(jwt: Path) -> None:
    long = "n" * 100_000
    result = plangraph(jwt, "impact", "--since", long)
    assert result.code == 2 and "Traceback" not in result.err, result.err[-300:]
    assert result.err.startswith("plangraph: error: unknown revision 'nnn")
    assert "… (100,002 characters)" in result.err and len(result.err) < 400


@pytest.mark.parametrize(
    "args",
    [
        ("explain", "LONG"),
        ("history", "LONG"),
        ("saga", "LONG"),
        ("claim", "LONG", "--by", "agent"),
        ("approve", "LONG/ac-a", "--by", "alice"),
        ("approve", "step-user-schema/LONG", "--by", "alice"),
        ("revoke", "LONG/ac-a", "--by", "alice"),
        ("retry", "LONG", "--by", "alice"),
        ("cancel", "LONG", "--by", "alice"),
        ("verify", "LONG"),
        ("attest", "LONG"),
        ("approve", "LONG", "--by", "alice"),
        ("audit", "--expect-head", "LONG"),
        ("audit", "--max-age", "LONG"),
    ],
    ids=lambda args: "-".join(a for a in args if "LONG" not in a and a != "--by"),
)
def test_an_unknown_long_node_or_odd_option_value_is_quoted_by_at_most_80_characters(
    jwt: Path, args: tuple[str, ...]
) -> None:
    long = "q" * 10_000
    events = (jwt / ".plangraph" / "store.db").read_bytes()
    result = plangraph(jwt, *(a.replace("LONG", long) for a in args))
    assert result.code == 2 and "Traceback" not in result.err, result.err[-300:]
    assert result.err.startswith("plangraph: error: "), result.err[:300]
    assert "'qqq" in result.err and "… (10,002 characters)" in result.err, result.err[:300]
    assert len(result.err) < 600, result.err[:300]
    assert (jwt / ".plangraph" / "store.db").read_bytes() == events
