"""The package's compiled modules kept in one file, so a process reads one file, not one a module.

A ``pytest --plangraph`` run imports about 125 of this package's modules, and Python's
finders look for each one on its package's path, check its source's stat, open its bytecode
file and read it (pytest's assertion rewriter and the bytecode guard asked first): about
20 M instructions of the run's start, the same in every run. With :func:`install`, a finder
placed first on ``sys.meta_path`` serves the package's modules from one file beside their
bytecode (``__pycache__/plangraph-modules.<cache tag>.bin``), read once; :func:`uninstall`
(when pytest ends) and the process's end take it off again.

The file holds, for each module, its path in the package, whether it is a package, its
source's ``st_mtime_ns`` and size when it was compiled, and its code object (marshalled, read
only when the module is imported). A module is served from it only while its source has that
same modification time to the nanosecond and that same size; any other module (a source
edited, or not in the file yet) is left to the finders after this one, which import it as
usual. A name is served only from its own source in the package (an index naming a module
outside the package, or a module with another's source, is not read), and a piece that is not
the code compiled from that source is left to the other finders too. Python's own bytecode
files are trusted by the source's modification time in whole seconds and its size, and the
file is written from them, so it is trusted by no less than they are (a source changed within
the same second to the same size keeps the code Python's bytecode file holds, in the file as
there), and it is where they are: writing it needs the rights that writing them does (and it
is written as they are, under a name created new, never through a link planted there). A file
that is not a regular one (a FIFO) is not read.

The file is written when a process that installed the finder ends having imported a module of
the package from its source (missing from the file, or changed since), with every module of
the package, so that one process's writing serves the modules any later one imports: the
entries still current as they are, and each other module compiled the way the import system
does (its bytecode file read when current, else its source compiled), its source's stat taken
before and after (a source changed meanwhile is left out). It is written whole under a
temporary name and renamed over the old one, so a reader meets the old file or the new, never
a part. Nothing is written when Python writes no bytecode (``-B``,
``PYTHONDONTWRITEBYTECODE``), and a folder that cannot be written (an installation owned by
another user) leaves the modules to Python's finders.

The finder only serves code: nothing this package decides is read from the file, and deleting
it changes no answer. The modules imported before :func:`install` (this package's
``__init__``, the pytest entry point, the command line's) are imported as usual.
"""

from __future__ import annotations

import atexit
import marshal
import os
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, ModuleType
    from typing import TypeGuard

PACKAGE = __name__.rpartition(".")[0]
"""This package's name (``pytest_plangraph``): the modules served are its own."""
_PREFIX = PACKAGE + "."
ROOT = os.path.dirname(os.path.abspath(__file__))
"""The package's folder: each served module's source is found from it."""
FORMAT = b"plangraph-modules 1\n"
"""The file's first bytes; then Python's bytecode magic number, where the index starts (8 bytes,
little-endian), each module's marshalled code, and the marshalled index."""
_HEAD = len(FORMAT) + 4 + 8
"""Where the first module's code starts."""

Entry = tuple[str, bool, int, int, int, int]
"""A module's place in the file: its source relative to :data:`ROOT`, whether it is a package,
its source's ``st_mtime_ns`` and size, and where its marshalled code starts and ends."""


def bundle_path() -> str | None:
    """Where the file is kept: beside the package's ``__init__`` bytecode (under
    ``sys.pycache_prefix`` when that is set), named by the interpreter's cache tag and
    optimization level; None when the interpreter keeps no bytecode cache."""
    from importlib._bootstrap_external import cache_from_source  # imported: no cost

    try:
        cached = cache_from_source(os.path.join(ROOT, "__init__.py"))
    except NotImplementedError:  # no cache tag
        return None
    folder, name = os.path.split(cached)
    return os.path.join(folder, "plangraph-modules" + name[len("__init__") : -len(".pyc")] + ".bin")


class BundledLoader(SourceFileLoader):
    """The standard loader of a source file, whose code for its module comes from the file."""

    piece: memoryview | None = None
    missed: list[str] | None = None
    """The finder's list of the modules it could not serve (a damaged piece of code joins it,
    so the file is written again)."""

    def get_code(self, fullname: str) -> CodeType | None:
        """The module's code from the file (once: a second request reads the source's
        bytecode as usual); a piece that is not a code object is told as missed and the
        module's code is read as usual."""
        piece, self.piece = self.piece, None
        if piece is None or fullname != self.name:
            return super().get_code(fullname)
        try:
            code = marshal.loads(piece)
        except (EOFError, ValueError, TypeError):
            code = None
        relative = self.path[len(ROOT) :]
        if type(code) is not _CODE or not code.co_filename.endswith(relative):
            # a damaged piece, or another module's code: the module is imported as usual
            if self.missed is not None:
                self.missed.append(fullname)
            return super().get_code(fullname)
        _fix_filename(code, self.path)
        return code


class BundleFinder:
    """Finds the package's modules in the file's index; a module not there, or whose source
    changed since it was compiled, is left to the finders after this one."""

    def __init__(self, path: str, data: bytes, index: dict[str, Entry]) -> None:
        self.path, self.data, self.index = path, data, index
        self.view = memoryview(data)
        self.missed: list[str] = []

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """The spec of *fullname* served from the file, or None."""
        entry = self.index.get(fullname)
        if entry is None:
            if fullname.startswith(_PREFIX):
                self.missed.append(fullname)
            return None
        relative, package, mtime, size, start, end = entry
        origin = ROOT + relative
        try:
            stat = os.stat(origin)
        except OSError:
            stat = None
        if stat is None or stat.st_mtime_ns != mtime or stat.st_size != size:
            self.missed.append(fullname)
            return None
        loader = BundledLoader(fullname, origin)
        loader.piece, loader.missed = self.view[start:end], self.missed
        spec = ModuleSpec(fullname, loader, origin=origin, is_package=package)
        if package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        spec.has_location = True
        return spec

    def invalidate_caches(self) -> None:
        """Nothing is cached beyond the file's index (part of the finder protocol)."""


_INSTALLED: list[BundleFinder] = []
"""This process's finder, once made (one a process: its file read once, one exit handler)."""


def install() -> BundleFinder | None:
    """Put the finder first on ``sys.meta_path``, made once a process, and have the file written
    when the process ends, if it was missing a module or held a changed one; the finder, or
    None when the interpreter keeps no bytecode cache. :func:`uninstall` takes it off again
    (a pytest run ending inside a longer process)."""
    if _INSTALLED:
        finder = _INSTALLED[0]
    else:
        path = bundle_path()
        if path is None:
            return None
        finder = BundleFinder(path, *_read(path))
        _INSTALLED.append(finder)
        atexit.register(finish, finder)
    if finder not in sys.meta_path:
        sys.meta_path.insert(0, finder)
    return finder


def uninstall() -> None:
    """Take this process's finder off ``sys.meta_path`` (the package's modules imported later
    are found as usual)."""
    for finder in _INSTALLED:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)


def finish(finder: BundleFinder) -> None:
    """At the process's end: take the finder off ``sys.meta_path``, then :func:`refresh`. A
    finder left there through the interpreter's shutdown keeps pytest's and this package's
    modules alive past its last collection, which then clears them one by one (about 16 M
    instructions of a ``--plangraph`` run's exit)."""
    uninstall()
    refresh(finder)


def _read(path: str) -> tuple[bytes, dict[str, Entry]]:
    """The file's bytes and index; nothing when it is missing, unreadable or of another format
    or Python."""
    import stat
    from importlib._bootstrap_external import MAGIC_NUMBER

    # as regularfile.read_regular, written out: that module is not imported before the finder
    try:  # not blocking on a FIFO planted there; only a regular file is read
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return b"", {}
    try:
        with open(descriptor, "rb") as file:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return b"", {}
            data = file.read()
    except OSError:
        return b"", {}
    if data[: len(FORMAT)] != FORMAT or data[len(FORMAT) : len(FORMAT) + 4] != MAGIC_NUMBER:
        return b"", {}
    start = int.from_bytes(data[len(FORMAT) + 4 : _HEAD], "little")
    try:
        index = marshal.loads(memoryview(data)[start:]) if _HEAD <= start <= len(data) else None
    except (EOFError, ValueError, TypeError):
        return b"", {}
    if not _well_formed(index, start):
        return b"", {}
    return data, index


def _well_formed(index: object, limit: int) -> TypeGuard[dict[str, Entry]]:
    """True when *index* maps names of the package's modules to entries of the right types,
    each naming the module's own source, whose code lies before *limit* (where the index
    starts). Plain tests, once a process for some 250 entries."""
    if type(index) is not dict:
        return False
    sep = os.sep
    for name, entry in index.items():
        if type(name) is not str or type(entry) is not tuple or len(entry) != 6:
            return False
        relative, package, mtime, size, start, end = entry
        if (
            type(package) is not bool
            or sep in name  # no name's source lies outside the package
            or relative != _source(name, package)  # a name of the package, with its own source
            or type(mtime) is not int
            or type(size) is not int
            or type(start) is not int
            or type(end) is not int
            or not _HEAD <= start <= end <= limit
        ):
            return False
    return True


def _source(name: str, package: bool) -> str | None:
    """The source of module *name* relative to :data:`ROOT` (from the separator on), None
    for a name outside this package."""
    if name == PACKAGE and package:
        return os.sep + "__init__.py"
    if not name.startswith(_PREFIX):
        return None
    path = os.sep + name[len(_PREFIX) :].replace(".", os.sep)
    return path + os.sep + "__init__.py" if package else path + ".py"


def refresh(finder: BundleFinder) -> bool:
    """Write the file again, with every module of the package, when a module of the package
    was imported from its source in this process (after :func:`install`); True when it was
    written. The entries still current are kept as they are; the others are compiled."""
    if not _imported(finder) or sys.dont_write_bytecode:
        return False
    current = {}
    missed = set(finder.missed)  # a damaged piece of code is compiled again
    for name, (relative, package, mtime, size, start, end) in finder.index.items():
        if name not in missed and _current(ROOT + relative, mtime, size):
            current[name] = (relative, package, mtime, size, bytes(finder.view[start:end]))
    pieces: dict[str, tuple[str, bool, int, int, bytes]] = {}
    for name, relative, package in _modules():
        piece = current.get(name)
        if piece is None or piece[:2] != (relative, package):
            piece = _compiled(name, relative, package)
        if piece is not None:
            pieces[name] = piece
    try:
        _write(finder.path, pieces)
    except OSError:
        return False
    return True


def _imported(finder: BundleFinder) -> list[str]:
    """The package's modules the finder did not serve that were imported from their own
    source file in the package (not a module put in ``sys.modules`` under another's name)."""
    found = []
    for name in finder.missed:
        spec = getattr(sys.modules.get(name), "__spec__", None)
        if spec is None:
            continue
        relative = _source(name, spec.submodule_search_locations is not None)
        if relative is not None and spec.origin == ROOT + relative:
            found.append(name)
    return found


def _modules() -> list[tuple[str, str, bool]]:
    """Every module of the package: its name, its source relative to :data:`ROOT` and whether
    it is a package (a folder of it holding an ``__init__.py``)."""
    found = []
    for folder, folders, files in os.walk(ROOT):
        relative = folder[len(ROOT) :]
        if "__init__.py" not in files:
            folders[:] = []  # data, not modules
            continue
        folders[:] = [f for f in folders if f != "__pycache__" and f.isidentifier()]
        dotted = PACKAGE + relative.replace(os.sep, ".")
        for file in files:
            stem, dot, suffix = file.rpartition(".")
            if dot and suffix == "py" and stem.isidentifier():
                package = stem == "__init__"
                name = dotted if package else f"{dotted}.{stem}"
                found.append((name, f"{relative}{os.sep}{file}", package))
    return found


def _compiled(name: str, relative: str, package: bool) -> tuple[str, bool, int, int, bytes] | None:
    """The entry of module *name* (source *relative* to :data:`ROOT`): its code compiled as
    the import system would (its current bytecode file read, else its source compiled), None
    when its source changed meanwhile or cannot be read or compiled (a FIFO or device named
    like a module is not opened, and a source too deeply nested to compile is no error: such a
    module, never imported, stays out of the file). The compiler's warnings (an invalid escape
    in a module no run imports) are not printed at the process's end."""
    import stat
    import warnings

    origin = ROOT + relative
    try:
        before = os.stat(origin)
        if not stat.S_ISREG(before.st_mode):
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = SourceFileLoader(name, origin).get_code(name)
        after = os.stat(origin)
    except (OSError, ImportError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if code is None or (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size):
        return None
    return relative, package, before.st_mtime_ns, before.st_size, marshal.dumps(code)


def _write(path: str, pieces: dict[str, tuple[str, bool, int, int, bytes]]) -> None:
    """Write the file under a temporary name in its folder, then rename it over *path*: the
    head, each module's code, then the index (where the head says it starts)."""
    from importlib._bootstrap_external import MAGIC_NUMBER

    index: dict[str, Entry] = {}
    offset = _HEAD
    for name in sorted(pieces):
        relative, package, mtime, size, code = pieces[name]
        index[name] = (relative, package, mtime, size, offset, offset + len(code))
        offset += len(code)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    # created here, as Python writes a bytecode file: never through a link or a file planted
    # there (one left by a process of the same id that was killed is taken away first)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(temporary, flags, 0o666)
    except FileExistsError:
        os.unlink(temporary)  # the name itself, not what a link there points to
        descriptor = os.open(temporary, flags, 0o666)
    try:
        with open(descriptor, "wb") as file:
            file.write(FORMAT + MAGIC_NUMBER + offset.to_bytes(8, "little"))
            for name in sorted(pieces):
                file.write(pieces[name][4])
            file.write(marshal.dumps(index))
        os.replace(temporary, path)
    except OSError:
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _current(origin: str, mtime: int, size: int) -> bool:
    """True when *origin* still has the modification time and size it was compiled at."""
    try:
        stat = os.stat(origin)
    except OSError:
        return False
    return stat.st_mtime_ns == mtime and stat.st_size == size


_CODE = type(_well_formed.__code__)
"""The type of a code object (:mod:`types` is not imported for it)."""


def _fix_filename(code: CodeType, path: str) -> None:
    """Name *path* as the code's file, as the import system does for a bytecode file read
    (the package may have been moved since the file was written)."""
    import _imp

    _imp._fix_co_filename(code, path)  # type: ignore[attr-defined]
