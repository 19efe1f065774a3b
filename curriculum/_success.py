"""What counts as a success for pass rates: one rule, shared by ``passband score`` and training.

- A ``Verdict`` (from a registered verifier, a ``Reward`` or a callable that returns one) passes
  when ``verdict.passed`` (status ``ok``).
- A plain number passes when it is at or above ``success_threshold`` (default 0.5). Without this, a
  shaped reward of 0.1 / 0.7 would count every answer as a pass and every prompt as solved.
- ``True`` / ``False`` pass / fail; ``None`` and exceptions are ``error`` (not trials).
- A function written for TRL's ``reward_funcs`` (it takes ``completions``) is called once per
  completion through ``passband.verifiers.from_trl_reward``; its one value follows these rules.

A verifier that declares ``returns_verdict = True`` (every built-in does) never yields a plain
number, so the threshold decides nothing for it (``decides_by_verdict``): pre-scores made with one
are not marked as made under "another threshold".

``with_success_rule(reward, threshold)`` wraps a callable, a registered verifier or each term of a
``Reward`` so that the ``Verdict`` it yields already carries the rule in its status; the score
(what the advantages use) is unchanged.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["with_success_rule", "describe_success_rule", "decides_by_verdict", "success_source"]


class _Thresholded:
    """A reward callable whose plain numbers pass at ``score >= threshold`` (picklable); what it
    returns otherwise (a Verdict, a bool, None) keeps the verifiers' own rule."""

    def __init__(self, fn, threshold: float) -> None:
        self.fn, self.threshold = fn, float(threshold)
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)  # journal keys stay put
        if getattr(fn, "inline_safe", False) is True:  # a comparison more keeps it linear
            self.inline_safe = True
        if callable(getattr(fn, "time_limit", None)):  # verify_batch waits out the code's limit
            self.time_limit = fn.time_limit

    def __call__(self, completion: str, **reference: Any):
        from passband.verifiers import Verdict
        from passband.verifiers._coerce import plain_value

        value = plain_value(self.fn(completion, **reference))
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
            score = float(value)
            status = "ok" if score >= self.threshold else "wrong"
            return Verdict(
                score,
                status,
                f"{self.__name__} returned {score:g} (success: >= {self.threshold:g})",
            )
        return value

    def __repr__(self) -> str:
        return f"with_success_rule({self.fn!r}, threshold={self.threshold:g})"


def with_success_rule(reward, threshold: float):
    """``reward`` with the rule applied wherever it yields a plain number: a callable or a
    registered verifier (by name) is wrapped; a ``Reward`` gets each term wrapped, so the primary
    term's status (which decides ``passed``) follows the rule however the total is shaped.
    Verdicts pass through unchanged: a verifier's own ``passed`` decides."""
    import passband.verifiers as v
    from passband.verifiers._from_trl import adapted

    if isinstance(reward, _Thresholded):
        return reward
    if isinstance(reward, v.Reward):
        return reward.with_verifiers(lambda fn: with_success_rule(fn, threshold))
    fn = adapted(v.get(reward) if isinstance(reward, str) else reward)  # TRL's: per completion
    if isinstance(fn, v.Reward):  # as_trl_reward's: its terms follow the rule too
        return with_success_rule(fn, threshold)
    return _Thresholded(fn, threshold)


def describe_success_rule(reward, threshold: float) -> str:
    """One line for the logs: which rule decides a success for this reward."""
    import passband.verifiers as v
    from passband.verifiers._from_trl import is_adapted

    numbers_rule = f"score >= success_threshold={threshold:g} where it returns a plain number"
    if decides_by_verdict(reward):  # it never returns a plain number: the threshold is moot
        numbers_rule = ""
    if isinstance(reward, str):
        return f"success = verdict.passed (verifier {reward!r}){_or(numbers_rule)}"
    if isinstance(reward, v.Reward):
        return (
            f"success = the primary term's verdict.passed (composed Reward, primary "
            f"{reward.primary!r}){_or(numbers_rule)}"
        )
    name = getattr(reward, "__name__", type(reward).__name__)
    if v.is_trl_reward(reward) or is_adapted(reward):
        name += ", a TRL reward function called per completion"
    return f"success = verdict.passed ({name}){_or(numbers_rule)}"


def _or(rule: str) -> str:
    return f", or {rule}" if rule else ""


def decides_by_verdict(reward) -> bool:
    """Whether a success for ``reward`` is always a verdict's ``passed``: a verifier (by name or
    object) that declares ``returns_verdict = True``, or a ``Reward`` whose primary term is one.
    ``success_threshold`` then decides nothing, so a difference in it between pre-scoring and
    training is none."""
    return getattr(_decider(reward), "returns_verdict", False) is True


def success_source(reward) -> str:
    """What decides a success for ``reward``, as pre-scores record it (``score_verifier``) and
    training compares it: a verifier's registered name, a ``Reward``'s primary term's, or a
    callable's qualified name."""
    import passband.verifiers as v

    if isinstance(reward, str):
        return reward
    decider = _decider(reward)
    for name in v.names():  # a registered verifier is known by its name
        try:
            if v.get(name) is decider:
                return name
        except KeyError:
            continue
    return getattr(decider, "__qualname__", None) or type(decider).__qualname__


def _decider(reward):
    """The verifier whose verdict decides a success for ``reward``: the callable under a
    success-rule wrapper, a registered name's verifier (the name itself when none is), a
    ``Reward``'s primary term's, a TRL reward function itself (adapted or not)."""
    import passband.verifiers as v
    from passband.verifiers._from_trl import adapted, is_adapted

    if isinstance(reward, _Thresholded):
        reward = reward.fn
    if isinstance(reward, str):
        try:
            reward = v.get(reward)
        except KeyError:
            return reward
    if isinstance(reward, v.Reward):
        return _decider(reward.primary_verifier)
    reward = adapted(reward)  # a TRL function is known as it is called
    if isinstance(reward, v.Reward):  # as_trl_reward's
        return _decider(reward)
    return getattr(reward, "fn", reward) if is_adapted(reward) else reward
