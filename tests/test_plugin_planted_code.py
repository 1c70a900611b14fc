"""Code planted beside the reviewed tree cannot make an honest ``pytest --plangraph`` run record
a pass for broken code: forged checked-hash bytecode (of a source module, or in pytest's own
cache of rewritten test modules), a conftest in a folder merely named ``site-packages``, and a
conftest that is a link out of the repository.

Each attack is made on a real copy of the JWT-login sample in a real git repository, with the
login broken so that any password gets a token (the test of the 401 answer catches it).
"""

from __future__ import annotations

import importlib.util
import marshal
import sys
from pathlib import Path

import pytest
from plugin_helpers import LOGIN, break_login, evidence, jwt_project, latest, section

TOKEN = "step-token-endpoint"
INVALID = f"{TOKEN}/ac-invalid-401"


@pytest.fixture(autouse=True)
def _bytecode_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # a user's shell neither forbids writing bytecode nor redirects it
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)


def _checked_pyc(path: Path, source_hash: bytes, code: object) -> None:
    """Write a PEP 552 checked-hash pyc at *path*: *source_hash* in its header, *code* in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = (0b11).to_bytes(4, "little")
    path.write_bytes(importlib.util.MAGIC_NUMBER + flags + source_hash + marshal.dumps(code))


def test_forged_checked_hash_bytecode_of_a_source_module_is_not_run(
    pytester: pytest.Pytester,
) -> None:
    root = jwt_project(pytester)
    good = (root / LOGIN).read_bytes()
    break_login(root)
    source = root / LOGIN
    cached = Path(importlib.util.cache_from_source(str(source)))
    # the broken source's hash, the good source's code: Python itself would run the good code
    _checked_pyc(
        cached, importlib.util.source_hash(source.read_bytes()), compile(good, str(source), "exec")
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=2)  # the attack, without the plugin
    _checked_pyc(
        cached, importlib.util.source_hash(source.read_bytes()), compile(good, str(source), "exec")
    )
    result = pytester.runpytest_subprocess("--plangraph")
    result.assert_outcomes(passed=2, failed=1)
    assert (latest(root)[INVALID].outcome, latest(root)[INVALID].reason) == (
        "failed",
        "TEST_FAILED",
    )


def test_a_forged_rewritten_test_module_in_pytests_cache_is_not_run(
    pytester: pytest.Pytester,
) -> None:
    root = jwt_project(pytester)
    break_login(root)
    pytester.runpytest_subprocess().assert_outcomes(passed=1, failed=1)  # pytest cached it
    test_file = root / "tests" / "test_login.py"
    cached = next((root / "tests" / "__pycache__").glob("test_login.*-pytest-*.pyc"))
    # the test module's own hash, with every assert of the 401 test gone from its code
    hollow = test_file.read_text(encoding="utf-8").replace("assert ", "pass  # ")
    code = compile(hollow, str(test_file), "exec")
    _checked_pyc(cached, importlib.util.source_hash(test_file.read_bytes()), code)
    pytester.runpytest_subprocess().assert_outcomes(passed=2)  # the attack, without the plugin
    _checked_pyc(cached, importlib.util.source_hash(test_file.read_bytes()), code)
    result = pytester.runpytest_subprocess("--plangraph")
    result.assert_outcomes(passed=2, failed=1)
    assert latest(root)[INVALID].outcome == "failed"


def test_a_conftest_in_a_folder_named_site_packages_binds(pytester: pytest.Pytester) -> None:
    root = jwt_project(pytester)
    folder = root / "tests" / "site-packages"
    folder.mkdir()
    (folder / "conftest.py").write_text("HELPER = 1\n", encoding="utf-8")
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    subjects = latest(root)[INVALID].subjects
    assert "tests/site-packages/conftest.py" in subjects


def test_a_conftest_linked_out_of_the_repository_records_no_pass(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = jwt_project(pytester)
    outside = tmp_path_factory.mktemp("outside") / "conftest.py"
    outside.write_text("LINKED = 1\n", encoding="utf-8")
    (root / "tests" / "conftest.py").symlink_to(outside)
    result = pytester.runpytest_subprocess("--plangraph")
    result.assert_outcomes(passed=3)
    assert [r for r in evidence(root) if r.outcome == "passed"] == []
    lines = section(result.stdout.str())
    assert any("UNBOUND_CODE" in line for line in lines), lines
    assert any("tests/conftest.py link(s) to files outside" in line for line in lines), lines


def test_a_run_leaves_no_bytecode_older_than_itself(pytester: pytest.Pytester) -> None:
    root = jwt_project(pytester)
    planted = root / "src" / "auth" / "__pycache__" / f"other.{sys.implementation.cache_tag}.pyc"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_bytes(b"planted")
    pytester.runpytest_subprocess("--plangraph").assert_outcomes(passed=3)
    assert not planted.exists()
