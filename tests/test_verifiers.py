"""The built-in verifiers (schema, artifact, approval, test) on real files, and the registry."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_plangraph.errors import VerifierError
from pytest_plangraph.plan.model import Criterion, Node
from pytest_plangraph.vcs.workspace import Workspace
from pytest_plangraph.verifiers import (
    Registry,
    VerifierResult,
    builtin_settings_problems,
    builtin_types,
    settings_of,
)
from pytest_plangraph.verifiers import schema as schema_module
from pytest_plangraph.verifiers.schema import MAX_ERRORS, json_path

REGISTRY = Registry.builtin()

USER_SCHEMA = {
    "type": "object",
    "required": ["email"],
    "properties": {
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 0},
        "roles": {"type": "array", "items": {"enum": ["admin", "user"]}},
    },
}


def criterion_of(verifier: dict[str, Any]) -> tuple[Node, Criterion]:
    node = Node.from_data({"id": "step", "acceptance": [{"id": "ac", "verifier": verifier}]})
    return node, node.acceptance[0]


def write(root: Path, rel: str, content: Any) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content)
    path.write_text(text, encoding="utf-8")
    return path


def run(root: Path, verifier: dict[str, Any]) -> VerifierResult:
    node, criterion = criterion_of(verifier)
    return REGISTRY.run_safely(node, criterion, Workspace.at(root))


def problems(root: Path, verifier: dict[str, Any]) -> list[str]:
    _, criterion = criterion_of(verifier)
    return REGISTRY.config_problems(criterion, Workspace.at(root))


SCHEMA_CHECK = {
    "type": "schema",
    "schema": "src/user_schema.json",
    "artifact": "fixtures/user.json",
}


# --- schema ------------------------------------------------------------------------------------


def test_schema_passes_for_a_conforming_artifact(tmp_path: Path) -> None:
    write(tmp_path, "src/user_schema.json", USER_SCHEMA)
    write(tmp_path, "fixtures/user.json", {"email": "ada@example.org", "roles": ["admin"]})
    result = run(tmp_path, SCHEMA_CHECK)
    assert result.outcome == "passed", result.message
    assert result.subjects == ("src/user_schema.json", "fixtures/user.json")
    assert problems(tmp_path, SCHEMA_CHECK) == []


def test_schema_violation_names_each_path_and_why(tmp_path: Path) -> None:
    write(tmp_path, "src/user_schema.json", USER_SCHEMA)
    write(tmp_path, "fixtures/user.json", {"email": "x", "age": -1, "roles": ["user", "root"]})
    result = run(tmp_path, SCHEMA_CHECK)
    assert (result.outcome, result.reason) == ("failed", "SCHEMA_VIOLATION")
    lines = result.message.splitlines()
    assert "fixtures/user.json: $.email: 'x' is not a 'email'" in lines
    assert "fixtures/user.json: $.age: -1 is less than the minimum of 0" in lines
    assert any(
        line.startswith("fixtures/user.json: $.roles[1]: 'root' is not one of") for line in lines
    )
    assert result.details["count"] == 3
    errors = {e["path"]: e for e in result.details["errors"]}
    assert errors["$.email"]["keyword"] == "format"
    assert errors["$.email"]["schema_path"] == "#/properties/email/format"
    json.dumps(result.details)  # plain JSON values only


def test_schema_lists_best_match_first_and_caps_the_list(tmp_path: Path) -> None:
    write(tmp_path, "s.json", {"type": "array", "items": {"type": "integer"}})
    write(tmp_path, "a.json", ["x"] * (MAX_ERRORS + 5))
    result = run(tmp_path, {"type": "schema", "schema": "s.json", "artifact": "a.json"})
    assert result.details["count"] == MAX_ERRORS + 5
    assert len(result.details["errors"]) == MAX_ERRORS
    assert result.message.splitlines()[-1] == "... and 5 more"


def test_schema_reads_yaml_artifacts_and_schemas_keeping_dates_as_strings(tmp_path: Path) -> None:
    write(tmp_path, "s.yaml", "type: object\nproperties:\n  born: {type: string, format: date}\n")
    write(tmp_path, "user.yml", "born: 2024-01-31\n")
    verifier = {"type": "schema", "schema": "s.yaml", "artifact": "user.yml"}
    assert run(tmp_path, verifier).outcome == "passed"
    write(tmp_path, "user.yml", "born: 31\n")
    result = run(tmp_path, verifier)
    assert result.outcome == "failed"
    assert result.message.startswith("user.yml: $.born: 31 is not of type 'string'")


def test_invalid_schema_is_an_error_of_the_check(tmp_path: Path) -> None:
    write(tmp_path, "src/user_schema.json", {"type": "strnig"})
    write(tmp_path, "fixtures/user.json", {})
    result = run(tmp_path, SCHEMA_CHECK)
    assert (result.outcome, result.reason) == ("error", "SCHEMA_INVALID")
    assert result.message.startswith("src/user_schema.json: not a valid JSON Schema: $.type:")
    assert problems(tmp_path, SCHEMA_CHECK) == [result.message]


def test_a_schema_found_valid_is_not_compiled_again_until_it_changes(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache"
    write(root, "src/user_schema.json", {"type": "object"})
    _, criterion = criterion_of(SCHEMA_CHECK)
    workspace = Workspace.at(root, cache=cache)
    assert REGISTRY.config_problems(criterion, workspace) == []
    kept = list((cache / "valid-schemas").iterdir())
    assert len(kept) == 1  # this content was compiled and found valid
    write(root, "src/user_schema.json", {"type": "strnig"})  # edited: compiled again
    assert REGISTRY.config_problems(criterion, workspace)[0].startswith(
        "src/user_schema.json: not a valid JSON Schema"
    )
    assert list((cache / "valid-schemas").iterdir()) == kept  # nothing kept for it
    write(root, "src/user_schema.json", {"type": "object"})
    assert REGISTRY.config_problems(criterion, workspace) == []


def test_a_valid_schema_marker_counts_for_the_way_the_file_is_read(tmp_path: Path) -> None:
    """The same bytes are a valid YAML schema and not JSON at all: a name change is a new
    check."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    workspace = Workspace.at(root, cache=cache)
    for name in ("s/user.yaml", "s/user.json"):
        write(root, name, "type: object\n")
    as_yaml = criterion_of({**SCHEMA_CHECK, "schema": "s/user.yaml"})[1]
    as_json = criterion_of({**SCHEMA_CHECK, "schema": "s/user.json"})[1]
    assert REGISTRY.config_problems(as_yaml, workspace) == []
    assert "not valid JSON" in REGISTRY.config_problems(as_json, workspace)[0]


def test_the_cache_keeps_the_valid_schemas_checked_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema_module, "KEPT_SCHEMAS", 3)
    root, cache = tmp_path / "repo", tmp_path / "cache"
    workspace = Workspace.at(root, cache=cache)
    _, criterion = criterion_of(SCHEMA_CHECK)
    for n in range(5):  # a schema edited again and again
        write(root, "src/user_schema.json", {"type": "object", "minProperties": n})
        assert REGISTRY.config_problems(criterion, workspace) == []
    assert len(list((cache / "valid-schemas").iterdir())) == 3


@pytest.mark.parametrize(
    ("schema_text", "expected"),
    [
        ("{not json", "src/user_schema.json: not valid JSON"),
        ("[1, 2]", "a JSON Schema is an object, not list"),
        ('{"$schema": "https://example.org/mine"}', "unknown $schema"),
    ],
)
def test_unreadable_schemas_are_schema_invalid(
    tmp_path: Path, schema_text: str, expected: str
) -> None:
    write(tmp_path, "src/user_schema.json", schema_text)
    write(tmp_path, "fixtures/user.json", {})
    result = run(tmp_path, SCHEMA_CHECK)
    assert (result.outcome, result.reason) == ("error", "SCHEMA_INVALID")
    assert expected in result.message


def test_missing_schema_file_is_an_error_and_a_config_problem(tmp_path: Path) -> None:
    write(tmp_path, "fixtures/user.json", {})
    result = run(tmp_path, SCHEMA_CHECK)
    assert (result.outcome, result.reason) == ("error", "SCHEMA_MISSING")
    assert problems(tmp_path, SCHEMA_CHECK) == ["src/user_schema.json does not exist"]


def test_missing_artifact_fails_but_is_no_config_problem(tmp_path: Path) -> None:
    write(tmp_path, "src/user_schema.json", USER_SCHEMA)
    result = run(tmp_path, SCHEMA_CHECK)
    assert (result.outcome, result.reason) == ("failed", "ARTIFACT_MISSING")
    assert result.message == "fixtures/user.json does not exist"
    assert result.subjects == ("src/user_schema.json", "fixtures/user.json")
    assert problems(tmp_path, SCHEMA_CHECK) == []


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("user.json", '{"email": ', "user.json: not valid JSON: Expecting value: line 1"),
        ("user.yaml", "email: [unclosed\n", "user.yaml: not valid YAML"),
        ("user.json", "\udcff", "not UTF-8"),
    ],
)
def test_unparsable_artifact_fails_unreadable(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    write(tmp_path, "s.json", USER_SCHEMA)
    (tmp_path / name).write_bytes(text.encode("utf-8", "surrogateescape"))
    result = run(tmp_path, {"type": "schema", "schema": "s.json", "artifact": name})
    assert (result.outcome, result.reason) == ("failed", "ARTIFACT_UNREADABLE")
    assert expected in result.message


def test_artifact_symlinked_out_of_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, "s.json", USER_SCHEMA)
    secret = write(tmp_path, "outside.json", {"email": "a@b.c"})
    (root / "user.json").symlink_to(secret)
    result = run(root, {"type": "schema", "schema": "s.json", "artifact": "user.json"})
    assert (result.outcome, result.reason) == ("failed", "PATH_OUTSIDE_ROOT")
    verifier = {"type": "schema", "schema": "s.json", "artifact": "user.json"}
    assert problems(root, verifier) == [
        "artifact: 'user.json' resolves outside the repository root (symlink)"
    ]


def test_local_refs_resolve_next_to_the_schema_and_become_subjects(tmp_path: Path) -> None:
    write(tmp_path, "schemas/user.json", {"properties": {"email": {"$ref": "defs/email.json"}}})
    write(tmp_path, "schemas/defs/email.json", {"type": "string", "format": "email"})
    write(tmp_path, "user.json", {"email": "nope"})
    result = run(
        tmp_path, {"type": "schema", "schema": "schemas/user.json", "artifact": "user.json"}
    )
    assert result.outcome == "failed"
    assert result.message == "user.json: $.email: 'nope' is not a 'email'"
    assert result.subjects == ("schemas/user.json", "user.json", "schemas/defs/email.json")


@pytest.mark.parametrize(
    ("ref", "reason", "expected"),
    [
        ("https://example.org/email.json", "SCHEMA_INVALID", "is not fetched"),
        ("missing.json", "SCHEMA_MISSING", "schemas/missing.json does not exist"),
        ("../../escape.json", "PATH_OUTSIDE_ROOT", "outside the repository"),
    ],
)
def test_unusable_refs_are_errors(tmp_path: Path, ref: str, reason: str, expected: str) -> None:
    write(tmp_path, "schemas/user.json", {"properties": {"email": {"$ref": ref}}})
    write(tmp_path, "user.json", {"email": "a@b.c"})
    result = run(
        tmp_path, {"type": "schema", "schema": "schemas/user.json", "artifact": "user.json"}
    )
    assert (result.outcome, result.reason) == ("error", reason)
    assert expected in result.message


@pytest.mark.parametrize(
    ("parts", "expected"),
    [([], "$"), (["users", 0, "email"], "$.users[0].email"), (["a b", "_x1"], '$["a b"]._x1')],
)
def test_json_path(parts: list[str | int], expected: str) -> None:
    assert json_path(parts) == expected


# --- artifact ----------------------------------------------------------------------------------


def test_artifact_passes_with_pinned_hash_and_size(tmp_path: Path) -> None:
    data = b"token-signing-key\n"
    (tmp_path / "key.pem").write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    verifier = {"type": "artifact", "path": "key.pem", "sha256": digest, "min_bytes": len(data)}
    result = run(tmp_path, verifier)
    assert result.outcome == "passed"
    assert result.details == {"sha256": digest, "size": len(data)}
    assert result.subjects == ("key.pem",)


def test_artifact_hash_mismatch_shows_expected_and_actual(tmp_path: Path) -> None:
    (tmp_path / "key.pem").write_bytes(b"changed")
    pinned = "0" * 64
    result = run(tmp_path, {"type": "artifact", "path": "key.pem", "sha256": pinned})
    assert (result.outcome, result.reason) == ("failed", "HASH_MISMATCH")
    assert result.details["expected"] == pinned
    assert result.details["actual"] == hashlib.sha256(b"changed").hexdigest()


@pytest.mark.parametrize(
    ("setup", "reason", "message"),
    [
        ("none", "ARTIFACT_MISSING", "out/report.txt does not exist"),
        ("dir", "ARTIFACT_MISSING", "out/report.txt is not a regular file"),
        ("small", "TOO_SMALL", "out/report.txt has 3 bytes, fewer than min_bytes 10"),
    ],
)
def test_artifact_failures(tmp_path: Path, setup: str, reason: str, message: str) -> None:
    target = tmp_path / "out" / "report.txt"
    if setup == "dir":
        target.mkdir(parents=True)
    elif setup == "small":
        write(tmp_path, "out/report.txt", "abc")
    result = run(tmp_path, {"type": "artifact", "path": "out/report.txt", "min_bytes": 10})
    assert (result.outcome, result.reason, result.message) == ("failed", reason, message)


def test_artifact_symlink_out_of_root(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    write(tmp_path, "passwd", "root:x:0:0")
    (root / "link").symlink_to(tmp_path / "passwd")
    result = run(root, {"type": "artifact", "path": "link"})
    assert (result.outcome, result.reason) == ("failed", "PATH_OUTSIDE_ROOT")


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"path": "out/*.txt"}, ["path: 'out/*.txt' is a glob pattern; name one file"]),
        ({"path": "../x"}, ["path: '../x': climbs out of the repository with '..'"]),
        ({"path": "a", "sha256": "ABC", "min_bytes": -1}, ["sha256:", "min_bytes:"]),
        ({"path": "not-made-yet.txt"}, []),
    ],
)
def test_artifact_config_problems(
    tmp_path: Path, settings: dict[str, Any], expected: list[str]
) -> None:
    found = REGISTRY.get("artifact").config_problems(settings, Workspace.at(tmp_path))
    assert len(found) == len(expected)
    assert all(line.startswith(prefix) for line, prefix in zip(found, expected, strict=True))


# --- approval and test: known, checked, never run ---------------------------------------------


@pytest.mark.parametrize(
    ("verifier", "hint"),
    [({"type": "approval", "role": "security"}, "plangraph approve"), ({"type": "test"}, "pytest")],
)
def test_approval_and_test_criteria_are_not_run(
    tmp_path: Path, verifier: dict[str, Any], hint: str
) -> None:
    assert not REGISTRY.runnable(verifier["type"])
    result = run(tmp_path, verifier)
    assert (result.outcome, result.reason) == ("error", "NOT_RUNNABLE")
    assert hint in result.message


def test_test_and_approval_config_problems(tmp_path: Path) -> None:
    workspace = Workspace.at(tmp_path)
    found = REGISTRY.get("test").config_problems({"tests": ["ok::t", "", " x"]}, workspace)
    assert [p.split(":")[0] for p in found] == ["tests[1]", "tests[2]"]
    assert REGISTRY.get("test").config_problems({"tests": "x"}, workspace) != []
    assert REGISTRY.get("approval").config_problems({"role": " "}, workspace) != []
    assert REGISTRY.get("approval").config_problems({"role": "security"}, workspace) == []


# --- registry ----------------------------------------------------------------------------------


def test_registry_names_and_unknown_types(tmp_path: Path) -> None:
    assert REGISTRY.names() == ["approval", "artifact", "command", "schema", "test"]
    with pytest.raises(VerifierError, match="unknown verifier type 'lines'; known types: approval"):
        REGISTRY.get("lines")
    result = run(tmp_path, {"type": "lines", "path": "x"})
    assert (result.outcome, result.reason) == ("error", "UNKNOWN_VERIFIER")


class _Impostor:
    """A plug-in's type that takes a name a built-in type has."""

    runs_in_pytest = True

    def __init__(self, name: str) -> None:
        self.name = name

    def config_problems(self, settings: Any, workspace: Any) -> list[str]:
        return []

    def run(self, node: Any, criterion: Any, workspace: Any) -> VerifierResult:
        return VerifierResult("passed")


def test_registry_refuses_a_name_registered_twice(tmp_path: Path) -> None:
    registry = Registry([("builtins", builtin_types()), ("impostor", [_Impostor("schema")])])
    with pytest.raises(
        VerifierError, match=r"registered by several plugins \(builtins, impostor\)"
    ):
        registry.get("schema")
    assert registry.get("artifact").name == "artifact"
    with pytest.raises(VerifierError, match="not a verifier type"):
        Registry([("bad", [object()])])


def test_settings_alone_are_the_builtins_that_look_at_no_file() -> None:
    alone = {name for name in REGISTRY.names() if REGISTRY.settings_alone(name)}
    assert alone == {"test", "artifact", "approval"}  # not schema: it reads the schema file
    assert not REGISTRY.settings_alone("nonesuch")
    clashing = Registry([("builtins", builtin_types()), ("impostor", [_Impostor("artifact")])])
    assert not clashing.settings_alone("artifact")  # the clash is reported with the files
    assert clashing.settings_alone("approval")


def test_builtin_settings_problems_read_the_settings_alone(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "link.txt").symlink_to(outside)
    workspace = Workspace.at(tmp_path / "repo")
    _, linked = criterion_of({"type": "artifact", "path": "link.txt"})
    _, globbed = criterion_of({"type": "artifact", "path": "out/*.txt"})
    _, blank_role = criterion_of({"type": "approval", "role": " "})
    _, schema = criterion_of(SCHEMA_CHECK)
    # the escape through a link is lint's own check; only the type's config check looks
    assert builtin_settings_problems(linked.verifier) == []
    assert "symlink" in REGISTRY.config_problems(linked, workspace)[0]
    assert builtin_settings_problems(globbed.verifier) == [
        "path: 'out/*.txt' is a glob pattern; name one file"
    ]
    assert builtin_settings_problems(globbed.verifier) == REGISTRY.config_problems(
        globbed, workspace
    )
    assert builtin_settings_problems(blank_role.verifier) == [
        "role: expected a non-empty name such as 'security'"
    ]
    assert builtin_settings_problems(schema.verifier) is None


def test_declared_subjects_and_settings_of() -> None:
    _, criterion = criterion_of(SCHEMA_CHECK)
    assert settings_of(criterion.verifier) == {
        "schema": "src/user_schema.json",
        "artifact": "fixtures/user.json",
    }
    assert REGISTRY.declared_subjects(criterion) == ["src/user_schema.json", "fixtures/user.json"]
    _, approval = criterion_of({"type": "approval"})
    assert REGISTRY.declared_subjects(approval) == []
