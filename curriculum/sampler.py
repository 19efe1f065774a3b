"""The pass-rate curriculum: a sampler that spends generation where the policy is uncertain.

Each prompt holds a Beta posterior over its pass rate (``posterior.PromptBelief``) and sits in one
pool: ``fresh`` (never seen), ``active`` (estimate inside the band), ``hard`` (the warm-up pool,
below the band) or ``easy`` (above it). A draw of ``n`` prompts is, in this order:

1. re-tests of warm-up prompts that are due (``hard_retest_share`` of the draw, up to
   ``max_hard_retest_share`` as the discovery budget fills), those with the highest posterior
   chance of a mixed group first (a few successes, or the stalest evidence; with
   ``selection="signal"`` those beyond ``hard_retest_share`` only while that chance beats a fresh
   prompt's); then due re-tests of easy prompts (``easy_retest_share``);
2. fresh and in-band prompts, competing on one score (``selection="signal"``, the default): the
   chance that a group disagrees, P(signal) = 1 - E[p^G] - E[(1-p)^G] under the prompt's
   posterior. A fresh prompt gets the population's chance (the decayed share of first looks that
   had signal: an empirical-Bayes prior), and a prompt drawn recently is scored down by a reuse
   cooldown (``cooldown_factor`` times the in-band mass, in groups). So when most of the data is
   in band the draw walks through all of it like uniform epochs, and a tiny model learns the skill
   instead of memorising a few dozen prompts; when little is, the known in-band prompts win. At
   least ``min_explore_share`` (up to ``surplus_explore_share`` as the discovery budget fills)
   stays fresh. ``selection="pool"`` is the older rule: a pool of ``active_factor * n`` in-band
   prompts re-drawn by a Thompson sample, fresh ones only while it is short;
3. whatever is left, so a draw is always full; repeats only when fewer distinct prompts exist.

The discovery budget integrates the signal share's excess over ``signal_floor`` group by group:
surplus signal is spent on finding prompts that became learnable, and when re-tests start to
succeed (the model is catching up) they cost little signal, so the budget grows on its own.

A unanimous re-test (no sign of movement) multiplies the prompt's wait by ``retest_backoff`` (up
to ``max_retest_after``), so hopeless prompts cost little, yet none is ever deleted; a mixed one
keeps the wait short. Every decision is counted in ``metrics()``.

The draw-time rules live in ``selection.py`` (``SelectionMixin``), the id / config helpers of the
state in ``ids.py``; this module holds the state, the public API and the bookkeeping.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter
from dataclasses import asdict
from typing import Hashable, Iterable, Mapping

from passband.curriculum.config import CurriculumConfig
from passband.curriculum.ids import build_index, jsonable, plain_ids
from passband.curriculum.posterior import (
    ACTIVE, EASY, FRESH, HARD, IN_BAND, TOO_EASY, TOO_HARD, PromptBelief, band_class,
)
from passband.curriculum.selection import SelectionMixin

_STATE_FORMAT = "passband.curriculum/1"
_POOL_OF_CLASS = {IN_BAND: ACTIVE, TOO_HARD: HARD, TOO_EASY: EASY}
_CLASS_OF_POOL = {ACTIVE: IN_BAND, HARD: TOO_HARD, EASY: TOO_EASY}
_EMA_WINDOW = 256  # groups; the window of the in-band / signal shares in metrics()
_COUNTERS = (
    "groups_observed", "groups_with_signal", "probes", "admissions", "readmissions", "retests",
    "retests/warmup", "retests/easy", "to_warmup", "to_easy", "parked", "priors/used",
    "priors/unused", "drawn/active", "drawn/fresh", "drawn/retest_warmup", "drawn/retest_easy",
    "drawn/fallback", "drawn/repeat",
)


class Curriculum(SelectionMixin):
    """Sampler over ``prompt_ids`` (ints or strings) keeping them in the pass-rate ``band``.

    ``priors`` maps a prompt id to ``(passes, trials)`` from pre-scoring (or a bare pass rate,
    read as one group of ``group_size_hint``); the counts are weighted by ``prior_weight``.
    Extra keyword ``options`` are ``CurriculumConfig`` fields (or pass a whole ``config=``).
    The same ids, priors, seed and call sequence always give the same draws, and a
    ``state_dict()`` taken at any point continues exactly as the original would have.

    For the trainer: ``sample(n)`` at the start of a step, ``sample(k, exclude=used)`` to refill
    after dropping unanimous groups, ``observe`` once per group with ``verdict.passed`` counts,
    ``metrics()`` for logging, ``estimates()`` for ``curriculum.json``.
    """

    def __init__(self, prompt_ids: Iterable[Hashable], *, band=(0.2, 0.8),
                 priors: Mapping | None = None, seed: int = 0,
                 config: CurriculumConfig | None = None, **options) -> None:
        if config is None:
            config = CurriculumConfig.from_options(band=band, **options)
        elif options or tuple(band) not in ((0.2, 0.8), tuple(config.band)):
            raise TypeError("pass either config= or band/options, not both")
        self.config = config
        self._ids = plain_ids(prompt_ids)
        self._index = build_index(self._ids)
        self._beliefs = [PromptBelief() for _ in self._ids]
        self._rng = random.Random(seed)
        self._clock = 0
        self._n_hint = 1
        self._group_size = config.group_size_hint
        self._pending: dict[int, int] = {}  # index -> clock when handed out, until observed
        self._counts = Counter({name: 0 for name in _COUNTERS})
        self._ema = {"signal": 0.0, "in_band": 0.0}
        for prompt_id, counts in (priors or {}).items():
            self._set_prior(prompt_id, counts)

    # ------------------------------------------------------------------ public API
    def sample(self, n: int, exclude: Iterable[Hashable] = ()) -> list:
        """``n`` prompt ids, distinct when possible, avoiding ``exclude`` and prompts handed out
        but not yet observed (pass the ids already used this step when refilling a batch)."""
        if n < 0:
            raise ValueError(f"sample(n={n}): n must be >= 0")
        if n == 0 or not self._ids:
            return []
        self._n_hint = max(self._n_hint, n)
        blocked = self._blocked(exclude)
        chosen: list[int] = []
        taken = set(blocked)
        for pool, share, key in ((HARD, self._hard_share(), "drawn/retest_warmup"),
                                 (EASY, self.config.easy_retest_share, "drawn/retest_easy")):
            picked = self._due_retests(pool, self._round(n * share), taken)
            self._extend(chosen, taken, self._worth_a_retest(picked, n) if pool == HARD else picked,
                         key)
        self._fill_main(n - len(chosen), chosen, taken)
        self._extend(chosen, taken, self._fallback(n - len(chosen), taken), "drawn/fallback")
        chosen += self._repeats(n - len(chosen), chosen)
        for i in chosen:
            self._pending[i] = self._clock
        return [self._ids[i] for i in chosen]

    def observe(self, prompt_id: Hashable, successes: int, trials: int) -> None:
        """Record one group: ``successes`` of ``trials`` answers passed (binary, not the shaped
        reward). Updates the estimate, the pool and the re-test schedule."""
        i = self._lookup(prompt_id)
        successes, trials = int(successes), int(trials)
        if trials < 1 or not 0 <= successes <= trials:
            raise ValueError(f"observe({prompt_id!r}, successes={successes}, trials={trials}): "
                             "need trials >= 1 and 0 <= successes <= trials")
        cfg = self.config
        self._clock += 1
        belief = self._beliefs[i]
        if belief.pool == FRESH:
            self._count_probe(0 < successes < trials)
        belief.add(successes, trials - successes, self._clock, cfg.evidence_half_life,
                   cfg.max_evidence)
        belief.observed += 1
        if trials >= 2:
            self._group_size = trials
        self._count_group(successes, trials)
        self._move(belief, self._pool_for(belief), successes in (0, trials))
        self._pending.pop(i, None)

    def estimate(self, prompt_id: Hashable) -> float:
        """Posterior mean pass rate now (old evidence decayed)."""
        belief = self._beliefs[self._lookup(prompt_id)]
        return belief.mean(self._clock, self.config.evidence_half_life, self.config.base_prior)

    def estimates(self) -> dict:
        """Posterior mean for every prompt id, e.g. for ``curriculum.json``."""
        return {pid: self.estimate(pid) for pid in self._ids}

    def signal_chance(self, prompt_ids: Iterable[Hashable]) -> list[float]:
        """P(signal) of each prompt now: the chance its next group is not unanimous, under its
        posterior (a prompt never seen: the population's chance). The trainer sizes its
        rollout with it; reading it changes nothing."""
        cfg, out = self.config, []
        for prompt_id in prompt_ids:
            belief = self._beliefs[self._lookup(prompt_id)]
            out.append(self._fresh_signal() if belief.pool == FRESH else belief.expected_signal(
                self._clock, cfg.evidence_half_life, cfg.base_prior, self._group_size))
        return out

    def classify(self, prompt_id: Hashable) -> str:
        """``too_easy``, ``in_band`` or ``too_hard``; a fresh prompt is judged by its prior mean."""
        belief = self._beliefs[self._lookup(prompt_id)]
        if belief.pool == FRESH:
            return band_class(self.estimate(prompt_id), self.config.band)
        return _CLASS_OF_POOL[belief.pool]

    def metrics(self) -> dict:
        """Flat counters and gauges; reading them changes nothing."""
        pools = Counter(b.pool for b in self._beliefs)
        out: dict = {"pool/active": pools[ACTIVE], "pool/warmup": pools[HARD],
                     "pool/easy": pools[EASY], "pool/fresh": pools[FRESH],
                     "in_band_share": self._ema["in_band"], "signal_share": self._ema["signal"],
                     "discovery_budget": self._surplus(), "clock": self._clock,
                     "fresh_signal": self._fresh_signal(), "cooldown": self._ema.get("cooldown", 0.0),
                     "coverage": sum(1 for b in self._beliefs if b.observed) / max(1, len(self._ids))}
        out.update(self._counts)
        return out

    def state_dict(self) -> dict:
        """Everything needed to continue exactly where this left off; JSON-serialisable."""
        version, internal, gauss = self._rng.getstate()
        return {
            "format": _STATE_FORMAT, "config": jsonable(asdict(self.config)), "ids": list(self._ids),
            "beliefs": [b.to_list() for b in self._beliefs], "clock": self._clock,
            "rng": [version, list(internal), gauss], "n_hint": self._n_hint,
            "group_size": self._group_size, "pending": [[i, c] for i, c in self._pending.items()],
            "counts": dict(self._counts), "ema": dict(self._ema),
        }

    def load_state_dict(self, state: Mapping) -> None:
        """Restore a ``state_dict()``; the prompt ids must be the same set as this sampler's."""
        if state.get("format") != _STATE_FORMAT:
            raise ValueError(f"not a curriculum state (format {state.get('format')!r}, "
                             f"expected {_STATE_FORMAT!r})")
        ids = list(state["ids"])
        if set(ids) != set(self._ids) or len(ids) != len(self._ids):
            missing, extra = set(self._ids) - set(ids), set(ids) - set(self._ids)
            raise ValueError(f"curriculum state is for other prompts: {len(missing)} of ours are "
                             f"missing from it, {len(extra)} of its are unknown here")
        changed = [k for k, v in jsonable(asdict(self.config)).items() if state["config"].get(k) != v]
        if changed:
            warnings.warn(f"resuming curriculum with changed settings {changed}; using the new ones",
                          stacklevel=2)
        self._ids, self._index = ids, build_index(ids)
        self._beliefs = [PromptBelief.from_list(list(v)) for v in state["beliefs"]]
        self._clock, self._n_hint = state["clock"], state["n_hint"]
        self._group_size = state["group_size"]
        version, internal, gauss = state["rng"]
        self._rng.setstate((version, tuple(internal), gauss))
        self._pending = {int(i): c for i, c in state["pending"]}
        self._counts = Counter({name: 0 for name in _COUNTERS})
        self._counts.update(state["counts"])
        self._ema = dict(state["ema"])

    def __len__(self) -> int:
        return len(self._ids)

    # ------------------------------------------------------------------ selection
    # in ``selection.SelectionMixin``: _fill_main, _fill_by_signal, _due_retests, _round, ...

    # ------------------------------------------------------------------ bookkeeping
    def _pool_for(self, belief: PromptBelief) -> str:
        cfg = self.config
        return _POOL_OF_CLASS[band_class(
            belief.mean(self._clock, cfg.evidence_half_life, cfg.base_prior), cfg.band)]

    def _move(self, belief: PromptBelief, new: str, unanimous: bool) -> None:
        """Apply a pool transition after an observation and count it."""
        old, cfg = belief.pool, self.config
        if old == FRESH:
            self._counts["probes"] += 1
        elif old in (HARD, EASY):
            self._counts["retests"] += 1
            self._counts["retests/warmup" if old == HARD else "retests/easy"] += 1
        if new == ACTIVE:
            self._counts["readmissions" if old in (HARD, EASY) else "admissions"] += int(old != ACTIVE)
        elif new == old:  # re-tested and still outside the band
            if unanimous:  # no sign of movement: wait longer next time
                belief.wait = min(belief.wait * cfg.retest_backoff, cfg.max_retest_after)
            else:  # some answers differed: it is moving, look again soon
                belief.wait = min(belief.wait, _first_wait(cfg, new))
            belief.due = self._clock + belief.wait
        else:
            self._counts["to_warmup" if new == HARD else "to_easy"] += 1
            belief.wait = _first_wait(cfg, new)
            belief.due = self._clock + belief.wait
        belief.pool = new
        if new == HARD and old != HARD:
            self._enforce_hard_cap()

    def _enforce_hard_cap(self) -> None:
        """Over ``max_hard_pool``, park the prompt that failed most re-tests at the longest wait."""
        cap = self.config.max_hard_pool
        hard = [b for b in self._beliefs if b.pool == HARD and b.wait < self.config.max_retest_after]
        if cap is None or len(hard) <= cap:
            return
        worst = max(hard, key=lambda b: (b.wait, b.observed))
        worst.wait = self.config.max_retest_after
        worst.due = self._clock + worst.wait
        self._counts["parked"] += 1

    def _count_group(self, successes: int, trials: int) -> None:
        self._counts["groups_observed"] += 1
        signal = 0 < successes < trials
        self._counts["groups_with_signal"] += int(signal)
        lo, hi = self.config.band
        rate = max(1.0 / self._counts["groups_observed"], 1.0 / _EMA_WINDOW)
        self._ema["signal"] += (float(signal) - self._ema["signal"]) * rate
        if self._counts["groups_observed"] > _EMA_WINDOW // 4:  # skip the first probes of an
            # unknown pool: their signal says nothing about what is left to spend
            step = self.config.spend_gain * (float(signal) - self.config.signal_floor)
            self._ema["spend"] = min(1.0, max(0.0, self._ema.get("spend", 0.0) + step))
        in_band = float(lo <= successes / trials <= hi)
        self._ema["in_band"] += (in_band - self._ema["in_band"]) * rate

    def _set_prior(self, prompt_id: Hashable, counts) -> None:
        if prompt_id not in self._index:
            self._counts["priors/unused"] += 1
            return
        try:
            if isinstance(counts, (int, float)):  # a bare pass rate, as if from one group
                counts = (counts * self.config.group_size_hint, self.config.group_size_hint)
            passes, trials = (float(x) for x in counts)
        except (TypeError, ValueError):
            raise ValueError(f"prior for {prompt_id!r} must be (passes, trials) or a pass rate, "
                             f"got {counts!r}") from None
        if trials <= 0:
            return
        if not 0 <= passes <= trials:
            raise ValueError(f"prior for {prompt_id!r}: passes={passes} not in [0, trials={trials}]")
        cfg, belief = self.config, self._beliefs[self._index[prompt_id]]
        w = cfg.prior_weight
        belief.add(w * passes, w * (trials - passes), 0, cfg.evidence_half_life, cfg.max_evidence)
        belief.pool = self._pool_for(belief)
        belief.wait = _first_wait(cfg, belief.pool)
        belief.due = belief.wait
        self._counts["priors/used"] += 1

    def _lookup(self, prompt_id: Hashable) -> int:
        try:
            return self._index[prompt_id]
        except (KeyError, TypeError):
            raise KeyError(f"unknown prompt id {prompt_id!r} (the curriculum has {len(self._ids)} "
                           "prompts)") from None


def _first_wait(cfg: CurriculumConfig, pool: str) -> float:
    after = cfg.hard_retest_after if pool == HARD else cfg.easy_retest_after
    return min(after, cfg.max_retest_after)
