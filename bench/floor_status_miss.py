"""Benchmark: the floor of ``plangraph status`` after ``out/n7.txt`` changed, in a design that
answers any file change without opening the plan (issue 18), counted by parts.

On the repository of ``bench_instructions.py --only miss`` (``bench_status.build``: 5,000
nodes, 50,000 events; ``out/n7.txt`` is upstream of 4,952 other nodes), after a ``status``
kept its answer, this counts under callgrind the least work a sound answer needs in that
design, as processes that each do the parts before theirs and their own (each part is the
difference of two counts):

1. Python's start and the look at the kept answer: the product's own look
   (``derived.kept.kept_status``: the plan file's bytes, the store's head and chain, the
   checkpoint, the code and the 5,000 watched files checked), which finds ``out/n7.txt``
   changed;
2. the modules the rest imports (the canonical digest, the table's patch, the tagged
   writer);
3. the kept index read (the plan's order, each node's input digest, strong prerequisites
   and dependents, which nodes read each path, which are completed), the changed file hashed
   and the closure walked;
4. what is kept per node read for the closure's nodes: one JSON line each holding the node's
   kind, its gate facts (claimed, refused claims, retry budget, cancelled, active), its
   criteria with their digests and the latest evidence each was bound to (input digest,
   outcome, criterion digest, subjects, id) with, for each strong prerequisite, the input
   digest that prerequisite had on record before that evidence, and its files with their
   sha256;
5. the closure's kept rows read (``judge.statejson.node_to_json``'s form, one JSON line
   each: the old cells the patched table checks its lines against);
6. the new input digests of the closure, upstream first, each the product's canonical
   digest (:func:`pytest_plangraph.canonical.digest`) of the same value
   :func:`pytest_plangraph.judge.inputs.input_digests` hashes;
7. the judgement: each criterion by the validity rule (DESIGN §4: passed, the same criterion
   digest, the same input digest, every subject as recorded) with the product's reasons
   (a subject changed or missing, a prerequisite changed since the record, the inputs
   changed, no approval), each node's completion upstream first and its status by the
   precedence of DESIGN §5, and its new row;
8. the text table: the kept table with the changed nodes' lines anew
   (``cli.tables.patched``), printed;
9. what is written: the changed rows, one JSON line each, the printed text as a file, and
   the changed file's watch entry (``store.derived.write_tagged``);
10. the process's end (what it made freed): every part before ends with ``os._exit`` after
    flushing, so their counts hold none of it.

Not in the floor, counted beside it: the kept answer's record written whole with the new
text, as the product keeps it today.

Before counting, the per-node records are made from the product's own derivation of the
repository as kept (not counted: a real design keeps them when it derives). After
counting, the answer is checked against the product's: the printed table byte for byte
against ``plangraph status``'s stdout, and the new input digests against the derived state
the product keeps after that status.

What the prototype leaves out (each said in ``docs/performance.md`` with its estimate):
the ``--check`` failures, the gate's rules for parents, conflicts edges, cancels, held
nodes, claims without a verdict and approvals given (it refuses a plan that has one), and
keeping the per-node records when a derivation or a run writes them.

Run: ``.venv/bin/python bench/floor_status_miss.py [--nodes 5000] [--lock FILE]
[--keep-profiles DIR] [--product]``; ``--lock FILE`` takes that file's lock (flock) around
each count, ``--product`` counts the product's hit, leaf miss and ``n7`` miss in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import bench_instructions as bi
import bench_status

from pytest_plangraph.usercache import RACY_NS

PREPARE = r"""
import json
from pytest_plangraph.api import PlanGraph
from pytest_plangraph.judge.derive import derive
from pytest_plangraph.judge.inputs import Links
from pytest_plangraph.judge.ledger import Context, Ledger
from pytest_plangraph.judge.statejson import node_to_json
from pytest_plangraph.plan.model import ArtifactVerifier
with PlanGraph.open(".") as graph:
    fold = graph.fold()
    snapshot = graph.snapshot(fold)
    plan = graph.graph
    context = Context.of(plan, snapshot)
    ledger = Ledger(context, fold)
    state = derive(plan, fold, snapshot, context=context)
links = Links.of(plan)
if any(links.conflicts.values()) or links.parent or links.consumes or ledger.cancels:
    raise SystemExit("the prototype judges plain DAGs without cancels")
if ledger.refused is None or ledger.approvals or ledger.held:
    raise SystemExit("the prototype has no claims without verdicts, approvals or holds")
on_record = ledger.on_record()
active = ledger.active()
order = context.order
digests = context.digests
by_path, lines, rows = {}, [], []
for node_id in order:
    node = plan.nodes[node_id]
    files = list(node.outputs)
    files += [c.verifier.path for c in node.acceptance
              if isinstance(c.verifier, ArtifactVerifier) and c.verifier.path not in files]
    for path in files:
        by_path.setdefault(path, []).append(node_id)
    criteria = []
    for c in node.acceptance:
        found = ledger.evidence.get((node_id, c.id))
        bound = None
        if found is not None:
            pos, p = found
            before = {}
            for q in links.prerequisites[node_id]:
                prior = [d for at, d in on_record.get(q, ()) if at < pos]
                if not prior:
                    raise SystemExit(f"{q} has no record before {node_id}'s evidence")
                before[q] = prior[-1]
            bound = [p.get("input_digest"), p.get("outcome"), p.get("criterion_digest"),
                     p.get("subjects") or {}, p.get("id"), before]
        criteria.append([c.id, c.required, c.verifier.type, context.criteria[(node_id, c.id)][1],
                         bound])
    required = [c.id for c in node.acceptance if c.required]
    passed = bool(required) and all((node_id, c) in fold.passed for c in required)
    facts = [node_id in ledger.claimed, ledger.refused.get(node_id, 0), node.max_retry,
             bool(node.cancelled), node_id in active, passed]
    row = node_to_json(state.nodes[node_id])
    required = [c for c in row[4] if c[1]]
    count = f"{sum(c[2] == 'valid' for c in required)}/{len(required)}"
    why = "; ".join(r[1] or r[0] for r in row[3][:3]) + (" …" if len(row[3]) > 3 else "")
    widths = [len(node_id), len(row[1]), len(row[2]), len(count), len(why)]  # its table cells
    lines.append(json.dumps([node_id, node.kind, facts, criteria, links.prerequisites[node_id],
                             [[f, snapshot.files.get(f)] for f in files], widths],
                            separators=(",", ":")))
    rows.append(json.dumps(row, separators=(",", ":")))
completed = [n for n in order if state.nodes[n].status == "completed"]
index = {"order": order, "digests": digests, "dependents": links.dependents, "paths": by_path,
         "completed": completed, "prerequisites": links.prerequisites}
with open(".plangraph/cache/floor-index.json", "w") as out:
    json.dump(index, out, separators=(",", ":"))
with open(".plangraph/cache/floor-nodes.jsonl", "w") as out:
    out.write("\n".join(lines) + "\n")
with open(".plangraph/cache/floor-rows.jsonl", "w") as out:
    out.write("\n".join(rows) + "\n")
import marshal
with open(".plangraph/cache/floor-nodes.marshal", "wb") as out:
    marshal.dump([json.loads(line) for line in lines], out)
"""
"""Made once before counting (not counted): the kept index and the per-node records, from
the product's derivation of the repository as its kept answer was made."""

FLOOR = r"""
import gc, os, sys
gc.set_threshold(200_000, 50, 50)  # as the command does (cli.run)
from pytest_plangraph.bundle import install
install()  # the package's modules read from one file, as the command reads them
upto, extras = int(sys.argv[1]), sys.argv[2].split(",")
def stop():  # the part's end: what the process made is not freed (its end is a part of its own)
    sys.stdout.flush()
    os._exit(0)
from pytest_plangraph.derived.kept import kept_status
from pytest_plangraph.derived.look import MISSED
if kept_status(None, None, None, "text") is not None or not MISSED:
    raise SystemExit("the kept answer stood: nothing changed")
look = MISSED[0]
gc.disable()  # what follows makes no cycles (the product pauses the collector likewise)
if upto < 2:
    stop()
import json, time
from pathlib import Path
from pytest_plangraph.canonical import digest
from pytest_plangraph.cli.tables import patched
from pytest_plangraph.derived.kept import STATUS_PERSON
from pytest_plangraph.derived.watch import file_entry, sha256_of
from pytest_plangraph.store.derived import write_tagged
if upto < 3:
    stop()
cache = ".plangraph/cache/"
with open(cache + "floor-index.json", "rb") as f:
    index = json.loads(f.read())
started = time.time_ns()  # before hashing, as the look takes it
now = {rel: sha256_of(rel) for rel in look.seen.fresh}
dependents, order, kept_digests = index["dependents"], index["order"], index["digests"]
reached, todo = set(), [n for rel in now for n in index["paths"].get(rel, ())]
while todo:
    node = todo.pop()
    if node not in reached:
        reached.add(node)
        todo.extend(dependents[node])
at = {n: i for i, n in enumerate(order)}
closure = sorted(reached, key=at.__getitem__)  # upstream first: the kept order is topological
if upto < 4:
    stop()
if "lean" in extras:  # every node's record in one marshal value (not JSON), read whole
    import marshal
    with open(cache + "floor-nodes.marshal", "rb") as f:
        every = marshal.loads(f.read())
    records = {n: every[at[n]] for n in closure}
else:
    with open(cache + "floor-nodes.jsonl", "rb") as f:
        lines = f.read().split(b"\n")
    records = {n: json.loads(lines[at[n]]) for n in closure}
if upto < 5:
    stop()
digests = {}
for n in closure:
    _, _, _, criteria, prerequisites, files, _ = records[n]
    digests[n] = digest({
        "criteria": {c[0]: c[3] for c in criteria},
        "files": {p: now.get(p, sha) for p, sha in files},
        "upstream": {p: digests.get(p) or kept_digests[p] for p in prerequisites},
    })
if upto < 6:
    stop()
CHANGED_CRITERION = "the criterion's definition changed since the evidence was recorded"
CHANGED_INPUTS = "the node's inputs changed since the evidence was recorded"
completed, rows, cellrows = {}, {}, {}
kept_done = set(index["completed"])
closure_judged = closure
if "lean" in extras:  # the judgement of what the table prints and the next miss reads alone
    closure_judged = ()
    for n in closure:
        node_id, kind, facts, criteria, prerequisites, files, _ = records[n]
        claimed, refused, max_retry, cancelled, active, _ = facts
        mine = digests[n]
        reasons, open_states, valid, counted = [], set(), 0, 0
        for cid, required, vtype, cdigest, bound in criteria:
            if vtype == "approval":
                state, why = "awaiting_approval", ["no approval recorded"]
            elif bound is None:
                state, why = "missing", ["no evidence recorded"]
            else:
                was, outcome, old_cdigest, subjects, evidence, before = bound
                changed = [p for p in sorted(subjects) if now.get(p, subjects[p]) != subjects[p]]
                if outcome == "passed" and old_cdigest == cdigest and was == mine and not changed:
                    state, why = "valid", ()
                elif outcome != "passed":
                    raise SystemExit("a failed verdict: not in the prototype")
                else:
                    state, why = "stale", []
                    if old_cdigest != cdigest:
                        why.append(CHANGED_CRITERION)
                    for p in changed:
                        gone = now[p] is None
                        why.append(f"{p} is missing" if gone else
                                   f"{p} changed since the evidence was recorded")
                    if was != mine:
                        why += [f"upstream node {q} changed since then" for q in prerequisites
                                if before[q] != digests.get(q, kept_digests[q])]
                        if not why:
                            why.append(CHANGED_INPUTS)
            if required:
                counted += 1
                if state == "valid":
                    valid += 1
                else:
                    open_states.add(state)
                    reasons += [f"{cid}: {message}" for message in why]
        waiting = [p for p in prerequisites if not completed.get(p, p in kept_done)]
        exhausted = refused > max_retry
        completed[n] = not waiting and not open_states and not exhausted and not cancelled
        if completed[n]:
            reasons = []
        else:
            reasons += [f"strong prerequisite {p} is not completed" for p in waiting]
            if exhausted:
                reasons.append(f"{refused} claims refused since the last retry grant (max_retry "
                               f"{max_retry}): the gate refuses this node whatever its evidence "
                               f"until a person runs `plangraph retry {node_id}`")
        if cancelled:
            status = "cancelled"
        elif exhausted:
            status = "blocked"
        elif completed[n]:
            status = "completed"
        elif "stale" in open_states:
            status = "stale"
        elif "failed" in open_states:
            status = "failed"
        elif waiting and (claimed or active):
            status = "blocked"
        elif open_states == {"awaiting_approval"} and not waiting:
            status = "awaiting_approval"
        elif claimed:
            status = "awaiting_verification"
        elif active:
            status = "in_progress"
        else:
            status = "pending" if waiting else "ready"
        why = "; ".join(reasons[:3]) + (" …" if len(reasons) > 3 else "")
        cellrows[n] = [node_id, kind, status, f"{valid}/{counted}", why]
NO_APPROVAL = [["APPROVAL_MISSING", "no approval recorded", {}]]
NO_EVIDENCE = [["CRITERION_MISSING", "no evidence recorded", {}]]
for n in closure_judged:  # the judgement with the product's rows (node_to_json's form)
    node_id, kind, facts, criteria, prerequisites, files, _ = records[n]
    claimed, refused, max_retry, cancelled, active, _ = facts
    mine = digests[n]
    states, reasons = [], []
    for cid, required, vtype, cdigest, bound in criteria:
        if vtype == "approval":
            state, evidence, why = "awaiting_approval", None, NO_APPROVAL
        elif bound is None:
            state, evidence, why = "missing", None, NO_EVIDENCE
        else:
            was, outcome, old_cdigest, subjects, evidence, before = bound
            changed = [p for p in sorted(subjects) if now.get(p, subjects[p]) != subjects[p]]
            if outcome == "passed" and old_cdigest == cdigest and was == mine and not changed:
                state, why = "valid", []
            elif outcome != "passed":
                raise SystemExit("a failed verdict: not in the prototype")
            else:
                state, why = "stale", []
                if old_cdigest != cdigest:
                    why.append(["CRITERION_CHANGED", CHANGED_CRITERION,
                                {"old": old_cdigest, "new": cdigest}])
                for p in changed:
                    old = subjects[p]
                    if now[p] is None:
                        why.append(["ARTIFACT_DELETED", f"{p} is missing", {"path": p, "old": old}])
                    else:
                        message = f"{p} changed since the evidence was recorded"
                        why.append(["ARTIFACT_CHANGED", message,
                                    {"path": p, "old": old, "new": now[p]}])
                if was != mine:
                    why += [["UPSTREAM_CHANGED", f"upstream node {q} changed since then",
                             {"node": q}]
                            for q in prerequisites if before[q] != digests.get(q, kept_digests[q])]
                    if not why:
                        why.append(["INPUT_CHANGED", CHANGED_INPUTS, {"old": was, "new": mine}])
        states.append([cid, required, state, evidence, why])
        if required and state != "valid":
            reasons += [[code, f"{cid}: {message}", {"criterion": cid, **data}]
                        for code, message, data in why]
    waiting = [p for p in prerequisites if not completed.get(p, p in kept_done)]
    exhausted = refused > max_retry
    passes = not waiting and all(s[2] == "valid" for s in states if s[1])
    completed[n] = passes and not exhausted and not cancelled
    if completed[n]:
        reasons = []
    else:
        reasons += [["PREREQUISITE_NOT_COMPLETED", f"strong prerequisite {p} is not completed",
                     {"node": p}] for p in waiting]
        if exhausted:
            reasons.append(["RETRY_BUDGET_EXHAUSTED",
                            f"{refused} claims refused since the last retry grant (max_retry "
                            f"{max_retry}): the gate refuses this node whatever its evidence "
                            f"until a person runs `plangraph retry {node_id}`",
                            {"refused": refused, "max_retry": max_retry}])
    open_states = {s[2] for s in states if s[1] and s[2] != "valid"}
    if cancelled:
        status = "cancelled"
    elif exhausted:
        status = "blocked"
    elif completed[n]:
        status = "completed"
    elif "stale" in open_states:
        status = "stale"
    elif "failed" in open_states:
        status = "failed"
    elif waiting and (claimed or active):
        status = "blocked"
    elif open_states == {"awaiting_approval"} and not waiting:
        status = "awaiting_approval"
    elif claimed:
        status = "awaiting_verification"
    elif active:
        status = "in_progress"
    else:
        status = "pending" if waiting else "ready"
    rows[n] = [node_id, kind, status, reasons, states, claimed, refused]
if upto < 7:
    stop()
def cells(row):
    required = [c for c in row[4] if c[1]]
    count = f"{sum(c[2] == 'valid' for c in required)}/{len(required)}"
    why = "; ".join(r[1] or r[0] for r in row[3][:3]) + (" …" if len(row[3]) > 3 else "")
    return [row[0], row[1], row[2], count, why]
header = ["node", "kind", "status", "criteria", "reasons"]
# the kept table, each closure node's line anew: the columns' widths read from the header
# line, a table printed again when a new cell is wider than its column, or a kept cell as
# wide as its column (kept widths: the record's) gets narrower (cli.tables.patched's rule)
table = look.answer[0].split("\n")
starts = [0]
for previous, name in zip(header, header[1:]):
    found = table[0].find(f"  {name}", starts[-1] + len(previous))
    if found < 0:
        raise SystemExit("not a table of these columns: not in the prototype")
    starts.append(found + 2)
widths = [b - a - 2 for a, b in zip(starts, starts[1:])]
line = "  ".join(f"{{!s:<{w}}}" for w in [*widths, 0])
for n in closure:
    new = cellrows[n] if n in cellrows else cells(rows[n])
    for w, was, cell in zip(widths, records[n][6], new):
        if len(cell) > w or (was == w and len(cell) != w):
            raise SystemExit("a column's width changed: not in the prototype")
    table[at[n] + 1] = line.format(*new).rstrip()
printed = "\n".join(table)
print(printed)
sys.stdout.flush()
if "patched" in extras:  # beside: the kept rows read, every old line checked against its row
    with open(cache + "floor-rows.jsonl", "rb") as f:
        row_lines = f.read().split(b"\n")
    kept_rows = {n: json.loads(row_lines[at[n]]) for n in closure}
    changed = {at[n]: (cells(kept_rows[n]), cells(rows[n]))
               for n in closure if rows[n] != kept_rows[n]}
    if patched(look.answer[0], header, changed) != printed:
        raise SystemExit("the patched table is another")
if upto < 8:
    stop()
done = [n for n in closure if completed[n]]
kept = {"digests": {n: digests[n] for n in closure}, "completed": done}
with open(cache + "floor-free.json", "w") as out:
    json.dump(kept, out)
with open(cache + "floor-status-text.out", "wb") as out:
    out.write(printed.encode())
entries = {rel: file_entry(os.getcwd(), rel, now[rel], started) for rel in now}
write_tagged(Path(cache + "floor-watch.json"), entries, STATUS_PERSON)
if "rows" in extras:  # beside: the closure's new rows written, one JSON line each
    with open(cache + "floor-rows-free.jsonl", "wb") as out:
        out.write("".join(json.dumps(rows[n], separators=(",", ":")) + "\n"
                          for n in closure).encode())
if "record" in extras:  # beside: the kept answer's record written whole, as today
    record = dict(look.record)
    record["answer"] = [printed, look.answer[1], look.answer[2]]
    write_tagged(Path(cache + "floor-status-text.json"), record, STATUS_PERSON)
if "tags" in extras:  # the per-node store and the index checked as every cache file is
    from pytest_plangraph.store.derived import _tag
    for name in ("floor-index.json", "floor-nodes.marshal"):
        with open(cache + name, "rb") as f:
            _tag(f.read(), b"plangraph-floor")
if "check" in extras:  # --check's failures of the closure (cli.state_cmds._check_failures)
    failing = []
    for n in closure:
        status = cellrows[n][2] if n in cellrows else rows[n][2]
        claimed, _, _, cancelled, _, passed = records[n][2]
        if status == "completed" or cancelled:
            continue
        if status == "cancelled":
            status = "cancelled by an event, which settles nothing (`cancelled: true` does)"
        if claimed:
            failing.append([n, f"is claimed but {status}"])
        elif passed:
            failing.append([n, f"was satisfied by evidence before and is {status} now"])
        elif status == "stale":
            raise SystemExit("a stale node neither claimed nor passed: not in the prototype")
    with open(cache + "floor-check.json", "w") as out:
        json.dump(failing, out)
if len(sys.argv) > 3:
    with open(sys.argv[3], "w") as out:
        json.dump({"digests": digests, "rows": rows}, out)
if upto < 9:
    stop()
"""
"""The floor's process: the parts up to ``sys.argv[1]`` (see the module docstring); with a
second argument, the new digests and rows written to that file (for the check)."""

PARTS = [
    "Python's start and the look (the product's, a miss)",
    "the modules the rest imports",
    "the kept index read, the changed file hashed, the closure walked",
    "the closure's per-node records read",
    "the closure's new input digests (canonical digest)",
    "the judgement: criteria, completion, status, rows",
    "the kept table's lines of the closure made anew, printed",
    "written: new digests and completion, the text, the watch entry",
    "the process's end: what it made freed (a normal exit)",
]
EXTRAS = {
    "patched": "the closure's kept rows read, the table checked by cli.tables.patched",
    "rows": "the closure's new rows written (node_to_json's form, a line each)",
    "record": "the kept answer's record written whole (as the product keeps it)",
    "tags": "the per-node store and the index checked by their tags (BLAKE2b)",
    "check": "--check's failures of the closure made and kept",
}
"""What is counted beside the floor, not in it: each added to the parts up to 8."""


@contextlib.contextmanager
def locked(path: str | None) -> Iterator[None]:
    """The lock of *path* held (flock), when one is given."""
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def count_options(parser: argparse.ArgumentParser) -> None:
    """The options every floor and phase script takes for its counts."""
    parser.add_argument("--lock", help="take this file's lock (flock) around each count")
    parser.add_argument("--keep-profiles", type=Path, help="keep callgrind's output here")


@contextlib.contextmanager
def wheel_counts(
    args: argparse.Namespace,
) -> Iterator[tuple[Path, dict[str, str], str, str, Callable[[Path, list[str]], int]]]:
    """A scratch folder with the package installed from a wheel and precompiled, as
    ``bench_instructions.py --wheel`` counts it: the folder, the environment, its
    ``python`` and ``plangraph``, and a count of a command under callgrind (the lock of
    ``--lock`` held; the profiles kept in ``--keep-profiles``)."""
    if args.keep_profiles is not None:
        args.keep_profiles.mkdir(parents=True, exist_ok=True)
        bi.KEEP_PROFILES = args.keep_profiles.resolve()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = bi.environment(tmp)
        python = bi.install_wheel(tmp)
        bi.precompile(python, env, tmp)

        def count(root: Path, command: list[str]) -> int:
            with locked(args.lock):
                return bi.count(root, command, env)

        yield tmp, env, python, str(Path(python).parent / "plangraph"), count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    count_options(parser)
    parser.add_argument(
        "--product", action="store_true", help="count the product's hit, leaf miss and n7 miss"
    )
    args = parser.parse_args(argv)
    with wheel_counts(args) as (tmp, env, python, plangraph, count):

        def run(root: Path, command: list[str]) -> str:
            done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{command[:3]} exited {done.returncode}: {done.stderr[-2000:]}")
            return done.stdout

        root = tmp / "repo"
        root.mkdir()
        bench_status.build(root, args.nodes)
        status = [plangraph, "status"]
        bi.warm(root, status, env)  # the checkpoint
        bi.warm(root, status, env)  # the derived state and the kept answer
        time.sleep(RACY_NS / 1e9)  # as --only miss: the look trusts the checkpoint's stat
        bi.warm(root, status, env)
        bi.warm(tmp, [python, "-c", "pass"], env)
        start = count(tmp, [python, "-c", "pass"])
        print(f"python -c pass (baseline): {start / 1e9:.3f} G instructions")
        print(f"plangraph status, {args.nodes} nodes, {args.nodes * 10} events:")
        hit = count(root, status)
        bi.row("the product: status unchanged (the hit)", hit, start)
        if args.product:
            leaf = root / f"out/n{args.nodes - 1}.txt"
            before = leaf.read_bytes()
            leaf.write_text("changed\n")
            bi.row("the product: one leaf artifact changed", count(root, status), start)
            leaf.write_bytes(before)
            bi.warm(root, status, env)
            time.sleep(RACY_NS / 1e9)
            bi.warm(root, status, env)
            hit = count(root, status)
            bi.row("the product: status unchanged again (the hit)", hit, start)
        run(root, [python, "-c", PREPARE])
        (root / "out/n7.txt").write_text("changed\n")
        print("the floor of status after out/n7.txt changed, by parts:")
        counts = [start]
        for upto, part in enumerate(PARTS, 1):
            counts.append(count(root, [python, "-c", FLOOR, str(upto), "-"]))
            print(
                f"  {upto}. {part:<66} {(counts[-1] - counts[-2]) / 1e9:7.3f} G"
                f"  (with the parts before: {counts[-1] / 1e9:.3f} G)"
            )
        total = counts[-1]
        print(f"  the floor, every part: {total / 1e9:.3f} G ({total / start:.1f}x python start)")
        print(f"  the floor less the product's hit: {(total - hit) / 1e9:.3f} G")
        print("  the leaner form: the records as one marshal value, the table's cells judged alone")
        lean = counts[:4]
        for upto, part in list(enumerate(PARTS, 1))[3:]:
            lean.append(count(root, [python, "-c", FLOOR, str(upto), "lean"]))
            print(f"  {upto}'. {part:<65} {(lean[-1] - lean[-2]) / 1e9:7.3f} G")
        print(f"  the leaner floor, every part: {lean[-1] / 1e9:.3f} G")
        done = count(root, [python, "-c", FLOOR, str(len(PARTS)), "lean,tags,check"])
        print(f"  the leaner floor with the tags and --check's failures: {done / 1e9:.3f} G")
        print("  beside the floor, each added to parts 1-8:")
        for extra, what in EXTRAS.items():
            more = count(root, [python, "-c", FLOOR, str(len(PARTS) - 1), extra]) - counts[-2]
            print(f"    {what:<70} {more / 1e9:7.3f} G")
        sizes = {p.name: p.stat().st_size for p in (root / ".plangraph/cache").glob("floor-*")}
        print(
            "  kept files: " + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sorted(sizes.items()))
        )
        checked = [python, "-c", FLOOR, str(len(PARTS)), "patched", str(tmp / "floor.json")]
        mine = run(root, checked)
        leaner = run(root, [python, "-c", FLOOR, str(len(PARTS)), "lean"])
        if args.product:
            bi.row("the product: status after out/n7.txt changed", count(root, status), start)
        theirs = run(root, status)
        same = "the same bytes" if mine == theirs else "NOT the same bytes"
        print(f"  the floor's table against plangraph status's stdout: {same}")
        same = "the same bytes" if leaner == theirs else "NOT the same bytes"
        print(f"  the leaner floor's table against plangraph status's stdout: {same}")
        made = json.loads((tmp / "floor.json").read_text())
        derived = str(root / ".plangraph/cache/derived.json")
        kept = json.loads(run(root, [python, "-c", KEPT_STATE, derived]))
        moved = {n for n, d in made["digests"].items() if kept["input_digests"].get(n) != d}
        rows = {r[0]: r for r in kept["nodes"]}
        other = {n for n, r in made["rows"].items() if rows.get(n) != r}
        print(
            f"  the floor's {len(made['digests'])} new input digests and rows against the "
            f"product's derived state: {len(moved)} and {len(other)} differ"
        )
        if mine != theirs or leaner != theirs or moved or other:
            raise SystemExit(1)


KEPT_STATE = r"""
import json, sys
from pathlib import Path
from pytest_plangraph.store.derived import read_tagged
print(json.dumps(read_tagged(Path(sys.argv[1]))["data"]))
"""
"""Prints the derived state the product kept (for the check)."""


if __name__ == "__main__":
    main()
