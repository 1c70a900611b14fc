"""The store under SIGKILL and under many writers: the scenarios of the reliability suite and
of ``bench/reliability.py`` (the same code; the suite runs small counts, the benchmark the full
ones).

A writer prints one line ``ACK SEQ ID`` for each event *after* the append that stored it has
returned: that event is acknowledged, and no later kill may lose it. The checks afterwards read
the file with SQLite's own ``PRAGMA integrity_check`` and the store's own chain check
(:meth:`Store.verify`), and look up every acknowledged event.

Writers are real processes: forked from a process that has already imported the package
(fast, so that hundreds of kills stay cheap), or fresh interpreters that run the real
``plangraph cancel`` command again and again. Kills are real ``SIGKILL``. This file doubles
as the writers' script: ``python harness_store.py COMMAND ARGS``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn

from pytest_plangraph.plan.model import Event
from pytest_plangraph.store.sqlite import Store

HANG_GUARD_S = 600.0
"""How long a scenario's processes may take before they count as hung (a bound for a loaded
machine, never a speed check)."""
CLI_PLAN = """\
plangraph: 1
plan: kill-target
nodes:
  - {id: n0, title: first}
  - {id: n1, title: second}
  - {id: n2, title: third}
"""


@dataclass
class Figures:
    """What one scenario did and what the store looked like afterwards."""

    kills: int = 0
    writers: int = 0
    acknowledged: int = 0
    stored: int = 0
    lost: list[str] = field(default_factory=list)
    """Acknowledged events missing from the store or stored at another position."""
    integrity: str = ""
    """SQLite's ``PRAGMA integrity_check`` answer: ``ok`` for a sound file."""
    chain_problems: list[str] = field(default_factory=list)
    gaps: bool = False
    """True when the stored positions are not 1, 2, … n."""
    half_batches: int = 0
    """Batches of which some events were stored and others not."""
    refused: list[str] = field(default_factory=list)
    """Writers that stopped with an error instead of finishing (concurrent scenario)."""

    @property
    def sound(self) -> bool:
        """True when the store is whole: nothing lost, nothing corrupt, nothing half-written."""
        return (
            not self.lost
            and self.integrity == "ok"
            and not self.chain_problems
            and not self.gaps
            and not self.half_batches
            and not self.refused
        )

    def to_json(self) -> dict[str, Any]:
        """The figures as plain values (``sound`` included)."""
        return {**self.__dict__, "sound": self.sound}


def parse_acks(text: str) -> list[tuple[int, str]]:
    """The acknowledged ``(seq, id)`` pairs in a writer's output; a line cut by the kill is not
    an acknowledgement (each line is written whole, so none should be cut)."""
    acks = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "ACK" and len(parts[2]) == 64:
            acks.append((int(parts[1]), parts[2]))
    return acks


def check_store(path: Path, acks: list[tuple[int, str]], figures: Figures) -> Figures:
    """Fill *figures* from the store at *path* and the writers' acknowledgements."""
    figures.acknowledged = len(acks)
    con = sqlite3.connect(path)
    try:
        figures.integrity = "; ".join(r[0] for r in con.execute("PRAGMA integrity_check"))
    finally:
        con.close()
    with Store.open(path) as store:
        figures.chain_problems = [f"{p.seq}: {p.code}" for p in store.verify()]
        events = store.events(chain_order=True)
    at = {event.id: event.seq for event in events}
    figures.stored = len(events)
    figures.lost = [f"{seq} {id_}" for seq, id_ in acks if at.get(id_) != seq]
    figures.gaps = [e.seq for e in events] != list(range(1, len(events) + 1))
    batches = Counter(_batch(e) for e in events if "size" in e.payload)
    sizes = {_batch(e): e.payload["size"] for e in events if "size" in e.payload}
    figures.half_batches = sum(1 for key, count in batches.items() if count != sizes[key])
    return figures


def _batch(event: Event) -> tuple[str, int]:
    return (event.by, int(event.payload["batch"]))


def make_event(tag: str, batch: int, index: int, size: int, blob: int = 0) -> Event:
    """An evidence-shaped event of writer *tag*: event *index* of a batch of *size*."""
    return Event(
        kind="evidence",
        node=f"step-{batch % 5}",
        criterion="c",
        at=datetime.now(timezone.utc).isoformat(),
        by=tag,
        plan_digest="a" * 64,
        payload={"batch": batch, "i": index, "size": size, "blob": "x" * blob},
    )


# --- SIGKILL during appends ------------------------------------------------------------------


def kill_during_appends(path: Path, kills: int, seed: int) -> Figures:
    """Fork *kills* writers one after another, each appending batches to the store at *path*
    until it is killed with SIGKILL at a random moment; then check the store.

    Half the kills come at a random time after the fork (the writer may still be creating or
    opening the store), half a random moment after a random number of acknowledgements (the
    writer is inside its append loop). Run this in a process of its own: it forks.
    """
    rng = random.Random(seed)
    acks: list[tuple[int, str]] = []
    for round_ in range(kills):
        ready, ack_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer
            os.close(ready)
            _append_until_killed(path, f"r{round_}", ack_end)
        os.close(ack_end)
        output = _kill_when(pid, ready, rng, after_acks=round_ % 2 == 1)
        os.close(ready)
        acks.extend(parse_acks(output))
    return check_store(path, acks, Figures(kills=kills, writers=kills))


def _kill_when(pid: int, ready: int, rng: random.Random, *, after_acks: bool) -> str:
    """Kill *pid* with SIGKILL at a random moment; return all it acknowledged."""
    received = b""
    if after_acks:
        wanted, deadline = rng.randint(1, 12), time.monotonic() + HANG_GUARD_S
        while received.count(b"\n") < wanted and time.monotonic() < deadline:
            if select.select([ready], [], [], 1.0)[0]:
                chunk = os.read(ready, 65536)
                if not chunk:
                    break
                received += chunk
        time.sleep(rng.uniform(0.0, 0.004))
    else:
        time.sleep(rng.uniform(0.0, 0.06))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    while chunk := os.read(ready, 65536):  # the writer is gone: its end is closed
        received += chunk
    return received.decode("ascii", "replace")


def _append_until_killed(path: Path, tag: str, ack: int) -> NoReturn:
    try:
        with Store.open(path) as store:
            for batch in itertools.count():
                size = 1 + batch % 3
                stored = store.append_many(
                    [make_event(tag, batch, i, size, blob=2000) for i in range(size)]
                )
                os.write(ack, "".join(f"ACK {e.seq} {e.id}\n" for e in stored).encode())
    finally:
        os._exit(1)


def kill_cli_writers(root: Path, kills: int, seed: int) -> Figures:
    """Start *kills* fresh interpreters one after another, each running ``plangraph cancel``
    on the repository at *root* again and again, and kill each with SIGKILL a random moment
    after a random number of acknowledged writes; then check the repository's store."""
    prepare_cli_root(root)
    rng = random.Random(seed)
    acks: list[tuple[int, str]] = []
    for round_ in range(kills):
        writer = run_script("cli-writer", str(root), f"c{round_}")
        assert writer.stdout is not None
        output = _kill_when(writer.pid, writer.stdout.fileno(), rng, after_acks=True)
        writer.wait()
        writer.stdout.close()
        if writer.stderr is not None:
            writer.stderr.close()
        acks.extend(parse_acks(output))
    return check_store(root / ".plangraph" / "store.db", acks, Figures(kills, kills))


def prepare_cli_root(root: Path) -> None:
    """A repository (a ``.git`` folder is enough) holding a three-node plan."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "plangraph.yaml").write_text(CLI_PLAN, encoding="utf-8")


def _cli_writer(root: Path, tag: str) -> None:
    import contextlib
    import io

    from pytest_plangraph.cli import main

    for n in itertools.count():
        out = io.StringIO()
        argv = ["cancel", f"n{n % 3}", "--by", tag, "--note", str(n), "--format", "json"]
        with contextlib.redirect_stdout(out):
            code = main([*argv, "--root", str(root)])
        if code != 0:
            sys.exit(code)
        event = json.loads(out.getvalue())["event"]
        os.write(1, f"ACK {event['seq']} {event['id']}\n".encode())


# --- many writers at once --------------------------------------------------------------------


def concurrent_writers(path: Path, writers: int, each: int) -> Figures:
    """Start *writers* processes at once, each appending *each* events one by one to the
    store at *path*; then check that every acknowledged event is there, in one chain."""
    processes = [run_script("append", str(path), str(each), f"w{n}") for n in range(writers)]
    acks: list[tuple[int, str]] = []
    figures = Figures(writers=writers)
    deadline = time.monotonic() + HANG_GUARD_S
    for number, process in enumerate(processes):
        try:
            out, err = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            err = f"hung past {HANG_GUARD_S:.0f} s\n{err}"
        acks.extend(parse_acks(out))
        if process.returncode != 0 or len(parse_acks(out)) != each:
            figures.refused.append(f"w{number}: exit {process.returncode}: {err.strip()[-300:]}")
    check_store(path, acks, figures)
    per_writer = Counter(tag for tag in _writers(path))
    figures.refused.extend(
        f"w{n}: {per_writer.get(f'w{n}', 0)} stored, not {each}"
        for n in range(writers)
        if per_writer.get(f"w{n}", 0) != each
    )
    return figures


def _writers(path: Path) -> list[str]:
    with Store.open(path) as store:
        return [event.by for event in store.events()]


def _append(path: Path, count: int, tag: str) -> None:
    with Store.open(path) as store:
        for n in range(count):
            stored = store.append(make_event(tag, n, 0, 1))
            os.write(1, f"ACK {stored.seq} {stored.id}\n".encode())


# --- the script side -------------------------------------------------------------------------


def run_script(*args: str) -> subprocess.Popen[str]:
    """Start this file as a script in a fresh interpreter, its output on a pipe."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env["PLANGRAPH_ACTOR"] = "reliability"
    command = [sys.executable, __file__, *args]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def run_in_own_process(*args: str) -> Figures:
    """Run a forking scenario (``kill-loop PATH KILLS SEED``) in a process of its own and
    return its figures: a test runner's process is not forked."""
    process = run_script(*args)
    out, err = process.communicate(timeout=HANG_GUARD_S)
    if process.returncode != 0:
        raise RuntimeError(f"{args[0]} failed (exit {process.returncode}):\n{err}")
    return Figures(**{k: v for k, v in json.loads(out).items() if k != "sound"})


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    if command == "append":
        _append(Path(arguments[0]), int(arguments[1]), arguments[2])
    elif command == "cli-writer":
        _cli_writer(Path(arguments[0]), arguments[1])
    elif command == "kill-loop":
        result = kill_during_appends(Path(arguments[0]), int(arguments[1]), int(arguments[2]))
        print(json.dumps(result.to_json()))
    else:
        sys.exit(f"unknown command {command!r}")
