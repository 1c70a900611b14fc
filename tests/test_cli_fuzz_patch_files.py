"""``plangraph patch`` writing back plan files kept in odd ways, through the real command: a plan
reached through a symbolic link is edited where it lives (the link stays a link), and a plan
written with CRLF line ends or a UTF-8 byte order mark keeps them (only the lines the patch
changes differ). A patch read from a standard input that is closed is one message, exit 2."""

from __future__ import annotations

import codecs
import os
import subprocess
from pathlib import Path

from cli_helpers import PLANGRAPH, plangraph
from repo_helpers import git

PATCH = (
    "plangraph_patch: 1\n"
    "nodes:\n"
    "  add: [{id: step-x, parent: objective-auth,"
    " acceptance: [{id: ac-1, verifier: {type: approval}}]}]\n"
)


def _patch(root: Path, version: str = "1") -> None:
    (root / "add.yaml").write_text(PATCH, encoding="utf-8")
    result = plangraph(root, "patch", "add.yaml", "--by", "a", "--expected-plan-version", version)
    assert result.code == 0, result.err
    assert "Traceback" not in result.err


def test_a_plan_reached_through_a_link_is_edited_where_it_lives(jwt: Path) -> None:
    (jwt / "plans").mkdir()
    git(jwt, "mv", "plangraph.yaml", "plans/auth.yaml")
    os.symlink(Path("plans") / "auth.yaml", jwt / "plangraph.yaml")
    git(jwt, "add", "-A")
    git(jwt, "commit", "-q", "-m", "the plan under plans/, linked")
    _patch(jwt)
    assert (jwt / "plangraph.yaml").is_symlink()
    assert os.readlink(jwt / "plangraph.yaml") == str(Path("plans") / "auth.yaml")
    assert "id: step-x" in (jwt / "plans" / "auth.yaml").read_text(encoding="utf-8")
    assert not [p.name for p in jwt.iterdir() if p.name.startswith(".plangraph.yaml.")]
    assert not [p.name for p in (jwt / "plans").iterdir() if p.name.startswith(".auth.yaml.")]


def test_a_plan_with_crlf_line_ends_and_a_byte_order_mark_keeps_them(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    before = plan.read_bytes()
    plan.write_bytes(codecs.BOM_UTF8 + before.replace(b"\n", b"\r\n"))
    _patch(jwt)  # the same plan as version 1: line ends and a BOM change no plan's meaning
    after = plan.read_bytes()
    assert after.startswith(codecs.BOM_UTF8 + b"plangraph: 1")
    assert after.count(b"\n") == after.count(b"\r\n") > before.count(b"\n")
    assert b"  - id: step-x\r\n" in after
    unchanged = before.replace(b"\n", b"\r\n")
    assert after[len(codecs.BOM_UTF8) :].startswith(unchanged.split(b"edges:")[0])


def test_a_plan_with_lf_line_ends_is_written_with_lf(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    before = plan.read_bytes()
    _patch(jwt)
    after = plan.read_bytes()
    assert b"\r" not in after and not after.startswith(codecs.BOM_UTF8)
    assert after.startswith(before.split(b"edges:")[0])


def test_a_patch_from_a_closed_standard_input_is_refused(jwt: Path) -> None:
    plan = (jwt / "plangraph.yaml").read_bytes()
    proc = subprocess.run(
        [str(PLANGRAPH), "patch", "-", "--by", "a", "--expected-plan-version", "1"],
        cwd=jwt,
        env={**os.environ, "PLANGRAPH_ACTOR": "tester"},
        preexec_fn=lambda: os.close(0),  # started with no standard input at all
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("plangraph: error: patch -: standard input is closed;")
    assert "patch.yaml" in proc.stderr and proc.stderr.count("\n") == 1
    assert (jwt / "plangraph.yaml").read_bytes() == plan


def test_document_markers_and_what_lies_outside_them_are_kept(jwt: Path) -> None:
    plan = jwt / "plangraph.yaml"
    body = plan.read_text(encoding="utf-8").replace(
        "constraints: [no-rbac, no-oauth]", "constraints: [no-rbac,  # why\n      no-oauth]"
    )
    head, tail = "# the auth plan\n%YAML 1.1\n--- # one document\n", "...\n# end of the plan\n"
    plan.write_text(head + body + tail, encoding="utf-8")
    _patch(jwt)  # the same plan as version 1: markers and comments change no plan's meaning
    after = plan.read_text(encoding="utf-8")
    assert after.startswith(head + "plangraph: 1  ")
    assert after.endswith("\n" + tail)
    assert "  - id: step-x\n" in after and after.count("\n---") == after.count("\n...") == 1
    # a node the patch does not change is kept as written, a comment in a flow sequence too
    assert "constraints: [no-rbac,  # why\n      no-oauth]" in after
    plan.write_bytes((head + body + tail).replace("\n", "\r\n").encode())  # version 1 again
    (jwt / "add.yaml").write_text(PATCH.replace("step-x", "step-y"), encoding="utf-8")
    again = plangraph(jwt, "patch", "add.yaml", "--by", "a", "--expected-plan-version", "1")
    assert again.code == 0, again.err
    crlf = plan.read_bytes()
    assert crlf.startswith(head.replace("\n", "\r\n").encode()) and b"step-y" in crlf
    assert crlf.endswith(tail.replace("\n", "\r\n").encode())
    assert crlf.count(b"\n") == crlf.count(b"\r\n")
