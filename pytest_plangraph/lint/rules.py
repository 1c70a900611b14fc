"""The lint rules themselves (DESIGN §3.4), one generator of findings per rule.

:data:`RULES` (pure: the plan alone) and :data:`FILE_RULES` (asking the repository through
:attr:`LintContext.files`) list them in the order they run; :func:`.findings.lint_plan`
sorts what they find. Severities come from :data:`pytest_plangraph.lint.findings.LINT_CODES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator

from ..errors import quoted
from ..plan.graph import Graph
from ..plan.messages import FieldPath
from ..plan.model import (
    PROPAGATING_EDGES,
    ArtifactVerifier,
    CommandVerifier,
    Criterion,
    Edge,
    SchemaVerifier,
    TestVerifier,
)
from ..plan.paths import glob_match, normalize, path_problem
from .effects import conflicts_required, irreversible_not_last, side_effects
from .findings import Finding, LintContext, did_you_mean, split_location
from .hierarchy import hierarchy_cycles, unreachable
from .missing import missing_files
from .testpolicy import excludes_every_test, min_passed

# --- structure --------------------------------------------------------------------------------


def _duplicate_ids(ctx: LintContext) -> Iterator[Finding]:
    first: dict[str, int] = {}
    for i, node in enumerate(ctx.loaded.plan.nodes):
        if node.id in first:
            line = split_location(ctx.loaded.location(("nodes", first[node.id], "id")))[1]
            hint = (
                f"node id {quoted(node.id)} is already used by the node at line {line}; rename one"
            )
            yield ctx.finding("DUPLICATE_ID", node.id, hint, ("nodes", i, "id"))
        first.setdefault(node.id, i)
        seen: set[str] = set()
        for k, criterion in enumerate(node.acceptance):
            if criterion.id in seen:
                hint = (
                    f"criterion id {quoted(criterion.id)} appears twice in node {node.id}; "
                    "rename one"
                )
                yield ctx.finding(
                    "DUPLICATE_ID", node.id, hint, ("nodes", i, "acceptance", k, "id")
                )
            seen.add(criterion.id)


def _missing_deps(ctx: LintContext) -> Iterator[Finding]:
    known = ctx.graph.nodes
    for i, edge in enumerate(ctx.loaded.plan.edges):
        for end, name, other in (("from", edge.from_, edge.to), ("to", edge.to, edge.from_)):
            if name not in known:
                hint = (
                    f"edge {edge.from_} -> {edge.to} names unknown node {quoted(name)}"
                    f"{did_you_mean(name, known)}; add that node or fix the id"
                )
                about = other if other in known else None
                yield ctx.finding("MISSING_DEP", about, hint, ("edges", i, end))
    for i, node in enumerate(ctx.loaded.plan.nodes):
        if node.parent is not None and node.parent not in known:
            hint = (
                f"parent {quoted(node.parent)} of {node.id} is not a node"
                f"{did_you_mean(node.parent, known)}; add it or fix the id"
            )
            yield ctx.finding("MISSING_DEP", node.id, hint, ("nodes", i, "parent"))


def _cycles(ctx: LintContext) -> Iterator[Finding]:
    """One finding per cycle over strong active dependency edges, on disjoint sets of nodes."""
    plan = ctx.loaded.plan
    edges = [e for e in plan.edges if e.propagates]
    if _in_order(ctx.graph, edges):
        return
    used: set[str] = set()
    while cycle := Graph.of(plan.replace(edges=edges)).find_cycle():
        ring = cycle[:-1]
        start = min(range(len(ring)), key=lambda k: ctx.graph.index.get(ring[k], 0))
        loop = [*ring[start:], *ring[:start], ring[start]]
        closing = next(
            i
            for i, e in enumerate(plan.edges)
            if e.propagates and (e.from_, e.to) == (loop[-2], loop[-1])
        )
        hint = (
            f"dependency cycle {' -> '.join(loop)}: nothing on it can ever complete; remove one "
            f"edge or make it weak (e.g. {loop[-2]} -> {loop[0]})"
        )
        yield ctx.finding("CYCLE", loop[0], hint, ("edges", closing))
        used.update(ring)
        edges = [e for e in edges if e.from_ not in used and e.to not in used]


def _in_order(graph: Graph, edges: list[Edge]) -> bool:
    """True when the graph's topological order holds every node once and puts the source of
    every one of *edges* between nodes before its target: that order is then the proof that
    they make no cycle, found without a search."""
    position = {node_id: i for i, node_id in enumerate(graph.topological_order())}
    if position.keys() != graph.nodes.keys():
        return False
    nodes = graph.nodes
    return all(
        position[e.from_] < position[e.to] for e in edges if e.from_ in nodes and e.to in nodes
    )


def _orphan_milestones(ctx: LintContext) -> Iterator[Finding]:
    for node_id, node in ctx.graph.nodes.items():
        if node.kind != "milestone" or node.cancelled or ctx.graph.children[node_id]:
            continue
        if any(  # a dependency: strong and active (weak edges wait for nothing)
            e.type in PROPAGATING_EDGES
            and e.status == "active"
            and e.strength == "strong"
            and e.from_ != node_id
            for e in ctx.graph.incoming[node_id]
        ):
            continue
        hint = (
            f"milestone {node_id} gathers nothing: give it children (`parent: {node_id}` on the "
            f"steps it marks) or requires edges from the steps it waits for"
        )
        yield ctx.finding("ORPHAN_MILESTONE", node_id, hint, ctx.loaded.node_path(node_id))


def _edge_shapes(ctx: LintContext) -> Iterator[Finding]:
    for i, edge in enumerate(ctx.loaded.plan.edges):
        if edge.from_ == edge.to:
            hint = f"{edge.type} edge from {edge.to} to itself; remove it"
            yield ctx.finding("SELF_EDGE", edge.to, hint, ("edges", i))
        if edge.type == "contains":
            hint = (
                f"hierarchy is written as `parent`: remove this edge and add "
                f"`parent: {edge.from_}` to node {edge.to}"
            )
            yield ctx.finding("CONTAINS_EDGE", edge.to, hint, ("edges", i, "type"))


# --- types ------------------------------------------------------------------------------------

_OUTPUTS = ".outputs."
_OUTPUTS_AT = re.compile(f"(?={re.escape(_OUTPUTS)})")


def _parse_reference(reference: str, known: Collection[str]) -> tuple[str, str] | None:
    """``node-id.outputs.field`` → (node, field); ids may hold dots, so known ids win."""
    # every place, overlapping ones too: "a.outputs.outputs.f" has two (node a.outputs is one)
    starts = [m.start() for m in _OUTPUTS_AT.finditer(reference)]
    if not starts:
        return None
    split = next((s for s in reversed(starts) if reference[:s] in known), starts[0])
    source, field = reference[:split], reference[split + len(_OUTPUTS) :]
    return (source, field) if source and field else None


def _inputs(ctx: LintContext) -> Iterator[Finding]:
    nodes = ctx.graph.nodes
    for i, node in enumerate(ctx.loaded.plan.nodes):
        for name, reference in node.inputs.items():
            path = ("nodes", i, "inputs", name)
            parsed = _parse_reference(reference, nodes)
            if parsed is None:
                hint = (
                    f"input {quoted(name)} of {node.id} is {quoted(reference)}; "
                    "write 'node-id.outputs.field'"
                )
                yield ctx.finding("TYPE_MISMATCH", node.id, hint, path)
                continue
            source, field = parsed
            if source not in nodes:
                hint = (
                    f"input {quoted(name)} of {node.id} reads unknown node {quoted(source)}"
                    f"{did_you_mean(source, nodes)}; add that node or fix the reference"
                )
                yield ctx.finding("MISSING_DEP", node.id, hint, path)
                continue
            if not any(
                e.from_ == source and e.type in PROPAGATING_EDGES and e.status == "active"
                for e in ctx.graph.incoming[node.id]
            ):
                fix = f"add `{{from: {source}, to: {node.id}, type: consumes}}` to edges"
                if source == node.id:
                    fix = "a node cannot take its own outputs as input: drop or repoint the input"
                hint = (
                    f"input {quoted(name)} of {node.id} reads {source} but no edge joins "
                    f"them; {fix}"
                )
                yield ctx.finding("UNDECLARED_EDGE", node.id, hint, path)
            declared = nodes[source].outputs_schema
            if field not in declared:
                has = ", ".join(declared) if declared else "nothing"
                hint = (
                    f"input {quoted(name)} of {node.id} reads field {quoted(field)}, but the "
                    "outputs_schema "
                    f"of {source} declares {has}; add `{field}: <type>` there or fix the input"
                )
                yield ctx.finding("TYPE_MISMATCH", node.id, hint, path)


def _produced(artifact: str, outputs: Iterable[str]) -> bool:
    wanted = normalize(artifact)
    for output in outputs:
        if path_problem(output):
            continue
        made = normalize(output)
        if wanted == made or glob_match(made, wanted) or wanted.startswith(made + "/"):
            return True
    return False


def _unknown_artifacts(ctx: LintContext) -> Iterator[Finding]:
    for i, edge in enumerate(ctx.loaded.plan.edges):
        upstream = ctx.graph.nodes.get(edge.from_)
        if edge.type != "consumes" or upstream is None:
            continue
        for k, artifact in enumerate(edge.artifacts or ()):
            if path_problem(artifact) or _produced(artifact, upstream.outputs):
                continue
            outputs = ", ".join(upstream.outputs) or "none"
            hint = (
                f"{edge.to} consumes {quoted(artifact)}, which is not an output of "
                f"{edge.from_} (its "
                f"outputs: {outputs}); add it to the outputs of {edge.from_} or fix the path"
            )
            yield ctx.finding("UNKNOWN_ARTIFACT", edge.to, hint, ("edges", i, "artifacts", k))


def _verifiers(ctx: LintContext) -> Iterator[Finding]:
    for i, node in enumerate(ctx.loaded.plan.nodes):
        for k, criterion in enumerate(node.acceptance):
            path = ("nodes", i, "acceptance", k, "verifier")
            kind = criterion.verifier.type
            if kind not in ctx.verifier_types:
                ref = f"{node.id}/{criterion.id}"
                hint = (
                    f"{ref} uses verifier type {quoted(kind)}"
                    f"{did_you_mean(kind, ctx.verifier_types)}; "
                    f"known types: {', '.join(sorted(ctx.verifier_types))} — fix the type or "
                    f"install the plugin that provides it"
                )
                yield ctx.finding("UNKNOWN_VERIFIER", node.id, hint, (*path, "type"))
                continue
            tests = criterion.verifier.tests if isinstance(criterion.verifier, TestVerifier) else []
            for t, pattern in enumerate(tests):
                if "" in pattern.split("::"):
                    hint = (
                        f"{node.id}/{criterion.id}: test pattern {quoted(pattern)} has an empty "
                        f"part; write 'tests/test_file.py::test_name' or 'tests/test_file.py'"
                    )
                    yield ctx.finding("VERIFIER_CONFIG", node.id, hint, (*path, "tests", t))


def _builtin_settings(ctx: LintContext) -> Iterator[Finding]:
    """The checks of the built-in types whose settings check reads the settings alone
    (:meth:`Registry.settings_alone <pytest_plangraph.verifiers.Registry.settings_alone>`)."""
    from ..verifiers import builtin_settings_problems

    clean, wrong = ctx.clean, ctx.wrong
    for i, node in enumerate(ctx.loaded.plan.nodes):
        if i in clean:
            continue  # known to give nothing here: kept by its content
        for k, criterion in enumerate(node.acceptance):
            if criterion.verifier.type not in ctx.verifier_types:
                continue  # UNKNOWN_VERIFIER
            if any(path_problem(v) for _, v in _verifier_paths(criterion)):
                continue  # reported as PATH_OUTSIDE_ROOT
            for problem in builtin_settings_problems(criterion.verifier) or ():
                hint = f"{node.id}/{criterion.id}: {problem}"
                path = ("nodes", i, "acceptance", k, "verifier")
                if wrong is not None:
                    wrong.add(i)
                yield ctx.finding("VERIFIER_CONFIG", node.id, hint, path)


def _verifier_settings(ctx: LintContext) -> Iterator[Finding]:
    """The verifier types' own checks of their settings, which may look at files (those of
    the built-in types that do not are :func:`_builtin_settings`)."""
    files = ctx.files
    if files is None:
        return
    for i, node in enumerate(ctx.loaded.plan.nodes):
        for k, criterion in enumerate(node.acceptance):
            kind = criterion.verifier.type
            if kind not in ctx.verifier_types or not files.settings_on_disk(kind):
                continue  # UNKNOWN_VERIFIER, or checked by _builtin_settings
            if any(_outside(ctx, v) for _, v in _verifier_paths(criterion)):
                continue  # a path outside the root is reported once, as PATH_OUTSIDE_ROOT
            for problem in files.verifier_problems(node, criterion):
                hint = f"{node.id}/{criterion.id}: {problem}"
                path = ("nodes", i, "acceptance", k, "verifier")
                yield ctx.finding("VERIFIER_CONFIG", node.id, hint, path)


def _verifier_paths(criterion: Criterion) -> Iterator[tuple[FieldPath, str]]:
    """(settings key, path) of the repository paths in a built-in verifier's settings."""
    verifier = criterion.verifier
    if isinstance(verifier, SchemaVerifier):
        yield ("schema",), verifier.schema_path
        yield ("artifact",), verifier.artifact
    elif isinstance(verifier, ArtifactVerifier):
        yield ("path",), verifier.path
    elif isinstance(verifier, TestVerifier):
        for t, pattern in enumerate(verifier.tests):
            # an empty file part ("::test_x") is a settings problem, told once as such
            if file := pattern.split("::", 1)[0]:
                yield ("tests", t), file
    elif isinstance(verifier, CommandVerifier):
        for t, pattern in enumerate(verifier.subjects):
            yield ("subjects", t), pattern
        if verifier.cwd is not None:
            yield ("cwd",), verifier.cwd


def _plan_paths(ctx: LintContext) -> Iterator[tuple[str, FieldPath, str]]:
    """(node, field path, path) for every repository path the plan names."""
    for i, node in enumerate(ctx.loaded.plan.nodes):
        for k, output in enumerate(node.outputs):
            yield node.id, ("nodes", i, "outputs", k), output
        for k, criterion in enumerate(node.acceptance):
            for where, value in _verifier_paths(criterion):
                yield node.id, ("nodes", i, "acceptance", k, "verifier", *where), value
    for i, edge in enumerate(ctx.loaded.plan.edges):
        for k, artifact in enumerate(edge.artifacts or ()):
            yield edge.to, ("edges", i, "artifacts", k), artifact


def _path_values(ctx: LintContext) -> list[str]:
    """The paths of :func:`_plan_paths` without their locations (a flat loop: it runs on
    every check of a plan, over every path it names)."""
    values: list[str] = []
    for node in ctx.loaded.plan.nodes:
        values += node.outputs
        for criterion in node.acceptance:
            verifier = criterion.verifier
            if isinstance(verifier, ArtifactVerifier):
                values.append(verifier.path)
            elif isinstance(verifier, (SchemaVerifier, TestVerifier, CommandVerifier)):
                values += (value for _, value in _verifier_paths(criterion))
    for edge in ctx.loaded.plan.edges:
        values += edge.artifacts or ()
    return values


def _outside(ctx: LintContext, path: str) -> str | None:
    """Why *path* leaves the repository (by its text, or through a symlink), or None."""
    problem = path_problem(path)
    if problem is None and ctx.files is not None and ctx.files.escapes(path):
        problem = _THROUGH_LINK
    return problem


_THROUGH_LINK = "resolves outside the repository root (through a symlink)"


def _paths_outside_root(ctx: LintContext) -> Iterator[Finding]:
    clean, wrong = ctx.clean, ctx.wrong
    for node_id, path, value in _plan_paths(ctx):
        if clean and path[0] == "nodes" and path[1] in clean:
            continue  # a node's own paths, known to give nothing here: kept by its content
        problem = path_problem(value)
        if problem is not None:
            hint = f"{quoted(value)} in {node_id}: {problem}"
            if wrong is not None and path[0] == "nodes":
                wrong.add(int(path[1]))
            yield ctx.finding("PATH_OUTSIDE_ROOT", node_id, hint, path)


def _links_outside_root(ctx: LintContext) -> Iterator[Finding]:
    files = ctx.files
    if files is None:
        return
    # asked of every path at once; located only when one escapes (rarely)
    named = {value for value in _path_values(ctx) if path_problem(value) is None}
    escaping = files.escaping(named)
    if not escaping:
        return
    for node_id, path, value in _plan_paths(ctx):
        if value in escaping:
            hint = f"{quoted(value)} in {node_id}: {_THROUGH_LINK}"
            yield ctx.finding("PATH_OUTSIDE_ROOT", node_id, hint, path)


def _no_acceptance(ctx: LintContext) -> Iterator[Finding]:
    graph = ctx.graph
    for i, node in enumerate(ctx.loaded.plan.nodes):
        if node.cancelled or any(c.required for c in node.acceptance):
            continue
        # criteria all `required: false` are shown, never waited for: the gate needs one
        optional = " required" if node.acceptance else ""
        fix = "make one required (leave out `required: false`)" if node.acceptance else "add one"
        if node.kind == "step":
            hint = (
                f"step {node.id} has no{optional} acceptance criteria, so no evidence can show "
                f"it is done; {fix}, e.g. `acceptance: [{{id: ac-1, verifier: {{type: test}}}}]`"
            )
        elif node.kind == "objective" and not (
            graph.children.get(node.id) or graph.prerequisites(node.id)
        ):  # a milestone like it is an ORPHAN_MILESTONE
            hint = (
                f"objective {node.id} has no children, strong prerequisites or{optional} "
                f"acceptance criteria, so nothing can show it is done; give it children "
                f"(`parent: {node.id}` on its steps) or a{optional} criterion"
            )
        else:
            continue
        yield ctx.finding("NO_ACCEPTANCE", node.id, hint, ("nodes", i))


RULES: tuple[Callable[[LintContext], Iterator[Finding]], ...] = (
    _duplicate_ids,
    _missing_deps,
    _cycles,
    hierarchy_cycles,
    unreachable,
    _orphan_milestones,
    _edge_shapes,
    _inputs,
    _unknown_artifacts,
    _verifiers,
    _paths_outside_root,
    _builtin_settings,
    _no_acceptance,
    side_effects,
    irreversible_not_last,
    conflicts_required,
    min_passed,
    excludes_every_test,
)
"""The rules that read the plan alone: their findings follow from the plan file's bytes and
the known verifier types (so they may be kept between runs, see
:meth:`PlanGraph.lint <pytest_plangraph.api.PlanGraph.lint>`)."""

NODE_RULES = frozenset({_builtin_settings, _paths_outside_root})
"""The rules of :data:`RULES` whose findings about a node follow from that node alone (its
content and the known verifier types): they skip the nodes of :attr:`LintContext.clean`
(:func:`_paths_outside_root` still looks at the edges' paths)."""

FILE_RULES: tuple[Callable[[LintContext], Iterator[Finding]], ...] = (
    _links_outside_root,  # first: it asks about every path at once, the others one by one
    _verifier_settings,
    missing_files,
)
"""The rules that ask the repository on disk (through :attr:`LintContext.files`)."""
