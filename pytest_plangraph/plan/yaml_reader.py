"""Reading a YAML plan: composed with the safe loader and walked by hand, so that duplicate keys
are caught and the position of every field is known; nothing is ever constructed from tags.

Imported only when a plan's YAML is parsed (a plan read from the plan cache needs no PyYAML).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml

from ..errors import PlanError, Problem
from .messages import FieldPath, format_path


def libyaml_loader() -> Any:
    """PyYAML's safe loader in C (``yaml.CSafeLoader``, libyaml) when PyYAML was built with it
    and it builds this ``yaml``'s nodes; else None, and PyYAML's own ``SafeLoader`` reads.

    A C extension is loaded once per process: when ``sys.modules`` drops ``yaml`` and it is
    imported again (as ``pytester`` does after each in-process run), the new ``yaml`` keeps the
    first import's ``yaml._yaml``, whose parser builds the first import's nodes and raises its
    errors, which the new ``yaml`` neither resolves (every tag None) nor catches."""
    fast = getattr(yaml, "CSafeLoader", None)
    return fast if fast is not None and _builds_own_nodes(fast) else None


@functools.cache
def _builds_own_nodes(loader: Any) -> bool:
    """Whether the loader class *loader* composes nodes of this ``yaml``'s classes."""
    probe = loader("a")
    try:
        return type(probe.get_single_node()) is yaml.ScalarNode
    finally:
        probe.dispose()


_BaseLoader: Any = libyaml_loader() or yaml.SafeLoader  # libyaml when built with it


class _SafeLoader(_BaseLoader):  # type: ignore[misc]
    """The safe loader, remembering how each plain scalar's text resolves to a tag: a plan
    repeats the same texts (types, ids, paths) thousands of times, and the safe loader has no
    path-dependent resolvers, so the text alone decides."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._tags: dict[tuple[str, Any], str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not yaml.ScalarNode or self.yaml_path_resolvers:  # a path decides too
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = self._tags.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if tag == _BOOL and value.lower() not in ("true", "false"):
                tag = _STR  # YAML 1.2 (and JSON): yes, no, on and off are text
            elif tag == _STR and implicit[0] and _EXPONENT.fullmatch(value):
                tag = _FLOAT  # YAML 1.2: 1e3 written plainly is a number (1.1: only 1.0e+3)
            self._tags[key] = tag
        return tag


def read_yaml(text: str, name: str, max_nodes: int) -> tuple[Any, dict[FieldPath, tuple[int, int]]]:
    """The data of a YAML plan *text* and the position of each field path; :class:`PlanError`
    for a syntax error, a duplicate key, a key that is not text, or more than *max_nodes*
    values (an alias bomb)."""
    data, walker = _walk(text, name, max_nodes)
    return data, ({} if walker is None else walker.positions)


def read_block(
    text: str, name: str, max_nodes: int
) -> tuple[Any, dict[FieldPath, tuple[int, int]], int, bool]:
    """:func:`read_yaml` for one block of a plan file read on its own
    (:mod:`~pytest_plangraph.plan.blocks`): its data, positions (lines of the block), how many
    values it holds, and whether an alias was met (a block read alone may then differ from the
    same text read in its file)."""
    data, walker = _walk(text, name, max_nodes)
    if walker is None:
        return data, {}, 1, False
    return data, walker.positions, walker.count, walker.aliased


_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[\]{},:?-])&[^\s\[\]{},]", re.MULTILINE)
"""Where an anchor may be named: ``&`` and a name, where a value may start (at a line's
start, after a space or a flow or block indicator); :func:`anchors` scans only such texts."""


def anchors(text: str) -> bool:
    """Whether the YAML *text* names an anchor (``&name``): an anchor's name belongs to the
    whole file (a name used twice is an error there), so a part naming one may read alone
    otherwise than in its file. False for a text that does not scan."""
    if "&" not in text or _MAYBE_ANCHOR.search(text) is None:  # "R&D", "a & b": no anchor
        return False
    scanner = _BaseLoader(text)
    try:
        while scanner.check_token():
            if isinstance(scanner.get_token(), yaml.AnchorToken):
                return True
    except yaml.YAMLError:
        return False
    finally:
        scanner.dispose()
    return False


def _walk(text: str, name: str, max_nodes: int) -> tuple[Any, _Walker | None]:
    """The data of a YAML *text* and the walker that built it (None for an empty text)."""
    try:
        loader = _SafeLoader(text)  # PyYAML's own reader checks every character here
    except yaml.reader.ReaderError as exc:
        raise PlanError([_forbidden_character(text, name, exc)]) from None
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None
        walker = _Walker(loader, name, max_nodes)
        return walker.value(root, ()), walker
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        what = exc.problem or exc.context or "syntax error"
        raise PlanError([Problem(name, line, col, "", f"YAML syntax error: {what}")]) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow, such as NUL
        raise PlanError([_forbidden_character(text, name, exc)]) from None
    except yaml.YAMLError as exc:
        raise PlanError([Problem(name, 0, 0, "", f"YAML error: {exc}")]) from None
    except RecursionError:
        raise PlanError([Problem(name, 0, 0, "", _TOO_DEEP)]) from None
    except ValueError as exc:  # a whole number of more digits than Python converts
        message = _TOO_LONG_NUMBER.format(str(exc).split(":")[0])
        raise PlanError([Problem(name, 0, 0, "", message)]) from None
    finally:
        loader.dispose()


def _forbidden_character(text: str, name: str, exc: yaml.reader.ReaderError) -> Problem:
    """The problem for a character YAML refuses anywhere in a file (a control character such
    as NUL), at its line and column; PyYAML says only its offset in "<unicode string>" (in
    UTF-8 bytes when libyaml read it, in characters when PyYAML's own reader did)."""
    at = exc.position
    if _BaseLoader is not yaml.SafeLoader:
        at = len(text.encode("utf-8", "surrogatepass")[:at].decode("utf-8", "replace"))
    line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
    message = (
        f"character U+{code:04X} is not allowed in a YAML file (control characters are "
        f"refused); remove it, or write it as the escape \\x{code & 0xFF:02X} inside double "
        "quotes"
    )
    return Problem(name, line, column, "", message)


_TOO_LONG_NUMBER = "a number that cannot be read ({}); write a shorter one"
_TOO_DEEP = "values nested too deeply to read; a plan nests a few levels of mappings and lists"


_STR = "tag:yaml.org,2002:str"
_BOOL = "tag:yaml.org,2002:bool"
_FLOAT = "tag:yaml.org,2002:float"
_MERGE = "tag:yaml.org,2002:merge"
_EXPONENT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+")


def _not_text(key: Any, written: Any) -> str:
    """Why a mapping key that YAML did not read as text is refused, and how to write it."""
    if isinstance(key, bool):
        kind = "a boolean"
    elif isinstance(key, (int, float)):
        kind = "a number"
    elif key is None:
        kind = "null"
    else:
        return "keys must be plain text"
    return f"the key {written!r} is read as {kind}, not text; put it in quotes"


class _Walker:
    """Builds plain data from a composed YAML tree, recording positions, refusing duplicates."""

    def __init__(self, loader: Any, name: str, max_nodes: int) -> None:
        self.loader = loader
        self.name = name
        self.max_nodes = max_nodes
        self.positions: dict[FieldPath, tuple[int, int]] = {}
        self.count = 0
        self.aliased = False  # an alias was met
        self.memo: dict[int, tuple[Any, int]] = {}
        self.open: set[int] = set()  # nodes being built: an alias to one is a loop
        self.own: dict[int, int] = {}  # mapping node → pairs it writes itself (not merged)
        # text is taken as written only while the loader reads it as YAML says (another
        # library may have given the loader a constructor of its own)
        standard = yaml.constructor.SafeConstructor.construct_yaml_str
        self.plain_text = loader.yaml_constructors.get(_STR) is standard

    def value(self, node: yaml.Node, path: FieldPath) -> Any:
        seen = self.memo.get(id(node))
        if seen is not None:  # an alias: count its expansion without walking it again
            self.aliased = True
            self.count += seen[1]
            self._check_count()
            return seen[0]
        if id(node) in self.open:
            line, column = node.start_mark.line + 1, node.start_mark.column + 1
            message = "an alias refers to a value that contains it (a loop); remove the alias"
            raise PlanError([Problem(self.name, line, column, format_path(path), message)])
        self.open.add(id(node))
        start = self.count
        result = self._build(node, path)
        self.open.discard(id(node))
        self.memo[id(node)] = (result, self.count - start)
        return result

    def _check_count(self) -> None:
        if self.count > self.max_nodes:
            raise PlanError(
                [Problem(self.name, 0, 0, "", "plan expands to too many values (alias bomb?)")]
            )

    def _build(self, node: yaml.Node, path: FieldPath) -> Any:
        self.count += 1
        self._check_count()
        self.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.value(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._scalar(node)

    def _scalar(self, node: yaml.Node) -> Any:
        # text is most of a plan: its value as written is what the constructor would return
        if node.tag == _STR and self.plain_text and isinstance(node, yaml.ScalarNode):
            return node.value
        return self.loader.construct_object(node, deep=True)

    def _count_own(self, node: yaml.MappingNode) -> None:
        """Remember how many pairs *node* and every mapping it merges write themselves, before
        flattening rewrites them (a mapping merged here may be read again through an alias)."""
        if id(node) in self.own:
            return
        self.own[id(node)] = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE)
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merged = (
                    value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                )
                for each in merged:
                    if isinstance(each, yaml.MappingNode):
                        self._count_own(each)

    def _mapping(self, node: yaml.MappingNode, path: FieldPath) -> dict[Any, Any]:
        # merge keys (<<) put the merged pairs first; a later pair wins, as PyYAML builds it:
        # a key written here overrides a merged one, and of several merged the first listed
        self._count_own(node)
        self.loader.flatten_mapping(node)  # flattens every mapping it merges too, in place
        merged = len(node.value) - self.own[id(node)]
        result: dict[Any, Any] = {}
        written: set[str] = set()
        for index, (key_node, value_node) in enumerate(node.value):
            key = self._scalar(key_node)
            where = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if not isinstance(key, str):
                message = _not_text(key, key_node.value)
                raise PlanError([Problem(self.name, *where, format_path(path), message)])
            key_path = (*path, str(key))
            if index >= merged and key in written:
                raise PlanError(
                    [
                        Problem(
                            self.name,
                            where[0],
                            where[1],
                            format_path(key_path),
                            f"duplicate key {key!r}; each key may appear once in a mapping",
                        )
                    ]
                )
            if index >= merged:
                written.add(key)
            self.positions[key_path] = where
            result[key] = self.value(value_node, key_path)
            self.positions[key_path] = where
        return result
