"""Reading a repository's Python code for ``plangraph init``: its units, tests and imports.

A *unit* is what becomes one step: each module and each subpackage directly inside a top-level
package (``pkg/api.py``, ``pkg/store/``), the package's own ``__init__.py``, and each
top-level module. Imports are read with :mod:`ast` (nothing is imported or run); an import
under ``if TYPE_CHECKING:`` is not a dependency at run time and is left out.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..plan.paths import path_problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself needs tomli before Python 3.11
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

SKIPPED_DIRS = frozenset(
    {"venv", "env", "build", "dist", "node_modules", "site-packages", "__pycache__"}
)
"""Directories never read (besides hidden ones and ``*.egg-info``): environments and builds."""
TEST_DIRS = frozenset({"tests", "test", "testing"})
NOT_UNITS = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py"})


@dataclass
class Unit:
    """One future step: a module or package, its files and the module names it holds."""

    module: str
    """Dotted name (``pkg.store``), the step's id after ``step-``."""
    outputs: list[str]
    """Repository-relative paths: a ``.py`` file, or a package's ``DIR/**/*.py``."""
    files: list[str]
    """Every ``.py`` file of the unit."""
    title: str = ""
    imports: set[str] = field(default_factory=set)
    """Dotted names of the units it imports."""


@dataclass
class Scan:
    """What ``init`` found: units by module name and test files with the units they test."""

    units: dict[str, Unit]
    tests: dict[str, set[str]]
    markers: dict[str, list[str]] = field(default_factory=dict)
    """Criteria that tests already name in ``@pytest.mark.criterion("node/criterion")``, by
    node id, in the order first seen."""


def python_files(root: Path, top: str = "") -> Iterator[str]:
    """Repository-relative ``.py`` files under *top*, sorted, skipping hidden directories,
    virtual environments and builds."""
    start = root / top if top else root
    for here, dirs, files in os.walk(start):
        dirs[:] = sorted(d for d in dirs if not _skipped(d))
        rel = Path(here).relative_to(root).as_posix()
        for name in sorted(files):
            if name.endswith(".py"):
                yield name if rel == "." else f"{rel}/{name}"


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name.endswith(".egg-info")


def find_units(root: Path, packages: Iterable[str]) -> dict[str, Unit]:
    """The units of *packages* (directories relative to *root*), or of the packages and
    top-level modules found at the root and under ``src/`` when none are named."""
    chosen = list(packages) or _found_packages(root)
    units: dict[str, Unit] = {}
    for rel in chosen:
        if why := path_problem(rel):
            raise UsageError(f"--package {rel!r}: {why}")
        rel = rel.rstrip("/")
        path = root / rel
        if path.is_file() and rel.endswith(".py"):
            _add(units, root, _module_of(rel, root), [rel], [rel])
        elif path.is_dir():
            _package_units(units, root, rel)
        else:
            raise UsageError(
                f"--package {rel!r}: no such directory or .py file under {root}; name a package "
                "directory relative to the repository root"
            )
    return units


def _found_packages(root: Path) -> list[str]:
    found: list[str] = []
    for base in ("", "src"):
        where = root / base if base else root
        if base and (not where.is_dir() or (where / "__init__.py").exists()):
            continue
        for entry in sorted(where.iterdir()):
            rel = f"{base}/{entry.name}" if base else entry.name
            if entry.is_symlink():
                continue
            if entry.is_dir() and not _skipped(entry.name) and entry.name not in TEST_DIRS:
                if (entry / "__init__.py").is_file():
                    found.append(rel)
            elif _module_file(entry.name) and entry.is_file():
                found.append(rel)
    return found


def _module_file(name: str) -> bool:
    return name.endswith(".py") and name not in NOT_UNITS and not _test_name(name)


def _package_units(units: dict[str, Unit], root: Path, rel: str) -> None:
    """One unit per module and subpackage directly inside the package at *rel*, one for its
    ``__init__.py``; a directory without ``__init__.py`` is read as a folder of modules."""
    base = _module_of(rel, root) if (root / rel / "__init__.py").is_file() else ""
    for entry in sorted((root / rel).iterdir()):
        child = f"{rel}/{entry.name}"
        if entry.is_symlink():  # it may lead out of the repository; name it with --package
            continue
        if entry.is_dir() and not _skipped(entry.name) and (entry / "__init__.py").is_file():
            # its Python files, not the directory: __pycache__ changes whenever tests run
            files = list(python_files(root, child))
            _add(units, root, _join(base, entry.name), [f"{child}/**/*.py"], files)
        elif entry.is_file() and _module_file(entry.name) and entry.name != "__init__.py":
            _add(units, root, _join(base, entry.name[:-3]), [child], [child])
    init = f"{rel}/__init__.py"
    if (root / init).is_file():
        _add(units, root, base, [init], [init])


def _join(base: str, name: str) -> str:
    return f"{base}.{name}" if base else name


def _module_of(rel: str, root: Path) -> str:
    """``src/pkg/mod.py`` → ``pkg.mod`` when ``src`` is not a package itself."""
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    if len(parts) > 1 and parts[0] == "src" and not (root / "src/__init__.py").is_file():
        parts = parts[1:]
    return ".".join(parts)


def _add(
    units: dict[str, Unit], root: Path, module: str, outputs: list[str], files: list[str]
) -> None:
    if not module or module in units or not files:
        return
    first = next((f for f in files if f.endswith("/__init__.py")), files[0])
    units[module] = Unit(module, outputs, files, _title(root / first))


def _title(path: Path) -> str:
    """The first line of the module's (or package's) docstring."""
    tree = _parse(path)
    doc = ast.get_docstring(tree) if tree is not None else None
    paragraph = " ".join(doc.strip().split("\n\n")[0].split()) if doc else ""
    sentence = paragraph.split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= 120 else sentence[:119].rstrip() + "…"


def _parse(path: Path) -> ast.Module | None:
    """The module's syntax tree; None when it cannot be read or parsed (such a file still
    becomes part of a step, with no imports read from it)."""
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def imported_modules(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """Every dotted name *tree* imports (relative imports resolved against *module*):
    ``from a import b`` gives ``a.b`` (a module, or a name of ``a``: the owner lookup takes the
    longest prefix that is a module), ``from a import *`` gives ``a``; imports under
    ``if TYPE_CHECKING:`` are left out."""
    found: set[str] = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, module, is_package)
            if base is None:
                continue
            for alias in node.names:
                found.add(base if alias.name == "*" else _join(base, alias.name))
    return found


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of *tree* but those under ``if TYPE_CHECKING:`` (its ``else`` is kept);
    iterative, so deeply nested code cannot exhaust the stack."""
    stack: list[ast.AST] = [tree]
    while stack:
        for node in ast.iter_child_nodes(stack.pop()):
            if isinstance(node, ast.If) and _type_checking(node.test):
                stack.extend(node.orelse)
                yield from node.orelse
                continue
            yield node
            stack.append(node)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str | None:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    up = node.level - 1
    if up >= len(parts):
        return None  # climbs above the top package: nothing of ours
    parts = parts[: len(parts) - up]
    if node.module:
        parts.append(node.module)
    return ".".join(parts)


def test_files(root: Path) -> list[str]:
    """The test files pytest would collect by default: ``test_*.py`` and ``*_test.py`` under
    the configured ``testpaths`` (the whole repository when none are set)."""
    found: list[str] = []
    for top in testpaths(root) or [""]:
        if top and not (root / top).is_dir():
            continue
        found.extend(p for p in python_files(root, top) if _test_name(p.rpartition("/")[2]))
    return sorted(set(found))


test_files.__test__ = False  # type: ignore[attr-defined]


def _test_name(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def testpaths(root: Path) -> list[str]:
    """``testpaths`` of the project's pytest configuration, in pytest's order of files."""
    ini = root / "pytest.ini"
    if ini.is_file():
        return _ini_paths(ini, "pytest")
    toml = root / "pyproject.toml"
    if toml.is_file():
        try:
            data = tomllib.loads(toml.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            data = {}
        options = data.get("tool", {}).get("pytest", {}).get("ini_options")
        if isinstance(options, dict):
            paths = options.get("testpaths", [])
            return [paths] if isinstance(paths, str) else [str(p) for p in paths]
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if (root / name).is_file() and (paths := _ini_paths(root / name, section)):
            return paths
    return []


def _ini_paths(path: Path, section: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return []
    value = parser.get(section, "testpaths", fallback="")
    return [p.strip("/") for p in value.split() if not path_problem(p)]


def scan(root: Path, packages: Iterable[str], step: Callable[[str], None] = lambda _: None) -> Scan:
    """Read the units, their imports, and which test files test each unit (by name,
    ``test_<unit>.py`` or ``test_<unit>_*.py``, and by import); *step* is called per file."""
    units = find_units(root, packages)
    owner = {_module_of(rel, root): unit.module for unit in units.values() for rel in unit.files}
    for unit in units.values():
        for rel in unit.files:
            step(rel)
            tree = _parse(root / rel)
            if tree is not None:
                names = imported_modules(tree, _module_of(rel, root), rel.endswith("__init__.py"))
                unit.imports.update(_owners(names, owner) - {unit.module})
    tests: dict[str, set[str]] = {}
    markers: dict[str, list[str]] = {}
    for rel in test_files(root):
        step(rel)
        tree = _parse(root / rel)
        names = imported_modules(tree, _module_of(rel, root), False) if tree is not None else set()
        tested = _owners(names, owner) | _by_name(rel, units)
        if tested:
            tests[rel] = tested
        for ref in marked_criteria(tree) if tree is not None else ():
            node, _, criterion = ref.partition("/")
            if criterion not in markers.setdefault(node, []):
                markers[node].append(criterion)
    return Scan(units, tests, markers)


_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}/[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


def marked_criteria(tree: ast.Module) -> list[str]:
    """The ``node/criterion`` texts given to ``pytest.mark.criterion(...)`` (or to a
    ``mark.criterion`` reached another way) in *tree*; refs that are not two ids are left to
    the plugin to report."""
    found: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        if node.func.attr != "criterion" or not (
            isinstance(owner, ast.Attribute) and owner.attr == "mark"
        ):
            continue
        for arg in node.args:
            text = arg.value if isinstance(arg, ast.Constant) else None
            if isinstance(text, str) and _REF.match(text) and text not in found:
                found.append(text)
    return found


def _owners(names: set[str], owner: dict[str, str]) -> set[str]:
    """The units that hold the imported *names* (``a.b.c`` belongs to the unit of the
    longest prefix that is a module of some unit)."""
    found: set[str] = set()
    for name in names:
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            if (hit := owner.get(".".join(parts[:end]))) is not None:
                found.add(hit)
                break
    return found


def _by_name(rel: str, units: dict[str, Unit]) -> set[str]:
    stem = rel.rpartition("/")[2].removesuffix(".py")
    stem = stem.removeprefix("test_").removesuffix("_test")
    return {
        module
        for module in units
        if (short := module.rpartition(".")[2]) and (stem == short or stem.startswith(short + "_"))
    }
