"""Turn whatever a user's reward callable returned into a ``Verdict``, and exceptions into ``error``.

Plain callables are welcome everywhere a verifier is (``Reward`` terms, ``verify_batch``, the
adapters), so one rule decides what their return values mean:
``Verdict`` as is; ``True``/``False`` -> ok/wrong; a number -> that score, ``ok`` at or above
``SUCCESS_THRESHOLD`` (0.5: the curriculum's default ``success_threshold``, so a shaped 0.1 is not
a pass here while it is a fail in training); ``None`` -> ``error`` (the TRL convention for "could
not score").
"""

from __future__ import annotations

import math
import numbers

from passband.verifiers.verdict import Verdict

_DETAIL_LIMIT = 300
SUCCESS_THRESHOLD = 0.5  # a plain number passes at or above it (curriculum success_threshold)


def as_verdict(value: object, who: str = "verifier") -> Verdict:
    if isinstance(value, Verdict):
        return value
    value = plain_value(value)
    if isinstance(value, bool):
        return (
            Verdict.ok(f"{who} returned True") if value else Verdict.wrong(f"{who} returned False")
        )
    if isinstance(value, numbers.Real):
        score = float(value)
        if not math.isfinite(score):
            return Verdict.error(f"{who} returned a non-finite score {score}")
        status = "ok" if score >= SUCCESS_THRESHOLD else "wrong"
        return Verdict(
            score, status, f"{who} returned {score:g} (success: >= {SUCCESS_THRESHOLD:g})"
        )
    if value is None:
        return Verdict.error(f"{who} returned None")
    if isinstance(value, (list, tuple)):
        return Verdict.error(
            f"{who} returned a {type(value).__name__} for one completion, expected a Verdict, "
            "bool or number; a reward written for a batch, as TRL's reward_funcs are, takes "
            "`completions` (then it is called per completion) or is wrapped with "
            "passband.verifiers.from_trl_reward"
        )
    return Verdict.error(
        f"{who} returned {type(value).__name__}, expected a Verdict, bool or number"
    )


def plain_value(value: object) -> object:
    """A NumPy or torch bool, integer or float scalar (``np.bool_``, ``np.float32``, a 0-d array or
    tensor) as the Python bool or number it holds; anything else (a masked value, a date, a
    complex number, any other object) as it is."""
    module = type(value).__module__.split(".")[0]
    if module not in ("numpy", "torch") or getattr(value, "shape", None) != ():
        return value
    if (
        hasattr(value, "mask")
        or getattr(getattr(value, "dtype", None), "kind", "biuf") not in "biuf"
    ):
        return value  # np.ma values; dates, text, objects (NumPy's dtype kinds)
    item = value.item()
    return item if isinstance(item, (bool, int, float)) else value


def call_safely(fn, completion: str, reference: dict, who: str = "verifier") -> Verdict:
    """``fn(completion, **reference)`` as a Verdict; an exception (``SystemExit`` too: a
    verifier's ``sys.exit`` must not end the caller) becomes ``error`` with its text."""
    try:
        return as_verdict(fn(completion, **reference), who)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a verifier must never raise on model output
        return Verdict.error(clip(f"{who} raised {type(exc).__name__}: {exc}"))


def clip(text: str, limit: int = _DETAIL_LIMIT) -> str:
    """Keep details short: a 100,000-character completion must not end up in every log line."""
    return (
        text
        if len(text) <= limit
        else text[: limit - 15] + f"... (+{len(text) - limit + 15} chars)"
    )


def describe(fn: object) -> str:
    """A short readable name for a verifier: a function's name, else the object's repr."""
    return getattr(fn, "__name__", None) or repr(fn)
