"""Report formats added by plugins (``plangraph_report_formats``), offered by ``status``
(besides the built-in ``text``, ``json`` and ``markdown``).

The ``--format`` choices of a command that takes plugin formats are a :class:`PluginFormats`:
it loads the plugins only when it must — a ``--format`` value that is not built in, or the
command's own ``--help`` — so building the parser (and ``plangraph --help``) loads none, and
the plugin manager, built once per process, is reused by the command itself.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import VerifierError
from ..plan.formats import FORMAT_VERSION

BUILTIN = ("text", "json", "markdown")


class PluginFormats:
    """``text``, ``json``, ``markdown`` and every plugin format, as argparse ``choices``."""

    def __contains__(self, name: object) -> bool:
        if name in BUILTIN:
            return True
        warnings: list[str] = []
        try:
            found = name in _plugin_formats(warnings.append)
        except VerifierError:  # a broken plugin: the command itself reports it
            return True
        if not found:  # argparse refuses the choice next: say first why a plugin offers none
            for line in warnings:
                print(line, file=sys.stderr)
        return found

    def __iter__(self) -> Iterator[str]:
        try:
            extra = sorted(_plugin_formats())
        except VerifierError:
            extra = []
        return iter([*BUILTIN, *extra])


def offer_plugin_formats(parser: argparse.ArgumentParser) -> None:
    """Let *parser*'s ``--format`` take plugin formats too. Give the command a ``--format``
    of its own (``parents=[common_options()]``): the action is shared with every parser that
    has the same parent."""
    for action in parser._actions:
        if "--format" in action.option_strings:
            action.choices = PluginFormats()


def plugin_report(fmt: str, data: dict[str, Any]) -> str | None:
    """*data* (the command's JSON document, without ``"format"``) rendered by the plugin
    format *fmt*; None when *fmt* is built in. VerifierError when the plugin fails."""
    if fmt in BUILTIN:
        return None
    from ..hooks.manager import render_report

    return render_report(fmt, {"format": FORMAT_VERSION, **data})


def _plugin_formats(warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    from ..hooks.manager import get_report_formats

    return get_report_formats(warn=_silent if warn is None else warn)


def _silent(line: str) -> None:
    """Choosing a format says nothing; the command's own call warns."""
