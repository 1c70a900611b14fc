"""What a plan file may be and hold: only a regular file, values of their own type, ASCII ids,
a sha256 pin in either case, and a --root that exists."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import PLANGRAPH, plangraph_main

from pytest_plangraph.api import PlanGraph
from pytest_plangraph.errors import PlanError, UsageError
from pytest_plangraph.plan.file import load_plan
from pytest_plangraph.plan.model import criterion_digest
from pytest_plangraph.vcs.workspace import Workspace
from pytest_plangraph.verifiers import Registry

HEADER = "plangraph: 1\nplan: p\n"
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def problems(path: Path) -> list[str]:
    with pytest.raises(PlanError) as info:
        load_plan(path, "plan.yaml")
    return [str(p) for p in info.value.problems]


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A real command that must end: a timeout here is the defect (a blocked open)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    return subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )


# --- only a regular file is a plan ------------------------------------------------------------


@needs_fifo
def test_a_fifo_is_refused_by_every_entry_point_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    message = "fifo: is a named pipe (FIFO), not a regular file; pass the path of a plan file"
    for args in (["status", "--plan", "fifo"], ["lint", "fifo"]):
        result = run(tmp_path, str(PLANGRAPH), *args)
        assert result.returncode == 2, result.stderr
        assert result.stderr == f"plangraph: error: {message}\n"
    result = run(
        tmp_path, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--plangraph=fifo"
    )
    assert result.returncode == 4
    assert f"--plangraph: {message}" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


FIFO_PLAN = """
plangraph: 1
plan: pipes
nodes:
  - id: a
    outputs: [data/user.json]
    acceptance:
      - id: schema
        verifier: {type: schema, schema: data/pipe-schema.json, artifact: data/user.json}
      - id: artifact
        verifier: {type: schema, schema: data/schema.json, artifact: data/pipe-artifact.json}
"""


@needs_fifo
def test_a_named_pipe_in_a_verifiers_settings_is_refused_never_waited_on(tmp_path):
    """A schema verifier's schema or artifact that is a FIFO: lint, status and verify say what
    it is at once instead of waiting for a writer."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data/user.json").write_text('{"name": "x"}')
    (tmp_path / "data/schema.json").write_text('{"type": "object"}')
    (tmp_path / "plangraph.yaml").write_text(FIFO_PLAN)
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / "data/pipe-schema.json")
    os.mkfifo(tmp_path / "data/pipe-artifact.json")
    lint = run(tmp_path, str(PLANGRAPH), "lint", "plangraph.yaml")
    assert lint.returncode == 1
    assert "data/pipe-schema.json is not a regular file" in lint.stdout
    assert run(tmp_path, str(PLANGRAPH), "status").returncode == 0
    verify = run(tmp_path, str(PLANGRAPH), "verify")
    assert verify.returncode == 1
    assert "a/artifact: data/pipe-artifact.json is not a regular file" in verify.stdout


# --- paths and values the system or argparse refuse -------------------------------------------


def _nested(opening: str, closing: str, depth: int) -> str:
    return opening * depth + closing * depth


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.yaml", f"{HEADER}nodes: {_nested('[', ']', 400)}\n"),
        ("deep.json", '{"plangraph": 1, "plan": "p", "nodes": ' + _nested("[", "]", 5000) + "}"),
    ],
)
def test_a_plan_nested_too_deeply_is_refused_in_one_line(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    result = run(tmp_path, str(PLANGRAPH), "lint", name)
    assert result.returncode == 2
    assert result.stderr == f"plangraph: error: {name}: values nested too deeply to read; " + (
        "a plan nests a few levels of mappings and lists\n"
        if name.endswith(".yaml")
        else "a plan nests a few levels of objects\n"
    )


def test_paths_the_system_refuses_are_told_in_one_line(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    long_name = "a" * 300
    cases = [
        (["status", "--plan", "loop-a"], "--plan loop-a: its symlinks loop"),
        (["export", "--store", "loop-a"], "--store loop-a: its symlinks loop"),
        (["lint", f"{long_name}.yaml"], "File name too long"),
        (["status", "--root", long_name], "File name too long"),
        (["merge", f"{long_name}.db"], "File name too long"),
    ]
    for args, says in cases:
        result = run(tmp_path, str(PLANGRAPH), *args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("plangraph: error: ") and says in result.stderr, args
        assert "Traceback" not in result.stderr, args


@pytest.mark.parametrize(
    "args",
    [
        ["claim", "a", "--by=--"],
        ["approve", "a/c", "--by", "x", "--note=--"],
        ["status", "--plan=--"],
        ["export", "--output=--"],
    ],
)
def test_a_double_dash_given_as_a_value_is_a_usage_error(tmp_path, args):
    """argparse reads ``--opt=--`` as no value at all; the command says so."""
    result = plangraph_main(tmp_path, *args)
    assert result.code == 2
    option = args[-1].partition("=")[0]
    assert f"argument {option}: '--' is not a value" in result.err


@pytest.mark.parametrize(
    ("args", "command"), [(["status", "--bogus"], "status"), (["verify", "-x", "a"], "verify")]
)
def test_an_argument_no_command_takes_is_told_by_that_command(tmp_path, args, command):
    result = plangraph_main(tmp_path, *args)
    assert result.code == 2
    assert result.err.startswith(f"usage: plangraph {command} ")
    assert f"plangraph {command}: error: unrecognized arguments: {args[1]}" in result.err


def test_a_commands_option_before_the_command_says_where_it_goes(tmp_path):
    result = plangraph_main(tmp_path, "--format", "json", "status")
    assert result.code == 2
    assert "--format goes after the command, e.g. `plangraph status --format …`" in result.err


def test_an_empty_max_age_is_a_usage_error_not_no_limit(tmp_path):
    result = plangraph_main(tmp_path, "audit", "--max-age", "")
    assert result.code == 2
    assert "--max-age '': expected a number and a unit" in result.err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_when_printing_is_one_message(tmp_path):
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [str(PLANGRAPH), "schema"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60
        )
    assert result.returncode == 2
    assert result.stderr == "plangraph: error: No space left on device\n"


def test_a_directory_given_as_the_plan_is_named_as_one(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "plans").mkdir()
    assert problems(tmp_path / "plans") == [
        "plan.yaml: is a directory, not a plan file; pass the path of the plan file in it"
    ]
    result = plangraph_main(tmp_path, "status", "--plan", "plans")
    assert result.code == 2
    assert result.err.strip().endswith(
        "plans: is a directory, not a plan file; pass the path of the plan file in it"
    )


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null here")
def test_a_device_is_refused(tmp_path):
    assert problems(Path("/dev/null")) == [
        "plan.yaml: is a character device, not a regular file; pass the path of a plan file"
    ]


def test_a_symlink_to_a_plan_file_is_read(tmp_path, write_plan):
    target = write_plan(HEADER)
    link = tmp_path / "link.yaml"
    try:
        link.symlink_to(target)
    except OSError:
        pytest.skip("no symlinks here")
    assert load_plan(link).plan.plan == "p"


# --- values keep their type ------------------------------------------------------------------


NODE = HEADER + "nodes:\n  - id: a\n"
CRITERION = NODE + "    acceptance:\n      - id: c\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plangraph: true\nplan: p\n", "plangraph: expected the whole number 1, got bool True"),
        ("plangraph: 1.0\nplan: p\n", "plangraph: expected the whole number 1, got float 1.0"),
        (
            "plangraph: '1'\nplan: p\n",
            "plangraph: expected the whole number 1, got str '1'; write it without quotes",
        ),
        ("plangraph: 2\nplan: p\n", "plangraph: expected 1, got 2"),
        (
            NODE + "    max_retry: '3'\n",
            "nodes[0].max_retry: expected a whole number, got str '3'; write it without quotes",
        ),
        (NODE + "    max_retry: true\n", "nodes[0].max_retry: expected a whole number, got bool"),
        (NODE + "    max_retry: 3.0\n", "nodes[0].max_retry: expected a whole number, got float"),
        (NODE + "    cancelled: 1\n", "nodes[0].cancelled: expected true or false, got int 1"),
        (
            NODE + "    idempotent: 'yes'\n",
            "nodes[0].idempotent: expected true or false, got str 'yes'; write true or false",
        ),
        (  # YAML 1.2 and JSON read these as text; YAML 1.1 took them for booleans
            NODE + "    idempotent: yes\n",
            "nodes[0].idempotent: expected true or false, got str 'yes'; write true or false",
        ),
        (
            NODE + "    cancelled: Off\n",
            "nodes[0].cancelled: expected true or false, got str 'Off'",
        ),
        (NODE + "    cancelled: 'true'\n", "nodes[0].cancelled: expected true or false, got str"),
        (
            NODE + "    outputs: ['']\n",
            "nodes[0].outputs[0]: expected a path, got an empty text; write a path relative",
        ),
        (NODE + "    timeout_s: true\n", "nodes[0].timeout_s: expected a number, got bool True"),
        (NODE + "    timeout_s: fast\n", "nodes[0].timeout_s: expected a number, got str 'fast'"),
        (NODE + "    title: !!binary aGk=\n", "nodes[0].title: expected text, got bytes"),
        (
            CRITERION + "        required: 0\n        verifier: {type: approval}\n",
            "nodes[0].acceptance[0].required: expected true or false, got int 0",
        ),
        (
            CRITERION + "        verifier: {type: artifact, path: a, min_bytes: '10'}\n",
            "nodes[0].acceptance[0].verifier.min_bytes: expected a whole number, got str '10'",
        ),
        (
            HEADER + "edges:\n  - {from: a, to: b, type: requires, confidence: true}\n",
            "edges[0].confidence: expected a number, got bool True",
        ),
    ],
)
def test_values_of_another_type_are_refused_not_coerced(write_plan, text, expected):
    found = problems(write_plan(text))
    assert len(found) == 1, found
    assert found[0].split(": ", 1)[1].startswith(expected), found


def test_text_is_not_told_to_lose_quotes_it_does_not_have(write_plan):
    [found] = problems(write_plan(NODE + "    timeout_s: fast\n"))
    assert "without quotes" not in found


def test_an_exponent_written_plainly_is_a_number(write_plan):
    # PyYAML reads YAML 1.1, where 1e3 and 1.5e3 (no dot, no sign) are text; YAML 1.2 and
    # JSON read them as numbers, and so does the plan
    edge = "edges:\n  - {from: a, to: a2, type: related, confidence: %s}\n"
    plain = NODE + "    timeout_s: 1.5e3\n  - id: a2\n    timeout_s: 1e3\n" + edge % "5e-1"
    decimal = NODE + "    timeout_s: 1500.0\n  - id: a2\n    timeout_s: 1000.0\n" + edge % "0.5"
    first = load_plan(write_plan(plain, "plain.yaml")).plan
    assert [n.timeout_s for n in first.nodes] == [1500.0, 1000.0]
    assert first.digest == load_plan(write_plan(decimal, "decimal.yaml")).plan.digest


def test_a_json_plan_is_held_to_the_same_types(tmp_path):
    path = tmp_path / "plan.json"
    node = {"id": "a", "max_retry": True, "cancelled": 0}
    path.write_text(json.dumps({"plangraph": 1, "plan": "p", "nodes": [node]}))
    found = problems(path)
    assert sorted(p.split(": ", 2)[1] for p in found) == [
        "nodes[0].cancelled",
        "nodes[0].max_retry",
    ]


def test_whole_numbers_in_number_fields_keep_the_digest(write_plan, tmp_path):
    # a whole number is a number: `timeout_s: 5` is the plan `timeout_s: 5.0` is
    edge = "edges:\n  - {from: a, to: a2, type: requires, confidence: %s}\n"
    whole = NODE + "    timeout_s: 5\n  - id: a2\n" + edge % "1"
    decimal = NODE + "    timeout_s: 5.0\n  - id: a2\n" + edge % "1.0"
    first = load_plan(write_plan(whole, "whole.yaml")).plan
    second = load_plan(write_plan(decimal, "decimal.yaml")).plan
    assert first.nodes[0].timeout_s == 5.0
    assert first.digest == second.digest
    json_path = tmp_path / "plan.json"
    json_path.write_text(json.dumps(first.to_json(by_alias=True)))
    assert load_plan(json_path).plan.digest == first.digest


# --- ids are ASCII ---------------------------------------------------------------------------


def test_a_non_ascii_id_is_refused_saying_ascii(write_plan):
    found = problems(write_plan(HEADER + "nodes:\n  - id: ac-é\n"))
    assert found == [
        "plan.yaml:4:5: nodes[0].id: 'ac-é' is not a valid id: use ASCII letters, digits, "
        "'.', '_' or '-', starting with an ASCII letter or digit"
    ]


# --- a sha256 pin -----------------------------------------------------------------------------


def pinned(pin: str) -> str:
    return CRITERION + f"        verifier: {{type: artifact, path: ok.json, sha256: {pin!r}}}\n"


@pytest.mark.parametrize("pin", ["nothex", "0" * 63, "g" * 64, "0" * 65])
def test_a_bad_sha256_pin_asks_for_64_hex_digits(write_plan, pin):
    [found] = problems(write_plan(pinned(pin)))
    assert found.startswith(
        "plan.yaml:7:51: nodes[0].acceptance[0].verifier.sha256: expected 64 hexadecimal digits "
        f"(sha256sum's output), got {pin!r}"
    )


def test_an_uppercase_pin_is_the_same_pin_and_passes(tmp_path, write_plan):
    data = b'{"ok": true}\n'
    (tmp_path / "ok.json").write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    upper = load_plan(write_plan(pinned(digest.upper()), "upper.yaml")).plan
    lower = load_plan(write_plan(pinned(digest), "lower.yaml")).plan
    assert upper.digest == lower.digest
    node = upper.nodes[0]
    [criterion] = node.acceptance
    assert criterion.verifier.to_json()["sha256"] == digest
    assert criterion_digest("a", criterion) == criterion_digest("a", lower.nodes[0].acceptance[0])
    registry, workspace = Registry.builtin(), Workspace.at(tmp_path)
    assert registry.config_problems(criterion, workspace) == []
    assert registry.run_safely(node, criterion, workspace).outcome == "passed"


def test_the_artifact_type_checks_raw_settings_alike(tmp_path):
    artifact = Registry.builtin().get("artifact")
    workspace = Workspace.at(tmp_path)
    assert artifact.config_problems({"path": "a", "sha256": "AB" * 32}, workspace) == []
    assert artifact.config_problems({"path": "a", "sha256": "ab" * 32 + "\n"}, workspace) == [
        "sha256: expected 64 hexadecimal digits (sha256sum's output)"
    ]


# --- --root -----------------------------------------------------------------------------------


def test_a_root_that_does_not_exist_is_named(tmp_path):
    missing = tmp_path / "nowhere"
    result = plangraph_main(tmp_path, "status", "--root", str(missing))
    assert result.code == 2
    assert result.err == (
        f"plangraph: error: the root directory {missing} does not exist; "
        "pass an existing one as --root\n"
    )
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match=r"root directory .*file is not a directory"):
        PlanGraph.open(tmp_path / "file")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (NODE + '    timeout_s: "1e3"\n', "nodes[0].timeout_s: expected a number, got str '1e3'"),
        (NODE + "    max_retry: 1e3\n", "nodes[0].max_retry: expected a whole number, got float"),
        ("plangraph: 1e0\nplan: p\n", "plangraph: expected the whole number 1, got float 1.0"),
        (
            CRITERION + "        verifier: test\n",
            "nodes[0].acceptance[0].verifier: expected a mapping such as {type: test}, got str",
        ),
        (HEADER + "nodes:\n  - a\n", "nodes[0]: expected a mapping, got str 'a'"),
        (HEADER + f"nodes:\n  - id: {'a' * 201}\n", "nodes[0].id: too long: at most 200"),
    ],
)
def test_what_the_plan_gets_wrong_is_said_in_plan_terms(write_plan, text, expected):
    found = problems(write_plan(text))
    assert len(found) == 1, found
    assert found[0].split(": ", 1)[1].startswith(expected), found
    assert "write it without quotes" not in found[0] or "'1e3'" in found[0]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ('"title": "\\ud800"', "title: text holds an unpaired surrogate escape"),
        ('"title": "\\ud83d\\ude80 launch"', None),  # a pair: one character
        ('"confidence": NaN', "NaN and Infinity are not JSON numbers"),
        ('"confidence": -Infinity', "NaN and Infinity are not JSON numbers"),
        ('"confidence": 1e400', "a number too large to hold (such as 1e400)"),
    ],
)
def test_a_json_plan_holds_only_what_json_means(tmp_path, fields, expected):
    path = tmp_path / "plan.json"
    path.write_text(
        '{"plangraph": 1, "plan": "p", "nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"from":'
        ' "a", "to": "b", "type": "related"}], ' + fields + "}",
        encoding="utf-8",
    )
    if expected is None:
        assert load_plan(path).plan.title == "\U0001f680 launch"
        return
    [found] = problems(path)
    assert expected in found


@pytest.mark.parametrize("name", ["plan.json", "plan.yaml"])
def test_a_number_too_long_to_read_is_one_message(tmp_path, name):
    digits = "1" * 5000
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text('{"plangraph": 1, "plan": "p", "x": ' + digits + "}")
    else:
        path.write_text(f"plangraph: 1\nplan: p\nx: {digits}\n")
    [found] = problems(path)
    assert "a number that cannot be read (Exceeds the limit (4300 digits)" in found
