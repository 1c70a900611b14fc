"""A large plan whose one node changed by its title alone, patched from the plan read before it
(``plan/retitle.py``): every title edit (changed, added, quoted, unicode, folded, made equal to
another node's, edited twice) is read as with every cache deleted (the plan, its validated
form, digest, criterion digests, order, shape and node keys), any other edit is not patched,
and a damaged or swapped cache file is a miss, never a wrong plan nor a traceback."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_plangraph.errors import PlanError
from pytest_plangraph.plan import retitle
from pytest_plangraph.plan.cache import keyed, validated_text
from pytest_plangraph.plan.factcache import shape
from pytest_plangraph.plan.file import CACHE_MIN_BYTES, LoadedPlan, load_plan


def _plan(path: Path, count: int = 300) -> None:
    """A plan above the cache's size, the even nodes with a title, the odd ones without."""
    nodes = "".join(
        f"- id: n{i}\n{f'  title: t{i}{chr(10)}' if i % 2 == 0 else ''}"
        f"  outputs: [out/n{i}.txt]\n  acceptance:\n"
        f"  - id: ac\n    verifier: {{type: artifact, path: out/n{i}.txt}}\n"
        for i in range(count)
    )
    edges = "".join(f"- {{from: n{i}, to: n{i + 1}, type: requires}}\n" for i in range(count - 1))
    path.write_text(f"plangraph: 1\nplan: big\nnodes:\n{nodes}edges:\n{edges}")


def _replace(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert text.count(old) == 1
        return text.replace(old, new, 1)

    return edit


def _fresh(plan: Path, folder: Path) -> LoadedPlan:
    """The plan read with an empty cache folder: every fact computed anew."""
    shutil.rmtree(folder, ignore_errors=True)
    return load_plan(plan, cache_dir=folder)


def _same(edited: LoadedPlan, fresh: LoadedPlan, cache: Path, fresh_cache: Path) -> None:
    assert edited.plan == fresh.plan and edited.plan.to_data() == fresh.plan.to_data()
    assert edited.plan.digest == fresh.plan.digest == load_plan(edited_path(edited)).plan.digest
    assert edited.plan.criterion_digests == fresh.plan.criterion_digests
    assert edited.plan.topological_order == fresh.plan.topological_order
    assert shape(edited.plan) == shape(fresh.plan) is not None
    assert edited.node_keys == fresh.node_keys is not None
    assert edited.content_key == fresh.content_key and edited.cache_key == fresh.cache_key
    assert edited.cache_key is not None
    assert validated_text(cache, edited.cache_key) == validated_text(fresh_cache, edited.cache_key)


def edited_path(loaded: LoadedPlan) -> Path:
    return Path(loaded.file)


TITLES: list[tuple[str, Callable[[str], str]]] = [
    ("changed", _replace("- id: n100\n  title: t100\n", "- id: n100\n  title: edited\n")),
    ("added", _replace("- id: n101\n", "- id: n101\n  title: edited\n")),
    ("added last", _replace("- id: n299\n", "- id: n299\n  title: last\n")),
    ("added first", _replace("- id: n1\n", "- id: n1\n  title: first\n")),
    (
        "quotes and unicode",
        _replace("  title: t100\n", '  title: "say \\"hi\\" — ünïcødé ✓ 🎉 \\u00e9"\n'),
    ),
    ("single quotes", _replace("  title: t100\n", "  title: 'it''s: #not a comment'\n")),
    ("folded", _replace("  title: t100\n", "  title: >\n    folded\n    text\n")),
    ("another node's", _replace("  title: t100\n", "  title: t102\n")),
    ("a comment beside it", _replace("  title: t100\n", "  title: t1 # said\n  # more\n")),
    ("a number as text", _replace("  title: t100\n", "  title: '12'\n")),
]


@pytest.mark.parametrize("edit", [e for _, e in TITLES], ids=[n for n, _ in TITLES])
def test_a_title_edit_is_patched_and_read_as_without_a_cache(
    tmp_path: Path, patched: list[bool], edit: Callable[[str], str]
) -> None:
    plan, cache, other = tmp_path / "plangraph.yaml", tmp_path / "cache", tmp_path / "fresh"
    _plan(plan)
    first = load_plan(plan, cache_dir=cache)
    plan.write_text(edit(plan.read_text()))
    patched.clear()
    edited = load_plan(plan, cache_dir=cache)
    assert patched == [True]
    assert edited.plan.digest != first.plan.digest
    _same(edited, _fresh(plan, other), cache, other)
    again = load_plan(plan, cache_dir=cache)  # the same bytes: kept whole
    assert again.plan.digest == edited.plan.digest and shape(again.plan) == shape(edited.plan)


def test_titles_edited_one_after_another_are_each_patched(
    tmp_path: Path, patched: list[bool]
) -> None:
    plan, cache, other = tmp_path / "plangraph.yaml", tmp_path / "cache", tmp_path / "fresh"
    _plan(plan)
    load_plan(plan, cache_dir=cache)
    for n, node in enumerate(("n100", "n3", "n100", "n298")):
        text = plan.read_text()
        at = text.index(f"- id: {node}\n") + len(f"- id: {node}\n")
        following = text.index("  outputs:", at)
        plan.write_text(f"{text[:at]}  title: round {n}\n{text[following:]}")
        patched.clear()
        edited = load_plan(plan, cache_dir=cache)
        assert patched == [True]
        _same(edited, _fresh(plan, other), cache, other)


def test_a_comment_edit_then_a_title_edit_is_patched(tmp_path: Path, patched: list[bool]) -> None:
    plan, cache, other = tmp_path / "plangraph.yaml", tmp_path / "cache", tmp_path / "fresh"
    _plan(plan)
    load_plan(plan, cache_dir=cache)
    plan.write_text(plan.read_text() + "# edited\n")
    load_plan(plan, cache_dir=cache)  # the same meaning: its bytes kept as the last read
    plan.write_text(plan.read_text().replace("- id: n51\n", "- id: n51\n  title: x\n", 1))
    patched.clear()
    edited = load_plan(plan, cache_dir=cache)
    assert patched == [True]
    _same(edited, _fresh(plan, other), cache, other)


OTHERS: list[tuple[str, Callable[[str], str]]] = [
    ("a title removed", _replace("  title: t100\n", "")),
    ("a title made a number", _replace("  title: t100\n", "  title: 12\n")),
    ("a title made a list", _replace("  title: t100\n", "  title: [a]\n")),
    ("a kind", _replace("- id: n100\n", "- id: n100\n  kind: milestone\n")),
    ("an id", _replace("- id: n100\n", "- id: n100b\n")),
    (
        "two titles",
        lambda text: _replace("  title: t100\n", "  title: a\n")(
            _replace("  title: t200\n", "  title: b\n")(text)
        ),
    ),
    ("a node added", _replace("- id: n101\n", "- id: extra\n  title: x\n- id: n101\n")),
    ("a key at the margin", _replace("  title: t100\n", "  title: t100\nrisk: high\n")),
    ("a line less indented", _replace("  title: t100\n", "  title: >\n  text\n")),
    ("a tab", _replace("  title: t100\n", "  title: t\t100\n")),
    ("a title with an alias", _replace("  title: t100\n", "  title: &a t100\n  risk: *a\n")),
    ("an edge", _replace("- {from: n3, to: n4, type: requires}", "- {from: n3, to: n5}")),
    ("a field of the plan", _replace("plan: big\n", "plan: big\ntitle: the plan\n")),
    ("a duplicate key", _replace("  title: t100\n", "  title: t100\n  title: again\n")),
]


@pytest.mark.parametrize("edit", [e for _, e in OTHERS], ids=[n for n, _ in OTHERS])
def test_any_other_edit_is_read_as_before(
    tmp_path: Path, patched: list[bool], edit: Callable[[str], str]
) -> None:
    plan, cache, other = tmp_path / "plangraph.yaml", tmp_path / "cache", tmp_path / "fresh"
    _plan(plan)
    load_plan(plan, cache_dir=cache)
    plan.write_text(edit(plan.read_text()))
    patched.clear()
    try:
        edited: LoadedPlan | Exception = load_plan(plan, cache_dir=cache)
    except Exception as exc:  # compared with the read without a cache
        edited = exc
    assert patched in ([False], [])  # tried and missed, or not tried
    try:
        fresh: LoadedPlan | Exception = _fresh(plan, other)
    except Exception as exc:
        fresh = exc
    if isinstance(fresh, Exception):
        assert type(edited) is type(fresh) and str(edited) == str(fresh)
    else:
        assert isinstance(edited, LoadedPlan)
        _same(edited, fresh, cache, other)


def _flip(path: Path) -> None:
    """One byte near the end of *path* changed."""
    body = bytearray(path.read_bytes())
    body[-3] ^= 0x01
    path.write_bytes(bytes(body))


def _swap_canon(cache: Path, keep: Path) -> None:
    """The canonical file of the first version's meaning (kept before) in place of the one of
    the plan read last."""
    (saved,) = keep.glob("canon-*.json")
    (current,) = (p for p in cache.glob("canon-*.json") if p.name != saved.name)
    current.write_bytes(saved.read_bytes())


def _reheaded(**changes: Any) -> Callable[[Path, Path], None]:
    """``lastread.txt`` with its head changed and its check made anew (what a check cannot
    catch: its values are checked against the bytes it keeps); a list when *changes* name
    none."""

    def damage(cache: Path, keep: Path) -> None:
        path = cache / retitle.LAST
        first, _, body = path.read_bytes().partition(b"\n")
        line, _, raw = body.partition(b"\n")
        head = {**json.loads(line), **changes} if changes else [1]
        path.write_bytes(keyed(first.split()[0].decode(), json.dumps(head).encode() + b"\n" + raw))

    return damage


DAMAGE: list[tuple[str, Callable[[Path, Path], None]]] = [
    ("lastread flipped", lambda cache, keep: _flip(cache / retitle.LAST)),
    ("canon flipped", lambda cache, keep: _flip(next(cache.glob("canon-*.json")))),
    ("facts flipped", lambda cache, keep: [_flip(p) for p in cache.glob("facts-*.json")]),
    ("valid flipped", lambda cache, keep: [_flip(p) for p in cache.glob("valid-*.json")]),
    ("parsed flipped", lambda cache, keep: [_flip(p) for p in cache.glob("plan-*.json")]),
    (
        "lastread of another version",
        lambda cache, keep: shutil.copy(keep / retitle.LAST, cache / retitle.LAST),
    ),
    ("canon of another meaning", _swap_canon),
    ("lastread a folder", lambda cache, keep: _folder(cache / retitle.LAST)),
    ("lastread cut", lambda cache, keep: _cut(cache / retitle.LAST)),
    ("canon deleted", lambda cache, keep: [p.unlink() for p in cache.glob("canon-*.json")]),
    ("an indentation past the text", _reheaded(indent=10**12)),
    ("an indentation of another list", _reheaded(indent=2)),
    ("the list started elsewhere", _reheaded(first=100)),
    ("the list ended early", _reheaded(end=200)),
    ("the list ended past the text", _reheaded(end=10**9)),
    ("too many values", _reheaded(total=10**9)),
    ("a head that is not a mapping", _reheaded()),
]


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


@pytest.mark.parametrize("damage", [d for _, d in DAMAGE], ids=[n for n, _ in DAMAGE])
def test_a_damaged_or_swapped_file_is_a_miss(
    tmp_path: Path, patched: list[bool], damage: Callable[[Path, Path], None]
) -> None:
    plan, cache, other = tmp_path / "plangraph.yaml", tmp_path / "cache", tmp_path / "fresh"
    keep = tmp_path / "kept"
    _plan(plan)
    load_plan(plan, cache_dir=cache)
    shutil.copytree(cache, keep)  # the files of the first version
    plan.write_text(plan.read_text().replace("  title: t10\n", "  title: first edit\n", 1))
    load_plan(plan, cache_dir=cache)
    plan.write_text(plan.read_text().replace("  title: t20\n", "  title: second edit\n", 1))
    damage(cache, keep)
    patched.clear()
    edited = load_plan(plan, cache_dir=cache)  # no traceback
    _same(edited, _fresh(plan, other), cache, other)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30),
    node=st.integers(0, 129),
    quoted=st.booleans(),
)
def test_any_text_as_a_title_is_read_as_without_a_cache(
    title: str, node: int, quoted: bool
) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        plan, cache, other = folder / "plangraph.yaml", folder / "cache", folder / "fresh"
        _plan(plan, 130)
        assert plan.stat().st_size >= CACHE_MIN_BYTES  # the plan cache keeps it
        load_plan(plan, cache_dir=cache)
        written = json.dumps(title, ensure_ascii=False) if quoted else title
        line = f"- id: n{node}\n"
        text = plan.read_text()
        if node % 2 == 0:
            text = text.replace(f"{line}  title: t{node}\n", line, 1)
        plan.write_text(text.replace(line, f"{line}  title: {written}\n", 1))
        try:
            fresh: LoadedPlan | Exception = _fresh(plan, other)
        except PlanError as exc:  # not a title YAML reads as written
            fresh = exc
        try:
            edited: LoadedPlan | Exception = load_plan(plan, cache_dir=cache)
        except PlanError as exc:
            edited = exc
        if isinstance(fresh, Exception):
            assert isinstance(edited, PlanError) and str(edited) == str(fresh)
        else:
            assert isinstance(edited, LoadedPlan)
            _same(edited, fresh, cache, other)
