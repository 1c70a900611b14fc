"""Attacks on the bytecode the purge keeps before a ``--plangraph`` run.

* The bytecode kept between runs, through an earlier run: code of the repository that ran in it
  (a ``conftest.py`` gone by the next run) makes pytest's rewriter or the plugin's loader
  compile other code than the source it read, or writes entries of its own with this user's
  salt, which any process of the recording user can read. The next run would take those files
  as vouched for, so with keys configured none is kept.
* Stale bytecode of a module under test hidden from the purge, which left it for a process the
  tests start to run: a ``pyvenv.cfg`` dropped beside the module (its folder taken for a
  virtual environment), its ``__pycache__`` a link to a folder elsewhere (not walked), or the
  user's ``PYTHONPYCACHEPREFIX`` tree (not looked at), a tree of that kind a ``conftest.py``
  names, inside the repository (no ``__pycache__`` in it) or outside it (named after the
  purge), or a hidden folder of the project's (not walked).

Each attack is made on a real copy of the JWT-login sample in a real git repository, with the
login broken so that any password gets a token (the test of the 401 answer catches it), and run
through real pytest processes.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
import venv
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git
from plugin_helpers import break_login, jwt_project, latest

from pytest_plangraph.plugin.purge import purge_bytecode

INVALID = "step-token-endpoint/ac-invalid-401"

HOLLOWING_CONFTEST = """
import ast
from _pytest.assertion import rewrite

_rewrite_asserts = rewrite.rewrite_asserts


def _hollow(mod, *args, **kwargs):
    for node in ast.walk(mod):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                value[:] = [
                    ast.copy_location(ast.Pass(), v) if isinstance(v, ast.Assert) else v
                    for v in value
                ]
    return _rewrite_asserts(mod, *args, **kwargs)


rewrite.rewrite_asserts = _hollow
"""
"""A conftest that makes pytest compile every later test module with its asserts gone."""

FORGING_CONFTEST = """
import atexit
import hashlib
import importlib.util
import marshal
import os
from pathlib import Path

from pytest_plangraph.plugin import rewritten

TEST = Path(__file__).parent / "test_login.py"


def _forge():
    # once the run has ended: a pyc of the test module with its asserts gone, and an entry
    # for it made with the salt this process can read
    pyc = next((TEST.parent / "__pycache__").glob("test_login.*-pytest-*.pyc"))
    source = TEST.read_bytes()
    code = compile(source.decode().replace("assert ", "pass  # "), str(TEST), "exec")
    flags = (0b11).to_bytes(4, "little")
    data = importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source)
    pyc.write_bytes(data + marshal.dumps(code))
    data = pyc.read_bytes()
    cache = rewritten.RewriteCache.open(Path(os.path.abspath(TEST.parents[1])), bool)
    sha = [hashlib.sha256(source).hexdigest(), hashlib.sha256(data).hexdigest()]
    mac = rewritten._mac(cache.key, str(pyc), str(TEST), *sha)
    cache.written[str(pyc)] = rewritten.Entry(str(TEST), *sha, mac)
    cache.save()


atexit.register(_forge)
"""
"""A conftest that plants a pyc of the test module with its asserts gone once the run has ended,
and writes the entry that vouches for it with this user's salt."""

MENDING_CONFTEST = """
from pytest_plangraph.plugin import soundness

_source_to_code = soundness.CheckedSourceLoader.source_to_code


def _mended(self, data, path, *args, **kwargs):
    if path.endswith("login.py"):  # the broken check compiled as the good one
        data = data.replace(b"if False:", b"if _users().get(username) != digest:")
    return _source_to_code(self, data, path, *args, **kwargs)


soundness.CheckedSourceLoader.source_to_code = _mended
"""
"""A conftest that makes the plugin's loader compile the broken login module as the good one."""


@pytest.fixture(autouse=True)
def _bytecode_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a user's shell neither forbids writing bytecode nor redirects it; the user's cache is
    # this test's own, and evidence is signed as where the gate trusts only signed evidence
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setenv("PLANGRAPH_SIGNING_KEY", "recording-key")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
@pytest.mark.parametrize(
    "earlier",
    [HOLLOWING_CONFTEST, FORGING_CONFTEST, MENDING_CONFTEST],
    ids=["rewriter-hollowed", "entry-forged", "loader-mended"],
)
def test_code_that_ran_in_an_earlier_run_vouches_for_no_file_a_later_run_takes(
    pytester: pytest.Pytester, earlier: str, workers: list[str]
) -> None:
    root = jwt_project(pytester)
    conftest = root / "tests" / "conftest.py"
    conftest.write_text(earlier, encoding="utf-8")
    break_login(root)
    assert pytester.runpytest_subprocess("--plangraph", *workers).ret in (0, 1)
    conftest.unlink()
    pytester.runpytest_subprocess("--plangraph", *workers).assert_outcomes(passed=2, failed=1)
    assert latest(root)[INVALID].outcome == "failed"


SUBPROCESS_TESTS = """
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def answer(password):
    code = f"from src.auth.login import login; print(login('alice', {password!r})[0])"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


def test_login_success():
    assert answer("alice123") == "200"


@pytest.mark.criterion("step-token-endpoint/ac-invalid-401")
def test_login_wrong_password():
    assert answer("wrong") == "401"
"""
"""The sample's tests, made through a process each test starts: nothing imports the login
module in the run's own interpreter."""


def hide_with_pyvenv_cfg(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An untracked pyvenv.cfg (as __pycache__ is) makes the module's folder look like an
    environment."""
    (root / "src" / "auth" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")


def hide_behind_a_link(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The module's __pycache__ is a link to a folder outside the repository."""
    folder = root / "src" / "auth" / "__pycache__"
    folder.rename(tmp_path / "elsewhere")
    folder.symlink_to(tmp_path / "elsewhere", target_is_directory=True)


def hide_under_the_prefix(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user keeps bytecode in a tree of its own (PYTHONPYCACHEPREFIX), which the module's
    bytecode is moved to."""
    prefix = tmp_path / "bytecode"
    folder = root / "src" / "auth"
    target = Path(prefix, *folder.parts[1:])
    target.mkdir(parents=True)
    for pyc in (folder / "__pycache__").glob("login.*.pyc"):
        pyc.rename(target / pyc.name)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(prefix))


PREFIX_CONFTEST = """
import os
from pathlib import Path

# keep the bytecode of the processes the tests start out of the source tree
os.environ["PYTHONPYCACHEPREFIX"] = str(Path(__file__).parents[1] / "build" / "bytecode")
"""


def hide_in_a_tree_a_conftest_names(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A committed conftest points the processes the tests start at a bytecode tree inside
    the repository (read after the purge), which the module's bytecode is moved to."""
    (root / "tests" / "conftest.py").write_text(PREFIX_CONFTEST, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bytecode out of the source tree")
    hide_under_the_prefix(root, root / "build", monkeypatch)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX")


def hide_outside_in_a_tree_a_conftest_names(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same, with the tree outside the repository (read after the purge)."""
    prefix = tmp_path / "outside"
    (root / "tests" / "conftest.py").write_text(
        PREFIX_CONFTEST.replace(
            'str(Path(__file__).parents[1] / "build" / "bytecode")', repr(str(prefix))
        ),
        encoding="utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bytecode out of the source tree")
    hide_under_the_prefix(root, tmp_path / "unused", monkeypatch)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX")
    (tmp_path / "unused" / "bytecode").rename(prefix)


@pytest.mark.parametrize(
    "hide",
    [
        hide_with_pyvenv_cfg,
        hide_behind_a_link,
        hide_under_the_prefix,
        hide_in_a_tree_a_conftest_names,
        hide_outside_in_a_tree_a_conftest_names,
    ],
)
def test_stale_bytecode_of_the_code_under_test_is_not_hidden_from_the_purge(
    pytester: pytest.Pytester,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hide: Callable[[Path, Path, pytest.MonkeyPatch], None],
) -> None:
    root = jwt_project(pytester)
    (root / "tests" / "test_login.py").write_text(SUBPROCESS_TESTS, encoding="utf-8")
    # a real virtual environment in the repository is still passed over
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root / "env")
    lib = root / "env" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    kept = lib / "site-packages" / "__pycache__" / "tool.pyc"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"not this run's")
    # the good module's bytecode left under the broken one's size and mtime, hidden
    break_login(root, unnoticed=True)
    hide(root, tmp_path, monkeypatch)
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=2, failed=1)
    assert latest(root)[INVALID].outcome == "failed"
    assert kept.read_bytes() == b"not this run's"


TOOL_TEST = """
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
CODE = "import sys; sys.path.insert(0, '.tools'); from answer import answer; print(answer('x'))"


@pytest.mark.criterion("step-token-endpoint/ac-invalid-401")
def test_the_tool_refuses_a_wrong_password():
    done = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.strip() == "401"
"""


def test_stale_bytecode_in_a_hidden_folder_of_the_project_is_purged(
    pytester: pytest.Pytester,
) -> None:
    root = jwt_project(pytester)
    tool = root / ".tools" / "answer.py"
    tool.parent.mkdir()
    tool.write_text('def answer(password):\n    return 401 if password != "a" else 200\n', "utf-8")
    (root / "tests" / "test_tool.py").write_text(TOOL_TEST, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a tool the tests run")
    # its good bytecode left under the broken source's size and mtime
    before = tool.stat()
    py_compile.compile(
        str(tool),
        cfile=importlib.util.cache_from_source(str(tool)),
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
    )
    tool.write_text(tool.read_text(encoding="utf-8").replace("!=", "=="), encoding="utf-8")
    os.utime(tool, ns=(before.st_atime_ns, before.st_mtime_ns))
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3, failed=1)
    assert latest(root)[INVALID].outcome == "failed"


@pytest.mark.parametrize("prefix", [None, os.sep, "bytecode"])
def test_the_purge_keeps_a_module_kept_as_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: str | None
) -> None:
    root = tmp_path / "repo"
    module = root / "lib" / "kept.pyc"  # a module shipped as bytecode, no source beside it
    cached = root / "lib" / "__pycache__" / "tool.cpython-311.pyc"
    for path in (module, cached):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"bytecode")
    monkeypatch.chdir(tmp_path)  # a relative prefix is taken from the working folder
    purged = purge_bytecode(root, [], prefix=prefix)
    assert purged == ["lib/__pycache__/tool.cpython-311.pyc"]
    assert module.exists()
    assert not cached.exists()
