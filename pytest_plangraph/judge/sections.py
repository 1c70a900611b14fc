"""Whether a configuration file holds a pytest section, as a subject bound absent.

pytest passes over a ``pyproject.toml``, ``tox.ini`` or ``setup.cfg`` without a pytest section
(``[tool.pytest…]``, ``[pytest]``, ``[tool:pytest]``) and reads the next file it finds; given
one, the file is what pytest reads instead. Evidence binds that fact, not the file's bytes (a
version bump in ``pyproject.toml`` changes nothing pytest reads): the subject
``<file>#pytest`` (:func:`section_subject`) is bound absent, and a snapshot finds it there
once the file holds such a section (:func:`section_file`, :func:`has_pytest_section`).

The test is on the text, line by line, and errs towards "there": a table header or dotted key
naming pytest, in any form a parser might take for one. A file it finds a section in though
pytest passed it over binds by its sha256 instead.
"""

from __future__ import annotations

import functools
import re

SECTION_SUFFIX = "#pytest"
"""What a configuration file's path is followed by to name its pytest section as a subject."""

SECTIONED = ("pyproject.toml", "tox.ini", "setup.cfg")
"""The names pytest looks at and passes over when they hold no pytest section."""

_TOML = r"^\s*(\[+\s*tool\s*\.\s*[\"']?pytest|tool\s*\.\s*[\"']?pytest|[\"']?pytest[\"']?\s*[.=])"
_INI = r"^\s*\[[^\]\n]*pytest"


@functools.cache
def _header(toml: bool) -> re.Pattern[str]:
    """The expression of a pytest section's header in a TOML file, or an INI file: compiled
    when a file is first looked at (most runs look at none)."""
    return re.compile(_TOML, re.M) if toml else re.compile(_INI, re.M | re.I)


def section_subject(path: str) -> str:
    """The subject that names the pytest section of the configuration file *path*."""
    return path + SECTION_SUFFIX


def section_file(subject: str) -> str | None:
    """The configuration file whose pytest section *subject* names, or None when it names
    none (a plain path)."""
    if not subject.endswith(SECTION_SUFFIX):
        return None
    path = subject[: -len(SECTION_SUFFIX)]
    return path if path.rpartition("/")[2] in SECTIONED else None


def has_pytest_section(name: str, text: str) -> bool:
    """Whether *text*, a configuration file called *name*, may hold a pytest section (a
    ``pyproject.toml``: a ``[tool.pytest…]`` table, or a ``pytest`` key that may make one;
    ``tox.ini`` and ``setup.cfg``: a section header naming pytest)."""
    return _header(name.endswith(".toml")).search(text) is not None
