"""One way to turn a verifier spec into something ``verify_batch`` takes, for every entry point.

``--verifier`` (``passband verify``, ``passband score``) and ``[reward] verifier`` in a run's TOML
accept the same two forms: a registered name (``math``; ``passband verify --list``), kept as the
name so it pickles into worker processes, or ``module:attribute`` naming a verifier function or a
``Reward`` (``my_verifiers:exact_int``), imported with the working directory on ``sys.path`` as
``python -m`` would. A module that fails to import, for any reason, is reported with the exception
and the line that raised it instead of a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Any

from passband.errors import UsageError

__all__ = ["resolve_verifier"]


def resolve_verifier(spec: str, *, where: str = "--verifier") -> Any:
    """A registered name (checked, returned as is) or the object ``module:attribute`` names."""
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError(
            f"{where} must be a registered verifier name or module:attribute, got {spec!r}"
        )
    if ":" not in spec:
        from passband.verifiers import get

        try:
            get(spec)
        except KeyError as exc:
            raise UsageError(
                f"{where} {spec!r} is not registered: {exc.args[0]} (or give module:attribute)"
            ) from None
        return spec
    module, _, attr = spec.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:  # find ./my_verifiers.py
        sys.path.insert(0, os.getcwd())
    obj = _import(module, spec, where)
    try:
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise UsageError(f"{where} {spec!r}: module {module!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise UsageError(f"{where} {spec!r} is a {type(obj).__name__}, not a callable verifier")
    return obj


def _import(module: str, spec: str, where: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise UsageError(
                f"{where} {spec!r}: cannot import it: no module named {module!r} (looked in the "
                "working directory and sys.path)"
            ) from None
        raise UsageError(f"{where} {spec!r}: cannot import it: {exc}") from None
    except Exception as exc:  # the user's module raised while importing: say where, briefly
        frames = traceback.extract_tb(exc.__traceback__)
        at = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        raise UsageError(
            f"{where} {spec!r}: cannot import it: importing {module!r} raised "
            f"{type(exc).__name__}: {exc}{at}"
        ) from None
