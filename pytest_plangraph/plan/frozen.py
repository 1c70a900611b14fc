"""The base of the runtime values of a plan, its evidence and its events (pure, no pydantic).

pydantic validates what comes in (:mod:`.boundary`); what the rest of the package works with are
frozen dataclasses of the same names and attributes, built once from validated data. Their JSON
form (:meth:`Frozen.to_json`) is, value for value, what the pydantic model's
``model_dump(mode="json")`` gives with the same options, so every digest computed from it is the
one computed before (``tests/test_digest_stability.py`` and ``tests/test_runtime_models.py``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["UNSET", "Frozen", "json_value"]


UNSET: frozenset[str] = frozenset({"\0unset"})
"""``fields_set`` of a value made by hand: :meth:`Frozen.__post_init__` fills it in."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Frozen:
    """A frozen dataclass of the runtime model. ``fields_set`` names the fields the data it was
    built from gave (pydantic's ``model_fields_set``); a value made by hand counts every field
    whose value is not its default as given."""

    ALIASES: ClassVar[Mapping[str, str]] = {}
    """Field name → the name the file and the JSON form give it (``from_`` → ``from``)."""
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset()
    """Fields left out of the JSON form when None (added after records were first stored)."""
    FLOATS: ClassVar[frozenset[str]] = frozenset()
    """Fields of type float: a whole number in them (say a default of ``600``) is a float in
    the JSON form (``600.0``), as pydantic writes a float field."""
    fields_set: frozenset[str] = field(default=UNSET, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.fields_set is UNSET:
            given = frozenset(
                name
                for name, default in _table(type(self))[1:]
                if default is _REQUIRED or getattr(self, name) != _default(default)
            )
            object.__setattr__(self, "fields_set", given)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        """The value of validated *data* (JSON names, only the fields given), as it is: nothing
        is checked again."""
        aliases = _table(cls)[0][2]
        values = {aliases.get(key, key): item for key, item in data.items()}
        return cls(**values, fields_set=frozenset(values))

    def to_json(
        self,
        *,
        by_alias: bool = False,
        exclude_defaults: bool = False,
        exclude_unset: bool = False,
        exclude: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """The JSON data of this value: ``model_dump(mode="json")`` of its pydantic model with
        the same options."""
        options = (by_alias, exclude_defaults, exclude_unset, False)
        data: dict[str, Any] = _dump(self, options, exclude)
        return data

    def to_data(self) -> dict[str, Any]:
        """The fields given, with their JSON names, their values as they are (a float that is
        not finite stays one): what :meth:`from_data` builds this value again from."""
        data: dict[str, Any] = _dump(self, (True, False, True, True), frozenset())
        return data

    def replace(self, **changes: Any) -> Self:
        """A copy with *changes* (the fields they name count as given)."""
        changes["fields_set"] = self.fields_set | frozenset(changes)
        return dataclasses.replace(self, **changes)

    def extra(self) -> Mapping[str, Any]:
        """Fields beyond the declared ones (a plug-in verifier's settings): none by default."""
        return {}


_REQUIRED = object()


def _default(default: Any) -> Any:
    return default() if callable(default) and not isinstance(default, Frozen) else default


_TABLES: dict[type, tuple[Any, ...]] = {}


def _table(cls: type) -> tuple[Any, ...]:
    """(aliases, omit-none, names by alias, floats), then (name, default, factory or _REQUIRED) of
    each field of *cls* but ``fields_set`` and the extra ones; made once per class."""
    table = _TABLES.get(cls)
    if table is None:
        aliases = cls.ALIASES  # type: ignore[attr-defined]
        names = {alias: name for name, alias in aliases.items()}
        rows: list[Any] = [(aliases, cls.OMIT_NONE, names, cls.FLOATS)]  # type: ignore[attr-defined]
        for item in dataclasses.fields(cls):
            if item.name == "fields_set" or item.metadata.get("extra"):
                continue
            if item.default is not dataclasses.MISSING:
                rows.append((item.name, item.default))
            elif item.default_factory is not dataclasses.MISSING:
                rows.append((item.name, item.default_factory))
            else:
                rows.append((item.name, _REQUIRED))
        table = _TABLES[cls] = tuple(rows)
    return table


def _dump(value: Frozen, options: tuple[bool, bool, bool, bool], exclude: frozenset[str]) -> Any:
    by_alias, exclude_defaults, exclude_unset, as_is = options
    (aliases, omit_none, _, floats), *fields = _table(type(value))
    given = value.fields_set
    data: dict[str, Any] = {}
    for name, default in fields:
        if name in exclude or (exclude_unset and name not in given):
            continue
        item = getattr(value, name)
        if item is None and name in omit_none:
            continue
        if exclude_defaults and default is not _REQUIRED and item == _default(default):
            continue
        if type(item) is int and name in floats and not as_is:
            item = float(item)
        data[aliases.get(name, name) if by_alias else name] = _json(item, options)
    for name, item in value.extra().items():
        data[name] = item if as_is else json_value(item)
    return data


def _json(value: Any, options: tuple[bool, bool, bool, bool]) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if options[3] or math.isfinite(value) else None
    if isinstance(value, Frozen):
        return _dump(value, options, frozenset())
    if kind is list or kind is tuple:
        return [_json(item, options) for item in value]
    if kind is dict and all(type(key) is str for key in value):
        return {key: _json(item, options) for key, item in value.items()}
    return value if options[3] else json_value(value)


def json_value(value: Any) -> Any:
    """*value* as JSON data, as pydantic's JSON dump of an ``Any`` field gives it: plain JSON
    as it is (a float that is not finite as None); anything else (a tuple, a date, a set…)
    converted by pydantic itself, which is imported only then."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is list:
        return [json_value(item) for item in value]
    if kind is dict and all(type(key) is str for key in value):
        return {key: json_value(item) for key, item in value.items()}
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, inf_nan_mode="null")
