"""``pytest --plangraph`` run in-process twice by ``pytester`` in a process that had not imported
PyYAML before: pytester drops the modules a run imported when it ends, so the second run imports
a second ``yaml`` package, while libyaml's C extension stays loaded with the classes of the first.
A plan must read, and a bad plan, YAML artifact or trusted-keys file be told, the same after
the first run as in it.

Each case runs in a fresh ``pytest`` subprocess (this suite's own process imports ``yaml`` early,
which hides the fault): a test file of its own does the in-process runs there, as a user's test
of their own plug-in or verifier would."""

from __future__ import annotations

import textwrap

import pytest
from plugin_helpers import PLAN, TESTS

_OUTER = """
import subprocess
import sys
import textwrap

import pytest

PLAN = {plan!r}
TESTS = {tests!r}


def git(root, *args):
    env = {{
        "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(root),
    }}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def project(pytester):
    root = pytester.path
    files = {{
        "plangraph.yaml": PLAN,
        "tests/test_a.py": TESTS,
        "src/a.py": "A = 1\\n",
        "out/b.txt": "b\\n",
        "pytest.ini": "[pytest]\\ntestpaths = tests\\n",
        ".gitignore": ".plangraph/\\n__pycache__/\\n",
    }}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def first_run(pytester):
    # the fault needs yaml imported first inside an in-process run, not before it
    assert "yaml" not in sys.modules, "yaml was imported before the first in-process run"
    root = project(pytester)
    first = pytester.runpytest_inprocess("--plangraph", "-p", "no:cacheprovider")
    assert first.ret == 0, first.stdout.str()
    assert "yaml" not in sys.modules  # dropped again: the next run imports it anew
    return root


def test_a_plan_edited_between_two_runs_is_read_again(pytester):
    root = first_run(pytester)
    plan = root / "plangraph.yaml"  # edited: the second run parses the YAML, not a cache
    plan.write_text(plan.read_text().replace("plan: demo", "plan: demo\\ntitle: Demo"))
    second = pytester.runpytest_inprocess("--plangraph", "-p", "no:cacheprovider")
    text = second.stdout.str() + second.stderr.str()
    assert second.ret == 0, text
    assert "Traceback" not in text and "constructor" not in text, text
    second.assert_outcomes(passed=4)
    assert "2/2 nodes completed" in text, text


def test_a_plan_broken_between_two_runs_is_told_as_in_the_first(pytester):
    root = first_run(pytester)
    (root / "plangraph.yaml").write_text("plangraph: 1\\nplan: demo\\nnodes: [\\n")
    second = pytester.runpytest_inprocess("--plangraph", "-p", "no:cacheprovider")
    text = second.stdout.str() + second.stderr.str()
    assert second.ret != 0
    assert "YAML syntax error" in text, text
    assert "Traceback" not in text and "INTERNALERROR" not in text, text


def test_a_bad_yaml_artifact_and_keys_file_are_told_after_a_run(pytester):
    first_run(pytester)
    saved = dict(sys.modules)  # what this test imports is dropped after it, as after a run
    try:
        from pytest_plangraph.errors import UsageError
        from pytest_plangraph.store.keys import load_trusted
        from pytest_plangraph.verifiers.documents import parse_document

        assert parse_document(b"a: [1, x]\\n", "doc.yaml") == {{"a": [1, "x"]}}
        with pytest.raises(ValueError, match="^doc.yaml: not valid YAML: "):
            parse_document(b"a: [\\n", "doc.yaml")
        keys = pytester.path / "trusted.yaml"
        keys.write_text("format: 1\\nkeys: [\\n")
        with pytest.raises(UsageError, match="not valid YAML or JSON at line 3"):
            load_trusted(keys, "KEYS")
    finally:
        sys.modules.clear()
        sys.modules.update(saved)
"""


def test_plangraph_runs_in_process_twice_in_a_fresh_process(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_outer=textwrap.dedent(_OUTER).format(plan=PLAN, tests=TESTS))
    result = pytester.runpytest_subprocess("-p", "pytester", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=3)
