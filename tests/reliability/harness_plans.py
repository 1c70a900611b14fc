"""Hypothesis strategies for fuzzed plan files: plausible plans with mutated fields, text edits
that YAML and JSON readers trip on, and raw byte mutations.

A plausible plan has the format's shape (``plangraph: 1``, nodes with ids drawn from a small set
so that parents, edges and inputs name each other, criteria with every built-in verifier,
outputs and edge artifacts). Then a few of its values are replaced by values a plan must refuse
or survive: wrong types, huge and non-finite numbers, odd Unicode (surrogates, NUL, bidi marks,
a byte-order mark), deep nesting, and paths that escape the repository or make globbing costly.
The plan is written as YAML or JSON, and its text may be edited further (a key written twice,
anchors and aliases, tags, several documents, tabs). :func:`plan_files` draws one file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import strategies as st

KNOWN_HANG_GLOB = "**/" * 100 + "x"
"""A glob that once made ``status`` hang on large trees."""
DEEP_GLOB = "*/" * 300 + "x"
"""A glob whose expansion by ``status`` once recursed past Python's limit (a traceback)."""
HOSTILE_GLOBS: tuple[str, ...] = (KNOWN_HANG_GLOB, DEEP_GLOB)
"""Globs ``bench/reliability.py`` also measures on their own, one plan each."""
EXCLUDED_PATTERNS: tuple[str, ...] = ()
"""Globs whose ``status`` answer would be left out of the assertions while a known bug is
open (the other readers still get those files); docs/reliability.md lists any."""

IDS = ("a", "b", "c", "step-1", "objective-x", "m")
ODD_TEXT = (
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\u202eevil",
    "\ufeffbom",
    "\u0085next-line",
    "\u2028",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "e\u0301",
    "\t",
    "a\r\nb",
    "-",
    "null",
    "~",
    "é" * 3000,
    "x" * 100_000,
)
ODD_PATHS = (
    "src/a.json",
    "src/*.json",
    "src/**",
    "**",
    KNOWN_HANG_GLOB,
    DEEP_GLOB,
    "**/*" * 20,
    "../outside",
    "src/../../x",
    "/etc/passwd",
    "C:/x",
    "C:\\x",
    "\\\\server\\share",
    "a\x00b",
    "~/x",
    ".",
    "./",
    "src//a.json",
    "src/a.json/",
    ".git/config",
    ".plangraph/store.db",
    "[",
    "[!]",
    "{a,b}",
    "a" * 5000,
    "a/" * 2000 + "b",
    "\ud800.json",
)
BIG_NUMBERS = (10**100, -(2**63), 2**64, -1, 0, 10**4000, 1e308, -0.0)
TEXT_EDITS = (
    "&anchor [*anchor]",
    "!!python/object/apply:os.system ['true']",
    "!!binary aGVsbG8=",
    "!custom x",
    "---\nplangraph: 1\n",
    "? [complex, key]\n: value",
    "<<: *nowhere",
    "\t- tab",
    "%YAML 1.1\n---",
    "'unclosed",
    '"\\ud800"',
    "{",
    "]",
    "\x00",
    "\ufeff",
    "a: b: c",
    "- - - - - - - - - - - - - - -",
    "NaN",
    "Infinity",
    "1e400",
    "9" * 5000,
)


@dataclass(frozen=True)
class PlanFile:
    """One fuzzed plan file: its name (the suffix says how it is read) and its bytes."""

    name: str
    data: bytes
    how: str
    """How it was made: ``plausible``, ``edited`` or ``bytes`` (for the figures)."""


def odd_values(depth: int = 3) -> st.SearchStrategy[Any]:
    """Values of every JSON/YAML type a plan field may be given by mistake."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from(BIG_NUMBERS),
        st.floats(),  # nan and infinities included
        st.sampled_from(ODD_TEXT),
        st.sampled_from(ODD_PATHS),
        st.text(st.characters(exclude_categories=()), max_size=12),  # surrogates included
    )
    nested = st.integers(1, 300).map(lambda n: _nest(n))
    if depth <= 0:
        return st.one_of(scalars, nested)
    inner = odd_values(depth - 1)
    return st.one_of(
        scalars,
        nested,
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(("id", "type", "x", "from", "")), inner, max_size=3),
    )


def _nest(depth: int) -> Any:
    value: Any = "deep"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


GOOD_PATHS = ("src/a.json", "src/schema.json", "src/*.json", "tests/test_x.py", "out/new.txt")


def _paths() -> st.SearchStrategy[str]:
    """Mostly paths a plan may name, so that many plans get past lint to ``status``."""
    good = st.sampled_from(GOOD_PATHS)
    odd = st.one_of(st.sampled_from(ODD_PATHS), st.text(min_size=1, max_size=16))
    return st.one_of(good, good, good, good, odd)


@st.composite
def _verifier(draw: st.DrawFn) -> dict[str, Any]:
    kinds = ("test", "schema", "artifact", "approval", "test", "schema", "custom")
    kind = draw(st.sampled_from(kinds))
    if kind == "test":
        tests = draw(st.lists(_paths().map(lambda path: path + "::t"), max_size=2))
        return {"type": kind, "tests": tests}
    if kind == "schema":
        return {"type": kind, "schema": draw(_paths()), "artifact": draw(_paths())}
    if kind == "artifact":
        settings: dict[str, Any] = {"type": kind, "path": draw(_paths())}
        if draw(st.booleans()):
            settings["sha256"] = draw(st.sampled_from(("0" * 64, "F" * 64, "0" * 64, "abc")))
        return settings
    return {"type": kind, "role": draw(st.sampled_from(("security", None)))}


@st.composite
def _node(draw: st.DrawFn, node_id: str, ids: list[str]) -> dict[str, Any]:
    node: dict[str, Any] = {"id": node_id}
    node["kind"] = draw(st.sampled_from(("objective", "step", "milestone")))
    if draw(st.booleans()):
        node["parent"] = draw(st.sampled_from(ids))
    node["outputs"] = draw(st.lists(_paths(), max_size=2))
    criteria = st.fixed_dictionaries(
        {"id": st.sampled_from(("c1", "c2", "c3", "c1")), "verifier": _verifier()},
        optional={"assertion": st.text(max_size=8), "required": st.booleans()},
    )
    node["acceptance"] = draw(st.lists(criteria, max_size=3))
    optional = {
        "effect": st.sampled_from(("read", "write", "irreversible")),
        "compensate": st.sampled_from(("undo", "")),
        "idempotent": st.booleans(),
        "max_retry": st.integers(0, 5),
        "timeout_s": st.floats(0.1, 100),
        "cancelled": st.booleans(),
        "inputs": st.dictionaries(
            st.sampled_from(("x", "y")), st.sampled_from(IDS).map(lambda i: f"{i}.outputs.f")
        ),
        "outputs_schema": st.dictionaries(st.sampled_from(("f", "g")), st.just("string")),
        "constraints": st.lists(st.text(max_size=5), max_size=2),
    }
    for key, strategy in optional.items():
        if draw(st.integers(0, 3)) == 0:
            node[key] = draw(strategy)
    return node


def _edge() -> st.SearchStrategy[dict[str, Any]]:
    kinds = ("requires", "consumes", "validates", "conflicts", "related", "contains")
    return st.fixed_dictionaries(
        {"from": st.sampled_from(IDS), "to": st.sampled_from(IDS), "type": st.sampled_from(kinds)},
        optional={
            "strength": st.sampled_from(("strong", "weak")),
            "artifacts": st.lists(_paths(), max_size=2),
            "confidence": st.floats(0, 1),
            "status": st.sampled_from(("active", "proposed", "inactive")),
        },
    )


@st.composite
def plausible_plans(draw: st.DrawFn) -> dict[str, Any]:
    """A plan of the format's shape, with 0 to 3 of its values mutated."""
    ids = draw(st.lists(st.sampled_from(IDS), max_size=5))
    plan: dict[str, Any] = {"plangraph": 1, "plan": draw(st.sampled_from(("p", "plan-x")))}
    plan["nodes"] = [draw(_node(node_id, ids)) for node_id in ids]
    plan["edges"] = draw(st.lists(_edge(), max_size=4))
    for _ in range(draw(st.sampled_from((0, 0, 1, 2, 3)))):
        _mutate(draw, plan)
    return plan


def _mutate(draw: st.DrawFn, plan: dict[str, Any]) -> None:
    """Replace, drop or add one value somewhere in *plan* (in place)."""
    places = list(_places(plan))
    container, key = draw(st.sampled_from(places))
    action = draw(st.sampled_from(("replace", "replace", "drop", "add")))
    if action == "replace":
        container[key] = draw(odd_values())
    elif action == "drop" and isinstance(container, dict):
        del container[key]
    elif isinstance(container, dict):
        container[draw(st.sampled_from(("extra", "Id", "nodes", "\ud800", "")))] = 1


def _places(value: Any) -> Any:
    """Every (container, key) pair in a nested structure of dicts and lists."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in list(items):
        yield value, key
        if isinstance(item, (dict, list)) and item:
            yield from _places(item)


@st.composite
def plan_files(draw: st.DrawFn) -> PlanFile:
    """One fuzzed plan file: a plausible plan as YAML or JSON, perhaps edited as text, or the
    bytes of one with random byte mutations."""
    plan = draw(plausible_plans())
    as_json = draw(st.booleans())
    text = _serialise(plan, as_json, draw(st.booleans()))
    name = "plan.json" if as_json else draw(st.sampled_from(("plangraph.yaml", "plan.yml")))
    how = draw(st.sampled_from(("plausible", "edited", "bytes")))
    if how == "edited":
        text = _edit_text(draw, text)
    data = text.encode("utf-8", "surrogatepass")
    if how == "bytes":
        data = _mutate_bytes(draw, data)
        name = draw(st.sampled_from(("plangraph.yaml", "plan.json")))
    return PlanFile(name, data, how)


def _serialise(plan: dict[str, Any], as_json: bool, unicode: bool) -> str:
    if not as_json:
        try:
            dumped: str = yaml.safe_dump(plan, allow_unicode=unicode, sort_keys=False)
            return dumped
        except (yaml.YAMLError, RecursionError, ValueError):
            pass  # a value YAML cannot write: the plan goes out as JSON text (JSON is YAML)
    try:
        return json.dumps(plan, ensure_ascii=not unicode, indent=1)
    except (RecursionError, ValueError):
        return '{"plangraph": 1, "plan": "unwritable"}'


def _edit_text(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines() or [""]
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(("duplicate", "insert", "replace", "indent")))
        if action == "duplicate":  # the same key twice, as a person pasting a line would
            lines.insert(at, lines[at])
        elif action == "insert":
            lines.insert(at, draw(st.sampled_from(TEXT_EDITS)))
        elif action == "replace":
            lines[at] = lines[at].split(":")[0] + ": " + draw(st.sampled_from(TEXT_EDITS))
        else:
            lines[at] = draw(st.sampled_from((" ", "\t", "    "))) + lines[at]
    return "\n".join(lines) + draw(st.sampled_from(("\n", "", "\r\n")))


def _mutate_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    buffer = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, max(len(buffer) - 1, 0)))
        action = draw(st.sampled_from(("flip", "insert", "delete", "copy")))
        if action == "flip" and buffer:
            buffer[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "insert":
            buffer[at:at] = draw(st.binary(min_size=1, max_size=6))
        elif action == "delete":
            del buffer[at : at + draw(st.integers(1, 16))]
        else:
            size = draw(st.integers(1, 64))
            buffer[at:at] = buffer[at : at + size]
    return bytes(buffer)
