"""Verifiers registered by name in a dict; third-party ones arrive through entry points.

A verifier is a callable ``(completion: str, **reference) -> Verdict`` that never raises on model
output. Plugins declare ``[project.entry-points."passband.verifiers"] name = "module:callable"``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata

from passband.errors import UnknownNameError, WrongTypeError, did_you_mean
from passband.verifiers.verdict import Verdict

Verifier = Callable[..., Verdict]
ENTRY_POINT_GROUP = "passband.verifiers"

_REGISTRY: dict[str, Verifier] = {}
_BROKEN: dict[str, str] = {}  # plugin name -> why its entry point could not load
_plugins_loaded = False


def register(name: str, *, replace: bool = False) -> Callable[[Verifier], Verifier]:
    """Decorator: ``@register("math")``. A duplicate name raises unless ``replace=True``; the
    same definition again (a reloaded module, a notebook cell run twice) replaces it. A name is
    taken by a built-in or an installed plugin (entry point) before that one has loaded, too."""
    if not isinstance(name, str) or not name.strip() or name != name.strip() or ":" in name:
        raise ValueError(
            f"verifier name must be a non-empty string without surrounding spaces or ':' "
            f"(the CLI reads module:function as a function), got {name!r}"
        )

    def decorator(fn: Verifier) -> Verifier:
        if not callable(fn):
            raise WrongTypeError(f"verifier {name!r} must be callable, got {type(fn).__name__}")
        taken = _REGISTRY.get(name)
        # passband's own (the built-ins, at import): no scan of installed metadata (3 ms a name);
        # a plugin taking one of their names is warned about when plugins load
        builtin = str(getattr(fn, "__module__", "")).startswith("passband.")
        ep = _entry_points().get(name) if taken is None and not replace and not builtin else None
        if ep is not None and not _own_package(ep, fn):  # a plugin registering itself
            if not _loads_as(ep, fn):
                raise ValueError(
                    f"a verifier named {name!r} is installed ({ep.value}); pick another name "
                    "or pass replace=True"
                )
        elif taken is not None and not replace and taken is not fn and not _redefined(taken, fn):
            raise ValueError(
                f"a verifier named {name!r} is already registered ({_describe(taken)}); "
                "pick another name or pass replace=True"
            )
        _REGISTRY[name] = fn
        return fn

    return decorator


def _redefined(old: Verifier, new: Verifier) -> bool:
    """Whether ``new`` is ``old``'s definition run again (a reloaded module, a cell run twice):
    a function of the same module and qualified name, not a closure or lambda (two closures of
    one factory are different verifiers); or an instance of the same class that reads the same
    (``code_verifier(timeout_s=5)`` made again)."""
    if hasattr(new, "__code__"):  # a function
        where = [
            (getattr(f, "__module__", None), getattr(f, "__qualname__", None)) for f in (old, new)
        ]
        name = where[0][1] or ""
        return where[0] == where[1] and None not in where[0] and "<" not in name
    shown = repr(new)
    return type(old) is type(new) and repr(old) == shown and " at 0x" not in shown


def _own_package(ep, fn: Verifier) -> bool:
    """Whether ``fn`` comes from the package that entry point ``ep`` names."""
    home = str(getattr(fn, "__module__", "") or "").split(".")[0]
    return bool(home) and home == ep.value.split(":")[0].split(".")[0] and home != "passband"


def _entry_points() -> dict:
    """The installed verifier entry points by name (nothing is loaded)."""
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def get(name: str) -> Verifier:
    """The verifier registered as ``name``; an unknown name raises and lists the known ones."""
    if name not in _REGISTRY:
        _load_builtins()
    if name not in _REGISTRY:
        _load_plugins()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = names()
        if name in _BROKEN:
            raise UnknownNameError(
                f"verifier plugin {name!r} is installed but {_BROKEN[name]}"
            ) from None
        raise UnknownNameError(
            f"unknown verifier {name!r}.{did_you_mean(name, known)} Known verifiers: "
            f"{', '.join(known)}"
        ) from None


def names() -> list[str]:
    """All registered names, built-ins and plugins, sorted."""
    _load_builtins()
    _load_plugins()
    return sorted(_REGISTRY)


def _describe(fn: Verifier) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _loads_as(ep, fn: Verifier) -> bool:
    """Whether entry point ``ep`` is ``fn`` itself (a plugin that registered itself on import,
    named through a re-export); a plugin that cannot load is not."""
    try:
        return ep.load() is fn
    except Exception:  # noqa: BLE001 - a broken plugin is not the registered function
        return False


def _load_builtins() -> None:
    # Importing the package registers the built-in verifiers (math, json_schema, code, ...).
    import passband.verifiers  # noqa: F401


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _REGISTRY:
            taken = _REGISTRY[ep.name]
            if not _loads_as(ep, taken):
                import warnings

                warnings.warn(
                    f"passband: verifier plugin {ep.name!r} ({ep.value}) is not loaded: the "
                    f"name is taken by {_describe(taken)}; give its entry point another name",
                    stacklevel=2,
                )
            continue
        try:
            fn = ep.load()
        except Exception as exc:  # a broken plugin must not take the registry down
            import warnings

            _BROKEN[ep.name] = f"could not be loaded ({ep.value}): {type(exc).__name__}: {exc}"
            warnings.warn(
                f"passband: could not load verifier plugin {ep.name!r} ({ep.value}): {exc}"
            )
            continue
        register(ep.name)(fn)
