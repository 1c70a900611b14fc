"""The value classes of :mod:`pytest_plangraph.values` behave as ``dataclasses.dataclass`` makes
them for everything the package uses, side by side with real dataclasses; no command's start
imports :mod:`dataclasses` for them; the classes a ``pytest --plangraph`` run builds keep their
equality, hashing and frozenness, and a real run builds none with ``dataclasses.dataclass``."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_helpers import make_project

from pytest_plangraph import values


def _pair(frozen: bool, slots: bool = False) -> tuple[type[Any], type[Any]]:
    made = []
    for make, field in (
        (values.dataclass, values.field),
        (dataclasses.dataclass, dataclasses.field),
    ):

        @make(frozen=frozen, slots=slots)
        class Point:
            KIND: ClassVar[str] = "point"
            x: int
            y: str = "y"
            tags: list[str] = field(default_factory=list)
            note: str = field(default="", compare=False)

        made.append(Point)
    return made[0], made[1]


@pytest.mark.parametrize(("frozen", "slots"), [(True, False), (False, False), (True, True)])
def test_a_value_class_behaves_as_a_dataclass(frozen: bool, slots: bool) -> None:
    ours, theirs = _pair(frozen, slots)
    for args, kwargs in [((1,), {}), ((1, "b"), {"tags": ["t"]}), ((), {"x": 2, "note": "n"})]:
        a, b = ours(*args, **kwargs), theirs(*args, **kwargs)
        assert repr(a).split("(", 1)[1] == repr(b).split("(", 1)[1]
        assert values.asdict(a) == dataclasses.asdict(b) == dataclasses.asdict(a)
        assert a == ours(*args, **kwargs) and a != theirs(*args, **kwargs)
        assert (a == ours(*args, **{**kwargs, "note": "other"})) == (
            b == theirs(*args, **{**kwargs, "note": "other"})
        )
        assert values.replace(a, x=9).x == dataclasses.replace(a, x=9).x == 9
        assert copy.deepcopy(a) == a and copy.copy(a) == a
        assert a.__match_args__ == b.__match_args__
        assert ours.KIND == "point"
    assert ours(1).tags is not ours(1).tags
    for bad_args, bad_kwargs in [((), {}), ((1, "y", [], "n", 5), {}), ((1,), {"z": 1})]:
        with pytest.raises(TypeError):
            ours(*bad_args, **bad_kwargs)
        with pytest.raises(TypeError):
            theirs(*bad_args, **bad_kwargs)
    with pytest.raises(TypeError):
        ours(1, x=2)
    if frozen:
        with pytest.raises(AttributeError):
            ours(1).x = 2
        with pytest.raises(values.FrozenInstanceError):
            del ours(1).x
        assert hash(ours(1, "a", ())) == hash(ours(1, "a", (), note="other"))
    else:
        point = ours(1)
        point.x = 5
        assert point.x == 5
        with pytest.raises(TypeError):
            hash(point)


_CALLS = st.tuples(
    st.integers(0, 5),
    st.lists(st.sampled_from(["x", "y", "tags", "note", "z"]), max_size=4, unique=True),
)


@pytest.mark.parametrize(("frozen", "slots"), [(True, False), (False, False), (True, True)])
@settings(max_examples=150, deadline=None)
@given(call=_CALLS)
def test_every_call_shape_builds_what_a_dataclass_builds(
    frozen: bool, slots: bool, call: tuple[int, list[str]]
) -> None:
    """Positional and keyword arguments in any mix, too many, unknown, given twice or a
    required one left out: a value class stores (or refuses) what a dataclass does, whether
    its values are stored in one step or field by field (slots)."""
    ours, theirs = _pair(frozen, slots)
    positional, names = call
    args = [7, "b", ["t"], "n", "extra"][:positional]
    kwargs = {name: f"k-{name}" for name in names}
    results = []
    for cls in (ours, theirs):
        try:
            made = cls(*args, **kwargs)
        except TypeError:
            results.append(None)
        else:
            results.append((dataclasses.asdict(made), made.tags is not ours(0).tags))
    assert results[0] == results[1]
    if results[0] is not None and not slots:
        made = ours(*args, **kwargs)
        assert sorted(vars(made)) == sorted(values.asdict(made))


def test_fields_come_from_the_base_classes_first_and_post_init_runs() -> None:
    @values.dataclass
    class Base:
        a: int

    @values.dataclass
    class Child(Base):
        b: int = 2

        def __post_init__(self) -> None:
            self.b *= 10

    child = Child(1)
    assert (child.a, child.b) == (1, 20)
    assert [f.name for f in dataclasses.fields(child)] == ["a", "b"]
    assert dataclasses.is_dataclass(child)


def test_a_command_start_imports_no_dataclasses() -> None:
    code = (
        "import sys\n"
        "import pytest_plangraph.api, pytest_plangraph.cli.state_cmds\n"
        "print('dataclasses' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def _run_path_classes() -> dict[type[Any], bool]:
    """The value classes a ``pytest --plangraph`` run builds, each with whether it is frozen."""
    from pytest_plangraph.judge.rerun import Selection
    from pytest_plangraph.plugin import (
        building,
        evidence,
        mapping,
        soundness,
        suite,
        summary,
        verdicts,
    )

    return {
        Selection: True,
        evidence.Decided: True,
        building.EvidenceBuilder: False,
        building.Shadowing: True,
        evidence.RunResults: False,
        evidence._Decider: False,
        mapping.CriterionTests: False,
        mapping.Mapping: False,
        mapping.MappingBuilder: False,
        soundness.BytecodeGuard: False,
        suite.ProjectSelection: True,
        summary.Outcome: True,
        summary.RunReport: False,
        verdicts.Unverified: True,
        verdicts.Verdict: True,
    }


_BARE: dict[type[Any], type[Any]] = {}


def _made(cls: type[Any], salt: str) -> Any:
    """An instance of *cls* whose required fields are *salt*-marked strings, the rest defaults;
    a class whose ``__post_init__`` needs the run's real objects is made through a subclass that
    only leaves that out (its methods are the class's own)."""
    if "__post_init__" in cls.__dict__:
        cls = _BARE.setdefault(cls, type(cls.__name__, (cls,), {"__post_init__": None}))
    required = {
        f.name: f"{f.name}-{salt}"
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    return cls(**required)


@pytest.mark.parametrize("cls", list(_run_path_classes()), ids=lambda cls: cls.__qualname__)
def test_the_run_path_classes_keep_equality_hash_and_frozenness(cls: type[Any]) -> None:
    frozen = _run_path_classes()[cls]
    assert "__dataclass_params__" not in cls.__dict__  # made by values, compiles nothing
    assert cls._value_frozen is frozen
    first, other = _made(cls, "a"), _made(cls, "b")
    again = copy.copy(first)
    assert first == again and first is not again
    assert (first != other) == any(
        f.compare and getattr(first, f.name) != getattr(other, f.name)
        for f in dataclasses.fields(cls)
    )
    assert values.replace(first) == first
    name = dataclasses.fields(cls)[0].name
    if frozen:
        compared = tuple(getattr(first, f.name) for f in dataclasses.fields(cls) if f.compare)
        try:
            expected = hash(compared)
        except TypeError:  # a dict field: unhashable, as a dataclass's would be
            with pytest.raises(TypeError):
                hash(first)
        else:
            assert hash(first) == hash(again) == expected
        with pytest.raises(AttributeError):  # as dataclasses.FrozenInstanceError
            setattr(first, name, "changed")
        assert getattr(first, name) == getattr(again, name)
    else:
        with pytest.raises(TypeError):
            hash(first)
        setattr(first, name, "changed")
        assert getattr(first, name) == "changed" and first != again


def test_a_run_builds_no_dataclasses_dataclass(pytester: pytest.Pytester) -> None:
    conftest = (
        "import sys\n"
        "def pytest_unconfigure(config):\n"
        "    made = sorted(\n"
        "        f'{name}.{key}' for name, module in list(sys.modules.items())\n"
        "        if name.startswith('pytest_plangraph')\n"
        "        for key, value in vars(module).items()\n"
        "        if isinstance(value, type) and value.__module__ == name\n"
        "        and '__dataclass_params__' in value.__dict__\n"
        "    )\n"
        "    print('MADE', made)\n"
    )
    make_project(pytester, files={"tests/conftest.py": conftest})
    result = pytester.runpytest_subprocess("--plangraph", "-p", "no:cacheprovider", "-s")
    assert result.ret == 0, result.outlines
    assert any("evidence recorded: 3 passed" in line for line in result.outlines), result.outlines
    made = [line for line in result.outlines if line.startswith("MADE")]
    assert made == ["MADE []"], result.outlines
