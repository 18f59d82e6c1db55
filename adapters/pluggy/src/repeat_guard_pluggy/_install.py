"""``install``: put the guard into any pluggy plugin manager, whatever its project name.

pluggy recognises specs and implementations by markers named after the manager's project
name, so for a manager other than ``"repeat_guard"`` the specs of ``hookspecs`` are re-marked
(fresh copies of the same functions) and the guard's implementations come from
``RepeatGuardPlugin.hook_implementations(pm.project_name)``. No glue is needed in the host.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping

import pluggy

from repeat_guard import GuardConfig, reduce

from . import hookspecs
from ._plugin import PLUGIN_NAME, Reducer, RepeatGuardPlugin

__all__ = ["install", "specs_for"]

_SPECS: tuple[Callable[..., object], ...] = tuple(
    getattr(hookspecs, name) for name in hookspecs.HOOK_NAMES
)


def specs_for(project_name: str, names: frozenset[str] | None = None) -> types.ModuleType | type:
    """Return a namespace holding the guard's hook specs, marked for ``project_name``.

    The namespace is ``hookspecs`` itself for the default project name, else a fresh class.

    ``names`` limits it to those hooks (all of them when ``None``). The spec options
    (``firstresult`` for ``tool_post_execute``) are those of ``hookspecs``.
    """
    if project_name == hookspecs.PROJECT_NAME and names is None:
        return hookspecs
    marker = pluggy.HookspecMarker(project_name)
    marked = {
        spec.__name__: marker(_copy_function(spec), **_spec_options(spec))
        for spec in _SPECS
        if names is None or spec.__name__ in names
    }
    return type(f"{project_name}_repeat_guard_specs", (), marked)


def install(
    pm: pluggy.PluginManager,
    config: Mapping[str, object] | GuardConfig | None = None,
    *,
    reducer: Reducer = reduce,
) -> RepeatGuardPlugin:
    """Add the guard to ``pm`` and return it.

    Adds whichever of the guard's hook specs ``pm`` lacks (under ``pm.project_name``),
    registers the guard as ``"repeat-tool-guard"`` and runs ``pm.check_pending()``. ``config``
    is a ``GuardConfig``, a raw mapping or ``None`` for the defaults.

    Raises ``GuardConfigError`` (naming the key) for an invalid config mapping and
    ``ValueError`` when a plugin named ``"repeat-tool-guard"`` is already registered, both
    before ``pm`` is touched. If the host blocked that name, the guard returned stays inert.
    """
    plugin = RepeatGuardPlugin(config, reducer=reducer)
    if pm.has_plugin(PLUGIN_NAME):
        raise ValueError(
            f"{PLUGIN_NAME} is already installed in plugin manager {pm.project_name!r}"
        )
    missing = frozenset(spec.__name__ for spec in _SPECS if not _has_spec(pm, spec.__name__))
    if missing:
        every = len(missing) == len(_SPECS)
        pm.add_hookspecs(specs_for(pm.project_name, None if every else missing))
    pm.register(plugin.hook_implementations(pm.project_name), name=PLUGIN_NAME)
    pm.check_pending()
    return plugin


def _has_spec(pm: pluggy.PluginManager, name: str) -> bool:
    caller: pluggy.HookCaller | None = getattr(pm.hook, name, None)
    return caller is not None and caller.has_spec()


def _spec_options(spec: Callable[..., object]) -> pluggy.HookspecOpts:
    options: pluggy.HookspecOpts = getattr(spec, f"{hookspecs.PROJECT_NAME}_spec")
    return options


def _copy_function(spec: Callable[..., object]) -> types.FunctionType:
    # A fresh function object, so marking it for one project leaves ``hookspecs`` untouched.
    function = spec
    assert isinstance(function, types.FunctionType)  # every spec is a plain ``def``
    clone = types.FunctionType(
        function.__code__,
        function.__globals__,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    clone.__doc__ = function.__doc__
    clone.__qualname__ = function.__qualname__
    clone.__module__ = function.__module__
    clone.__annotations__ = dict(function.__annotations__)
    return clone
