"""Under ``--plangraph`` this package's modules are imported as any installed module is, not
through pytest's assertion rewriter (which pytest would use for every module of a plug-in's
distribution, reading each cached module through ``marshal.load`` on an open file); the tests'
own modules are still rewritten, and a run without ``--plangraph`` leaves pytest's marking as
it was. Each run is a separate process, its loaders read at exit."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

PROBE = """
import atexit, json, sys
seen = {"marked": []}
class Marked:
    def pytest_plugin_registered(self, plugin, manager):
        # as pytest marks the package of a plug-in installed from a wheel (an editable
        # install lists none of the package's modules, so pytest marks nothing there)
        if getattr(plugin, "__name__", "") == "pytest_plangraph.plugin":
            manager.rewrite_hook._must_rewrite.add("pytest_plangraph")
            manager.rewrite_hook._marked_for_rewrite_cache.clear()
    def pytest_sessionfinish(self):
        hooks = [f for f in sys.meta_path if type(f).__name__ == "AssertionRewritingHook"]
        seen["marked"] = sorted(getattr(hooks[0], "_must_rewrite", ())) if hooks else []
def report():
    seen["loaders"] = {
        name: type(getattr(module, "__loader__", None)).__name__
        for name, module in list(sys.modules.items())
        if name == "pytest_plangraph" or name.startswith(("pytest_plangraph.", "test_"))
    }
    with open(sys.argv[1], "w") as out:
        json.dump(seen, out)
atexit.register(report)
import pytest
raise SystemExit(int(pytest.main(sys.argv[2:], plugins=[Marked()])))
"""


def _run(root: Path, tmp_path: Path, *args: str) -> tuple[int, dict[str, str], list[str], str]:
    """Run ``pytest *args`` in a new process in *root*: its exit code, the loader of each of
    this package's modules and of each test module, the names pytest marked for rewriting at
    the end of the session, and the run's output."""
    report = tmp_path / "loaders.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    seen = json.loads(report.read_text())
    return done.returncode, seen["loaders"], seen["marked"], done.stdout + done.stderr


def test_the_package_is_imported_plainly_and_the_tests_are_still_rewritten(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("jwt-login")
    code, loaders, marked, output = _run(root, tmp_path, "--plangraph", "-q")
    assert code == 0, output
    ours = {name: kind for name, kind in loaders.items() if name.startswith("pytest_plangraph")}
    assert "pytest_plangraph.plugin.session" in ours
    assert "pytest_plangraph.api" in ours
    # the entry point and its package were loaded before the plug-in could say anything
    early = ("pytest_plangraph", "pytest_plangraph.plugin")
    late = {name: kind for name, kind in ours.items() if name not in early}
    assert late and all(kind != "AssertionRewritingHook" for kind in late.values()), late
    assert "pytest_plangraph" not in marked
    tests = {name: kind for name, kind in loaders.items() if name.startswith("test_")}
    assert tests and set(tests.values()) == {"AssertionRewritingHook"}, tests


def test_a_failing_assert_still_explains_itself_under_plangraph(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("jwt-login")
    (root / "tests" / "test_zz_rewritten.py").write_text(
        "def test_values():\n    left, right = [1, 2], [1, 3]\n    assert left == right\n"
    )
    code, _, _, output = _run(root, tmp_path, "--plangraph", "-q", "tests/test_zz_rewritten.py")
    assert code == 1
    assert "At index 1 diff: 2 != 3" in output


def test_without_plangraph_the_marking_is_pytests(
    project: Callable[[str], Path], tmp_path: Path
) -> None:
    root = project("jwt-login")
    code, loaders, marked, output = _run(root, tmp_path, "-q")
    assert code == 0, output
    assert "pytest_plangraph" in marked
    assert "pytest_plangraph.plugin.session" not in loaders


def test_the_rewriter_is_known_to_check_hashes_without_reading_its_source() -> None:
    """The guard asks whether pytest's rewriter checks the source's hash from the names its
    reader's code uses; the answer is the one its source text gives."""
    from _pytest.assertion import rewrite

    from pytest_plangraph.plugin import soundness

    assert soundness._rewriter_checks_hashes() is True  # the pytest this suite runs on
    assert soundness._source_names_hash(rewrite) is True
