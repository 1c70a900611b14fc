"""The package's modules served from one file (``pytest_plangraph.bundle``): a ``--plangraph`` run
and a ``plangraph`` command write it, the next ones import the package from it, a module whose
source changed (by its mtime to the nanosecond or its size) is imported from its source and
written anew, a damaged or unwritable file is no error, and nothing is written when Python writes
no bytecode. Each run is a new process; the package's bytecode (and so the file) is kept in a
``PYTHONPYCACHEPREFIX`` of the test's own, or, where a source is edited, in a copy of the
package put first on the path."""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pytest_plangraph
from pytest_plangraph import bundle

PROBE = """
import atexit, json, sys
REPORT = sys.argv[1]
def report():
    found = {
        name: [type(module.__loader__).__name__, module.__file__, hasattr(module, "EDITED")]
        for name, module in list(sys.modules.items())
        if name.startswith("pytest_plangraph")
    }
    with open(REPORT, "w") as out:
        json.dump(found, out)
atexit.register(report)  # run after the finder's own handler, registered later
sys.argv = sys.argv[2:]
if sys.argv[0] == "pytest":
    import pytest
    raise SystemExit(pytest.console_main())
from pytest_plangraph.cli import run
run()
"""

RUN = ["pytest", "--plangraph", "-q", "-p", "no:cacheprovider"]
DAMAGED = "pytest_plangraph.plugin.session"
"""The module whose code the ``code-`` damages overwrite."""


@pytest.fixture
def jwt(project: Callable[[str], Path]) -> Path:
    return project("jwt-login")


def _environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGRAPH_", "PYTHON"))}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pyc")
    env.update(extra)
    return env


def _run(root: Path, tmp_path: Path, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run *args* in a new process: its exit code, output and the package's modules it had
    imported at exit (name: loader class, file, whether it has ``EDITED``)."""
    report = tmp_path / "loaded.json"
    report.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,  # a run that hangs on the file fails the test
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    return {
        "code": done.returncode,
        "output": done.stdout,
        "errors": done.stderr,
        "modules": json.loads(report.read_text()),
    }


def _file(env: dict[str, str], package: Path) -> Path:
    """Where a process with *env* keeps the file of the package in *package*."""
    code = "from pytest_plangraph import bundle; print(bundle.bundle_path())"
    done = subprocess.run(  # from the package's parent, where no checkout comes first
        [sys.executable, "-c", code],
        cwd=package.parent.parent,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    path = Path(done.stdout.strip())
    assert path.name.startswith("plangraph-modules.") and path.suffix == ".bin"
    assert (
        str(package.resolve()).lstrip(os.sep) in str(path) or path.parent == package / "__pycache__"
    )
    return path


def _served(run: dict[str, Any]) -> tuple[int, int]:
    """(modules imported from the file, modules of the package imported in all)."""
    loaders = [loader for loader, _, _ in run["modules"].values()]
    return loaders.count("BundledLoader"), len(loaders)


def _summary(run: dict[str, Any]) -> list[str]:
    """The run's one-line account of the plan (nodes completed, evidence recorded)."""
    return [line for line in run["output"].splitlines() if line.startswith("plan ")]


def test_a_second_run_imports_the_package_from_one_file(jwt: Path, tmp_path: Path) -> None:
    env = _environment(tmp_path)
    path = _file(env, Path(pytest_plangraph.__file__).parent)
    assert not path.exists()
    first = _run(jwt, tmp_path, RUN, env)
    assert first["code"] == 0, first["output"]
    assert _served(first)[0] == 0
    assert path.is_file()
    written = path.stat().st_mtime_ns
    # every module of the package, not only the run's: a command imports others
    held = set(bundle._read(str(path))[1])
    assert held == {name for name, _, _ in bundle._modules()}
    assert {"pytest_plangraph.cli.state_cmds", "pytest_plangraph.mcp"} <= held

    second = _run(jwt, tmp_path, RUN, env)
    assert second["code"] == 0, second["output"]
    served, imported = _served(second)
    assert imported > 50
    # all but the modules imported before the finder (the package, its version, the plugin)
    assert served >= imported - 4, second["modules"]
    assert _summary(second) == _summary(first)
    assert path.stat().st_mtime_ns == written  # nothing was missing: not written again

    path.unlink()  # the file never decides: without it the run answers the same
    third = _run(jwt, tmp_path, RUN, env)
    assert _summary(third) == _summary(first)
    assert _served(third)[0] == 0
    written = path.stat().st_mtime_ns
    # the run wrote what the command imports
    status = _run(jwt, tmp_path, ["plangraph", "status"], env)
    assert _served(status)[0] > 10
    assert path.stat().st_mtime_ns == written


def test_a_command_writes_the_file_and_reads_it_next_time(jwt: Path, tmp_path: Path) -> None:
    env = _environment(tmp_path)
    path = _file(env, Path(pytest_plangraph.__file__).parent)
    first = _run(jwt, tmp_path, ["plangraph", "status"], env)
    assert "step-token-endpoint" in first["output"]  # the command ran, not only its usage
    assert path.is_file()
    written = path.stat().st_mtime_ns
    second = _run(jwt, tmp_path, ["plangraph", "status"], env)
    assert (second["code"], second["output"]) == (first["code"], first["output"])
    served, imported = _served(second)
    assert served > 0 and served >= imported - 5, second["modules"]
    assert path.stat().st_mtime_ns == written


def _package_copy(tmp_path: Path) -> Path:
    """A copy of the package, without bytecode, in a folder put first on the path."""
    site = tmp_path / "site"
    source = Path(pytest_plangraph.__file__).parent
    shutil.copytree(source, site / "pytest_plangraph", ignore=shutil.ignore_patterns("__pycache__"))
    return site / "pytest_plangraph"


def test_an_edited_module_is_imported_from_its_source_then_kept(jwt: Path, tmp_path: Path) -> None:
    package = _package_copy(tmp_path)
    env = _environment(tmp_path, PYTHONPATH=str(package.parent))
    env.pop("PYTHONPYCACHEPREFIX")
    path = _file(env, package)
    assert path.parent == package / "__pycache__"
    first = _run(jwt, tmp_path, RUN, env)
    assert first["modules"]["pytest_plangraph"][1].startswith(str(package))
    assert path.is_file()

    session = package / "plugin/session.py"
    session.write_text(session.read_text() + "\nEDITED = True\n")
    second = _run(jwt, tmp_path, RUN, env)
    loader, _, edited = second["modules"]["pytest_plangraph.plugin.session"]
    assert (loader, edited) == ("SourceFileLoader", True)
    assert _summary(second) == _summary(first)

    third = _run(jwt, tmp_path, RUN, env)  # the file now holds the edited module
    loader, _, edited = third["modules"]["pytest_plangraph.plugin.session"]
    assert (loader, edited) == ("BundledLoader", True)


def test_a_source_touched_within_the_same_second_is_not_served(jwt: Path, tmp_path: Path) -> None:
    """The file compares a source's mtime to the nanosecond (Python's own bytecode file, to the
    whole second): a source whose mtime moved by one nanosecond is left to Python's finders."""
    package = _package_copy(tmp_path)
    env = _environment(tmp_path, PYTHONPATH=str(package.parent))
    env.pop("PYTHONPYCACHEPREFIX")
    _run(jwt, tmp_path, RUN, env)
    served = _run(jwt, tmp_path, RUN, env)
    assert served["modules"]["pytest_plangraph.plugin.session"][0] == "BundledLoader"
    session = package / "plugin/session.py"
    stat = session.stat()
    os.utime(session, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    run = _run(jwt, tmp_path, RUN, env)
    assert run["modules"]["pytest_plangraph.plugin.session"][0] == "SourceFileLoader"
    assert _served(run)[0] > 50  # the others still are


@pytest.mark.parametrize(
    "damage",
    [
        "empty",
        "noise",
        "other-magic",
        "index-outside",
        "index-noise",
        "entry-outside",
        "path-up",
        "code-bad",
        "code-none",
        "other-source",
        "outside-name",
    ],
)
def test_a_damaged_file_is_ignored_and_written_again(
    jwt: Path, tmp_path: Path, damage: str
) -> None:
    env = _environment(tmp_path)
    path = _file(env, Path(pytest_plangraph.__file__).parent)
    first = _run(jwt, tmp_path, RUN, env)
    good = path.read_bytes()
    path.write_bytes(_damaged(good, damage))
    run = _run(jwt, tmp_path, RUN, env)
    assert run["code"] == 0, run["output"]
    assert _summary(run) == _summary(first)
    if damage.startswith("code-"):  # one module's code: that module read from its source
        assert _served(run)[0] > 50
        assert run["modules"][DAMAGED][1].endswith("session.py")
    else:
        assert _served(run)[0] == 0
    assert bundle._read(str(path))[1], "written again whole"
    assert path.read_bytes() != _damaged(good, damage)
    again = _run(jwt, tmp_path, RUN, env)
    assert _served(again)[0] > 50


def _damaged(good: bytes, damage: str) -> bytes:
    head = len(bundle.FORMAT) + 4
    start = int.from_bytes(good[head : head + 8], "little")
    index = marshal.loads(good[start:])
    if damage == "empty":
        return b""
    if damage == "noise":
        return os.urandom(len(good))
    if damage == "other-magic":
        return good[: len(bundle.FORMAT)] + b"\0\0\r\n" + good[head:]
    if damage == "index-outside":
        return good[:head] + (len(good) + 10).to_bytes(8, "little") + good[head + 8 :]
    if damage == "index-noise":
        return good[:start] + os.urandom(len(good) - start)
    if damage.startswith("code-"):
        begin, end = index[DAMAGED][4:]
        filler = b"\xff" * (end - begin) if damage == "code-bad" else b"N" * (end - begin)
        return good[:begin] + filler + good[end:]
    name = next(iter(index))
    relative, package, mtime, size, begin, end = index[name]
    if damage == "other-source":  # a name given another module's whole entry
        index[name] = index["pytest_plangraph.plugin.session"]
        return good[:start] + marshal.dumps(index)
    if damage == "outside-name":  # a module not of the package (one the project could have)
        index["conftest_helpers"] = index[name]
        return good[:start] + marshal.dumps(index)
    if damage == "entry-outside":
        index[name] = (relative, package, mtime, size, begin, start + 100)
    else:
        index[name] = ("/../" + relative, package, mtime, size, begin, end)
    return good[:start] + marshal.dumps(index)


def test_nothing_is_written_when_python_writes_no_bytecode(jwt: Path, tmp_path: Path) -> None:
    env = _environment(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    path = _file(env, Path(pytest_plangraph.__file__).parent)
    run = _run(jwt, tmp_path, RUN, env)
    assert run["code"] == 0, run["output"]
    assert not path.exists()


def test_a_place_that_cannot_be_written_is_no_error(jwt: Path, tmp_path: Path) -> None:
    env = _environment(tmp_path)
    path = _file(env, Path(pytest_plangraph.__file__).parent)
    path.mkdir(parents=True)  # a folder where the file would go: the rename fails
    run = _run(jwt, tmp_path, RUN, env)
    assert run["code"] == 0, run["output"]
    assert path.is_dir() and not list(path.parent.glob("*.tmp"))


@pytest.mark.parametrize("damage", ["shifted", "another-module"])
def test_a_damaged_piece_is_imported_from_source_and_written_again(
    jwt: Path, tmp_path: Path, damage: str
) -> None:
    """A module's code range that starts inside its code (a flipped offset) or holds another
    module's code is no traceback and no other module's code: the module's code is its
    source's, the others still come from the file, and the file is written again."""
    env = _environment(tmp_path)
    path = _file(env, Path(pytest_plangraph.__file__).parent)
    first = _run(jwt, tmp_path, RUN, env)
    good = path.read_bytes()
    head = len(bundle.FORMAT) + 4
    start = int.from_bytes(good[head : head + 8], "little")
    index = marshal.loads(good[start:])
    name = "pytest_plangraph.plugin.session"
    relative, package, mtime, size, begin, end = index[name]
    if damage == "shifted":
        index[name] = (relative, package, mtime, size, begin + 1, end)
    else:
        other = index["pytest_plangraph.api"]
        index[name] = (relative, package, mtime, size, other[4], other[5])
    path.write_bytes(good[:start] + marshal.dumps(index))
    run = _run(jwt, tmp_path, RUN, env)
    assert run["code"] == 0, run["output"]
    assert _summary(run) == _summary(first)  # the session ran its own code
    assert _served(run)[0] > 50
    assert bundle._read(str(path))[1][name][4:] != index[name][4:], "written again"
    again = _run(jwt, tmp_path, RUN, env)
    assert again["modules"][name][0] == "BundledLoader"


def test_a_fifo_at_the_file_is_not_waited_on(jwt: Path, tmp_path: Path) -> None:
    """A FIFO where the file goes (nothing ever writes to it) is not opened for reading and
    waited on: the run answers as without the file, and writes the file in its place."""
    env = _environment(tmp_path)
    path = _file(env, Path(pytest_plangraph.__file__).parent)
    first = _run(jwt, tmp_path, RUN, env)
    path.unlink()
    os.mkfifo(path)
    run = _run(jwt, tmp_path, RUN, env)  # before the fix: blocked in open() until the timeout
    assert run["code"] == 0, run["output"]
    assert _summary(run) == _summary(first)
    assert _served(run)[0] == 0
    assert path.is_file() and bundle._read(str(path))[1]


def test_the_file_is_not_written_through_a_planted_link(tmp_path: Path) -> None:
    """The file is written under a temporary name created new, as Python writes a bytecode
    file: a link planted at that name (whose target the writing process may write and the
    planter not) is not followed; the link is taken away and the name made anew."""
    path = tmp_path / "__pycache__" / "plangraph-modules.bin"
    path.parent.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("kept")
    link = Path(f"{path}.{os.getpid()}.tmp")
    link.symlink_to(victim)
    code = marshal.dumps(compile("X = 1", "x.py", "exec"))
    bundle._write(str(path), {"pytest_plangraph.x": ("/x.py", False, 1, 1, code)})
    assert victim.read_text() == "kept"  # the link itself was taken away, not followed
    assert not link.exists() and not link.is_symlink()
    assert path.is_file() and not path.is_symlink()


SWAP = """
import importlib.machinery, os, sys, types
from pytest_plangraph import bundle
finder = next(f for f in sys.meta_path if isinstance(f, bundle.BundleFinder))
name = "pytest_plangraph.audit"  # put in sys.modules with another module's source as its own
fake = types.ModuleType(name)
fake.__spec__ = importlib.machinery.ModuleSpec(name, None, origin=bundle.ROOT + "/values.py")
fake.__file__ = fake.__spec__.origin
sys.modules[name] = fake
finder.missed.append(name)
"""


def test_a_module_put_in_sys_modules_under_another_name_is_not_written(
    jwt: Path, tmp_path: Path
) -> None:
    """A conftest that puts in ``sys.modules``, under a module's name, a module whose source is
    another of the package's does not get the file to serve that other module's code under that
    name: the file written keeps each name to its own source."""
    env = _environment(tmp_path)
    path = _file(env, Path(pytest_plangraph.__file__).parent)
    (jwt / "conftest.py").write_text(SWAP)
    run = _run(jwt, tmp_path, RUN, env)
    assert "plan " in run["output"], run["output"]
    index = bundle._read(str(path))[1]
    assert index, "the file was written and is read"
    assert index["pytest_plangraph.audit"][0] == os.sep + "audit.py"  # its own source
    assert all(relative == bundle._source(n, p) for n, (relative, p, *_) in index.items())
    start, end = index["pytest_plangraph.audit"][4:]
    code = marshal.loads(path.read_bytes()[start:end])
    assert code.co_filename.endswith(os.sep + "audit.py")


@pytest.mark.parametrize("odd", ["too-deep", "fifo", "device", "warns"])
def test_an_odd_module_never_imported_is_left_out_of_the_file(
    jwt: Path, tmp_path: Path, odd: str
) -> None:
    """A file of the package folder that no run imports, but that the file's writing (every
    module of the package) and the code fingerprint read: a source too deeply nested to compile,
    a FIFO or a device named like a module. None is a traceback at exit or a wait without end
    (before the fix: a ``RecursionError`` at exit and no file written; a run blocked on the
    FIFO, or reading the device, until the timeout), and the others are still served. A
    module whose compiling warns (an invalid escape) prints no warning at the process's end."""
    package = _package_copy(tmp_path)
    module = package / "odd_module.py"
    if odd == "too-deep":
        module.write_text("x = " + " + ".join(["a"] * 200_000) + "\n")
    elif odd == "fifo":
        os.mkfifo(module)
    elif odd == "warns":
        module.write_text('x = "\\d"\n')
    else:
        module.symlink_to(os.devnull)  # a character device (one without end, say /dev/zero, alike)
    env = _environment(tmp_path, PYTHONPATH=str(package.parent), PYTHONWARNINGS="always")
    env.pop("PYTHONPYCACHEPREFIX")
    path = _file(env, package)
    first = _run(jwt, tmp_path, ["plangraph", "status"], env)
    assert "step-token-endpoint" in first["output"]
    assert "odd_module" not in first["errors"]
    index = bundle._read(str(path))[1]
    assert "pytest_plangraph.cli.state_cmds" in index
    assert ("pytest_plangraph.odd_module" in index) is (odd == "warns")
    second = _run(jwt, tmp_path, ["plangraph", "status"], env)
    assert (second["code"], second["output"]) == (first["code"], first["output"])
    assert _served(second)[0] > 10
