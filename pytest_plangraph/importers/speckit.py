"""spec-kit's ``tasks.md``: phases, checkbox tasks and their dependencies.

What is read::

    # Tasks: Feature name                       -> the plan id and title
    ## Phase 3: User Story 1 - Login (Priority: P1)   -> a milestone node ``phase-3``
    **Independent Test**: a user can log in     -> an approval criterion of that milestone
    - [ ] T012 [P] [US1] Create User model in src/models/user.py   -> step ``T012``
    - [ ] T014 [US1] Implement service in src/services/auth.py (depends on T012, T013)
    ## Dependencies & Execution Order
    - T014 depends on T012, T013   /   T012 -> T014   /   T010-T012 before T014

A task's description is its title and the assertion of its criterion ``ac-done``; a test file it
names (``tests/contract/test_login.py``) makes that criterion a ``test`` verifier of that file, any
other file becomes the task's output, and no file leaves an ``approval`` verifier to fill in.
Phases follow one another (each phase ``requires`` the one before): the prose of the
dependencies section is not read, and is listed as unmapped.
"""

from __future__ import annotations

import re
from itertools import pairwise

from ..errors import UsageError
from .tasks import FILE_PATH, Task, TaskList, check, named_test_file, node_id

_TITLE = re.compile(r"^#\s+Tasks:\s*(.+?)\s*$")
_PHASE = re.compile(r"^##\s+Phase\s+([0-9]+|[A-Za-z]+)\s*[:.-]?\s*(.*?)\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^##\s+(.*?)\s*$")
_TASK = re.compile(r"^\s*[-*]\s+\[([ xX])\]\s+(T[0-9]+)\b\s*(.*?)\s*$")
_CHECKBOX = re.compile(r"^\s*[-*]\s+\[[ xX]\]\s+")
_MARKER = re.compile(r"^\[(P|US[0-9]+|[A-Za-z]+[0-9]*)\]\s*")
_INLINE_DEPS = re.compile(r"\((?:depends on|after|requires|blocked by)\s+([^)]*)\)", re.IGNORECASE)
_ID = re.compile(r"\bT([0-9]+)\b")
_RANGE = re.compile(r"\bT([0-9]+)\s*(?:-|–|\.\.)\s*T([0-9]+)\b")
_INDEPENDENT_TEST = re.compile(r"^\*\*Independent Test\*\*:\s*(.+?)\s*$")
_DEPENDS = re.compile(r"(.*?)\b(?:depends on|requires|after|blocked by)\b(.*)", re.IGNORECASE)
_ARROW = re.compile(r"(.*?)(?:->|→|before|blocks)(.*)", re.IGNORECASE)


def read_speckit(text: str, source: str) -> TaskList:
    """The tasks of a spec-kit ``tasks.md``; UsageError for duplicate or unknown task ids and
    dependency cycles."""
    title = ""
    tasks: list[Task] = []
    unmapped: list[str] = []
    phases: list[Task] = []
    phase: Task | None = None
    section = ""
    dependency_lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"line {number}"
        if not title and (found := _TITLE.match(line)):
            title = found.group(1)
        elif found := _PHASE.match(line):
            phase = _phase(found.group(1), found.group(2), where)
            phases.append(phase)
            section = "phase"
        elif found := _SECTION.match(line):
            section = "dependencies" if "depend" in found.group(1).lower() else "other"
            phase = None if section == "dependencies" else phase
        elif found := _TASK.match(line):
            task = _task(found, where, phase, source)
            if found.group(1) in "xX":
                unmapped.append(
                    f"{where}: {task.source_id} is checked done in tasks.md; the gate decides "
                    "from evidence, so the box is not carried over"
                )
            tasks.append(task)
        elif _CHECKBOX.match(line):
            unmapped.append(f"{where}: a checkbox without a task id (T001): {line.strip()}")
        elif phase is not None and (found := _INDEPENDENT_TEST.match(line)):
            phase.criteria.append(("ac-independent-test", found.group(1), None))
        elif section == "dependencies" and _ID.search(line):
            dependency_lines.append((number, line))
    if not tasks:
        raise UsageError(
            f"{source}: no task found; expected spec-kit lines such as "
            "`- [ ] T001 [P] [US1] Create the model in src/models/user.py`"
        )
    for number, line in dependency_lines:
        if not _dependency_line(line, tasks, f"{source}: line {number}"):
            unmapped.append(f"line {number}: dependency text not understood: {line.strip()}")
    unmapped += _chain(phases)
    result = [*phases, *tasks]
    check(result, source)
    name = title or source.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return TaskList(node_id(name.lower()), name, result, unmapped)


def _phase(number: str, title: str, where: str) -> Task:
    phase_id = node_id(f"phase-{number.lower()}")
    return Task(phase_id, phase_id, title or f"Phase {number}", where, kind="milestone")


def _task(found: re.Match[str], where: str, phase: Task | None, source: str) -> Task:
    """A task line's step: markers dropped, inline dependencies read, a named file used."""
    source_id, rest = found.group(2), found.group(3)
    while marker := _MARKER.match(rest):
        rest = rest[marker.end() :]
    requires: list[str] = []
    for deps in _INLINE_DEPS.finditer(rest):
        requires += _ids(deps.group(1), f"{source}: {where}")
    description = _INLINE_DEPS.sub("", rest).strip() or source_id
    task = Task(source_id, source_id, description, where, requires=requires)
    task.parent = phase.node_id if phase is not None else None
    test = named_test_file(description)
    task.criteria.append(("ac-done", description, test))
    if test is None and (path := FILE_PATH.search(description)):
        task.outputs.append(path.group(1))
    return task


_MAX_RANGE = 10_000
"""Task ids one range (``T001-T099``) may span: a file holds far fewer tasks."""


def _ids(text: str, where: str) -> list[str]:
    """The task ids in *text*, ranges (``T010-T012``) expanded, in order."""
    found: list[str] = []
    for low, high in _RANGE.findall(text):
        if int(high) - int(low) > _MAX_RANGE:
            raise UsageError(
                f"{where}: the range T{low}-T{high} spans more than {_MAX_RANGE} task ids; "
                "list the ids it means"
            )
        width = len(low)
        found += [f"T{n:0{width}d}" for n in range(int(low), int(high) + 1)]
    text = _RANGE.sub("", text)
    found += [f"T{digits}" for digits in _ID.findall(text)]
    return list(dict.fromkeys(found))


def _dependency_line(line: str, tasks: list[Task], where: str) -> bool:
    """Read ``A depends on B`` or ``B -> A`` into the tasks' ``requires``; False when the line
    is not of either shape."""
    by_id = {t.source_id: t for t in tasks}
    if found := _DEPENDS.match(line):
        dependents, prerequisites = _ids(found.group(1), where), _ids(found.group(2), where)
    elif found := _ARROW.match(line):
        prerequisites, dependents = _ids(found.group(1), where), _ids(found.group(2), where)
    else:
        return False
    if not dependents or not prerequisites:
        return False
    for dependent in dependents:
        task = by_id.get(dependent)
        if task is None:
            raise UsageError(
                f"{where}: the dependencies section names {dependent}, which is not a task of "
                "this file; fix the id or remove the line"
            )
        task.requires += [p for p in prerequisites if p not in task.requires]
    return True


def _chain(phases: list[Task]) -> list[str]:
    """Each phase requires the one before it (spec-kit's default order)."""
    for before, after in pairwise(phases):
        after.requires.append(before.source_id)
    if len(phases) > 1:
        return [
            "phases: each phase requires the one before (spec-kit's default order); the prose "
            "of `Dependencies & Execution Order` is not read: edit the phase edges if stories "
            "may run in parallel"
        ]
    return []
