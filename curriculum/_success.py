"""What counts as a success for pass rates: one rule, shared by ``passband score`` and training.

- A ``Verdict`` (from a registered verifier, a ``Reward`` or a callable that returns one) passes
  when ``verdict.passed`` (status ``ok``).
- A plain number passes when it is at or above ``success_threshold`` (default 0.5). Without this, a
  shaped reward of 0.1 / 0.7 would count every answer as a pass and every prompt as solved.
- ``True`` / ``False`` pass / fail; ``None`` and exceptions are ``error`` (not trials).

``with_success_rule(reward, threshold)`` wraps a plain callable so that the ``Verdict`` it yields
already carries the rule in its status; the score (what the advantages use) is unchanged.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["with_success_rule", "describe_success_rule"]


class _Thresholded:
    """A plain reward callable whose numbers pass at ``score >= threshold`` (picklable)."""

    def __init__(self, fn, threshold: float) -> None:
        self.fn, self.threshold = fn, float(threshold)
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)  # journal keys stay put

    def __call__(self, completion: str, **reference: Any):
        from passband.verifiers import Verdict

        value = self.fn(completion, **reference)
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
            score = float(value)
            status = "ok" if score >= self.threshold else "wrong"
            return Verdict(
                score,
                status,
                f"{self.__name__} returned {score:g} (success: >= {self.threshold:g})",
            )
        return value  # a Verdict, a bool, None: the verifiers' own rule applies

    def __repr__(self) -> str:
        return f"with_success_rule({self.fn!r}, threshold={self.threshold:g})"


def _is_plain(reward) -> bool:
    if isinstance(reward, (str, _Thresholded)):
        return False
    import passband.verifiers as v

    return not isinstance(reward, v.Reward)


def with_success_rule(reward, threshold: float):
    """``reward`` itself for verifier names and ``Reward`` objects (their verdicts decide), else
    a wrapper applying ``score >= threshold`` to the numbers it returns."""
    return _Thresholded(reward, threshold) if _is_plain(reward) else reward


def describe_success_rule(reward, threshold: float) -> str:
    """One line for the logs: which rule decides a success for this reward."""
    if isinstance(reward, str):
        return f"success = verdict.passed (verifier {reward!r})"
    if not _is_plain(reward):
        return "success = verdict.passed (composed Reward)"
    return (
        f"success = verdict.passed, or score >= success_threshold={threshold:g} for the plain "
        f"numbers {getattr(reward, '__name__', type(reward).__name__)} returns"
    )
