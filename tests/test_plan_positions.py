"""Plan files the fuzzer of the reliability suite found told without a position, or in
PyYAML's words: each is now one line with ``file:line:column``, what is wrong and how to fix it
(exit 2 from ``plangraph lint``, never a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import plangraph_main

SURROGATE = (
    "text holds an unpaired surrogate escape (such as \\ud800), which stands for no character; "
    "write the character itself or remove it"
)


def _control(code: int) -> str:
    return (
        f"character U+{code:04X} is not allowed in a YAML file (control characters are refused); "
        f"remove it, or write it as the escape \\x{code:02X} inside double quotes"
    )


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        pytest.param(
            "plan.yaml",
            b'plangraph: 1\nplan: p\ntitle: "a\x00"\n',
            f"plan.yaml:3:10: {_control(0)}",
            id="nul-in-yaml",
        ),
        pytest.param(
            "plan.yaml",
            "plangraph: 1\nplan: p\ntitle: éé\x01\n".encode(),
            f"plan.yaml:3:10: {_control(1)}",
            id="control-after-multibyte-text",
        ),
        pytest.param(
            "plan.yaml",
            "plangraph: 1\nplan: p\ntitle: 'é\xff'\n".encode("latin-1"),
            "plan.yaml:3:9: not UTF-8 text (byte 29); save it as UTF-8",
            id="not-utf8",
        ),
        pytest.param(
            "plan.json",
            b'{"plangraph": 1,\n "plan": "p", "title": "NaN", "x": -Infinity}',
            "plan.json:2:36: NaN and Infinity are not JSON numbers; write a finite number",
            id="json-infinity",
        ),
        pytest.param(
            "plan.json",
            b'{"plangraph": 1,\n "plan": "p",\n "title": 1e400}',
            "plan.json:3:11: a number too large to hold (such as 1e400); write a finite number",
            id="json-overflowing-number",
        ),
        pytest.param(
            "plan.json",
            b'{"plangraph": 1,\n "plan": "p", "title": "\\ud83d\\ude00",\n "x": ["\\udc00"]}',
            f"plan.json:3:8: x[0]: {SURROGATE}",
            id="json-unpaired-surrogate",
        ),
    ],
)
def test_bad_characters_and_numbers_are_located(
    tmp_path: Path, name: str, data: bytes, expected: str
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_bytes(data)
    result = plangraph_main(tmp_path, "lint", name)
    assert result.code == 2
    assert result.err == f"plangraph: error: {expected}\n"


def test_a_control_character_is_located_by_pyyamls_own_reader_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where libyaml is missing, PyYAML's pure-Python reader checks every character when the
    loader is made (before any parsing); that error is told the same way, not a traceback."""
    import yaml

    from pytest_plangraph.errors import PlanError
    from pytest_plangraph.plan import yaml_reader as planyaml

    class PureLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._tags: dict[object, str] = {}

        resolve = planyaml._SafeLoader.resolve

    monkeypatch.setattr(planyaml, "_BaseLoader", yaml.SafeLoader)
    monkeypatch.setattr(planyaml, "_SafeLoader", PureLoader)
    with pytest.raises(PlanError) as refused:
        planyaml.read_yaml("plangraph: 1\nplan: p\ntitle: éé\x01\n", "plan.yaml", 1000)
    assert str(refused.value) == f"plan.yaml:3:10: {_control(1)}"
