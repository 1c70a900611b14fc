"""A ``criterion`` marker whose reference is written plainly in any usual Python way is quoted.

The quotes subject of a test criterion's record (see ``test_plugin_quoted_refs.py``) lists the
collected test modules that quote its reference. A reference written with an escape
(``"step-a\\x2fac-pattern"``), as implicitly concatenated literals (``"step-a/" "ac-pattern"``),
across a backslash-newline, or in a file whose coding declaration is UTF-7 holds no
``"step-a/ac-pattern"`` as text, yet Python reads the very reference: a failing test so marked,
added to a test file that verified nothing, left its criterion completed and ``claim`` passed.
Every string literal of a module that parses is read for its value now.

The end-to-end cases run real pytest sessions (``pytester``) in a real git repository, and the
real ``plangraph`` command.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from cache_helpers import as_tester
from glob_helpers import SETTINGS, pattern_stale, statuses, write
from plugin_helpers import make_project
from test_plugin_quoted_refs import OTHER

from pytest_plangraph.vcs.quotes import CollectValues, mentioned_refs, quoted_refs, quotes_key
from pytest_plangraph.vcs.testglob import collect_key

REF = "step-a/ac-pattern"

FORMS = {
    "hex escape": b'@pytest.mark.criterion("step-a\\x2fac-pattern")',
    "unicode escape": b'@pytest.mark.criterion("step-a\\u002fac-pattern")',
    "octal escape": b'@pytest.mark.criterion("step-a\\057ac-pattern")',
    "named escape": b'@pytest.mark.criterion("step-a\\N{SOLIDUS}ac-pattern")',
    "concatenation": b'@pytest.mark.criterion("step-a/" "ac-pattern")',
    "split lines": b'@pytest.mark.criterion(\n    "step-a/"\n    "ac-pattern"\n)',
    "backslash newline": b'@pytest.mark.criterion("step-a/\\\nac-pattern")',
    "f-string of constants": b"@pytest.mark.criterion(f\"{'step-a'}/{'ac-pattern'}\")",
    "bytes and text": b'@pytest.mark.criterion(rb"x".decode() and "step-a\\x2f" "ac-pattern")',
}
"""A marker line, each writing :data:`REF` without ``"step-a/ac-pattern"`` in its text."""

UTF7 = b'# coding: utf-7\n@pytest.mark.criterion("step-a+AC8-ac-pattern")'
"""A marker in a module whose coding declaration is UTF-7 (``+AC8-`` is a slash)."""


def module(marker: bytes) -> bytes:
    """A test module with a passing test and a failing one under *marker*; a coding
    declaration in *marker*'s first line stays the module's first line."""
    head, _, rest = marker.rpartition(b"\n") if marker.startswith(b"#") else (b"", b"", marker)
    body = b"\n\ndef test_other():\n    assert True\n\n\n" + rest
    body += b"\ndef test_added_and_broken():\n    assert False\n"
    return (head + b"\n" if head else b"") + b"import pytest\n" + body


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


@pytest.mark.parametrize("form", [*FORMS, "utf-7"])
def test_a_reference_written_any_plain_way_is_quoted(form: str) -> None:
    source = module(UTF7 if form == "utf-7" else FORMS[form])
    assert b'"step-a/ac-pattern"' not in source
    namespace: dict[str, object] = {}
    exec(compile(source, "test_other.py", "exec"), namespace)  # Python reads the very ref
    [mark] = namespace["test_added_and_broken"].pytestmark  # type: ignore[attr-defined]
    assert mark.args == (REF,)
    assert REF in quoted_refs(source)


def test_a_reference_built_at_run_time_or_a_module_that_does_not_parse_is_not() -> None:
    assert quoted_refs(b'criterion("step-a" + "/ac-pattern")') == frozenset()
    assert quoted_refs(b'criterion(f"{NODE}/ac-pattern")') == frozenset()
    assert quoted_refs(b'criterion("step-a\\x2fac-pattern"') == frozenset()  # no ")"
    assert quoted_refs(b'x = "step-a/ac-pattern " "and more"') == frozenset()
    # a module that does not parse keeps its plain quotes, read as text
    assert quoted_refs(b'def (:\n    "step-a/ac-pattern"') == {REF}


def test_a_warning_taken_as_an_error_hides_no_reference() -> None:
    source = b'PATTERN = "\\d+"\n' + FORMS["hex escape"] + b"\ndef test(): pass\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SyntaxError):
            compile(source, "test_other.py", "exec")  # "\d" is an invalid escape
        assert REF in quoted_refs(source)


def test_a_module_too_deep_to_parse_may_quote_any_reference(tmp_path: Path) -> None:
    escaped = 'X = "\\x2f"\n'  # an escape: the text alone cannot tell, so the module is parsed
    write(tmp_path, "tests/test_deep.py", escaped + "x = 1" + " + 1" * 100_000 + "\n")
    base = collect_key("tests", SETTINGS)
    deep = CollectValues(str(tmp_path))
    values = {deep.value(quotes_key(base, ref)) for ref in (REF, "x/none")}
    write(tmp_path, "tests/test_deep.py", "x = 1\n")
    plain = CollectValues(str(tmp_path)).value(quotes_key(base, REF))
    assert len(values) == 1 and plain not in values  # in every list, as an unreadable file


@pytest.mark.parametrize("form", ["hex escape", "concatenation", "utf-7"])
def test_a_failing_test_so_marked_added_to_a_collected_file_stales_its_criterion(
    pytester: pytest.Pytester, form: str
) -> None:
    root = make_project(pytester, files={OTHER: "def test_other():\n    assert True\n"})
    pytester.runpytest("--plangraph").assert_outcomes(passed=5)
    assert statuses(root)[0] == "completed"
    (root / OTHER).write_bytes(module(UTF7 if form == "utf-7" else FORMS[form]))
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=4, failed=1)
    pattern_stale(root)
    assert pytester.runpytest("--plangraph").parseoutcomes()["failed"] == 1
    assert statuses(root)[0] == "failed"  # the run of the marked test judges it


SPEC_CONFTEST = """
import pytest

def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".spec" and file_path.name.startswith("test"):
        return SpecFile.from_parent(parent, path=file_path)

class SpecFile(pytest.File):
    def collect(self):
        for line in self.path.read_text().splitlines():
            name, ref, ok = line.split()
            item = SpecItem.from_parent(self, name=name)
            if ref != "-":
                item.add_marker(pytest.mark.criterion(ref))
            item.ok = ok == "ok"
            yield item

class SpecItem(pytest.Item):
    def runtest(self):
        assert self.ok
"""
"""A collector of ``tests/test*.spec`` files, one test a line: name, reference (``-``: none),
``ok`` or not."""


def test_a_file_a_conftest_collects_mentions_a_reference_unquoted() -> None:
    found = mentioned_refs(b"two step-a/ac-pattern bad\nx/a/n/c -/y .\xff")
    assert found == {REF, "x/a", "a/n", "n/c"}


def test_a_reference_added_to_a_non_python_file_a_conftest_collects_stales_its_criterion(
    pytester: pytest.Pytester,
) -> None:
    """``tests/test_x.spec`` is collected by the conftest's collector and verified nothing; a
    failing line marked for ``ac-pattern`` added to it changed no name and no bound byte."""
    spec = "tests/test_x.spec"
    root = make_project(pytester, files={"tests/conftest.py": SPEC_CONFTEST, spec: "one - ok\n"})
    pytester.runpytest("--plangraph").assert_outcomes(passed=5)
    assert statuses(root)[0] == "completed"
    (root / spec).write_text(f"one - ok\ntwo {REF} bad\n", encoding="utf-8")
    pytester.runpytest("-p", "no:plangraph").assert_outcomes(passed=4, failed=1)
    pattern_stale(root)
