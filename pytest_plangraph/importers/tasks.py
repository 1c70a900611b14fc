"""The task list both readers produce, and the checks that make it a plan: unique ids, known
dependencies, no cycle."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import UsageError

TEST_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*test_[\w-]+\.py|(?:[\w.-]+/)*[\w-]+_test\.py)\b")
"""A pytest file named in free text (``tests/unit/test_login.py``, ``login_test.py``)."""
FILE_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]+)\b")
"""A relative file path with at least one folder named in free text (``src/models/user.py``)."""


@dataclass
class Task:
    """One task as read: its id in the source, a node id, what it says, and its links."""

    source_id: str
    node_id: str
    title: str
    line: str
    """Where the task is in the source, for messages (``tasks.md:14`` or ``tasks[2]``)."""
    kind: str = "step"
    parent: str | None = None
    criteria: list[tuple[str, str, str | None]] = field(default_factory=list)
    """``(criterion id, assertion, test path or None)``: a test path makes a ``test`` verifier."""
    outputs: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)
    """Source ids of the tasks this one needs completed first."""
    cancelled: bool = False


@dataclass
class TaskList:
    """What a reader found: the plan id, the tasks in source order, and what it could not map."""

    plan_id: str
    title: str
    tasks: list[Task]
    unmapped: list[str] = field(default_factory=list)


def check(tasks: Sequence[Task], source: str) -> None:
    """Refuse duplicate ids, dependencies on ids that are not tasks, and dependency cycles."""
    by_id: dict[str, Task] = {}
    by_node: dict[str, Task] = {}
    for task in tasks:
        other = by_node.setdefault(task.node_id, task)
        if other is not task and other.source_id != task.source_id:
            raise UsageError(
                f"{source}: {task.line}: the ids {other.source_id!r} and {task.source_id!r} both "
                f"become node id {task.node_id!r} (a plan id holds letters, digits, `.`, `_` and "
                "`-` only); rename one"
            )
        if task.source_id in by_id:
            raise UsageError(
                f"{source}: {task.line}: task {task.source_id} is defined twice (also at "
                f"{by_id[task.source_id].line}); give each task its own id"
            )
        by_id[task.source_id] = task
    for task in tasks:
        for dep in task.requires:
            if dep not in by_id:
                raise UsageError(
                    f"{source}: {task.line}: task {task.source_id} depends on {dep}, which is "
                    "not a task of this file; fix the id or remove the dependency"
                )
    cycle = find_cycle({t.source_id: t.requires for t in tasks})
    if cycle:
        raise UsageError(
            f"{source}: the dependencies form a cycle: {' -> '.join(cycle)}; a task cannot "
            "wait for itself, remove one of these dependencies"
        )


def find_cycle(requires: Mapping[str, Sequence[str]]) -> list[str]:
    """One dependency cycle as ``[a, b, ..., a]``, or ``[]`` (iterative: no recursion limit)."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for start in requires:
        if state.get(start):
            continue
        path: list[str] = [start]
        stack = [iter(requires.get(start, ()))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(requires.get(nxt, ())))
    return []


def node_id(text: str, prefix: str = "") -> str:
    """A plan id made of *text*: ASCII letters, digits, ``.``, ``_`` and ``-`` only."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:120]
    slug = prefix + slug if prefix or not slug[:1].isalnum() else slug
    return slug or "imported"


def named_test_file(text: str) -> str | None:
    """The first pytest file named in *text*, or None."""
    found = TEST_PATH.search(text)
    return found.group(1) if found else None
