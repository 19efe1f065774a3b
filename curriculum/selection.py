"""Selection rules of the pass-rate curriculum: which prompts a draw takes, in what order.

``SelectionMixin`` holds the draw-time half of ``Curriculum`` (see ``sampler`` for the whole rule):
the due re-tests, the fresh-versus-in-band split (``selection="signal"`` or ``"pool"``), the
fallback and the repeats, plus the population signal chance and the discovery budget they use.
It keeps no state of its own; it reads and updates the ``Curriculum`` attributes ``config``,
``_ids``, ``_index``, ``_beliefs``, ``_rng``, ``_clock``, ``_n_hint``, ``_group_size``,
``_pending``, ``_counts`` and ``_ema``. Every random number is drawn from ``self._rng``, in the
same order as before the split, so draws and ``state_dict()`` are unchanged.
"""

from __future__ import annotations

from typing import Hashable, Iterable

from passband.curriculum.posterior import ACTIVE, EASY, FRESH, HARD, signal_utility

# A drawn prompt's score is scaled by (age / cooldown) ** _REST_POWER. The root makes the wait
# depend on how good the alternative is: it is re-drawn once age / cooldown reaches (P(signal) of
# a fresh prompt / its own) ** (1 / _REST_POWER): about a full cooldown (an epoch of the in-band
# mass) when fresh prompts are nearly as good, about 1% of it when they are a third as good.
_REST_POWER = 0.25


class SelectionMixin:
    """The draw-time methods of ``Curriculum``; not usable on its own."""

    def _fill_main(self, k: int, chosen: list[int], taken: set[int]) -> None:
        """Split the remaining ``k`` slots between fresh prompts and the in-band pool."""
        if k <= 0:
            return
        if self.config.selection == "signal":
            self._fill_by_signal(k, chosen, taken)
            return
        cfg = self.config
        fresh = [i for i, b in enumerate(self._beliefs) if b.pool == FRESH and i not in taken]
        active = [i for i, b in enumerate(self._beliefs) if i not in taken and (
            b.pool == ACTIVE or (b.pool == EASY and cfg.easy_policy == "downweight"))]
        n_active = sum(1 for b in self._beliefs if b.pool == ACTIVE)
        target = cfg.active_factor * self._n_hint
        share = max(0.0, 1.0 - n_active / target) ** 2 if target > 0 else 0.0
        floor = cfg.min_explore_share + (cfg.surplus_explore_share - cfg.min_explore_share) * max(
            0.0, self._surplus())
        share = min(cfg.max_explore_share, max(floor, share))
        k_fresh = min(len(fresh), max(self._round(k * share), k - len(active)))
        ranked = self._rank_by_signal(active, k - k_fresh)
        self._extend(chosen, taken, ranked, "drawn/active")
        picked = self._rng.sample(fresh, k_fresh) if k_fresh else []
        self._extend(chosen, taken, picked, "drawn/fresh")

    def _fill_by_signal(self, k: int, chosen: list[int], taken: set[int]) -> None:
        """Fresh and in-band prompts on one score, P(signal) times a reuse cooldown: known prompts
        that beat an unseen one's chance go first (best first), fresh ones fill the rest."""
        cfg, now = self.config, self._clock
        fresh = [i for i, b in enumerate(self._beliefs) if b.pool == FRESH and i not in taken]
        known = [i for i, b in enumerate(self._beliefs) if i not in taken and (
            b.pool == ACTIVE or (b.pool == EASY and cfg.easy_policy == "downweight"))]
        p_fresh = self._fresh_signal()
        chance = {i: self._signal_chance(i) for i in known}
        cooldown = self._cooldown(sum(chance.values()), p_fresh)
        ranked = []
        for i in known:
            b = self._beliefs[i]
            rested = 1.0
            if b.observed and cooldown:
                rested = min(1.0, (now - b.stamp) / cooldown) ** _REST_POWER
            ranked.append((-chance[i] * rested, self._rng.random(), i))
        ranked.sort()
        floor = cfg.min_explore_share + (cfg.surplus_explore_share - cfg.min_explore_share) * max(
            0.0, self._surplus())
        k_floor = min(len(fresh), self._round(k * floor))
        n_known = sum(1 for score, _, _ in ranked[:k - k_floor] if -score > p_fresh)
        n_known = min(len(ranked), max(n_known, k - k_floor - len(fresh)))  # fresh ones ran out
        k_fresh = min(len(fresh), k - n_known)
        self._extend(chosen, taken, [i for _, _, i in ranked[:n_known]], "drawn/active")
        self._extend(chosen, taken, self._rng.sample(fresh, k_fresh) if k_fresh else [], "drawn/fresh")

    def _cooldown(self, known_mass: float, p_fresh: float) -> float:
        """Groups after which a drawn prompt scores in full again: ``cooldown_factor`` times the
        in-band mass (expected in-band prompts among the known and the fresh ones)."""
        n_fresh = sum(1 for b in self._beliefs if b.pool == FRESH)
        cooldown = self.config.cooldown_factor * (known_mass + n_fresh * p_fresh)
        self._ema["cooldown"] = cooldown
        return cooldown

    def _signal_chance(self, i: int) -> float:
        """P(signal) of prompt ``i`` under its posterior; easy prompts (``downweight``) weighted."""
        cfg, b = self.config, self._beliefs[i]
        chance = b.expected_signal(self._clock, cfg.evidence_half_life, cfg.base_prior,
                                   self._group_size)
        return chance * cfg.easy_weight if b.pool == EASY else chance

    def _fresh_signal(self) -> float:
        """P(signal) of an unseen prompt: the decayed share of first looks that had signal, from a
        Beta(1, 1) start (the empirical-Bayes population prior)."""
        factor = 0.5 ** ((self._clock - self._ema.get("probe_stamp", 0.0))
                         / self.config.evidence_half_life)
        return ((self._ema.get("probe_signal", 0.0) * factor + 1.0)
                / (self._ema.get("probe_n", 0.0) * factor + 2.0))

    def _count_probe(self, signal: bool) -> None:
        """Fold a first look at a prompt into the population's decayed signal share."""
        factor = 0.5 ** ((self._clock - self._ema.get("probe_stamp", 0.0))
                         / self.config.evidence_half_life)
        self._ema["probe_signal"] = self._ema.get("probe_signal", 0.0) * factor + float(signal)
        self._ema["probe_n"] = self._ema.get("probe_n", 0.0) * factor + 1.0
        self._ema["probe_stamp"] = float(self._clock)

    def _surplus(self) -> float:
        """Discovery budget (0..1): the signal share's excess over ``signal_floor``, integrated
        in ``_count_group`` (see ``CurriculumConfig.spend_gain``)."""
        return self._ema.get("spend", 0.0)

    def _hard_share(self) -> float:
        """Warm-up re-test share: the base, plus the discovery budget's part of the rest."""
        cfg = self.config
        top = max(cfg.max_hard_retest_share, cfg.hard_retest_share)
        return cfg.hard_retest_share + (top - cfg.hard_retest_share) * self._surplus()

    def _rank_by_signal(self, candidates: list[int], k: int) -> list[int]:
        """Top ``k`` candidates by a Thompson draw of the chance a group carries signal."""
        if k <= 0 or not candidates:
            return []
        cfg, g = self.config, self._group_size
        scored = []
        for i in candidates:
            b = self._beliefs[i]
            u = signal_utility(b.draw(self._rng, self._clock, cfg.evidence_half_life,
                                      cfg.base_prior), g)
            scored.append((-(u * cfg.easy_weight if b.pool == EASY else u), i))
        scored.sort()
        return [i for _, i in scored[:k]]

    def _due_retests(self, pool: str, k: int, taken: set[int]) -> list[int]:
        """Up to ``k`` due prompts of ``pool``: for the warm-up pool the likeliest to have become
        learnable (highest Thompson draw), for the easy pool the likeliest to have slipped."""
        if k <= 0:
            return []
        cfg = self.config
        due = [i for i, b in enumerate(self._beliefs)
               if b.pool == pool and b.due <= self._clock and i not in taken]
        if pool == HARD:  # the likeliest to disagree now: old evidence or a few successes
            return self._rank_by_expected_signal(due, k)
        scored = sorted((self._beliefs[i].draw(self._rng, self._clock, cfg.evidence_half_life,
                                               cfg.base_prior), i) for i in due)
        return [i for _, i in scored[:k]]

    def _worth_a_retest(self, ranked: list[int], n: int) -> list[int]:
        """The base ``hard_retest_share`` of re-tests always runs (the schedule); the discovery
        budget's extra ones (``selection="signal"``) only while a re-test's P(signal) beats an
        unseen prompt's, so surplus is not spent on long shots when fresh prompts are better."""
        cfg = self.config
        if cfg.selection != "signal" or not ranked:
            return ranked
        k_base = self._round(n * cfg.hard_retest_share)
        if len(ranked) <= k_base or not any(
                b.pool == FRESH for b in self._beliefs):
            return ranked
        p_fresh = self._fresh_signal()
        return ranked[:k_base] + [i for i in ranked[k_base:] if self._beliefs[i].expected_signal(
            self._clock, cfg.evidence_half_life, cfg.base_prior, self._group_size) >= p_fresh]

    def _fallback(self, k: int, taken: set[int]) -> list[int]:
        """Fill a short draw from any prompt not yet taken, best signal chance first."""
        if k <= 0:
            return []
        rest = [i for i in range(len(self._ids)) if i not in taken]
        return self._rank_by_signal(rest, k)

    def _rank_by_expected_signal(self, candidates: list[int], k: int) -> list[int]:
        """Top ``k`` by the posterior chance that a group disagrees, without sampling noise: among
        warm-up prompts (all alike hopeless once) it puts those with a few successes or the
        stalest evidence first, so re-tests spread evenly instead of by luck of the draw."""
        if k <= 0 or not candidates:
            return []
        cfg, g = self.config, self._group_size
        scored = sorted((-self._beliefs[i].expected_signal(
            self._clock, cfg.evidence_half_life, cfg.base_prior, g), self._rng.random(), i)
            for i in candidates)
        return [i for _, _, i in scored[:k]]

    def _repeats(self, k: int, chosen: list[int]) -> list[int]:
        """Only when fewer distinct prompts exist than asked for: cycle through the draw again
        (or through all prompts when everything was excluded)."""
        if k <= 0:
            return []
        base = chosen or list(range(len(self._ids)))
        self._counts["drawn/repeat"] += k
        return [base[j % len(base)] for j in range(k)]

    def _blocked(self, exclude: Iterable[Hashable]) -> set[int]:
        horizon = 2 * self._n_hint  # a prompt never observed stops blocking after this many groups
        blocked = {i for i, c in self._pending.items() if self._clock - c <= horizon}
        blocked.update(self._index[p] for p in exclude if p in self._index)
        return blocked

    def _extend(self, chosen: list[int], taken: set[int], picked: list[int], key: str) -> None:
        chosen.extend(picked)
        taken.update(picked)
        self._counts[key] += len(picked)

    def _round(self, x: float) -> int:
        """Stochastic rounding, so a 5% share of a draw of 8 is still 5% on average."""
        whole = int(x)
        return whole + (1 if self._rng.random() < x - whole else 0)
