"""What is kept between runs about a large plan file, under ``.plangraph/cache``.

The files are named by the sha256 of the plan file's bytes (see below), so an edited plan
never meets an entry made for other bytes, and each is written whole (a temporary file, then a
rename):

* ``valid-<sha>.json`` — the validated form of a plan file that is a valid plan (of any size):
  the same bytes are then read into the runtime plan without parsing YAML or importing pydantic
  (:func:`read_validated`);
* ``plan-<sha>.json`` — the parsed data of a large plan, since parsing YAML is the slowest part
  of reading one and the same bytes always parse to the same data (a plan that is not valid is
  explained from it);
* ``facts-<sha>.json`` — the plan's digest, its criterion digests and its topological order,
  which depend on the validated plan alone; named by the plan's content key instead (the sha256
  of its parsed data: :func:`~pytest_plangraph.plan.file.content_key`), so an edit of comments
  or layout keeps them; kept with the fingerprint of the package's code (:mod:`..codehash`),
  and used only by the same code;
* ``lint-<sha>.json`` — the lint errors the rules that read the plan alone find (the check every
  command makes before it judges anything), with the verifier types they were found with and
  the fingerprint of the package's code; named by the content key too;
* ``blocks.txt`` — the parsed data of each block of a YAML plan, by the block's bytes
  (:mod:`~pytest_plangraph.plan.blockcache`);
* ``canon-<sha>.json`` — the canonical text of a plan (what its digest hashes) and the key of
  each of its nodes, named by the content key, and ``lastread.txt`` — the bytes of the plan file
  read last with where its list of nodes lies in them: a node whose title alone changed since
  is patched into the plan read then (:mod:`~pytest_plangraph.plan.retitle`);
* ``items.txt`` and ``itemfacts.txt`` — the validated form, and the canonical text and
  criterion digests, of each node and edge by its content
  (:mod:`~pytest_plangraph.plan.itemcache`, :mod:`~pytest_plangraph.plan.factcache`), so a
  plan whose meaning changed by one node validates and digests that node alone.

Every name also mixes in :func:`machine_salt`, a random value kept for this user outside any
repository: entries that came with a repository (a cache folder committed by mistake or on
purpose) never match, so no command answers for a plan other than its file or skips its checks
on another's word. A cache that cannot be read or written is simply not used. It keeps the
entries of the :data:`KEEP` plan files written last; older ones are removed when a new one is
written, so editing a plan again and again does not fill the disk.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from .. import regularfile
from ..canonical import json_loads
from ..codehash import code_fingerprint
from ..usercache import folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:  # the folder's helpers serve readers that load no plan model
    from .model import Plan


_MAX_SALT_BYTES = 4096
"""A salt file larger than this is not read (one this package writes holds 32 bytes)."""


@functools.cache
def machine_salt() -> bytes:
    """The random value kept in ``$XDG_CACHE_HOME/plangraph/salt`` (``~/.cache/…`` by default)
    and mixed into every cache key; where it cannot be kept, one for this process alone (the
    cache then serves one run only)."""
    path = Path(folder()) / "salt"
    if not path.is_absolute():  # no home directory to keep it in
        return os.urandom(16)
    for _ in range(2):
        try:
            # a regular file only (a FIFO is not waited on, /dev/zero not read without end)
            text = regularfile.read_regular(path, _MAX_SALT_BYTES).decode("ascii")
            return bytes.fromhex(text.strip()[:64])
        except (OSError, ValueError):  # a new salt replaces whatever is there
            pass
        try:  # written whole; two processes writing at once agree on the last
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"salt.{os.getpid()}.tmp")
            # readable by this user only: whoever knows the salt can name an entry the cache uses
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(os.urandom(16).hex())
            os.replace(partial, path)
        except OSError:
            break
    return os.urandom(16)


def cache_key(raw: bytes, suffix: str = ".yaml") -> str:
    """What a plan file's cache entries are kept under: the sha256 of its bytes, of how they
    are read (a ``.json`` plan as JSON, any other as YAML: the same text may read otherwise,
    *suffix* says which), of the code that reads them (a reading rule changed by an upgrade,
    say which YAML words are booleans, never meets data parsed by the old rule) and of
    :func:`machine_salt` (an entry that came with the repository never matches).
    :mod:`hashlib` is imported here, not with the module: a kept answer's hit reads this
    module and loads no OpenSSL."""
    import hashlib

    digest = hashlib.sha256(machine_salt())
    if suffix.lower() == ".json":
        digest.update(b"\0json\0")
    digest.update(raw)
    digest.update(code_fingerprint().encode())
    return digest.hexdigest()


def content_key(data: Any) -> str | None:
    """What is kept about a plan's meaning is kept under (its facts, its lint result): the
    sha256 of the JSON text of its parsed *data* (as the plan cache keeps it; *data* may be
    that text), of the code that reads it and of :func:`machine_salt`. A comment or a
    change of layout leaves it as it was. None when the data has no JSON text."""
    if not isinstance(data, bytes):
        try:
            data = json.dumps(data, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError):
            return None
    import hashlib

    digest = hashlib.sha256(machine_salt())
    digest.update(b"parsed data\0")
    digest.update(code_fingerprint().encode())
    digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


def read_parsed(cache_dir: Path, key: str) -> bytes:
    """The JSON text of the parsed data kept for the plan file whose sha256 is *key* (OSError
    when there is none, it cannot be read, or its first line is not *key*: the file is that
    line, then the text): :func:`~pytest_plangraph.plan.file.parse_plan` validates it as it
    parses it, and decodes it only to explain a plan it refuses."""
    return read_keyed(cache_dir / f"plan-{key}.json", key)


KEEP = 8
"""How many plan files' entries the cache keeps (the last written)."""


def keep_parsed(cache_dir: Path, key: str, data: Any) -> None:
    """Keep the parsed data of the plan file whose sha256 is *key* (*data* may be its JSON text
    already, as bytes), then :func:`prune` the cache (a plan edited in its comments only keeps
    its facts, so writing them does not prune it)."""
    try:
        body = data if isinstance(data, bytes) else json.dumps(data, ensure_ascii=False).encode()
    except (TypeError, ValueError):
        return
    _write(cache_dir / f"plan-{key}.json", keyed(key, body))
    prune(cache_dir, key)


def keep_validated(
    cache_dir: Path,
    key: str,
    plan: Plan,
    meaning: str | None = None,
    data: dict[str, Any] | None = None,
    text: str | None = None,
) -> None:
    """Keep the validated form of *plan*, read from the plan file whose sha256 is *key*, in
    place of an entry that is missing or could not be read (then :func:`prune` the cache) —
    once the project keeps anything (:func:`in_use`): reading a small plan makes no folder (a
    plan read by blocks, 16 KiB or more, makes it for its block and item files). With
    *meaning* (the content key of the data it was validated from:
    :func:`~pytest_plangraph.plan.file.content_key`), it is kept under that key too, so other
    bytes of the same data (an edit of comments or layout) are not validated again
    (:func:`reuse_validated`). *data*, when given, is the validated form the plan was built
    from (:meth:`~.frozen.Frozen.from_data` gives it back: it is not dumped again), *text*
    its JSON text as ``json.dumps`` writes it, when known (it is not encoded again)."""
    if in_use(cache_dir):
        if text is None:
            text = json.dumps(plan.to_data() if data is None else data, ensure_ascii=False)
        body = text.encode()
        if meaning is not None:
            _write(cache_dir / f"valid-{meaning}.json", keyed(meaning, body))
        _write(cache_dir / f"valid-{key}.json", keyed(key, body))
        prune(cache_dir, key, also=meaning)


def reuse_validated(cache_dir: Path, meaning: str, key: str) -> Plan | None:
    """The runtime plan of the validated form kept under the content key *meaning* (other bytes
    of the same parsed data were validated: :func:`keep_validated`), or None when there is none
    or it cannot be read; when found, it is kept under the file key *key* too (the bytes as
    they are, so the next read of this file finds it by its bytes)."""
    from .model import Plan  # the folder's other helpers serve readers that load no plan

    try:
        body = validated_text(cache_dir, meaning)
        data = json_loads(body)
        plan = Plan.from_data(data) if isinstance(data, dict) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if plan is not None and in_use(cache_dir):
        _write(cache_dir / f"valid-{key}.json", keyed(key, body))
        prune(cache_dir, key, also=meaning)
    return plan


def validated_text(cache_dir: Path, key: str) -> bytes:
    """The JSON text of the validated form kept under *key* (``valid-KEY.json``, see
    :func:`read_keyed`)."""
    return read_keyed(cache_dir / f"valid-{key}.json", key)


def keyed(key: str, body: bytes) -> bytes:
    """What a cache file keeping *body* under *key* holds (``valid-…``, ``plan-…``,
    ``facts-…``): a first line of the key and the CRC-32 of *body*, then *body*."""
    return f"{key} {zlib.crc32(body):08x}\n".encode() + body


def read_keyed(path: Path, key: str) -> bytes:
    """The body of the cache file at *path* written by :func:`keyed` under *key*; OSError when
    there is none, it cannot be read, or its first line is not that of *key* and its body
    (another entry put in its place, a byte changed)."""
    head, _, body = read_regular(path).partition(b"\n")
    if head != f"{key} {zlib.crc32(body):08x}".encode():
        raise OSError(f"{path.name} is not the entry kept under its key")
    return body


def in_use(cache_dir: Path) -> bool:
    """Whether the cache folder *cache_dir* is there, or the folder of the store it belongs to
    (:func:`cache_dir_of`): a project with a store or a cache, so an entry can be kept without
    making a folder a read-only command should not make."""
    if cache_dir.is_dir():
        return True
    if cache_dir.name.endswith(".cache"):  # beside a store moved out of .plangraph
        return _holds_store(cache_dir.with_name(cache_dir.name.removesuffix(".cache")))
    return cache_dir.parent.is_dir() and cache_dir.parent.name == ".plangraph"


def _holds_store(path: Path) -> bool:
    """Whether the file at *path* begins as an SQLite database does (a store, or one being
    made): the plan file or a JSON file given as ``--store`` by mistake gets no cache
    folder beside it."""
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:  # not there, a folder, unreadable: no store
        return False


def read_validated(cache_dir: Path, key: str) -> Plan | None:
    """The runtime plan of the validated form kept for the plan file whose sha256 is *key*, or
    None when there is none or it cannot be read (the file is then read and validated anew).
    The entry is what validating those very bytes gave, by this very code (the key says so),
    so nothing is checked again: the values go into the runtime classes as they are."""
    from .model import Plan  # the folder's other helpers serve readers that load no plan

    try:
        data = json_loads(validated_text(cache_dir, key))
        return Plan.from_data(data) if isinstance(data, dict) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def cache_dir_of(store_path: Path) -> Path:
    """Where the cache of the plans read with the store at *store_path* lives: ``cache`` beside
    the store in its default ``.plangraph`` directory, else ``<store file name>.cache`` beside
    it (a store moved into a project folder must not share a ``cache`` folder of the project)."""
    if store_path.parent.name == ".plangraph":
        return store_path.parent / "cache"
    return store_path.with_name(f"{store_path.name}.cache")


def prune(cache_dir: Path, current: str, keep: int = KEEP, *, also: str | None = None) -> None:
    """Remove the entries (validated form, parsed data, facts, lint errors) of all but the
    *keep* keys whose
    entries were written last (*current*, the key just written, always stays, and so does
    *also*, the file key of a plan whose facts are kept under its content key), and temporary
    files an interrupted write (of an entry or of the log's checkpoint) left over a minute
    ago (a younger one may be another process's write in progress). Only names this module
    writes are touched; a file that cannot be looked at or removed is skipped."""
    written: dict[str, int] = {}
    leftovers: list[Path] = []
    entry = _entry()
    for path in _listing(cache_dir):
        found = entry.fullmatch(path.name)
        if found is None:
            continue
        mtime = _mtime(path)
        if found["tmp"] or found["logtmp"]:
            if mtime is not None and mtime < time.time_ns() - 60 * 10**9:
                leftovers.append(path)
        elif mtime is not None:
            written[found["key"]] = max(written.get(found["key"], 0), mtime)
    stay = {current} | ({also} & set(written) if also else set())  # just written: they count
    others = [key for key in written if key not in stay]
    old = sorted(others, key=written.__getitem__, reverse=True)[max(keep - len(stay), 0) :]
    for path in [*leftovers, *(cache_dir / f"{k}-{key}.json" for key in old for k in _KINDS)]:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


_KINDS = ("valid", "plan", "facts", "lint", "canon")


@functools.cache
def _entry() -> re.Pattern[str]:
    """The names of the files :func:`prune` may touch (compiled by the first prune alone: a
    command that finds its plan kept writes nothing and prunes nothing)."""
    return re.compile(
        r"(?:valid|plan|facts|lint|canon)-(?P<key>[0-9a-f]{64})(?:\.json|(?P<tmp>\.\d+\.tmp))"
        r"|(?P<logtmp>log-.+\.json\.\d+\.tmp)"  # a checkpoint's (pytest_plangraph.checkpoint)
    )


def _listing(directory: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError:
        return []


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:  # removed by another process meanwhile
        return None


def with_facts(
    plan: Plan,
    cache_dir: Path,
    key: str,
    file_key: str | None = None,
    by_item: Callable[[], tuple[str, dict[tuple[str, str], str]] | None] | None = None,
) -> None:
    """Give *plan* (validated from data whose content key is *key*:
    :func:`~pytest_plangraph.plan.file.content_key`) its digest, criterion digests and
    topological order from the cache, or compute them and keep them there (then :func:`prune`
    the cache, keeping *file_key* too: a new plan's facts are always written). When they are
    not kept, *by_item* gives the digest and criterion digests put together from the facts
    kept per node and edge (:func:`.factcache.facts_by_item`), or None."""
    path = cache_dir / f"facts-{key}.json"
    try:
        facts = json_loads(read_keyed(path, key))
        if facts["version"] == code_version() and facts["plan"] == plan.plan:
            criteria = {(n, c): str(d) for n, c, d in facts["criteria"]}
            order = tuple(str(n) for n in facts["order"])
            ids = {node.id for node in plan.nodes}
            if len(order) != len(ids) or ids != set(order):  # each node once
                raise ValueError("the kept order is not one of the plan's nodes")
            # the values of the cached properties, as computing them would have set them
            plan.__dict__["digest"] = str(facts["digest"])
            plan.__dict__["criterion_digests"] = criteria
            plan.__dict__["topological_order"] = order
            if facts.get("shape") is not None:  # see factcache.shape
                plan.__dict__["node_shape"] = facts["shape"]
            return
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if by_item is not None and "digest" not in plan.__dict__:
        found = by_item()
        if found is not None:
            plan.__dict__["digest"], plan.__dict__["criterion_digests"] = found
    criteria = plan.criterion_digests
    facts = {
        "version": code_version(),
        "plan": plan.plan,
        "digest": plan.digest,
        "criteria": [[n, c, d] for (n, c), d in criteria.items()],
        "order": list(plan.topological_order),
        "shape": plan.__dict__.get("node_shape"),
    }
    with contextlib.suppress(TypeError, ValueError):
        _write(path, keyed(key, json.dumps(facts, ensure_ascii=False).encode()))
    prune(cache_dir, key, also=file_key)


def read_entry(cache_dir: Path, kind: str, key: str, version: str) -> Any:
    """The data kept as *kind* (say ``lint``) for the plan file whose sha256 is *key* by code
    of *version*, or None when there is none, it cannot be read, or other code kept it."""
    try:
        kept = json_loads(read_regular(cache_dir / f"{kind}-{key}.json"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("version") != version:
        return None
    return kept.get("data")


def keep_entry(cache_dir: Path, kind: str, key: str, version: str, data: Any) -> None:
    """Keep *data* as *kind* for the plan file whose sha256 is *key*, made by code of
    *version* (:func:`read_entry` gives it back); nothing happens when it cannot be written."""
    _write(cache_dir / f"{kind}-{key}.json", {"version": version, "data": data})


def code_version() -> str:
    """What kept facts are valid for: the fingerprint of the package's code
    (:func:`~..codehash.code_fingerprint`), so a changed digest or order rule never meets facts
    kept by other code of the same version."""
    return code_fingerprint()


def lint_version() -> str:
    """What kept lint findings are valid for: the fingerprint of the package's code, which covers
    the lint rules and everything they read (plan model, graph, paths, locations, verifiers)."""
    return code_fingerprint()


MAX_CACHE_BYTES = 256 * 1024 * 1024
"""The largest cache file read: a larger one is a miss, not read (a file planted or grown to
gigabytes would otherwise be read whole into memory on every command)."""


def read_regular(path: Path) -> bytes:
    """The bytes of the cache file at *path*; OSError unless it is a regular file (a FIFO put
    in its place would otherwise make the reader wait for a writer that never comes) of at
    most :data:`MAX_CACHE_BYTES`, and when it grew while it was read."""
    info, raw = regularfile.read_regular(path, MAX_CACHE_BYTES, with_stat=True)
    if len(raw) > info.st_size:  # grown since the stat
        raise OSError(f"{path} changed while it was read")
    return raw


def read_tagged_file(path: Path, tag: Callable[[bytes], str]) -> tuple[str, bytes] | None:
    """The tag and the body of the cache file at *path* (a first line holding the tag, then
    the body) when *tag* gives that tag for the body; None otherwise, or when it cannot be read
    (:func:`read_regular`)."""
    try:
        raw = read_regular(path)
    except OSError:
        return None
    head, _, body = raw.partition(b"\n")
    text = head.decode("ascii", "replace")
    if not body or text != tag(body):
        return None
    return text, body


def read_tagged_json(path: Path, tag: Callable[[bytes], str]) -> tuple[str, Any] | None:
    """The tag and the JSON value of the cache file at *path* (:func:`read_tagged_file`);
    None when there is none or its body is not JSON."""
    found = read_tagged_file(path, tag)
    if found is None:
        return None
    try:
        return found[0], json_loads(found[1])
    except ValueError:
        return None


def write_tagged_file(path: Path, body: bytes, tag: Callable[[bytes], str]) -> None:
    """Keep *body* at *path* under its tag (:func:`read_tagged_file`), atomically; nothing
    happens when the file cannot be written."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        make_cache_dir(path.parent)
        write_partial(partial, tag(body).encode("ascii") + b"\n" + body)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def write_partial(partial: Path, data: bytes) -> None:
    """Write *data* into a new file at *partial* (a temporary name, renamed over the kept file
    next): whatever the name held is removed first and the file is created anew, never opened
    through a link, so a link planted at the name (to the store, say) is not written through
    (OSError when the name cannot be had)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(partial)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(partial, flags, 0o666)
    with open(descriptor, "wb") as handle:
        handle.write(data)


def make_cache_dir(directory: Path) -> None:
    """Create the cache folder *directory* with a ``.gitignore`` of ``*`` in it, so that git
    never lists what is kept there as a change (OSError when it cannot be made). The marker
    is made only where nothing stands at its name: a link left there, even one pointing
    nowhere, is never written through."""
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / ".gitignore"
    if os.path.lexists(marker):
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with contextlib.suppress(FileExistsError), open(os.open(marker, flags, 0o666), "wb") as out:
        out.write(b"# cache of pytest-plangraph: safe to delete\n*\n")


def _write(path: Path, data: Any) -> None:
    try:
        body = data if isinstance(data, bytes) else json.dumps(data, ensure_ascii=False).encode()
        make_cache_dir(path.parent)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        write_partial(partial, body)
        os.replace(partial, path)
    except (OSError, TypeError, ValueError):
        return
