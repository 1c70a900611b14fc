"""The folders a pytest configuration's ``pythonpath`` setting puts on ``sys.path``.

A test file's ``from marks import PATTERN`` finds ``lib/marks.py`` when the run's
configuration says ``pythonpath = lib``: :mod:`pytest_plangraph.vcs.quotes` looks for the
modules a test file imports there too (:mod:`pytest_plangraph.vcs.imports`). Which
configuration file a run read is not known from a walk's key, so every pytest configuration
file in the walk's folder and each folder above it counts (``pytest.ini``, ``.pytest.ini``,
``pyproject.toml``, ``tox.ini``, ``setup.cfg``): more folders only cost staleness. A file
that cannot be read or parsed names none (pytest refuses it too), nor does one that is not a
regular file (a FIFO, never waited on; a device such as ``/dev/zero``, never read without
end) or one of more than :data:`MAX_CONFIG_BYTES` (a huge sparse file, never read whole).
"""

from __future__ import annotations

import os
import sys

from ..hashes import sha256_hex
from ..plan.paths import normalize
from ..regularfile import read_regular

__all__ = ["CONFIGS", "MAX_CONFIG_BYTES", "PythonPath"]

MAX_CONFIG_BYTES = 64 * 1024 * 1024
"""The largest configuration file read for its ``pythonpath``."""

CONFIGS = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", ""),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)
"""Each pytest configuration file's name and the section of its settings (none: TOML)."""


class PythonPath:
    """The ``pythonpath`` folders of the configuration files under *root*, each file read
    once; :attr:`read` holds the sha256 of each file read (a kept answer watches it)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.read: dict[str, str] = {}
        self._entries: dict[str, tuple[str, ...]] = {}

    def folders(self, folder: str) -> frozenset[str]:
        """The repository folders the configuration files in *folder* (``""``: the root) and
        in each folder above it name in ``pythonpath``, each relative to its file's folder;
        an entry that leaves the repository names none."""
        found: set[str] = set()
        while True:
            for name, section in CONFIGS:
                for entry in self._pythonpath(f"{folder}/{name}" if folder else name, section):
                    joined = normalize(f"{folder}/{entry}" if folder else entry)
                    if not os.path.isabs(entry) and not joined.startswith(".."):
                        found.add("" if joined == "." else joined)
            if not folder:
                return frozenset(found)
            folder = folder.rpartition("/")[0]

    def _pythonpath(self, path: str, section: str) -> tuple[str, ...]:
        if path not in self._entries:
            self._entries[path] = ()
            try:
                data = read_regular(os.path.join(self.root, path), MAX_CONFIG_BYTES)
            except OSError:  # a FIFO, a device, a directory, too large: as unreadable
                return ()
            self.read[path] = sha256_hex(data)
            self._entries[path] = _entries(data.decode("utf-8", errors="replace"), section)
        return self._entries[path]


def _entries(text: str, section: str) -> tuple[str, ...]:
    """The ``pythonpath`` entries of a configuration file's *text* (an INI *section*, or
    TOML's ``[tool.pytest.ini_options]`` or ``[tool.pytest]`` when *section* is empty)."""
    value: object = None
    if section:  # read as pytest reads it (pytest imported iniconfig already)
        import iniconfig

        try:
            value = iniconfig.IniConfig("config", data=text).get(section, "pythonpath")
        except iniconfig.ParseError:
            return ()
    else:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pytest itself needs tomli before Python 3.11
            import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
        try:
            tool = tomllib.loads(text).get("tool", {}).get("pytest", {})
        except (tomllib.TOMLDecodeError, AttributeError):
            return ()
        if isinstance(tool, dict):
            options = tool.get("ini_options", {})
            value = [
                *_listed(options.get("pythonpath") if isinstance(options, dict) else None),
                *_listed(tool.get("pythonpath")),
            ]
    return tuple(_listed(value))


def _listed(value: object) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str) and item]
    return []
