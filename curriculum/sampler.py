"""The pass-rate curriculum: a sampler that spends generation where the policy is uncertain.

Each prompt holds a Beta posterior over its pass rate and sits in one pool: ``fresh`` (never seen),
``active`` (estimate inside the band), ``warmup`` (below the band) or ``easy`` (above it). A draw
of ``n`` prompts is, in this order:

1. re-tests of warm-up prompts that are due (``warmup_retest_share`` of the draw, up to
   ``max_warmup_retest_share`` as the discovery budget fills), those with the highest posterior
   chance of a mixed group first (a few successes, or the stalest evidence; those beyond the base
   share only while that chance beats a fresh prompt's); then due re-tests of easy prompts;
2. fresh and in-band prompts, competing on one score: the chance that a group disagrees,
   P(signal) = 1 - E[p^G] - E[(1-p)^G] under the prompt's posterior. A fresh prompt gets the
   population's chance (the decayed share of first looks that had signal), or with ``texts``
   the chance a model of its text predicts (``_predict``; a sample of fresh ones is scored).
   A prompt drawn within the reuse cooldown (``cooldown_factor`` times the in-band mass, in
   groups, and at least ``min_reuse_share`` of the dataset; for a prompt the walk would bring
   back after the run's end, ``spaced_reuse`` of the run so far) is not drawn again, so the
   known in-band prompts are walked through like epochs and fresh ones fill the rest. At least
   ``min_explore_share`` (up to ``surplus_explore_share`` as the discovery budget fills) stays fresh;
3. whatever is left, so a draw is always full (prompts off cooldown first, best Thompson signal
   chance first; easy ones weighted by ``easy_weight`` except while looks at them pay more often
   than looks at warm-up prompts, so a policy that forgets what it solved trains on it again);
   repeats only when fewer distinct prompts exist.

Every posterior starts from the base prior: ``base_prior`` until 32 prompts were seen, then an
empirical-Bayes fit to the first looks (``empirical_prior``; see ``_population``), so one lucky
success on a hopeless prompt is not read as a pass rate in the band.

Scale: the state is numpy arrays (one entry per prompt), the pools are O(1) index sets and the
re-test schedules heaps (``pools``), and a draw ranks at most ``candidates_per_slot * n`` known
prompts (a uniform sample of them when there are more), so ``sample`` and ``observe`` cost the
same at a million prompts as at ten thousand. ``state_dict()`` stores the arrays compressed
(``state``). The draw-time rules live in ``_selection``, saving and restoring in ``_persist``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

from passband.curriculum import _population as population
from passband.curriculum._ids import build_index, plain_id, plain_ids, whole_number
from passband.curriculum._persist import COUNTERS, FLOATS, PersistMixin
from passband.curriculum._pools import ACTIVE, EASY, FRESH, WARMUP, DueQueue, IndexSet, first_wait
from passband.curriculum._predict import signal_model
from passband.curriculum._priors import prior_counts, require_mapping, warn_unmatched
from passband.curriculum._selection import SelectionMixin
from passband.curriculum.allocation import allocate
from passband.curriculum.config import CurriculumConfig
from passband.curriculum.posterior import band_class, expected_signal_array

_EMA_WINDOW = 256  # groups; the window of the in-band / signal shares in metrics()


class Curriculum(SelectionMixin, PersistMixin):
    """Sampler over ``prompt_ids`` (ints or strings) keeping them in the pass-rate ``band``.

    ``priors`` maps a prompt id to ``(passes, trials)`` from pre-scoring (or a bare pass rate,
    read as one group of ``group_size_hint``); the counts are weighted by ``prior_weight``.
    ``texts`` (optional, one per id, a string or chat messages): the prompts themselves, from
    which unseen prompts' chance of signal is learned (``predict_fresh``).
    Extra keyword ``options`` are ``CurriculumConfig`` fields (or pass a whole ``config=``).
    The same ids, priors, seed and call sequence always give the same draws, and a
    ``state_dict()`` taken at any point continues exactly as the original would have.

    For the trainer: ``sample(n)`` at the start of a step, ``sample(k, exclude=used)`` to refill
    after dropping unanimous groups, ``observe`` once per group with success counts (``unscored``
    when none of its answers was checkable), ``metrics()`` for logging, ``estimates()`` for
    ``curriculum.json``.
    """

    def __init__(
        self,
        prompt_ids: Iterable[Hashable],
        *,
        band=None,
        priors: Mapping | None = None,
        seed: int = 0,
        config: CurriculumConfig | Mapping | None = None,
        texts: Sequence | None = None,
        **options,
    ) -> None:
        config = CurriculumConfig.resolve(config, band, options)
        if (whole := whole_number(seed)) is None or whole < 0:
            kind = TypeError if whole is None else ValueError
            raise kind(f"seed={seed!r} must be a whole number >= 0 (same seed, same draws)")
        seed = whole
        self.config = config
        self._ids = plain_ids(prompt_ids)
        self._index = build_index(self._ids)
        n = len(self._ids)
        for name in FLOATS:
            setattr(self, f"_{name}", np.zeros(n))
        self._pool = np.zeros(n, dtype=np.int8)
        self._observed = np.zeros(n, dtype=np.int64)
        self._sets = [IndexSet.full(n), IndexSet(n), IndexSet(n), IndexSet(n)]
        self._queues = {WARMUP: DueQueue(n), EASY: DueQueue(n)}
        self._rng = np.random.Generator(np.random.PCG64(seed))
        self._clock, self._n_hint, self._n_seen = 0, 1, 0
        self._draws, self._n_window, self._n_max = 0, 0, 1  # draws; largest in window, ever
        self._group_size = config.group_size_hint
        self._sizes: dict[int, int] = {}  # group size -> groups observed at it (G: the mode)
        self._pending: dict[int, tuple] = {}  # index -> (clock, draw) when handed out
        self._counts = {name: 0 for name in COUNTERS}
        self._ema = {"signal": 0.0, "in_band": 0.0}
        self._predictor = signal_model(texts, len(self._ids), config.predict_fresh)
        if priors:
            self._set_priors(priors)

    # ------------------------------------------------------------------ public API
    def sample(self, n: int, exclude: Iterable[Hashable] = ()) -> list:
        """``n`` prompt ids, distinct when possible, avoiding ``exclude`` and prompts handed out
        but not yet observed (pass the ids already used this step when refilling a batch).
        Always ``n`` of them: when fewer than ``n`` prompts are left, prompts handed out but not
        yet observed come next, then repeats (of the draw, or of every prompt when ``exclude``
        holds them all)."""
        count = whole_number(n)
        if count is None or count < 0:
            raise ValueError(f"sample(n={n!r}): n must be a whole number >= 0")
        n = count
        if n == 0 or not self._ids:
            return []
        self._note_draw(n)
        taken, excluded = self._blocked(exclude)
        chosen: list[int] = []
        warm = self._due_retests(WARMUP, self._round(n * self._warmup_share()), taken)
        self._extend(chosen, taken, self._worth_a_retest(warm, n), "drawn/retest_warmup")
        easy = self._due_retests(EASY, self._round(n * self.config.easy_retest_share), taken)
        self._extend(chosen, taken, easy, "drawn/retest_easy")
        self._fill_by_signal(n - len(chosen), chosen, taken)
        self._extend(chosen, taken, self._fallback(n - len(chosen), taken), "drawn/fallback")
        chosen += self._repeats(n - len(chosen), chosen, excluded)
        for i in chosen:
            self._pending[i] = (self._clock, self._draws)
        return [self._ids[i] for i in chosen]

    def observe(self, prompt_id: Hashable, successes: int, trials: int) -> None:
        """Record one group: ``successes`` of ``trials`` answers passed (binary, not the shaped
        reward). Updates the estimate, the pool and the re-test schedule."""
        i = self._lookup(prompt_id)
        counts = whole_number(successes), whole_number(trials)
        if None in counts or counts[1] < 1 or not 0 <= counts[0] <= counts[1]:
            raise ValueError(
                f"observe({prompt_id!r}, successes={successes!r}, trials={trials!r}): need whole "
                "numbers with trials >= 1 and 0 <= successes <= trials (count the answers that "
                "passed, not a sum of shaped rewards)"
            )
        successes, trials = counts
        self._clock += 1
        pool = self._look_pool(i)
        if pool == FRESH:
            half_life = self.config.evidence_half_life
            population.fold_first_look(self._ema, successes, trials, self._clock, half_life)
            if self._predictor is not None:
                self._predictor.update(i, 0 < successes < trials)
        self._add(i, successes, trials - successes, self._clock)
        if self._observed[i] == 0:
            self._n_seen += 1
        self._observed[i] += 1
        if trials >= 2 and not self.config.adaptive_group_size:  # adaptive: sizes vary
            self._note_group_size(trials)
        self._count_group(successes, trials, pool)
        self._move(i, self._pool_for(i))
        self._pending.pop(i, None)

    def group_sizes(self, prompt_ids: Sequence[Hashable], budget: int) -> list[int]:
        """Answers per prompt for one round of ``budget`` rollouts: an equal split (the fixed
        G) unless ``adaptive_group_size`` is on, then ``allocation.allocate`` by posterior, never
        below ``min_group_size``."""
        n = len(prompt_ids)
        if not n:
            return []
        if (whole := whole_number(budget)) is None or whole < n:
            raise ValueError(
                f"group_sizes(budget={budget!r}): need a whole number of rollouts >= the "
                f"{n} prompts"
            )
        budget = whole  # 24.0 or a numpy int: plain ints out, as the adaptive split gives
        if not self.config.adaptive_group_size:
            return [budget // n + (1 if k < budget % n else 0) for k in range(n)]
        idx = np.asarray([self._lookup(p) for p in prompt_ids])
        a, b = self._beta(idx)
        return allocate(list(zip(a.tolist(), b.tolist())), budget, floor=self.config.min_group_size)

    def estimate(self, prompt_id: Hashable) -> float:
        """Posterior mean pass rate now (old evidence decayed)."""
        return float(self._means(np.array([self._lookup(prompt_id)]))[0])

    def estimates(self) -> dict:
        """Posterior mean for every prompt id, e.g. for ``curriculum.json``."""
        return dict(zip(self._ids, self._means(np.arange(len(self._ids))).tolist()))

    def signal_chance(self, prompt_ids: Iterable[Hashable]) -> list[float]:
        """P(signal) of each prompt now: the chance its next group is not unanimous, under its
        posterior (a prompt never seen: the population's chance). The trainer sizes its
        rollout with it; reading it changes nothing."""
        idx = np.asarray([self._lookup(p) for p in prompt_ids], dtype=np.int64)
        if not len(idx):
            return []
        chance = expected_signal_array(*self._beta(idx), self._group_size)
        fresh = self._pool[idx] == FRESH
        model = self._predictor
        ranked = model is not None and model.ready
        chance[fresh] = model.predict(idx[fresh]) if ranked else self._fresh_signal()
        return chance.tolist()

    def classify(self, prompt_id: Hashable) -> str:
        """``too_easy``, ``in_band`` or ``too_hard``; a fresh prompt is judged by its prior mean."""
        i = self._lookup(prompt_id)
        pool = int(self._pool[i])
        if pool == FRESH:
            return band_class(self.estimate(prompt_id), self.config.band)
        return ("in_band", "too_hard", "too_easy")[pool - 1]

    def metrics(self) -> dict:
        """Flat counters and gauges; reading them changes nothing."""
        out: dict = {
            "pool/active": len(self._sets[ACTIVE]),
            "pool/warmup": len(self._sets[WARMUP]),
            "pool/easy": len(self._sets[EASY]),
            "pool/fresh": len(self._sets[FRESH]),
            "in_band_share": self._ema["in_band"],
            "signal_share": self._ema["signal"],
            "signal_share/warmup": self._ema.get("signal/warmup", 0.0),
            "signal_share/easy": self._ema.get("signal/easy", 0.0),
            "fallback_easy_weight": self._easy_fallback_weight(),
            "discovery_budget": self._surplus(),
            "clock": self._clock,
            "fresh_signal": self._fresh_signal(),
            "cooldown": self._ema.get("cooldown", 0.0),
            "coverage": self._n_seen / max(1, len(self._ids)),
        }
        if self._predictor is not None:  # first looks the text model of unseen prompts learned
            out["fresh_model/looks"] = self._predictor.looks
        out.update(self._counts)
        return out

    def __len__(self) -> int:
        return len(self._ids)

    # ------------------------------------------------------------------ evidence
    def _evidence(self, idx, now=None, half_life=None):
        """Decayed (successes, failures) of the prompts ``idx`` (array or int) at ``now``, at
        ``half_life`` (default: ``evidence_half_life``)."""
        now = self._clock if now is None else now
        half_life = half_life or self.config.evidence_half_life
        factor = 0.5 ** (np.maximum(0.0, now - self._stamp[idx]) / half_life)
        return self._succ[idx] * factor, self._fail[idx] * factor

    def _beta(self, idx, half_life=None):
        s, f = self._evidence(idx, half_life=half_life)
        a0, b0 = self._base_prior()
        return a0 + s, b0 + f

    def _base_prior(self) -> tuple[float, float]:
        cfg = self.config
        return (
            population.base_prior(self._ema, cfg.base_prior)
            if cfg.empirical_prior
            else cfg.base_prior
        )

    def _means(self, idx) -> np.ndarray:
        a, b = self._beta(idx)
        return a / (a + b)

    def _add(self, i, succ, fail, now) -> None:
        """Decay the old evidence to ``now``, add the new, cap the total (keep the ratio)."""
        s, f = self._evidence(i, now)
        s, f = s + succ, f + fail
        total = s + f
        cap = np.minimum(1.0, self.config.max_evidence / np.maximum(total, 1e-300))
        self._succ[i], self._fail[i], self._stamp[i] = s * cap, f * cap, now

    def _pool_for(self, i: int) -> int:
        lo, hi = self.config.band
        mean = float(self._means(i))
        return WARMUP if mean < lo else (EASY if mean > hi else ACTIVE)

    # ------------------------------------------------------------------ bookkeeping
    def _move(self, i: int, new: int) -> None:
        """Apply a pool transition after an observation and count it."""
        old, cfg, counts = int(self._pool[i]), self.config, self._counts
        if old == FRESH:
            counts["probes"] += 1
        elif old in (WARMUP, EASY):
            counts["retests"] += 1
            counts["retests/warmup" if old == WARMUP else "retests/easy"] += 1
        if new == ACTIVE:
            counts["readmissions" if old in (WARMUP, EASY) else "admissions"] += int(old != ACTIVE)
        elif new == old:  # re-tested and still outside the band
            # wait longer next time, even after a mixed group: resetting the wait let a few
            # borderline prompts take most re-test slots from ones not looked at since
            # (BENCHMARKS.md, "Recovery")
            self._wait[i] = min(self._wait[i] * cfg.retest_backoff, cfg.max_retest_after)
        else:
            counts["to_warmup" if new == WARMUP else "to_easy"] += 1
            self._wait[i] = first_wait(cfg, warmup=new == WARMUP)
        self._set_pool(i, old, new)
        if new in (WARMUP, EASY):
            self._due[i] = self._clock + self._wait[i]
            self._queues[new].schedule(i, self._due[i])
        if new == WARMUP and old != WARMUP:
            self._enforce_warmup_cap()

    def _set_pool(self, i: int, old: int, new: int) -> None:
        if old != new:
            self._sets[old].discard(i)
            self._sets[new].add(i)
            self._pool[i] = new
        if old in self._queues:
            self._queues[old].drop(i)

    def _enforce_warmup_cap(self) -> None:
        """Over ``max_warmup_pool``, park the prompt that failed most re-tests at the longest
        wait (a scan of the warm-up pool, made only when a cap is set)."""
        cap, longest = self.config.max_warmup_pool, self.config.max_retest_after
        if cap is None or len(self._sets[WARMUP]) <= cap:
            return
        members = np.asarray(self._sets[WARMUP].members)
        live = members[self._wait[members] < longest]
        if len(live) <= cap:
            return
        worst = int(live[np.lexsort((self._observed[live], self._wait[live]))[-1]])
        self._wait[worst] = longest
        self._due[worst] = self._clock + longest
        self._queues[WARMUP].schedule(worst, self._due[worst])
        self._counts["parked"] += 1

    def _count_group(self, successes: int, trials: int, pool: int) -> None:
        self._counts["groups_observed"] += 1
        signal = 0 < successes < trials
        self._counts["groups_with_signal"] += int(signal)
        if pool in (WARMUP, EASY):
            self._count_parked_look("warmup" if pool == WARMUP else "easy", signal, _EMA_WINDOW)
        lo, hi = self.config.band
        rate = max(1.0 / self._counts["groups_observed"], 1.0 / _EMA_WINDOW)
        self._ema["signal"] += (float(signal) - self._ema["signal"]) * rate
        if self._counts["groups_observed"] > _EMA_WINDOW // 4:  # skip the first probes of an
            # unknown pool: their signal says nothing about what is left to spend
            step = self.config.spend_gain * (float(signal) - self._floor())
            self._ema["spend"] = min(1.0, max(0.0, self._ema.get("spend", 0.0) + step))
        in_band = float(lo <= successes / trials <= hi)
        self._ema["in_band"] += (in_band - self._ema["in_band"]) * rate

    def _set_priors(self, priors: Mapping) -> None:
        """Apply pre-scoring counts to every prompt at once (vectorised: a million in seconds).
        ``prior_weight = 0`` ignores them altogether (the population prior too)."""
        if self.config.prior_weight == 0:
            return
        require_mapping(priors)
        idx, passes, trials = [], [], []
        hint = self.config.group_size_hint
        index = self._index
        unmatched = []
        for prompt_id, counts in priors.items():
            i = index.get(plain_id(prompt_id))  # numpy ints read as ints; a bool as no id
            if i is None:
                unmatched.append(prompt_id)
                continue
            p, t = prior_counts(prompt_id, counts, hint)
            if t <= 0:
                continue
            idx.append(i), passes.append(p), trials.append(t)
        self._counts["priors/unused"] += len(unmatched)
        warn_unmatched(unmatched, len(priors), self._ids)
        if idx:
            self._apply_priors(np.asarray(idx), np.asarray(passes), np.asarray(trials))

    def _apply_priors(self, idx: np.ndarray, passes: np.ndarray, trials: np.ndarray) -> None:
        cfg, w = self.config, self.config.prior_weight
        population.fold_priors(self._ema, passes, trials)
        self._add(idx, w * passes, w * (trials - passes), 0)
        lo, hi = cfg.band
        mean = self._means(idx)
        pools = np.where(mean < lo, WARMUP, np.where(mean > hi, EASY, ACTIVE)).astype(np.int8)
        self._pool[idx] = pools
        self._wait[idx] = np.where(
            pools == WARMUP,
            first_wait(cfg, warmup=True),
            np.where(pools == EASY, first_wait(cfg, warmup=False), 0.0),
        )
        # the likelier to disagree, the sooner due: a draw takes the earliest due first
        a, b = self._beta(idx)
        self._due[idx] = self._wait[idx] * (1 - expected_signal_array(a, b, self._group_size) / 2)
        n = len(self._ids)
        self._sets = [IndexSet(n, np.flatnonzero(self._pool == code)) for code in range(4)]
        for code, q in self._queues.items():
            members = np.flatnonzero(self._pool == code)
            q.rebuild(self._due[members], members)
        self._counts["priors/used"] += len(idx)

    def _lookup(self, prompt_id: Hashable) -> int:
        try:
            return self._index[plain_id(prompt_id)]
        except (KeyError, TypeError):
            raise KeyError(
                f"unknown prompt id {prompt_id!r} (the curriculum has {len(self._ids)} prompts)"
            ) from None
