"""The text test of a pytest section in a configuration file pytest passed over
(``pytest_plangraph.judge.sections``): it errs towards "there", never the other way."""

from __future__ import annotations

import pytest

from pytest_plangraph.judge.sections import has_pytest_section, section_file, section_subject


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-x'\n"),
        ("pyproject.toml", "[tool.pytest]\nminversion = '9'\n"),
        ("pyproject.toml", '[ tool . "pytest" ]\n'),
        ("pyproject.toml", "[tool]\npytest.ini_options = {addopts = '-x'}\n"),
        ("pyproject.toml", "tool.pytest.ini_options.addopts = '-x'\n"),
        ("pyproject.toml", '[tool.poetry.dependencies]\npytest = "^8"\n'),  # erring: "there"
        ("tox.ini", "[pytest]\naddopts = -x\n"),
        ("tox.ini", "  [ PYTEST ]\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = -x\n"),
        ("setup.cfg", "[pytest]\n"),  # pytest refuses it: a change all the same
    ],
)
def test_a_section_is_found(name: str, text: str) -> None:
    assert has_pytest_section(name, text)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["pytest>=8"]\n'),
        ("pyproject.toml", "[tool.ruff]\nline-length = 100  # like pytest's\n"),
        ("tox.ini", "[tox]\nenvlist = py\n[testenv]\ncommands = pytest\n"),
        ("setup.cfg", "[metadata]\nname = demo\n[options]\ntests_require = pytest\n"),
    ],
)
def test_no_section_is_found_where_none_is(name: str, text: str) -> None:
    assert not has_pytest_section(name, text)


def test_a_section_subject_names_its_file() -> None:
    assert section_subject("sub/setup.cfg") == "sub/setup.cfg#pytest"
    assert section_file("sub/setup.cfg#pytest") == "sub/setup.cfg"
    assert section_file("pytest.ini#pytest") is None  # pytest reads it, section or not
    assert section_file("pyproject.toml") is None
