"""The base of the runtime values of a plan, its evidence and its events (pure, no pydantic).

pydantic validates what comes in (:mod:`.boundary`); what the rest of the package works with are
frozen slotted classes of the same names and attributes, built once from validated data. Their JSON
form (:meth:`Frozen.to_json`) is, value for value, what the pydantic model's
``model_dump(mode="json")`` gives with the same options, so every digest computed from it is the
one computed before (``tests/test_digest_stability.py`` and ``tests/test_runtime_models.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ..values import FrozenInstanceError

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["UNSET", "Frozen", "json_value"]


UNSET: frozenset[str] = frozenset({"\0unset"})
"""``fields_set`` of a value made by hand: the constructor fills it in."""


class Frozen:
    """A frozen, slotted value of the runtime model, written by hand (a dataclass would compile
    its methods in every process that imports it). A subclass annotates its fields (in
    order), names them in ``__slots__`` too, and gives their defaults in :attr:`DEFAULTS` (a
    class there is a factory: ``list`` makes a new empty list). ``fields_set`` names the fields
    the data it was built from gave (pydantic's ``model_fields_set``); a value made by hand
    counts every field whose value is not its default as given."""

    __slots__ = ("fields_set",)
    ALIASES: ClassVar[Mapping[str, str]] = {}
    """Field name → the name the file and the JSON form give it (``from_`` → ``from``)."""
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset()
    """Fields left out of the JSON form when None (added after records were first stored)."""
    FLOATS: ClassVar[frozenset[str]] = frozenset()
    """Fields of type float: a whole number in them (say a default of ``600``) is a float in
    the JSON form (``600.0``), as pydantic writes a float field."""
    DEFAULTS: ClassVar[Mapping[str, Any]] = {}
    """The default of each field that has one (a class: called for a new value)."""
    HIDDEN: ClassVar[frozenset[str]] = frozenset()
    """Fields whose items appear in the JSON form beside the others (:meth:`extra`)."""
    FIELDS: ClassVar[tuple[str, ...]] = ()
    """The fields, in the order of their annotations (base classes first)."""
    fields_set: frozenset[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names: list[str] = []
        for klass in reversed(cls.__mro__):  # in the order the annotations declare them
            slots = klass.__dict__.get("__slots__", ())
            for name in klass.__dict__.get("__annotations__", {}):  # noqa: RUF063 (no eval)
                if name in slots and name != "fields_set" and name not in names:
                    names.append(name)
        missing = set(cls.__dict__.get("__slots__", ())) - {"__dict__", *names}
        if missing:
            raise TypeError(f"{cls.__name__}: slots without an annotation: {sorted(missing)}")
        cls.FIELDS = tuple(names)

    def __init__(self, **values: Any) -> None:
        defaults = self.DEFAULTS
        given = values.pop("fields_set", UNSET)
        for name in self.FIELDS:
            if name in values:
                value = values.pop(name)
            elif name in defaults:
                value = _default(defaults[name])
            else:
                raise TypeError(f"{type(self).__name__}: the field {name!r} is required")
            _set(self, name, value)
        if values:
            raise TypeError(f"{type(self).__name__}: no field {', '.join(map(repr, values))}")
        if given is UNSET:
            given = frozenset(
                name
                for name in self.FIELDS
                if name not in defaults or getattr(self, name) != _default(defaults[name])
            )
        _set(self, "fields_set", given)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.FIELDS)

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, name) for name in self.FIELDS)))

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{type(self).__name__}({values})"

    def __reduce__(self) -> tuple[Any, ...]:
        values = {name: getattr(self, name) for name in self.FIELDS}
        return (_rebuild, (type(self), values, self.fields_set))

    CONVERT: ClassVar[Mapping[str, Any]] = {}
    """Field name → what makes its value of the validated data, for the fields whose values
    are themselves runtime values: a :class:`Frozen` class (one value of it), a
    :class:`ListOf` one (a list of them), or a function of the data's value."""

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        """The value of validated *data* (JSON names, only the fields given), as it is: nothing
        is checked again. Built straight into the slots by a function made once per class for
        its fields (not through ``__init__``, which compares every value with its default): a
        plan of thousands of nodes is read this way on every command
        (:func:`~pytest_plangraph.plan.cache.read_validated`)."""
        built: Self = builder_of(cls)(data)
        return built

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
        fields = self.FIELDS
        if changes.keys() - fields:  # as the constructor says it
            unknown = [name for name in changes if name not in fields]
            raise TypeError(f"{type(self).__name__}: no field {', '.join(map(repr, unknown))}")
        copy = _new(type(self))  # every field is given: stored as the constructor stores them
        for name in fields:
            _set(copy, name, changes[name] if name in changes else getattr(self, name))
        _set(copy, "fields_set", self.fields_set | frozenset(changes))
        return copy

    def extra(self) -> Mapping[str, Any]:
        """Fields beyond the declared ones (a plug-in verifier's settings): none by default."""
        return {}


_set = object.__setattr__
_new = object.__new__


def _rebuild(cls: type[Frozen], values: dict[str, Any], fields_set: frozenset[str]) -> Frozen:
    """A value as it was pickled or copied."""
    return cls(**values, fields_set=fields_set)


_REQUIRED = object()


def _default(default: Any) -> Any:
    return default() if isinstance(default, type) else default


_TABLES: dict[type, tuple[Any, ...]] = {}
_BUILDERS: dict[type, Callable[[Mapping[str, Any]], Any]] = {}


def builder_of(cls: type[Frozen]) -> Callable[[Mapping[str, Any]], Any]:
    """What :meth:`Frozen.from_data` calls for *cls* (a caller building many values of one
    class calls it directly)."""
    build = _BUILDERS.get(cls)
    if build is None:
        build = _BUILDERS[cls] = _builder(cls)
    return build


class ListOf:
    """In :attr:`Frozen.CONVERT`: the field's value is a list of values of *cls*."""

    __slots__ = ("cls",)

    def __init__(self, cls: type[Frozen]) -> None:
        self.cls = cls


def _builder(cls: type[Frozen]) -> Callable[[Mapping[str, Any]], Any]:
    """The function that builds a *cls* from validated data for :meth:`Frozen.from_data`: one
    line per field, each storing the data's value (made by its converter, if any) or the
    field's default, so a value costs a few operations per field and no loop. The fields are
    stored into a value of :func:`_open_twin` (the interpreter's fast store into a slot, not a
    call of ``object.__setattr__``), which then becomes a *cls*. The names of the fields given
    are checked and made into ``fields_set`` once per distinct list of keys.

    The source (:func:`builder_source`) is written from the class's own field table. The
    package's own classes find it compiled ahead of time in :mod:`._prebuilt` (a module of the
    package, so Python's bytecode cache holds it), taken only when its source there is the one
    written now; any other class, or a table changed since, has it compiled here, once per
    class a process uses."""
    source, scope = builder_source(cls)
    build = _prebuilt(cls, source, scope)
    if build is None:
        exec(source, scope)  # the source made from the class's fields
        build = scope["build"]
    return build


def _prebuilt(
    cls: type[Frozen], source: str, scope: dict[str, Any]
) -> Callable[[Mapping[str, Any]], Any] | None:
    """The builder of *cls* compiled ahead of time, made with *scope*'s values; None unless
    :mod:`._prebuilt` holds one for this very *source* and these names."""
    from . import _prebuilt

    entry: Any
    entry = _prebuilt.BUILDERS.get(f"{cls.__module__}.{cls.__qualname__}")
    if entry is None or entry[0] != source:
        return None
    code = entry[1].__code__
    if code.co_varnames[: code.co_argcount] != tuple(scope):
        return None
    build: Callable[[Mapping[str, Any]], Any] = entry[1](**scope)
    return build


def builder_source(cls: type[Frozen]) -> tuple[str, dict[str, Any]]:
    """The source of the builder of *cls* (a function ``build(data)``) and the names it reads
    (its classes, converters, defaults and helpers). Its names are identifiers and its JSON
    names only ever appear as string literals, quoted with ``repr``."""
    aliases, defaults, convert = cls.ALIASES, cls.DEFAULTS, cls.CONVERT
    twin = _open_twin(cls)
    keys = [aliases.get(name, name) for name in cls.FIELDS]
    names = dict(zip(keys, cls.FIELDS, strict=True))
    seen: dict[tuple[str, ...], frozenset[str]] = {}

    def given(data: Mapping[str, Any], listed: tuple[str, ...]) -> frozenset[str]:
        unknown = sorted(set(listed) - set(names))
        if unknown:
            raise TypeError(f"{cls.__name__}: no field {', '.join(map(repr, unknown))}")
        found = seen[listed] = frozenset(names[key] for key in listed)
        return found

    scope: dict[str, Any] = {"cls": cls, "twin": twin, "new": _new, "setattr": _set}
    scope.update(SEEN=seen, given=given, required=_required)
    lines = [
        "def build(data):",
        "    listed = tuple(data)",
        "    fields = SEEN.get(listed)",
        "    if fields is None:",
        "        fields = given(data, listed)",
        f"    value = new({'cls' if twin is None else 'twin'})",
        "    try:",
    ]
    for i, (name, key) in enumerate(zip(cls.FIELDS, keys, strict=True)):
        get = f"data[{key!r}]"
        how = convert.get(name)
        if isinstance(how, ListOf):
            scope[f"build{i}"] = builder_of(how.cls)
            get = f"[build{i}(item) for item in {get}]"
        elif isinstance(how, type) and issubclass(how, Frozen):
            scope[f"build{i}"] = builder_of(how)
            get = f"build{i}({get})"
        elif how is not None:
            scope[f"convert{i}"] = how
            get = f"convert{i}({get})"
        if name not in defaults:
            item = get
        elif isinstance(defaults[name], type):  # a factory: a new value each time
            scope[f"default{i}"] = defaults[name]
            item = f"{get} if {key!r} in data else default{i}()"
        elif how is not None:
            scope[f"default{i}"] = defaults[name]
            item = f"{get} if {key!r} in data else default{i}"
        else:
            scope[f"default{i}"] = defaults[name]
            item = f"data.get({key!r}, default{i})"
        lines.append(f"        {_store(name, item, twin)}")
    lines += ["    except KeyError:", "        required(cls, data)"]
    lines.append(f"    {_store('fields_set', 'fields', twin)}")
    if twin is not None:
        lines.append("    value.__class__ = cls")
    lines.append("    return value")
    return "\n".join(lines), scope


def _store(name: str, item: str, twin: type | None) -> str:
    """The statement that stores *item* (an expression) into the field *name* of ``value``."""
    if twin is None:
        return f"setattr(value, {name!r}, {item})"
    return f"value.{name} = {item}"


def _open_twin(cls: type[Frozen]) -> type | None:
    """A class of the same slots as *cls* (so a value of it may become a *cls* by assigning
    ``__class__``, which Python allows only between classes of the same layout) whose fields
    may be stored into; None for a class not made directly on :class:`Frozen` (then the
    fields are set through ``object.__setattr__``)."""
    if cls.__bases__ != (Frozen,) or not all(name.isidentifier() for name in cls.FIELDS):
        return None
    body = {
        "__slots__": cls.__dict__.get("__slots__", ()),
        "__annotations__": cls.__dict__.get("__annotations__", {}),  # noqa: RUF063 (no eval)
        "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__,
        "__module__": cls.__module__,
    }
    return type(cls.__name__, (Frozen,), body)


def _required(cls: type[Frozen], data: Mapping[str, Any]) -> None:
    """Raise the TypeError of data that lacks a field of *cls* that has no default."""
    keys = {cls.ALIASES.get(name, name) for name in cls.FIELDS if name not in cls.DEFAULTS}
    missing = ", ".join(map(repr, sorted(keys - set(data))))
    raise TypeError(f"{cls.__name__}: the field(s) {missing} are required")


def _table(cls: type[Frozen]) -> tuple[Any, ...]:
    """(aliases, omit-none, names by alias, floats), then (name, default, factory or _REQUIRED)
    of each field of *cls* but the hidden ones; made once per class."""
    table = _TABLES.get(cls)
    if table is None:
        aliases = cls.ALIASES
        names = {alias: name for name, alias in aliases.items()}
        rows: list[Any] = [(aliases, cls.OMIT_NONE, names, cls.FLOATS)]
        for name in cls.FIELDS:
            if name not in cls.HIDDEN:
                rows.append((name, cls.DEFAULTS.get(name, _REQUIRED)))
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
