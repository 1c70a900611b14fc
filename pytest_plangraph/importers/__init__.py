"""Importing what agents already write (issue 20 §7) into a starter plan.

* :mod:`.tasks` — the format-neutral task list both readers produce, and the checks of its ids,
  dependencies and cycles.
* :mod:`.speckit` — spec-kit's ``tasks.md``.
* :mod:`.taskmaster` — task-master's ``tasks.json`` (tagged and the older top-level form).
* :mod:`.starter` — the plan built from a task list, rendered as YAML and linted.

Everything here is pure: text in, values out. Bad input raises
:class:`~pytest_plangraph.errors.UsageError` with one message (where, what, how to fix).
"""
