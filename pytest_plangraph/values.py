"""Value classes without :mod:`dataclasses`' cost at import: :func:`dataclass` is a drop-in for
the parts of ``dataclasses.dataclass`` the package uses.

A ``dataclasses.dataclass`` writes the source of ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and, frozen, ``__setattr__``/``__delattr__`` for every class and compiles it in
every process that imports the class: about 4 M instructions a class, more than 0.1 G for the
classes every command imports, plus importing :mod:`dataclasses` and :mod:`inspect`. The
classes made here share methods written once, which read the fields from the class, so nothing
is compiled at import. A value's fields are stored in one step where they can be: the
arguments zipped with the field names into the value's ``__dict__`` (the defaults after them
from a mapping made once per class), not one ``object.__setattr__`` a field; a slotted class's
values, and a call that is wrong (for its message), go field by field.

What a class gets is what ``@dataclass`` / ``@dataclass(frozen=True)`` /
``@dataclass(frozen=True, slots=True)`` gives it for the features used here: fields from the
class's annotations in order (base classes' first), defaults and ``field(default=…,
default_factory=…, compare=…, repr=…)``, keyword or positional construction, ``__post_init__``,
``__eq__`` over the compared fields of the same class, ``__hash__`` of a frozen class (none of
a mutable one), ``__repr__``, assignment refused on a frozen one (:class:`FrozenInstanceError`,
an ``AttributeError``), ``__match_args__``, and pickling. As with ``dataclasses``, an
``__init__`` written in the class body is kept: a value made by the ten thousand (a derivation's
states and reasons) stores its fields in its own ``__init__``, about four times cheaper than the
shared one, which finds its way from the class's fields at every call. ``dataclasses.fields``,
``dataclasses.replace``, ``dataclasses.asdict`` and ``dataclasses.is_dataclass`` work on them
too: ``__dataclass_fields__`` is made on first use (importing :mod:`dataclasses` then), and
:func:`replace` and :func:`asdict` here do the same without it.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # typing is not imported at run time: a kept answer's hit needs none
if TYPE_CHECKING:  # what tells a type checker these classes are dataclasses
    from typing import Any, TypeVar, overload

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_: Any) -> Any:
        return lambda function: function

    def overload(function: Any) -> Any:
        return function


__all__ = ["FrozenInstanceError", "asdict", "dataclass", "field", "replace"]

_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "MISSING"})()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen value (as ``dataclasses.FrozenInstanceError``)."""


class _Field:
    """How one field is made and compared (what :func:`field` returns)."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(
        self, default: Any, default_factory: Any, compare: bool, repr: bool, name: str = ""
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr
        self.name = name


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | Any = _MISSING,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    """A field's default, or the factory of its default, and whether it is compared and
    shown (as ``dataclasses.field``)."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return _Field(default, default_factory, compare, repr)


@overload
@dataclass_transform(field_specifiers=(field,))
def dataclass(cls: type[_T], /) -> type[_T]: ...
@overload
def dataclass(  # noqa: F811 (overload is typing's to a checker: see above)
    *, frozen: bool = False, slots: bool = False
) -> Callable[[type[_T]], type[_T]]: ...


def dataclass(  # noqa: F811
    cls: type[_T] | None = None, /, *, frozen: bool = False, slots: bool = False
) -> Any:
    """Make *cls* a value class (see the module text); with arguments, the decorator."""

    def wrap(klass: type[_T]) -> type[_T]:
        return _make(klass, frozen=frozen, slots=slots)

    return wrap if cls is None else wrap(cls)


def _make(cls: type[_T], *, frozen: bool, slots: bool) -> type[_T]:
    fields: dict[str, _Field] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(getattr(base, "_value_fields", {}))
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if isinstance(annotation, str) and annotation.startswith(("ClassVar", "typing.ClassVar")):
            continue
        given = cls.__dict__.get(name, _MISSING)
        spec = given if isinstance(given, _Field) else _Field(given, _MISSING, True, True)
        spec.name = name
        fields[name] = spec
        if isinstance(given, _Field) or slots:  # the class keeps no field object as a default
            if name in cls.__dict__:
                delattr(cls, name)
            if spec.default is not _MISSING and not slots:
                setattr(cls, name, spec.default)
    names = tuple(fields)
    seen_default = False
    for spec in fields.values():
        has = spec.default is not _MISSING or spec.default_factory is not _MISSING
        if seen_default and not has:
            raise TypeError(f"non-default argument {spec.name!r} follows default argument")
        seen_default = seen_default or has
    namespace = {
        "_value_fields": fields,
        "_value_names": names,
        "_value_compared": tuple(n for n in names if fields[n].compare),
        "_value_frozen": frozen,
        "_value_fast": None,
        "__repr__": _repr,
        "__eq__": _eq,
        "__match_args__": names,
        "__dataclass_fields__": _LazyFields(),
        "__reduce__": _reduce,
    }
    if slots:
        body = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
        body["__slots__"] = names
        body["__qualname__"] = cls.__qualname__
        cls = type(cls)(cls.__name__, cls.__bases__, body)  # type: ignore[misc]
    for key, value in namespace.items():
        setattr(cls, key, value)
    if "__init__" not in cls.__dict__:  # a class's own ``__init__`` is kept, as dataclasses do
        cls.__init__ = _init  # type: ignore[method-assign]
    if frozen:
        cls.__setattr__ = _frozen_setattr  # type: ignore[method-assign]
        cls.__delattr__ = _frozen_delattr  # type: ignore[method-assign]
        cls.__hash__ = _hash  # type: ignore[method-assign]
    elif "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
        cls.__hash__ = None  # type: ignore[assignment]
    cls._value_fast = _fast_plan(cls, fields)  # type: ignore[attr-defined]
    return cls


def _fast_plan(cls: type[Any], fields: dict[str, _Field]) -> tuple[Any, ...] | None:
    """What :func:`_init` needs to store a call's values in one step: the class it is for (a
    subclass not made a value class itself takes the field-by-field way), the field names, the
    defaults of the fields after each number of positional arguments that leaves only fields
    with plain defaults, the set of the names, the plain defaults, the factories of the others
    and whether the class has ``__post_init__``; None for a class whose values have no
    ``__dict__`` (slots) or with a field the class or a base holds a data descriptor for
    (their values are stored one by one, as before)."""
    if "__slots__" in cls.__dict__ or any(
        "__slots__" in base.__dict__ and base.__dict__["__slots__"] for base in cls.__mro__[1:-1]
    ):
        return None
    defaults: dict[str, Any] = {}
    factories: dict[str, Callable[[], Any]] = {}
    for name, spec in fields.items():
        if spec.default_factory is not _MISSING:
            factories[name] = spec.default_factory
        if hasattr(type(getattr(cls, name, None)), "__set__"):
            return None
        if spec.default is not _MISSING:
            defaults[name] = spec.default
    names = tuple(fields)
    tails: dict[int, dict[str, Any]] = {len(names): {}}
    for index in range(len(names) - 1, -1, -1):
        if names[index] not in defaults:
            break
        tails[index] = {name: defaults[name] for name in names[index:]}
    post_init = hasattr(cls, "__post_init__")
    return cls, names, tails, frozenset(names), defaults, factories, post_init


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    fast = cls._value_fast
    if fast is not None and fast[0] is cls:  # the values stored into __dict__ in one step
        _, names, tails, known, defaults, factories, post_init = fast
        if not kwargs:  # by position, the fields after them their plain defaults
            tail = tails.get(len(args))
            if tail is None:  # too many, too few, or a factory's field left out
                return _init_slow(self, args, kwargs)
            stored = self.__dict__
            stored.update(zip(names, args, strict=False))
            if tail:
                stored.update(tail)
        elif not args and len(kwargs) == len(names) and kwargs.keys() <= known:
            self.__dict__.update(kwargs)  # every field given, by name
        else:
            given = len(args)
            if given > len(names) or not (kwargs.keys() <= known):
                return _init_slow(self, args, kwargs)  # says what is wrong
            if given and not kwargs.keys().isdisjoint(names[:given]):
                return _init_slow(self, args, kwargs)
            found = dict(defaults)
            found.update(zip(names, args, strict=False))
            found.update(kwargs)
            for name, factory in factories.items():
                if name not in found:
                    found[name] = factory()
            if len(found) != len(names):  # a field without a default not given
                return _init_slow(self, args, kwargs)
            self.__dict__.update(found)
        if post_init:
            self.__post_init__()
        return None
    return _init_slow(self, args, kwargs)


def _init_slow(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """:func:`_init` field by field: a slotted class's value, or a call that is wrong (its
    message)."""
    cls = type(self)
    names = cls._value_names
    if len(args) > len(names):
        raise TypeError(
            f"{cls.__name__}.__init__() takes {len(names) + 1} positional arguments but "
            f"{len(args) + 1} were given"
        )
    put = object.__setattr__
    for name, value in zip(names, args, strict=False):
        if name in kwargs:
            raise TypeError(f"{cls.__name__}.__init__() got multiple values for argument {name!r}")
        put(self, name, value)
    fields = cls._value_fields
    for name in names[len(args) :]:
        if name in kwargs:
            put(self, name, kwargs.pop(name))
            continue
        spec = fields[name]
        if spec.default_factory is not _MISSING:
            put(self, name, spec.default_factory())
        elif spec.default is not _MISSING:
            put(self, name, spec.default)
        else:
            raise TypeError(f"{cls.__name__}.__init__() missing 1 required argument: {name!r}")
    if kwargs:
        unknown = next(iter(kwargs))
        raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {unknown!r}")
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


def _values(self: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in names)


def _repr(self: Any) -> str:
    cls = type(self)
    shown = ", ".join(
        f"{name}={getattr(self, name)!r}"
        for name in cls._value_names
        if cls._value_fields[name].repr
    )
    return f"{cls.__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = type(self)._value_compared
    return _values(self, names) == _values(other, names)


def _hash(self: Any) -> int:
    return hash(_values(self, type(self)._value_compared))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _reduce(self: Any) -> tuple[Any, ...]:
    cls = type(self)
    return (_rebuild, (cls, {name: getattr(self, name) for name in cls._value_names}))


def _rebuild(cls: type[Any], values: dict[str, Any]) -> Any:
    value = object.__new__(cls)
    for name, item in values.items():
        object.__setattr__(value, name, item)
    return value


class _LazyFields:
    """``__dataclass_fields__`` made on first use, for :mod:`dataclasses`' own functions."""

    def __get__(self, instance: Any, owner: type[Any]) -> dict[str, Any]:
        import dataclasses

        made: dict[str, Any] = {}
        for name, spec in owner._value_fields.items():
            made_field: Any = dataclasses.field(
                default=spec.default if spec.default is not _MISSING else dataclasses.MISSING,
                default_factory=(
                    spec.default_factory
                    if spec.default_factory is not _MISSING
                    else dataclasses.MISSING
                ),
                compare=spec.compare,
                repr=spec.repr,
            )
            made_field.name = name
            made_field._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            made[name] = made_field
        return made


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of the value *obj* with *changes* (as ``dataclasses.replace``)."""
    cls = type(obj)
    for name in cls._value_names:  # type: ignore[attr-defined]
        if name not in changes:
            changes[name] = getattr(obj, name)
    return cls(**changes)


def asdict(obj: Any) -> dict[str, Any]:
    """The fields of the value *obj* as a dict, values made of values turned into dicts too,
    lists, tuples and dicts copied (as ``dataclasses.asdict``)."""
    return {name: _plain(getattr(obj, name)) for name in type(obj)._value_names}


def _plain(value: Any) -> Any:
    if hasattr(type(value), "_value_names"):
        return asdict(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_plain(v) for v in value])
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return type(value)((_plain(k), _plain(v)) for k, v in value.items())
    return value
