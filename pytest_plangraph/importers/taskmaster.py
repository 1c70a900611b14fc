"""task-master's ``tasks.json``: tasks with dependencies, test strategies and subtasks.

Two shapes are read: the tagged one, ``{"master": {"tasks": [...], "metadata": {...}}, ...}``
(the tag ``master`` unless another is chosen), and the older ``{"tasks": [...]}``. A task is
``{"id", "title", "description", "details", "testStrategy", "status", "dependencies",
"priority", "subtasks"}``; a subtask's ``dependencies`` name sibling subtasks by number or any
subtask as ``"PARENT.SUB"``, and a task's may name a subtask the same way.

Task ``N`` becomes node ``task-N`` (a ``milestone`` when it has subtasks, whose nodes
``task-N.M`` name it as parent). Its ``testStrategy`` (else its description) is the assertion
of criterion ``ac-done``: a ``test`` verifier when it names a pytest file, else ``approval``.
``cancelled`` carries over; ``details``, ``priority`` and the other statuses are listed as
unmapped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import TOO_LONG_NUMBER, UsageError
from .tasks import Task, TaskList, check, named_test_file, node_id

_CARRIED_STATUSES = frozenset({"pending", "cancelled", "todo", ""})


def read_taskmaster(text: str, source: str, tag: str | None = None) -> TaskList:
    """The tasks of a task-master ``tasks.json``; UsageError for malformed JSON, an unknown
    shape or tag, unknown dependency ids and cycles."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{source}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); fix the file"
        ) from None
    except RecursionError:
        raise UsageError(f"{source}: nested too deeply to be a tasks.json") from None
    except ValueError:  # a whole number of more digits than Python converts
        raise UsageError(f"{source}: {TOO_LONG_NUMBER}; fix the file") from None
    chosen, entries = _tasks_of(data, source, tag)
    tasks: list[Task] = []
    unmapped: list[str] = []
    for i, entry in enumerate(entries):
        tasks += _task(entry, f"tasks[{i}]", source, unmapped)
    check(tasks, source)
    meta = data.get("meta")
    project = meta.get("projectName") if isinstance(meta, Mapping) else None
    name = project if isinstance(project, str) and project.strip() else f"task-master-{chosen}"
    title = f"Imported from task-master ({chosen or 'tasks'})"
    return TaskList(node_id(name.lower()), title, tasks, unmapped)


def _tasks_of(data: Any, source: str, tag: str | None) -> tuple[str | None, list[Any]]:
    if not isinstance(data, Mapping):
        raise UsageError(
            f'{source}: expected an object {{"master": {{"tasks": [...]}}}} or {{"tasks": [...]}}'
        )
    if "tasks" in data and tag is None:
        return None, _list(data["tasks"], f"{source}: tasks")
    tags = [k for k, v in data.items() if isinstance(v, Mapping) and "tasks" in v]
    wanted = tag or ("master" if "master" in tags or len(tags) != 1 else tags[0])
    if wanted not in tags:
        known = ", ".join(tags) or "none"
        raise UsageError(
            f"{source}: no tag {wanted!r} holding tasks (tags found: {known}); "
            "choose one with --tag"
        )
    return wanted, _list(data[wanted]["tasks"], f"{source}: {wanted}.tasks")


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise UsageError(f"{where}: expected a list, not {type(value).__name__}")
    return value


def _id(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip():
        raise UsageError(f"{where}: expected a task id (a number or text), not {value!r}")
    return str(value).strip()


def _text(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UsageError(f"{where}.{key}: expected text, not {type(value).__name__}")
    return " ".join(value.split())


def _task(entry: Any, where: str, source: str, unmapped: list[str]) -> list[Task]:
    if not isinstance(entry, Mapping):
        raise UsageError(f"{source}: {where}: expected a task object")
    ident = _id(entry.get("id"), f"{source}: {where}.id")
    subtasks = _list(entry.get("subtasks") or [], f"{source}: {where}.subtasks")
    task = _node(entry, ident, f"task-{ident}", where, source, unmapped)
    task.requires = [
        _dep(d, None, f"{source}: {where}.dependencies") for d in _deps(entry, where, source)
    ]
    task.kind = "milestone" if subtasks else "step"
    found = [task]
    for j, sub in enumerate(subtasks):
        sub_where = f"{where}.subtasks[{j}]"
        if not isinstance(sub, Mapping):
            raise UsageError(f"{source}: {sub_where}: expected a subtask object")
        sub_id = f"{ident}.{_id(sub.get('id'), f'{source}: {sub_where}.id')}"
        child = _node(sub, sub_id, f"task-{sub_id}", sub_where, source, unmapped)
        child.parent = task.node_id
        child.requires = [
            _dep(d, ident, f"{source}: {sub_where}.dependencies")
            for d in _deps(sub, sub_where, source)
        ]
        found.append(child)
    return found


def _deps(entry: Mapping[str, Any], where: str, source: str) -> list[Any]:
    return _list(entry.get("dependencies") or [], f"{source}: {where}.dependencies")


def _dep(value: Any, parent: str | None, where: str) -> str:
    """A dependency as a source id: ``N`` (a task, or a sibling subtask under *parent*) or
    ``N.M`` (a subtask)."""
    text = _id(value, where)
    if parent is not None and "." not in text:
        return f"{parent}.{text}"
    return text


def _node(
    entry: Mapping[str, Any], ident: str, node: str, where: str, source: str, unmapped: list[str]
) -> Task:
    at = f"{source}: {where}"
    title = _text(entry, "title", at) or _text(entry, "description", at) or f"task {ident}"
    strategy = _text(entry, "testStrategy", at)
    assertion = strategy or _text(entry, "description", at) or title
    task = Task(ident, node_id(node), title, where)
    task.criteria.append(("ac-done", assertion, named_test_file(strategy)))
    status = _text(entry, "status", at).lower()
    task.cancelled = status == "cancelled"
    if status not in _CARRIED_STATUSES:
        unmapped.append(
            f"{where}: task {ident} has status {status!r}; the gate decides from evidence, so it "
            "is not carried over"
        )
    if _text(entry, "details", at):
        unmapped.append(
            f"{where}: task {ident}: `details` is not carried (a node has no free text)"
        )
    if _text(entry, "priority", at):
        unmapped.append(f"{where}: task {ident}: `priority` is not carried")
    return task
