"""What ``passband report`` computes from ``groups.jsonl``: gradient concentration, outlier prompts,
pass-rate movement and visit counts. Plain Python, linear in the number of groups, so the same
numbers come out for a 100-prompt toy and a million-prompt run.

A group's weight is its ``grad_share``: its Σ|advantage|·tokens over the step's total (the trainer
normalises per step, so every optimizer step weighs the same over the run). Only effective groups
(``kept``) carry weight; dropped zero-variance groups carry none and are left out of the shares.

Two outlier rules, both robust to the ordinary spread of a run:

- **gradient**: a group carrying more than ``K`` times the median weight of its step. With binary
  rewards and G answers, pass rate alone moves Σ|advantage| by at most ``b(G)`` between two mixed
  groups (``G / (2 sqrt(G-1))`` when advantages are divided by the group std, the square of that
  when not: 1.5x and 2.3x for G = 8), so ``K = max(4, 2 b(G))`` leaves room for length and
  fires only on a group that something else (reward scale, a runaway length) inflates.
- **reward scale**: a group whose largest |reward| is more than 5 times the 90th percentile over
  the run's groups. A percentile rather than the median, so prompts that are usually failed (reward
  0 or a small penalty) do not make every solved one look like an outlier.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

__all__ = [
    "Visit",
    "Flag",
    "Concentration",
    "RunView",
    "visits_of",
    "top_share",
    "concentration",
    "gradient_threshold",
    "gradient_ratios",
    "scale_ratios",
    "flag_outliers",
    "pass_rate_moves",
    "most_visited",
    "describe",
]

SCALE_FACTOR = 5.0  # reward-scale rule: this many times the 90th percentile
MIN_KEPT = 4  # a step with fewer effective groups has no meaningful median


@dataclass(frozen=True)
class Visit:
    """One rolled-out group of ``groups.jsonl``, cleaned: masked (None) rewards left out."""

    step: int
    prompt: str
    rewards: tuple[float, ...]
    passes: int
    kept: bool
    share: float  # grad_share: share of the step's Σ|advantage|·tokens (0 when dropped)
    scale: float = 0.0  # largest |reward| of the group, set by ``visits_of``

    @property
    def pass_rate(self) -> float | None:
        return self.passes / len(self.rewards) if self.rewards else None

    @property
    def mean_std(self) -> tuple[float, float]:
        """Mean and population std of the group's rewards, in plain floats (``statistics`` is
        exact but about 50x slower, which shows at a million groups)."""
        n = len(self.rewards)
        mean = sum(self.rewards) / n
        return mean, math.sqrt(max(0.0, sum((r - mean) ** 2 for r in self.rewards) / n))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def visits_of(groups: list[dict]) -> list[Visit]:
    """The rows of ``groups.jsonl`` that name a prompt and carry a reward list."""
    out = []
    for i, g in enumerate(groups):
        rewards = g.get("rewards")
        if "prompt_id" not in g or not isinstance(rewards, list):
            continue
        clean = tuple(float(r) for r in rewards if _number(r))
        passes = g.get("passes")
        out.append(
            Visit(
                step=int(g["step"]) if _number(g.get("step")) else i,
                prompt=str(g["prompt_id"]),
                rewards=clean,
                passes=int(passes) if _number(passes) else 0,
                kept=bool(g.get("kept")),
                share=float(g["grad_share"]) if _number(g.get("grad_share")) else 0.0,
                scale=max((abs(r) for r in clean), default=0.0),
            )
        )
    return out


def top_share(weights: list[float], fraction: float) -> tuple[float, float]:
    """(share of the total carried by the top ``fraction`` of items, share equal weights give).

    At least one item counts as the top, so with 16 groups "the top 1%" is 1 group and its
    equal share is 1/16, not 1%: the comparison stays honest at small batches.
    """
    k = max(1, math.ceil(fraction * len(weights)))
    total = sum(weights)
    top = sum(sorted(weights, reverse=True)[:k])
    return (top / total if total > 0 else 0.0), k / len(weights)


@dataclass
class Concentration:
    steps: list[int]
    top: dict[float, list[float]]  # fraction -> share per step
    equal: dict[float, list[float]]  # fraction -> equal share per step
    run_top: dict[float, tuple[float, float]]  # fraction -> (share, equal) over the run
    lorenz: tuple[list[float], list[float]]  # cumulative share of groups -> of weight (<= 1001 pts)


FRACTIONS = (0.01, 0.10)


def concentration(visits: list[Visit]) -> Concentration | None:
    by_step: dict[int, list[float]] = defaultdict(list)
    for v in visits:
        if v.kept and v.share > 0:
            by_step[v.step].append(v.share)
    if not by_step:
        return None
    steps = sorted(by_step)
    top = {f: [top_share(by_step[s], f)[0] for s in steps] for f in FRACTIONS}
    equal = {f: [top_share(by_step[s], f)[1] for s in steps] for f in FRACTIONS}
    pooled = [w for s in steps for w in by_step[s]]
    run_top = {f: top_share(pooled, f) for f in FRACTIONS}
    return Concentration(steps, top, equal, run_top, _lorenz(pooled))


def _lorenz(weights: list[float], points: int = 1000) -> tuple[list[float], list[float]]:
    """Cumulative share of weight carried by the heaviest x of groups, at most ``points`` + 1."""
    ordered = sorted(weights, reverse=True)
    total, n = sum(ordered) or 1.0, len(ordered)
    cum, running = [0.0], 0.0
    for w in ordered:
        running += w
        cum.append(running / total)
    idx = sorted({round(i * n / points) for i in range(points + 1)}) if n > points else range(n + 1)
    return [i / n for i in idx], [cum[i] for i in idx]


def gradient_threshold(group_size: int, advantage: str | None) -> float:
    """``K``: how many times its step's median weight a group may carry before it is flagged."""
    g = max(2, int(group_size))
    spread = g * g / (4 * (g - 1))  # max / min of p(1-p) over mixed groups of g answers
    bound = math.sqrt(spread) if advantage in (None, "group") else spread
    return max(4.0, 2.0 * bound)


@dataclass
class Flag:
    """A prompt that stood out, why, and by how much."""

    prompt: str
    rule: str  # "gradient" or "reward scale"
    ratio: float  # worst visit: weight / step median, or scale / 90th percentile
    threshold: float
    flagged_visits: int
    visits: list[Visit]

    @property
    def reason(self) -> str:
        what = (
            "the step's median gradient share"
            if self.rule == "gradient"
            else "the run's 90th-percentile reward scale"
        )
        return (
            f"{self.ratio:.1f}x {what} (threshold {self.threshold:g}x) in "
            f"{self.flagged_visits} of {len(self.visits)} visit(s)"
        )


def gradient_ratios(visits: list[Visit]) -> dict[int, float]:
    """id(visit) -> its weight over its step's median weight, for steps with enough groups."""
    by_step: dict[int, list[Visit]] = defaultdict(list)
    for v in visits:
        if v.kept and v.share > 0:
            by_step[v.step].append(v)
    ratios = {}
    for group in by_step.values():
        if len(group) >= MIN_KEPT:
            median = statistics.median(v.share for v in group)
            ratios.update({id(v): v.share / median for v in group})
    return ratios


def scale_ratios(visits: list[Visit]) -> dict[int, float]:
    scales = sorted(v.scale for v in visits if v.scale > 0)
    if len(scales) < 10:
        return {}
    p90 = scales[int(0.9 * (len(scales) - 1))]
    return {id(v): v.scale / p90 for v in visits if v.scale > 0}


def flag_outliers(
    visits: list[Visit],
    group_size: int,
    advantage: str | None,
    ratios: tuple[dict, dict] | None = None,
) -> list[Flag]:
    """Prompts that crossed either rule, worst first. ``ratios``: (gradient, scale) ratios when
    the caller has them already."""
    gradient, scale = ratios or (gradient_ratios(visits), scale_ratios(visits))
    rules = (
        ("gradient", gradient, gradient_threshold(group_size, advantage)),
        ("reward scale", scale, SCALE_FACTOR),
    )
    flags = []
    for rule, by_visit, limit in rules:
        hits: dict[str, list[float]] = defaultdict(list)
        for v in visits:
            if by_visit.get(id(v), 0.0) > limit:
                hits[v.prompt].append(by_visit[id(v)])
        seen: dict[str, list[Visit]] = defaultdict(list)
        for v in visits if hits else ():
            if v.prompt in hits:
                seen[v.prompt].append(v)
        flags += [Flag(p, rule, max(r), limit, len(r), seen[p]) for p, r in hits.items()]
    return sorted(flags, key=lambda f: -f.ratio / f.threshold)


def pass_rate_moves(visits: list[Visit]) -> list[tuple[float, float]]:
    """(pass rate at the first visit, at the last) for every prompt checked more than once."""
    first: dict[str, Visit] = {}
    last: dict[str, Visit] = {}
    for v in sorted(visits, key=lambda v: v.step):
        if v.pass_rate is None:
            continue
        first.setdefault(v.prompt, v)
        last[v.prompt] = v
    return [(first[p].pass_rate, last[p].pass_rate) for p in first if last[p] is not first[p]]


def most_visited(visits: list[Visit], top: int = 15) -> tuple[list[tuple[str, list[Visit]]], int]:
    """The ``top`` most-visited prompts with their visits (ties: the earlier-seen first), and
    the number of distinct prompts."""
    by_prompt: dict[str, list[Visit]] = defaultdict(list)
    for v in visits:
        by_prompt[v.prompt].append(v)
    ranked = sorted(by_prompt.items(), key=lambda kv: -len(kv[1]))[:top]  # stable: first seen
    return ranked, len(by_prompt)


def describe(visits: list[Visit]) -> str:
    """A prompt's reward distribution in one line: mean, sd, range, and its last group."""
    rewards = [r for v in visits for r in v.rewards]
    if not rewards:
        return "no checkable rewards"
    sd = statistics.pstdev(rewards)
    last = " ".join(f"{r:g}" for r in visits[-1].rewards)
    return (
        f"mean {statistics.fmean(rewards):.3g}, sd {sd:.3g}, range [{min(rewards):g}, "
        f"{max(rewards):g}] over {len(rewards)} answers; last group: {last}"
    )


class RunView:
    """A run with what the report derives from it, each computed once on first use."""

    def __init__(self, run) -> None:
        self.run = run

    @cached_property
    def visits(self) -> list[Visit]:
        return visits_of(self.run.groups)

    @cached_property
    def group_size(self) -> int:
        size = self.run.setting("group_size")
        if isinstance(size, int) and size >= 2:
            return size
        return max((len(v.rewards) for v in self.visits), default=2)

    @cached_property
    def advantage(self) -> str | None:
        value = self.run.setting("advantage")
        return value if isinstance(value, str) else None

    @cached_property
    def concentration(self) -> Concentration | None:
        return concentration(self.visits)

    @cached_property
    def ratios(self) -> tuple[dict[int, float], dict[int, float]]:
        """(gradient, reward-scale) ratio of each visit, keyed by ``id(visit)``."""
        return gradient_ratios(self.visits), scale_ratios(self.visits)

    @cached_property
    def flags(self) -> list[Flag]:
        return flag_outliers(self.visits, self.group_size, self.advantage, self.ratios)

    def inactive(self, key: str) -> str | None:
        """Why the gauge ``key`` is flat by configuration (first line: the short form, e.g.
        ``no KL: beta = 0``; second: the reason), or None when it is live."""
        run = self.run
        if key == "clip_fraction" and run.setting("mu") == 1:
            return "clip inactive: mu = 1\n(one update per batch: the ratio is 1)"
        if key == "kl" and run.setting("beta") in (0, 0.0):
            return "no KL: beta = 0\n(no reference model)"
        if key == "lr":
            from passband._rundir import series

            values = series(run.metrics, "lr")[1]
            if values and min(values) == max(values):
                return (
                    f"lr constant: {values[0]:g}\n(lr_schedule = {run.setting('lr_schedule', '?')})"
                )
        return None
