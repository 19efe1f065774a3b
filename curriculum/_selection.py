"""Selection rules of the pass-rate curriculum: which prompts a draw takes, in what order.

``SelectionMixin`` holds the draw-time half of ``Curriculum`` (see ``sampler`` for the whole rule):
the due re-tests, the fresh-versus-in-band split, the fallback and the repeats, plus the population
signal chance and the discovery budget they use. Every score is computed on numpy arrays over at
most ``candidates(n)`` prompts, so a draw costs the same at any dataset size. Every random number
comes from ``self._rng`` (a numpy ``Generator`` saved in the state), so draws are reproducible.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable

import numpy as np

from passband.curriculum import _population as population
from passband.curriculum._ids import plain_id
from passband.curriculum._pools import ACTIVE, EASY, FRESH, WARMUP, first_wait
from passband.curriculum.posterior import expected_signal_array

_MIN_CANDIDATES = 1024
_MIN_LOOKS = 32  # looks at warm-up and at easy prompts before their signal shares are compared
_FRESH_CANDIDATES = 256  # unseen prompts the text model scores per draw (``_fill_predicted``)
# Due warm-up re-tests: the due set is usually far larger than the re-test slots, so their order
# decides which prompts that became learnable are found again. Half the slots go to the prompts
# likeliest to disagree now, by P(signal) under evidence decayed at ``RETEST_MEMORY`` times
# ``evidence_half_life`` (a success or two shows a prompt rising toward the band: at the
# estimate's own half-life every due prompt looks alike, never decaying ranks pre-scored prompts
# last forever); half (``STALE_SHARE``) to those looked at longest ago, a round robin: a prompt
# that jumps into the band with no success before shows nothing until it is re-tested, and the
# ranking alone never reached it. Two simulators (BENCHMARKS.md, "Recovery"): this one's gradual
# drift, where the ranking alone recovered 0.82 of such prompts (standard scenario) and the round
# robin alone 0.78; an independent one where a quarter of the hopeless prompts jump into the band
# at random times, 0.61 cold / 0.63 with priors with the ranking alone, 0.89 / 0.93 with the
# round robin alone, against uniform sampling's 0.88. Half and half: 0.82 / 0.83 and 0.72 / 0.85,
# at the same signal share in both.
RETEST_MEMORY = 2.0
STALE_SHARE = 0.5
HINT_WINDOW = 16  # draws; the draw-size hint is the largest draw of the last 16 to 32
PENDING_DRAWS = 32  # draws after which a prompt handed out and never observed stops blocking
MAX_GROUP_SIZE = 1024  # groups larger than this do not set G (P(signal) costs G steps)
_MIN_REUSE_DRAWS = 32  # largest draws' worth of groups before ``spaced_reuse`` brings one back


@functools.lru_cache(maxsize=64)
def band_signal(group_size: int, band: tuple[float, float]) -> float:
    """P(signal) of a group of ``group_size`` for a pass rate spread evenly over ``band``."""
    lo, hi = (float(x) for x in band)
    g = max(1, int(group_size))
    if hi - lo < 1e-9:
        return 1.0 - lo**g - (1.0 - lo) ** g
    ends = (hi ** (g + 1) - lo ** (g + 1)) + ((1 - lo) ** (g + 1) - (1 - hi) ** (g + 1))
    return 1.0 - ends / ((g + 1) * (hi - lo))


class SelectionMixin:
    """The draw-time methods of ``Curriculum``; not usable on its own."""

    def _candidates(self, n: int) -> int:
        return max(_MIN_CANDIDATES, self.config.candidates_per_slot * max(n, self._n_hint))

    def _known(self, taken: set[int]) -> tuple[np.ndarray, int]:
        """A uniform sample of the selectable known prompts (all of them when few), and how many
        there are in all."""
        codes = (ACTIVE, EASY) if self.config.easy_policy == "downweight" else (ACTIVE,)
        sets = [self._sets[c] for c in codes]
        total = sum(len(s) for s in sets) - sum(1 for i in taken if self._pool[i] in codes)
        cap = self._candidates(self._n_hint)
        picked: list[int] = []
        for s in sets:
            if total <= cap:
                picked += [i for i in s.members if i not in taken]
            else:  # each pool in proportion to its size
                picked += s.pick(self._rng, round(cap * len(s) / max(1, total)), taken)
        return np.asarray(picked, dtype=np.int64), max(0, total)

    def _fill_by_signal(self, k: int, chosen: list[int], taken: set[int]) -> None:
        """Fresh and in-band prompts on one score, P(signal): known prompts that beat an unseen
        one's chance go first (best first), fresh ones fill the rest. A known prompt drawn within
        the reuse cooldown is not drawn again (the fallback fills widely instead): re-drawing the
        few best prompts every step made the demo's model memorise them."""
        if k <= 0:
            return
        cfg = self.config
        known, n_known_all = self._known(taken)
        cand, q = self._ranked_fresh(k, taken)
        p_fresh = float(q.mean()) if len(q) else self._fresh_signal()
        chance = self._signal_chance(known)
        mass = float(chance.sum()) * (n_known_all / len(known)) if len(known) else 0.0
        cooldown = self._cooldown(mass, p_fresh)
        fresh = self._sets[FRESH]
        n_fresh = len(fresh) - sum(1 for i in taken if self._pool[i] == FRESH)
        rested = (self._rest(known, cooldown) >= 1.0).astype(float)  # not drawn within it
        score = chance * rested
        order = np.lexsort((self._rng.random(len(known)), -score))
        floor = cfg.min_explore_share + (cfg.surplus_explore_share - cfg.min_explore_share) * max(
            0.0, self._surplus()
        )
        k_floor = min(n_fresh, self._round(k * floor))
        if len(cand):
            self._fill_predicted(k, k_floor, (known, score), (cand, q), chosen, taken)
            return
        n_known = int(np.count_nonzero(score[order[: k - k_floor]] > p_fresh))
        # fresh ones ran out: any rested known prompt; the fallback fills the rest
        n_known = max(n_known, min(int(np.count_nonzero(score > 0)), k - k_floor - n_fresh))
        k_fresh = min(n_fresh, k - n_known)
        self._extend(chosen, taken, known[order[:n_known]].tolist(), "drawn/active")
        self._extend(chosen, taken, fresh.pick(self._rng, k_fresh, taken), "drawn/fresh")

    def _ranked_fresh(self, k: int, taken: set[int]) -> tuple[np.ndarray, np.ndarray]:
        """When unseen prompts are ranked by their text (``_predict``): a uniform sample of
        ``_FRESH_CANDIDATES`` of them (at least 4 per slot) and the model's P(signal) of each;
        empty arrays otherwise. The sample's mean is the unseen prompts' chance (the population
        share of first looks is biased once the model picks them)."""
        model = self._predictor
        if model is None or not model.ready or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        fresh = self._sets[FRESH]
        cand = fresh.pick(self._rng, max(_FRESH_CANDIDATES, 4 * k), taken)
        cand = np.asarray(cand, dtype=np.int64)
        return cand, model.predict(cand)

    def _fill_predicted(self, k: int, k_floor: int, known, fresh, chosen, taken) -> None:
        """``_fill_by_signal`` with ranked unseen prompts: known ``(idx, score)`` and unseen
        ``(idx, P(signal))`` on one score for all but ``k_floor`` slots, the rest of the draw
        (the exploration floor and any shortfall) uniform unseen prompts, so the model keeps seeing
        what it ranks low."""
        idx = np.concatenate([known[0], fresh[0]])
        sc = np.concatenate([known[1], fresh[1]])
        top = np.lexsort((self._rng.random(len(idx)), -sc))[: k - k_floor]
        top = top[sc[top] > 0]
        is_known = top < len(known[0])
        self._extend(chosen, taken, idx[top[is_known]].tolist(), "drawn/active")
        self._extend(chosen, taken, idx[top[~is_known]].tolist(), "drawn/fresh")
        rest = self._sets[FRESH].pick(self._rng, k - len(top), taken)
        self._extend(chosen, taken, rest, "drawn/fresh")

    def _cooldown(self, known_mass: float, p_fresh: float) -> float:
        """Groups before a drawn prompt may be drawn again: ``cooldown_factor`` times the in-band
        mass (expected in-band prompts among the known and the fresh ones), at least
        ``min_reuse_share`` of the dataset however few in-band prompts are left. A prompt that
        the walk would bring back only after the run ends rests ``spaced_reuse`` of the groups
        observed so far instead (``_rest``), never under ``_MIN_REUSE_DRAWS`` of the largest
        draws: a dataset larger than the run still brings its in-band prompts back."""
        cfg = self.config
        mass = known_mass + len(self._sets[FRESH]) * p_fresh
        cooldown = cfg.cooldown_factor * max(mass, cfg.min_reuse_share * len(self._ids))
        self._ema["cooldown"] = cooldown
        return cooldown

    def _rest(self, idx: np.ndarray, cooldown: float) -> np.ndarray:
        """How far each prompt is through its cooldown: groups observed since it was last drawn
        over ``cooldown`` (or over ``spaced_reuse``'s rest, for a prompt the walk would bring
        back only after the run's end), capped at 1 (a prompt never observed: 1)."""
        if not cooldown or not len(idx):
            return np.ones(len(idx))
        since = self._clock - self._stamp[idx]
        age = np.minimum(1.0, since / cooldown)
        cfg = self.config
        # an unknown length: the run is taken to go on as long again as it has run so far
        run = cfg.run_groups or max(2 * self._clock, _MIN_REUSE_DRAWS * self._n_max)
        spaced = max(cfg.spaced_reuse * self._clock, _MIN_REUSE_DRAWS * self._n_max)
        if cfg.spaced_reuse > 0 and cooldown > run - self._clock and spaced < cooldown:
            late = self._stamp[idx] + cooldown > run  # the walk would bring them back after it
            age = np.where(late, np.maximum(age, np.minimum(1.0, since / spaced)), age)
        return np.where(self._observed[idx] > 0, age, 1.0)

    def _signal_chance(self, idx: np.ndarray) -> np.ndarray:
        """P(signal) of prompts ``idx`` under their posteriors; easy ones (``downweight``)
        weighted by ``easy_weight``."""
        if not len(idx):
            return np.zeros(0)
        a, b = self._beta(idx)
        chance = expected_signal_array(a, b, self._group_size)
        return np.where(self._pool[idx] == EASY, chance * self.config.easy_weight, chance)

    def _fresh_signal(self) -> float:
        """P(signal) of an unseen prompt (see ``_population``)."""
        return population.fresh_signal(self._ema, self._clock, self.config.evidence_half_life)

    def _surplus(self) -> float:
        """Discovery budget (0..1): the signal share's excess over ``signal_floor``, integrated
        in ``_count_group`` (see ``CurriculumConfig.spend_gain``)."""
        return self._ema.get("spend", 0.0)

    def _floor(self) -> float:
        """``signal_floor`` at the run's G: below G = 8 even in-band prompts disagree less often
        (a pass rate spread evenly over the default band gives groups with signal 0.95 of the
        time at G = 8, 0.78 at G = 4), so the floor scales down by that ratio and the discovery
        budget is not locked at 0; above 8 it stays. Simulators at G = 4: recovery 0.40 -> 0.52
        (an independent one) and 0.73 -> 0.81 (``jump``), for 0.007 of signal share."""
        band = tuple(self.config.band)
        ratio = band_signal(self._group_size, band) / band_signal(8, band)
        return self.config.signal_floor * min(1.0, ratio)

    def _warmup_share(self) -> float:
        """Warm-up re-test share: the base, plus the discovery budget's part of the rest."""
        cfg = self.config
        top = max(cfg.max_warmup_retest_share, cfg.warmup_retest_share)
        return cfg.warmup_retest_share + (top - cfg.warmup_retest_share) * self._surplus()

    def _due_retests(self, pool: int, k: int, taken: set[int]) -> list[int]:
        """Up to ``k`` due prompts of ``pool``: for the warm-up pool half the likeliest to
        disagree now and half the stalest (``_warmup_order``), for the easy pool the likeliest to
        have slipped (lowest Thompson draw)."""
        if k <= 0:
            return []
        queue, cap = self._queues[pool], self._candidates(k)
        queue.advance(
            self._clock,
            lambda i, when: self._pool[i] == pool and self._due[i] == when,
            want=4 * cap + len(taken),
        )
        due = queue.due
        free = len(due) - sum(1 for i in taken if i in due)
        cand = (
            np.asarray([i for i in due.members if i not in taken], dtype=np.int64)
            if free <= cap
            else np.asarray(due.pick(self._rng, cap, taken), dtype=np.int64)
        )
        if not len(cand):
            return []
        if pool == WARMUP:
            return self._warmup_order(cand, k)
        a, b = self._beta(cand)
        order = np.argsort(self._rng.beta(a, b), kind="stable")
        return cand[order[:k]].tolist()

    def _warmup_order(self, cand: np.ndarray, k: int) -> list[int]:
        """``k`` of the due warm-up prompts ``cand``: ``STALE_SHARE`` of them (stochastically
        rounded) the ones looked at longest ago, the rest the likeliest to disagree now; ties at
        random, no sampling noise otherwise, so re-tests spread evenly."""
        noise = self._rng.random(len(cand))
        stale = np.lexsort((noise, self._stamp[cand]))[: self._round(k * STALE_SHARE)]
        a, b = self._beta(cand, half_life=RETEST_MEMORY * self.config.evidence_half_life)
        best = np.lexsort((noise, -expected_signal_array(a, b, self._group_size)))
        rest = best[~np.isin(best, stale)][: k - len(stale)]
        return cand[np.concatenate([stale, rest])].tolist()

    def _worth_a_retest(self, ranked: list[int], n: int) -> list[int]:
        """The base ``warmup_retest_share`` of re-tests always runs (the schedule); the discovery
        budget's extra ones only while a re-test's P(signal) beats an unseen prompt's, so surplus
        is not spent on long shots when fresh prompts are better."""
        k_base = self._round(n * self.config.warmup_retest_share)
        if len(ranked) <= k_base or not len(self._sets[FRESH]):
            return ranked
        extra = np.asarray(ranked[k_base:], dtype=np.int64)
        a, b = self._beta(extra)
        keep = expected_signal_array(a, b, self._group_size) >= self._fresh_signal()
        return ranked[:k_base] + extra[keep].tolist()

    def _fallback(self, k: int, taken: set[int]) -> list[int]:
        """Fill a short draw from any prompt not yet taken, best Thompson signal chance first
        (among a uniform sample of them when there are many)."""
        if k <= 0:
            return []
        n, cap = len(self._ids), self._candidates(k)
        if n - len(taken) <= cap:
            rest = np.asarray([i for i in range(n) if i not in taken], dtype=np.int64)
        else:
            draw = self._rng.integers(0, n, size=2 * cap)
            rest = np.asarray(
                list(dict.fromkeys(i for i in draw.tolist() if i not in taken)), dtype=np.int64
            )
        if not len(rest):
            return []
        a, b = self._beta(rest)
        theta = self._rng.beta(a, b)
        g = self._group_size
        u = 1.0 - theta**g - (1.0 - theta) ** g
        u = np.where(self._pool[rest] == EASY, u * self._easy_fallback_weight(), u)
        # prompts drawn within the cooldown go last, the longest rested first: a short draw is
        # filled wide, not by re-drawing the few prompts that just had signal (that memorises them)
        rest_key = self._rest(rest, self._ema.get("cooldown", 0.0))
        return rest[np.lexsort((-u, -rest_key))[:k]].tolist()

    def _count_parked_look(self, pool: str, signal: bool, window: int) -> None:
        """Fold one look at a ``"warmup"`` or ``"easy"`` prompt into that pool's signal share
        (a running mean, then an EMA over ``window`` looks), which ``_fallback`` compares."""
        ema = self._ema  # saved whole in the state; a state from before these keys starts at 0
        looks = ema[f"looks/{pool}"] = ema.get(f"looks/{pool}", 0.0) + 1.0
        old = ema.get(f"signal/{pool}", 0.0)
        ema[f"signal/{pool}"] = old + (float(signal) - old) * max(1.0 / looks, 1.0 / window)

    def _easy_fallback_weight(self) -> float:
        """Weight of too-easy prompts in ``_fallback``: 1 while looks at them have lately had
        signal more often than looks at warm-up prompts (each pool measured on ``_MIN_LOOKS``
        looks or more), ``easy_weight`` otherwise; it is read again at every draw. Late in a
        run, when the band has run dry, a real policy forgets what it no longer trains on: on
        the spread task (6 seeds) held-out accuracy fell from 60.1% at step 180 to 55.7% at step
        480 (2d+1d 0.84 -> 0.49 on seed 0) while the fallback spent 3 of 4 draws on warm-up
        prompts with signal 1 time in 11 (BENCHMARKS.md). With adaptive group sizes the two
        shares are read as they come, though larger groups disagree more often."""
        ema = self._ema
        looks = min(ema.get("looks/warmup", 0.0), ema.get("looks/easy", 0.0))
        if looks >= _MIN_LOOKS and ema.get("signal/easy", 0.0) > ema.get("signal/warmup", 0.0):
            return 1.0
        return self.config.easy_weight

    def _repeats(self, k: int, chosen: list[int], excluded: set[int]) -> list[int]:
        """Only when fewer distinct prompts exist than asked for: prompts handed out but not yet
        observed (not ``excluded``) first, then cycle through the draw again (or through all
        prompts when everything was excluded)."""
        if k <= 0:
            return []
        drawn = set(chosen)
        waiting = [i for i in self._pending if i not in drawn and i not in excluded][:k]
        base = chosen or list(range(len(self._ids)))
        rest = [base[j % len(base)] for j in range(k - len(waiting))]
        self._counts["drawn/repeat"] += k
        return waiting + rest

    def _blocked(self, exclude: Iterable[Hashable]) -> tuple[set[int], set[int]]:
        """The prompts a draw avoids (handed out and not yet observed, or excluded), and the
        excluded ones alone. A prompt never observed stops blocking after ``2 * n_hint`` groups
        or ``PENDING_DRAWS`` draws, and is forgotten then."""
        horizon = 2 * self._n_hint
        stale = [
            i
            for i, (c, d) in self._pending.items()
            if self._clock - c > horizon or self._draws - d > PENDING_DRAWS
        ]
        for i in stale:
            del self._pending[i]
        excluded = set()
        if exclude is None:
            exclude = ()
        elif isinstance(exclude, (str, bytes)) or not isinstance(exclude, Iterable):
            exclude = (exclude,)  # one id ("ab", 7), not the characters of a string
        for p in exclude:
            i = self._index.get(plain_id(p))  # a bool is no id (True would exclude id 1)
            if i is not None:
                excluded.add(i)
        return set(self._pending) | excluded, excluded

    def unscored(self, prompt_id: Hashable) -> None:
        """Record that ``prompt_id``'s group had no checkable answer (``GRPOTrainer`` calls it; a
        broken reference, answers that always time out): an unseen or in-band prompt waits in the
        warm-up pool as a failed one does, a parked one where it is; the wait doubles each time,
        the estimate is unchanged. Unobserved, it had stayed unseen and was drawn again and again
        (with 15% of 2,000 prompts unscorable, 19% of the last third of a 300-step run went to
        them; uniform sampling: 15%)."""
        i = self._lookup(prompt_id)
        self._pending.pop(i, None)
        old, cfg = int(self._pool[i]), self.config
        parked = old in (WARMUP, EASY)  # stays where it is, its wait doubled
        new = old if parked else WARMUP
        wait = self._wait[i] * cfg.retest_backoff if parked else first_wait(cfg, warmup=True)
        self._wait[i] = min(wait, cfg.max_retest_after)
        if self._succ[i] + self._fail[i] == 0:  # no evidence to age (the stamp dates it): as
            self._stamp[i] = self._clock  # looked at now, for the round robin of the stalest
        self._set_pool(i, old, new)
        self._due[i] = self._clock + self._wait[i]
        self._queues[new].schedule(i, self._due[i])
        self._counts["unscored"] += 1
        if not parked:
            self._enforce_warmup_cap()

    def _look_pool(self, i: int) -> int:
        """The pool an observation of ``i`` counts from: a prompt parked by ``unscored`` before
        anything was known of it goes back to the unseen pool, so its first look counts as one
        (the population prior, the text model, ``probes``)."""
        pool = int(self._pool[i])
        if pool == WARMUP and not self._observed[i] and not self._succ[i] + self._fail[i]:
            self._set_pool(i, WARMUP, FRESH)
            return FRESH
        return pool

    def _note_draw(self, n: int) -> None:
        """The draw size that the candidate count and the blocking horizon follow: the largest
        of the last ``HINT_WINDOW`` to ``2 * HINT_WINDOW`` draws, so one outsized draw does not
        slow every later one (a run's step draws keep it at their size)."""
        self._draws += 1
        self._n_max = max(self._n_max, n)  # the run's largest: refills do not shrink it
        self._n_window = max(self._n_window, n)
        self._n_hint = max(self._n_hint, n)
        if self._draws % HINT_WINDOW == 0:
            self._n_hint, self._n_window = self._n_window, 0

    def _note_group_size(self, trials: int) -> None:
        """G of P(signal): the group size observed most often (``group_size_hint`` until the
        first group), so one odd group does not re-rank every prompt."""
        if trials > MAX_GROUP_SIZE:
            return
        sizes = self._sizes
        sizes[trials] = sizes.get(trials, 0) + 1
        if sizes[trials] > sizes.get(self._group_size, 0):
            self._group_size = trials

    def _extend(self, chosen: list[int], taken: set[int], picked: list[int], key: str) -> None:
        chosen.extend(picked)
        taken.update(picked)
        self._counts[key] += len(picked)

    def _round(self, x: float) -> int:
        """Stochastic rounding, so a 5% share of a draw of 8 is still 5% on average."""
        whole = int(x)
        return whole + (1 if self._rng.random() < x - whole else 0)
