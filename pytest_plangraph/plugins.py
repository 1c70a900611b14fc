"""The one plugin manager of pytest-plangraph, shared by the CLI and the pytest plugin.

:func:`get_plugin_manager` registers the hook specifications, the built-in verifiers (through
an internal plugin, exactly as a third party would) and every ``plangraph`` entry point, once per
process. :func:`get_registry` turns the ``plangraph_verifier_types`` answers into a
:class:`~pytest_plangraph.verifiers.Registry`.

A plugin that fails to import or to register becomes a :class:`VerifierError` naming its
distribution and entry point, never a traceback. Importing this module stays cheap: jsonschema
and the plan models are imported only when verifiers run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

from . import hookspecs
from .errors import VerifierError
from .hookspecs import PROJECT, hookimpl
from .verifiers import Registry, VerifierType, builtin_types

if TYPE_CHECKING:
    from importlib.metadata import Distribution, EntryPoint

AUTOLOAD_OFF = "PLANGRAPH_DISABLE_PLUGIN_AUTOLOAD"
"""Environment variable: set to 1 to load no ``plangraph`` entry points."""
BUILTIN_PLUGIN = "plangraph-builtins"
BUILTIN_FORMATS = ("text", "json")

_manager: pluggy.PluginManager | None = None


class _BuiltinVerifiers:
    """The built-in verifier types, registered like any plugin."""

    @hookimpl
    def plangraph_verifier_types(self) -> list[VerifierType]:
        return builtin_types()


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager (built on first use; see :func:`clear_cache`)."""
    global _manager
    if _manager is None:
        _manager = _build()
    return _manager


def clear_cache() -> None:
    """Forget the plugin manager, so the next call loads entry points again (for tests)."""
    global _manager
    _manager = None


def get_registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """The verifier types of every registered plugin (of *pm*, or the shared manager)."""
    pm = pm or get_plugin_manager()
    return Registry(_verifier_sources(pm))


def get_report_formats(
    pm: pluggy.PluginManager | None = None,
) -> dict[str, Callable[[dict[str, Any]], str]]:
    """Report formats added by plugins; on a clash the plugin registered first wins."""
    pm = pm or get_plugin_manager()
    formats: dict[str, Callable[[dict[str, Any]], str]] = {}
    for answer in pm.hook.plangraph_report_formats():  # last registered answers first
        formats.update(answer or {})
    for name in BUILTIN_FORMATS:
        formats.pop(name, None)
    return formats


def _build() -> pluggy.PluginManager:
    from .vcs import environ_flag

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(_BuiltinVerifiers(), name=BUILTIN_PLUGIN)
    if not environ_flag(AUTOLOAD_OFF):
        _load_entry_points(pm)
    return pm


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    try:
        pm.load_setuptools_entrypoints(PROJECT)
    except Exception as exc:
        raise _diagnose(pm, exc) from exc


def _diagnose(pm: pluggy.PluginManager, original: Exception) -> VerifierError:
    """Find the entry point that failed to load or register, and say so."""
    for dist, entry in _entry_points():
        if pm.has_plugin(entry.name) or pm.is_blocked(entry.name):
            continue
        try:
            pm.register(entry.load(), name=entry.name)
        except Exception as exc:
            return _load_error(dist, entry, exc)
    return VerifierError(f"loading plangraph plugins failed: {_describe(original)}")


def _entry_points() -> list[tuple[Distribution, EntryPoint]]:
    import importlib.metadata

    return [
        (dist, entry)
        for dist in importlib.metadata.distributions()
        for entry in dist.entry_points
        if entry.group == PROJECT
    ]


def _load_error(dist: Distribution, entry: EntryPoint, exc: Exception) -> VerifierError:
    name = dist.metadata["Name"] or "?"
    return VerifierError(
        f"the plangraph plugin {entry.name!r} = {entry.value!r} of {name} {dist.version}"
        f" failed to load: {_describe(exc)}; fix or uninstall {name}, or set"
        f" {AUTOLOAD_OFF}=1 to run without plugins"
    )


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _verifier_sources(pm: pluggy.PluginManager) -> list[tuple[str, list[Any]]]:
    """``(plugin name, types)`` per implementation, in registration order."""
    sources: list[tuple[str, list[Any]]] = []
    for impl in pm.hook.plangraph_verifier_types.get_hookimpls():
        try:
            types = impl.function()
        except Exception as exc:
            raise VerifierError(
                f"plugin {impl.plugin_name!r} failed in plangraph_verifier_types: {_describe(exc)}"
            ) from exc
        if not isinstance(types, (list, tuple)):
            raise VerifierError(
                f"plugin {impl.plugin_name!r} returned {type(types).__name__} from"
                " plangraph_verifier_types; expected a list of verifier types"
            )
        sources.append((impl.plugin_name, list(types)))
    return sources
