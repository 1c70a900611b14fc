"""``plangraph status`` after one node's title was edited, answered from the answer kept for
the plan before the edit: no plan read, no lint, no log read, no derivation.

A title is any text and counts nowhere but in its node's canonical form (the plan's digest):
no node's state reads it (the judge reads the criterion digests, the files and the events,
never the plan's digest nor a title), lint reads none, and the text table shows none. So the
table, its warnings and the ``--check`` failures printed for the plan before the edit are the
answer for the plan after it, when everything else the kept answer depends on is as kept
(:func:`~pytest_plangraph.derived.kept.kept_status` checks it all as for a hit). Only the
``text`` format is answered so: ``json`` prints the plan's digest and version (and registers
a new digest in the store), ``markdown`` the titles.

The edit is told from the plan file's bytes alone
(:func:`~pytest_plangraph.plan.retitle.title_edit`: the change inside one item of the list of
nodes, whose two texts, each read alone as YAML, differ by a ``title`` that is text). It needs
the bytes the answer was kept for and where the list of nodes lies in them:

* the bytes are those of ``lastread.txt``, taken only when their sha256 is the one the kept
  answer names for the plan file;
* the head (the list's first item, its end, the items' indentation, how many values the plan
  holds) is the one kept inside the answer's record, which is tagged with this user's key: it
  was made by the process that read those bytes by blocks or patched them
  (:data:`~pytest_plangraph.plan.retitle.LAST_HEAD`), or taken when the answer was kept from
  ``lastread.txt`` under a seal of this user's salt with the bytes' cache key
  (:func:`~pytest_plangraph.plan.retitle.sealed_head`), never from a file another could have
  written.

An answer kept without a head is a miss: the next status reads the plan (patching it in the one
node) and keeps its answer with the head. The answer found is kept under the new bytes, with
their head, and the new bytes as ``lastread.txt`` (so the next title edit is compared with
them). Only an answer that printed no warning stands for other bytes: a warning names lines of
the plan file. A cache never decides: every miss is the command run in full
(``tests/test_status_retitled.py``).
"""

from __future__ import annotations

import time
from pathlib import Path

from ..hashes import sha256_hex
from ..plan.cache import cache_dir_of
from .watch import file_entry

TYPE_CHECKING = False  # typing is not imported by a kept answer's hit
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FORMAT", "head_of", "kept_retitled", "retitled_plan"]

FORMAT = "status-text"
"""The kept answer a title edit leaves standing (see the module docstring)."""


def head_of(cache_key: str | None, store_path: Path) -> dict[str, Any] | None:
    """The head of the plan bytes whose cache key is *cache_key* (the plan just read), as this
    process or this user kept it (:func:`~pytest_plangraph.plan.retitle.sealed_head`); None
    when there is none."""
    if cache_key is None:
        return None
    from ..plan.retitle import sealed_head

    return sealed_head(cache_dir_of(store_path), cache_key)


def retitled_plan(plan_path: Path, store_path: Path, record: dict[str, Any]) -> Any:
    """What to keep when the plan file at *plan_path* is the plan the kept *record* was kept
    for with one node's title edited (see the module docstring): ``(entry, head, raw)``, the
    plan file's new entry, the head and the bytes of the new plan; None otherwise."""
    from ..errors import PlanError
    from ..plan.file import CACHE_MIN_BYTES, MAX_PLAN_BYTES, MAX_YAML_NODES, _raw
    from ..plan.retitle import _last, title_edit

    head = record.get("title")
    answer = record["answer"]
    if not isinstance(head, dict) or not isinstance(answer, list) or answer[1] != []:
        return None  # no head kept, or a warning that names lines of the plan file
    if plan_path.suffix.lower() == ".json":
        return None
    started = time.time_ns()
    try:
        raw = _raw(plan_path, str(plan_path))
        found = _last(cache_dir_of(store_path))
    except (OSError, PlanError, ValueError, UnicodeError):
        return None
    if found is None or not CACHE_MIN_BYTES <= len(raw) <= MAX_PLAN_BYTES:
        return None
    old_raw = found[2]
    # the bytes the answer was kept for, hashed once the edit is one item's
    vouched = lambda: sha256_hex(old_raw) == record["plan"][1]  # noqa: E731
    new_head = title_edit(old_raw, head, raw, str(plan_path), MAX_YAML_NODES, vouched)
    if new_head is None:
        return None
    entry = file_entry(str(plan_path.parent), plan_path.name, sha256_hex(raw), started)
    return None if entry is None else (entry, new_head, raw)


def kept_retitled(store_path: Path, record: dict[str, Any], found: Any) -> dict[str, Any]:
    """*record* (a kept answer, everything else it depends on found as kept) as it is kept
    under the new plan bytes *found* gives (:func:`retitled_plan`); those bytes are kept as
    ``lastread.txt``."""
    from ..plan.cache import cache_key
    from ..plan.retitle import keep_bytes

    entry, head, raw = found
    keep_bytes(cache_dir_of(store_path), cache_key(raw), raw, head)
    return {**record, "plan": entry[1:], "title": head}
