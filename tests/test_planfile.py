"""Loading plan files: positions, bad input, YAML and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pytest_plangraph.errors import PlanError
from pytest_plangraph.plan.cache import read_keyed
from pytest_plangraph.plan.file import MAX_PLAN_BYTES, load_plan
from pytest_plangraph.plan.messages import format_path

GOOD = """
plangraph: 1
plan: demo
nodes:
  - id: a
    outputs: [out/a.txt]
    acceptance:
      - id: c1
        verifier: {type: artifact, path: out/a.txt}
  - id: b
edges:
  - {from: a, to: b, type: consumes}
"""


def problems(path: Path) -> list[str]:
    with pytest.raises(PlanError) as info:
        load_plan(path, "plan.yaml")
    return [str(p) for p in info.value.problems]


def test_loads_a_good_plan_with_defaults(write_plan):
    loaded = load_plan(write_plan(GOOD))
    assert [n.id for n in loaded.plan.nodes] == ["a", "b"]
    assert loaded.plan.nodes[1].kind == "step"
    assert loaded.plan.edges[0].strength == "strong"
    assert loaded.plan.nodes[0].acceptance[0].required is True
    assert loaded.location(("nodes", 1)).endswith(":9:5")


def test_yaml_scalars_read_as_yaml_says(write_plan):
    # text is taken as written; other scalars (quoted or not) as YAML's own rules read them,
    # with YAML 1.2's booleans: yes, no, on and off are text
    text = GOOD.replace(
        "  - id: b\n",
        "  - id: b\n    title: '12'\n    max_retry: 12\n    idempotent: True\n"
        "    risk: !!str 7\n    owner: null\n    timeout_s: 1.5\n    compensate: off\n",
    )
    node = load_plan(write_plan(text)).plan.nodes[1]
    assert (node.title, node.max_retry, node.idempotent) == ("12", 12, True)
    assert (node.risk, node.owner, node.timeout_s, node.compensate) == ("7", None, 1.5, "off")


def test_related_edges_default_to_weak(write_plan):
    text = GOOD.replace("type: consumes", "type: related")
    assert load_plan(write_plan(text)).plan.edges[0].strength == "weak"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "plan.yaml:1:1: file is empty; a plan starts with 'plangraph: 1'"),
        ("plangraph: 1\nplan: [unclosed\n", "plan.yaml:3:1: YAML syntax error"),
        ("- just\n- a list\n", "plan.yaml:1:1: expected a mapping with 'plangraph: 1', got list"),
        (
            "plangraph: 1\nplan: p\nnodes:\n  - id: a\n    outputs: out.txt\n",
            "plan.yaml:5:5: nodes[0].outputs: expected a list, got str 'out.txt'",
        ),
        (
            "plangraph: 1\nplan: p\nnodes:\n  - id: a\n    colour: red\n",
            "plan.yaml:5:5: nodes[0].colour: unknown field 'colour'; allowed: acceptance,",
        ),
        (
            "plangraph: 1\nplan: p\nplan: q\n",
            "plan.yaml:3:1: plan: duplicate key 'plan'; each key may appear once in a mapping",
        ),
        ("plangraph: 2\nplan: p\n", "plan.yaml:1:1: plangraph: expected 1, got 2"),
        (
            "plangraph: 1\nplan: p\nnodes:\n  - id: 'bad id'\n",
            "plan.yaml:4:5: nodes[0].id: 'bad id' is not a valid id",
        ),
        (
            "plangraph: 1\nplan: p\nnodes:\n  - id: a\n    acceptance:\n      - id: c\n"
            "        verifier: {type: schema, artifact: x.json}\n",
            "plan.yaml:7:9: nodes[0].acceptance[0].verifier.schema: required field 'schema'",
        ),
        (
            "plangraph: 1\nplan: p\nedges:\n  - {from: a, to: b, type: needs}\n",
            "plan.yaml:4:22: edges[0].type: expected 'requires', 'consumes'",
        ),
        (
            "plangraph: 1\nplan: p\nnodes: []\ntrue: 1\n",
            "plan.yaml:4:1: the key 'true' is read as a boolean, not text; put it in quotes",
        ),
        (
            "plangraph: 1\nplan: p\nnodes:\n  - id: a\n    inputs: {1: x}\n",
            "plan.yaml:5:14: nodes[0].inputs: the key '1' is read as a number, not text",
        ),
    ],
    ids=[
        "empty",
        "syntax",
        "not-a-mapping",
        "scalar-for-list",
        "unknown-field",
        "duplicate-key",
        "format-version",
        "bad-id",
        "missing-setting",
        "bad-edge-type",
        "boolean-key",
        "number-key",
    ],
)
def test_bad_input_gives_one_located_message(write_plan, text, expected):
    found = problems(write_plan(text or "\n"))
    assert any(p.startswith(expected) for p in found), found


def test_every_problem_is_reported_once(write_plan):
    text = "plangraph: 1\nplan: p\nnodes:\n  - id: a\n    kind: task\n  - id: b\n    risk: [1]\n"
    found = problems(write_plan(text))
    assert len(found) == 2
    assert found[0].startswith("plan.yaml:5:5: nodes[0].kind: expected 'objective'")
    assert found[1].startswith("plan.yaml:7:5: nodes[1].risk:")


def test_a_huge_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.write(b"plangraph: 1\nplan: p\n# ")
        handle.truncate(MAX_PLAN_BYTES + 1)
    found = problems(path)
    assert found[0].startswith("plan.yaml: plan file is 33.6 MB; the limit is 32 MB")


def test_a_missing_file(tmp_path):
    assert problems(tmp_path / "nope.yaml") == [
        "plan.yaml: plan file not found; pass the plan's path or create it"
    ]


def test_yaml_tags_never_construct_objects(write_plan):
    found = problems(write_plan("plangraph: 1\nplan: !!python/object:os.system ls\n"))
    assert "YAML" in found[0]


def test_alias_bomb_is_refused(write_plan):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 8)]
    found = problems(write_plan("\n".join(lines) + "\n"))
    assert "too many values" in found[0]


def test_an_alias_loop_is_refused_not_a_crash(write_plan):
    found = problems(write_plan("plangraph: 1\nplan: x\nnodes: &a [*a]\n"))
    assert found == [
        "plan.yaml:3:8: nodes[0]: an alias refers to a value that contains it (a loop); "
        "remove the alias"
    ]


def test_a_path_resolver_of_another_library_still_decides_by_path(monkeypatch):
    import yaml

    from pytest_plangraph.plan import yaml_reader as planyaml

    # registered on the loader class, as a library could; restored after the test
    loader = planyaml._SafeLoader
    monkeypatch.setattr(loader, "yaml_path_resolvers", dict(loader.yaml_path_resolvers))
    loader.add_path_resolver("tag:yaml.org,2002:null", ["gone"], yaml.ScalarNode)
    data, _ = planyaml.read_yaml("gone: abc\nkept: abc\n", "x.yaml", 100)
    assert data == {"gone": None, "kept": "abc"}


def test_text_is_read_by_a_constructor_another_library_gave_the_loader(monkeypatch):
    from pytest_plangraph.plan import yaml_reader as planyaml

    loader = planyaml._SafeLoader
    monkeypatch.setattr(loader, "yaml_constructors", dict(loader.yaml_constructors))
    loader.add_constructor("tag:yaml.org,2002:str", lambda _, node: node.value.upper())
    data, _ = planyaml.read_yaml("a: abc\n", "x.yaml", 100)
    assert data == {"A": "ABC"}


def test_json_plans_load_the_same_and_keep_positions(tmp_path, write_plan):
    yaml_plan = load_plan(write_plan(GOOD)).plan
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(yaml_plan.to_json(by_alias=True), indent=2))
    assert load_plan(path).plan == yaml_plan
    path.write_text('{"plangraph": 1, "plan": "p",\n "nodes": [{"id": "a", "oops": 1}]}')
    found = problems(path)
    assert found == [
        "plan.yaml:2:24: nodes[0].oops: unknown field 'oops'; allowed: acceptance, cancelled, "
        "compensate, constraints, effect, id, idempotent, inputs, kind, max_retry, outputs, "
        "outputs_schema, owner, parent, risk, timeout_s, title"
    ]


def test_json_duplicate_keys_and_syntax(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text('{"plangraph": 1, "plan": "p", "plan": "q"}')
    assert problems(path)[0].startswith("plan.yaml:1:31: plan: duplicate key 'plan'")
    path.write_text('{"plangraph": 1, "plan": "\\ud83d\\ude80", "plan": "q"}')  # not YAML
    assert problems(path) == ["plan.yaml: duplicate key 'plan'"]
    path.write_text('{"plangraph": 1,\n "plan": }')
    assert problems(path)[0].startswith("plan.yaml:2:10: invalid JSON: Expecting value")


def test_format_path():
    assert format_path(("nodes", 2, "acceptance", 0, "verifier")) == (
        "nodes[2].acceptance[0].verifier"
    )
    assert format_path(()) == ""


def test_large_yaml_plans_are_cached_by_content(tmp_path):
    nodes = "".join(f"  - id: n{i}\n    title: {'x' * 60}\n" for i in range(1200))
    path = tmp_path / "plan.yaml"
    path.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}")
    cache = tmp_path / "cache"
    first = load_plan(path, cache_dir=cache)
    [cached] = cache.glob("plan-*.json")
    key = cached.name.removeprefix("plan-").removesuffix(".json")
    assert json.loads(read_keyed(cached, key))["nodes"][5]["id"] == "n5"  # under its key
    second = load_plan(path, cache_dir=cache)
    assert second.plan == first.plan
    assert second.location(("nodes", 3)) == first.location(("nodes", 3)) == f"{path}:10:5"
    path.write_text(path.read_text().replace("id: n5\n", "id: n5\n    colour: red\n"))
    with pytest.raises(PlanError) as info:
        load_plan(path, cache_dir=cache)
    assert "nodes[5].colour: unknown field" in str(info.value)


def test_parse_plan_reads_bytes_as_a_file_of_that_suffix(monkeypatch):
    from pytest_plangraph.plan import file as planfile

    text = b'{"plangraph": 1, "plan": "p", "nodes": [{"id": "a"}]}'
    assert planfile.parse_plan(text, "HEAD~1:plan.json", suffix=".json").plan.nodes[0].id == "a"
    with pytest.raises(PlanError) as info:
        planfile.parse_plan(b"plangraph: 1\nplan: p\nnodes: [}", "HEAD~1:plangraph.yaml")
    assert str(info.value).startswith("HEAD~1:plangraph.yaml:3:")
    monkeypatch.setattr(planfile, "MAX_PLAN_BYTES", len(text) - 1)
    with pytest.raises(PlanError, match="the limit is"):
        planfile.parse_plan(text, "big.json", suffix=".json")


PIN = "AB" * 32


def _varied_plan(path: Path, extra: str = "") -> None:
    """A plan over the cache's size limit that uses every kind of field the model has."""
    nodes = "".join(
        f"  - id: n{i}\n    title: {'x' * 60}\n    outputs: [out/n{i}.txt]\n"
        f"    acceptance:\n"
        f"      - {{id: a, verifier: {{type: artifact, path: out/n{i}.txt, sha256: {PIN}}}}}\n"
        f"      - {{id: s, verifier: {{type: schema, schema: s.json, artifact: out/n{i}.txt}}}}\n"
        f"      - {{id: t, required: false, verifier: {{type: test, tests: ['t.py::x']}}}}\n"
        f"      - {{id: p, verifier: {{type: plug, depth: 2, names: [a, b]}}}}\n"
        f"      - {{id: o, verifier: {{type: approval, role: security}}}}\n"
        f"    timeout_s: {'1e3' if i % 2 else 30}\n    max_retry: 0\n"
        f"    inputs: {{x: n0.y}}\n    outputs_schema: {{y: string}}\n"
        for i in range(150)
    )
    edges = "".join(
        f"  - {{from: n{i}, to: n{i + 1}, type: {kind}, confidence: {conf}}}\n"
        for i, (kind, conf) in enumerate(
            [("related", "1e-1"), ("consumes", 1), ("validates", 0.5), ("requires", 1.0)] * 30
        )
    )
    path.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}edges:\n{edges}{extra}")


def test_a_plan_read_from_its_kept_json_is_the_plan_read_from_yaml(tmp_path):
    from pytest_plangraph.plan.model import plan_digest, runtime_plan

    path, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _varied_plan(path)
    first = load_plan(path, cache_dir=cache)
    second = load_plan(path, cache_dir=cache)  # from plan-<sha>.json, validated as parsed
    assert first.plan.to_json() == second.plan.to_json()
    assert first.plan == second.plan
    for one, other in zip(first.plan.edges, second.plan.edges, strict=True):
        assert one.fields_set == other.fields_set  # "weak" of related kept as set
    assert second.plan.edges[0].strength == "weak"
    assert second.plan.nodes[1].timeout_s == 1000.0
    fresh = runtime_plan(second.plan.to_json(by_alias=True))
    assert plan_digest(fresh) == second.plan.digest == first.plan.digest


def test_a_kept_plan_that_is_refused_is_explained_as_on_the_first_read(tmp_path):
    path, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _varied_plan(path, extra="  - {from: n1, to: n2, type: requires, confidence: '2'}\n")
    messages = []
    for _ in range(2):
        with pytest.raises(PlanError) as info:
            load_plan(path, cache_dir=cache)
        messages.append(str(info.value))
    assert "confidence" in messages[0] and messages[1] == messages[0]


def test_a_damaged_kept_plan_is_read_again_and_kept_anew(tmp_path):
    path, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    _varied_plan(path)
    first = load_plan(path, cache_dir=cache)
    # the validated form (kept under the file's bytes and under its content), then the parsed
    # data
    for kind in ("valid", "plan"):
        entries = sorted(cache.glob(f"{kind}-*.json"))
        assert len(entries) == (2 if kind == "valid" else 1)
        good = [kept.read_bytes() for kept in entries]
        for kept, body in zip(entries, good, strict=True):
            kept.write_bytes(body[: len(body) // 2])  # cut short: not JSON any more
        if kind == "plan":  # read only for bytes whose validated form is not kept
            for valid in cache.glob("valid-*.json"):
                valid.unlink()
        again = load_plan(path, cache_dir=cache).plan
        assert again == first.plan and again.digest == first.plan.digest
        assert [kept.read_bytes() for kept in entries] == good


def test_a_merge_key_reads_as_pyyaml_reads_it(write_plan):
    text = """
plangraph: 1
plan: p
nodes:
  - &step
    id: deploy-eu
    effect: write
    compensate: rollback
    idempotent: true
  - <<: *step
    id: deploy-us
  - <<: [{id: x, title: first}, {id: y, title: second, owner: o}]
    title: own
"""
    path = write_plan(text)
    nodes = load_plan(path).plan.nodes
    expected = [dict(n, acceptance=[]) for n in yaml.safe_load(path.read_text())["nodes"]]
    got = [
        {k: getattr(n, k) for k in ("id", "effect", "compensate", "idempotent", "title", "owner")}
        for n in nodes
    ]
    assert [g["id"] for g in got] == [e["id"] for e in expected] == ["deploy-eu", "deploy-us", "y"]
    assert got[1]["effect"] == "write" and got[1]["compensate"] == "rollback"
    assert (got[2]["title"], got[2]["owner"]) == ("own", expected[2]["owner"])


def test_a_key_written_twice_beside_a_merge_is_still_a_duplicate(write_plan):
    text = "plangraph: 1\nplan: p\nnodes:\n  - <<: {title: t}\n    id: a\n    id: b\n"
    [found] = problems(write_plan(text))
    assert "nodes[0].id: duplicate key 'id'" in found


def test_a_mapping_merged_and_read_again_through_its_alias_keeps_its_own_keys(write_plan):
    text = """
plangraph: 1
plan: p
nodes:
  - &base {id: step-a, title: A}
  - <<: &b {<<: *base, id: step-b}
    id: step-c
  - *b
"""
    path = write_plan(text)
    got = [(n.id, n.title) for n in load_plan(path).plan.nodes]
    expected = [(n["id"], n["title"]) for n in yaml.safe_load(path.read_text())["nodes"]]
    assert got == expected == [("step-a", "A"), ("step-c", "A"), ("step-b", "A")]


def test_a_kept_plan_finds_its_positions_from_its_bytes_when_first_asked(tmp_path):
    """A plan read from its cache keeps the file's bytes, not a decoded text: the positions a
    message needs are found from them on the first look-up (text that is not ASCII counted as
    the first read counts it)."""
    from pytest_plangraph.plan.positions import LazyPositions

    path, cache = tmp_path / "plan.yaml", tmp_path / "cache"
    nodes = "".join(f"  - id: n{i}\n    title: caf\u00e9 {i} {'x' * 60}\n" for i in range(1200))
    path.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}", encoding="utf-8")
    first = load_plan(path, cache_dir=cache)
    second = load_plan(path, cache_dir=cache)  # from the cache
    assert isinstance(second.positions, LazyPositions)
    assert not isinstance(first.positions, LazyPositions)
    assert second.plan == first.plan
    for where in (("nodes", 0), ("nodes", 17, "title"), ("nodes", 1199, "id")):
        assert second.location(where) == first.location(where)
    assert second.location(("nodes", 17, "title")) == f"{path}:39:5"
