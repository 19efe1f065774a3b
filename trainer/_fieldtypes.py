"""Exact type checks for config fields, from the dataclass's real type hints.

TOML has real booleans, integers and arrays, so a value of the wrong type is a mistake, never
something to coerce: ``use_curriculum = "false"`` is a non-empty string, which Python reads as
true, so the curriculum would stay on. The checks run before any other validation, so
``band = 0.5`` says "band = 0.5 must be a list of 2 numbers" instead of "'float' object is
not iterable".
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

__all__ = ["type_problem", "check_types"]


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [_describe(a) for a in args if a is not type(None)]
        return " or ".join(parts) + (" or omitted (None)" if type(None) in args else "")
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {_describe(args[0]).removeprefix('a ').removeprefix('an ')}s"
        return f"a list of {len(args)} {'numbers' if args[0] is float else 'values'}"
    if origin is list:
        return f"a list of {_plural(args[0]) if args else 'values'}"
    if origin is dict or hint is dict:
        return f"a table of {_plural(args[1]) if args else 'values'}"
    return {
        bool: "true or false (a TOML boolean, not a string)",
        int: "an integer",
        float: "a number",
        str: "a string",
    }.get(hint, getattr(hint, "__name__", str(hint)))


def _plural(hint: Any) -> str:
    kind = typing.get_origin(hint) or hint
    return {
        dict: "tables",
        str: "strings",
        float: "numbers",
        int: "integers",
        bool: "booleans",
        list: "lists",
    }.get(kind, "values")


def _fits(value: Any, hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if origin is tuple:
        if isinstance(value, str) and args[-1] is Ellipsis:
            return _fits(value, args[0])  # a bare string is a list of one (``stop = "\n"``)
        if not isinstance(value, (list, tuple)):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(v, args[0]) for v in value)
        return len(value) == len(args) and all(_fits(v, a) for v, a in zip(value, args))
    if origin is list:
        return (
            isinstance(value, list) and all(_fits(v, args[0]) for v in value)
            if args
            else isinstance(value, list)
        )
    if origin is dict:
        return (
            isinstance(value, dict)
            and all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
            if args
            else isinstance(value, dict)
        )
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True  # a hint this checker does not know: the class's own validation decides


def type_problem(cls: type, name: str, value: Any) -> str | None:
    """``None`` when ``value`` fits field ``name`` of dataclass ``cls``, else what it must be."""
    hint = typing.get_type_hints(cls)[name]
    return None if _fits(value, hint) else f"must be {_describe(hint)}"


def check_types(obj: Any, label: str) -> None:
    """``ValueError`` naming the first field of dataclass ``obj`` whose value has the wrong type."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        problem = type_problem(type(obj), f.name, value)
        if problem:
            from passband.errors import ConfigError

            raise ConfigError(f"{label}.{f.name} = {value!r} {problem}")
