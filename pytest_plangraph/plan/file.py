"""Reading plan files (YAML or JSON) into models, with file positions for every message.

YAML is composed with the safe loader and walked by hand, so that duplicate keys are caught and
the position of every field is known; nothing is ever constructed from tags. Only a regular file
is read (a FIFO or a device is refused, never waited on). Bytes that are new are validated by
the pydantic models of :mod:`.boundary`, whose errors are turned into one
:class:`~pytest_plangraph.errors.Problem` per defect, located by the field path
(:mod:`~pytest_plangraph.plan.messages`); with a cache folder, the validated form is kept, and
the same bytes are read again into the runtime plan without YAML or pydantic.
"""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..canonical import json_loads
from ..errors import PlanError, Problem
from ..regularfile import NotRegularFileError, TooLargeError, read_regular
from ..values import dataclass, field, replace
from .cache import cache_key as cache_key
from .cache import content_key as content_key
from .cache import (
    keep_parsed,
    keep_validated,
    read_parsed,
    read_validated,
    reuse_validated,
    with_facts,
)
from .model import Plan
from .positions import LazyPositions

if TYPE_CHECKING:
    from .blockcache import BlockItemKeys
    from .messages import FieldPath as FieldPath
    from .messages import format_path as format_path


def __getattr__(name: str) -> Any:
    """The field-path names of :mod:`.messages` named here too, imported when first asked for
    (a plan read cleanly has no problem to place)."""
    if name in ("FieldPath", "format_path"):
        from . import messages

        return getattr(messages, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MAX_PLAN_BYTES = 32 * 1024 * 1024
"""Plans larger than this are refused before parsing (a plan is text a person reads; a plan of
50,000 nodes, each with an output, two criteria and three edges, is about 16 MB)."""
CACHE_MIN_BYTES = 16 * 1024
"""YAML plans smaller than this parse fast enough to skip the parse cache (a 16 KiB plan takes
about 30 ms to parse, more than every command's cost of reading the cache)."""
MAX_YAML_NODES = 2_000_000
"""Guards against alias bombs: a plan expanding to more values than this is refused."""


@dataclass(frozen=True)
class LoadedPlan:
    """A plan with the file it came from and the position of each field path."""

    plan: Plan
    file: str
    positions: dict[FieldPath, tuple[int, int]] = field(default_factory=dict, compare=False)
    cache_key: str | None = field(default=None, compare=False)
    """The key of the plan file's entries when the plan cache keeps them (a large plan read
    with a cache folder: :func:`cache_key`), else None."""
    content_key: str | None = field(default=None, compare=False)
    """The key of what is kept about the plan's meaning (:func:`content_key`), which an edit of
    its comments or layout keeps; None when the plan cache keeps nothing for it."""
    source: str | None = field(default=None, compare=False)
    """The sha256 of the bytes the plan was read from (None for a plan not read from bytes):
    what a derived state kept for this plan is keyed by (:mod:`pytest_plangraph.derived`)."""
    node_keys: tuple[str, ...] | None = field(default=None, compare=False)
    """The key of each node's content (:mod:`.itemcache`), in the plan's order, when the plan
    was validated item by item: what lint keeps a node's findings under
    (:mod:`pytest_plangraph.lint.nodecache`); else None."""

    def location(self, path: FieldPath) -> str:
        """``file:line:column`` of the deepest known prefix of *path*."""
        from .messages import position  # a problem's place: a plan read cleanly needs none

        found = position(self.positions, path)
        return f"{self.file}:{found[0]}:{found[1]}" if found else self.file

    def node_path(self, node_id: str) -> FieldPath:
        """Field path of the first node with this id."""
        for index, node in enumerate(self.plan.nodes):
            if node.id == node_id:
                return ("nodes", index)
        return ()


def load_plan(
    path: Path, display: str | None = None, *, cache_dir: Path | None = None
) -> LoadedPlan:
    """Read and validate a plan file; raise :class:`PlanError` listing every problem.

    With *cache_dir*, what can be kept about a large plan is kept there (see
    :mod:`~pytest_plangraph.plan.cache`): its parsed data, its digest and its criterion digests.
    Positions are then found only when a message needs one.
    """
    name = display or str(path)
    return parse_plan(_raw(path, name), name, suffix=path.suffix, cache_dir=cache_dir)


def parse_plan(
    raw: bytes, name: str, *, suffix: str = ".yaml", cache_dir: Path | None = None
) -> LoadedPlan:
    """:func:`load_plan` for the bytes of a plan file that are not on disk (say, the plan at
    an older revision); *suffix* (``.json`` or not) says how to read them, *name* is the name
    messages give."""
    if len(raw) > MAX_PLAN_BYTES:
        raise PlanError([_too_large(name, len(raw))])
    source = hashlib.sha256(raw).hexdigest()
    known = None if cache_dir is None else cache_key(raw, suffix)
    if cache_dir is not None and known is not None:
        loaded = _known(raw, name, cache_dir, known)
        if loaded is not None:
            return replace(loaded, source=source)
    key = known if len(raw) >= CACHE_MIN_BYTES else None
    if cache_dir is not None and key is not None and suffix.lower() != ".json":
        from .retitle import retitled

        patched = retitled(raw, name, key, cache_dir, MAX_YAML_NODES)  # a title changed
        if patched is not None:
            lazy = LazyPositions(raw, _positions_reader(name))
            return LoadedPlan(
                patched[0], name, lazy, key, patched[1], source=source, node_keys=patched[2]
            )
    data, positions, keyed = _read_keyed(suffix, raw, name, cache_dir, key)
    meaning = content_key(data) if cache_dir is not None and key is not None else None
    loaded = None
    items = None  # the key of each node and edge, when validated by item
    if cache_dir is not None and meaning is not None and known is not None:
        # the same data read from other bytes (comments, layout) was validated: its form is kept
        plan = reuse_validated(cache_dir, meaning, known)
        loaded = None if plan is None else LoadedPlan(plan, name, positions)
    if loaded is None and cache_dir is not None and key is not None:
        # the meaning changed: only the nodes and edges not validated before are validated
        from .itemcache import validated_by_item

        found = validated_by_item(data, cache_dir, keyed)
        if found is not None:
            items = found[2]
            nodes = tuple(items.get("nodes", ()))
            loaded = LoadedPlan(found[0], name, positions, node_keys=nodes)
            keep_validated(cache_dir, key, found[0], meaning, found[1], found[3])
    if loaded is None:
        loaded, data = _validated(data, raw, suffix, name, positions, cache_dir, key)
        meaning = content_key(data) if cache_dir is not None and key is not None else None
        if cache_dir is not None and known is not None:
            keep_validated(cache_dir, known, loaded.plan, meaning)
    if cache_dir is not None and key is not None:
        content = meaning or key
        by_item = None
        if items is not None:
            from .factcache import facts_by_item

            by_item = partial(facts_by_item, loaded.plan, cache_dir, items)
        with_facts(loaded.plan, cache_dir, content, key, by_item)
        _keep_for_edits(raw, cache_dir, key, content, loaded.plan, items, keyed)
        loaded = replace(loaded, cache_key=key, content_key=content)
    return replace(loaded, source=source)


def _keep_for_edits(
    raw: bytes,
    cache_dir: Path,
    key: str,
    content: str,
    plan: Plan,
    items: dict[str, list[str]] | None,
    keyed: BlockItemKeys | None,
) -> None:
    """Keep what a later edit of one node's title is patched from (:mod:`.retitle`): the
    plan's canonical text and node keys when its facts were just put together by item, and
    its bytes when they were read by blocks."""
    from .factcache import CANONICAL
    from .retitle import keep_canonical, keep_last

    canonical = plan.__dict__.pop(CANONICAL, None)
    if isinstance(canonical, str) and items is not None and "nodes" in items:
        keep_canonical(cache_dir, content, items["nodes"], canonical)
    if keyed is not None:
        keep_last(cache_dir, key, raw, keyed.blocks, keyed.entries)


def _validated(
    data: Any,
    raw: bytes,
    suffix: str,
    name: str,
    positions: dict[FieldPath, tuple[int, int]],
    cache_dir: Path | None,
    key: str | None,
) -> tuple[LoadedPlan, Any]:
    """The plan of parsed *data* (the JSON text the parse cache keeps, or the data itself)
    validated by the boundary's models, with the data it was validated from (read anew when
    the kept text is damaged)."""
    if isinstance(data, bytes) and cache_dir is not None and key is not None:
        kept = _from_kept(data, name, positions)
        if kept is not None:
            return kept, data
        # a damaged entry: the file is read again and kept anew
        data, positions = _read(suffix, raw, name, None, None)
        keep_parsed(cache_dir, key, data)
    return validate_plan(data, name, positions), data


def _known(raw: bytes, name: str, cache_dir: Path, key: str) -> LoadedPlan | None:
    """The plan whose validated form the cache keeps under *key*, built into the runtime classes
    without parsing or validating it again (None when there is none: the bytes are new)."""
    plan = read_validated(cache_dir, key)
    if plan is None:
        return None
    positions = LazyPositions(raw, _positions_reader(name))
    if len(raw) < CACHE_MIN_BYTES:
        return LoadedPlan(plan, name, positions)
    try:  # the facts are kept under the plan's content: the key of its parsed data's text
        content = content_key(read_parsed(cache_dir, key)) or key
    except OSError:
        content = key
    with_facts(plan, cache_dir, content, key)
    return LoadedPlan(plan, name, positions, cache_key=key, content_key=content)


def plan_data(raw: bytes, name: str, *, suffix: str = ".yaml") -> Any:
    """The data of a plan file's bytes as it is written, before any check against the plan
    models (what a JSON Patch applies to); :class:`PlanError` when it cannot be read."""
    return _read(suffix, raw, name, None, None)[0]


def _from_kept(
    kept: bytes, name: str, positions: dict[FieldPath, tuple[int, int]]
) -> LoadedPlan | None:
    """The plan from the JSON the cache kept of its parsed data, validated (a plan it refuses is
    explained as on the first read); None when the entry is not JSON: damaged."""
    try:
        data = json_loads(kept)
    except ValueError:
        return None
    return validate_plan(data, name, positions)


def validate_plan(
    data: Any, name: str, positions: dict[FieldPath, tuple[int, int]] | None = None
) -> LoadedPlan:
    """Turn already-parsed data into a :class:`LoadedPlan` or a :class:`PlanError`."""
    positions = {} if positions is None else positions
    if not isinstance(data, dict):
        kind = "nothing" if data is None else type(data).__name__
        raise PlanError(
            [Problem(name, 1, 1, "", f"expected a mapping with 'plangraph: 1', got {kind}")]
        )
    from pydantic import ValidationError  # only for bytes that are new: the boundary

    from .messages import problem
    from .model import runtime_plan

    try:
        plan = runtime_plan(data)
    except ValidationError as exc:
        raise PlanError([problem(name, positions, data, err) for err in exc.errors()]) from None
    return LoadedPlan(plan, name, positions)


def _raw(path: Path, name: str) -> bytes:
    """The bytes of the plan file: only a regular file is read, and no more than the limit (a
    FIFO or a device would block or never end), opened without waiting for a writer."""
    try:
        return read_regular(path, MAX_PLAN_BYTES)
    except FileNotFoundError:
        raise PlanError(
            [Problem(name, 0, 0, "", "plan file not found; pass the plan's path or create it")]
        ) from None
    except NotRegularFileError as exc:
        raise PlanError([_unreadable(name, _not_a_plan_file(exc.mode), exc)]) from None
    except TooLargeError as exc:
        raise PlanError([_too_large(name, exc.size)]) from None
    except OSError as exc:  # a directory is refused on opening on some systems
        what = _not_a_plan_file(path.stat().st_mode) if path.is_dir() else None
        raise PlanError([_unreadable(name, what, exc)]) from None


def _not_a_plan_file(mode: int) -> str | None:
    """Why a file of this mode cannot be a plan file, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a plan file; pass the path of the plan file in it"
    kinds = (
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((text for test, text in kinds if test(mode)), "a special file")
    return f"is {kind}, not a regular file; pass the path of a plan file"


def _unreadable(name: str, what: str | None, exc: OSError) -> Problem:
    return Problem(name, 0, 0, "", what or f"cannot read: {exc.strerror or exc}")


def _too_large(name: str, size: int) -> Problem:
    limit = MAX_PLAN_BYTES // (1024 * 1024)
    message = f"plan file is {size / 1e6:.1f} MB; the limit is {limit} MB — split the plan"
    return Problem(name, 0, 0, "", f"{message} or check the path")


def _read(
    suffix: str, raw: bytes, name: str, cache_dir: Path | None, key: str | None
) -> tuple[Any, dict[FieldPath, tuple[int, int]]]:
    """The data of a plan file's bytes and its positions (see :func:`_read_keyed`)."""
    return _read_keyed(suffix, raw, name, cache_dir, key)[:2]


def _read_keyed(
    suffix: str, raw: bytes, name: str, cache_dir: Path | None, key: str | None
) -> tuple[Any, dict[FieldPath, tuple[int, int]], BlockItemKeys | None]:
    """The data of a plan file's bytes, its positions and, when it was read block by block,
    what gives the key of each item of its lists by block (:mod:`.blockitems`; else None)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = _byte_position(raw, exc.start)
        message = f"not UTF-8 text (byte {exc.start}); save it as UTF-8"
        raise PlanError([Problem(name, line, column, "", message)]) from None
    if not text.strip():
        raise PlanError(
            [Problem(name, 1, 1, "", "file is empty; a plan starts with 'plangraph: 1'")]
        )
    if suffix.lower() == ".json":
        from .json_reader import read_json

        return (*read_json(text, name, _read_yaml), None)
    if cache_dir is None or key is None:
        return (*_read_yaml(text, name), None)
    try:
        return read_parsed(cache_dir, key), LazyPositions(text, _positions_reader(name)), None
    except OSError:
        data, positions, keyed = _read_yaml_blocks(text, name, cache_dir)
    keep_parsed(cache_dir, key, data)
    return data, positions, keyed


def _byte_position(raw: bytes, offset: int) -> tuple[int, int]:
    """Line and column (in characters) of the byte at *offset* of a plan file."""
    start = raw.rfind(b"\n", 0, offset) + 1
    column = len(raw[start:offset].decode("utf-8", "replace")) + 1
    return raw.count(b"\n", 0, offset) + 1, column


def _read_yaml(text: str, name: str) -> tuple[Any, dict[FieldPath, tuple[int, int]]]:
    from .yaml_reader import read_yaml  # PyYAML only when YAML is read: not from the plan cache

    return read_yaml(text, name, MAX_YAML_NODES)


def _positions_reader(name: str) -> Callable[[str], dict[FieldPath, tuple[int, int]]]:
    """Reads a text as YAML for its positions alone (:class:`~.positions.LazyPositions`)."""
    return lambda text: _read_yaml(text, name)[1]


def _read_yaml_blocks(
    text: str, name: str, cache_dir: Path
) -> tuple[Any, dict[FieldPath, tuple[int, int]], BlockItemKeys | None]:
    """:func:`_read_yaml` reading only the blocks of the text the plan cache does not hold
    (:mod:`~pytest_plangraph.plan.blockcache`), with what gives the keys of its items by
    block; the whole text when it cannot be split."""
    from .blockcache import read_blocks_keyed

    found = read_blocks_keyed(text, name, MAX_YAML_NODES, cache_dir)
    return (*_read_yaml(text, name), None) if found is None else found
