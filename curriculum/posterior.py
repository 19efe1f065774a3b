"""One prompt's pass-rate belief: a Beta posterior whose evidence decays as the policy moves.

Evidence is stored as decayed success / failure counts stamped with the clock (groups observed) of
their last update; reading them at a later clock applies the half-life lazily, so prompts nobody
samples cost nothing and their posterior widens on its own.
"""

from __future__ import annotations

import random

# Pools a prompt can be in. "fresh" = never observed and no prior; "warmup" = below the band.
FRESH, ACTIVE, WARMUP, EASY = "fresh", "active", "warmup", "easy"
POOLS = (FRESH, ACTIVE, WARMUP, EASY)  # the position is the pool's code in the state arrays
HARD = WARMUP  # deprecated name of the warm-up pool (one release)

TOO_EASY, IN_BAND, TOO_HARD = "too_easy", "in_band", "too_hard"


def check_band(
    band: object, *, owner: str, error: type[Exception] = ValueError
) -> tuple[float, float]:
    """``band`` as ``(low, high)`` floats with 0 <= low < high <= 1, or ``error`` naming ``owner``.

    The one check of the band setting, which the curriculum, pre-scoring and the trainer share.
    """
    try:
        lo, hi = (float(b) for b in band)  # type: ignore[union-attr]
        ok = not isinstance(band, (str, bytes)) and 0.0 <= lo < hi <= 1.0
        ok = ok and not any(isinstance(b, (bool, str, bytes)) for b in band)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise error(
            f"{owner}.band = {band!r} is out of range: two numbers 0 <= low < high <= 1, "
            "e.g. [0.2, 0.8]"
        )
    return lo, hi


def band_class(pass_rate: float, band: tuple[float, float]) -> str:
    """``too_hard`` below the band, ``too_easy`` above it, ``in_band`` on or between the edges."""
    lo, hi = band
    if pass_rate < lo:
        return TOO_HARD
    if pass_rate > hi:
        return TOO_EASY
    return IN_BAND


class PromptBelief:
    """Decayed evidence for one prompt plus its pool and re-test schedule."""

    __slots__ = ("succ", "fail", "stamp", "pool", "wait", "due", "observed")

    def __init__(self) -> None:
        self.succ = 0.0  # decayed successes at clock ``stamp``
        self.fail = 0.0  # decayed failures at clock ``stamp``
        self.stamp = 0.0
        self.pool = FRESH
        self.wait = 0.0  # current re-test interval (groups observed)
        self.due = 0.0  # clock at which a re-test is due
        self.observed = 0  # groups observed (not decayed)

    def evidence(self, now: float, half_life: float) -> tuple[float, float]:
        """(successes, failures) as they count at clock ``now``."""
        factor = 0.5 ** (max(0.0, now - self.stamp) / half_life)
        return self.succ * factor, self.fail * factor

    def add(self, succ: float, fail: float, now: float, half_life: float, cap: float) -> None:
        """Decay the old evidence to ``now``, add the new, and cap the total."""
        s, f = self.evidence(now, half_life)
        s, f = s + succ, f + fail
        total = s + f
        if (
            total > cap
        ):  # keep the ratio, forget the excess: the estimate keeps following the policy
            s, f = s * cap / total, f * cap / total
        self.succ, self.fail, self.stamp = s, f, now

    def mean(self, now: float, half_life: float, prior: tuple[float, float]) -> float:
        s, f = self.evidence(now, half_life)
        return (prior[0] + s) / (prior[0] + prior[1] + s + f)

    def draw(
        self, rng: random.Random, now: float, half_life: float, prior: tuple[float, float]
    ) -> float:
        """One Thompson sample of the pass rate from the decayed posterior."""
        s, f = self.evidence(now, half_life)
        return rng.betavariate(prior[0] + s, prior[1] + f)

    def expected_signal(
        self, now: float, half_life: float, prior: tuple[float, float], group_size: int
    ) -> float:
        """Chance that a group drawn now disagrees, averaged over the decayed posterior (closed
        form: the Beta moments of theta**g and (1-theta)**g). Old evidence widens the posterior,
        so a prompt not looked at for long, or one with a few successes, scores higher."""
        s, f = self.evidence(now, half_life)
        a, b = prior[0] + s, prior[1] + f
        all_right = all_wrong = 1.0
        for k in range(group_size):
            all_right *= (a + k) / (a + b + k)
            all_wrong *= (b + k) / (a + b + k)
        return 1.0 - all_right - all_wrong

    def to_list(self) -> list:
        return [self.succ, self.fail, self.stamp, self.pool, self.wait, self.due, self.observed]

    @classmethod
    def from_list(cls, values: list) -> PromptBelief:
        belief = cls()
        (
            belief.succ,
            belief.fail,
            belief.stamp,
            belief.pool,
            belief.wait,
            belief.due,
            belief.observed,
        ) = values
        if belief.pool not in POOLS:
            raise ValueError(f"unknown pool {belief.pool!r} in curriculum state; expected {POOLS}")
        return belief


def expected_signal_array(a, b, group_size: int):
    """``PromptBelief.expected_signal`` for numpy arrays of Beta parameters ``a``, ``b`` (plain
    arithmetic, so this module itself needs no numpy)."""
    all_right = a * 0.0 + 1.0
    all_wrong = a * 0.0 + 1.0
    for k in range(group_size):
        all_right *= (a + k) / (a + b + k)
        all_wrong *= (b + k) / (a + b + k)
    return 1.0 - all_right - all_wrong


def signal_utility(theta: float, group_size: int) -> float:
    """Probability that a group of ``group_size`` answers at pass rate ``theta`` is not unanimous:
    the chance it carries a learning signal. Peaks at 0.5."""
    return 1.0 - theta**group_size - (1.0 - theta) ** group_size
