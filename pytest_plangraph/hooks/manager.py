"""The one plugin manager of pytest-plangraph, shared by the CLI and the pytest plugin.

:func:`get_plugin_manager` registers the hook specifications, the built-in verifiers (through
an internal plugin, exactly as a third party would) and every ``plangraph`` entry point, once per
process. :func:`get_registry` turns the ``plangraph_verifier_types`` answers into a
:class:`~pytest_plangraph.verifiers.Registry`; :func:`get_report_formats` collects the
``plangraph_report_formats`` answers.

A plugin that fails to import or to register becomes a :class:`VerifierError` naming its
distribution and entry point, never a traceback. The notification hooks
(``plangraph_evidence_recorded``, ``plangraph_gate_decision``) are called through
:func:`notify`: each implementation on its own, so one that raises is reported in one warning
line and changes neither the command's result nor its exit code. Importing this module stays
cheap: jsonschema and the plan models are imported only when verifiers run, the hook
specifications when the manager is built.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import pluggy

from ..errors import VerifierError
from ..verifiers import BUILTIN_ORIGIN, Registry, VerifierType, builtin_types
from . import entrypoints
from .entrypoints import Entry, entry_points

AUTOLOAD_OFF = "PLANGRAPH_DISABLE_PLUGIN_AUTOLOAD"
"""Environment variable: set to 1 to load no ``plangraph`` entry points."""
BUILTIN_PLUGIN = BUILTIN_ORIGIN
BUILTIN_FORMATS = ("text", "json", "markdown")

Formatter = Callable[[dict[str, Any]], str]
"""A report format: renders the ``--format json`` document of a command as text."""
Warn = Callable[[str], None]
"""Where a warning line goes."""

_manager: pluggy.PluginManager | None = None


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


def registered() -> list[str] | None:
    """The names of the plugins the process-wide manager holds, sorted (the built-in types',
    each entry point's, and any a ``conftest.py`` registered); None before it is built."""
    if _manager is None:
        return None
    return sorted(name for name, _ in _manager.list_name_plugin())


def get_registry(
    pm: pluggy.PluginManager | None = None, settled: Mapping[str, bool] | None = None
) -> Registry:
    """The verifier types of every registered plugin (of *pm*, or the shared manager).

    *settled* are built-in types known to be registered by the built-ins alone under the
    plug-ins installed now, and whether each runs (a kept lint answer shows it: its key names
    the plug-ins): while this process has built no manager, the registry is built only when
    asked anything else than whether one of those runs (:meth:`Registry.runs`)."""
    if settled and pm is None and _manager is None:
        return _LaterRegistry(settled)
    pm = pm or get_plugin_manager()
    return Registry(_verifier_sources(pm))


class _LaterRegistry(Registry):
    """The shared manager's registry, built when first asked anything but whether a settled
    type runs (see :func:`get_registry`)."""

    def __init__(self, settled: Mapping[str, bool]) -> None:  # the rest: __getattr__
        self._settled = dict(settled)

    def __getattr__(self, name: str) -> Any:
        if name not in ("_types", "_origin"):
            raise AttributeError(name)
        Registry.__init__(self, _verifier_sources(get_plugin_manager()))
        return self.__dict__[name]

    def runs(self, name: str) -> bool:
        """:meth:`Registry.runs`, answered from the settled types while no manager was built
        in this process (a ``conftest.py`` may register a plugin with one later)."""
        if "_types" not in self.__dict__ and _manager is None and name in self._settled:
            return self._settled[name]
        return super().runs(name)


# --- calling hooks safely ---------------------------------------------------------------------


class HookFailure(NamedTuple):
    """One hook implementation that raised: which plugin, which hook, what it raised."""

    plugin: str
    hook: str
    error: str


def call_each(
    hook: str, kwargs: Mapping[str, Any], pm: pluggy.PluginManager | None = None
) -> tuple[list[tuple[str, Any]], list[HookFailure]]:
    """Call every implementation of *hook* on its own, in pluggy's order (last registered
    first). One that raises any ``Exception`` or ``SystemExit`` becomes a :class:`HookFailure`
    and the others still run; ``KeyboardInterrupt`` goes through. Returns ``(plugin name,
    answer)`` of each implementation that returned, and the failures."""
    pm = pm or get_plugin_manager()
    answers: list[tuple[str, Any]] = []
    failures: list[HookFailure] = []
    for impl in reversed(getattr(pm.hook, hook).get_hookimpls()):
        try:
            answers.append((impl.plugin_name, _call(impl, kwargs)))
        except (Exception, SystemExit) as exc:  # a plugin's bug is a warning, not our crash
            failures.append(HookFailure(impl.plugin_name, hook, _describe(exc)))
    return answers, failures


def notify(
    hook: str,
    calls: Iterable[Mapping[str, Any]],
    *,
    pm: pluggy.PluginManager | None = None,
    warn: Warn | None = None,
) -> None:
    """Call the notification *hook* once per keyword set in *calls* (see :func:`call_each`);
    each plugin that raised gets one warning line (default: stderr), with how many of the
    calls failed when there were several. Never raises for anything a plugin does."""
    if pm is None and _manager is None and not _may_listen():
        return  # no plugin can listen: no manager built to tell
    pm = pm or get_plugin_manager()
    if not getattr(pm.hook, hook).get_hookimpls():  # no plugin listens: nothing to call
        return
    failed: dict[str, list[HookFailure]] = {}
    total = 0
    for kwargs in calls:
        total += 1
        for failure in call_each(hook, kwargs, pm)[1]:
            failed.setdefault(failure.plugin, []).append(failure)
    for failures in failed.values():
        (warn or warn_stderr)(hook_warning(failures[0], len(failures), total))


def hook_warning(failure: HookFailure, count: int = 1, total: int = 1) -> str:
    """The warning line for *failure* (which happened in *count* of *total* calls)."""
    times = f" ({count} of {total} calls)" if total > 1 else ""
    return (
        f"plangraph: warning: the plugin {failure.plugin!r} failed in {failure.hook}{times}: "
        f"{failure.error}; ignored (the command's result stands; fix or uninstall the plugin)"
    )


def warn_stderr(line: str) -> None:
    """Write one warning line to stderr."""
    print(line, file=sys.stderr)


def _call(impl: pluggy.HookImpl, kwargs: Mapping[str, Any]) -> Any:
    """Call one implementation; a wrapper, alone, wraps no other implementation."""
    answer: Any = impl.function(*(kwargs[name] for name in impl.argnames))
    if not (impl.wrapper or impl.hookwrapper):
        return answer
    next(answer)
    try:
        answer.send(pluggy.Result([], None) if impl.hookwrapper else [])
    except StopIteration as stop:
        return stop.value
    answer.close()
    raise RuntimeError("the hook wrapper yielded more than once")


# --- report formats ---------------------------------------------------------------------------


def get_report_formats(
    pm: pluggy.PluginManager | None = None, *, warn: Warn | None = None
) -> dict[str, Formatter]:
    """Report formats added by plugins; on a clash the plugin registered first wins.

    A plugin whose ``plangraph_report_formats`` raises or answers something that is not a
    mapping of names to functions is left out with a warning line (*warn*, default stderr).
    Built-in names (``text``, ``json``, ``markdown``) are never replaced.
    """
    return {name: render for name, (_, render) in _report_formats(pm, warn).items()}


def render_report(name: str, report: dict[str, Any], pm: pluggy.PluginManager | None = None) -> str:
    """*report* rendered by the plugin format *name*; VerifierError when the format is
    unknown or its function fails or answers something other than text."""
    formats = _report_formats(pm, None)
    if name not in formats:
        known = ", ".join([*BUILTIN_FORMATS, *sorted(formats)])
        raise VerifierError(f"unknown report format {name!r}; known formats: {known}")
    plugin, render = formats[name]
    try:
        text = render(report)
    except (Exception, SystemExit) as exc:
        raise VerifierError(
            f"the report format {name!r} of the plugin {plugin!r} failed: {_describe(exc)}"
        ) from None
    if not isinstance(text, str):
        raise VerifierError(
            f"the report format {name!r} of the plugin {plugin!r} returned"
            f" {type(text).__name__}, not text"
        )
    return text


def _report_formats(
    pm: pluggy.PluginManager | None, warn: Warn | None
) -> dict[str, tuple[str, Formatter]]:
    """Format name -> (plugin, function); the first registered plugin wins a clash."""
    warn = warn or warn_stderr
    answers, failures = call_each("plangraph_report_formats", {}, pm)
    for failure in failures:
        warn(hook_warning(failure))
    formats: dict[str, tuple[str, Formatter]] = {}
    for plugin, answer in answers:  # last registered answers first: the first one wins
        for name, render in _format_entries(plugin, answer, warn):
            formats[name] = (plugin, render)
    for name in BUILTIN_FORMATS:
        formats.pop(name, None)
    return formats


def _format_entries(plugin: str, answer: Any, warn: Warn) -> list[tuple[str, Formatter]]:
    if answer is None:
        return []
    if isinstance(answer, Mapping) and all(
        isinstance(k, str) and k and callable(v) for k, v in answer.items()
    ):
        return list(answer.items())
    warn(
        f"plangraph: warning: the plugin {plugin!r} returned {type(answer).__name__} from"
        " plangraph_report_formats, not a mapping of format names to functions; ignored"
    )
    return []


# --- loading ----------------------------------------------------------------------------------


def _may_listen() -> bool:
    """Whether a plugin other than the built-ins' (which implements no notification hook)
    would be registered by building the manager now: an entry point, loaded (those the
    command's check of its plan found, when it looked: not scanned twice)."""
    if not _autoload():
        return False
    found = entrypoints.last_found
    return bool(entry_points() if found is None else found)


def _autoload() -> bool:
    return os.environ.get(AUTOLOAD_OFF, "").lower() not in {"1", "true", "yes", "on"}


def _build() -> pluggy.PluginManager:
    # the specifications imported when a manager is built: a run that asks the registry only
    # whether a settled type runs (a kept lint answer) and notifies no plugin builds none
    from . import specs

    pm = pluggy.PluginManager(specs.PROJECT)
    pm.add_hookspecs(specs)  # before any plugin is registered, so its hooks are validated
    pm.register(_builtin_verifiers(specs.hookimpl), name=BUILTIN_PLUGIN)
    if _autoload():
        _load_entry_points(pm)
    return pm


def _builtin_verifiers(hookimpl: pluggy.HookimplMarker) -> object:
    """The plugin of the built-in verifier types, registered like any plugin, its hook marked
    by *hookimpl* (the specifications' marker)."""

    class BuiltinVerifiers:
        @hookimpl
        def plangraph_verifier_types(self) -> list[VerifierType]:
            return builtin_types()

    return BuiltinVerifiers()


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    """Register every ``plangraph`` entry point, as pluggy's own loader does, except that one
    module named by two entry points (a package installed twice under two names) is
    registered once instead of stopping every command. The entry points are the last scan's
    when no distribution changed since (:mod:`.entrypoints`)."""
    for entry in entry_points():
        if pm.get_plugin(entry.name) is not None or pm.is_blocked(entry.name):
            continue
        try:
            plugin = entry.load()
            if not pm.is_registered(plugin):
                pm.register(plugin, name=entry.name)
        except (Exception, SystemExit) as exc:  # SystemExit: a module that exits on import
            raise _load_error(entry, exc) from exc


def _load_error(entry: Entry, exc: BaseException) -> VerifierError:
    name, version = entry.distribution()
    return VerifierError(
        f"the plangraph plugin {entry.name!r} = {entry.value!r} of {name} {version}"
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
        except (Exception, SystemExit) as exc:
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
