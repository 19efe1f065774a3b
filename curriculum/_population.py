"""What the curriculum knows about the dataset as a whole: the first look at each prompt.

Two decayed statistics of first looks (groups observed on a prompt never seen before), kept in
the sampler's ``_ema`` dict so that they are saved with its state:

- the share that had signal (a mixed group), from a Beta(1, 1) start: the chance that an unseen
  prompt's group disagrees, which fresh prompts are scored with;
- the first two moments of the pass rate, which fit an empirical-Bayes base prior. Real datasets
  are bimodal for the model being trained (a large share solved, a large share out of reach), so
  a flat Beta(1, 1) reads one lucky success in 8 on a hopeless prompt as a pass rate of 0.2, in
  the band. The fitted prior has the population's mean and its spread: on such data it is
  U-shaped, and one success in 8 reads as about 0.14, below the band, until a second look agrees.

The fitted prior is never more confident than ``CurriculumConfig.base_prior`` (its pseudo-counts
never sum to more), and it is used only after ``MIN_LOOKS`` first looks.
"""

from __future__ import annotations

import numpy as np

MIN_LOOKS = 32
_MIN_TOTAL = 0.2  # pseudo-counts: a prior this diffuse still keeps the posterior mean defined
_MEAN_CLIP = 0.02


def _decay(ema: dict, clock: float, half_life: float) -> float:
    return 0.5 ** ((clock - ema.get("probe_stamp", 0.0)) / half_life)


def fold_first_look(ema: dict, successes: int, trials: int, clock: float, half_life: float):
    """Fold a first look (``successes`` of ``trials``) into the population's statistics."""
    factor = _decay(ema, clock, half_life)
    rate = successes / trials
    # s(s-1) / (t(t-1)) is an unbiased estimate of p^2 under a binomial; a group of 1 has none.
    square = successes * (successes - 1) / (trials * (trials - 1)) if trials > 1 else rate * rate
    for key, value in (
        ("probe_signal", float(0 < successes < trials)),
        ("probe_n", 1.0),
        ("pop_p", rate),
        ("pop_p2", square),
    ):
        ema[key] = ema.get(key, 0.0) * factor + value
    ema["probe_stamp"] = float(clock)
    ema["looks"] = ema.get("looks", 0.0) + 1.0  # not decayed: how much the fit has seen


def fold_priors(ema: dict, passes, trials) -> None:
    """Fold pre-scoring counts (arrays) in as first looks, so that a scored dataset fits the
    population prior before any group is observed."""
    passes, trials = np.asarray(passes, dtype=float), np.asarray(trials, dtype=float)
    rate = passes / trials
    many = trials > 1
    square = np.where(
        many, passes * (passes - 1) / np.where(many, trials * (trials - 1), 1.0), rate * rate
    )
    ema["pop_p"] = ema.get("pop_p", 0.0) + float(rate.sum())
    ema["pop_p2"] = ema.get("pop_p2", 0.0) + float(np.clip(square, 0.0, 1.0).sum())
    ema["probe_n"] = ema.get("probe_n", 0.0) + float(len(rate))
    ema["probe_signal"] = ema.get("probe_signal", 0.0) + float(
        ((passes > 0) & (passes < trials)).sum()
    )
    ema["looks"] = ema.get("looks", 0.0) + float(len(rate))


def fresh_signal(ema: dict, clock: float, half_life: float) -> float:
    """P(signal) of an unseen prompt: the decayed share of first looks with signal."""
    factor = _decay(ema, clock, half_life)
    return (ema.get("probe_signal", 0.0) * factor + 1.0) / (ema.get("probe_n", 0.0) * factor + 2.0)


def base_prior(ema: dict, configured: tuple[float, float]) -> tuple[float, float]:
    """Beta(a0, b0) every prompt's evidence is added to: ``configured`` until ``MIN_LOOKS``
    first looks, then the method-of-moments fit to them, no stronger than ``configured``."""
    if ema.get("looks", 0.0) < MIN_LOOKS or "pop_p" not in ema:
        return configured
    n = ema["probe_n"]
    mean = min(1.0 - _MEAN_CLIP, max(_MEAN_CLIP, ema["pop_p"] / n))
    var = ema["pop_p2"] / n - mean * mean
    ceiling = configured[0] + configured[1]
    total = mean * (1.0 - mean) / var - 1.0 if var > 0 else ceiling
    total = min(ceiling, max(_MIN_TOTAL, total))
    return mean * total, (1.0 - mean) * total
