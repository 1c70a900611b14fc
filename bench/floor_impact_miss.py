"""Benchmark: the floor of ``plangraph impact`` over the working tree at 10,000 nodes, a miss
(issue 18), counted by parts.

On the repository of ``bench_instructions.py --only impact-now`` (each output verified at
the first commit), after an ``impact`` kept its answer, ten outputs are changed in the
working tree: they reach every node, and the report lists all of them (11.3 MB of text at
10,000 nodes). This counts under callgrind the least work that report needs in a design
that answers it without opening the plan, as processes that each do the parts before
theirs and their own (each part the difference of two counts):

1. Python's start and the look at the kept answer: the product's own
   (``cli.impact_kept.kept_impact``: ``HEAD`` named by git, the plan file, the store's
   head, the checkpoint and every watched file checked), which finds the ten outputs
   changed;
2. the modules the rest imports (the canonical digest, the walk, the table);
3. the kept index read (``floor_status_miss.PREPARE``'s), the changed files hashed, the
   nodes they reach and everything downstream of them;
4. what is kept per node read for those nodes (``floor_status_miss``'s per-node records);
5. their new input digests (the product's canonical digest);
6. which of their criteria are stale now (the validity rule) and the ids of that evidence;
7. the walk and the reason chains: the product's ``impact.reach.Walk`` over the kept
   topology, the nearest changed sources of every node;
8. the report's text, as ``cli.impact_text.plain`` lays it out;
9. printed, and the text kept as a file with the changed files' watch entries.

The printed text is checked byte for byte against the product's ``plangraph impact`` in the
same state. The parts that would also be needed for other changes (a path deleted, added or
renamed, review and blocked notices, a claimed node, the ``json`` and ``markdown`` formats,
the reasons of a stale criterion that no changed path explains) are not made: the bench's
change needs none of them, and the check fails if it did.

Run: ``.venv/bin/python bench/floor_impact_miss.py [--nodes 10000] [--lock FILE]
[--keep-profiles DIR] [--product]``; ``--product`` counts the product's hit and miss in the
same state too.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import bench_impact
import bench_instructions as bi
from floor_status_miss import PREPARE, count_options, wheel_counts

IMPACT = r"""
import gc, os, sys
gc.set_threshold(200_000, 50, 50)  # as the command does (cli.run)
from pytest_plangraph.bundle import install
install()
upto = int(sys.argv[1])
def stop():  # the part's end: what the process made is not freed (its end is a part of its own)
    sys.stdout.flush()
    os._exit(0)
from pytest_plangraph.cli.impact_kept import kept_impact
from pytest_plangraph.derived.look import MISSED
if isinstance(kept_impact([]), int) or not MISSED:
    raise SystemExit("the kept answer stood: nothing changed")
look = MISSED[0]
gc.disable()  # no cycles are made (the product pauses the collector likewise)
if upto < 2:
    stop()
import json, time
from pathlib import Path
from pytest_plangraph.canonical import digest
from pytest_plangraph.cli.tables import table
from pytest_plangraph.derived.kept import STATUS_PERSON
from pytest_plangraph.derived.watch import file_entry, sha256_of
from pytest_plangraph.impact.reach import Topology, Walk
from pytest_plangraph.store.derived import write_tagged
if upto < 3:
    stop()
cache = ".plangraph/cache/"
with open(cache + "floor-index.json", "rb") as f:
    index = json.loads(f.read())
started = time.time_ns()
kept_sha = {e[0]: e[2] for e in look.record["watch"]["files"]}
now = {rel: sha256_of(rel) for rel in sorted(look.seen.fresh)}
now = {rel: sha for rel, sha in now.items() if sha != kept_sha.get(rel)}
dependents, order, kept_digests = index["dependents"], index["order"], index["digests"]
direct = {rel: index["paths"].get(rel, []) for rel in now}
reached, todo = set(), [n for nodes in direct.values() for n in nodes]
while todo:
    node = todo.pop()
    if node not in reached:
        reached.add(node)
        todo.extend(dependents[node])
at = {n: i for i, n in enumerate(order)}
closure = sorted(reached, key=at.__getitem__)
if upto < 4:
    stop()
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
stale = {}
for n in closure:
    mine, ids = digests[n], []
    for cid, required, vtype, cdigest, bound in records[n][3]:
        if vtype == "approval" or bound is None:
            raise SystemExit("an approval or a criterion without evidence: not in the prototype")
        was, outcome, old_cdigest, subjects, evidence, _ = bound
        if outcome != "passed" or old_cdigest != cdigest:
            raise SystemExit("a failed verdict or a changed criterion: not in the prototype")
        if was != mine or any(now.get(p, s) != s for p, s in subjects.items()):
            ids.append(evidence)
    if ids:
        stale[n] = ids
if upto < 7:
    stop()
described = {}
for rel, nodes in direct.items():
    for n in nodes:
        described.setdefault(n, []).append((rel, f"ARTIFACT_CHANGED {rel}"))
prerequisites = {n: tuple(p for p in ps if p != n) for n, ps in index["prerequisites"].items()}
walk = Walk(Topology(prerequisites, order), described)
reasons = {n: walk.reasons(n)[0] for n in stale}
if upto < 8:
    stop()
reaching = [rel for rel, nodes in direct.items() if nodes]
out = [f"changed: {len(now)} path(s), {len(reaching)} reach the plan"]
rows = [["modified", rel, ", ".join(direct[rel])] for rel in reaching]
out += [f"  {line}" for line in table(rows, ["change", "path", "nodes"]).splitlines()]
out.append(f"invalidated: {len(stale)} node(s)")
for n, ids in stale.items():
    out.append(f"  {n} ({', '.join(e[:12] for e in ids)})")
    out += [f"    - {reason}" for reason in reasons[n]]
text = "\n".join(out)
if upto < 9:
    stop()
data = (text + "\n").encode()
sys.stdout.buffer.write(data)
sys.stdout.flush()
with open(cache + "floor-impact-text.out", "wb") as kept:
    kept.write(data)
entries = {rel: file_entry(os.getcwd(), rel, now[rel], started) for rel in now}
write_tagged(Path(cache + "floor-impact-watch.json"), entries, STATUS_PERSON)
if upto < 10:
    stop()
"""
"""The floor's process: the parts up to ``sys.argv[1]`` (see the module docstring)."""

PARTS = [
    "Python's start and the look (the product's, a miss; git's HEAD)",
    "the modules the rest imports",
    "the kept index read, the changed files hashed, the reached nodes",
    "the reached nodes' per-node records read",
    "their new input digests (canonical digest)",
    "their stale criteria and evidence ids",
    "the walk and the reason chains (impact.reach.Walk)",
    "the report's text made",
    "printed, the text and the changed files' watch entries kept",
    "the process's end: what it made freed (a normal exit)",
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    count_options(parser)
    parser.add_argument("--product", action="store_true", help="count the product's hit and miss")
    args = parser.parse_args(argv)
    with wheel_counts(args) as (tmp, env, python, plangraph, count):

        def run(root: Path, command: list[str]) -> bytes:
            done = subprocess.run(command, cwd=root, env=env, capture_output=True)
            if done.returncode != 0:
                raise SystemExit(f"{command[:3]} exited {done.returncode}: {done.stderr[-2000:]!r}")
            return done.stdout

        root = tmp / "impact-now"
        bench_impact.fast_import(root, [bench_impact.first_commit(args.nodes)])
        for command in (["verify"], ["status"]):  # as --only impact-now
            run(root, [plangraph, *command])
        impact = [plangraph, "impact"]
        run(root, impact)
        run(root, impact)  # the kept answer, for the tree before the change
        run(root, [python, "-c", PREPARE])
        changed = range(0, args.nodes, max(args.nodes // 10, 1))
        for i in changed:
            (root / f"out/n{i}.txt").write_text("changed in the working tree\n")
        bi.warm(tmp, [python, "-c", "pass"], env)
        start = count(tmp, [python, "-c", "pass"])
        print(f"python -c pass (baseline): {start / 1e9:.3f} G instructions")
        print(f"the floor of impact, {args.nodes} nodes, {len(changed)} outputs changed:")
        counts = [start]
        for upto, part in enumerate(PARTS, 1):
            counts.append(count(root, [python, "-c", IMPACT, str(upto)]))
            print(
                f"  {upto}. {part:<66} {(counts[-1] - counts[-2]) / 1e9:7.3f} G"
                f"  (with the parts before: {counts[-1] / 1e9:.3f} G)"
            )
        print(f"  the floor, every part: {counts[-1] / 1e9:.3f} G")
        mine = run(root, [python, "-c", IMPACT, str(len(PARTS))])
        if args.product:
            miss = count(root, impact)
            bi.row("the product: impact, a miss (its kept answer for the tree before)", miss, start)
            hit = count(root, impact)
            bi.row("the product: impact, the kept answer (hit)", hit, start)
        theirs = run(root, impact)
        same = "the same bytes" if mine == theirs else "NOT the same bytes"
        print(f"  the floor's report ({len(mine) / 1e6:.1f} MB) against plangraph impact's: {same}")
        if mine != theirs:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
