"""Reading the documents the ``schema`` verifier checks: JSON, or YAML read as the JSON it
stands for.

A YAML artifact is read safely (no tags construct objects), with dates kept as strings, as JSON
would have them. What JSON cannot hold is refused rather than judged: a key that is not text
(YAML's ``1: a``, which a schema's ``properties`` would never see), a number that is not finite
(``NaN``, ``.inf``), and a YAML document whose aliases expand to more than
:data:`MAX_VALUES` values or refer to themselves (a few hundred bytes can otherwise stand for
billions of values and take all memory).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from ..canonical import json_loads, utf8_safe

MAX_VALUES = 1_000_000
"""The most values a YAML document may expand to, aliases counted as often as they are used."""
YAML_SUFFIXES = (".yaml", ".yml")
_MAX_TEXT = 300


def parse_document(data: bytes, name: str) -> Any:
    """Parse JSON, or YAML when *name* ends in ``.yaml``/``.yml``; ValueError naming *name*."""
    import yaml

    try:
        if name.lower().endswith(YAML_SUFFIXES):
            value = _load_yaml(data)
        else:
            value = json_loads(data, parse_constant=_not_json)
        _check_json_like(value, "$")
    except yaml.YAMLError as exc:
        raise ValueError(f"{name}: not valid YAML: {short(str(exc))}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text: {exc.reason}") from exc
    except _Refused as exc:
        raise ValueError(f"{name}: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{name}: not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise ValueError(f"{name}: nested too deeply to read") from exc
    return value


def short(text: str) -> str:
    """*text*, cut to a length a one-line message can hold, a character no UTF-8 text can
    carry (a lone surrogate) written as its escape (:func:`~..canonical.utf8_safe`)."""
    text = utf8_safe(text)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 3] + "..."


class _Refused(ValueError):
    """A document that parses but does not stand for JSON."""


def _not_json(constant: str) -> Any:
    raise _Refused(f"{constant} is not a JSON number; write a finite number or null")


def _load_yaml(data: bytes) -> Any:
    """The value of the YAML document *data*: read by libyaml when PyYAML was built with it
    (an artifact of megabytes reads in C, not in pure Python); when that fails, read again
    by PyYAML's own reader, so the error told is the same with or without libyaml."""
    import yaml

    from ..plan.yaml_reader import libyaml_loader

    fast = libyaml_loader()
    if fast is not None:
        try:
            return _load_with(_yaml_loader(fast), data)
        except (yaml.YAMLError, RecursionError, ValueError):
            pass
    return _load_with(_yaml_loader(yaml.SafeLoader), data)


def _load_with(loader_class: Any, data: bytes) -> Any:
    loader = loader_class(data)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _count(root, {}, set())
        return loader.construct_document(root)
    finally:
        loader.dispose()


def _count(node: Any, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """How many values *node* expands to (an alias counts its whole value each time); refuses
    a loop and more than :data:`MAX_VALUES`."""
    import yaml

    key = id(node)
    known = sizes.get(key)
    if known is not None:
        return known
    if key in open_nodes:
        raise _Refused("an alias refers to a value that contains it (a loop); remove the alias")
    open_nodes.add(key)
    if isinstance(node, yaml.MappingNode):
        total = 1 + sum(
            _count(k, sizes, open_nodes) + _count(v, sizes, open_nodes) for k, v in node.value
        )
    elif isinstance(node, yaml.SequenceNode):
        total = 1 + sum(_count(item, sizes, open_nodes) for item in node.value)
    else:
        total = 1
    open_nodes.discard(key)
    if total > MAX_VALUES:
        raise _Refused(
            f"its aliases expand to more than {MAX_VALUES:,} values; write the data out or "
            "split the file"
        )
    sizes[key] = total
    return total


def _check_json_like(value: Any, where: str) -> None:
    """Refuse what JSON cannot hold: a key that is not text, a number that is not finite."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _Refused(
                    f"{where}: the key {key!r} is read as {type(key).__name__}, not text (JSON "
                    "keys are text); put it in quotes"
                )
            _check_json_like(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json_like(item, f"{where}[{index}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise _Refused(f"{where}: {value} is not a JSON number; write a finite number or null")


@functools.cache
def _yaml_loader(base: Any) -> Any:
    """The safe loader *base* (PyYAML's, or libyaml's ``CSafeLoader``), leaving timestamps as
    strings, as a JSON artifact would have them."""
    import yaml

    class _JsonLikeLoader(base):  # type: ignore[misc]
        pass

    _JsonLikeLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if not tag.endswith(":timestamp")]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return _JsonLikeLoader
