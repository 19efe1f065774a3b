"""The sampler seam of ``GRPOTrainer``: the ``Sampler`` interface, and the checks made on a sampler
a user gives and on what it draws (row positions, a first draw that is not empty), so a wrong one
fails at once with its name rather than mid-run.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from passband.curriculum._priors import prior_counts
from passband.errors import ConfigError, DataError

__all__ = [
    "Sampler",
    "check_ids",
    "check_priors",
    "check_sampler",
    "check_sampler_rows",
    "draw",
    "observe_group",
    "round_group_sizes",
    "sampler_estimates",
    "sampler_metrics",
    "sampler_state",
]

_METHODS = ("sample", "observe", "state_dict", "load_state_dict", "metrics")


class Sampler:
    """The interface the GRPO loop calls; subclass it, or pass any object with these methods
    (``sample(n)`` alone will do: a refill then leaves out the step's prompts itself)."""

    def sample(self, n: int, exclude: Iterable[Any] = ()) -> list:
        raise NotImplementedError

    def observe(self, prompt_id: Any, successes: int, trials: int) -> None:
        raise NotImplementedError

    def state_dict(self) -> dict:
        raise NotImplementedError

    def load_state_dict(self, state: dict) -> None:
        raise NotImplementedError

    def metrics(self) -> dict:
        return {}

    def estimates(self) -> dict:
        return {}

    def unscored(self, prompt_id: Any) -> None:
        """Optional: the prompt's group had no checkable answer, so ``observe`` was not called."""

    def group_sizes(self, prompt_ids: Sequence[Any], budget: int) -> list[int]:
        """Answers per prompt for ``budget`` rollouts; default: an equal split (the fixed G)."""
        n = len(prompt_ids)
        return [budget // n + (1 if k < budget % n else 0) for k in range(n)] if n else []


def round_group_sizes(sampler: Any, prompt_ids: Sequence[Any], group_size: int) -> list[int]:
    """Answers per prompt for one round: ``group_size`` x prompts split by the sampler's
    optional ``group_sizes(ids, budget)`` (the curriculum's adaptive G), else ``group_size``
    each. A split that does not add up to the budget, or gives a prompt fewer than 2 answers
    (no variance to learn from), is refused rather than trained on."""
    split = getattr(sampler, "group_sizes", None)
    n, budget = len(prompt_ids), group_size * len(prompt_ids)
    if split is None:
        return [group_size] * n
    sizes = [int(k) for k in split(list(prompt_ids), budget)]
    if len(sizes) != n or sum(sizes) != budget or any(k < 2 for k in sizes):
        raise ValueError(
            f"{type(sampler).__name__}.group_sizes gave {sizes} for {n} prompts and "
            f"{budget} rollouts: it must give one size >= 2 per prompt, summing to the budget"
        )
    return sizes


def observe_group(sampler: Any, prompt_id: Any, passes: int, trials: int) -> None:
    """Tell ``sampler`` how a group went: ``observe`` with its checkable answers, or, when none
    was checkable, its optional ``unscored`` (the curriculum parks the prompt rather than draw
    an unscorable one again and again)."""
    if trials:
        sampler.observe(prompt_id, passes, trials)  # passed implies checkable
    elif callable(unscored := getattr(sampler, "unscored", None)):
        unscored(prompt_id)


def check_sampler(sampler: Any, priors: Any = None, group_size: int = 8) -> Any:
    """``sampler`` itself when it has the interface (None passes), else a ``ConfigError`` naming
    what is missing; also one when ``priors`` are given beside it, or one does not read as a
    prior (``check_priors``)."""
    if sampler is None:
        check_priors(priors, group_size)
        return None
    if priors is not None:
        raise ConfigError(
            "GRPOTrainer: give priors= or sampler=, not both: a sampler you build keeps its "
            "own priors (Curriculum(ids, priors=...)), so these would be ignored"
        )
    missing = [m for m in _METHODS if not callable(getattr(sampler, m, None))]
    if missing:
        raise ConfigError(
            f"sampler={type(sampler).__name__} lacks {', '.join(missing)}; a sampler "
            f"needs {', '.join(_METHODS)} (see passband.trainer.sampling.Sampler)"
        )
    for check in (sampler_state, sampler_metrics):  # saved as JSON: say so before training
        try:
            check(sampler)
        except ConfigError:
            raise
        except Exception:  # noqa: BLE001 - e.g. rates over draws not made yet: checked at use
            pass
    return sampler


def sampler_state(sampler: Any) -> dict:
    """``sampler.state_dict()``, or a ``ConfigError`` naming the first value JSON cannot hold
    (the checkpoint saves it as JSON)."""
    return _as_json(sampler.state_dict(), f"{type(sampler).__name__}.state_dict()")


def sampler_metrics(sampler: Any) -> dict:
    """``sampler.metrics()``, checked as ``sampler_state`` checks the state (metrics.jsonl)."""
    return _as_json(sampler.metrics(), f"{type(sampler).__name__}.metrics()")


def _as_json(value: Any, where: str) -> Any:
    try:
        json.dumps(value, allow_nan=True)
        return value
    except (TypeError, ValueError):
        path, bad = _first_non_json(value, where)
        raise ConfigError(
            f"{path} holds {bad!r:.80} (type {type(bad).__name__}), which JSON cannot hold; a sampler's "
            "state and metrics are saved as JSON (lists, dicts with str keys, numbers, text)"
        ) from None


def _first_non_json(value: Any, path: str) -> tuple[str, Any]:
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, (str, int, float, bool)) and k is not None:
                return f"{path} key {k!r}", k
            try:
                json.dumps(v)
            except (TypeError, ValueError):
                return _first_non_json(v, f"{path}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            try:
                json.dumps(v)
            except (TypeError, ValueError):
                return _first_non_json(v, f"{path}[{i}]")
    return path, value


def check_priors(priors: Any, group_size: int) -> None:
    """A ``ConfigError`` naming the first of ``priors`` that the curriculum could not read."""
    if priors is None:
        return
    try:
        for key, value in priors.items():
            prior_counts(key, value, group_size)
    except (AttributeError, DataError) as exc:  # not a mapping, or one value unreadable
        what = exc if isinstance(exc, DataError) else f"is a {type(priors).__name__}, not a dict"
        raise ConfigError(f"GRPOTrainer: priors= {what}") from None


def check_sampler_rows(sampler: Any, kept: Sequence[int] | None) -> Any:
    """``sampler`` when no row positions shifted (``kept`` is None), else a ``ConfigError``: it
    was built on the dataset's positions, and the trainer's rows are the kept ones, so its ids
    would pick other prompts."""
    if kept is not None:
        gone = [i for i, k in enumerate(kept) if i != k][:1]
        raise ConfigError(
            f"sampler= draws row positions, but skip_bad_rows dropped rows of train_dataset (the "
            f"first at position {gone[0]}), so its ids would pick other prompts; fix those "
            "rows, or build the sampler on the rows that remain"
        )
    return sampler


def check_ids(sampler: Any, ids: Sequence[Any], n_rows: int) -> Sequence[Any]:
    """``ids`` (as ``int``) when every one is a row position of the training data, else a ``ConfigError``
    naming the first that is not: the trainer looks rows up by position, so a sampler built on
    other ids (strings, an offset range) must say so before a lookup fails or picks a wrong row."""
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n_rows:
            raise ConfigError(
                f"sampler {type(sampler).__name__} drew prompt id {i!r}; GRPOTrainer's sampler "
                f"must draw row positions 0..{n_rows - 1} of train_dataset (build it as "
                "Curriculum(range(len(train_dataset)), ...))"
            )
    return [int(i) for i in ids]  # numpy ints as Python ints: they are logged as JSON


def draw(sampler: Any, n: int, used: Sequence[Any]) -> list:
    """A step's draw of ``n`` prompts, avoiding ``used`` (a refill); a ``ConfigError`` naming the
    sampler when a step's first draw is empty, which would end the run with nothing trained.
    A sampler whose ``sample`` takes no ``exclude`` (the minimal interface, ``sample(n)``) is
    asked for ``n`` and what the step already has is left out of its draw."""
    if not used:
        ids = list(sampler.sample(n))
    elif _takes_exclude(sampler.sample):
        ids = list(sampler.sample(n, exclude=used))
    else:
        have = set(used)
        ids = [i for i in sampler.sample(n) if i not in have]
    if not used and n > 0 and not ids:
        raise ConfigError(
            f"sampler {type(sampler).__name__}.sample({n}) drew no prompt ids; every step needs "
            "at least one (a sampler that runs out of prompts should start them over)"
        )
    return ids


def _takes_exclude(sample) -> bool:
    try:
        params = inspect.signature(sample).parameters
    except (TypeError, ValueError):  # no signature to read: assume the full interface
        return True
    return "exclude" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def sampler_estimates(sampler: Any) -> dict:
    """Pass-rate estimates for ``curriculum.json``; {} for a sampler that keeps none."""
    fn = getattr(sampler, "estimates", None)
    return fn() if callable(fn) else {}
