"""pytest's rewritten test modules are kept between ``--plangraph`` runs only when this product
vouched for them: a later run takes a file it saw pytest write from the current source, and
nothing else — a planted file, a file changed after it was vouched for, an entry whose MAC was
not made with this user's salt, a file planted while the run is under way.

Each attack is made on a real copy of the JWT-login sample in a real git repository, with the
login broken so that any password gets a token (the test of the 401 answer catches it), and run
through real pytest processes.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import marshal
import os
from importlib.util import cache_from_source
from pathlib import Path

import pytest
from plugin_helpers import LOGIN, break_login, jwt_project, latest

from pytest_plangraph.plugin.rewritten import FORMAT

TOKEN = "step-token-endpoint"
INVALID = f"{TOKEN}/ac-invalid-401"


@pytest.fixture(autouse=True)
def _bytecode_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a user's shell neither forbids writing bytecode nor redirects it; the user's cache is
    # this test's own
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def rewritten(root: Path) -> Path:
    """pytest's cached rewrite of the sample's test module."""
    return next((root / "tests" / "__pycache__").glob("test_login.*-pytest-*.pyc"))


def entries_file(tmp_path: Path) -> Path:
    return next((tmp_path / "user-cache" / "plangraph" / "rewritten").glob("*.json"))


def checked_pyc(source: Path, code: object) -> bytes:
    """A PEP 552 checked-hash pyc carrying *source*'s current hash and *code*."""
    source_hash = importlib.util.source_hash(source.read_bytes())
    flags = (0b11).to_bytes(4, "little")
    return importlib.util.MAGIC_NUMBER + flags + source_hash + marshal.dumps(code)


def hollow_pyc(root: Path) -> bytes:
    """A checked-hash pyc carrying the test module's own hash, every assert gone from its code."""
    test_file = root / "tests" / "test_login.py"
    hollow = test_file.read_text(encoding="utf-8").replace("assert ", "pass  # ")
    return checked_pyc(test_file, compile(hollow, str(test_file), "exec"))


def vouched_then_broken(pytester: pytest.Pytester) -> Path:
    """The sample after one ``--plangraph`` run (its bytecode vouched for), then its login
    broken: the 401 test fails on the code as it now is."""
    root = jwt_project(pytester)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    break_login(root)
    return root


def planted_then_run(pytester: pytest.Pytester, root: Path, cached: Path, planted: bytes) -> None:
    """Put *planted* at *cached*: plain pytest runs it (the attack works without the plugin);
    put it there again: ``--plangraph`` does not, and records the 401 test's failure."""
    cached.write_bytes(planted)
    pytester.runpytest_subprocess().assert_outcomes(passed=2)
    cached.write_bytes(planted)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=2, failed=1)
    assert latest(root)[INVALID].outcome == "failed"


def stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_ino, info.st_mtime_ns


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_later_run_takes_the_rewritten_modules_it_vouched_for(
    pytester: pytest.Pytester, tmp_path: Path, workers: list[str]
) -> None:
    root = jwt_project(pytester)
    pytester.runpytest_subprocess("--plangraph", *workers).assert_outcomes(passed=3)
    cached = rewritten(root)
    entries = json.loads(entries_file(tmp_path).read_text(encoding="utf-8"))["entries"]
    assert str(cached) in entries
    assert entries[str(cached)][0] == str(root / "tests" / "test_login.py")
    before = stamp(cached)
    pytester.runpytest_subprocess("--plangraph", *workers).assert_outcomes(passed=3)
    assert stamp(cached) == before  # neither deleted nor written again: it was taken
    # a changed test module is compiled again, and its new file vouched for
    test_file = root / "tests" / "test_login.py"
    test_file.write_text(test_file.read_text(encoding="utf-8") + "\n# changed\n", "utf-8")
    pytester.runpytest_subprocess("--plangraph", *workers).assert_outcomes(passed=3)
    assert stamp(rewritten(root)) != before
    entries = json.loads(entries_file(tmp_path).read_text(encoding="utf-8"))["entries"]
    assert entries[str(cached)][1] == hashlib.sha256(test_file.read_bytes()).hexdigest()


def test_a_vouched_for_file_replaced_by_planted_code_is_not_run(
    pytester: pytest.Pytester,
) -> None:
    root = vouched_then_broken(pytester)
    planted_then_run(pytester, root, rewritten(root), hollow_pyc(root))


def test_an_entry_not_made_with_this_users_salt_vouches_for_nothing(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = vouched_then_broken(pytester)
    cached, planted = rewritten(root), hollow_pyc(root)
    cached.write_bytes(planted)
    source = root / "tests" / "test_login.py"
    # an entry naming the planted file's and the source's true digests, with a MAC made by
    # another key (copied from another machine, or written by hand)
    fields = [
        str(source),
        hashlib.sha256(source.read_bytes()).hexdigest(),
        hashlib.sha256(planted).hexdigest(),
    ]
    message = b"plangraph-rewritten-v1\0" + "\0".join([str(cached), *fields]).encode()
    mac = hmac.new(os.urandom(16), message, hashlib.sha256).hexdigest()
    data = {"format": FORMAT, "entries": {str(cached): [*fields, mac]}}
    entries_file(tmp_path).write_text(json.dumps(data), encoding="utf-8")
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=2, failed=1)
    assert latest(root)[INVALID].outcome == "failed"
    assert cached.read_bytes() != planted  # deleted before the run, then written anew


def test_a_file_planted_while_the_run_is_under_way_is_not_run(
    pytester: pytest.Pytester,
) -> None:
    root = vouched_then_broken(pytester)
    cached, planted = rewritten(root), hollow_pyc(root)
    # a conftest read after the purge puts the planted file in place of the vouched-for one
    (root / "tests" / "conftest.py").write_text(
        f"import pathlib\npathlib.Path({str(cached)!r}).write_bytes({planted!r})\n",
        encoding="utf-8",
    )
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=2, failed=1)
    assert latest(root)[INVALID].outcome == "failed"


@pytest.mark.parametrize("damage", ["{not json", '{"format": 1, "entries": []}', "[1, 2]"])
def test_an_unreadable_entries_file_only_costs_a_compilation(
    pytester: pytest.Pytester, tmp_path: Path, damage: str
) -> None:
    root = jwt_project(pytester)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    entries_file(tmp_path).write_text(damage, encoding="utf-8")
    before = stamp(rewritten(root))
    result = pytester.runpytest_subprocess("--plangraph")
    result.assert_outcomes(passed=3)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert stamp(rewritten(root)) != before  # not vouched for: deleted and written anew
    entries = json.loads(entries_file(tmp_path).read_text(encoding="utf-8"))["entries"]
    assert str(rewritten(root)) in entries


def test_a_later_run_takes_the_project_modules_bytecode_it_vouched_for(
    pytester: pytest.Pytester,
) -> None:
    root = jwt_project(pytester)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    cached = Path(cache_from_source(str(root / LOGIN)))
    before = stamp(cached)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    assert stamp(cached) == before  # read, not compiled and written again


def test_a_vouched_for_module_file_replaced_by_planted_code_is_not_run(
    pytester: pytest.Pytester,
) -> None:
    root = jwt_project(pytester)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)  # vouched for
    login = root / LOGIN
    good = compile(login.read_bytes(), str(login), "exec")
    break_login(root)
    cached = Path(cache_from_source(str(login)))
    planted_then_run(pytester, root, cached, checked_pyc(login, good))


def test_the_entry_of_a_deleted_test_module_is_not_kept(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = jwt_project(pytester)
    extra = root / "tests" / "test_extra.py"
    extra.write_text("def test_extra():\n    assert True\n", encoding="utf-8")
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=4)
    entries = json.loads(entries_file(tmp_path).read_text(encoding="utf-8"))["entries"]
    gone = [pyc for pyc in entries if "test_extra." in pyc]
    assert len(gone) == 1
    extra.unlink()
    Path(gone[0]).unlink()
    test_file = root / "tests" / "test_login.py"
    test_file.write_text(test_file.read_text(encoding="utf-8") + "\n# changed\n", "utf-8")
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    entries = json.loads(entries_file(tmp_path).read_text(encoding="utf-8"))["entries"]
    assert gone[0] not in entries
    assert str(rewritten(root)) in entries
