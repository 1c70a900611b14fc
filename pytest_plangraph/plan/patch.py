"""Patch-only replanning (seed 001), pure: the patch format and its application to a plan text.

A patch adds, replaces or removes named nodes, criteria and edges, and nothing else::

    plangraph_patch: 1
    note: narrow the login step to password logins
    nodes:
      add: [{id: step-rate-limit, parent: objective-auth, acceptance: [...]}]
      replace: [{id: step-token-endpoint, ...}]      # the whole node, found by id
      remove: [step-old]
    criteria:
      add: [{node: step-token-endpoint, criterion: {id: ac-lockout, verifier: {type: test}}}]
      replace: [{node: step-token-endpoint, criterion: {id: ac-http-200, ...}}]
      remove: [{node: step-token-endpoint, id: ac-invalid-401}]
    edges:
      add: [{from: step-rate-limit, to: step-token-endpoint, type: requires}]
      remove: [{from: step-user-schema, to: step-token-endpoint, type: consumes}]

A patch file whose content is a list instead is a JSON Patch (RFC 6902) over the plan's JSON
form (:mod:`.jsonpatch`); :func:`read_patch` reads either, and :func:`edit_plan_text` applies
either to the text of the plan.

Every entry is checked against the plan models before anything is applied. :func:`edit_plan_text`
applies a patch to the text of a plan file: a YAML plan goes through ``ruamel.yaml``'s round trip,
so comments, key order, quoting and the flow or block style of what the patch does not touch stay
as they were; a JSON plan is written back with two-space indentation. Whether the result is a good
plan is for lint to say (the caller lints it before anything is written).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, MutableMapping, MutableSequence
from typing import Any, Literal

from pydantic import Field, ValidationError

from ..canonical import json_loads
from ..errors import PlanError, Problem, UsageError
from . import model as runtime
from .base import FrozenModel, empty_default
from .boundary import Criterion, Edge, Id, Node
from .jsonpatch import JsonPatch, apply_ops, read_json_patch
from .messages import problem
from .model import EdgeType
from .splice import document_parts

__all__ = [
    "AnyPatch",
    "PlanPatch",
    "edit_plan_text",
    "json_patched",
    "patched_plan",
    "read_patch",
    "touched_nodes",
]

MAX_PATCH_BYTES = 4 * 1024 * 1024
"""A patch is a small change; anything larger is refused before it is parsed."""


class _Part(FrozenModel):
    """A part of a patch file (strict like the plan file: nothing is coerced)."""

    model_config = FrozenModel.model_config | {"strict": True}


class NodeChanges(_Part):
    """Whole nodes to add, replace (found by id) or remove (by id)."""

    add: list[Node] = empty_default(list)
    replace: list[Node] = empty_default(list)
    remove: list[Id] = empty_default(list)


class CriterionChange(_Part):
    """A criterion to add to, or replace in, the node *node*."""

    node: Id
    criterion: Criterion


class CriterionRemoval(_Part):
    """The criterion *id* of the node *node*, to remove."""

    node: Id
    id: Id


class CriterionChanges(_Part):
    """Criteria to add, replace (found by node and id) or remove."""

    add: list[CriterionChange] = empty_default(list)
    replace: list[CriterionChange] = empty_default(list)
    remove: list[CriterionRemoval] = empty_default(list)


class EdgeRef(_Part):
    """An edge named by its ends and type."""

    from_: Id = Field(alias="from")
    to: Id
    type: EdgeType


class EdgeChanges(_Part):
    """Edges to add, or remove (every edge with these ends and type)."""

    add: list[Edge] = empty_default(list)
    remove: list[EdgeRef] = empty_default(list)


class PlanPatch(_Part):
    """One patch: the format version, an optional note, and the changes."""

    plangraph_patch: Literal[1]
    note: str = ""
    nodes: NodeChanges = Field(default_factory=NodeChanges)
    criteria: CriterionChanges = Field(default_factory=CriterionChanges)
    edges: EdgeChanges = Field(default_factory=EdgeChanges)

    def is_empty(self) -> bool:
        """True when the patch changes nothing."""
        parts = (self.nodes, self.criteria, self.edges)
        return not any(getattr(part, name) for part in parts for name in type(part).model_fields)


AnyPatch = PlanPatch | JsonPatch
"""A patch in either format."""


def read_patch(raw: bytes, name: str) -> AnyPatch:
    """The patch in *raw* (YAML or JSON): a list is a JSON Patch, a mapping a patch of the
    small format; :class:`PlanError` (or :class:`UsageError` for a JSON Patch operation) with
    one line per problem."""
    from .yaml_reader import read_yaml

    if len(raw) > MAX_PATCH_BYTES:
        # *raw* is read up to one byte past the limit: its length is not the file's size
        message = f"the patch is larger than {MAX_PATCH_BYTES:,} bytes (4 MiB); split it"
        raise PlanError([Problem(name, 0, 0, "", message)])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PlanError([Problem(name, 0, 0, "", "not UTF-8 text; save it as UTF-8")]) from None
    data, positions = read_yaml(text, name, 200_000)
    if isinstance(data, list):
        return read_json_patch(data, name)
    if not isinstance(data, dict):
        kind = "nothing" if data is None else type(data).__name__
        message = (
            f"expected a mapping with 'plangraph_patch: 1' (or a JSON Patch: a list of "
            f"operations), got {kind}"
        )
        raise PlanError([Problem(name, 1, 1, "", message)])
    try:
        return PlanPatch.model_validate(data)
    except ValidationError as exc:
        raise PlanError([problem(name, positions, data, err) for err in exc.errors()]) from None


def touched_nodes(patch: PlanPatch) -> list[str]:
    """The nodes a patch re-plans, in the order it names them: the nodes it adds, replaces or
    removes, the nodes whose criteria it changes, and the dependent end (``to``) of each edge
    it adds or removes."""
    found = [
        *(n.id for n in patch.nodes.add),
        *(n.id for n in patch.nodes.replace),
        *patch.nodes.remove,
        *(c.node for c in patch.criteria.add),
        *(c.node for c in patch.criteria.replace),
        *(c.node for c in patch.criteria.remove),
        *(e.to for e in patch.edges.add),
        *(e.to for e in patch.edges.remove),
    ]
    return list(dict.fromkeys(found))


def edit_plan_text(
    text: str,
    patch: AnyPatch,
    name: str,
    *,
    json_file: bool,
    plan: runtime.Plan | None = None,
) -> str:
    """The text of the plan file *name* with *patch* applied; :class:`UsageError` naming each
    entry that does not fit the plan (a node added twice, a criterion that is not there, a
    JSON Pointer that names nothing …). The result keeps the byte order mark *text* begins
    with, and CRLF line ends when every line of *text* ends so. Given the *plan* the text reads
    as (the patch checked against it), a YAML plan's nodes the patch does not name, and its
    edges when the patch removes none, are kept as written and only the rest goes through the
    round trip (:mod:`.splice`): the caller compares what the result reads as with what it
    must be and, on a difference, edits again without *plan*."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    edited = _edited(text.removeprefix(bom), patch, name, json_file=json_file, plan=plan)
    lines = text.count("\n")
    if lines and text.count("\r\n") == lines:  # read as LF; a comment keeps its CR
        edited = edited.replace("\r\n", "\n").replace("\n", "\r\n")
    return bom + edited


def _edited(
    text: str, patch: AnyPatch, name: str, *, json_file: bool, plan: runtime.Plan | None
) -> str:
    if json_file:
        data = json_loads(text)
        _apply_any(data, patch, name, plain=True)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    head, text, tail = document_parts(text)
    if plan is not None and isinstance(patch, PlanPatch):
        from .splice import put_back, touched_text

        ids = [node.id for node in plan.nodes]
        edges = None if patch.edges.remove else len(plan.edges)
        cut = touched_text(text, ids, _named_nodes(patch), edges)
        try:
            edited = None if cut is None else put_back(_round_trip(cut.text, patch, name), cut)
        except UsageError:  # an alias whose anchor was cut: the whole text below
            edited = None
        if edited is not None:
            return head + edited + tail
    return head + _round_trip(text, patch, name) + tail


def _named_nodes(patch: PlanPatch) -> set[str]:
    """The nodes of the plan whose text *patch* changes (replaced, removed, or with criteria
    changed); an added node is not in the text."""
    changes = patch.criteria
    return {
        *(n.id for n in patch.nodes.replace),
        *patch.nodes.remove,
        *(c.node for c in changes.add),
        *(c.node for c in changes.replace),
        *(c.node for c in changes.remove),
    }


def _round_trip(text: str, patch: AnyPatch, name: str) -> str:
    """The YAML document *text* with *patch* applied through ``ruamel.yaml``'s round trip."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.util import load_yaml_guess_indent

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line the patch did not touch
    try:  # read once (the round trip reads a large plan at ~4 ms a node): the indents it
        # guesses from the text are set before writing, all they change
        try:
            data, sequence, offset = load_yaml_guess_indent(text, yaml=yaml)
        except IndexError:  # its guess reads past a line of a dash alone: the default indents
            data, sequence, offset = yaml.load(text), None, None
    except YAMLError as exc:  # the plan was read before: only a race with an edit gets here
        raise UsageError(f"{name} could not be read for the patch: {exc}") from None
    sequence = sequence or 2
    mapping = sequence - (offset or 0) if sequence - (offset or 0) >= 2 else 2
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset or 0)
    _apply_any(data, patch, name, plain=False)
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def patched_plan(plan: runtime.Plan, patch: PlanPatch, name: str) -> runtime.Plan:
    """*plan* with *patch* applied to its model, not to its text: what the edited file must
    say, so that an edit of the text that changed anything else is caught."""
    data = plan.to_json(by_alias=True, exclude_unset=True)
    _apply(data, patch, name, plain=True)
    return runtime.runtime_plan(data)


def json_patched(
    raw: bytes, patch: JsonPatch, name: str, *, suffix: str
) -> tuple[runtime.Plan, list[str]]:
    """The plan file's bytes *raw* read as data with *patch* applied, as a :class:`Plan`,
    and the nodes the patch touches: what the edited file must say, and what the patch
    re-plans. :class:`UsageError` for an operation that does not fit, :class:`PlanError` when
    the result is not a plan."""
    from .file import plan_data, validate_plan

    # a JSON round trip unshares what YAML aliases share: an operation changes one place
    data = json_loads(json.dumps(plan_data(raw, name, suffix=suffix), default=str))
    touched = apply_ops(data, patch, name)
    return validate_plan(data, f"{name} (as patched)", {}).plan, touched


def _apply_any(data: Any, patch: AnyPatch, name: str, *, plain: bool) -> None:
    if isinstance(patch, JsonPatch):
        apply_ops(data, patch, name, wrap=lambda value: _styled(value, plain))
    else:
        _apply(data, patch, name, plain=plain)


def _apply(data: Any, patch: PlanPatch, name: str, *, plain: bool) -> None:
    problems = list(_problems(data, patch, plain))
    if problems:
        lines = "\n".join(f"{name}: {p}" for p in problems)
        raise UsageError(f"the patch does not fit the plan, nothing was changed:\n{lines}")


def _problems(data: Any, patch: PlanPatch, plain: bool) -> Iterator[str]:
    """Apply *patch* to the plan *data* in place, yielding what does not fit."""
    nodes = _list(data, "nodes")
    by_id = {n.get("id"): i for i, n in enumerate(nodes) if isinstance(n, MutableMapping)}
    removed = set(patch.nodes.remove)
    for node_id in patch.nodes.remove:
        if node_id not in by_id:
            yield f"nodes.remove: no node {node_id!r} to remove"
    for node in patch.nodes.replace:
        if node.id not in by_id:
            yield f"nodes.replace: no node {node.id!r}; add it with nodes.add"
        else:
            nodes[by_id[node.id]] = _styled(_dump(node), plain)
    for index in sorted((by_id[n] for n in removed if n in by_id), reverse=True):
        del nodes[index]
    _flow_if_empty(data, "nodes")
    for node in patch.nodes.add:
        if node.id in by_id and node.id not in removed:
            yield f"nodes.add: node {node.id!r} is already in the plan; use nodes.replace"
        else:
            nodes.append(_styled(_dump(node), plain))
    yield from _criteria(nodes, patch, plain)
    yield from _edges(data, patch, plain)


def _criteria(nodes: MutableSequence[Any], patch: PlanPatch, plain: bool) -> Iterator[str]:
    by_id = {n.get("id"): n for n in nodes if isinstance(n, MutableMapping)}
    changes = patch.criteria
    for what, entries in (("add", changes.add), ("replace", changes.replace)):
        for entry in entries:
            node = by_id.get(entry.node)
            if node is None:
                yield f"criteria.{what}: no node {entry.node!r}"
                continue
            acceptance = _list(node, "acceptance")
            index = _index(acceptance, entry.criterion.id)
            body = _styled(_dump(entry.criterion), plain)
            if what == "add" and index is not None:
                yield (
                    f"criteria.add: {entry.node}/{entry.criterion.id} is already in the plan; "
                    "use criteria.replace"
                )
            elif what == "add":
                acceptance.append(body)
            elif index is None:
                yield f"criteria.replace: no criterion {entry.node}/{entry.criterion.id}"
            else:
                acceptance[index] = body
    for removal in changes.remove:
        node = by_id.get(removal.node)
        acceptance = _list(node, "acceptance") if node is not None else []
        index = _index(acceptance, removal.id)
        if index is None:
            yield f"criteria.remove: no criterion {removal.node}/{removal.id} to remove"
        else:
            del acceptance[index]
            _flow_if_empty(node, "acceptance")


def _edges(data: Any, patch: PlanPatch, plain: bool) -> Iterator[str]:
    edges = _list(data, "edges") if patch.edges.add else data.get("edges") or []
    for ref in patch.edges.remove:
        matches = [
            i
            for i, e in enumerate(edges)
            if isinstance(e, MutableMapping)
            and (e.get("from"), e.get("to"), e.get("type")) == (ref.from_, ref.to, ref.type)
        ]
        if not matches:
            yield f"edges.remove: no {ref.type} edge from {ref.from_} to {ref.to}"
        for i in reversed(matches):
            del edges[i]
        _flow_if_empty(data, "edges")
    for edge in patch.edges.add:
        edges.append(_styled(_dump(edge), plain, flow=True))


def _list(owner: MutableMapping[str, Any], key: str) -> MutableSequence[Any]:
    """``owner[key]``, made an empty list when it is missing (or null)."""
    found = owner.get(key)
    if not isinstance(found, MutableSequence):
        owner[key] = found = []
    return found


def _flow_if_empty(owner: Any, key: str) -> None:
    """``owner[key]``, when a removal emptied it, written ``[]`` on the key's line, the comments
    after the key after it: the round trip writes it below them otherwise, which is no YAML."""
    items = owner.get(key)
    if items or not hasattr(items, "fa"):
        return
    items.fa.set_flow_style()
    after, above = (items.ca.comment or [None, None])[:2]
    text = "".join(token.value for token in [after, *(above or [])] if token is not None)
    items.ca.comment = None
    owner.ca.items.pop(key, None)
    if text.strip():
        owner.yaml_add_eol_comment(text.strip(), key, column=after.column if after else None)


def _index(items: MutableSequence[Any], item_id: str) -> int | None:
    return next(
        (
            i
            for i, c in enumerate(items)
            if isinstance(c, MutableMapping) and c.get("id") == item_id
        ),
        None,
    )


def _dump(model: FrozenModel) -> dict[str, Any]:
    """A model as the patch wrote it: only the fields it set, with their plan-file names."""
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return data


def _styled(value: Any, plain: bool, *, flow: bool = False) -> Any:
    """*value* as YAML nodes laid out as plans usually are: a mapping or list holding only
    scalars on one line (``verifier: {type: test}``, ``outputs: [a.py]``), others as blocks."""
    if plain:
        return value
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        styled: Any = CommentedMap((k, _styled(v, plain)) for k, v in value.items())
    elif isinstance(value, list):
        styled = CommentedSeq(_styled(v, plain) for v in value)
    else:
        return value
    values = value.values() if isinstance(value, dict) else value
    if flow or all(not isinstance(v, dict | list) for v in values):
        styled.fa.set_flow_style()
    return styled
