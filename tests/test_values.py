"""The value classes of :mod:`pytest_plangraph.values` behave as ``dataclasses.dataclass`` makes
them for everything the package uses, side by side with real dataclasses; and no command's
start imports :mod:`dataclasses` for them."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
from typing import Any, ClassVar

import pytest

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
