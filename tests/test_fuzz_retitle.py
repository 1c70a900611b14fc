"""Differential fuzzing of the title patch (``plan/retitle.py``): generated large plans (nodes
written as blocks or flow mappings, at the margin or indented, titles plain, quoted, literal or
folded) go through sequences of generated edits around one node's title (its text, its style,
its key quoted, comments with ``title:`` in them, a block scalar holding ``acceptance:`` and
``- id:`` lines, the lines after it indented anew, tabs, CR line ends, a byte-order mark) made
alone or with a second edit in the same item (its criterion, its verifier, a duplicate title),
in another item, in an edge or in the header, and edits undone (A, B, A). After each edit the
plan read with the cache (its validated form, digest, criterion digests, order, shape, content
key, or its error) is the plan read with an empty cache folder and the plan read without one.
The same for a fixed list of edits around a title (:data:`ATTACKS`), and through ``plangraph
status`` and ``lint`` in a real git repository, where evidence recorded for a criterion no
longer counts once the criterion changed beside a title."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph_main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_helpers import git
from test_fuzz_plancache_cli import _command_answers, _without_cache

from pytest_plangraph.errors import PlanError
from pytest_plangraph.plan.factcache import shape
from pytest_plangraph.plan.file import CACHE_MIN_BYTES, load_plan

COUNT = 130
"""Nodes of a generated plan: enough text for the plan cache (and the patch) to be used."""
TITLE_TEXT = st.text("abc xyz", max_size=10) | st.lists(
    st.sampled_from(
        [*"ab :#-'\"{}[],&*!|>?%@`\\é\u4e2d\n\t", "- id: x", "acceptance:", "title: y", "\r"]
    ),
    max_size=12,
).map("".join)
STYLES = ("plain", "single", "double", "literal", "folded", "json")


def _title_lines(title: str, style: str, pad: str) -> str:
    """The ``title`` line(s) of a node whose keys are at *pad*, its text written in *style*
    (any text, so that some are not YAML: the read with the cache must fail alike)."""
    if style == "single":
        return f"{pad}title: '{title.replace(chr(39), chr(39) * 2)}'\n"
    if style in ("double", "json"):
        return f"{pad}title: {json.dumps(title, ensure_ascii=style == 'double')}\n"
    if style in ("literal", "folded"):
        body = "".join(f"{pad}  {line}\n" for line in title.split("\n"))
        return f"{pad}title: {'|' if style == 'literal' else '>-'}\n{body}"
    return f"{pad}title: {title}\n"


def _node(index: int, indent: str, flow: bool, title: str | None) -> str:
    """Node *index* as an item of the list at *indent*, its title written by *title*."""
    verifier = f"{{type: artifact, path: out/n{index}.txt}}"
    if flow:
        named = "" if title is None else f" title: {title},"
        return (
            f"{indent}- {{id: n{index},{named} outputs: [out/n{index}.txt],"
            f" acceptance: [{{id: ac, verifier: {verifier}}}]}}\n"
        )
    pad = indent + "  "
    return (
        f"{indent}- id: n{index}\n{title or ''}{pad}outputs: [out/n{index}.txt]\n"
        f"{pad}acceptance:\n{pad}- id: ac\n{pad}  verifier: {verifier}\n"
    )


class Plan:
    """A generated plan: its nodes' text, edited one at a time."""

    def __init__(self, indent: str, flows: list[bool]) -> None:
        self.indent, self.flows = indent, flows
        self.header = "plangraph: 1\nplan: big\n"
        self.nodes = [
            _node(i, indent, flow, f"t{i}" if flow else f"{indent}  title: t{i}\n")
            for i, flow in enumerate(flows)
        ]
        self.edges = [f"- {{from: n{i}, to: n{i + 1}, type: requires}}\n" for i in range(COUNT - 1)]

    def text(self) -> str:
        """The plan file's text."""
        return f"{self.header}nodes:\n{''.join(self.nodes)}edges:\n{''.join(self.edges)}"

    def retitle(self, index: int, title: str, style: str) -> None:
        """Node *index* with *title* written in *style*."""
        flow = self.flows[index]
        if flow:
            written = json.dumps(title) if style in ("double", "json", "literal") else title
            self.nodes[index] = _node(index, self.indent, True, written)
        else:
            lines = _title_lines(title, style, self.indent + "  ")
            self.nodes[index] = _node(index, self.indent, False, lines)


def _replace_once(old: str, new: str) -> Callable[[Plan, int], None]:
    def edit(plan: Plan, index: int) -> None:
        plan.nodes[index] = plan.nodes[index].replace(old, new, 1)

    return edit


def _other_item(plan: Plan, index: int) -> None:
    other = (index + 1) % COUNT
    plan.nodes[other] = plan.nodes[other].replace("id: ac", "id: weakened", 1)


def _edge(plan: Plan, index: int) -> None:
    plan.edges[index % len(plan.edges)] = f"- {{from: n0, to: n{index or 1}, type: requires}}\n"


def _header(plan: Plan, index: int) -> None:
    plan.header = "plangraph: 1\nplan: other\n"


def _dedent_criterion(plan: Plan, index: int) -> None:
    pad = plan.indent + "  "
    plan.nodes[index] = plan.nodes[index].replace(
        f"{pad}- id: ac\n{pad}  verifier:", f"{pad}  - id: ac\n{pad}    verifier:", 1
    )


def _comment(plan: Plan, index: int) -> None:
    pad = plan.indent + "  "
    plan.nodes[index] = plan.nodes[index].replace(
        f"{pad}outputs:", f"{pad}# title: hidden\n{pad}outputs:", 1
    )


def _duplicate_title(plan: Plan, index: int) -> None:
    pad = plan.indent + "  "
    plan.nodes[index] = plan.nodes[index].replace(
        f"{pad}outputs:", f"{pad}title: again\n{pad}outputs:", 1
    )


def _quoted_key(plan: Plan, index: int) -> None:
    plan.nodes[index] = plan.nodes[index].replace("title:", '"title":', 1)


EXTRAS: dict[str, Callable[[Plan, int], None]] = {
    "none": lambda plan, index: None,
    "criterion id": _replace_once("id: ac", "id: ac2"),
    "verifier": _replace_once("path: out/n", "path: out/x"),
    "criterion dropped": _replace_once("acceptance:", "acceptance: []\n  weak:"),
    "another item": _other_item,
    "an edge": _edge,
    "the header": _header,
    "criteria indented": _dedent_criterion,
    "a comment naming title": _comment,
    "a duplicate title": _duplicate_title,
    "a quoted key": _quoted_key,
}
EDIT = st.tuples(
    st.integers(0, COUNT - 1),
    TITLE_TEXT,
    st.sampled_from(STYLES),
    st.just("none") | st.sampled_from(sorted(EXTRAS)),  # a title edited alone, often
)
BYTES: dict[str, Callable[[str], bytes]] = {
    "utf-8": str.encode,
    "bom": lambda text: b"\xef\xbb\xbf" + text.encode(),
    "crlf": lambda text: text.replace("\n", "\r\n").encode(),
}


def _answer(path: Path, cache: Path | None) -> Any:
    """What the plan read gives: everything the gate judges by (and, read with a cache folder,
    what is kept under it), or the error's text."""
    try:
        loaded = load_plan(path, cache_dir=cache)
    except PlanError as exc:
        return ("error", str(exc))
    plan = loaded.plan
    return (
        plan.to_data(),
        plan.digest,
        plan.criterion_digests,
        plan.topological_order,
        *((shape(plan), loaded.content_key) if cache is not None else ()),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    indent=st.sampled_from(["", "  "]),
    flows=st.lists(st.booleans(), min_size=COUNT, max_size=COUNT),
    edits=st.lists(st.one_of(EDIT, st.just("undo")), min_size=1, max_size=4),
    encoding=st.sampled_from(sorted(BYTES)),
)
def test_title_edits_read_with_the_cache_as_without_it(
    indent: str, flows: list[bool], edits: list[Any], encoding: str
) -> None:
    plan = Plan(indent, flows)
    encode = BYTES[encoding]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path, cache, fresh = folder / "plangraph.yaml", folder / "cache", folder / "fresh"
        path.write_bytes(encode(plan.text()))
        assert path.stat().st_size >= CACHE_MIN_BYTES  # the plan cache keeps it
        first = plan.text()
        _answer(path, cache)
        for edit in edits:
            if edit == "undo":
                text = first
            else:
                index, title, style, extra = edit
                plan.retitle(index, title, style)
                EXTRAS[extra](plan, index)
                text = plan.text()
            path.write_bytes(encode(text))
            cached = _answer(path, cache)
            shutil.rmtree(fresh, ignore_errors=True)
            assert cached == _answer(path, fresh)
            assert cached[:4] == _answer(path, None)


def _cheat(extra: str) -> Callable[[Plan], None]:
    """Node n100's title edited with *extra* made in the same plan."""

    def edit(plan: Plan) -> None:
        plan.retitle(100, "looks like a title edit", "plain")
        EXTRAS[extra](plan, 100)

    return edit


CHEATS = sorted(EXTRAS)


@pytest.mark.parametrize("extra", CHEATS)
def test_status_after_a_title_edit_answers_as_without_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str
) -> None:
    """``plangraph status`` and ``lint`` in a real git repository, n100's criterion met by its
    artifact, after its title was edited alone and with each other edit: as with the cache
    folder deleted, and the criterion met only while it is the one met before."""
    as_tester(monkeypatch)
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    (root / "out" / "n100.txt").write_text("made\n")
    plan = Plan("", [n % 3 == 0 for n in range(COUNT)])
    (root / "plangraph.yaml").write_text(plan.text())
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plan")
    plangraph_main(root, "verify")  # evidence for n100's criterion (the other artifacts miss)
    before = _command_answers(root)
    assert before == _without_cache(root, tmp_path)
    assert _criterion_state(before) == "valid"
    plan.retitle(100, "first", "plain")  # a title edit alone: patched, then one with more
    (root / "plangraph.yaml").write_text(plan.text())
    assert _command_answers(root) == _without_cache(root, tmp_path)
    _cheat(extra)(plan)
    (root / "plangraph.yaml").write_text(plan.text())
    after = _command_answers(root)
    assert after == _without_cache(root, tmp_path)
    assert all("Traceback" not in answer[2] for answer in after)
    if extra in WEAKENED:  # the evidence was for another criterion: it no longer counts
        assert _criterion_state(after) != "valid"


WEAKENED = ("criterion id", "verifier", "criterion dropped")
"""The edits of :data:`EXTRAS` that change n100's criterion."""


def _criterion_state(answers: list[Any]) -> str | None:
    """The state of n100's first criterion in the ``status --format json`` answer (None when
    the answer is an error or n100 has no criterion)."""
    code, out, _ = answers[0]
    if code not in (0, 1):
        return None
    node = next(n for n in json.loads(out)["nodes"] if n["id"] == "n100")
    return str(node["criteria"][0]["state"]) if node["criteria"] else None


def _block_plan() -> str:
    return Plan("", [False] * COUNT).text()


def _flow_plan() -> str:
    return Plan("", [True] * COUNT).text()


def _sub(old: str, new: str, text: Callable[[], str] = _block_plan) -> tuple[str, str]:
    """A plan and the plan with *old* (found once) replaced by *new*."""
    before = text()
    assert before.count(old) == 1
    return before, before.replace(old, new, 1)


def _both(before: str, after: str, change: Callable[[str], str]) -> tuple[str, str]:
    return change(before), change(after)


T100 = "  title: t100\n"
ATTACKS: dict[str, tuple[str, str]] = {
    "flow title": _sub("title: t100,", "title: X,", _flow_plan),
    "flow title and criterion": _sub(
        "{id: n100, title: t100, outputs: [out/n100.txt], acceptance: [{id: ac,",
        "{id: n100, title: X, outputs: [out/n100.txt], acceptance: [{id: ac2,",
        _flow_plan,
    ),
    "block scalar holding lines": _sub(T100, "  title: |\n    acceptance:\n    - id: zz\n"),
    "folded with an item line": _sub(T100, "  title: >-\n    - id: q\n\n    x\n"),
    "a comment naming title": _sub(T100, "  title: t100 # title: y\n  # title: z\n"),
    "a quoted key": _sub(T100, '  "title": X\n'),
    "a multi-line plain title": _sub(T100, "  title: a\n    b\n    c\n"),
    "an empty title": _sub(T100, "  title: ''\n"),
    "a null title": _sub(T100, "  title: ~\n"),
    "an anchor": _sub(T100, "  title: &x X\n"),
    "a tag": _sub(T100, "  title: !!str 12\n"),
    "a binary tag": _sub(T100, "  title: !!binary aGVsbG8=\n"),
    "a document end": _sub(T100, "  title: X\n...\n"),
    "a merge key": _sub(T100, "  title: X\n  <<: {risk: high}\n"),
    "a NEL": _sub(T100, "  title: a\x85b\n"),
    "a line separator": _sub(T100, "  title: a\u2028b\n"),
    "a comment at the margin": _sub(T100, "  title: X\n# hi\n"),
    "criteria indented anew": _sub(
        "  title: t100\n  outputs: [out/n100.txt]\n  acceptance:\n  - id: ac\n"
        "    verifier: {type: artifact, path: out/n100.txt}\n",
        "  title: X\n  outputs: [out/n100.txt]\n  acceptance:\n    - id: ac\n"
        "      verifier: {type: artifact, path: out/n100.txt}\n",
    ),
    "the same length": _sub(T100, "  title: t101\n"),
    "a title after the criteria": _sub(
        "  title: t100\n  outputs: [out/n100.txt]\n", "  outputs: [out/n100.txt]\n  title: X\n"
    ),
    "crlf": _both(*_sub(T100, "  title: X\n"), lambda text: text.replace("\n", "\r\n")),
    "a byte-order mark": _both(*_sub(T100, "  title: X\n"), lambda text: "\ufeff" + text),
    "a byte-order mark added": ((s := _sub(T100, "  title: X\n"))[0], "\ufeff" + s[1]),
    "an item's dash alone on its line": _both(
        *_sub(T100, "  title: X\n"), lambda text: text.replace("- id: n101\n", "-\n  id: n101\n")
    ),
    "inputs holding a title": _both(
        *_sub(T100, "  title: X\n"),
        lambda text: text.replace(
            "  outputs: [out/n100.txt]", "  inputs: {title: t100}\n  outputs: [out/n100.txt]"
        ),
    ),
    "a plugin verifier's title": _both(
        *_sub("path: out/n100.txt}", "title: X}"),
        lambda text: text.replace("{type: artifact, title", "{type: myplugin, title", 1).replace(
            "{type: artifact, path: out/n100.txt}", "{type: myplugin, title: t100}", 1
        ),
    ),
}


@pytest.mark.parametrize("texts", list(ATTACKS.values()), ids=list(ATTACKS))
def test_an_edit_around_a_title_reads_as_without_the_cache(
    tmp_path: Path, texts: tuple[str, str]
) -> None:
    """Each edit around n100's title, after its plan was read with the cache: the plan read
    with the cache is the plan read with an empty cache folder and without one."""
    path, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    path.write_bytes(texts[0].encode())
    _answer(path, cache)
    path.write_bytes(texts[1].encode())
    cached = _answer(path, cache)
    assert cached == _answer(path, tmp_path / "fresh")
    assert cached[:4] == _answer(path, None)
