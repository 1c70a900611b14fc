"""pytest's rewritten test modules kept between ``--plangraph`` runs, each vouched for by a
MAC this product wrote when it saw pytest compile it.

pytest caches the assertion-rewritten code of every test module and ``conftest.py`` in
``__pycache__/<name>.<tag>-pytest-<version>.pyc`` and takes it back whenever the file's
header carries the 64-bit hash of the current source. That hash says which source a file
claims to come from, not what code it holds: anyone who can write ``__pycache__`` can pair
the hash of a broken source with the code of a good one, and the tests then pass on code that
is not there. So :class:`~.soundness.BytecodeGuard` deleted every ``.pyc`` of the repository
before each run, and each run rewrote and compiled every test module again.

:class:`RewriteCache` keeps them instead, and keeps them sound:

* When pytest compiles a test module in a ``--plangraph`` run, the cache notes the sha256 of
  the source bytes pytest read (read once more beside pytest's own read and kept only when
  pytest's hash of what it compiled equals the hash of those bytes) and the sha256 of the
  exact bytes pytest writes for it. At the end of the run each such file becomes an entry:
  pyc path, source path, the two sha256 digests, and an HMAC-SHA256 over all four keyed with
  this user's :func:`~pytest_plangraph.plan.cache.machine_salt` (kept outside the repository,
  readable by this user alone). The entries live in one file per repository in
  ``$XDG_CACHE_HOME/plangraph/rewritten/`` (``~/.cache/…`` by default).
* Before the first ``conftest.py`` is read, the guard's purge keeps a rewritten file only
  when its entry's MAC verifies and both files' current bytes have the entry's digests; every
  other ``.pyc`` of the repository is deleted as before.
* For the run, pytest's reader of rewritten files is replaced by one that takes a file only
  under that same check, made again on the bytes it is about to load; anything else is
  rewritten from source. A file planted in ``__pycache__``, a source changed after its file
  was written, an entry copied from another machine or edited by hand: none is ever loaded.

The project's own modules get the same: :class:`~.soundness.CheckedSourceLoader` compiled
each from its source in every run; it now enters the checked-hash file it writes (it read the
source bytes and made the file's bytes itself, so both digests are exact) and takes it back in
a later run only under the same check (:meth:`RewriteCache.module_code`).

A file or entry that cannot be read is simply not used: the module is compiled from source,
as it was before. Without a home directory to keep the salt in, the cache serves nothing.

With keys configured (:data:`KEY_SETTINGS`) the cache is not used at all (:func:`counts`):
every test and conftest the recording user runs can read the salt, and code of the repository
that ran in an earlier run (a ``conftest.py`` gone since) could have vouched for any file —
written an entry with the salt, or made pytest compile other code than the source it read.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import marshal
import os
import types
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..values import dataclass, field

FORMAT = 1
"""The format of an entries file; another format is not read."""
MAX_BYTES = 64 * 1024 * 1024
"""An entries file larger than this is not read."""
KEY_SETTINGS = ("PLANGRAPH_SIGNING_KEY", "PLANGRAPH_SIGNING_KEY_FILE", "PLANGRAPH_TRUSTED_KEYS")
"""The settings that configure keys (signing evidence, or trusting only signed evidence)."""
_DOMAIN = b"plangraph-rewritten-v1\0"
"""What every MAC starts with, so that no other MAC keyed with the salt can stand for one."""


def counts() -> bool:
    """Whether rewritten files vouched for by an earlier run may be taken: only without keys
    configured. The entries are authenticated with this user's salt, which the tests of any
    run of this user can read, so with keys no entry stands for compiling the source."""
    return not any(os.environ.get(name) for name in KEY_SETTINGS)


@dataclass(frozen=True)
class Entry:
    """One rewritten file this product saw pytest write from one source."""

    source: str
    source_sha: str
    pyc_sha: str
    mac: str

    def vouches(self, key: bytes, pyc: str) -> bool:
        """True when the MAC is this key's over *pyc* and the entry's fields."""
        import hmac  # a run whose bytecode is all written afresh asks no entry

        return hmac.compare_digest(
            self.mac, _mac(key, pyc, self.source, self.source_sha, self.pyc_sha)
        )


def _mac(key: bytes, pyc: str, source: str, source_sha: str, pyc_sha: str) -> str:
    import hmac

    message = "\0".join((pyc, source, source_sha, pyc_sha)).encode("utf-8", "surrogateescape")
    return hmac.new(key, _DOMAIN + message, hashlib.sha256).hexdigest()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class RewriteCache:
    """The entries of one repository and, while installed, pytest's rewriter functions this
    cache stands in for."""

    key: bytes
    path: str | None
    """The entries file (None: nowhere to keep them)."""
    entries: dict[str, Entry] = field(default_factory=dict)
    """pyc path → its entry, as read (none verified yet)."""
    written: dict[str, Entry] = field(default_factory=dict)
    """Entries of the files pytest wrote in this run."""
    dropped: dict[str, Entry] = field(default_factory=dict)
    """Entries the purge found false (by pyc path): not written back."""
    compiled: dict[int, tuple[types.CodeType, str, str]] = field(default_factory=dict)
    """id of a code object pytest compiled → (that code, its source path, the source's sha256)."""
    originals: dict[str, Any] = field(default_factory=dict)
    governs: Callable[[str], bool] = lambda _: True
    """Whether a source file is the project's (not of the installed environment): only the
    project's rewritten files need an entry; pytest's own reader is left the others."""

    @classmethod
    def open(cls, root: Path, governs: Callable[[str], bool]) -> RewriteCache:
        """The cache of the repository at *root*, its entries read (none when unreadable);
        *governs*: whether a source file is the project's."""
        from ..plan.cache import machine_salt
        from ..usercache import folder

        name = _sha(os.fsencode(os.path.abspath(root)))[:32]
        path = os.path.join(folder(), "rewritten", f"{name}.json")
        cache = cls(key=machine_salt(), path=path if os.path.isabs(path) else None)
        cache.governs = governs
        cache.entries = _read_entries(cache.path)
        return cache

    # -- the purge -----------------------------------------------------------------------------

    def authentic(self, pyc: Path) -> bool:
        """True when *pyc* may stay on disk: its entry verifies against both files' current
        bytes. A false entry is dropped."""
        name = str(pyc)
        entry = self.entries.get(name)
        if entry is None:
            return False
        if self._load(name, Path(entry.source)) is not None:
            return True
        self.dropped[name] = entry
        return False

    def _load(self, pyc: str, source: Path, text: bytes | None = None) -> types.CodeType | None:
        """The code in *pyc* when its entry vouches for it and for *source* as they are now
        (*text*: the source's bytes, when the caller read them)."""
        entry = self.entries.get(pyc)
        if entry is None or entry.source != str(source) or not entry.vouches(self.key, pyc):
            return None
        try:
            with open(pyc, "rb") as handle:
                data = handle.read()
            if text is None:
                text = source.read_bytes()
        except OSError:
            return None
        if _sha(text) != entry.source_sha or _sha(data) != entry.pyc_sha:
            return None
        if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
            return None
        try:
            code = marshal.loads(memoryview(data)[16:])
        except (EOFError, ValueError, TypeError):
            return None
        return code if isinstance(code, types.CodeType) else None

    # -- standing in for pytest's functions ----------------------------------------------------

    def install(self) -> bool:
        """Stand in for pytest's reader, rewriter and writer of rewritten files (False, and
        nothing changed, when pytest lays them out differently)."""
        from _pytest.assertion import rewrite

        names = ("_read_pyc", "_rewrite_test", "_write_pyc_fp")
        if not all(callable(getattr(rewrite, name, None)) for name in names):
            return False
        self.originals = {name: getattr(rewrite, name) for name in names}
        rewrite._read_pyc = self._read_pyc
        rewrite._rewrite_test = self._rewrite_test
        rewrite._write_pyc_fp = self._write_pyc_fp
        return True

    def uninstall(self) -> None:
        """Put pytest's functions back (where they are still this cache's) and keep the
        entries of the files written in this run."""
        from _pytest.assertion import rewrite

        for name, original in self.originals.items():
            if getattr(rewrite, name, None) == getattr(self, name):
                setattr(rewrite, name, original)
        self.originals = {}
        self.save()

    def _read_pyc(
        self, source: Path, pyc: Path, trace: Callable[[str], None] = lambda _: None
    ) -> types.CodeType | None:
        if not self.governs(str(source)):  # a plug-in of the installed environment
            return self.originals["_read_pyc"](source, pyc, trace)  # type: ignore[no-any-return]
        code = self._load(str(pyc), source)
        if code is None:
            trace(f"_read_pyc({source}): no file vouched for by pytest-plangraph")
            return None
        from _pytest.assertion import rewrite

        fix = getattr(rewrite, "_fix_code_filename", None)  # where pytest has it
        return fix(code, str(source)) if callable(fix) else code

    def _rewrite_test(self, fn: Path, config: Any) -> tuple[bytes, types.CodeType]:
        try:
            text: bytes | None = fn.read_bytes()
        except OSError:
            text = None
        source_hash, code = self.originals["_rewrite_test"](fn, config)
        if (
            text is not None
            and self.governs(str(fn))
            and source_hash == importlib.util.source_hash(text)
        ):
            self.compiled[id(code)] = (code, str(fn), _sha(text))
        return source_hash, code

    def _write_pyc_fp(self, fp: IO[bytes], source_hash: bytes, co: types.CodeType) -> None:
        buffer = io.BytesIO()
        self.originals["_write_pyc_fp"](buffer, source_hash, co)
        data = buffer.getvalue()
        fp.write(data)
        known = self.compiled.pop(id(co), None)
        name = getattr(fp, "name", None)
        if known is None or known[0] is not co or not isinstance(name, str):
            return
        pyc = name.rpartition(".")[0]  # pytest writes "<pyc>.<pid>", then renames it
        if not pyc.endswith(".pyc"):
            return
        _, source, source_sha = known
        pyc_sha = _sha(data)
        mac = _mac(self.key, pyc, source, source_sha, pyc_sha)
        self.written[pyc] = Entry(source, source_sha, pyc_sha, mac)

    # -- the project's own modules (the guard's loader) ----------------------------------------

    def module_code(self, pyc: str, source: str, text: bytes) -> types.CodeType | None:
        """The code of the project module at *source* (whose bytes the loader read: *text*)
        from its bytecode *pyc*, when this cache vouches for both; None: compile it."""
        return self._load(pyc, Path(source), text)

    def vouch(self, pyc: str, source: str, text: bytes, data: bytes) -> None:
        """Enter *pyc*, about to be written with *data*, compiled from *text* read at *source*
        (the guard's loader wrote it: both are exactly the bytes it used)."""
        source_sha, pyc_sha = _sha(text), _sha(data)
        mac = _mac(self.key, pyc, source, source_sha, pyc_sha)
        self.written[pyc] = Entry(source, source_sha, pyc_sha, mac)
        self.entries[pyc] = self.written[pyc]

    # -- keeping the entries -------------------------------------------------------------------

    def save(self) -> None:
        """Write the entries back: those on file now (another process, an xdist worker, may
        have added some), less those the purge found false and those whose file is gone (a
        test module deleted or renamed, pytest upgraded), plus this run's. A failure is
        ignored."""
        if self.path is None or not (self.written or self.dropped):
            return
        entries = {
            pyc: entry
            for pyc, entry in _read_entries(self.path).items()
            if self.dropped.get(pyc) != entry and os.path.exists(pyc)
        }
        entries.update(self.written)
        partial = f"{self.path}.{os.getpid()}.tmp"
        data = {
            "format": FORMAT,
            "entries": {
                pyc: [e.source, e.source_sha, e.pyc_sha, e.mac] for pyc, e in entries.items()
            },
        }
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(data, handle, separators=(",", ":"))
            os.replace(partial, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(partial)
        self.written = {}
        self.dropped = {}


def _read_entries(path: str | None) -> dict[str, Entry]:
    """The entries in the file at *path* (none when it is missing, unreadable or malformed)."""
    if path is None:
        return {}
    from ..regularfile import read_regular

    try:
        data = json.loads(read_regular(path, MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    found = data.get("entries")
    if not isinstance(found, dict):
        return {}
    entries: dict[str, Entry] = {}
    for pyc, fields in found.items():
        if (
            isinstance(fields, list)
            and len(fields) == 4
            and all(isinstance(f, str) for f in fields)
        ):
            entries[pyc] = Entry(*fields)
    return entries
