"""The facts of a plan put together from facts kept per item: a plan whose meaning changed by
one node computes the canonical form and criterion digests of that node alone.

The plan digest is the sha256 of the canonical JSON text of :func:`~.digests.canonical_plan`,
whose ``nodes`` and ``edges`` are lists of each item's canonical text in a fixed order; the
text of the whole is therefore the texts of the items joined in that order inside the text of
the plan's other members (:func:`~pytest_plangraph.canonical.join_members`), and its digest the
same bytes' sha256 as before: no stored evidence goes stale by this way of computing it.

Each node's canonical text and the digests of its criteria, and each edge's canonical text, are
kept in ``itemfacts.txt`` in the plan cache folder, one line each: a key and the JSON of the
entry, tab separated. The key is that of the item in :mod:`.itemcache` (the sha256 of the
machine salt, the code's fingerprint, the list and the item's parsed data: its validated form,
and so its canonical form, follows from it), for a node together with the canonical text of the
plan's ``defaults`` (a criterion's digest reads the effective test policy). A line that does not
parse, or a node's entry whose criterion ids are not the node's, is a miss: the item's facts are
computed again. A cache never decides.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..canonical import canonical_json, encoded_members, join_members, json_loads, text_digest
from .digests import criterion_digest
from .linestore import TextLines

if TYPE_CHECKING:
    from .model import Plan

FILE_NAME = "itemfacts.txt"
SPARE = 256
"""Entries beyond twice those of the plan just read that the file may hold before it is
written anew."""

_LISTS = frozenset({"nodes", "edges"})


def facts_by_item(
    plan: Plan, cache_dir: Path, items: dict[str, list[str]]
) -> tuple[str, dict[tuple[str, str], str]] | None:
    """The digest and criterion digests of *plan* (what :func:`~.digests.plan_digest` and
    :func:`~.digests.plan_criterion_digests` give), each item's part taken from the entries
    kept under *cache_dir* for its key in *items* (per list, the keys of
    :mod:`.itemcache` in the order of the plan's items) and the others computed and kept;
    None when *items* does not match the plan's lists."""
    nodes, edges = plan.nodes, plan.edges
    if len(items.get("nodes", ())) != len(nodes) or len(items.get("edges", ())) != len(edges):
        return None
    store = TextLines(cache_dir / FILE_NAME, SPARE)
    defaults = canonical_json(plan.defaults.to_json(by_alias=True)).encode("utf-8")
    node_keys = [_node_key(key, defaults) for key in items.get("nodes", ())]
    node_texts: list[str] = []
    digest_texts: list[str] = []
    for node, key in zip(nodes, node_keys, strict=True):
        text, digests = _node_facts(store, key, node, plan)
        node_texts.append(text)
        digest_texts.append(digests)
    pairs = _criteria(nodes, digest_texts)
    if pairs is None:  # a damaged entry: each node's read alone, the bad ones made again
        store.damaged = True  # the file is written anew
        pairs = []
        for node, key, kept in zip(nodes, node_keys, digest_texts, strict=True):
            one = _criteria([node], [kept])
            if one is None:
                store.entries.pop(key, None)
                node_texts[len(pairs)], made = _node_facts(store, key, node, plan)
                one = _criteria([node], [made])
            pairs.append(one[0] if one is not None else [])
    criteria: dict[tuple[str, str], str] = {}
    seen: set[str] = set()
    for node, node_pairs in zip(nodes, pairs, strict=True):
        if node.id in seen:
            continue
        seen.add(node.id)
        for criterion_id, found in node_pairs:
            criteria.setdefault((node.id, criterion_id), found)
    edge_keys = items.get("edges", [])
    edge_texts = [_edge_text(store, key, edge) for edge, key in zip(edges, edge_keys, strict=True)]
    store.save({*node_keys, *edge_keys})
    text = _plan_text(plan, node_texts, edge_texts)
    plan.__dict__[SHAPE] = _shape(plan, node_texts, digest_texts, edge_texts)
    plan.__dict__[CANONICAL] = text
    return text_digest(text), criteria


CANONICAL = "canonical_text"
"""Where :func:`facts_by_item` leaves the canonical text the plan's digest hashes (in the
plan's ``__dict__``), for its reader to keep (:func:`.retitle.keep_canonical`) and take off."""

SHAPE = "node_shape"
"""Where :func:`facts_by_item` leaves the plan's :func:`shape` (in the plan's ``__dict__``, as
the cached properties are; kept with its facts)."""


def shape(plan: Plan) -> tuple[str, dict[str, str]] | None:
    """The *structure* of *plan* and the *signature* of each node, when its facts were put
    together by item (else None): the structure is the sha256 of everything but what each node
    holds alone (the plan's other fields, its edges, its node ids, their parents, the order),
    a node's signature that of its canonical form and criterion digests. Two plans of the same
    structure differ only in the nodes whose signatures differ, and only in what they hold
    themselves: a kept derived state judges those again (:mod:`pytest_plangraph.derived`)."""
    found = plan.__dict__.get(SHAPE)
    if (
        isinstance(found, list)
        and len(found) == 2
        and isinstance(found[0], str)
        and isinstance(found[1], dict)
    ):
        return found[0], found[1]
    return None


def _shape(
    plan: Plan, node_texts: list[str], digest_texts: list[str], edge_texts: list[str]
) -> list[Any] | None:
    """:func:`shape`'s value as kept (JSON); None when node ids repeat."""
    nodes = plan.nodes
    signatures = {
        node.id: text_digest(f"{text}\n{digests}")
        for node, text, digests in zip(nodes, node_texts, digest_texts, strict=True)
    }
    if len(signatures) != len(nodes):
        return None
    rest = plan.to_json(by_alias=True, exclude_defaults=True, exclude=_LISTS)
    whole = [
        canonical_json(rest),
        edge_texts,
        [[node.id, node.parent] for node in nodes],
        list(plan.topological_order),
    ]
    return [text_digest(canonical_json(whole)), signatures]


def _plan_text(plan: Plan, node_texts: list[str], edge_texts: list[str]) -> str:
    """The canonical JSON text of :func:`~.digests.canonical_plan` of *plan*, from the
    canonical texts of its nodes and edges (in the plan's order)."""
    rest = plan.to_json(by_alias=True, exclude_defaults=True, exclude=_LISTS)
    rest["plangraph"] = plan.plangraph
    members = encoded_members(rest)
    nodes = sorted(range(len(node_texts)), key=lambda n: plan.nodes[n].id)  # stable, as before
    members["nodes"] = "[" + ",".join(node_texts[n] for n in nodes) + "]"
    edges = plan.edges
    order = sorted(
        range(len(edge_texts)),
        key=lambda e: (edges[e].from_, edges[e].to, edges[e].type, edge_texts[e]),
    )
    members["edges"] = "[" + ",".join(edge_texts[e] for e in order) + "]"
    return join_members(members)


def _node_key(item_key: str, defaults: bytes) -> str:
    digest = hashlib.sha256(item_key.encode() + b"\0")
    digest.update(defaults)
    return digest.hexdigest()


def _node_facts(store: TextLines, key: str, node: Any, plan: Plan) -> tuple[str, str]:
    """A node's canonical text and the JSON text of ``[criterion id, digest]`` of each of its
    criteria (read by :func:`_criteria`)."""
    kept = store.entries.get(key)
    if kept is not None:
        text, tab, digests = kept.rpartition("\t")
        if tab and text[:1] == "{" and text[-1:] == "}":
            return text, digests
    text = canonical_json(node.to_json(by_alias=True, exclude_defaults=True))
    made = json.dumps(
        [
            [criterion.id, criterion_digest(node.id, criterion, plan.defaults)]
            for criterion in node.acceptance
        ],
        ensure_ascii=False,
    )
    store.add(key, f"{text}\t{made}")
    return text, made


def _criteria(nodes: Sequence[Any], texts: list[str]) -> list[list[list[str]]] | None:
    """The ``[criterion id, digest]`` pairs of each node from their JSON *texts*, read in one
    go; None when one of them is not the node's (a damaged entry)."""
    try:
        found: list[list[list[str]]] = json_loads(f"[{','.join(texts)}]")
    except ValueError:
        return None
    if len(found) != len(nodes):
        return None
    for node, digests in zip(nodes, found, strict=True):
        if type(digests) is not list or len(digests) != len(node.acceptance):
            return None
        for pair, criterion in zip(digests, node.acceptance, strict=True):
            if not (
                type(pair) is list
                and len(pair) == 2
                and pair[0] == criterion.id
                and type(pair[1]) is str
            ):
                return None
    return found


def _edge_text(store: TextLines, key: str, edge: Any) -> str:
    """An edge's canonical text (the entry itself: canonical JSON holds no tab nor line
    break)."""
    kept = store.entries.get(key)
    if kept is not None and kept[:1] == "{" and kept[-1:] == "}" and "\t" not in kept:
        return kept
    text = canonical_json(edge.to_json(by_alias=True, exclude_defaults=True))
    store.add(key, text)
    return text
