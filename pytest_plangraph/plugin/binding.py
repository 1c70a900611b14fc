"""Which repository files bind to the evidence of a pytest test (DESIGN §5 "What binds").

A test's verdict depends on more than its own module: the ``conftest.py`` and ``__init__.py``
files above it, the module its function is defined in (a test inherited from a base class
elsewhere), the configuration file pytest read, and the modules pytest loaded as plugins.
:class:`FileBinder` names them, relative to the repository, and hashes each once per run into
the :class:`~pytest_plangraph.plugin.mapping.Mapping` that the controller turns into subjects.
Files of the installed environment never bind, whatever directory holds them.

Where such a file is not, and one put there later would change the verdict (a ``conftest.py``
or ``__init__.py`` on the way down to the test's folder, a configuration file pytest would
have preferred: :func:`absent_configuration`), the path binds *absent*: its hash in the mapping
is :data:`~pytest_plangraph.plan.evidence.ABSENT`, computed once per folder and run.

Where no path is to bind — a folder made later, a test file only a marker brings in — each
folder among the run's paths binds what pytest could collect there (:func:`collectable`), one
subject per folder whose value the gate computes again (:mod:`.collectable`); and each
criterion which test files there quote its reference (:meth:`FileBinder.quoted`: a marker
added to a test file the walk binds by name alone).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable
from collections.abc import Mapping as MappingABC
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..errors import PlangraphError
from ..judge.sections import has_pytest_section, section_subject
from ..plan.evidence import ABSENT
from ..vcs.quotes import CollectValues, quotes_key
from . import STARTED_KEY
from .collectable import collectable, collected_folders
from .configdirs import CONFIG_NAMES

if TYPE_CHECKING:
    from ..api import PlanGraph
    from ..judge.inputs import Snapshot
    from .coverage import RepositoryFiles
    from .mapping import Mapping


class FileBinder:
    """Names and hashes the files that bind to the tests of one run (in one process)."""

    def __init__(self, config: pytest.Config, plangraph: PlanGraph) -> None:
        self.config = config
        self.plangraph = plangraph
        self._conftests: dict[str, tuple[list[str], list[str]]] = {}
        self._absent_config: list[str] | None = None
        self._sectionless: list[str] = []
        self._absent_conftests: list[str] | None = None
        self._collectable: dict[str, str] | None = None
        self._walks = CollectValues(os.fspath(plangraph.root))
        self._quoted: dict[str, str] | None = None
        self._run_files: list[str] | None = None
        self._files: RepositoryFiles | None = None
        self._relatives: dict[Path, str | None] = {}
        self._walked: dict[Path, list[str]] = {}
        self._vanished: set[str] = set()
        self._written: set[str] = set()
        started = config.stash.get(STARTED_KEY, None)
        self.started = time.time_ns() if started is None else started
        """When the run began loading conftests: a bound file written since is :data:`WRITTEN`."""
        self._project_files: dict[str, str | None] = {}
        self.folders = 0
        """How many folders were looked at for their ``conftest.py`` and ``__init__.py``: once
        per folder on the way to a test file, however many tests and files it holds."""
        self.resolutions = 0
        """How many source paths were resolved against the repository: once per distinct
        path, however many tests share it (a test file's tests are one lookup)."""

    def bind(self, mapping: Mapping, file: str, item: pytest.Item) -> None:
        """Bind to the tests of *file* the files their verdicts read: the module, its
        conftest files, :meth:`run_files`, and the module *item*'s function is defined in when
        it is not *file*."""
        paths = mapping.file_subjects.get(file)
        if paths is None:
            conftests, absent = map(list, self._conftests_of(file.rpartition("/")[0]))
            for folder in self._walked_folders(item.path):  # a test reached through a link
                more, gone = self._conftests_of(folder)
                conftests.extend(p for p in more if p not in conftests)
                absent.extend(p for p in gone if p not in absent)
            run_files = self.run_files()
            passed_over = [p for p in self.sectionless_configuration() if p not in run_files]
            shared = (*self.absent_configuration(), *self.absent_conftests())
            absent = list(dict.fromkeys(p for p in (*shared, *absent) if p not in run_files))
            walks = self.collectable()
            paths = [*run_files, *passed_over, *conftests, file, *absent, *walks]
            mapping.file_subjects[file] = paths
            for path in absent:
                mapping.hashes.setdefault(path, ABSENT)
            mapping.hashes.update(walks)
            if self._quoted is None:  # once per run, for every criterion
                mapping.hashes.update(self.quoted(mapping.criteria))
            added = paths  # the file's first test: every path hashed below
        else:
            added = []  # its paths were hashed with its first test: only a new one now
        defined_in = self._defined_in(item, file)
        if defined_in is not None and defined_in not in paths:
            paths.append(defined_in)
            if added is not paths:
                added.append(defined_in)
        for path in added:
            if path not in mapping.hashes:
                mapping.hashes[path] = self._hash_loaded(path)

    def note_written(
        self, snapshot: Snapshot, stats: MappingABC[str, os.stat_result] | None = None
    ) -> Snapshot:
        """Note which files of *snapshot* (taken when the session started) were written since
        the run began loading conftests (:meth:`before` marks them); return *snapshot*. A
        module a conftest imported may have rewritten itself: the bytes hashed are not those
        it ran. *stats* are the stats the snapshot's hashes stand on, taken while it was
        taken (after the conftests were loaded): a file's is its change time then, and a
        file it holds none of (a symbolic link among them: :func:`changed_ns`) is stat'ed
        now. A write since the snapshot is told by the hash at the end of the run, which
        differs."""
        root = os.fspath(self.plangraph.root)
        known = stats or {}
        for path, sha in snapshot.files.items():
            if sha is None:
                continue
            info = known.get(path)
            changed = info.st_ctime_ns if info is not None else changed_ns(root, path)
            if changed is None:
                continue  # gone: the hash at the end of the run differs
            if changed >= self.started:
                self._written.add(path)
        return snapshot

    def before(self, files: MappingABC[str, str | None]) -> dict[str, str | None]:
        """*files* (the hashes when the session started) with :data:`WRITTEN` for those
        :meth:`note_written` found written since the run began loading conftests."""
        return {**files, **dict.fromkeys(self._written, WRITTEN)}

    def _hash_loaded(self, path: str) -> str | None:
        """The sha256 of the file at *path*, which the run has read or imported already: a
        module, a conftest, the configuration file. :data:`WRITTEN` instead when the file was
        written since the run began loading conftests, or is gone (a conftest that rewrote or
        removed itself once imported): the bytes hashed now are not those the run executed,
        and the hash at the end of the run, which differs, voids the record
        (``ARTIFACT_CHANGED_DURING_RUN``)."""
        found = self.plangraph.workspace.hash_file(path)
        if path in self._vanished:
            return WRITTEN
        changed = changed_ns(os.fspath(self.plangraph.root), path)
        if changed is None:  # gone since it was collected or imported
            return WRITTEN
        return WRITTEN if changed >= self.started else found

    def run_files(self) -> list[str]:
        """Files of the repository that shape every test of the run: the configuration file
        pytest read (``config.inipath``: ``pytest.ini``, ``pyproject.toml``, ``tox.ini``,
        ``setup.cfg`` …, which says what is collected and how), and every module pytest loaded
        as a plugin (``pytest_plugins = [...]``, ``-p module``, ``PYTEST_PLUGINS``, and each
        ``conftest.py`` it loaded: a conftest's collection hooks see every test of the
        session, not only the tests below it). Computed once, after collection."""
        if self._run_files is None:
            inipath = self.config.inipath
            sources: list[object] = [str(inipath)] if inipath is not None else []
            sources.extend(
                getattr(plugin, "__file__", None)
                for plugin in self.config.pluginmanager.get_plugins()
            )
            found = set()
            for source in sources:
                if not isinstance(source, str):
                    continue
                relative = self.project_file(source) or self._vanished_file(source)
                if relative:
                    found.add(relative)
            self._run_files = sorted(found)
        return self._run_files

    def _vanished_file(self, source: str) -> str | None:
        """*source* relative to the repository when pytest loaded it and no file is there now
        (removed once imported), outside the running environment; else None."""
        if os.path.lexists(source) or not os.path.isabs(source):
            return None
        if self._files is not None and any(
            Path(source).resolve().is_relative_to(d) for d in self._files.excluded
        ):
            return None
        found = self.relative(Path(source))
        if found is not None:
            self._vanished.add(found)
        return found

    def project_file(self, source: str) -> str | None:
        """*source* relative to the repository, or None outside it or where coverage data is
        not taken from either: the running environment (a ``.venv`` kept in the repository
        holds the installation, which evidence does not bind), site-packages, this package.
        Each *source* is resolved once per run (every test of a module shares its file)."""
        if source in self._project_files:
            return self._project_files[source]
        if self._files is None:
            from .coverage import RepositoryFiles, excluded_dirs

            root = self.plangraph.root
            self._files = RepositoryFiles(root, excluded_dirs(root))
        self.resolutions += 1
        found = self._project_files[source] = self._files(source)
        return found

    def relative(self, path: Path) -> str | None:
        """*path* relative to the repository, or None outside it."""
        if path not in self._relatives:
            try:
                self._relatives[path] = self.plangraph.workspace.relative(path)
            except PlangraphError:
                self._relatives[path] = None
        return self._relatives[path]

    def _defined_in(self, item: pytest.Item, file: str) -> str | None:
        """The repository file that defines *item*'s test function, when not *file*."""
        code = getattr(getattr(item, "function", None), "__code__", None)
        source = getattr(code, "co_filename", None)
        if not isinstance(source, str) or not source.endswith(".py"):
            return None
        found = self.project_file(source)
        return found if found != file else None

    def _walked_folders(self, path: Path) -> list[str]:
        """The repository folders pytest walks from *path*'s folder up, where they are not
        those above the folder *path* resolves to: pytest takes the ``conftest.py`` and
        ``__init__.py`` files of the folders of the path it collected, a folder reached
        through a symbolic link (``tests/unit`` linking to ``shared/unit``) included, and
        neither resolves it nor the folders above it. For a path without links, its own
        folder alone (whose chain :meth:`_conftests_of` has already)."""
        start = Path(os.path.abspath(path.parent))
        if start not in self._walked:
            found: list[str] = []
            root = self.plangraph.root
            for folder in (start, *start.parents):
                rel = self.relative(folder)
                if rel is None:
                    continue
                rel = "" if rel == "." else rel
                found.append(rel)
                if folder == (root / rel if rel else root):
                    break  # no link from here up: this folder's chain holds the rest
            self._walked[start] = found
        return self._walked[start]

    def _conftests_of(self, directory: str) -> tuple[list[str], list[str]]:
        """The ``conftest.py`` and ``__init__.py`` paths from the repository root down to
        *directory*: those that are files (pytest loads a conftest; importing a test module
        of a package runs the ``__init__.py`` of every package above it) and those that are
        not (bound absent: a file put there later can change the verdict). Two ``stat`` per
        directory and run."""
        if directory not in self._conftests:
            above, gone = (
                self._conftests_of(directory.rpartition("/")[0]) if directory else ([], [])
            )
            here, missing = list(above), list(gone)
            self.folders += 1
            for name in _FOLDER_FILES:
                own = f"{directory}/{name}" if directory else name
                (here if (self.plangraph.root / own).is_file() else missing).append(own)
            self._conftests[directory] = (here, missing)
        return self._conftests[directory]

    def absent_conftests(self) -> list[str]:
        """The ``conftest.py`` paths where no file is in every folder the collection may
        enter (:func:`collected_folders`), computed once: pytest loads the conftest of each
        folder it collects, and that conftest's session-wide hooks
        (``pytest_collection_modifyitems``, ``pytest_runtest_makereport`` …) see every test,
        not only those below it."""
        if self._absent_conftests is None:
            root = self.plangraph.root
            found = []
            for folder in collected_folders(self.config, self.relative):
                own = f"{folder}/conftest.py" if folder else "conftest.py"
                if not (root / own).is_file():
                    found.append(own)
            self._absent_conftests = found
        return self._absent_conftests

    def collectable(self) -> dict[str, str]:
        """What the run could collect under each folder of its paths (:func:`collectable`),
        computed once: a subject path per folder, and the digest of the files found."""
        if self._collectable is None:
            root = self.plangraph.root
            self._collectable = collectable(self.config, self.relative, root, self._walks)
        return self._collectable

    def quoted(self, refs: Iterable[str]) -> dict[str, str]:
        """For each walk of :meth:`collectable` and each criterion reference of *refs*, its
        :func:`~pytest_plangraph.vcs.quotes.quotes_key` subject and value: which test files
        of the walk quote the reference. Computed once per run; each file read once."""
        if self._quoted is None:
            walks = self.collectable()
            self._quoted = {}
            for ref in refs:
                for walk in walks:
                    self._quoted[quotes_key(walk, ref)] = self._walks.quoted_value(walk, ref)
        return self._quoted

    def absent_configuration(self) -> list[str]:
        """The pytest configuration files that are not there and that pytest would have
        preferred over the one it read (:func:`absent_configuration`), computed once."""
        if self._absent_config is None:
            absent, passed_over = searched_configuration(self.config, self.relative)
            self._sectionless = []
            for path in passed_over:
                if self._holds_section(path):  # pytest saw none where the text test does
                    self._sectionless.append(path)
                else:
                    absent.append(section_subject(path))
            self._absent_config = absent
        return self._absent_config

    def sectionless_configuration(self) -> list[str]:
        """The configuration files pytest looked at before the one it read and passed over,
        for they held no pytest section (:func:`searched_configuration`), that bind by their
        sha256: those where :func:`~..judge.sections.has_pytest_section` finds one all the
        same. The others bind their section absent (``pyproject.toml#pytest``, in
        :meth:`absent_configuration`): a file given one is the file pytest reads instead,
        and no other change of theirs stales the evidence."""
        self.absent_configuration()
        return self._sectionless

    def _holds_section(self, path: str) -> bool:
        try:
            text = (self.plangraph.root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return True
        return has_pytest_section(path, text)


def changed_ns(root: str, path: str) -> int | None:
    """When the file at *path* (under *root*) was last changed, as its ctime says: for a
    symbolic link, the later of the link's and its target's (a link made anew to an older
    file changes what is read there, not the target's ctime); None when it is gone."""
    full = os.path.join(root, path)
    try:
        info = os.lstat(full)
        if not stat.S_ISLNK(info.st_mode):
            return info.st_ctime_ns
        return max(info.st_ctime_ns, os.stat(full).st_ctime_ns)
    except OSError:
        return None


WRITTEN = "written-during-run"
"""The hash a bound file gets before the run when it was written after the run began loading
conftests, or is gone though the run imported it: never a file's sha256, so the end of the run
finds it changed and voids the record."""

_FOLDER_FILES = ("conftest.py", "__init__.py")
"""The files of a test's folder and of each folder above it that bind to its verdict."""


def absent_configuration(
    config: pytest.Config, relative: Callable[[Path], str | None]
) -> list[str]:
    """Repository paths of the configuration files pytest would have read instead of the one
    it did, had they been there (the first list of :func:`searched_configuration`)."""
    return searched_configuration(config, relative)[0]


def searched_configuration(
    config: pytest.Config, relative: Callable[[Path], str | None]
) -> tuple[list[str], list[str]]:
    """The configuration files pytest looked for before the one it read, as repository paths:
    those where no file is (bound absent) and those where a file is that pytest passed over,
    for it held no pytest section (``[tool:pytest]``, ``[pytest]``, ``[tool.pytest…]``; a
    ``setup.cfg``, ``tox.ini`` or ``pyproject.toml``): given a section, pytest reads that file
    instead (:meth:`FileBinder.sectionless_configuration` binds them).

    The search is ``_pytest.config.findpaths.locate_config``'s: every name of
    :data:`CONFIG_NAMES` in every folder from the one pytest began in (the common ancestor of
    the command line's paths) up to the folder of the file it read, and the names it prefers
    over that file's in that folder. When it found none there (the file read is a
    ``pyproject.toml`` without a section, taken for want of any other, or there is none),
    every folder up to the file system's root, and then each command-line path's folder and
    those above it. Only folders inside the repository (*relative* gives None outside).
    Nothing when ``-c`` named the file (pytest searched for none; ``--rootdir`` changes no
    search)."""
    if getattr(config.option, "inifilename", None):
        return [], []
    inipath = config.inipath
    if inipath is not None and inipath.name == "pyproject.toml" and _no_section(inipath):
        inipath = None  # read for want of any other: pytest searched every folder up to "/"
    start = _search_start(config)
    chains = [start]
    if inipath is None or (inipath.parent != start and inipath.parent not in start.parents):
        chains.extend(_arg_folders(config))  # pytest's second search, from each path's folder
    read = None if config.inipath is None else relative(config.inipath)
    absent: dict[str, None] = {}
    sectionless: dict[str, None] = {}
    for chain in chains:
        for folder in (chain, *chain.parents):
            where = relative(folder)
            if where is None:
                break
            own = inipath is not None and inipath.parent == folder
            names: tuple[str, ...] = CONFIG_NAMES
            if inipath is not None and own:
                index = CONFIG_NAMES.index(inipath.name) if inipath.name in CONFIG_NAMES else 0
                names = CONFIG_NAMES[:index]
            for name in names:
                path = f"{where}/{name}" if where not in ("", ".") else name
                found = sectionless if (folder / name).is_file() else absent
                found[path] = None
            if own:
                return list(absent), [p for p in sectionless if p != read]
    return list(absent), [p for p in sectionless if p != read]


def _no_section(pyproject: Path) -> bool:
    """True when *pyproject* holds no ``[tool.pytest…]`` table (pytest then reads it only
    when it found no other configuration file)."""
    try:
        return "[tool.pytest" not in pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _arg_folders(config: pytest.Config) -> list[Path]:
    """The folders of the command line's paths that exist (a file's own folder), in order."""
    invoked = config.invocation_params.dir
    folders = []
    for arg in getattr(config.option, "file_or_dir", None) or ():
        path = Path(invoked, str(arg).split("::")[0])
        if str(arg).startswith("-") or not path.exists():
            continue
        folders.append(Path(os.path.abspath(path if path.is_dir() else path.parent)))
    return folders


def _search_start(config: pytest.Config) -> Path:
    """Where pytest began looking for its configuration file: the common ancestor of the
    folders of the command line's paths (the folder pytest was started in without any)."""
    folders = _arg_folders(config)
    if not folders:
        return config.invocation_params.dir
    return Path(os.path.commonpath([os.path.abspath(f) for f in folders]))
