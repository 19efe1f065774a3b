"""Pre-scoring results as training priors: which rows carry a difficulty, and how much it counts.

``passband score`` writes ``passes`` / ``trials`` / ``pass_rate`` plus the settings it used
(``score_model``, ``score_temperature``, ``score_max_tokens``, ...); public datasets may carry a
``pass_rate`` or ``*_solve_rate`` columns instead. ``training_priors`` reads all of those into
``Curriculum(priors=...)`` counts and scales down the rows scored under settings that differ from
the training run's (``mismatch_weight``): counts made by another model or at another temperature
say less about this policy. The result says how many rows got a prior and why some count less,
so the trainer can print it.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from passband.curriculum.prescore_config import SOLVE_RATE_SUFFIX, number_or_none, prompt_digest
from passband.errors import DataError, first_few

__all__ = ["TrainingPriors", "training_priors", "row_prior", "prior_counts", "require_mapping"]

_COMPARED = (
    "model",
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "max_tokens",
    "success_threshold",
    "verifier",
)


@dataclass
class TrainingPriors:
    priors: dict = field(default_factory=dict)
    """prompt position -> (passes, trials), already scaled by the settings weight."""
    rows: int = 0
    mismatched: int = 0
    """Rows scored with other settings (scaled by ``mismatch_weight``)."""
    differences: dict = field(default_factory=dict)
    """setting -> (scored value, training value), one example per setting."""
    sources: dict = field(default_factory=dict)
    """Where the priors came from: ``passes/trials``, ``pass_rate``, ``*_solve_rate``: rows."""
    unrecorded: int = 0
    older: int = 0
    """Rows scored before the prompt, ``top_k`` and ``stop`` were recorded (stop 44): those three
    are not compared for them; the summary says so."""
    """Rows with a prior but no sampling settings recorded (model, temperature, max tokens):
    nothing to compare them with, so none is scaled; the summary says so."""
    prior_trials: float = 8
    """Trials a bare rate (``pass_rate``, ``*_solve_rate``) stands for."""

    def summary(self, prior_weight: float, mismatch_weight: float) -> str:
        if not self.priors:
            return f"curriculum: no pre-scores in the data: all {self.rows} prompts start unseen"
        src = ", ".join(f"{k}: {v}" for k, v in sorted(self.sources.items()))
        if prior_weight == 0:
            return (
                f"curriculum: {len(self.priors)} of {self.rows} prompts carry pre-scores ({src}), "
                "ignored: prior_weight = 0"
            )
        rates = sum(v for k, v in self.sources.items() if k != "passes/trials")
        src += f"; a rate counts as {self.prior_trials:g} trials" if rates else ""
        line = (
            f"curriculum: priors for {len(self.priors)} of {self.rows} prompts ({src}); "
            f"counts weighted x{prior_weight:g}"
        )
        if self.unrecorded:
            line += (
                f"; {self.unrecorded} record no sampling settings (score_model, "
                "score_temperature, score_max_tokens), so they count as scored by this run"
            )
        if self.older:
            line += (
                f"; {self.older} predate the record of the prompt, top_k and stop (score_prompt_"
                "sha256, score_top_k, score_stop), which are not compared for them"
            )
        if self.mismatched:
            diff = ", ".join(_said(k, a, b) for k, (a, b) in self.differences.items())
            line += (
                f", x{prior_weight * mismatch_weight:g} for {self.mismatched} scored with "
                f"other settings ({diff})"
            )
        return line


def row_prior(
    row: Mapping[str, Any], prior_trials: float = 8
) -> tuple[tuple[float, float], str] | None:
    """``((passes, trials), source)`` of one row, or None when it carries no difficulty (its
    difficulty cells are absent or empty, or it reads 0 passes in 0 trials: ``passband score``
    writes that for a row none of whose answers got a verdict). A cell that holds something
    else than a usable count or rate raises ``ValueError`` naming the column and the value:
    read as "unscored", it would silently drop the score. A row stopped early by adaptive scoring
    (unanimous, fewer than ``score_k`` answers sampled: ``trials + unchecked``) counts as
    ``score_k`` trials: the stop asserted its class as surely as the full k would have. A row all
    of whose k answers were sampled, some of them unchecked (an error, a timeout), keeps the
    ``trials`` that were checked."""
    if not _carries_difficulty(row):
        return None  # the common case of unscored data, checked without parsing anything
    passes, trials = _number(row, "passes"), _number(row, "trials")
    if passes == 0 and trials == 0:
        return None  # ``passband score`` got no verdict (every answer errored or timed out)
    if (passes is None) != (trials is None) and (passes is not None or not _has_rate(row)):
        have, lack = ("passes", "trials") if passes is not None else ("trials", "passes")
        raise ValueError(
            f"{have!r} = {row.get(have)!r} but {lack!r} is missing or empty: a count needs "
            "both, with 0 <= passes <= trials and trials > 0"
        )
    if passes is not None:
        if not trials or trials < 0 or not 0 <= passes <= trials:
            raise ValueError(
                f"'passes' = {row.get('passes')!r} with 'trials' = {row.get('trials')!r}: "
                "expected counts with 0 <= passes <= trials and trials > 0"
            )
        k = _number(row, "score_k") or trials
        sampled = trials + (_number(row, "unchecked") or 0)  # answers that could not be checked
        if passes in (0, trials) and k > sampled:  # stopped early, not short of verdicts
            passes, trials = passes / trials * k, k
        return (passes, trials), "passes/trials"
    rate = _rate(row, "pass_rate")
    if rate is not None:
        return (rate * prior_trials, prior_trials), "pass_rate"
    rates = [
        x for c in sorted(row) if c.endswith(SOLVE_RATE_SUFFIX) and (x := _rate(row, c)) is not None
    ]
    if rates:
        return (sum(rates) / len(rates) * prior_trials, prior_trials), "*" + SOLVE_RATE_SUFFIX
    return None


def _number(row: Mapping[str, Any], column: str) -> float | None:
    """The cell as a finite number; None when it is absent or empty (None, "", NaN); anything
    else raises ``ValueError``."""
    value = row.get(column)
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    x = number_or_none(value)
    if x is None or not math.isfinite(x):
        raise ValueError(f"column {column!r} holds {value!r}; expected a number")
    return x


def _rate(row: Mapping[str, Any], column: str) -> float | None:
    x = _number(row, column)
    if x is not None and not 0 <= x <= 1:
        raise ValueError(f"column {column!r} holds {row[column]!r}; expected a rate in [0, 1]")
    return x


def _carries_difficulty(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` has a column a prior is read from (its values are checked later)."""
    return "passes" in row or "trials" in row or _has_rate(row)


def _has_rate(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` has a ``pass_rate`` or ``*_solve_rate`` column (a ``trials`` count beside
    one is the rate's sample size, not half of a count)."""
    return "pass_rate" in row or any(
        isinstance(c, str) and c.endswith(SOLVE_RATE_SUFFIX) for c in row
    )


def training_priors(
    rows: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any] | None = None,
    *,
    mismatch_weight: float = 0.5,
    prior_trials: float = 8,
    positions: Sequence[int] | None = None,
    asked: Callable[[Mapping[str, Any]], Any] | None = None,
) -> TrainingPriors:
    """Priors for the trainer's prompt positions from the rows' difficulty columns. ``settings``
    are the training run's ``model`` / ``temperature`` / ``top_p`` / ``top_k`` / ``stop`` /
    ``max_tokens`` / ``success_threshold`` / ``verifier``; ``positions``: each row's position in
    the user's dataset, for the messages, when rows skipped as unusable shifted them; a row whose
    recorded
    ``score_<setting>`` differs from one of them has its counts scaled by ``mismatch_weight``.
    ``asked``: what training asks of a row (``prompt_of``); a row whose ``score_prompt_sha256``
    says it was scored on another prompt is scaled so too."""
    out = TrainingPriors(rows=len(rows), prior_trials=prior_trials)
    settings = dict(settings or {})
    carries: dict[tuple, bool] = {}  # by the row's columns: rows mostly share them
    bad: list[str] = []
    for i, row in enumerate(rows):
        columns = tuple(row)
        if columns not in carries:
            carries[columns] = _carries_difficulty(row)
        if not carries[columns]:
            continue
        try:
            found = row_prior(row, prior_trials)
        except ValueError as exc:
            bad.append(f"row {positions[i] if positions is not None else i}: {exc}")
            continue
        if found is None:
            continue
        (passes, trials), source = found
        out.sources[source] = out.sources.get(source, 0) + 1
        diff = _differences(row, settings, asked)
        recorded = [row.get(f"score_{name}") for name in ("model", "temperature", "max_tokens")]
        out.unrecorded += all(_unrecorded(v) for v in recorded)
        out.older += not all(_unrecorded(v) for v in recorded) and _unrecorded(
            row.get("score_prompt_sha256")
        )  # scored before the prompt, top_k and stop were recorded
        if diff:
            out.mismatched += 1
            for k, pair in diff.items():
                out.differences.setdefault(k, pair)
            passes, trials = passes * mismatch_weight, trials * mismatch_weight
        out.priors[i] = (passes, trials)
    if bad:
        kept = "" if positions is None else " kept"
        raise DataError(
            f"{len(bad)} of {len(rows)}{kept} training rows have an unusable difficulty column: "
            f"{first_few(bad)}. Fix the cells, or empty them to train those rows unscored"
        )
    return out


def _differences(row: Mapping[str, Any], settings: Mapping[str, Any], asked=None) -> dict:
    diff = {}
    scored_prompt = row.get("score_prompt_sha256")
    if asked is not None and isinstance(scored_prompt, str) and scored_prompt:
        if scored_prompt != prompt_digest(asked(row)):  # the template (or column) scored with
            diff["prompt"] = (row.get("score_prompt_template") or None, None)
    for name in _COMPARED:
        scored, used = row.get(f"score_{name}"), settings.get(name)
        if _unrecorded(scored) or used is None:  # an empty cell: pandas reads NaN
            continue
        if name == "stop":  # a list; read back from a CSV cell, its JSON text
            scored, used = _stops(scored), _stops(used)
            same = sorted(set(scored)) == sorted(set(used))  # their order changes nothing
        elif name == "model":
            same = _same_model(str(scored), str(used))
        elif name == "verifier":
            same = str(scored) == str(used)
        else:
            a, b = number_or_none(scored), number_or_none(used)
            same = a is not None and b is not None and math.isclose(a, b, rel_tol=1e-6)
        if not same:
            diff[name] = (scored, used)
    return diff


def _said(name: str, scored: Any, used: Any) -> str:
    """One difference for the start-up line: ``temperature 1.0 vs 0.7``; for the prompt, how it
    was asked at scoring (only a hash of it is recorded, and the template if one built it)."""
    if name != "prompt":
        return f"{name} {scored!r} vs {used!r}"
    if scored:
        return f"prompt (scored as the template {scored!r} builds it; training asks another)"
    return "prompt (scored on another than training asks)"


def _unrecorded(value: Any) -> bool:
    """A setting a row does not record: None, an empty cell, or NaN (pandas' empty cell)."""
    if isinstance(value, (str, float)):
        return value == "" or (isinstance(value, float) and math.isnan(value))
    return value is None


def _stops(value: Any) -> list[str]:
    """Stop strings as a list, from a list (JSONL, Parquet) or the JSON text a CSV cell holds."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [value]
        if not isinstance(value, list):
            return [str(value)]
    return [str(x) for x in value]


def _same_model(a: str, b: str) -> bool:
    if a == b:
        return True
    if os.path.exists(a) and os.path.exists(b):
        return os.path.realpath(a) == os.path.realpath(b)
    return a.rstrip("/").rsplit("/", 1)[-1] == b.rstrip("/").rsplit("/", 1)[-1]


def prior_counts(prompt_id: Hashable, counts: Any, hint: int) -> tuple[float, float]:
    """``(passes, trials)`` of one prior: a pair, or a bare pass rate read as one group of
    ``hint`` answers; a ``DataError`` (a ``ValueError``) naming the prompt when it is neither,
    not finite, has trials below 0 (or 0 with passes), or passes outside ``[0, trials]``."""
    given = counts
    if isinstance(counts, np.ndarray) and counts.ndim == 0:  # np.array(0.4): the number in it
        counts = counts.item()
    parts = counts if isinstance(counts, (tuple, list, np.ndarray)) else (counts,)
    rate = None
    if any(isinstance(x, (str, bytes, bool, np.bool_)) for x in parts):  # "38" read as 3 of 8
        raise DataError(
            f"prior for {prompt_id!r} must be (passes, trials) or a pass rate, got {given!r} "
            "(numbers, not text or a bool)"
        )
    try:
        if type(counts) is not tuple and isinstance(counts, (int, float, np.number)):
            rate = float(counts)
            counts = (rate * hint, hint)  # a bare pass rate, read as one group
        p, t = (float(x) for x in counts)
    except (TypeError, ValueError):
        raise DataError(
            f"prior for {prompt_id!r} must be (passes, trials) or a pass rate, got {given!r}"
        ) from None
    if not (math.isfinite(p) and math.isfinite(t)):
        raise DataError(f"prior for {prompt_id!r}: {given!r} is not finite")
    if rate is not None and not 0 <= rate <= 1:  # the rate given, not a count made of it
        raise DataError(
            f"prior for {prompt_id!r}: the pass rate {given!r} must be in [0, 1] "
            "(or give (passes, trials))"
        )
    if t < 0 or (t == 0 and p != 0):
        raise DataError(
            f"prior for {prompt_id!r}: {given!r} needs trials > 0 (or (0, 0) for unscored), "
            f"got trials={t:g}"
        )
    if t > 0 and not 0 <= p <= t:
        raise DataError(f"prior for {prompt_id!r}: passes={p} not in [0, trials={t}]")
    return p, t


def require_mapping(priors: Any) -> None:
    """A ``TypeError`` unless ``priors`` maps prompt ids to counts (a list of pairs was read as
    its positions and failed with an ``AttributeError``)."""
    if not isinstance(priors, Mapping):
        raise TypeError(
            "priors must map prompt ids to (passes, trials) or a pass rate, got a "
            f"{type(priors).__name__}"
        )


def warn_unmatched(unmatched: list, given: int, ids: Sequence) -> None:
    """Warn that ``unmatched`` of the ``given`` prior keys name no prompt id, with an example of
    each (keys read from JSON are strings, ids often ints: then nothing matches)."""
    if unmatched:
        warnings.warn(
            f"{len(unmatched)} of the {given} prior keys match no prompt id and are unused "
            f"(e.g. {unmatched[0]!r}; the ids are like {ids[0]!r})",
            stacklevel=4,
        )
