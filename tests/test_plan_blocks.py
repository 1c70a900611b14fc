"""A large YAML plan read block by block, with each block's data kept under its bytes, reads
exactly as the whole text does: the same data, the same errors at the same lines and columns,
before and after an edit, on generated plans, fuzzed files and every fixture. After an edit only
the blocks it touched are parsed again."""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_plangraph.errors import PlanError
from pytest_plangraph.plan import blockcache, blocks, yaml_reader
from pytest_plangraph.plan.blockcache import read_blocks
from pytest_plangraph.plan.file import CACHE_MIN_BYTES, MAX_YAML_NODES, parse_plan

PAD = "".join(f"# {'padding ' * 8}{n}\n" for n in range(CACHE_MIN_BYTES // 70 + 1))
"""Comment lines that make any plan large enough for the plan cache."""


def _harness() -> Any:
    """The plan-file strategies of the reliability harness, loaded by path: ``reliability`` is
    not a package, and ``bench/reliability.py`` is another module of that name on the path of
    a session that imports the benchmarks."""
    path = Path(__file__).parent / "reliability" / "harness_plans.py"
    spec = importlib.util.spec_from_file_location("harness_plans", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


plan_files = _harness().plan_files


def _outcome(raw: bytes, cache: Path | None) -> Any:
    """What reading *raw* gives: the plan, its facts and every position the whole read knows,
    or the problems it reports."""
    try:
        loaded = parse_plan(raw, "plan.yaml", cache_dir=cache)
    except PlanError as exc:
        return [str(problem) for problem in exc.problems]
    whole = parse_plan(raw, "plan.yaml")  # all its positions, found by the whole read
    plan = loaded.plan
    return (
        plan.to_json(by_alias=True),
        plan.digest,
        sorted(plan.criterion_digests.items()),
        plan.topological_order,
        {path: loaded.positions.get(path) for path in whole.positions},
    )


def _same_with_and_without_cache(texts: list[str]) -> None:
    """Each text reads as without a cache, with one cache shared by all of them in turn (each
    read after those before it: an edit of the one before)."""
    with tempfile.TemporaryDirectory() as name:
        cache = Path(name)
        for text in texts:
            raw = text.encode("utf-8", "surrogatepass")
            expected = _outcome(raw, None)
            assert _outcome(raw, cache) == expected  # new blocks read, then kept
            assert _outcome(raw, cache) == expected  # the same bytes again


_TITLES = (
    "plain title",
    "'it''s quoted'",
    '"escaped \\t tab and \\u00e9"',
    '"a text over\n      two lines"',
    "|\n      a block text\n      # not a comment\n",
    ">\n      folded\n      text\n",
    "|+\n      kept\n\n",
    ">-\n      stripped\n\n",
    "yes",
    "1e3",
    "~",
    "[a, b]",
    "{a: 1}",
)
_ODD_LINES = (
    "# a comment",
    "",
    "---",
    "...",
    "%YAML 1.2",
    "\tkey: 1",
    "- orphan",
    "  - orphan",
    "   stray: 1",
    "x: &a [1, 2]",
    "y: *a",
    "nodes: []",
    "plan: again",
    "'quoted': 1",
    "[a, b]",
    '"unterminated',
    "key: value",
    "  titel: misspelled",
    "    - id: deep",
    "edges:",
    "-",
)


@st.composite
def _node(draw: st.DrawFn, n: int, indent: str) -> str:
    title = draw(st.sampled_from(_TITLES))
    extra = draw(st.sampled_from(("", "  titel: misspelled\n", "  outputs: nope\n")))
    return (
        f"{indent}- id: n{n}\n{indent}  title: {title}\n"
        + "".join(indent + line + "\n" for line in extra.splitlines())
        + f"{indent}  outputs:\n{indent}  - out/n{n}.txt\n"
        f"{indent}  acceptance:\n{indent}    - id: ac\n"
        f"{indent}      verifier: {{type: artifact, path: out/n{n}.txt}}\n"
    )


@st.composite
def _plans(draw: st.DrawFn) -> list[str]:
    """A plan text, then the same text after one to three edits."""
    indent = draw(st.sampled_from(("", "  ", "    ")))
    count = draw(st.integers(1, 40))
    nodes = [draw(_node(n, indent)) for n in range(count)]
    edges = [
        f"{indent}- {{from: n{n}, to: n{n + 1}, type: requires}}\n"
        for n in range(count - 1)
        if draw(st.booleans())
    ]
    comments = draw(st.sampled_from(("", "# the plan\n\n")))

    def render() -> str:
        text = f"{comments}plangraph: 1\nplan: generated  # a comment\nnodes:\n{''.join(nodes)}"
        return text + (f"edges:\n{''.join(edges)}" if edges else "")

    texts = [PAD + render()]
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(("comment", "line", "node", "remove", "insert")))
        at = draw(st.integers(0, len(nodes) - 1))
        if how in ("comment", "line"):
            lines = render().split("\n")
            where = draw(st.integers(0, len(lines)))
            odd = "# edited" if how == "comment" else draw(st.sampled_from(_ODD_LINES))
            texts.append(PAD + "\n".join([*lines[:where], odd, *lines[where:]]))
            continue
        if how == "node":
            nodes[at] = draw(_node(at, indent))
        elif how == "remove" and len(nodes) > 1:
            del nodes[at]
        else:
            nodes.insert(at, draw(_node(len(nodes) + at, indent)))
        texts.append(PAD + render())
    return texts


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_plans())
def test_generated_and_edited_plans_read_as_the_whole_text(texts: list[str]) -> None:
    _same_with_and_without_cache(texts)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(plan_files())
def test_fuzzed_files_read_as_the_whole_text_or_whole(file: Any) -> None:
    """Read block by block, a fuzzed file gives what the whole read gives, or is read whole."""
    try:
        text = file.data.decode("utf-8")
    except UnicodeDecodeError:
        return
    try:
        whole = yaml_reader.read_yaml(text, "plan.yaml", MAX_YAML_NODES)[0]
        expected: bytes | None = json.dumps(whole, ensure_ascii=False, allow_nan=False).encode()
    except PlanError:
        expected = None  # refused: the blocks must not read
    except (TypeError, ValueError):
        expected = b"not JSON"  # (a date, say): the blocks must not read either
    with tempfile.TemporaryDirectory() as name:
        for _ in range(2):  # new blocks, then kept ones
            found = read_blocks(text, "plan.yaml", MAX_YAML_NODES, Path(name))
            assert found is None or found[0] == expected


FIXTURE_PLANS = sorted(FIXTURES.rglob("*.yaml"))


@pytest.mark.parametrize("plan", FIXTURE_PLANS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_reads_as_the_whole_text(plan: Path) -> None:
    text = PAD + plan.read_text(encoding="utf-8")
    _same_with_and_without_cache([text, text + "# edited\n", text.replace("\n", "\n\n", 3)])


def test_the_fixtures_are_read_block_by_block() -> None:
    """The comparison above compares something: most fixtures do split into blocks."""
    split = [plan for plan in FIXTURE_PLANS if blocks.split(plan.read_text(encoding="utf-8"))]
    assert len(split) >= len(FIXTURE_PLANS) - 2


def _big(count: int = 200, indent: str = "") -> str:
    nodes = "".join(
        f"{indent}- id: n{n}\n{indent}  title: step {n}\n{indent}  acceptance:\n"
        f"{indent}  - id: ac\n{indent}    verifier: {{type: artifact, path: out/n{n}.txt}}\n"
        for n in range(count)
    )
    return f"plangraph: 1\nplan: big\nnodes:\n{nodes}"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the YAML reader parses, block by block or whole, from now on."""
    seen: list[str] = []
    read_block, read_yaml = yaml_reader.read_block, yaml_reader.read_yaml

    def counting_block(text: str, name: str, max_nodes: int) -> Any:
        seen.append(text)
        return read_block(text, name, max_nodes)

    def counting_whole(text: str, name: str, max_nodes: int) -> Any:
        seen.append(text)
        return read_yaml(text, name, max_nodes)

    monkeypatch.setattr(yaml_reader, "read_block", counting_block)
    monkeypatch.setattr(yaml_reader, "read_yaml", counting_whole)
    return seen


@pytest.mark.parametrize("indent", ["", "  "])
def test_an_edit_parses_only_the_blocks_it_touched(
    tmp_path: Path, parsed: list[str], indent: str
) -> None:
    plan, cache = tmp_path / "plangraph.yaml", tmp_path / "cache"
    text = _big(indent=indent)
    plan.write_text(text)
    first = parse_plan(plan.read_bytes(), "p", cache_dir=cache)
    runs = len(blocks.split(text) or [])
    assert len(parsed) == runs > 10  # every block, none whole
    parsed.clear()
    plan.write_text(text + "# edited\n")
    edited = parse_plan(plan.read_bytes(), "p", cache_dir=cache)
    # the last node's item changed: read alone as it was and as it is (plan/retitle.py: the
    # same meaning, not patched), then the one block it is in
    assert len(parsed) == 3 and parsed[2].endswith(
        "- id: n199\n" + text.split("- id: n199\n")[1] + "# edited\n"
    )
    assert [part.count("- id: n") for part in parsed[:2]] == [1, 1]
    assert "# edited" not in parsed[0] and parsed[1].endswith("out/n199.txt}\n# edited\n")
    assert edited.plan == first.plan
    parsed.clear()
    changed = f"{text}# edited\n".replace("title: step 100\n", "title: step one hundred\n")
    plan.write_text(changed)
    assert parse_plan(plan.read_bytes(), "p", cache_dir=cache).plan.nodes[100].title == (
        "step one hundred"
    )
    # a title edit: the node's item alone, read as it was and as it is (plan/retitle.py)
    assert [part.count("- id: n") for part in parsed] == [1, 1] and "step 100\n" in parsed[0]
    assert "step one hundred" in parsed[1]
    parsed.clear()
    plan.write_text(changed.replace("step 120\n", f"step 120\n{indent}  risk: r\n"))
    assert parse_plan(plan.read_bytes(), "p", cache_dir=cache).plan.nodes[120].risk == "r"
    # any other edit: the item tried alone, then the blocks it touched (and the block of the
    # title patched before, which no block read has kept)
    assert [part.count("- id: n") for part in parsed[:2]] == [1, 1] and "risk: r" in parsed[1]
    assert len(parsed) == 4 and {"risk: r" in parsed[2], "risk: r" in parsed[3]} == {True, False}


def test_an_error_after_an_edited_block_is_located_at_its_new_line(
    tmp_path: Path, parsed: list[str]
) -> None:
    cache = tmp_path / "cache"
    text = _big().replace("  title: step 150\n", "  title: step 150\n  titel: typo\n")
    with pytest.raises(PlanError) as first:
        parse_plan(text.encode(), "p", cache_dir=cache)
    edited = text.replace("  title: step 3\n", "  # two more\n  # lines\n  title: step 3\n")
    parsed.clear()
    with pytest.raises(PlanError) as kept:
        parse_plan(edited.encode(), "p", cache_dir=cache)
    # the edited block, then the block of the error for its position; not the whole text
    assert len(parsed) == 2 and "title: step 3" in parsed[0] and "titel: typo" in parsed[1]
    parsed.clear()
    with pytest.raises(PlanError) as again:  # its parsed data kept whole: one block to locate
        parse_plan(edited.encode(), "p", cache_dir=cache)
    assert len(parsed) == 1 and "titel: typo" in parsed[0]
    assert str(again.value) == str(kept.value)
    with pytest.raises(PlanError) as whole:
        parse_plan(edited.encode(), "p")
    line = edited.split("\n").index("  titel: typo") + 1
    assert str(kept.value) == str(whole.value) and f"p:{line}:3" in str(kept.value)
    assert f"p:{line - 2}:3" in str(first.value)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            lambda t: t.replace("  title: step 7\n", "  title: step 7\n  title: again\n"),
            "duplicate",
        ),
        (lambda t: t + "plan: twice\n", "duplicate key 'plan'"),
        (lambda t: t.replace("step 9", "step \x01 9"), "U+0001"),
        (lambda t: t.replace("title: step 9\n", "title: &a [1]\n  other: *a\n"), "other"),
        (lambda t: t.replace("title: step 9\n", 'title: "open\n'), "YAML syntax error"),
    ],
    ids=["duplicate-in-a-node", "duplicate-at-the-top", "control-character", "alias", "syntax"],
)
def test_what_the_whole_read_refuses_is_refused_alike(
    tmp_path: Path, change: Any, says: str
) -> None:
    cache = tmp_path / "cache"
    parse_plan(_big().encode(), "p", cache_dir=cache)  # its blocks kept
    raw = change(_big()).encode()
    with pytest.raises(PlanError) as whole:
        parse_plan(raw, "p")
    with pytest.raises(PlanError) as kept:
        parse_plan(raw, "p", cache_dir=cache)
    assert str(kept.value) == str(whole.value) and says in str(whole.value)


def test_an_alias_bomb_is_refused_alike(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdef", "bcdefg", strict=False)
    )
    raw = (_big() + bomb).encode()
    with pytest.raises(PlanError, match="alias bomb"):
        parse_plan(raw, "p")
    with pytest.raises(PlanError, match="alias bomb"):
        parse_plan(raw, "p", cache_dir=tmp_path / "cache")


def test_a_damaged_or_foreign_block_file_changes_no_answer(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    raw = _big().encode()
    expected = parse_plan(raw, "p").plan
    parse_plan(raw, "p", cache_dir=cache)
    kept = cache / blockcache.FILE_NAME
    lines = kept.read_text().splitlines(keepends=True)
    for damaged in (
        "".join(lines)[:-10],  # cut short
        "nonsense\n" + "".join(lines),
        "".join(line.replace("\t", "\t9", 1) for line in lines),  # counts that lie
    ):
        kept.write_text(damaged)
        for _ in range(2):  # with the damaged file, then with the file written anew
            for entry in cache.glob("plan-*.json"):
                entry.unlink()  # the parsed data kept whole: read the blocks
            assert parse_plan(raw, "p", cache_dir=cache).plan == expected


def test_the_block_file_keeps_about_the_blocks_of_the_plan_read_last(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    text = _big(400)
    for n in range(30):  # edited again and again
        edited = text.replace("step 5\n", f"step 5\n  risk: edit {n}\n")  # not a title alone
        parse_plan(edited.encode(), "p", cache_dir=cache)
    wanted = len(blocks.split(text) or [])
    lines = (cache / blockcache.FILE_NAME).read_text().count("\n")
    assert wanted < lines <= 2 * wanted + blockcache.SPARE
