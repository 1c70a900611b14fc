"""Write :mod:`pytest_plangraph.plan._prebuilt`: the builders of the package's runtime classes
(:func:`~.frozen.builder_source`) compiled ahead of time, so that a process does not compile
them again (about 12 M instructions for the seven classes of a plan, in every run).

Run ``python -m pytest_plangraph.plan.prebuild`` after changing a field table of a class of
:mod:`.model`, :mod:`.evidence`, :mod:`.events` or :mod:`.policy`; ``--check`` exits 1 when
the module written is not the one on disk (``tests/test_prebuilt.py`` checks it too). A
builder whose source differs from the one written is compiled at run time as before, so a
module left behind costs time, never an answer.
"""

from __future__ import annotations

import sys
import textwrap
from importlib import import_module
from pathlib import Path

from .frozen import Frozen, builder_source

__all__ = ["MODULES", "main", "render"]

MODULES = ("model", "evidence", "events", "policy")
"""The modules of :mod:`pytest_plangraph.plan` whose classes are built ahead of time."""

TARGET = Path(__file__).with_name("_prebuilt.py")

HEAD = '''"""The builders of the package's runtime classes, compiled ahead of time.

Written by ``python -m pytest_plangraph.plan.prebuild`` (see that module): do not edit. Each
entry is the builder's source, as :func:`~pytest_plangraph.plan.frozen.builder_source`
writes it, and a function that makes it from the names the source reads.
"""

# mypy: ignore-errors
# fmt: off
'''


def _classes() -> list[type[Frozen]]:
    """Every subclass of :class:`~.frozen.Frozen` the modules of :data:`MODULES` define,
    by name."""
    for name in MODULES:
        import_module(f"{__package__}.{name}")
    found: dict[str, type[Frozen]] = {}
    pending = list(Frozen.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        module = cls.__module__
        if module.rpartition(".")[0] == __package__ and module.rpartition(".")[2] in MODULES:
            found[f"{module}.{cls.__qualname__}"] = cls
    return [found[key] for key in sorted(found)]


def render() -> str:
    """The text of :mod:`._prebuilt` for the classes as they are now."""
    parts = [HEAD]
    entries = []
    for number, cls in enumerate(_classes()):
        source, scope = builder_source(cls)
        parts.append(
            f"\ndef _{number}({', '.join(scope)}):\n"
            f"{textwrap.indent(source, '    ')}\n    return build\n"
        )
        entries.append(f"    {cls.__module__ + '.' + cls.__qualname__!r}: ({source!r}, _{number}),")
    parts.append("\nBUILDERS = {\n" + "\n".join(entries) + "\n}\n")
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Write the module (or, with ``--check``, say whether the one on disk is current)."""
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if args == ["--check"]:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.name} is out of date: run python -m {__package__}.prebuild")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
