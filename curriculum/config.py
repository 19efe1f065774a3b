"""The curriculum's knobs, in one frozen object validated at construction.

Time is counted in *groups observed* (one ``observe`` call = one tick), not in trainer steps: the
curriculum cannot tell a new step from a refill round, and groups observed is what actually moves
the estimates. With 64 prompts per step, 1024 groups is about 16 steps.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

EASY_POLICIES = ("drop", "downweight")
SELECTIONS = ("signal", "pool")


def _check_range(name: str, value: float, low: float, high: float, *, open_low=False) -> None:
    bad = value <= low if open_low else value < low
    if bad or value > high:
        bracket = "(" if open_low else "["
        raise ValueError(f"CurriculumConfig.{name}={value!r} is outside the allowed range "
                         f"{bracket}{low}, {high}]")


@dataclass(frozen=True)
class CurriculumConfig:
    """Every decision the sampler makes is driven by one of these fields."""

    band: tuple[float, float] = (0.2, 0.8)
    """Pass-rate band [low, high] whose prompts give groups that disagree; outside it a group of
    answers is usually all right or all wrong and teaches nothing."""
    prior_weight: float = 0.5
    """Multiplier on pre-scoring counts: another model (or another temperature) may have made them,
    so 8 scored trials count as 4 observed ones by default."""
    base_prior: tuple[float, float] = (1.0, 1.0)
    """Beta(a, b) pseudo-counts every prompt starts from before any evidence."""
    evidence_half_life: float = 1024.0
    """Groups observed (across all prompts) after which an old observation counts half: the policy
    moves, so old evidence goes stale."""
    max_evidence: float = 48.0
    """Cap on the total (decayed) trials behind one estimate, so a prompt seen often still follows
    the policy within a few groups."""
    group_size_hint: int = 8
    """Group size assumed for the signal utility until ``observe`` reports the real one (the
    constructor also accepts it as ``group_size=``)."""
    selection: str = "signal"
    """How fresh and in-band prompts share a draw. ``signal``: every candidate is scored by its
    chance of a mixed group, P(signal) = 1 - E[p^G] - E[(1-p)^G] under its posterior; an unseen
    prompt gets the population's chance (the share of first looks that had signal), and a prompt
    just drawn is scored down for ``cooldown_factor`` in-band masses. When most of the data is in
    band, fresh prompts are as good as known ones and the draw covers the data like uniform epochs;
    when it is not, the known in-band prompts win. ``pool``: the older rule, a small in-band pool
    of ``active_factor`` draws re-drawn by a Thompson sample (a tiny model memorises it)."""
    cooldown_factor: float = 1.0
    """``selection="signal"``: a drawn prompt's score is multiplied by ``(age / cooldown) ** 0.25``
    (capped at 1), where ``cooldown`` is this factor times the in-band mass (the sum of P(signal)
    over known and fresh candidates, in groups observed): epoch-like coverage while fresh prompts
    are nearly as good, quick reuse when they are much worse. 0 turns the cooldown off."""
    active_factor: float = 2.0
    """``selection="pool"`` only. The in-band pool should hold this many times the prompts asked
    for per ``sample`` call.
    Short of it, a share ``(1 - pool / target) ** 2`` of each draw probes fresh prompts: many when
    the pool is empty, few once it nearly fills a batch (a probe is right only ~1 time in 3)."""
    min_explore_share: float = 0.02
    """Share of each draw that always goes to fresh prompts while any are left, so the sampler keeps
    learning about the data it has not seen."""
    surplus_explore_share: float = 0.2
    """Like ``max_hard_retest_share`` for fresh prompts: with signal to spare, up to this share of
    each draw probes prompts never seen, which may have become learnable meanwhile."""
    max_explore_share: float = 1.0
    """Upper bound on the share of a draw spent on fresh prompts when the pool is short
    (``selection="pool"`` only)."""
    hard_retest_share: float = 0.05
    """At most this share of each draw re-tests due prompts of the warm-up (too hard) pool."""
    max_hard_retest_share: float = 0.2
    """Signal beyond ``signal_floor`` is spent on re-tests: the warm-up share rises linearly with
    the discovery budget (see ``spend_gain``) from ``hard_retest_share`` (budget 0) to this
    (budget 1); never below ``hard_retest_share``. It finds prompts that became learnable sooner,
    and once they do, re-tests carry signal themselves, so the budget grows further. With
    ``selection="signal"`` the extra re-tests (beyond ``hard_retest_share``) are made only while
    their P(signal) is at least a fresh prompt's."""
    signal_floor: float = 0.8
    """Share of groups with signal that the sampler protects before spending on extra re-tests
    and probes: the discovery budget holds the long-run signal share near it."""
    spend_gain: float = 0.005
    """How fast the discovery budget (0..1) follows the signal share: each observed group adds
    ``spend_gain * (signal - signal_floor)`` (signal is 0 or 1), so it grows while groups carry
    more signal than the floor asks and shrinks when they carry less. An integral, not a
    proportional, controller: it settles where the signal share equals the floor, instead of
    spending nothing until the share is already above it. At 0.005 a sustained surplus of 0.1
    fills the budget in about 2000 groups; larger follows faster but noisier."""
    hard_retest_after: float = 512.0
    """Groups observed before a too-hard prompt is first due for a re-test."""
    easy_retest_share: float = 0.02
    """At most this share of each draw re-tests due prompts of the too-easy pool."""
    easy_retest_after: float = 4096.0
    """Groups observed before a too-easy prompt is first due for a re-test (rarely: easy prompts
    seldom get hard again)."""
    retest_backoff: float = 2.0
    """A unanimous re-test (no sign of movement) multiplies the prompt's wait by this factor; a
    mixed one keeps the wait at its first value."""
    max_retest_after: float = 4096.0
    """Longest wait between re-tests of one prompt (it also caps the two first waits above): a
    hopeless prompt is never deleted."""
    easy_policy: str = "drop"
    """``drop``: too-easy prompts are only re-tested; ``downweight``: they stay selectable with
    their utility multiplied by ``easy_weight``."""
    easy_weight: float = 0.1
    """Utility multiplier for too-easy prompts when ``easy_policy="downweight"``."""
    max_hard_pool: int | None = None
    """Cap on the warm-up pool; beyond it the longest-hopeless prompts are parked (never deleted,
    re-tested only at ``max_retest_after``). None = no cap."""

    def __post_init__(self) -> None:
        lo, hi = self.band
        if not 0.0 <= lo < hi <= 1.0:
            raise ValueError(f"CurriculumConfig.band={self.band!r} must satisfy 0 <= low < high <= 1")
        object.__setattr__(self, "band", (float(lo), float(hi)))
        a, b = self.base_prior
        if a <= 0 or b <= 0:
            raise ValueError(f"CurriculumConfig.base_prior={self.base_prior!r} needs both > 0")
        _check_range("prior_weight", self.prior_weight, 0.0, 1e6)
        _check_range("evidence_half_life", self.evidence_half_life, 0.0, 1e12, open_low=True)
        _check_range("max_evidence", self.max_evidence, 1.0, 1e12)
        _check_range("group_size_hint", self.group_size_hint, 2, 1_000_000)
        _check_range("active_factor", self.active_factor, 0.0, 1e6)
        _check_range("cooldown_factor", self.cooldown_factor, 0.0, 1e3)
        if self.selection not in SELECTIONS:
            raise ValueError(f"CurriculumConfig.selection={self.selection!r} must be one of "
                             f"{SELECTIONS}")
        _check_range("min_explore_share", self.min_explore_share, 0.0, 1.0)
        _check_range("max_explore_share", self.max_explore_share, self.min_explore_share, 1.0)
        _check_range("surplus_explore_share", self.surplus_explore_share, 0.0, 1.0)
        _check_range("spend_gain", self.spend_gain, 0.0, 1.0)
        for name in ("hard_retest_share", "easy_retest_share", "easy_weight", "signal_floor"):
            _check_range(name, getattr(self, name), 0.0, 1.0)
        _check_range("max_hard_retest_share", self.max_hard_retest_share, 0.0, 1.0)
        for name in ("hard_retest_after", "easy_retest_after", "max_retest_after"):
            _check_range(name, getattr(self, name), 0.0, 1e12)
        _check_range("retest_backoff", self.retest_backoff, 1.0, 1e3)
        if self.easy_policy not in EASY_POLICIES:
            raise ValueError(f"CurriculumConfig.easy_policy={self.easy_policy!r} must be one of "
                             f"{EASY_POLICIES}")
        if self.max_hard_pool is not None and self.max_hard_pool < 0:
            raise ValueError(f"CurriculumConfig.max_hard_pool={self.max_hard_pool!r} must be >= 0 "
                             "or None")

    @classmethod
    def from_options(cls, band=None, **options) -> "CurriculumConfig":
        """Build from keyword options, naming the valid ones when a key is unknown."""
        valid = {f.name for f in fields(cls)}
        if "group_size" in options:  # the trainer's name for it
            if "group_size_hint" in options:
                raise TypeError("pass group_size or group_size_hint, not both")
            options["group_size_hint"] = options.pop("group_size")
        unknown = sorted(set(options) - valid)
        if unknown:
            raise TypeError(f"unknown curriculum option(s) {unknown}; valid: {sorted(valid)}")
        if band is not None:
            options["band"] = tuple(band)
        return cls(**options)
