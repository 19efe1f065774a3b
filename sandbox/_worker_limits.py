"""How long a killable worker may spend on one item, and how many workers run at once.

One rule for both numbers wherever they are taken: ``verify_batch``'s ``timeout`` / ``workers``
and ``call_with_deadline``'s ``timeout`` enforce it on every call, and a config that hands the
values on (``GRPOConfig.verifier_timeout`` / ``verifier_workers``) tests them with the same
``timeout_ok`` / ``workers_ok`` at construction, so a bad value fails before any model loads,
named by the config's own field. It lives on the lowest floor, in plain Python, so that reading
a config costs no verifier import (the verifiers package loads sympy).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "TIMEOUT_ALLOWED",
    "WORKERS_ALLOWED",
    "check_timeout",
    "check_workers",
    "timeout_ok",
    "workers_ok",
]

TIMEOUT_ALLOWED = "a positive number of seconds"
WORKERS_ALLOWED = "a positive integer"


def timeout_ok(value: Any) -> bool:
    """A finite number of seconds > 0 (an infinite one would overflow the workers' clocks)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def workers_ok(value: Any) -> bool:
    """None (the library's default) or an integer >= 1."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)


def check_timeout(value: Any, name: str = "timeout", *, optional: bool = False) -> Any:
    """``value`` when ``timeout_ok`` (or None with ``optional``), else ``ValueError`` naming it."""
    if not (timeout_ok(value) or (optional and value is None)):
        none = "None or " if optional else ""
        raise ValueError(f"{name} must be {none}{TIMEOUT_ALLOWED}, got {value!r}")
    return value


def check_workers(value: Any, name: str = "workers") -> Any:
    """``value`` when ``workers_ok``, else ``ValueError`` naming it."""
    if not workers_ok(value):
        raise ValueError(f"{name} must be {WORKERS_ALLOWED}, got {value!r}")
    return value
