"""The curriculum's knobs, in one frozen object validated at construction.

Time is counted in *groups observed* (one ``observe`` call = one tick), not in trainer steps: the
curriculum cannot tell a new step from a refill round, and groups observed is what actually moves
the estimates. With 64 prompts per step, 1024 groups is about 16 steps.

One name per concept: prompts below the band sit in the **warm-up** pool (``pool/warmup`` in the
metrics, ``warmup_*`` here). The names of the previous release (``hard_retest_share``,
``max_hard_retest_share``, ``hard_retest_after``, ``max_hard_pool``) are accepted by
``from_options`` (and so by ``Curriculum(...)`` and the ``[curriculum]`` TOML section) with a
``DeprecationWarning`` for one release.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields

from passband.curriculum.posterior import check_band
from passband.errors import ConfigError, UnknownSettingError, unknown_names

EASY_POLICIES = ("drop", "downweight")
DEPRECATED_NAMES = {
    "hard_retest_share": "warmup_retest_share",
    "max_hard_retest_share": "max_warmup_retest_share",
    "hard_retest_after": "warmup_retest_after",
    "max_hard_pool": "max_warmup_pool",
}
_REMOVED = {
    "selection": "the 'pool' rule was removed (benchmarks showed a tiny model memorising its small "
    "pool); P(signal) scoring is the only rule",
    "active_factor": "it belonged to the removed selection='pool' rule",
    "max_explore_share": "it belonged to the removed selection='pool' rule",
}


def _check_range(
    name: str, value, low: float, high: float, *, open_low=False, open_high=False, integer=False
) -> None:
    is_num = isinstance(value, (int, float)) and not isinstance(value, bool)
    bracket = "(" if open_low else "["
    kind = "an integer" if integer else "a number"
    allowed = f"{kind} in {bracket}{low:g}, {high:g}{')' if open_high else ']'}"
    if not is_num:
        raise ConfigError(
            f"CurriculumConfig.{name}={value!r} is not a number (a {type(value).__name__}): "
            f"expected {allowed}"
        )
    bad = isinstance(value, float) and not math.isfinite(value)
    if not bad:
        bad = (value <= low if open_low else value < low) or (
            value >= high if open_high else value > high
        )
    if integer and not bad:
        bad = not isinstance(value, int)
    if bad:
        raise ConfigError(
            f"CurriculumConfig.{name}={value!r} is outside the allowed range: {allowed}"
        )


@dataclass(frozen=True)
class CurriculumConfig:
    """Every decision the sampler makes is driven by one of these fields."""

    def __new__(cls, *args, **kwargs):
        """An unknown keyword is a ``ConfigError`` (also a ``TypeError``) that lists the fields."""
        names = [f.name for f in fields(cls)]
        unknown = set(kwargs) - set(names)
        if unknown:
            raise UnknownSettingError(
                f"CurriculumConfig: {unknown_names('curriculum option', unknown, names)}"
            )
        return super().__new__(cls)

    band: tuple[float, float] = (0.2, 0.8)
    """Pass-rate band [low, high] whose prompts give groups that disagree; outside it a group of
    answers is usually all right or all wrong and teaches nothing. The one place the band is set
    (``GRPOConfig.band`` is a deprecated alias that forwards here)."""
    success_threshold: float = 0.5
    """What counts as a success, for pass rates (``observe`` counts and pre-scoring alike): a
    ``Verdict``'s ``passed``; a reward that returns a plain number passes when the number is at
    or above this. So a shaped reward of 0.1 / 0.7 reads as fail / pass, not as always solved.
    Any finite number: a reward on [-1, 0] (0 when right) takes e.g. -0.5."""
    prior_weight: float = 0.5
    """Multiplier on pre-scoring counts: another model (or another temperature) may have made them,
    so 8 scored trials count as 4 observed ones by default."""
    mismatch_prior_weight: float = 0.5
    """Extra multiplier on ``prior_weight`` for rows whose recorded scoring settings
    (``score_model``, ``score_temperature``, ``score_top_p``, ``score_top_k``, ``score_stop``,
    ``score_max_tokens``, ...) differ from the training run's:
    counts made under other settings say less about this policy."""
    base_prior: tuple[float, float] = (1.0, 1.0)
    """Beta(a, b) pseudo-counts every prompt starts from before any evidence."""
    empirical_prior: bool = True
    """Fit ``base_prior``'s mean and spread to the first looks at prompts (empirical Bayes; see
    ``curriculum._population``) once 32 are in, never with more pseudo-counts than ``base_prior``.
    On bimodal data (much solved, much out of reach) one lucky success in 8 then reads as below
    the band, not as a pass rate of 0.2. False: ``base_prior`` throughout."""
    evidence_half_life: float = 1024.0
    """Groups observed (across all prompts) after which an old observation counts half: the policy
    moves, so old evidence goes stale. Due warm-up re-tests are ranked on twice this memory
    (``_selection.RETEST_MEMORY``)."""
    max_evidence: float = 48.0
    """Cap on the total (decayed) trials behind one estimate, so a prompt seen often still follows
    the policy within a few groups."""
    group_size_hint: int = 8
    """Group size assumed for the signal chance until ``observe`` reports the real one (the
    constructor also accepts it as ``group_size=``)."""
    cooldown_factor: float = 1.0
    """A drawn prompt is not drawn again for ``cooldown`` groups observed: this factor times the
    in-band mass (the sum of P(signal) over known and fresh candidates), at least
    ``min_reuse_share`` of the dataset (shorter only by ``spaced_reuse``, for a prompt the walk
    would bring back after the run's end). So the in-band prompts are walked through like
    epochs. A softer rule that let the best prompts back early (their score scaled by (age/cooldown)^0.25)
    had 3-4 points more groups with signal in the simulator, and 3 points less held-out accuracy
    in the demo: its tiny model memorised the prompts it kept re-drawing. 0 turns it off."""
    min_reuse_share: float = 0.1
    """Floor of the cooldown, as a share of the dataset's prompts (uniform sampling draws a prompt
    again every ``len(dataset)`` groups on average; ``spaced_reuse`` may shorten the rest of a
    prompt the walk would bring back after the run's end). Without it the cooldown shrinks with
    the in-band pool, and the last few prompts in band are re-drawn every step."""
    spaced_reuse: float = 0.5
    """A prompt that the in-band walk would bring back only after the run ends (its last draw
    plus the cooldown past ``run_groups``) may come back once the groups observed since its last
    draw are this share of all groups observed so far (0.5: once the run has doubled since), and
    never within 32 times the largest draw, in groups observed. At a million prompts and 300
    draws of 64, no in-band prompt was drawn again without it, and a cold curriculum had less
    signal than uniform sampling (0.332 against 0.349; with it 0.401, with priors 0.741 -> 0.759:
    ``benchmarks/bench_curriculum_million.py``); each prompt comes back at most log2(run / first
    draw) times. While a run can still walk its in-band prompts the draws are unchanged. 0 turns
    it off; below 1 (at 1 a prompt would never come back)."""
    run_groups: int = 0
    """Groups the run will observe, when known (``GRPOTrainer`` sets ``max_steps`` x
    ``prompts_per_step`` x ``max_oversample``, the most it can roll out); 0: unknown, taken to
    go on as long again as it has run so far (at least 32 of the largest draws). An estimate
    far above the real run brings no in-band prompt back: a cold curriculum over 40,000 prompts
    and 12,800 groups then had less signal than uniform sampling (0.390 against 0.404; 0.465 at
    the exact length, 0.450 unknown). Only ``spaced_reuse`` reads it."""
    candidates_per_slot: int = 16
    """Known prompts scored per draw slot: a draw of ``n`` ranks a uniform sample of at most
    ``candidates_per_slot * n`` (at least 1024) known prompts, so its cost does not grow with the
    dataset; with fewer known prompts than that, all of them are ranked."""
    min_explore_share: float = 0.02
    """Share of each draw that always goes to fresh prompts while any are left, so the sampler keeps
    learning about the data it has not seen."""
    surplus_explore_share: float = 0.2
    """Like ``max_warmup_retest_share`` for fresh prompts: with signal to spare, up to this share of
    each draw probes prompts never seen, which may have become learnable meanwhile."""
    warmup_retest_share: float = 0.2
    """At most this share of each draw re-tests due prompts of the warm-up (too hard) pool. A
    prompt that becomes learnable is found only by a re-test: at 0.05 the curriculum found fewer
    of them than uniform sampling in 9 of 11 simulated worlds cold (8 with priors), at 0.2 in 1 of
    11 (6 with priors), for 0.04 less cold signal share and 0.01 less with priors (still about
    twice uniform's; BENCHMARKS.md, "Curriculum")."""
    max_warmup_retest_share: float = 0.2
    """Signal beyond ``signal_floor`` is spent on re-tests: the warm-up share rises linearly with
    the discovery budget (see ``spend_gain``) from ``warmup_retest_share`` (budget 0) to this
    (budget 1); never below ``warmup_retest_share``. The extra re-tests are made only while their
    P(signal) is at least a fresh prompt's."""
    signal_floor: float = 0.8
    """Share of groups with signal that the sampler protects before spending on extra re-tests
    and probes: the discovery budget holds the long-run signal share near it. Stated for G = 8;
    at a smaller G it scales down with what in-band prompts can give (0.66 at G = 4)."""
    spend_gain: float = 0.005
    """How fast the discovery budget (0..1) follows the signal share: each observed group adds
    ``spend_gain * (signal - signal_floor)`` (signal is 0 or 1). An integral controller: it
    settles where the signal share equals the floor. At 0.005 a sustained surplus of 0.1 fills
    the budget in about 2000 groups; larger follows faster but noisier."""
    warmup_retest_after: float = 512.0
    """Groups observed before a warm-up (too hard) prompt is first due for a re-test."""
    easy_retest_share: float = 0.02
    """At most this share of each draw re-tests due prompts of the too-easy pool."""
    easy_retest_after: float = 4096.0
    """Groups observed before a too-easy prompt is first due for a re-test (rarely: easy prompts
    seldom get hard again)."""
    retest_backoff: float = 2.0
    """A re-test that leaves the prompt outside the band multiplies its wait by this factor,
    whether its group was unanimous or mixed (a prompt that moves into the band is readmitted
    at once; one that stays out makes room for prompts not looked at since)."""
    max_retest_after: float = 4096.0
    """Longest wait between re-tests of one prompt (it also caps the two first waits above): a
    hopeless prompt is never deleted."""
    easy_policy: str = "drop"
    """``drop``: too-easy prompts are only re-tested; ``downweight``: they stay selectable with
    their score multiplied by ``easy_weight``."""
    easy_weight: float = 0.1
    """Score multiplier for too-easy prompts when ``easy_policy="downweight"``, and in the fallback
    that fills a draw the band cannot (both policies), except while looks at easy prompts have
    lately had signal more often than looks at warm-up ones (32 looks of each at least): then
    the fallback ranks them unweighted (``fallback_easy_weight`` in the metrics)."""
    max_warmup_pool: int | None = None
    """Cap on the warm-up pool; beyond it the longest-hopeless prompts are parked (never deleted,
    re-tested only at ``max_retest_after``). None = no cap."""
    predict_fresh: bool = True
    """When the curriculum is given the prompts' texts (the trainer gives them), learn from every
    first look which unseen prompts are likely to disagree, from their text features, and draw
    unseen prompts best first (``curriculum._predict``). So the first pass over a dataset that
    is mostly solved or out of reach spends less on it. Without texts, or False: unseen prompts
    are drawn uniformly, each with the population's chance."""
    adaptive_group_size: bool = False
    """Off by default. When on, ``Curriculum.group_sizes(ids, budget)`` splits a fixed rollout
    budget over the drawn prompts by their posterior: fewer answers where the outcome is near
    certain, more where a group is most informative (see ``curriculum.allocation``)."""
    min_group_size: int = 4
    """Floor of the adaptive group size: below 4 answers the group mean / std are noise."""

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "band", check_band(self.band, owner="CurriculumConfig", error=ConfigError)
        )
        try:
            a, b = (float(x) for x in self.base_prior)
        except (TypeError, ValueError):
            a, b = 0.0, 0.0
        if isinstance(self.base_prior, (str, bytes)) or not (0 < a < math.inf and 0 < b < math.inf):
            raise ConfigError(
                f"CurriculumConfig.base_prior={self.base_prior!r} is outside the "
                "allowed range: two finite numbers > 0"
            )
        object.__setattr__(self, "base_prior", (float(a), float(b)))
        for name, low, high, kw in _RANGES:
            _check_range(name, getattr(self, name), low, high, **kw)
        if self.easy_policy not in EASY_POLICIES:
            raise ConfigError(
                f"CurriculumConfig.easy_policy={self.easy_policy!r} must be one of {EASY_POLICIES}"
            )
        if self.max_warmup_pool is not None:
            _check_range("max_warmup_pool", self.max_warmup_pool, 0, 1e12, integer=True)
        if not isinstance(self.empirical_prior, bool):
            raise ConfigError(
                f"CurriculumConfig.empirical_prior={self.empirical_prior!r} must be true or false"
            )
        if not isinstance(self.predict_fresh, bool):
            raise ConfigError(
                f"CurriculumConfig.predict_fresh={self.predict_fresh!r} must be true or false"
            )
        if not isinstance(self.adaptive_group_size, bool):
            raise ConfigError(
                f"CurriculumConfig.adaptive_group_size={self.adaptive_group_size!r} "
                "must be true or false"
            )

    @classmethod
    def option_names(cls) -> set[str]:
        """Every name ``from_options`` takes without "unknown": the fields, their deprecated
        names, and removed ones (those raise with what replaced them)."""
        return {f.name for f in fields(cls)} | set(DEPRECATED_NAMES) | set(_REMOVED)

    @classmethod
    def resolve(cls, config, band, options: dict) -> CurriculumConfig:
        """``Curriculum(config=..., band=..., **options)``'s config: a ``CurriculumConfig`` as
        given, or one built from a mapping of its fields or from ``band`` and ``options``."""
        if config is not None and (options or band is not None):
            raise TypeError("pass either config= or band/options, not both")
        if config is not None and not isinstance(config, (cls, Mapping)):
            raise TypeError(
                "config= must be a CurriculumConfig or a mapping of its fields, "
                f"got {type(config).__name__}"
            )
        if not isinstance(config, cls):
            merged = {**dict(config or {}), **options}
            config = cls.from_options(band=merged.pop("band", band), **merged)
        if config.adaptive_group_size and config.min_group_size > config.group_size_hint:
            raise ConfigError(
                f"CurriculumConfig.min_group_size={config.min_group_size} is above the group "
                f"size {config.group_size_hint}: a step's budget of G answers per prompt cannot "
                "give every prompt the floor; lower min_group_size or raise group_size_hint"
            )
        return config

    @classmethod
    def from_options(cls, band=None, **options) -> CurriculumConfig:
        """Build from keyword options (a TOML table, ``Curriculum(**options)``): deprecated names
        are mapped with a warning, removed and unknown ones raise naming the valid ones."""
        valid = {f.name for f in fields(cls)}
        if "group_size" in options:  # the trainer's name for it
            if "group_size_hint" in options:
                raise TypeError("pass group_size or group_size_hint, not both")
            options["group_size_hint"] = options.pop("group_size")
        for old, new in DEPRECATED_NAMES.items():
            if old in options:
                if new in options:
                    raise TypeError(f"pass {new} (or its deprecated name {old}), not both")
                warnings.warn(
                    f"curriculum option {old!r} is deprecated; call it {new!r}",
                    DeprecationWarning,
                    stacklevel=3,
                )
                options[new] = options.pop(old)
        removed = sorted(set(options) & set(_REMOVED))
        if removed:
            raise TypeError(
                f"curriculum option {removed[0]!r} no longer exists: {_REMOVED[removed[0]]}"
            )
        unknown = sorted(set(options) - valid)
        if unknown:
            listed = sorted(valid - {"group_size_hint"})  # a trainer sets it from group_size
            raise UnknownSettingError(
                f"{unknown_names('curriculum option', unknown, listed)} (and group_size_hint "
                "when the curriculum is built by hand: a trainer sets it from its group_size)"
            )
        if band is not None:  # a list from TOML / JSON; anything else is judged as given
            options["band"] = tuple(band) if isinstance(band, (list, tuple)) else band
        return cls(**options)


_RANGES = (  # field, low, high, options of _check_range
    ("success_threshold", -1e9, 1e9, {}),
    ("prior_weight", 0.0, 1e6, {}),
    ("mismatch_prior_weight", 0.0, 1.0, {}),
    ("evidence_half_life", 0.0, 1e12, {"open_low": True}),
    ("max_evidence", 1.0, 1e12, {}),
    ("group_size_hint", 2, 1_000_000, {"integer": True}),
    ("cooldown_factor", 0.0, 1e3, {}),
    ("min_reuse_share", 0.0, 1e3, {}),
    ("spaced_reuse", 0.0, 1.0, {"open_high": True}),
    ("run_groups", 0, 10**15, {"integer": True}),
    ("candidates_per_slot", 1, 1_000_000, {"integer": True}),
    ("min_explore_share", 0.0, 1.0, {}),
    ("surplus_explore_share", 0.0, 1.0, {}),
    ("warmup_retest_share", 0.0, 1.0, {}),
    ("max_warmup_retest_share", 0.0, 1.0, {}),
    ("easy_retest_share", 0.0, 1.0, {}),
    ("easy_weight", 0.0, 1.0, {}),
    ("signal_floor", 0.0, 1.0, {}),
    ("spend_gain", 0.0, 1.0, {}),
    ("warmup_retest_after", 0.0, 1e12, {}),
    ("easy_retest_after", 0.0, 1e12, {}),
    ("max_retest_after", 0.0, 1e12, {}),
    ("retest_backoff", 1.0, 1e3, {}),
    ("min_group_size", 2, 1_000_000, {"integer": True}),
)
