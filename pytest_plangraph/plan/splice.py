"""The part of a YAML plan's text a patch touches, and the rest put back as it was written.

The round-trip editor reads and writes a plan in pure Python at a few milliseconds a node: a
patch that re-plans one node of a 2,000-node plan spent half a minute reading and writing the
1,999 it leaves alone, and on the edges it adds none to. :func:`touched_text` cuts the top-level
block sequences ``nodes:`` and ``edges:`` into their items (each ``- `` line at the sequence's
indent and the lines up to the next one) and puts, in place of each run of items the patch does
not change, one plain scalar item holding a token (``- plangraph-kept-…``) that no plan holds;
only that shorter text goes through the round trip (an added item goes after the last token).
:func:`put_back` then writes each run's lines, byte for byte, in place of its token's line.

This is a speed-up and never decides: the caller compares the plan the result reads as with the
plan the patch must give (its digest), and on any difference, or when the text is not laid out
as above (a flow sequence, items not one to a node, a token seen twice), edits the whole text.

:func:`document_parts` cuts off what lies outside a document's ``---`` and ``...`` markers,
which the round trip would drop.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass

__all__ = ["Cut", "document_parts", "put_back", "touched_text"]

_KEY = {name: re.compile(rf"{name}:[ \t]*(?:#[^\n]*)?\r?\n\Z") for name in ("nodes", "edges")}
"""A top-level key on a line of its own (its value a block below it)."""


@dataclass(frozen=True)
class Cut:
    """A plan's text with the runs of untouched node items replaced by token items."""

    text: str
    """The shorter text the round trip reads."""
    kept: dict[str, str]
    """Each token → the lines of the run of items it stands for."""


def touched_text(
    text: str, node_ids: Sequence[str], touched: Collection[str], edges: int | None
) -> Cut | None:
    """*text* (a YAML plan, without document markers) with each run of the items of the
    top-level ``nodes:`` block sequence whose node is not in *touched* replaced by one token
    item, and, when *edges* (the plan's number of edges) is given, the items of the top-level
    ``edges:`` block sequence by one token; *node_ids* are the plan's nodes in file order.
    None when the text is not laid out so (no such block, its items not one to each node or
    edge)."""
    lines = text.splitlines(keepends=True)
    nodes = _block(lines, "nodes")
    if nodes is None:
        return None
    blocks = [(nodes, [node not in touched for node in node_ids])]
    edge_block = _block(lines, "edges") if edges else None
    if edge_block is not None and edges:  # else the edges go through the round trip
        blocks.append((edge_block, [True] * edges))
    nonce = secrets.token_hex(8)
    kept: dict[str, str] = {}
    out: list[str] = []
    done = 0
    for (first, end, indent), keep in sorted(blocks):
        starts = [i for i in range(first, end) if _item_at(lines[i], indent)]
        if len(starts) != len(keep):
            return None
        out.extend(lines[done:first])
        bounds = [*starts, end]
        run: list[str] = []
        for index, kept_as_written in enumerate(keep):
            chunk = "".join(lines[bounds[index] : bounds[index + 1]])
            if kept_as_written:
                run.append(chunk)
                continue
            out.extend(_token(run, indent, nonce, kept))
            out.append(chunk)
        out.extend(_token(run, indent, nonce, kept))
        done = end
    out.extend(lines[done:])
    return Cut("".join(out), kept)


def put_back(edited: str, cut: Cut) -> str | None:
    """*edited* (the round trip's output for :attr:`Cut.text`) with each token's line replaced
    by the run of items it stands for; None when a token is not found once, alone on a line at
    the indent of the items it stands for (the round trip re-indents a sequence to the indent
    it guessed from the plan's first one: the items written beside the token take that)."""
    for token, run in cut.kept.items():
        at = edited.find(f"- {token}")
        if at < 0 or edited.find(token, at + 2 + len(token)) >= 0:
            return None
        start = edited.rfind("\n", 0, at) + 1
        stop = edited.find("\n", at)
        stop = len(edited) if stop < 0 else stop + 1
        indent = run[: len(run) - len(run.lstrip(" "))]
        if edited[start:at] != indent or edited[at + 2 + len(token) : stop].strip():
            return None  # else the run's items, at another indent, would not be the token's
        edited = edited[:start] + (run if run.endswith("\n") else run + "\n") + edited[stop:]
    return edited


def _block(lines: list[str], name: str) -> tuple[int, int, int] | None:
    """The first line, the end and the indent of the items of the top-level block sequence
    *name*; None when there is none."""
    pattern = _KEY[name]
    key = next((i for i, line in enumerate(lines) if pattern.match(line)), None)
    if key is None:
        return None
    first = next((i for i in range(key + 1, len(lines)) if not _blank(lines[i])), None)
    if first is None:
        return None
    indent = len(lines[first]) - len(lines[first].lstrip(" "))
    if not _item_at(lines[first], indent):
        return None
    end = len(lines)
    for i in range(first + 1, len(lines)):
        line = lines[i]
        if _blank(line):
            continue
        at = len(line) - len(line.lstrip(" "))
        if at < indent or (at == indent and not _item_at(line, indent)):
            end = i
            break
    while end > first + 1 and _blank(lines[end - 1]) and lines[end - 1].strip() == "":
        end -= 1  # blank lines before the next key stay outside the last item
    return first, end, indent


def _item_at(line: str, indent: int) -> bool:
    """Whether *line* opens a block sequence item at *indent*."""
    rest = line[indent:]
    return (
        line[:indent] == " " * indent
        and rest[:1] == "-"
        and (rest[1:2] in (" ", "\n", "\r", "\t") or rest == "-")
    )


def _blank(line: str) -> bool:
    """A line holding nothing or a comment alone."""
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _token(run: list[str], indent: int, nonce: str, kept: dict[str, str]) -> list[str]:
    """The token item standing for *run* (emptied), none for an empty run."""
    if not run:
        return []
    token = f"plangraph-kept-{nonce}-{len(kept):06d}"  # no token begins another
    kept[token] = "".join(run)
    run.clear()
    return [f"{' ' * indent}- {token}\n"]


_MARKER_END = r"(?:[ \t]+#[^\n]*)?[ \t]*\r?\n?\Z"
_START = re.compile(r"---" + _MARKER_END)
_END = re.compile(r"\.\.\." + _MARKER_END)


def document_parts(text: str) -> tuple[str, str, str]:
    """*text* cut into the lines up to its ``---`` document start marker (comments and
    directives before it, and the marker's own comment), the document, and the lines from its
    ``...`` end marker on: the round trip drops the markers and what lies outside them, so
    only the document goes through it. Without a marker, that part is empty."""
    lines = text.splitlines(keepends=True)
    start = 0
    for index, line in enumerate(lines):
        if _START.match(line):
            start = index + 1
            break
        if line.strip() and not line.startswith(("#", "%")):
            break  # the document began without a marker
    end = len(lines)
    for index in range(len(lines) - 1, start - 1, -1):
        line = lines[index]
        if _END.match(line):
            end = index
            break
        if line.strip() and not line.lstrip().startswith("#"):
            break  # the document ends without a marker
    return "".join(lines[:start]), "".join(lines[start:end]), "".join(lines[end:])
